import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import Hierarchy, InputError, Table
from tabsdc._progress import Deadline
from tabsdc.audit import audit
from tabsdc.suppression import suppress
from tabsdc.suppression._methods import optimal_method
from tabsdc.suppression._problem import MethodOptions, suppression_problem
from tests.conftest import examples


def with_primaries(table: Table, primaries: dict, share: float = 0.2) -> Table:
    """Mark cells (by index key) primary with symmetric levels ``share * value``."""
    status = pd.Series(table.cells["status"].to_numpy(), index=table.cells.index, dtype=object)
    level = pd.Series(0.0, index=table.cells.index)
    for key, lev in primaries.items():
        status[key] = "u"
        level[key] = lev if lev is not None else share * table.cells.loc[key, "value"]
    return table.with_columns(status=status.to_numpy(), lpl=level.to_numpy(),
                              upl=level.to_numpy())


def grid(values) -> Table:
    rows = [(str(i + 1), str(j + 1), float(v)) for i, row in enumerate(values)
            for j, v in enumerate(row)]
    return Table.from_aggregated(pd.DataFrame(rows, columns=["r", "c", "value"]), ["r", "c"])


def brute_force_optimum(table: Table, cost: np.ndarray) -> float:
    """Cheapest protecting pattern by checking subsets in order of cost."""
    status = table.cells["status"].to_numpy()
    free = np.flatnonzero(status == "s")
    assert len(free) <= 14
    subsets = np.array(list(itertools.product([0, 1], repeat=len(free))), dtype=bool)
    totals = subsets @ cost[free]
    # necessary (cheap) condition: every relation of a primary holds another hidden cell
    A = (table.A.toarray() != 0)
    possible = np.ones(len(subsets), dtype=bool)
    for i in np.flatnonzero(status == "u"):
        for row in np.flatnonzero(A[:, i]):
            others = A[row, free]
            possible &= (subsets[:, others].any(axis=1)) | (
                (A[row] & (status == "u")).sum() > 1)
    for k in np.argsort(np.where(possible, totals, np.inf), kind="stable"):
        if not possible[k]:
            break
        trial = status.copy()
        trial[free[subsets[k]]] = "m"
        if audit(table.with_columns(status=trial)).protected:
            return float(totals[k])
    raise AssertionError("no protecting pattern")


def test_slides_cycle_is_the_optimal_pattern():
    # x = 10 (r = 2) in the 2x2 table of slides 18-20, totals published: the cycle b, c, a
    table = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 2.0})
    result = suppress(table, cost="value", suppress_totals=False)
    secondary = set(result.secondary.index[result.secondary])
    assert secondary == {("1", "2"), ("2", "1"), ("2", "2")}
    assert result.stats.status == "optimal"
    assert result.stats.objective == 20
    assert result.audit.protected


@pytest.mark.parametrize("cost", ["value", "count", "entropy"])
@pytest.mark.parametrize("case", [
    ([[10, 5, 3], [7, 8, 2], [4, 1, 9]], {("1", "1"): None}),
    ([[10, 5, 3], [7, 8, 2], [4, 1, 9]], {("1", "1"): None, ("3", "3"): 4.0}),
    ([[2, 9, 14], [3, 1, 6], [12, 8, 5]], {("2", "2"): 0.9, ("1", "1"): None}),
])
def test_optimal_matches_exhaustive_enumeration(case, cost):
    values, primaries = case
    table = with_primaries(grid(values), primaries, share=0.5)
    if (table.cells["status"] == "s").sum() > 14:  # keep the enumeration at 2^14 patterns
        status = table.cells["status"].to_numpy().copy()
        status[0] = "z"  # the grand total is published as is
        table = table.with_columns(status=status)
    result = suppress(table, cost=cost)
    assert result.stats.status == "optimal"
    assert result.audit.protected
    expected = brute_force_optimum(table, result.cost)
    assert result.stats.objective == pytest.approx(expected, rel=1e-6)
    assert result.cost[result.secondary.to_numpy()].sum() == pytest.approx(expected, rel=1e-6)


@st.composite
def random_tables(draw):
    kind = draw(st.sampled_from(["2d", "3d", "hier"]))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    if kind == "2d":
        shape = (draw(st.integers(2, 5)), draw(st.integers(2, 5)))
        dims, hierarchies = ["a", "b"], None
    elif kind == "3d":
        shape = (2, draw(st.integers(2, 3)), draw(st.integers(2, 3)))
        dims, hierarchies = ["a", "b", "c"], None
    else:
        shape = (4, draw(st.integers(2, 4)))
        dims = ["a", "b"]
        hierarchies = {"a": Hierarchy.from_parent_child(
            {"0": "G1", "1": "G1", "2": "G2", "3": "G2", "G1": "Total", "G2": "Total"})}
    keys = list(itertools.product(*[range(s) for s in shape]))
    frame = pd.DataFrame([tuple(map(str, k)) for k in keys], columns=dims)
    frame["value"] = rng.integers(1, 60, len(keys)).astype(float)
    table = Table.from_aggregated(frame, dims, hierarchies=hierarchies)
    interior = np.flatnonzero(~table.total_cells)
    chosen = rng.choice(interior, draw(st.integers(1, 3)), replace=False)
    status = np.full(table.n_cells, "s", dtype=object)
    status[chosen] = "u"
    level = np.zeros(table.n_cells)
    level[chosen] = np.round(0.3 * table.values[chosen], 2)
    return table.with_columns(status=status, lpl=level, upl=level)


@settings(max_examples=examples(10, 25), deadline=None)
@given(random_tables(), st.sampled_from(["value", "count"]))
def test_every_pattern_passes_the_audit_and_optimal_is_cheapest(table, cost):
    heuristic = suppress(table, "heuristic", cost=cost)
    optimal = suppress(table, "optimal", cost=cost)
    assert heuristic.audit.protected and optimal.audit.protected
    if len(table.dims) == 2 and all(len(h.parent_codes) == 1 for h in
                                    table.hierarchies.values()):
        network = suppress(table, "network", cost=cost)
        assert network.audit.protected
        assert optimal.stats.objective <= network.stats.objective + 1e-6
    assert optimal.stats.status == "optimal"
    assert optimal.stats.objective <= heuristic.stats.objective + 1e-6
    # nothing is silently changed: primaries stay primary, values untouched
    assert (optimal.table.values == table.values).all()
    assert set(np.flatnonzero(table.cells["status"] == "u")) <= set(
        np.flatnonzero(optimal.table.cells["status"] == "u"))


def test_infeasible_request_names_the_cell():
    table = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 12.0})
    # x = 10 cannot move down by 12 when values are non-negative
    with pytest.raises(InputError, match=r"r=1 x c=1.*lower protection level 12"):
        suppress(table)
    capped = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 6.0})
    # upward: at most b = 5 units can flow into x through the cycle ... and the totals
    capped = capped.with_columns(ub=capped.values)  # intruder knows no cell exceeds its value
    with pytest.raises(InputError, match=r"r=1 x c=1.*upper protection level 6"):
        suppress(capped)


def test_totals_can_be_kept_published_and_cells_with_status_z_are_never_suppressed():
    table = with_primaries(grid([[10, 5, 3], [7, 8, 2], [4, 1, 9]]), {("1", "1"): None})
    status = table.cells["status"].to_numpy().copy()
    status[table.cells.index.get_loc(("1", "3"))] = "z"
    table = table.with_columns(status=status)
    result = suppress(table, suppress_totals=False)
    hidden = result.table.cells["status"].isin(["u", "m"]).to_numpy()
    assert not (hidden & table.total_cells).any()
    assert result.table.cells.loc[("1", "3"), "status"] == "z"
    assert result.audit.protected


def test_two_singletons_in_a_relation_get_a_third_suppression():
    data = pd.DataFrame({"r": ["A", "B", "C", "C", "C", "D", "D", "D"],
                         "v": [40.0, 50, 30, 20, 10, 15, 25, 35]})
    from tabsdc import FrequencyRule, apply_rules

    table = apply_rules(Table.from_microdata(data, ["r"], "v"), FrequencyRule(2)).table
    assert list(table.cells.index[table.cells["status"] == "u"]) == ["A", "B"]
    plain = suppress(table, cost="value", singletons=False)
    guarded = suppress(table, cost="value")
    assert plain.secondary.sum() == 0  # A and B protect each other ...
    assert guarded.secondary.sum() == 1  # ... but each respondent would learn the other
    assert guarded.secondary["C"]  # the cheapest other cell (value 60 < 75 < 200)


def twelve_primaries() -> Table:
    """A 12 x 12 grid (values 1-49) with 12 interior primaries, levels 30 %."""
    rng = np.random.default_rng(5)
    table = grid(rng.integers(1, 50, (12, 12)))
    interior = np.flatnonzero(~table.total_cells)
    chosen = rng.choice(interior, 12, replace=False)
    status = np.full(table.n_cells, "s", dtype=object)
    status[chosen] = "u"
    level = np.zeros(table.n_cells)
    level[chosen] = 0.3 * table.values[chosen]
    return table.with_columns(status=status, lpl=level, upl=level)


def ticking(seconds: float) -> Deadline:
    """A deadline on a clock that advances one second per reading."""
    ticks = itertools.count()
    return Deadline(seconds, clock=lambda: float(next(ticks)))


def test_time_limited_result_is_audit_clean_and_reports_its_gap():
    table = twelve_primaries()
    # the limit binds after the first repair
    result = suppress(table, "optimal", time_limit=ticking(400))
    assert result.audit.protected
    assert result.stats.status == "feasible" and result.stats.time_limited
    assert 0 < result.stats.gap < 1 and result.stats.bound < result.stats.objective
    assert "stopped by the time limit" in result.summary()
    data = result.to_dict()
    assert set(data) >= {"status", "objective", "bound", "gap", "suppressed", "secondary"}
    assert data["time_limited"] and set(data["secondary"]) <= set(data["suppressed"])


@pytest.mark.parametrize("mip_gap", [0.05, 0.1])
def test_the_cut_loop_stops_at_its_gap_target_and_does_not_call_that_optimal(mip_gap):
    """With a relative gap target the loop stops in fewer rounds, at a pattern within the
    target of its bound; the bound stays below the proven optimum, and the pattern, not
    proven, is audit-clean and called feasible."""
    table = twelve_primaries()
    problem = suppression_problem(table, table.values.astype(float))
    proven = optimal_method(problem, MethodOptions(Deadline(None)))
    near = optimal_method(problem, MethodOptions(Deadline(None), mip_gap=mip_gap))
    assert proven.stats.status == "optimal"
    assert near.stats.rounds < proven.stats.rounds
    assert near.stats.status == "feasible" and near.stats.gap <= mip_gap
    assert near.stats.bound <= proven.stats.objective + 1e-6 <= near.stats.objective + 2e-6
    status = np.where(near.pattern & (table.cells["status"] == "s").to_numpy(), "m",
                      table.cells["status"].to_numpy())
    assert audit(table.with_columns(status=status)).protected


def test_the_first_clean_up_leaves_the_cut_loop_time_for_a_bound():
    # at 100 readings the first pattern's clean-up alone would take them all (bound 0,
    # gap 100 %); it gets a quarter of what the routing leaves
    result = suppress(twelve_primaries(), "optimal", time_limit=ticking(100))
    assert result.audit.protected and result.stats.time_limited
    assert result.stats.rounds >= 1
    assert 0 < result.stats.bound < result.stats.objective and result.stats.gap < 0.5


def test_network_method_on_the_slides_cycle_and_its_limits():
    table = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 2.0})
    result = suppress(table, "network", suppress_totals=False)
    assert set(result.secondary.index[result.secondary]) == {("1", "2"), ("2", "1"), ("2", "2")}
    hierarchical = Table.from_aggregated(
        pd.DataFrame({"a": ["0", "1", "2"], "value": [1.0, 2.0, 3.0]}), ["a"],
        hierarchies={"a": Hierarchy.from_parent_child({"0": "G", "1": "G", "2": "Total",
                                                       "G": "Total"})})
    hierarchical = with_primaries(hierarchical, {"1": 0.5})
    with pytest.raises(InputError, match="two-dimensional table"):
        suppress(hierarchical, "network")


def test_subtables_cover_every_cell_and_relation():
    from tabsdc._datasets import business_survey_hierarchies, load_business_survey
    from tabsdc.suppression._modular import subtables

    data = load_business_survey()
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                 hierarchies=business_survey_hierarchies(data))
    parts = subtables(table)
    covered = np.zeros(table.n_cells, dtype=bool)
    holders = np.zeros(table.n_relations, dtype=int)
    row_size = np.diff(table.A.indptr)
    for cells in parts.values():
        covered[cells] = True
        inside = np.zeros(table.n_cells)
        inside[cells] = 1
        holders += (abs(table.A) @ inside == row_size)
    assert covered.all()
    assert (holders >= 1).all() and (holders <= 2).all()
    # a relation in two sub-tables is a margin shared by a parent and a child sub-table
    assert (holders == 2).sum() == 264


@settings(max_examples=examples(5, 10), deadline=None)
@given(random_tables())
def test_modular_patterns_pass_the_audit(table):
    result = suppress(table, "modular")
    assert result.audit.protected
    assert result.stats.objective >= suppress(table, "optimal").stats.objective - 1e-6


@pytest.mark.parametrize("method", ["optimal", "heuristic", "modular"])
def test_a_table_without_primaries_needs_no_suppression(method):
    table = grid([[3.0, 4.0], [5.0, 6.0]])
    result = suppress(table, method, "value")
    assert result.stats.status == "optimal" and result.stats.objective == 0.0
    assert not result.suppressed.any() and result.audit.protected


@pytest.mark.parametrize("method", ["heuristic", "guided", "modular"])
@settings(max_examples=examples(6, 15), deadline=None)
@given(table=random_tables())
def test_local_routing_gives_audit_clean_patterns(method, table):
    """Force local routing and local certificates (large-table mode) on small tables (the
    guided and modular methods: the whole table's flows first, then the neighbourhoods)."""
    import tabsdc.suppression._attacker as attacker

    default = attacker.LOCAL_ABOVE
    attacker.LOCAL_ABOVE = 0
    try:
        result = suppress(table, method)
    finally:
        attacker.LOCAL_ABOVE = default
    assert result.audit.protected
    assert result.stats.objective >= suppress(table, "optimal").stats.objective - 1e-6


def test_cuts_at_the_masters_other_points_are_valid_and_cut_those_points_off():
    """The cuts of the requirements failing at a round's other integer points: each is
    violated by a point it came from, none cuts off a protecting pattern (the proven
    optimum, everything hidden), and the protecting point returned is the cheapest."""
    from tabsdc.suppression._optimal import cuts_at_points
    from tabsdc.suppression._problem import suppression_problem

    values = np.random.default_rng(7).integers(1, 40, (4, 5))
    table = with_primaries(grid(values.tolist()), {("1", "1"): None, ("3", "4"): None,
                                                    ("2", "5"): None}, share=0.4)
    optimum = suppress(table, "optimal", cost="value")
    assert optimum.stats.status == "optimal"
    problem = suppression_problem(table, optimum.cost)
    attacker = problem.attacker(Deadline(None))
    rng = np.random.default_rng(0)
    points = (rng.random((16, table.n_cells)) < 0.3) | problem.fixed_on  # all attacked
    hidden = optimum.table.cells["status"].isin(["u", "m"]).to_numpy()
    points[0], points[2] = True, hidden  # two protecting patterns: everything hidden, the optimum
    z = points[1]
    cuts, protecting = cuts_at_points(points.astype(float), z, problem.reqs, attacker,
                                      problem.cost, problem.fixed_on, lambda: 0.0, 1.0)
    assert len(cuts) >= 5
    k = np.array([cut for _, cut in cuts])
    assert (k @ hidden >= 1 - 1e-9).all()
    assert (k @ np.ones(table.n_cells) >= 1 - 1e-9).all()
    assert ((points[3:].astype(float) @ k.T) < 1 - 1e-9).any(axis=0).all()
    # the protecting point is the cheapest of the points the audit finds protecting
    status = table.cells["status"].to_numpy()
    safe = [p for p in points if not (p == z).all() and audit(
        table.with_columns(status=np.where(p & (status != "u"), "m", status))).protected]
    assert len(safe) >= 2
    assert problem.cost @ protecting == pytest.approx(min(problem.cost @ p for p in safe))
    assert problem.cost @ protecting == pytest.approx(problem.cost @ hidden)
