"""The certified lower bound every suppression result carries (tabsdc.suppression._bound).

The bound must never exceed the cost of any protecting pattern: checked against the proven
optimum of the optimal method, an exhaustive enumeration of the patterns and every method's
own pattern; its weak-duality formula is checked against scipy's LP optimum.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc._bounds import capacities
from tabsdc._progress import Deadline
from tabsdc.suppression import suppress
from tabsdc.suppression._attacker import Attacker, requirements
from tabsdc.suppression._bound import (
    dual_bound,
    lower_bound,
    relation_cuts,
    seed_rows,
    starting_rows,
)
from tests.conftest import examples
from tests.tabsdc.test_suppression import (
    brute_force_optimum,
    grid,
    random_tables,
    with_primaries,
)


def table_requirements(table):
    """The requirements of the table's primaries (status ``u``) at their levels."""
    status = table.cells["status"].to_numpy()
    return requirements(status == "u", table.cells["lpl"].to_numpy(float),
                        table.cells["upl"].to_numpy(float))


def model_bound(table, cost: str = "value", seconds: float | None = 60.0):
    """lower_bound on the table as suppress sets it up (costs of the hidden cells 0)."""
    primary = table.cells["status"].to_numpy() == "u"
    down, up = capacities(table)
    reqs = table_requirements(table)
    c = np.abs(table.values) if cost == "value" else np.ones(table.n_cells)
    return lower_bound(table.A, reqs, Attacker(table.A, down, up), c, primary,
                       np.zeros(table.n_cells, dtype=bool), deadline=Deadline(seconds))


@settings(max_examples=examples(8, 25), deadline=None)
@given(random_tables(), st.sampled_from(["value", "count"]))
def test_the_bound_is_never_above_the_proven_optimum_nor_any_pattern(table, cost):
    optimal = suppress(table, "optimal", cost=cost)
    assert optimal.status == "optimal"
    bound = model_bound(table, cost)
    assert bound.value <= optimal.stats.objective * (1 + 1e-9) + 1e-9
    for method in ("heuristic", "hypercube", "modular"):
        result = suppress(table, method, cost=cost)
        assert result.protected
        paid = float(result.cost[result.secondary.to_numpy()].sum())
        assert result.stats.bound <= paid * (1 + 1e-9) + 1e-9
        assert result.stats.bound <= optimal.stats.objective * (1 + 1e-9) + 1e-9
        assert result.stats.gap == pytest.approx((paid - result.stats.bound) / paid
                                                 if paid else 0.0, abs=1e-9)
        if cost == "count":  # a pattern costs a whole number: so does the bound
            assert result.stats.bound == np.round(result.stats.bound)


@pytest.mark.parametrize("cost", ["value", "count"])
@pytest.mark.parametrize("case", [
    ([[10, 5, 3], [7, 8, 2], [4, 1, 9]], {("1", "1"): None}),
    ([[10, 5, 3], [7, 8, 2], [4, 1, 9]], {("1", "1"): None, ("3", "3"): 4.0}),
    ([[2, 9, 14], [3, 1, 6], [12, 8, 5]], {("2", "2"): 0.9, ("1", "1"): None}),
])
def test_the_bound_is_never_above_the_enumerated_optimum(case, cost):
    values, primaries = case
    table = with_primaries(grid(values), primaries, share=0.5)
    status = table.cells["status"].to_numpy().copy()
    status[0] = "z"  # the grand total published: the enumeration stays at 2^14 patterns
    table = table.with_columns(status=status)
    result = suppress(table, "heuristic", cost=cost)
    expected = brute_force_optimum(table, result.cost)
    assert 0 < result.stats.bound <= expected * (1 + 1e-9)
    assert result.stats.objective >= expected * (1 - 1e-9)


def test_the_bound_of_the_slides_cycle_is_its_optimum():
    # x = 10 in the 2x2 table of the slides, totals published: the cycle costs 5 + 7 + 8
    table = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 2.0})
    status = table.cells["status"].to_numpy().copy()
    status[table.total_cells] = "z"
    bound = model_bound(table.with_columns(status=status))
    assert bound.value == pytest.approx(20.0, rel=1e-6) and bound.converged


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(2, 10))
def test_weak_duality_bound_is_at_most_the_lp_optimum_for_any_multipliers(seed, m, n):
    rng = np.random.default_rng(seed)
    rows = sp.csr_array(rng.random((m, n)) * (rng.random((m, n)) < 0.5))
    rows = sp.csr_array(rows.toarray() + np.eye(m, n))  # every row can be met
    cost = rng.random(n) * 10
    lower = (rng.random(n) < 0.2).astype(float)
    upper = np.ones(n)
    lp = linprog(cost, A_ub=-rows.toarray(), b_ub=-np.ones(m),
                 bounds=list(zip(lower, upper, strict=True)), method="highs")
    if lp.status != 0:
        return
    for multipliers in (rng.random(m) * 5, rng.normal(size=m) * 3, -lp.ineqlin.marginals):
        assert dual_bound(rows, multipliers, cost, lower, upper) <= lp.fun + 1e-7
    # the LP's own duals reach its optimum
    assert dual_bound(rows, -lp.ineqlin.marginals, cost, lower, upper) == pytest.approx(
        lp.fun, abs=1e-6)


def test_the_fallback_alone_is_a_bound_and_the_lp_raises_it():
    table = with_primaries(grid([[10, 5, 3], [7, 8, 2], [4, 1, 9]]),
                           {("1", "1"): None, ("3", "3"): 4.0}, share=0.5)
    optimum = suppress(table, "optimal").stats.objective
    # a deadline already past: no LP solve, the shares of the seed rows only
    fallback = model_bound(table, seconds=1e-9)
    full = model_bound(table)
    assert fallback.rounds == 0 and "no LP" in fallback.how
    assert 0 < fallback.value <= full.value <= optimum * (1 + 1e-9)
    assert full.rounds >= 1 and "LP relaxation" in full.how


def test_seed_rows_leave_out_the_primary_and_keep_every_other_cell():
    table = with_primaries(grid([[10, 5], [7, 8]]), {("1", "1"): 2.0})
    primary = int(np.flatnonzero(table.cells["status"].to_numpy() == "u")[0])
    rows = seed_rows(table.A, table_requirements(table), table.n_cells).toarray()
    relations = (table.A.toarray() != 0)[:, primary]
    expected = (table.A.toarray() != 0)[relations].astype(float)
    expected[:, primary] = 0.0
    assert np.array_equal(rows, expected)


def test_relation_cuts_are_the_attackers_capacity_cuts_of_one_relation():
    # independently: Attacker.cut with the multiplier -direction / a_i on one relation
    table = with_primaries(grid([[20, 2, 3], [5, 6, 7], [1, 9, 4]]),
                           {("1", "1"): 10.0, ("3", "2"): 4.0})
    down, up = capacities(table)
    attacker = Attacker(table.A, down, up)
    attacker.set_pattern(np.ones(table.n_cells))
    A = table.A.toarray()
    expected = []
    for req in table_requirements(table):
        for relation in np.flatnonzero(A[:, req.cell]):
            multipliers = np.zeros(A.shape[0])
            multipliers[relation] = -req.direction / A[relation, req.cell]
            expected.append(attacker.cut(req, multipliers))
    cuts = relation_cuts(table.A, table_requirements(table), down, up).toarray()
    assert np.allclose(cuts, np.array(expected))
    # the primary 20 moving up by 10: its row's small cells carry 2/10 and 3/10 of it,
    # its column's 5/10 and 1/10; each total, moving up, all of it
    supports = {tuple(sorted(np.round(row[row > 0], 6).tolist())) for row in cuts}
    assert {(0.2, 0.3, 1.0), (0.1, 0.5, 1.0)} <= supports


def protects(table, hidden: np.ndarray) -> bool:
    """The interval attack written out with scipy: every primary's exact interval over the
    hidden cells (values at least 0, the published ones fixed) reaches its levels."""
    A, values = table.A.toarray(), table.values
    b_eq = -A[:, ~hidden] @ values[~hidden]
    for cell in np.flatnonzero(table.cells["status"].to_numpy() == "u"):
        column = int(np.flatnonzero(np.flatnonzero(hidden) == cell)[0])
        objective = np.zeros(hidden.sum())
        for sign, level in ((1.0, table.cells["upl"].iloc[cell]),
                            (-1.0, table.cells["lpl"].iloc[cell])):
            objective[column] = -sign
            reach = -linprog(objective, A_eq=A[:, hidden], b_eq=b_eq,
                             bounds=(0, 10 * values.max()), method="highs").fun
            if reach - sign * values[cell] < level - 1e-9:
                return False
    return True


def test_every_protecting_pattern_meets_the_relation_cuts_and_the_seed_rows_do_not_suffice():
    # every pattern of a 2 x 3 table (grand total published) attacked: each one that
    # protects meets every relation cut, and a pattern meeting every seed row that misses
    # a relation cut (the cycle through the small cells 2 and 5) is one the attack exposes
    table = with_primaries(grid([[20, 2, 3], [5, 6, 7]]), {("1", "1"): 10.0})
    status = table.cells["status"].to_numpy().copy()
    status[0] = "z"
    table = table.with_columns(status=status)
    reqs = table_requirements(table)
    down, up = capacities(table)
    cuts = relation_cuts(table.A, reqs, down, up).toarray()
    seeds = seed_rows(table.A, reqs, table.n_cells).toarray()
    free = np.flatnonzero(status == "s")
    protecting, caught = 0, 0
    for chosen in itertools.product([False, True], repeat=len(free)):
        z = (status == "u").astype(float)
        z[free[np.array(chosen)]] = 1.0
        if (seeds @ z < 1).any():  # the relation of the primary gives it away
            continue
        if protects(table, z.astype(bool)):
            protecting += 1
            assert (cuts @ z >= 1 - 1e-9).all()
        elif (cuts @ z < 1 - 1e-9).any():
            caught += 1
    assert protecting > 0 and caught > 0


def test_the_relation_cuts_raise_the_lp_over_the_seed_rows():
    # a total of 10 over the parts 4 and 6, the part 4 to move up by 8: hiding the part 6
    # (cost 6.2) meets the seed row but carries only 6 of the 8; the LP then needs a
    # quarter of the total too: 6.2 + 2.5 (the optimum hides the total: 10)
    A = sp.csr_array([[-1.0, 1.0, 1.0]])
    down, up = np.array([10.0, 4.0, 6.0]), np.full(3, 100.0)
    reqs = requirements(np.array([False, True, False]), np.zeros(3), np.array([0, 8.0, 0]))
    cost = np.array([10.0, 0.0, 6.2])
    bounds = [(0, 1), (1, 1), (0, 1)]

    def lp(rows):
        return linprog(cost, A_ub=-rows.toarray(), b_ub=-np.ones(rows.shape[0]),
                       bounds=bounds, method="highs").fun

    assert lp(seed_rows(A, reqs, 3)) == pytest.approx(6.2)
    assert lp(starting_rows(A, reqs, Attacker(A, down, up))) == pytest.approx(8.7)
    bound = lower_bound(A, reqs, Attacker(A, down, up), cost, np.array([False, True, False]),
                        np.zeros(3, dtype=bool))
    assert bound.value == pytest.approx(8.7) and bound.converged


@pytest.mark.parametrize("method", ["heuristic", "hypercube", "network", "modular",
                                    "optimal"])
def test_summary_to_dict_and_report_carry_the_bound_and_gap(method):
    table = with_primaries(grid([[10, 5, 3], [7, 8, 2], [4, 1, 9]]),
                           {("1", "1"): None}, share=0.5)
    result = suppress(table, method)
    s = result.stats
    assert np.isfinite(s.bound) and 0 < s.bound <= s.objective * (1 + 1e-9)
    assert s.bound_how
    summary = result.summary()
    if result.status == "optimal":
        assert "proven optimal" in summary
    else:
        assert f"of the certified lower bound {s.bound:,.0f}" in summary
        assert "not proven optimal" in summary
    record = result.to_dict()
    assert record["bound"] == pytest.approx(s.bound)
    assert record["gap"] == pytest.approx((s.objective - s.bound) / s.objective)
    assert record["ratio_to_bound"] == pytest.approx(s.objective / s.bound)
    assert record["bound_how"] == s.bound_how
    metrics = {}
    for block in result.to_report().blocks:
        metrics.update(getattr(block, "values", None) or {})
    assert metrics["certified lower bound"] == pytest.approx(s.bound)


@pytest.mark.parametrize("cost", ["value", "count"])
def test_with_respondents_the_bound_stays_below_the_insider_aware_optimum(cost):
    # single-contributor primaries: the respondents' seed rows join the relaxation
    import pandas as pd

    from tabsdc import FrequencyRule, Table, apply_rules

    data = pd.DataFrame({"r": list("AABBBCCCDD"), "c": list("xyxyyxyyxy"),
                         "v": [5.0, 6, 7, 8, 9, 10, 11, 12, 3, 4]})
    ruled = apply_rules(Table.from_microdata(data, ["r", "c"], "v"),
                        FrequencyRule(2, level=20)).table
    optimal = suppress(ruled, "optimal", cost=cost)
    assert optimal.status == "optimal" and optimal.protected
    for method in ("heuristic", "hypercube"):
        result = suppress(ruled, method, cost=cost)
        assert result.protected
        assert 0 < result.stats.bound <= optimal.stats.objective * (1 + 1e-9)
