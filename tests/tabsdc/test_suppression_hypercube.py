"""The hypercube method: its protecting structures are attacks, its patterns pass the audit."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._bounds import capacities
from tabsdc._flows import DOWN
from tabsdc.audit import audit, insider_groups
from tabsdc.suppression import suppress
from tabsdc.suppression._attacker import requirements
from tabsdc.suppression._hypercube import (
    HypercubeSearch,
    clean_up_hypercubes,
    hypercube_pattern,
    line_vectors,
    route_in_boxes,
    uncertified,
    widen_cover,
)
from tests.tabsdc.test_parallel import small_hierarchical_table, suppressed_small_table


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


@pytest.mark.parametrize("seed", [4, 5, pytest.param(6, marks=pytest.mark.slow)])
def test_hypercube_patterns_pass_the_independent_audit(seed):
    result = suppressed_small_table(seed, "hypercube")
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
    pattern = search.pattern(hidden)
    for cell in np.flatnonzero(hidden)[:10]:
        levels = (cells["upl"].iloc[cell], cells["lpl"].iloc[cell])
        evaluation = search.evaluate(cell, pattern, levels)
        ok = evaluation.meets_both
        assert ok.any() and (ok == evaluation.meets_up & evaluation.meets_down).all()
        best = np.flatnonzero(ok)[np.argmin(evaluation.added[ok])]
        row, signs = search.corners(evaluation, best)
        assert cell in row and evaluation.added[best] == pytest.approx(
            cost[row][~hidden[row]].sum())
        room_up = np.where(signs > 0, up[row], down[row])
        assert (room_up >= levels[0] * (1 - 1e-9)).all()


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


def four_dimensional_table(seed: int, n: int = 300) -> Table:
    """A small 4-D table: a two-level hierarchy (T > A0..A2 > leaves) x a flat region x
    two flat classifications, p% (p = 15) and frequency (3) primaries, from ``n`` skewed
    records."""
    rng = np.random.default_rng(seed)
    a1 = rng.integers(0, 3, n)
    data = pd.DataFrame({
        "a1": np.char.add("A", a1.astype(str)),
        "a2": np.char.add(np.char.add("A", a1.astype(str)), rng.integers(0, 2, n).astype(str)),
        "r": np.char.add("R", rng.integers(0, 3, n).astype(str)),
        "s": np.char.add("S", rng.integers(0, 3, n).astype(str)),
        "l": np.char.add("L", rng.integers(0, 2, n).astype(str)),
        "v": np.round(rng.pareto(1.3, n) * 100 + 1, 2),
    })
    hierarchies = {"a2": Hierarchy.from_levels(data[["a1", "a2"]].drop_duplicates())}
    table = Table.from_microdata(data, ["a2", "r", "s", "l"], "v", hierarchies=hierarchies,
                                 top=2)
    return apply_rules(table, [PPercentRule(15), FrequencyRule(3)]).table


def brute_force(search, table, cell, hidden, levels, cost, down, up, allowed):
    """Every candidate through ``cell``, its corners listed: what it adds and whether it
    meets both levels, the upward one and the downward one (the definitions, corner by
    corner)."""
    x = search.coords[cell]
    options = [search.lines[d][x[d]] for d in range(len(x))]
    rows = []
    for choice in itertools.product(*(range(len(o.codes)) for o in options)):
        codes = [o.codes[i][o.codes[i] >= 0] for o, i in zip(options, choice, strict=True)]
        signs = [o.signs[i][o.codes[i] >= 0] for o, i in zip(options, choice, strict=True)]
        keys = sum(np.meshgrid(*[c * s for c, s in zip(codes, search.strides, strict=True)],
                               indexing="ij")).ravel()
        sign = np.prod(np.meshgrid(*signs, indexing="ij"), axis=0).ravel()
        corners = search.cells(keys)
        exists = corners >= 0
        j = np.where(exists, corners, 0)
        usable = exists & (allowed[j] | hidden[j])
        added = float(np.where(exists & ~hidden[j], cost[j], 0.0).sum())
        room_up = np.where(sign > 0, up[j], down[j])
        room_down = np.where(sign > 0, down[j], up[j])
        meets_up = bool((usable & (room_up >= levels[0] * (1 - 1e-9))).all())
        meets_down = bool((usable & (room_down >= levels[1] * (1 - 1e-9))).all())
        rows.append((added, meets_up & meets_down, meets_up, meets_down))
    return np.array(rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_evaluation_by_matrix_products_equals_summing_each_candidates_corners(seed):
    table = four_dimensional_table(seed)
    rng = np.random.default_rng(seed)
    n = table.n_cells
    down, up = capacities(table, "table", None)
    cost = np.abs(table.values) + 1
    allowed = rng.random(n) < 0.9
    primary = (table.cells["status"] == "u").to_numpy()
    hidden = primary | (rng.random(n) < 0.3)
    search = HypercubeSearch(table, down, up, cost, allowed | hidden)
    pattern = search.pattern(hidden)
    cells = rng.choice(np.flatnonzero(primary), 12, replace=False)
    outcomes = set()
    for cell in cells:
        # unequal levels, so that the signs of the corners matter; then a level beyond
        # the primary's own room, so that no candidate meets both and each direction is
        # evaluated alone
        upl = float(up[cell]) * rng.uniform(0.05, 0.6)
        lpl = float(down[cell]) * rng.uniform(0.05, 0.6)
        for levels in ((upl, lpl), (upl, 1.01 * down[cell] + 1), (1.01 * up[cell] + 1, lpl)):
            evaluation = search.evaluate(cell, pattern, levels)
            expected = brute_force(search, table, cell, hidden, levels, cost, down, up,
                                   allowed | hidden)
            assert len(evaluation.added) == len(expected)
            np.testing.assert_allclose(evaluation.added, expected[:, 0], rtol=1e-12,
                                       atol=1e-9)
            assert (evaluation.meets_both == expected[:, 1].astype(bool)).all()
            if not expected[:, 1].any():  # each direction alone
                assert (evaluation.meets_up == expected[:, 2].astype(bool)).all()
                assert (evaluation.meets_down == expected[:, 3].astype(bool)).all()
            outcomes |= set(expected[:, 1:].ravel().tolist())
    assert outcomes == {0.0, 1.0}  # candidates that meet levels and candidates that do not


@pytest.mark.parametrize("symmetric", [True, False])
def test_batched_evaluation_finds_the_cheapest_hypercube_of_each_primary(symmetric):
    table = four_dimensional_table(3)
    n = table.n_cells
    down, up = capacities(table, "table", None)
    cost = np.abs(table.values).round() + 1  # integers: sums are exact
    primary = (table.cells["status"] == "u").to_numpy()
    search = HypercubeSearch(table, down, up, cost, np.ones(n, bool))
    pattern = search.pattern(primary)
    cells = np.flatnonzero(primary)
    levels = table.cells[["upl", "lpl"]].to_numpy(float)[cells]
    if not symmetric:
        levels[:, 1] *= 0.5
    proposals = search.batch_cheapest(cells, pattern, levels)
    assert sum(p is not None for p in proposals) > len(cells) / 2
    for cell, row, proposal in zip(cells, levels, proposals, strict=True):
        evaluation = search.evaluate(cell, pattern, tuple(row))
        if proposal is None:
            continue
        both = evaluation.meets_both
        assert proposal.added == evaluation.added[both].min()
        assert set(proposal.cube.cells) == set(search.corners(
            evaluation, np.flatnonzero(both)[np.argmin(evaluation.added[both])])[0])


def test_batches_give_the_pattern_of_one_primary_at_a_time():
    # each primary's choice is made on the pattern all primaries before it left, whether
    # they come one at a time or a batch at a time (integer costs: no ties from rounding)
    table = four_dimensional_table(5, n=600)
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    reqs = requirements(primary, cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float))
    down, up = capacities(table, "table", None)
    search = HypercubeSearch(table, down, up, np.abs(table.values).round() + 1,
                             np.ones(table.n_cells, bool))
    one = hypercube_pattern(search, reqs, primary, batch=1)
    many = hypercube_pattern(search, reqs, primary, batch=64)
    assert (one.pattern == many.pattern).all() and one.pattern.sum() > primary.sum()
    for cell, cubes in one.structures.items():
        assert [set(c.cells) for c in cubes] == [set(c.cells) for c in many.structures[cell]]


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), n=st.integers(150, 500))
def test_hypercube_patterns_of_random_4d_tables_pass_the_independent_audit(seed, n):
    table = four_dimensional_table(seed, n)
    if not (table.cells["status"] == "u").any():
        return
    lines = []
    result = suppress(table, "hypercube", progress=lines.append)
    # every hypercube certificate was checked against the relations before returning
    assert any(line.startswith("certificates: all") for line in lines)
    assert result.status == "feasible" and result.protected
    independent = audit(result.table)
    assert independent.protected and len(independent.frame) == result.suppressed.sum()


def split_total_table() -> Table:
    """Rows T > A (a1, a2, a3), B (b1, b2) x columns c1..c3: (A, c1) = 9 is primary with
    levels 4, and each of its leaves holds 3."""
    h = Hierarchy.from_parent_child({"A": "T", "B": "T", "a1": "A", "a2": "A", "a3": "A",
                                     "b1": "B", "b2": "B"})
    leaves = ["a1", "a2", "a3", "b1", "b2"]
    r, c = np.meshgrid(leaves, ["c1", "c2", "c3"], indexing="ij")
    values = np.where((r.ravel() < "b") & (c.ravel() == "c1"), 3.0, 10.0)
    table = Table.from_aggregated(pd.DataFrame({"r": r.ravel(), "c": c.ravel(),
                                                "value": values}), ["r", "c"],
                                  hierarchies={"r": h})
    primary = np.array([label == ("A", "c1") for label in table.cells.index])
    level = np.where(primary, 4.0, 0.0)
    return table.with_columns(status=np.where(primary, "u", "s"), lpl=level, upl=level)


def test_a_requirement_no_hypercube_meets_is_routed_within_a_box():
    # moving A down by 4 needs its leaves (3 each) to share the move, which no hypercube
    # (every code on it moves by the whole deviation) can do; a flow in a box can
    table = split_total_table()
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    cell = int(np.flatnonzero(primary)[0])
    assert table.values[cell] == 9
    reqs = requirements(primary, cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float))
    down, up = capacities(table, "table", None)
    cost = np.abs(table.values)
    allowed = np.ones(table.n_cells, bool)
    cover = hypercube_pattern(HypercubeSearch(table, down, up, cost, allowed), reqs, primary)
    wide = HypercubeSearch(table, down, up, cost, allowed, every_chain=True)
    cover = widen_cover(wide, cover)
    assert [(r.cell, r.direction) for r in cover.unmet] == [(cell, DOWN)]
    routed = route_in_boxes(wide, table.A, cover, cost)
    assert routed.unmet == [] and list(routed.routes) == [(cell, DOWN)]
    route = routed.routes[(cell, DOWN)]
    assert uncertified(table.A, routed, routed.pattern, down, up) == []  # UP: a hypercube
    assert cell in route and routed.pattern[route].all()
    # the move of 4 is shared by at least two leaves of A in column c1
    assert len({table.cells.index[j] for j in route} & {("a1", "c1"), ("a2", "c1"),
                                                       ("a3", "c1")}) >= 2
    status = np.where(routed.pattern & ~primary, "m", cells["status"].to_numpy())
    assert audit(table.with_columns(status=status)).protected
    # and the method as a whole, which routes it so
    result = suppress(table, "hypercube", singletons=False)
    assert result.protected and audit(result.table).protected


def lowest_value(table: Table, hidden: np.ndarray, cell: int, known: list[int]) -> float:
    """The least value of ``cell`` an intruder finds by linprog (independent of the
    toolkit's attacker): hidden cells free in [lb, ub], published ones and ``known`` at
    their values."""
    A, a = table.A.toarray(), table.values
    free = np.flatnonzero(hidden & ~np.isin(np.arange(table.n_cells), known))
    lb, ub = table.cells["lb"].to_numpy(float), table.cells["ub"].to_numpy(float)
    res = linprog(np.where(free == cell, 1.0, 0.0), A_eq=A[:, free], b_eq=A[:, free] @ a[free],
                  bounds=[(lb[k], None if np.isinf(ub[k]) else ub[k]) for k in free],
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def test_a_box_route_is_proved_against_the_respondents_its_flow_moves():
    # A x c1 goes down by 4 only through a flow (no hypercube), which moves cells of the
    # other columns too. The respondent of a single-contributor cell on that flow knows its
    # value: with it fixed the box must still hold a flow, and the pattern must show it
    table = split_total_table()
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    cell = int(np.flatnonzero(primary)[0])
    reqs = requirements(primary, cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float))
    down, up = capacities(table, "table", None)
    cost = np.abs(table.values)
    allowed = np.ones(table.n_cells, bool)
    wide = HypercubeSearch(table, down, up, cost, allowed, every_chain=True)
    cover = widen_cover(wide, hypercube_pattern(HypercubeSearch(table, down, up, cost, allowed),
                                                reqs, primary))
    outsider = route_in_boxes(wide, table.A, cover, cost)
    value = table.values[cell]
    # a cell of the outsider's route outside column c1 whose respondent breaks it
    candidates = [j for j in outsider.routes[(cell, DOWN)]
                  if table.cells.index[j][1] != "c1"
                  and lowest_value(table, outsider.pattern, cell, [j]) > value - 4 + 1e-6]
    assert candidates
    known = candidates[0]
    freq = np.full(table.n_cells, 5.0)
    freq[known] = 1.0
    respondents = insider_groups(table.A, freq, np.arange(table.n_cells) == known)
    routed = route_in_boxes(wide, table.A, cover, cost, insiders=respondents)
    assert routed.unmet == [] and list(routed.routes) == [(cell, DOWN)]
    assert routed.pattern[routed.routes[(cell, DOWN)]].all()
    assert lowest_value(table, routed.pattern, cell, []) <= value - 4 + 1e-6
    assert lowest_value(table, routed.pattern, cell, [known]) <= value - 4 + 1e-6
