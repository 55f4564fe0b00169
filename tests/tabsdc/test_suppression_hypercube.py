"""The hypercube method: its protecting structures are attacks, its patterns pass the audit."""

import numpy as np
import pandas as pd
import pytest

from tabsdc import Hierarchy, Table
from tabsdc.audit import audit
from tabsdc.suppression import suppress
from tabsdc.suppression.attacker import capacities, requirements
from tabsdc.suppression.hypercube import (
    HypercubeSearch,
    clean_up_hypercubes,
    hypercube_pattern,
    line_vectors,
    uncertified,
)
from tests.tabsdc.test_parallel import small_hierarchical_table


def two_hierarchies_table(seed: int = 0) -> Table:
    """Activity (T > A0..A2 > leaves) x region (T > R0, R1 > leaves), random interior."""
    rng = np.random.default_rng(seed)
    act = {f"A{i}{j}": f"A{i}" for i in range(3) for j in range(2 + i)}
    act.update({f"A{i}": "Total" for i in range(3)})
    reg = {f"R{i}{j}": f"R{i}" for i in range(2) for j in range(3)}
    reg.update({f"R{i}": "Total" for i in range(2)})
    hierarchies = {"act": Hierarchy.from_parent_child(act),
                   "reg": Hierarchy.from_parent_child(reg)}
    leaves_a = [c for c in act if len(c) == 3]
    leaves_r = [c for c in reg if len(c) == 3]
    a, r = np.meshgrid(leaves_a, leaves_r, indexing="ij")
    frame = pd.DataFrame({"act": a.ravel(), "reg": r.ravel(),
                          "value": rng.integers(1, 60, a.size).astype(float)})
    return Table.from_aggregated(frame, ["act", "reg"], hierarchies=hierarchies)


def test_every_line_vector_satisfies_its_hierarchy():
    table = two_hierarchies_table()
    h = table.hierarchies["act"]
    one_d = Table.from_aggregated(pd.DataFrame({"act": list(h.leaves),
                                                "value": np.ones(len(h.leaves))}),
                                  ["act"], hierarchies={"act": h})
    where = {code: i for i, code in enumerate(one_d.cells.index)}
    preferred = np.array([-1 if not h.children(c) else h.codes.index(h.children(c)[-1])
                          for c in h.codes])
    vectors = line_vectors(h, preferred)
    assert sum(len(v) for v in vectors) > 3 * len(h)
    for code, options in enumerate(vectors):
        for codes, signs in options:
            assert codes[signs.index(1)] == code or code in codes
            f = np.zeros(one_d.n_cells)
            f[[where[h.codes[c]] for c in codes]] = signs
            assert np.abs(one_d.A @ f).max() == 0  # H f = 0
            assert f[where[h.codes[code]]] == 1


def test_products_of_line_vectors_are_attacks_on_the_whole_table():
    table = two_hierarchies_table()
    n = table.n_cells
    search = HypercubeSearch(table, np.ones(n), np.ones(n), np.ones(n), np.ones(n, bool))
    rng = np.random.default_rng(1)
    for cell in rng.choice(n, 25, replace=False):
        x = search.coords[cell]
        f_act = search.lines[0][x[0]]
        f_reg = search.lines[1][x[1]]
        i, j = rng.integers(len(f_act.codes)), rng.integers(len(f_reg.codes))
        d = np.zeros(n)
        for ca, sa in zip(f_act.codes[i], f_act.signs[i], strict=True):
            for cr, sr in zip(f_reg.codes[j], f_reg.signs[j], strict=True):
                if ca >= 0 and cr >= 0:
                    d[search.cells(np.array([ca * search.strides[0] + cr]))[0]] = sa * sr
        assert d[cell] == 1 and np.abs(table.A @ d).max() == 0


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_hypercube_patterns_pass_the_independent_audit(seed):
    table = small_hierarchical_table(seed)
    result = suppress(table, "hypercube")
    assert result.method == "hypercube" and result.status == "feasible"
    assert result.protected
    independent = audit(result.table)  # the audit of the published table, from scratch
    assert independent.protected and len(independent.frame) == result.suppressed.sum()


def test_each_primary_gets_a_structure_with_room_for_its_levels():
    table = small_hierarchical_table(7)
    cells = table.cells
    down, up = capacities(table)
    cost = np.abs(table.values)
    search = HypercubeSearch(table, down, up, cost, np.ones(table.n_cells, bool))
    hidden = (cells["status"] == "u").to_numpy()
    for cell in np.flatnonzero(hidden)[:10]:
        levels = (cells["upl"].iloc[cell], cells["lpl"].iloc[cell])
        corners, _, added, meets_up, meets_down = search.evaluate(cell, hidden, levels)
        ok = meets_up & meets_down
        assert ok.any()
        best = np.flatnonzero(ok)[np.argmin(added[ok])]
        row = corners[best][corners[best] >= 0]
        assert cell in row and added[best] == pytest.approx(cost[row][~hidden[row]].sum())


def test_certificates_hold_after_clean_up_and_a_published_corner_breaks_them():
    table = small_hierarchical_table(8)
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    reqs = requirements(primary, cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float))
    down, up = capacities(table)
    search = HypercubeSearch(table, down, up, np.abs(table.values),
                             np.ones(table.n_cells, bool))
    cover = hypercube_pattern(search, reqs, primary)
    assert cover.complete and not cover.unmet
    assert uncertified(table.A, cover, cover.pattern, down, up) == []
    cleaned = clean_up_hypercubes(search, cover, cover.pattern, ~primary)
    assert cleaned.sum() < cover.pattern.sum()  # something was published again
    assert uncertified(table.A, cover, cleaned, down, up) == []
    # publish one secondary corner of the first primary's hypercube: that primary loses
    # its certificate
    first = next(iter(cover.structures))
    corner = next(j for j in cover.structures[first][0].cells if not primary[j])
    broken = cleaned.copy()
    broken[corner] = False
    lost = uncertified(table.A, cover, broken, down, up)
    assert first in {r.cell for r in lost}
