import dataclasses
import itertools

import highspy
import numpy as np
import pulp
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc._errors import InputError, SolverError
from tabsdc.solver import (
    STATUSES,
    HighsModel,
    LinearProgram,
    SolveResult,
    available_solvers,
    solve,
)
from tabsdc.solver._highs import highs_status
from tabsdc.solver._problem import PROOF_ABS_GAP, PROOF_REL_GAP, relative_gap
from tabsdc.solver._pulp_backend import build_pulp_problem, pulp_status

from ..conftest import DATA

INF = np.inf
BACKENDS = ["highs", "cbc"]
# HiGHS driven through PuLP reports duals of the negated problem for "max"; it checks the
# sign normalisation of the PuLP backend.
LP_BACKENDS = ["highs", "cbc", "highs-pulp"]
MS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def wyndor(**kwargs):
    """Hillier & Lieberman's Wyndor Glass LP: max 3x + 5y, optimum (2, 6) with value 36."""
    return LinearProgram(
        c=[3, 5],
        A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
        row_lower=[-INF] * 3,
        row_upper=[4, 12, 18],
        col_lower=[0, 0],
        col_upper=[INF, INF],
        sense="max",
        **kwargs,
    )


def blend(sense="min"):
    """min x1 + 2x2 + 3x3 + 4x4 + 0.5x5 subject to
    x1 + x2 + x3 + x4 + x5 >= 6, x1 <= 4, x2 - x3 = 0, 0 <= x5 <= 1.

    By hand: x5 (cost 0.5) at its bound 1, x1 = 4, the remaining 1 unit from the pair
    x2 = x3 = 0.5 (2.5 per unit): value 0.5 + 4 + 1 + 1.5 = 7. Duals: one more unit of
    demand costs 2.5, one more unit of x1's cap saves 2.5 - 1 = 1.5, shifting x2 - x3 by d
    changes the cost by (2 - 3) d / 2. Reduced costs d = c - A'y = (0, 0, 0, 1.5, -2).
    ``sense="max"`` maximises the negated costs: every number changes sign.
    """
    c = np.array([1, 2, 3, 4, 0.5])
    return LinearProgram(
        c=c if sense == "min" else -c,
        A=sp.csr_array([[1, 1, 1, 1, 1], [1, 0, 0, 0, 0], [0, 1, -1, 0, 0]]),
        row_lower=[6, -INF, 0],
        row_upper=[INF, 4, 0],
        col_lower=np.zeros(5),
        col_upper=[INF, INF, INF, INF, 1],
        sense=sense,
    )


def hard_knapsack(n=60, m=5, seed=1):
    """A 60-item, 5-constraint 0/1 knapsack HiGHS does not close within a second."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(20, 100, size=(m, n)).astype(float)
    values = weights.sum(0) / m + rng.integers(-10, 10, n)
    return LinearProgram(
        c=values,
        A=sp.csr_array(weights),
        row_lower=np.full(m, -INF),
        row_upper=weights.sum(1) / 2,
        col_lower=np.zeros(n),
        col_upper=np.ones(n),
        integrality=np.ones(n, dtype=bool),
        sense="max",
    )


# --------------------------------------------------------------------------- known optima


@pytest.mark.parametrize("solver", LP_BACKENDS)
def test_textbook_max_lp_with_duals(solver):
    result = solve(wyndor(), solver)
    assert result.status == "optimal" and result.optimal
    assert result.solver == solver
    assert result.objective == pytest.approx(36)
    assert result.bound == pytest.approx(36) and result.gap == 0
    np.testing.assert_allclose(result.x, [2, 6], atol=1e-9)
    # one more unit of the second and third capacity is worth 1.5 and 1 (first not binding)
    np.testing.assert_allclose(result.row_duals, [0, 1.5, 1], atol=1e-9)
    np.testing.assert_allclose(result.col_duals, [0, 0], atol=1e-9)


@pytest.mark.parametrize("solver", LP_BACKENDS)
@pytest.mark.parametrize("sense", ["min", "max"])
def test_hand_computed_duals_and_reduced_costs(solver, sense):
    problem = blend(sense)
    sign = 1 if sense == "min" else -1
    result = solve(problem, solver)
    assert result.optimal
    assert result.objective == pytest.approx(sign * 7)
    np.testing.assert_allclose(result.x, [4, 0.5, 0.5, 0, 1], atol=1e-9)
    np.testing.assert_allclose(result.row_duals, sign * np.array([2.5, -1.5, -0.5]), atol=1e-9)
    np.testing.assert_allclose(result.col_duals, sign * np.array([0, 0, 0, 1.5, -2]), atol=1e-9)
    # the convention: reduced costs are c - A'y
    np.testing.assert_allclose(
        result.col_duals, problem.c - problem.A.T @ result.row_duals, atol=1e-9
    )


@pytest.mark.parametrize("solver", BACKENDS)
@pytest.mark.parametrize(
    ("sense", "objective", "x"), [("min", 3.5, [1.5, 0.5]), ("max", 8.0, [3.0, 2.0])]
)
def test_equality_ranged_and_free_rows(solver, sense, objective, x):
    # 2x + y over 2 <= x + y <= 5 (ranged), x - y = 1 (equality), x - 3y free.
    # With s = x + y, t = x - y the objective is (3s + t) / 2: duals 1.5 and 0.5 in both
    # senses (min: lower side of the range binds; max: upper side).
    problem = LinearProgram(
        c=[2, 1],
        A=sp.coo_array([[1, 1], [1, -1], [1, -3]]),
        row_lower=[2, 1, -INF],
        row_upper=[5, 1, INF],
        col_lower=[0, 0],
        col_upper=[INF, INF],
        sense=sense,
    )
    result = solve(problem, solver)
    assert result.optimal
    assert result.objective == pytest.approx(objective)
    np.testing.assert_allclose(result.x, x, atol=1e-9)
    np.testing.assert_allclose(result.row_duals, [1.5, 0.5, 0], atol=1e-9)


def test_ranged_row_becomes_two_pulp_constraints():
    problem = LinearProgram(
        c=[2, 1],
        A=sp.csr_array([[1, 1], [1, -1], [1, -3], [0, 1]]),
        row_lower=[2, 1, -INF, 0],
        row_upper=[5, 1, INF, INF],
        col_lower=[0, 0],
        col_upper=[INF, INF],
    )
    model = build_pulp_problem(problem)
    names = [c.name for c in model.constraints]
    assert sorted(names) == ["r0_lo", "r0_up", "r1", "r3"]
    assert model.constraint_rows.tolist() == [0, 0, 1, 3]
    senses = {c.name: c.sense for c in model.constraints}
    assert senses == {
        "r0_lo": pulp.LpConstraintGE,
        "r0_up": pulp.LpConstraintLE,
        "r1": pulp.LpConstraintEQ,
        "r3": pulp.LpConstraintGE,
    }
    assert len(model.variables) == 2


@pytest.mark.parametrize("solver", BACKENDS)
def test_offset_and_unused_variable(solver):
    # x2 appears in no row and has cost 0: it must still get a value within its bounds
    problem = LinearProgram(
        c=[1, 1, 0],
        A=sp.csr_array([[1, 1, 0]]),
        row_lower=[3],
        row_upper=[INF],
        col_lower=[0, 1, 2],
        col_upper=[INF, INF, 5],
        offset=10,
    )
    result = solve(problem, solver)
    assert result.objective == pytest.approx(13)
    assert result.x.shape == (3,) and 2 <= result.x[2] <= 5
    assert result.x[:2].sum() == pytest.approx(3)


@pytest.mark.parametrize("solver", BACKENDS)
def test_classic_knapsack(solver):
    # values 60, 100, 120; weights 10, 20, 30; capacity 50: take items 2 and 3, value 220
    problem = LinearProgram(
        c=[60, 100, 120],
        A=sp.csr_array([[10, 20, 30]]),
        row_lower=[-INF],
        row_upper=[50],
        col_lower=[0, 0, 0],
        col_upper=[1, 1, 1],
        integrality=np.ones(3, dtype=bool),
        sense="max",
    )
    result = solve(problem, solver)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(220)
    np.testing.assert_allclose(result.x, [0, 1, 1], atol=1e-6)
    assert result.bound == pytest.approx(220, abs=PROOF_ABS_GAP)
    assert result.gap <= PROOF_REL_GAP
    assert result.row_duals is None and result.col_duals is None


@pytest.mark.parametrize("solver", BACKENDS)
@pytest.mark.parametrize("seed", [3, 4])
def test_knapsack_against_enumeration(solver, seed):
    rng = np.random.default_rng(seed)
    n = 12
    weights = rng.integers(1, 30, size=(2, n)).astype(float)
    values = rng.integers(1, 50, size=n).astype(float)
    capacity = weights.sum(1) * 0.4
    choices = np.array(list(itertools.product([0, 1], repeat=n)), dtype=float)
    feasible = np.all(choices @ weights.T <= capacity, axis=1)
    best = (choices[feasible] @ values).max()
    problem = LinearProgram(
        c=values,
        A=sp.csr_array(weights),
        row_lower=[-INF, -INF],
        row_upper=capacity,
        col_lower=np.zeros(n),
        col_upper=np.ones(n),
        integrality=np.ones(n, dtype=bool),
        sense="max",
    )
    result = solve(problem, solver)
    assert result.optimal
    assert result.objective == pytest.approx(best)
    assert np.allclose(result.x, np.round(result.x), atol=1e-6)
    assert values @ np.round(result.x) == pytest.approx(best)


@pytest.mark.parametrize("solver", BACKENDS)
def test_infeasible_lp(solver):
    problem = LinearProgram(
        c=[1, 1],
        A=sp.csr_array([[1, 1], [1, 1]]),
        row_lower=[3, -INF],
        row_upper=[INF, 2],
        col_lower=[0, 0],
        col_upper=[INF, INF],
    )
    result = solve(problem, solver)
    assert result.status == "infeasible" and not result.optimal
    assert result.x is None and result.objective is None and result.bound is None
    assert not result.has_solution
    with pytest.raises(SolverError, match="infeasible"):
        result.require_solution()


@pytest.mark.parametrize("solver", BACKENDS)
def test_unbounded_lp(solver):
    problem = LinearProgram(
        c=[-1, -1],
        A=sp.csr_array([[1, -1]]),
        row_lower=[-INF],
        row_upper=[1],
        col_lower=[0, 0],
        col_upper=[INF, INF],
    )
    result = solve(problem, solver)
    assert result.status == "unbounded" and not result.optimal
    assert result.objective is None and result.x is None


@pytest.mark.parametrize("solver", BACKENDS)
@pytest.mark.parametrize(("lower", "status"), [(-1.0, "optimal"), (1.0, "infeasible")])
def test_empty_row(solver, lower, status):
    problem = LinearProgram(
        c=[1.0],
        A=sp.csr_array((2, 1)),
        row_lower=[lower, -INF],
        row_upper=[2.0, INF],
        col_lower=[1.0],
        col_upper=[2.0],
    )
    assert solve(problem, solver).status == status


# --------------------------------------------------------------------- limits and statuses


def check_limited(result, problem):
    """What a time-limited MIP solve may report: a real proof, or an honest partial answer."""
    assert result.status in ("optimal", "feasible", "no_solution")
    if result.status == "optimal":  # a machine fast enough to prove it: a real proof
        assert result.optimal and result.gap <= PROOF_REL_GAP
        return
    assert not result.optimal
    if result.status == "no_solution":
        assert result.x is None and result.gap is None
        return
    x = result.x
    assert np.all(problem.A @ x <= problem.row_upper + 1e-6)
    assert np.allclose(x, np.round(x), atol=1e-6)
    assert result.objective == pytest.approx(problem.c @ x)
    if result.solver == "highs":
        assert result.bound >= result.objective - 1e-9  # a max problem: bound from above
        assert result.gap == pytest.approx(relative_gap(result.objective, result.bound))
        assert result.gap > PROOF_REL_GAP
    else:  # PuLP's solvers give no dual bound: nothing is invented
        assert result.bound is None and result.gap is None


@pytest.mark.parametrize("solver", BACKENDS)
def test_time_limited_mip_is_never_labelled_optimal(solver):
    problem = hard_knapsack()
    check_limited(solve(problem, solver, time_limit=0.05), problem)


@pytest.mark.parametrize("solver", BACKENDS)
def test_gap_target_stop_is_feasible_not_optimal(solver):
    problem = hard_knapsack()
    result = solve(problem, solver, mip_gap=0.05, time_limit=5)
    assert result.status == "feasible" and not result.optimal
    assert result.x is not None
    if solver == "highs":
        assert 0 < result.gap <= 0.05
        assert "gap" in result.message
    else:
        assert result.gap is None and result.bound is None


def test_highs_model_time_limit_can_be_set_and_removed():
    problem = hard_knapsack()
    model = HighsModel(problem)
    model.set_time_limit(0.05)
    check_limited(model.solve(), problem)
    model.set_time_limit(None)
    with pytest.raises(InputError, match="time_limit"):
        model.set_time_limit(-1)


@pytest.mark.parametrize(
    ("status", "sol_status", "is_mip", "gap", "expected"),
    [
        # PuLP 3.3 + CBC, MIP stopped on time with an incumbent: status says "Optimal"
        (pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible, True, 0.0, "feasible"),
        (pulp.LpStatusNotSolved, pulp.LpSolutionIntegerFeasible, True, 0.0, "feasible"),
        (pulp.LpStatusOptimal, pulp.LpSolutionOptimal, True, 0.0, "optimal"),
        (pulp.LpStatusOptimal, pulp.LpSolutionOptimal, False, 0.0, "optimal"),
        # stopped at a requested gap: cannot be told from a proof
        (pulp.LpStatusOptimal, pulp.LpSolutionOptimal, True, 0.01, "feasible"),
        (pulp.LpStatusOptimal, pulp.LpSolutionOptimal, False, 0.01, "optimal"),
        (pulp.LpStatusOptimal, pulp.LpSolutionNoSolutionFound, True, 0.0, "no_solution"),
        (pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound, True, 0.0, "no_solution"),
        # PuLP maps an unset sol_status of NotSolved to "Infeasible": still no solution
        (pulp.LpStatusNotSolved, pulp.LpSolutionInfeasible, False, 0.0, "no_solution"),
        (pulp.LpStatusInfeasible, pulp.LpSolutionInfeasible, False, 0.0, "infeasible"),
        (pulp.LpStatusInfeasible, pulp.LpSolutionNoSolutionFound, True, 0.0, "infeasible"),
        (pulp.LpStatusUnbounded, pulp.LpSolutionUnbounded, False, 0.0, "unbounded"),
        (pulp.LpStatusUndefined, pulp.LpSolutionNoSolutionFound, False, 0.0, "error"),
    ],
)
def test_pulp_status_mapping(status, sol_status, is_mip, gap, expected):
    assert pulp_status(status, sol_status, is_mip=is_mip, gap_target=gap) == expected


S = highspy.HighsModelStatus


@pytest.mark.parametrize(
    ("model_status", "has_solution", "is_mip", "objective", "bound", "expected"),
    [
        (S.kOptimal, True, False, None, None, "optimal"),
        (S.kOptimal, True, True, 100.0, 100.0 + 0.5 * PROOF_ABS_GAP, "optimal"),
        (S.kOptimal, True, True, 1e9, 1e9 * (1 + 0.5 * PROOF_REL_GAP), "optimal"),
        (S.kOptimal, True, True, 100.0, 101.0, "feasible"),  # stopped at a gap target
        (S.kTimeLimit, True, True, 100.0, 120.0, "feasible"),
        (S.kTimeLimit, False, True, None, 120.0, "no_solution"),
        (S.kIterationLimit, True, False, None, None, "feasible"),
        (S.kInterrupt, False, False, None, None, "no_solution"),
        (S.kInfeasible, False, False, None, None, "infeasible"),
        (S.kUnbounded, False, False, None, None, "unbounded"),
        (S.kUnboundedOrInfeasible, False, True, None, None, "infeasible_or_unbounded"),
        (S.kUnknown, True, False, None, None, "feasible"),
        (S.kUnknown, False, False, None, None, "error"),
        (S.kSolveError, False, False, None, None, "error"),
    ],
)
def test_highs_status_mapping(model_status, has_solution, is_mip, objective, bound, expected):
    got = highs_status(
        model_status, has_solution=has_solution, is_mip=is_mip, objective=objective, bound=bound
    )
    assert got == expected and got in STATUSES


# ------------------------------------------------------------------ HighsModel re-solving


@st.composite
def bounded_lps(draw):
    """A feasible LP with a box on every variable: A x <= A x0 + slack for some x0 in the box."""
    n = draw(st.integers(2, 6))
    m = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.integers(-5, 6, size=(m, n)).astype(float)
    lower = rng.integers(-3, 1, size=n).astype(float)
    upper = lower + rng.integers(1, 5, size=n)
    x0 = rng.integers(lower, upper + 1)  # an integer point: the MIP variant is feasible too
    b = A @ x0 + rng.uniform(0, 2, size=m)
    costs = rng.integers(-5, 6, size=(2, n)).astype(float)
    return A, b, lower, upper, costs, draw(st.sampled_from(["min", "max"]))


def box_lp(A, b, lower, upper, c, sense="min", integrality=None):
    return LinearProgram(
        c=c,
        A=sp.csr_array(A),
        row_lower=np.full(len(b), -INF),
        row_upper=b,
        col_lower=lower,
        col_upper=upper,
        integrality=integrality,
        sense=sense,
    )


@MS
@given(bounded_lps())
def test_warm_resolve_after_set_objective_matches_fresh_and_linprog(case):
    A, b, lower, upper, (c1, c2), sense = case
    model = HighsModel(box_lp(A, b, lower, upper, c1))
    assert model.solve().optimal
    model.set_objective(c2, sense=sense, offset=1.5)
    warm = model.solve()
    fresh = solve(box_lp(A, b, lower, upper, c2, sense))
    sign = 1 if sense == "min" else -1
    reference = linprog(
        sign * c2,
        A_ub=A,
        b_ub=b,
        bounds=list(zip(lower, upper, strict=True)),
        method="highs-ipm",
    )
    assert reference.status == 0 and warm.optimal and fresh.optimal
    assert warm.objective == pytest.approx(fresh.objective + 1.5, abs=1e-7)
    assert fresh.objective == pytest.approx(sign * reference.fun, abs=1e-6)
    assert c2 @ warm.x + 1.5 == pytest.approx(warm.objective, abs=1e-7)


@MS
@given(bounded_lps(), st.booleans())
def test_add_rows_then_resolve_matches_fresh_solve(case, integer):
    A, b, lower, upper, (c, cut_direction), sense = case
    integrality = np.ones(len(c), dtype=bool) if integer else None
    rng = np.random.default_rng(int(abs(c).sum() * 7 + len(b)))
    model = HighsModel(box_lp(A, b, lower, upper, c, sense, integrality))
    first = model.solve()
    assert first.optimal
    # cuts: rows through the current optimum pushed by a margin, so they bind or cut it off
    cuts = np.vstack([cut_direction, rng.integers(-3, 4, size=len(c))]).astype(float)
    cut_upper = cuts @ first.x - 0.5
    model.add_rows(sp.csr_array(cuts), -INF, cut_upper)
    assert model.n_rows == len(b) + 2
    warm = model.solve()
    fresh = solve(
        box_lp(
            np.vstack([A, cuts]),
            np.concatenate([b, cut_upper]),
            lower,
            upper,
            c,
            sense,
            integrality,
        )
    )
    assert warm.status == fresh.status
    if fresh.optimal:
        assert warm.objective == pytest.approx(fresh.objective, abs=1e-6)


def test_bound_changes_then_resolve():
    model = HighsModel(wyndor())
    model.set_row_bounds([0], -INF, 1)  # x <= 1: y = 6, value 3 + 30
    assert model.solve().objective == pytest.approx(33)
    model.set_col_bounds(np.array([1]), 0, 5)  # y <= 5: value 3 + 25
    result = model.solve()
    assert result.objective == pytest.approx(28)
    np.testing.assert_allclose(result.x, [1, 5], atol=1e-9)
    fresh = solve(
        LinearProgram(
            c=[3, 5],
            A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
            row_lower=[-INF] * 3,
            row_upper=[1, 12, 18],
            col_lower=[0, 0],
            col_upper=[INF, 5],
            sense="max",
        )
    )
    assert fresh.objective == pytest.approx(result.objective)
    np.testing.assert_allclose(fresh.row_duals, result.row_duals, atol=1e-9)


def test_mip_resolve_after_set_objective():
    problem = hard_knapsack(n=14, m=2, seed=7)
    model = HighsModel(problem)
    assert model.solve().optimal
    c2 = problem.c[::-1].copy()
    model.set_objective(c2)
    warm = model.solve()
    fresh = solve(dataclasses.replace(problem, c=c2))
    assert warm.optimal and fresh.optimal
    assert warm.objective == pytest.approx(fresh.objective)


def test_highs_model_update_errors():
    model = HighsModel(wyndor())
    assert (model.n_rows, model.n_cols) == (3, 2)
    with pytest.raises(InputError, match=r"c has shape \(3,\)"):
        model.set_objective(np.ones(3))
    with pytest.raises(InputError, match="sense"):
        model.set_objective(np.ones(2), sense="maximise")
    with pytest.raises(InputError, match="col index 2 is outside"):
        model.set_col_bounds([2], 0, 1)
    with pytest.raises(InputError, match="row index 1 is repeated"):
        model.set_row_bounds([1, 1], 0, [1, 2])
    with pytest.raises(InputError, match=r"col_lower\[0\] = 3.0 exceeds col_upper\[0\]"):
        model.set_col_bounds([0], 3, 2)
    with pytest.raises(InputError, match=r"A_rows has shape \(1, 3\)"):
        model.add_rows(sp.csr_array([[1, 1, 1]]), 0, 1)
    with pytest.raises(InputError, match=r"upper has shape \(2,\)"):
        model.add_rows(sp.csr_array([[1, 1]]), 0, [1, 2])


# ----------------------------------------------------------------------------- validation


def test_shape_mismatch_names_the_array():
    base = dict(
        c=[1, 1],
        A=sp.csr_array([[1, 1]]),
        row_lower=[0],
        row_upper=[1],
        col_lower=[0, 0],
        col_upper=[1, 1],
    )
    for name, bad, pattern in [
        ("c", [1, 1, 1], r"c has shape \(3,\), expected \(2,\) \(A has 2 columns\)"),
        ("row_lower", [0, 0], r"row_lower has shape \(2,\), expected \(1,\) \(A has 1 rows\)"),
        ("col_upper", [[1, 1]], r"col_upper has shape \(1, 2\)"),
        ("integrality", [True], r"integrality has shape \(1,\)"),
        ("integrality", [1, 0], "integrality must be boolean"),
        ("col_lower", [0, 2], r"col_lower\[1\] = 2.0 exceeds col_upper\[1\] = 1.0"),
        ("row_upper", [np.nan], r"row_upper is NaN at index 0"),
        ("col_lower", [0, INF], r"col_lower\[1\] = inf is not a valid bound"),
        ("c", [1, INF], r"c\[1\] = inf is not finite"),
        ("A", sp.csr_array([[1, np.inf]]), r"A\[0, 1\] = inf is not finite"),
        ("A", np.ones(3), r"A has shape \(3,\)"),
        ("A", sp.csr_array((1, 0)), "no columns"),
        ("sense", "maximum", "sense must be"),
    ]:
        with pytest.raises(InputError, match=pattern):
            LinearProgram(**{**base, name: bad})


def test_inputs_are_copied_and_never_modified():
    c = np.array([1.0, 2.0])
    A = sp.coo_array(([1.0, 2.0, 0.0], ([0, 0, 0], [0, 0, 1])), shape=(1, 2))  # duplicate
    problem = LinearProgram(c, A, [0], [5], [0, 0], [1, 1])
    c[0] = 99
    assert problem.c[0] == 1
    assert A.nnz == 3  # the caller's matrix keeps its duplicate and zero
    assert problem.A.nnz == 1 and problem.A[0, 0] == 3
    with pytest.raises(ValueError):
        problem.c[1] = 5
    assert (problem.n_rows, problem.n_cols, problem.is_mip) == (1, 2, False)


def test_options_are_validated():
    for kwargs, pattern in [
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": "5"}, "time_limit"),
        ({"mip_gap": -0.1}, "mip_gap"),
        ({"threads": 0}, "threads"),
        ({"threads": 1.5}, "threads"),
    ]:
        with pytest.raises(InputError, match=pattern):
            solve(wyndor(), **kwargs)
    with pytest.raises(InputError, match="LinearProgram"):
        solve({"c": [1]})


def test_unknown_and_unavailable_solvers():
    assert available_solvers()[0] == "highs"
    assert "cbc" in available_solvers()
    with pytest.raises(InputError, match=r"unknown solver 'simplex'; choose one of highs, cbc"):
        solve(wyndor(), "simplex")
    missing = [name for name in ("gurobi", "cplex") if name not in available_solvers()]
    if missing:
        with pytest.raises(SolverError, match=f"'{missing[0]}' is not available"):
            solve(wyndor(), missing[0])


@pytest.mark.parametrize("solver", BACKENDS)
def test_threads_option_and_silence(solver, capfd):
    result = solve(hard_knapsack(n=10, m=2), solver, threads=1)
    assert result.optimal
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert solve(wyndor(), solver).optimal  # threads left to the solver afterwards


def test_verbose_prints_the_solver_log(capfd):
    solve(wyndor(), "highs", verbose=True)
    assert "HiGHS" in capfd.readouterr().out


# -------------------------------------------------------------------------- result object


def test_result_rendering():
    result = solve(blend())
    text = result.summary()
    assert "highs: optimal" in text and "objective   7.0" in text
    frame = result.to_frame()
    assert list(frame.columns) == ["x", "reduced_cost"] and len(frame) == 5
    np.testing.assert_allclose(frame["reduced_cost"], [0, 0, 0, 1.5, -2], atol=1e-9)
    section = result.to_report()
    assert section.title == "Solve (highs)"
    empty = SolveResult("infeasible", False, None, None, None, None, None, None, 0.1, "cbc", "x")
    assert empty.to_frame().empty
    with pytest.raises(ValueError, match="contradicts"):
        SolveResult("feasible", True, 1.0, None, None, None, None, None, 0.1, "cbc", "x")
    with pytest.raises(ValueError, match="not one of"):
        SolveResult("done", False, 1.0, None, None, None, None, None, 0.1, "cbc", "x")


def market_split(m: int = 5, n: int = 40, seed: int = 1) -> LinearProgram:
    """A market split MILP (G. Cornuejols and M. Dawande, *A class of hard small 0-1
    programs*, INFORMS Journal on Computing 11(2), 1999): ``min |slack|`` over
    ``A x + s - t = floor(A 1 / 2)``, x binary; branch and bound needs far more than a
    second at this size."""
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 100, (m, n)).astype(float)
    b = np.floor(A.sum(axis=1) / 2)
    slack = np.kron(np.eye(m), [1.0, -1.0])
    return LinearProgram(c=np.concatenate([np.zeros(n), np.ones(2 * m)]),
                         A=sp.csr_array(np.hstack([A, slack])), row_lower=b, row_upper=b,
                         col_lower=np.zeros(n + 2 * m),
                         col_upper=np.concatenate([np.ones(n), np.full(2 * m, np.inf)]),
                         integrality=np.arange(n + 2 * m) < n)


def test_kept_mip_time_limit_counts_from_each_solve():
    """Every solve of a kept MILP stops near its own limit: the object's earlier run time
    does not lengthen it (had it been added, as HiGHS 1.16 needs for LPs only, the six
    solves would have run 0.2, 0.4, ..., 6.4 s)."""
    model = HighsModel(market_split(), time_limit=0.2)
    for k in range(6):
        before = model._highs.getRunTime()
        model.set_objective(np.concatenate([np.full(40, 1e-3 * k), np.ones(10)]))
        assert model.solve().status in ("feasible", "no_solution")  # stopped by the limit
        assert model._highs.getRunTime() - before < 1.5


def test_kept_lp_time_limit_counts_from_each_solve():
    """A kept LP re-solved until its solves together take several times its limit is
    still solved every time: where HiGHS counts the object's earlier runs against
    ``time_limit`` (LPs, in HiGHS 1.16), they are added to the limit."""
    rng = np.random.default_rng(0)
    m, n = 100, 200
    lp = LinearProgram(c=-rng.random(n), A=sp.csr_array(rng.random((m, n))),
                       row_lower=np.full(m, -np.inf), row_upper=np.full(m, 10.0),
                       col_lower=np.zeros(n), col_upper=np.ones(n))
    model = HighsModel(lp, time_limit=0.2)
    solves = 0
    while model._highs.getRunTime() < 0.6 and solves < 5_000:
        model.set_objective(-rng.random(n))
        assert model.solve().optimal
        solves += 1
    assert model._highs.getRunTime() >= 0.6


def start_misreport_program():
    """A MILP on which HiGHS 1.16 with presolve, given a start, returns the start with a
    wrong objective and bound (tests/data/solver/README.md), and that start."""
    saved = np.load(DATA / "solver" / "highs_start_misreport.npz")
    A = sp.csr_array((saved["data"], saved["indices"], saved["indptr"]),
                     shape=tuple(saved["shape"]))
    program = LinearProgram(c=saved["c"], A=A, row_lower=saved["row_lower"],
                            row_upper=saved["row_upper"], col_lower=saved["col_lower"],
                            col_upper=saved["col_upper"], offset=float(saved["offset"]),
                            integrality=np.ones(len(saved["c"]), dtype=bool))
    return program, saved["start"]


@pytest.mark.parametrize("time_limit", [None, 30.0])
def test_a_start_never_yields_a_wrong_optimum(time_limit):
    program, start = start_misreport_program()
    assert program.c @ start + program.offset == 44.0
    result = solve(program, start=start, time_limit=time_limit)
    assert result.optimal and result.objective == pytest.approx(42.0)
    assert result.bound == pytest.approx(42.0)
    assert program.c @ result.x + program.offset == pytest.approx(42.0)
    model = HighsModel(program)
    model.set_start(start)
    again = model.solve()
    assert again.optimal and again.objective == pytest.approx(42.0)


def test_column_extremes_ask_the_callers_time_left_before_every_solve():
    # x0 + x1 + x2 = 6 within [0, 4] each: every column ranges over [0, 4]; a deadline's
    # time left is asked for the feasibility run and for each of the six bounds, and a
    # model without it gives the same intervals (linprog agrees)
    lp = LinearProgram(c=np.zeros(3), A=sp.csr_array([[1.0, 1, 1]]), row_lower=[6.0],
                       row_upper=[6.0], col_lower=np.zeros(3), col_upper=np.full(3, 4.0))
    asked = []
    lower, upper, status = HighsModel(lp, time_limit=60).column_extremes(
        time_left=lambda: asked.append(1) or 5.0)
    assert len(asked) == 1 + 2 * 3 and status.tolist() == ["optimal"] * 3
    plain = HighsModel(lp).column_extremes()
    assert lower.tolist() == plain[0].tolist() and upper.tolist() == plain[1].tolist()
    ends = [linprog(np.eye(3)[j] * sign, A_eq=[[1, 1, 1]], b_eq=[6], bounds=[(0, 4)] * 3,
                    method="highs").fun * sign for j in range(3) for sign in (1, -1)]
    assert ends == [0.0, 4.0] * 3 and lower.tolist() == [0.0] * 3 and upper.tolist() == [4.0] * 3
