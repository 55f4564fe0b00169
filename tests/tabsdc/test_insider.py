"""The insider attack: the respondent of a single-contributor cell knows its value.

An attacker written here independently of the toolkit's: the respondents are read from the
records (the one record of a single-contributor cell), and each respondent's attack is a
``scipy.optimize.linprog`` min and max of every other sensitive cell over the relations,
the published values, the a-priori bounds and the respondent's own cells fixed. The audit's
verdicts must agree with it, and every suppression method's pattern must pass it.
"""

import dataclasses
import time

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import tabsdc.audit._insider as insider_module
from sdcreport import Report
from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._datasets import load_business_survey
from tabsdc._flows import UP, Requirement, local_deviation, local_flow
from tabsdc._network import neighbourhood
from tabsdc._progress import Deadline
from tabsdc._respondents import insider_groups
from tabsdc.audit import audit, insider_attack, insider_proofs
from tabsdc.audit._block import Block
from tabsdc.audit._intervals import IntervalAttack
from tabsdc.suppression import suppress

#: The methods of the random tables (``auto`` runs ``optimal`` on tables this small; it is
#: tested on the README table, as are the network method's tables below).
METHODS = ["optimal", "heuristic", "modular", "hypercube"]


def survey(seed: int, dims: int, records: int) -> tuple[pd.DataFrame, list[str], Table]:
    """Records and the rule-applied table of a random survey: ``dims`` dimensions, the first
    two a two-level hierarchy (two groups of two or three codes), a third one two codes
    under its total; p % (p = 10) and frequency (3) primaries, so many cells have one or
    two contributors."""
    rng = np.random.default_rng(seed)
    data, hierarchies, names = {}, {}, []
    for d in range(dims):
        upper = rng.integers(0, 2 if d < 2 else 1, records)
        lower = rng.integers(0, 2 + d % 2, records)
        data[f"d{d}a"] = [f"{'XYZ'[d]}{u}" for u in upper]
        data[f"d{d}b"] = [f"{'XYZ'[d]}{u}{w}" for u, w in zip(upper, lower, strict=True)]
        names.append(f"d{d}b")
    frame = pd.DataFrame(data)
    frame["v"] = np.round(rng.pareto(1.2, records) * 100 + 1, 1)
    for d in range(dims):
        hierarchies[f"d{d}b"] = Hierarchy.from_levels(frame[[f"d{d}a", f"d{d}b"]]
                                                      .drop_duplicates())
    table = Table.from_microdata(frame, names, "v", hierarchies=hierarchies)
    return frame, names, apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


def contributions(frame: pd.DataFrame, names: list[str], table: Table) -> np.ndarray:
    """``in_cell[r, j]``: record r lies in cell j (its code, its group or the total in every
    dimension), read from the records alone."""
    labels = table.cells.index
    labels = labels if isinstance(labels, pd.MultiIndex) else pd.MultiIndex.from_arrays(
        [labels])
    inside = np.ones((len(frame), table.n_cells), dtype=bool)
    for d, name in enumerate(names):
        own = frame[name].to_numpy()
        group = frame[name.replace("b", "a")].to_numpy()
        code = labels.get_level_values(d).to_numpy()
        inside &= ((code[None, :] == own[:, None]) | (code[None, :] == group[:, None])
                   | (code[None, :] == "Total"))
    return inside


def independent_insider_failures(table: Table, in_cell: np.ndarray,
                                 tol: float = 1e-6) -> set[tuple[int, int]]:
    """(respondent record, sensitive cell) pairs the respondent narrows below the cell's
    levels: linprog over ``A x = A a``, published cells at their values, the respondent's
    single-contributor cells at theirs, every other hidden cell within [lb, ub]. Only cells
    the outsider does not already break, and not cells the respondent contributes to."""
    cells = table.cells
    a = table.values
    A = table.A.toarray()
    hidden = cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    sensitive = hidden & (cells["status"] == "u").to_numpy()
    lb, ub = cells["lb"].to_numpy(float), cells["ub"].to_numpy(float)
    lpl, upl, spl = (cells[c].to_numpy(float) for c in ("lpl", "upl", "spl"))
    count = in_cell.sum(axis=0)
    sole = np.where(count == 1, np.argmax(in_cell, axis=0), -1)

    def interval(j: int, known: np.ndarray) -> tuple[float, float]:
        # the cells the attacker does not know are the variables; the others are constants
        free = np.flatnonzero(hidden & ~known)
        rows = np.abs(A[:, free]).sum(axis=1) > 0
        bounds = [(lb[k], None if np.isinf(ub[k]) else ub[k]) for k in free]
        ends = []
        for sign in (1, -1):
            c = np.where(free == j, float(sign), 0.0)
            res = linprog(c, A_eq=A[rows][:, free], b_eq=A[rows][:, free] @ a[free],
                          bounds=bounds, method="highs")
            assert res.status in (0, 3)
            # unbounded: the minimum of x_j is -inf, the maximum (sign -1) +inf
            ends.append(sign * res.fun if res.status == 0 else -sign * np.inf)
        return ends[0], ends[1]

    def protected(j: int, low: float, high: float) -> bool:
        slack = tol * max(1.0, abs(a[j]))
        return (low <= a[j] - lpl[j] + slack and high >= a[j] + upl[j] - slack
                and high - low >= spl[j] - slack and high - low > slack)

    outside = {j for j in np.flatnonzero(sensitive) if protected(j, *interval(j, ~hidden))}
    failures = set()
    for respondent in np.unique(sole[sensitive & (cells["freq"] == 1).to_numpy()]):
        known = hidden & (sole == respondent)
        for j in sorted(outside):
            if in_cell[respondent, j]:  # its own cells and the totals it contributes to
                continue
            if not protected(j, *interval(j, known)):
                failures.add((int(respondent), int(j)))
    return failures


def audit_failures(result, frame: pd.DataFrame, names: list[str]) -> set[tuple[int, int]]:
    """The audit's failing pairs as (respondent record, cell) pairs."""
    in_cell = contributions(frame, names, result.table)
    out = set()
    for insider, exposed in zip(result.insider.pairs["insider"], result.insider.pairs["exposed"],
                                strict=True):
        (record,) = np.flatnonzero(in_cell[:, insider])
        out.add((int(record), int(exposed)))
    return out


def records(dims: int) -> int:
    """Records of a random survey: enough for many single-contributor cells, few enough
    for the independent attacker's LPs (one pair of them per respondent and cell)."""
    return 25 if dims == 2 else 10


def outsider_pattern(seed: int, dims: int, extra: float) -> tuple[pd.DataFrame, list[str],
                                                                  Table]:
    """A random survey's records and the heuristic's outsider-only pattern with a share
    ``extra`` of the other cells hidden too, so that some pairs fail and some not."""
    frame, names, table = survey(seed, dims, records(dims))
    pattern = suppress(table, "heuristic", singletons=False).suppressed.copy()
    rng = np.random.default_rng(seed)
    pattern |= (rng.random(table.n_cells) < extra) & (table.cells["status"] != "z").to_numpy()
    status = np.where(pattern & (table.cells["status"] != "u"), "m", table.cells["status"])
    return frame, names, table.with_columns(status=status)


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), dims=st.sampled_from([2, 3]),
       extra=st.floats(0.0, 0.3))
@example(seed=11, dims=2, extra=0.0)
@example(seed=5, dims=3, extra=0.1)
@example(seed=3696, dims=3, extra=0.0)  # a hidden cell without an upper bound
def test_the_audit_agrees_with_an_independent_insider_attacker(seed, dims, extra):
    frame, names, published = outsider_pattern(seed, dims, extra)
    result = audit(published)
    expected = independent_insider_failures(published, contributions(frame, names, published))
    assert result.insider is not None and result.insider.complete
    assert audit_failures(result, frame, names) == expected
    assert result.protected == (not expected and bool(result.frame["protected"].all()))


@pytest.mark.parametrize(("seed", "dims", "extra"), [(11, 2, 0.0), (7, 2, 0.2), (5, 3, 0.1)])
def test_certificates_in_grown_regions_agree_with_the_independent_attacker(
        monkeypatch, seed, dims, extra):
    # every neighbourhood holds the cell alone and regions start at two cells, so the
    # certificates come from the cells the known flows through the cell move (one hop
    # wider), regions grown around the cell, or the whole block (which refutes); the
    # verdicts must not change
    frame, names, published = outsider_pattern(seed, dims, extra)
    grown, carried = [], []
    monkeypatch.setattr(insider_module, "neighbourhood", lambda by_column, by_row, cell, hops:
                        np.array([cell]))
    monkeypatch.setattr(insider_module, "LOCAL_ABOVE", 0)
    monkeypatch.setattr(insider_module, "GROWN_CELLS", 2)
    real_grown, real_carried = Block.grown, insider_module._Certificates._carried
    monkeypatch.setattr(Block, "grown", lambda self, seeds, size: grown.append(size)
                        or real_grown(self, seeds, size))
    monkeypatch.setattr(insider_module._Certificates, "_carried", lambda self, cell: (
        carried.append(region := real_carried(self, cell)) or region))
    result = audit(published)
    expected = independent_insider_failures(published, contributions(frame, names, published))
    assert grown and max(len(region) for region in carried) > 1 and result.insider.complete
    assert audit_failures(result, frame, names) == expected


@pytest.mark.parametrize(("seed", "dims", "extra", "hops", "grown", "relaxed"),
                         [(7, 2, 0.2, (2, 3), 1024, 4), (5, 3, 0.1, (2, 3), 1024, 4),
                          (5, 3, 0.1, (1,), 1024, 4), (5, 3, 0.1, (), 2, 4),
                          (7, 2, 0.2, (), 2, 2)])
def test_outer_intervals_of_failing_pairs_hold_the_exact_ones(monkeypatch, seed, dims,
                                                              extra, hops, grown, relaxed):
    # a pair decided on a relaxation reports an interval around the one linprog finds with
    # the respondent's cells fixed, and it misses a level; the failing pairs are those of
    # the independent attacker, with relaxations of one hop (most pairs left to the exact
    # interval) as with the default reaches, and when the scenarios are refuted on the
    # relaxation around their cell (blocks above ``grown`` cells), whose bound is the
    # pair's, or, past a relaxation of two hops (``relaxed``; the default's four refute
    # them all on this table), over the whole block (no flow: the level it misses)
    monkeypatch.setattr(insider_module, "OUTER_HOPS", hops)
    monkeypatch.setattr(insider_module, "GROWN_CELLS", grown)
    monkeypatch.setattr(insider_module, "RELAXED_HOPS", relaxed)
    frame, names, published = outsider_pattern(seed, dims, extra)
    result = audit(published)
    in_cell = contributions(frame, names, published)
    assert audit_failures(result, frame, names) == independent_insider_failures(
        published, in_cell)
    pairs = result.insider.pairs
    assert (pairs["status"] == "outer bound").any()
    assert set(pairs["status"]) <= {"outer bound", "no flow", "optimal"}
    assert ((pairs["status"] == "no flow").any()) == (grown == 2 and relaxed == 2)
    assert (pairs["status"] == "optimal").any() or hops != (1,)
    assert_pair_intervals_hold(published, in_cell, pairs)


def assert_pair_intervals_hold(published: Table, in_cell: np.ndarray, pairs: pd.DataFrame
                               ) -> None:
    """Every pair reported with an outer interval (status ``"outer bound"`` or ``"no
    flow"``) holds the interval linprog finds with the respondent's cells fixed, and each
    side it says is missed is missed by that interval; every exact one (``"optimal"``) is
    linprog's."""
    hidden = published.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    sole = (in_cell.sum(axis=0) == 1) & hidden
    for row in pairs[pairs["status"] != "not computed"].itertuples():
        (record,) = np.flatnonzero(in_cell[:, row.insider])
        known = np.flatnonzero(sole & in_cell[record]).tolist()
        low, high = linprog_interval(published, known, row.exposed)
        slack = 1e-6 * max(1.0, abs(row.value))
        if row.status == "optimal":
            assert row.lower == pytest.approx(low, abs=slack)
            assert row.upper == pytest.approx(high, abs=slack)
            continue
        assert row.lower <= low + slack and row.upper >= high - slack
        assert not (row.lower_ok and row.upper_ok and row.sliding_ok) or row.exact
        assert row.lower_ok or low > row.value - row.lpl + slack
        assert row.upper_ok or high < row.value + row.upl - slack


def test_pairs_refuted_over_their_block_are_decided_when_the_time_limit_leaves_them_open(
        monkeypatch):
    # the exact intervals never computed (as when the limit comes first): a pair whose
    # scenario no flow over the block meets is still exposed, on the side it misses (held
    # against linprog); the others stay not computed
    monkeypatch.setattr(insider_module, "OUTER_HOPS", ())

    def unsolved(self, columns, held, deadline):
        return (np.full(len(columns), np.nan),) * 2 + (
            np.full(len(columns), "not computed", dtype=object),)

    monkeypatch.setattr(insider_module._DeviationExtremes, "extremes", unsolved)
    frame, names, published = outsider_pattern(5, 3, 0.1)
    result = audit(published)
    in_cell = contributions(frame, names, published)
    pairs = result.insider.pairs
    decided = pairs[pairs["status"] == "no flow"]
    assert len(decided) > 3 and set(pairs["status"]) <= {"no flow", "outer bound",
                                                         "not computed"}
    assert_pair_intervals_hold(published, in_cell, pairs)
    expected = independent_insider_failures(published, in_cell)
    assert audit_failures(result, frame, names) >= expected - {
        (int(r.insider), int(r.exposed)) for r in pairs.itertuples()
        if r.status == "not computed"}
    # with a solver that proves nothing, the pairs stay open: the summary says why and
    # counts their cells not settled
    real = insider_module.flow_and_status

    def unproven(*args, **kwargs):
        moved, status = real(*args, **kwargs)
        return moved, "no_solution" if status == "infeasible" else status

    monkeypatch.setattr(insider_module, "flow_and_status", unproven)
    left_open = audit(published)
    assert not left_open.complete and len(left_open.not_settled)
    text = left_open.summary()
    assert "interval not computed: time limit" in text and "nan" not in text
    assert f"{len(left_open.not_settled)} sensitive cells not settled" in text


def test_a_cell_one_pair_shows_exposed_needs_no_exact_interval_for_its_other_pairs(
        monkeypatch):
    # one proof of a missed level per cell (the others dropped, no refutation on
    # relaxations), blocks of more than two cells: a cell's other failing pairs get no
    # exact interval, yet every cell's verdict is settled and is the independent attacker's
    real = insider_module._no_flow_sides

    def first_per_cell(pairs, *args):
        missed, seen = real(pairs, *args), set()
        for k, (_, cell) in enumerate(pairs):
            if cell in seen:
                missed[k] = np.nan
            elif not np.isnan(missed[k]).all():
                seen.add(cell)
        return missed

    monkeypatch.setattr(insider_module, "GROWN_CELLS", 2)
    monkeypatch.setattr(insider_module, "OUTER_HOPS", ())
    monkeypatch.setattr(insider_module, "_no_flow_sides", first_per_cell)
    monkeypatch.setattr(insider_module._Certificates, "_relaxed_reach", lambda self, req: None)
    frame, names, published = outsider_pattern(8, 3, 0.2)
    result = audit(published)
    pairs = result.insider.pairs
    assert {"no flow", "not computed"} <= set(pairs["status"]) <= {"no flow", "not computed",
                                                                    "optimal"}
    assert result.insider.complete and result.complete and result.not_settled.empty
    # the summary names the open pairs' reason, never a NaN interval
    first_open = dataclasses.replace(result, insider=dataclasses.replace(
        result.insider, pairs=pairs.sort_values("status", ascending=False)))
    assert "another pair shows the cell exposed" in first_open.summary()
    assert "nan" not in first_open.summary()
    in_cell = contributions(frame, names, published)
    expected = independent_insider_failures(published, in_cell)
    assert audit_failures(result, frame, names) == expected
    assert_pair_intervals_hold(published, in_cell, pairs)
    hidden = published.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    insider_ok = result.frame["insider_ok"].to_numpy()
    assert {int(j) for j in np.flatnonzero(hidden)[~insider_ok]} == {j for _, j in expected}


def test_a_whole_block_flow_that_is_not_proven_infeasible_decides_nothing(monkeypatch):
    # a solve stopped short (time limit, numerical trouble) refutes the scenario for the
    # attack but proves no level missed: those pairs get their exact intervals
    real = insider_module.flow_and_status

    def stopped(*args, **kwargs):
        moved, status = real(*args, **kwargs)
        return moved, "no_solution" if status == "infeasible" else status

    monkeypatch.setattr(insider_module, "GROWN_CELLS", 2)
    monkeypatch.setattr(insider_module, "OUTER_HOPS", ())
    monkeypatch.setattr(insider_module, "flow_and_status", stopped)
    frame, names, published = outsider_pattern(5, 3, 0.1)
    result = audit(published)
    pairs = result.insider.pairs
    assert len(pairs) > 3 and "no flow" not in set(pairs["status"])
    assert audit_failures(result, frame, names) == independent_insider_failures(
        published, contributions(frame, names, published))


def test_the_attack_in_two_processes_and_on_a_dask_cluster_finds_the_same_pairs(monkeypatch):
    # the requirements in shares with certificates of their own: other flows, the same
    # failing pairs and verdicts
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(insider_module, "PARALLEL_REQUIREMENTS", 1)
    frame, names, published = outsider_pattern(5, 3, 0.1)
    one = audit(published)
    two = audit(published, n_jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask = audit(published, client=client)
    assert len(one.insider.pairs) > 3 and one.insider.complete
    for other in (two, dask):
        pairs = other.insider.pairs
        assert pairs[["insider", "exposed", "status"]].equals(
            one.insider.pairs[["insider", "exposed", "status"]])
        assert np.allclose(pairs[["lower", "upper"]], one.insider.pairs[["lower", "upper"]],
                           rtol=1e-9, equal_nan=True)
        assert other.frame[["protected", "solver_status"]].equals(
            one.frame[["protected", "solver_status"]])
        assert other.insider.requirements == one.insider.requirements
    assert audit_failures(two, frame, names) == independent_insider_failures(
        published, contributions(frame, names, published))


@pytest.mark.slow
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000), dims=st.sampled_from([2, 3]))
@example(seed=11, dims=2)
@example(seed=5, dims=3)
def test_every_method_protects_against_insiders(seed, dims):
    frame, names, table = survey(seed, dims, records(dims))
    in_cell = contributions(frame, names, table)
    for method in METHODS:
        result = suppress(table, method, time_limit=60)
        assert result.status != "no pattern"
        assert result.passed, method
        assert independent_insider_failures(result.table, in_cell) == set(), method


def test_the_network_method_protects_against_insiders():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"r": rng.choice(list("ABCD"), 30), "c": rng.choice(list("xyz"), 30),
                          "v": np.round(rng.pareto(1.2, 30) * 100 + 1, 1)})
    table = apply_rules(Table.from_microdata(frame, ["r", "c"], "v"),
                        [PPercentRule(10), FrequencyRule(3)]).table
    labels = table.cells.index
    in_cell = np.array([[(code_r in (r, "Total")) and (code_c in (c, "Total"))
                         for code_r, code_c in labels] for r, c in zip(frame["r"], frame["c"],
                                                                       strict=True)])
    plain = suppress(table, "network", singletons=False)
    assert independent_insider_failures(plain.table, in_cell)  # the outsider's pattern fails
    result = suppress(table, "network")
    assert result.passed
    assert independent_insider_failures(result.table, in_cell) == set()


def test_two_single_contributor_cells_alone_in_a_relation_are_named_with_their_intervals():
    # T = A + B + C + D; A (40) and B (50) have one contributor each and are primary
    frame = pd.DataFrame({"r": ["A", "B", "C", "C", "C", "D", "D", "D"],
                          "v": [40.0, 50, 30, 20, 10, 15, 25, 35]})
    table = apply_rules(Table.from_microdata(frame, ["r"], "v"),
                        FrequencyRule(2, level=10)).table
    status = table.cells["status"].to_numpy().copy()
    published = table.with_columns(status=status)  # A and B hidden: each one's only partner
    result = audit(published)
    assert result.frame["lower"].tolist() == [0.0, 0.0]  # the outsider cannot tell them apart
    assert result.frame["upper"].tolist() == [90.0, 90.0]
    assert not result.protected and result.status == "not protected"
    pairs = result.insider_failures
    assert pairs[["insider", "exposed", "lower", "upper"]].values.tolist() == [
        ["r=A", "r=B", 50.0, 50.0], ["r=B", "r=A", 40.0, 40.0]]
    assert pairs[["lpl", "upl"]].values.tolist() == [[5.0, 5.0], [4.0, 4.0]]
    text = result.summary()
    assert "2 narrowed below their levels" in text
    assert "the respondent of r=A puts r=B in [50, 50] (value 50" in text
    assert result.frame.loc[["A", "B"], "insider_ok"].tolist() == [False, False]
    data = result.to_dict()["insider"]
    assert data["respondents"] == 2 and [p["exposed"] for p in data["failing"]] == ["r=B", "r=A"]
    assert "Pairs the insider attack breaks" in Report("audit").add(
        result.to_report()).to_markdown()
    assert audit(published, singletons=False).insider is None
    assert audit(published, singletons=False).protected  # the outsider alone is fooled


def small_pattern():
    """A one-way table with frequency-rule primaries, its value-cost pattern and the
    outsider's attack on that pattern."""
    frame = pd.DataFrame({"r": ["A", "B", "C", "C", "C", "D", "D", "D"],
                          "v": [40.0, 50, 30, 20, 10, 15, 25, 35]})
    table = apply_rules(Table.from_microdata(frame, ["r"], "v"), FrequencyRule(2)).table
    protected = suppress(table, cost="value")
    return table, protected, outsider_attack(table, protected.suppressed)


def outsider_attack(table: Table, hidden: np.ndarray) -> IntervalAttack:
    """The outsider's interval attack on ``table`` with ``hidden`` cells."""
    return IntervalAttack(table.A, table.b, table.values, hidden,
                          table.cells["lb"].to_numpy(float), table.cells["ub"].to_numpy(float))


def certificates_on(table: Table, hidden: np.ndarray, attack: IntervalAttack):
    """The insider attack's certificates (local first, 4 hops) on that attack."""
    return insider_module._Certificates(
        attack, table.values, _groups(table, hidden), 4, True, np.full(table.n_cells, 1e-6),
        Deadline(None))


def test_an_attack_cut_short_by_the_time_limit_is_never_protected():
    table, protected, attack = small_pattern()
    result = protected.audit
    assert result.insider.passed and result.protected
    hidden = protected.suppressed
    late = insider_attack(attack, table.values, tuple(
        table.cells[c].to_numpy(float) for c in ("lpl", "upl", "spl")),
        (table.cells["status"] == "u").to_numpy(), _groups(table, hidden),
        deadline=Deadline(1.0, clock=iter([0.0] + [5.0] * 100).__next__))
    assert late.unchecked == late.requirements > 0 and not late.complete and not late.passed
    sensitive = np.flatnonzero((table.cells["status"] == "u").to_numpy() & hidden)
    assert 0 < len(late.unexamined) and set(late.unexamined) <= set(sensitive)
    examined = insider_attack(attack, table.values, tuple(
        table.cells[c].to_numpy(float) for c in ("lpl", "upl", "spl")),
        (table.cells["status"] == "u").to_numpy(), _groups(table, hidden))
    assert examined.complete and len(examined.unexamined) == 0
    cut = dataclasses.replace(result, insider=late)
    assert cut.status == "time-limited" and not cut.protected
    # a share of the parallel attack gets the audit's end as a wall-clock time: one that
    # starts after it (it waited for a worker) examines nothing
    reqs = insider_module._requirements(
        (table.cells["status"] == "u").to_numpy() & hidden, *(table.cells[c].to_numpy(float)
                                                             for c in ("lpl", "upl", "spl")),
        np.full(table.n_cells, 1e-6))
    share = [attack, table.values, _groups(table, hidden), 4, False, reqs, [None] * len(reqs),
             np.full(table.n_cells, 1e-6)]
    assert insider_module._examine_chunk((*share, time.time() - 1)).unchecked == len(reqs)
    assert insider_module._examine_chunk((*share, time.time() + 60)).unchecked == 0


def _groups(table: Table, hidden: np.ndarray):
    from tabsdc.audit import insider_groups

    freq = table.cells["freq"].to_numpy(float)
    return insider_groups(table.A, freq, hidden & (table.cells["status"] == "u").to_numpy()
                          & (freq == 1))


@pytest.fixture(scope="module")
def business_survey() -> Table:
    data = load_business_survey()
    hierarchies = {
        "A88": Hierarchy.from_levels(data[["A10", "A21", "A88"]]),
        "NUTS3": Hierarchy.from_levels(data[["NUTS1", "NUTS2", "NUTS3"]]),
    }
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER", hierarchies=hierarchies)
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


#: Pairs (respondent's cell, exposed cell) of the README table that the outsider's patterns
#: leave narrowed: A88=42 in FR221 and FR223 are each other's only unknown once one
#: respondent knows its own value.
README_PAIRS = [(("42", "FR223"), ("42", "FR221")), (("42", "FR221"), ("42", "FR223"))]


def linprog_interval(table: Table, known: list[int], j: int) -> tuple[float, float]:
    """min and max of cell j over the published table with the cells ``known`` fixed."""
    cells = table.cells
    a = table.values
    hidden = cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    fixed = ~hidden
    fixed[known] = True
    lb, ub = cells["lb"].to_numpy(float), cells["ub"].to_numpy(float)
    bounds = np.column_stack([np.where(fixed, a, lb), np.where(fixed, a, ub)])
    ends = []
    for sign in (1, -1):
        c = np.zeros(len(a))
        c[j] = sign
        res = linprog(c, A_eq=table.A, b_eq=table.A @ a, bounds=bounds, method="highs")
        ends.append(sign * res.fun)
    return ends[0], ends[1]


@pytest.mark.slow
@pytest.mark.parametrize(("method", "limit"), [("heuristic", None), ("optimal", 60),
                                               ("hypercube", None), ("auto", None)])
def test_the_readme_table_is_protected_against_its_respondents(business_survey, method,
                                                               limit):
    result = suppress(business_survey, method, time_limit=limit)
    assert result.status in ("optimal", "feasible") and result.passed
    insider = result.audit.insider
    assert insider is not None and insider.complete and len(insider.pairs) == 0
    assert insider.respondents > 200
    position = business_survey.cells.index.get_loc
    for respondent, exposed in README_PAIRS:
        j = position(exposed)
        low, high = linprog_interval(result.table, [position(respondent)], j)
        a = business_survey.values[j]
        level = business_survey.cells["upl"].iloc[j]
        assert low <= a - level + 1e-6 * a and high >= a + level - 1e-6 * a
    assert "insider attack: " in result.summary()


@pytest.mark.slow
def test_the_outsiders_pattern_of_the_readme_table_is_broken_by_its_respondents(
        business_survey):
    plain = suppress(business_survey, "heuristic", singletons=False)
    assert plain.passed and plain.audit.insider is None  # against the outsider alone
    verdict = audit(plain.table)
    pairs = verdict.insider_failures
    assert not verdict.passed and len(pairs) > 10
    named = set(zip(pairs["insider"], pairs["exposed"], strict=True))
    labels = business_survey.cell_labels
    position = business_survey.cells.index.get_loc
    for respondent, exposed in README_PAIRS:
        assert (labels([position(respondent)])[0], labels([position(exposed)])[0]) in named
        low, high = linprog_interval(plain.table, [position(respondent)], position(exposed))
        assert high - low < 1e-6 * business_survey.values[position(exposed)]


@settings(max_examples=40, deadline=None)
@given(rooms=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=9),
       level=st.floats(0.5, 6.0), split=st.booleans())
def test_scenarios_tried_in_halves_fail_exactly_for_the_respondents_that_pin_the_cell(
        rooms, level, split):
    # T = x + y_1 + ... + y_k, T published (no room), x (no respondent of its own) must
    # move up by ``level``; each y_i is a respondent who knows its value. x moves by the
    # room the other y's leave: respondent i pins it exactly when the sum of the others'
    # rooms is below the level (a closed form, written apart from the flows)
    k = len(rooms)
    A = sp.csc_array(np.array([[-1.0, 1.0] + [1.0] * k]))
    freq = np.array([9.0, 9.0] + [1.0] * k)
    groups = insider_groups(A, freq, freq == 1)
    room = np.array([0.0, 99.0] + rooms)
    weights = np.ones(k + 2)
    calls = []

    def prove(req):
        calls.append(req)
        return local_flow(A, np.arange(k + 2), req, room, room, weights)

    total = sum(rooms)
    assume(min(abs(total - r - level) for r in [0.0, *rooms]) > 1e-6)  # off the boundary
    proofs, failed = insider_proofs(Requirement(1, UP, level), groups, prove, split=split)
    if total < level:  # the outsider already pins it
        assert failed == [Requirement(1, UP, level)]
        return
    pinning = {i for i in range(k) if total - rooms[i] < level}
    assert {req.fixed for req in failed} == {(i + 2,) for i in pinning}
    assert len(calls) <= 2 + (2 * k - 1 if split else k)


@settings(max_examples=40, deadline=None)
@given(rooms=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=9),
       level=st.floats(0.5, 6.0))
def test_scenarios_held_on_one_side_fail_exactly_for_the_respondents_that_pin_the_cell(
        rooms, level):
    # the table of the test above; a respondent the first flow moves is held in its
    # scenario on the other side instead of at zero (the first flow's sign, read here
    # apart from the attack's bookkeeping): the same respondents fail, and every scenario
    # after the first flow holds its cells on a side
    k = len(rooms)
    A = sp.csc_array(np.array([[-1.0, 1.0] + [1.0] * k]))
    freq = np.array([9.0, 9.0] + [1.0] * k)
    groups = insider_groups(A, freq, freq == 1)
    room = np.array([0.0, 99.0] + rooms)
    first: dict[int, float] = {}
    calls = []

    def prove(req):
        calls.append(req)
        found = local_deviation(A, np.arange(k + 2), req, room, room, np.ones(k + 2))
        if found is None:
            return None
        if not req.fixed:
            first.update(zip(found[0].tolist(), found[1].tolist(), strict=True))
        return found[0]

    def sides(chosen):
        return np.array([-np.sign(first[int(groups.members(int(g))[0])]) for g in chosen],
                        dtype=np.int64)

    total = sum(rooms)
    assume(min(abs(total - r - level) for r in [0.0, *rooms]) > 1e-6)  # off the boundary
    proofs, failed = insider_proofs(Requirement(1, UP, level), groups, prove, split=True,
                                    sides=sides)
    if total < level:
        assert failed == [Requirement(1, UP, level)]
        return
    pinning = {i for i in range(k) if total - rooms[i] < level}
    assert {req.fixed for req in failed} == {(i + 2,) for i in pinning}
    assert all(req.sides and all(req.sides) for req in calls[1:])


@pytest.mark.parametrize(("seed", "dims", "extra"), [(11, 2, 0.0), (7, 2, 0.2), (2, 3, 0.0)])
def test_scenarios_held_on_one_side_agree_with_the_independent_attacker(
        monkeypatch, seed, dims, extra):
    # the attack's scenarios hold a respondent's one cell on the side a known certificate
    # does not move it to; its failing pairs are still exactly the independent attacker's
    frame, names, published = outsider_pattern(seed, dims, extra)
    held_on_a_side = []
    real_prove = insider_module._Certificates.prove
    monkeypatch.setattr(insider_module._Certificates, "prove", lambda self, req: (
        held_on_a_side.append(req) if any(req.sides) else None) or real_prove(self, req))
    result = audit(published)
    assert held_on_a_side and result.insider.complete
    expected = independent_insider_failures(published, contributions(frame, names, published))
    assert audit_failures(result, frame, names) == expected


def small_certificates():
    """:func:`small_pattern`'s table and hidden cells, and the attack's certificates on it."""
    table, protected, attack = small_pattern()
    hidden = protected.suppressed
    return table, hidden, certificates_on(table, hidden, attack)


def test_a_cell_whose_whole_block_flows_are_slow_tries_local_regions_first():
    # the whole block's flows take less than four local ones on average, so its kept model
    # is tried first, except for a cell whose own whole-block flow took longer than that
    # (on a 4-D table's 11,230-cell block, 15 to 20 s where a grown region took 3 s)
    table, hidden, certificates = small_certificates()
    block, (slow, fast) = 0, np.flatnonzero(hidden)[:2]
    certificates._local_seconds, certificates._local_solves = 0.5, 10  # 0.05 s each
    certificates._whole_seconds[block] = 0.1 * insider_module.MEASURED_SOLVES
    certificates._whole_solves[block] = insider_module.MEASURED_SOLVES
    assert certificates._whole_is_cheaper(block, slow)
    certificates._slowest_whole[slow] = 0.25  # more than four local flows
    assert not certificates._whole_is_cheaper(block, slow)
    assert certificates._whole_is_cheaper(block, fast)
    certificates._whole_solves[block] -= 1  # too few measured solves: the regions first
    assert not certificates._whole_is_cheaper(block, fast)


def test_local_flows_of_a_size_are_presolved_in_turn_then_the_faster_way_is_kept():
    # HiGHS's presolve pays on regions whose flows are long to find and costs where they
    # are found at once: each size (by powers of two) tries both ways in turn, then keeps
    # the one whose flows took less time
    _, _, certificates = small_certificates()
    trials = insider_module.PRESOLVE_TRIALS
    by_size = certificates._by_size
    ways = []
    for _ in range(2 * trials):
        ways.append(certificates._presolves(100))
        by_size[(100).bit_length()][:, int(ways[-1])] += (0.1 if ways[-1] else 0.3, 1)
    assert ways == [False, True] * trials
    assert certificates._presolves(100) and certificates._presolves(127)
    assert not certificates._presolves(128)  # another size: tried in turn again
    by_size[(100).bit_length()][0, 0] = 0.0  # without presolve now faster on average
    assert not certificates._presolves(100)
    # on a real certificate the region's size is counted on the way the flow took
    table, hidden, certificates = small_certificates()
    certificates.local = True
    cell = int(np.flatnonzero(hidden & (table.cells["status"] == "u").to_numpy())[0])
    assert certificates.prove(Requirement(cell, UP, 1.0)) is not None
    solves = sum(counts[1].sum() for counts in certificates._by_size.values())
    assert solves == certificates._local_solves >= 1


def test_the_region_of_a_cells_known_flows_holds_their_cells_and_their_relations():
    table, hidden, certificates = small_certificates()
    cell = int(np.flatnonzero(hidden & (table.cells["status"] == "u").to_numpy())[0])
    assert len(certificates._carried(cell)) == 0  # no flow known yet
    moved = certificates.prove(Requirement(cell, UP, 1.0))
    assert moved is not None and cell in moved
    region = certificates.attack.hidden_cells[certificates._carried(cell)]
    # the moved cells, and every hidden cell sharing a relation with one of them
    rows = np.flatnonzero(abs(table.A[:, moved]).sum(axis=1))
    sharing = np.flatnonzero(abs(table.A[rows]).sum(axis=0))
    assert set(moved) <= set(region) == set(sharing) & set(np.flatnonzero(hidden))


def test_the_relaxation_around_a_cell_has_fewer_hops_where_more_exceed_the_largest_region():
    # the rows within three hops of the cell and the cells they hold, as the neighbourhood
    # gives them; a hop that would hold more cells than the largest region is not taken
    _, _, published = outsider_pattern(7, 2, 0.2)
    hidden = published.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    region = certificates_on(published, hidden, outsider_attack(published, hidden)).region
    sizes = [len(region.neighbourhood(np.array([0]), hops)) for hops in range(1, 5)]
    assert sizes[0] < sizes[1] < sizes[3]  # the hops widen it on this table
    hops = insider_module.RELAXED_HOPS
    rows, cells = region.around(0, hops, insider_module.GROWN_LARGEST)
    wide = region.hop(region.neighbourhood(np.array([0]), hops - 1))
    assert np.array_equal(rows, wide[0]) and np.array_equal(cells, wide[1])
    rows, cells = region.around(0, hops, sizes[1])
    assert np.array_equal(cells, region.neighbourhood(np.array([0]), 2))
    assert np.array_equal(rows, region.hop(region.neighbourhood(np.array([0]), 1))[0])


def test_a_scenarios_regions_grow_with_the_region_of_the_known_flows_in_its_place(
        monkeypatch):
    # the neighbourhood, then regions grown around the cell and the region of its known
    # flows, each larger than the last and smaller than the block: that region (thousands
    # of cells on a 4-D table) comes after the grown regions smaller than it
    monkeypatch.setattr(insider_module, "GROWN_CELLS", 2)
    monkeypatch.setattr(insider_module, "GROWN_LARGEST", 64)
    _, _, published = outsider_pattern(7, 2, 0.2)
    hidden = published.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    certificates = certificates_on(published, hidden, outsider_attack(published, hidden))
    certificates.hops = 1
    cell = int(np.flatnonzero(hidden & (published.cells["status"] == "u").to_numpy())[0])
    assert certificates.prove(Requirement(cell, UP, 1.0)) is not None
    p, block = int(certificates.position[cell]), int(certificates.component[cell])
    regions = list(certificates._regions(cell, p, block))
    sizes = [len(region) for region in regions]
    carried = certificates._carried(cell)
    assert sizes == sorted(set(sizes)) and sizes[-1] < certificates.sizes[block]
    assert sizes[0] == len(neighbourhood(certificates.by_column, certificates.by_row, p, 1))
    at = [k for k, region in enumerate(regions) if np.array_equal(region, carried)]
    assert at and 1 < at[0] < len(regions) - 1  # grown regions on both sides of it
