"""The closest additive rounding: fewest extra steps, then least deviation, by phases, within
one time limit for the whole call."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from scipy.optimize import Bounds, LinearConstraint, milp

import tabsdc._progress as progress
import tabsdc.rounding._closest as closest_module
import tabsdc.rounding._controlled as controlled_module
from tabsdc._errors import SolverError
from tabsdc.rounding import controlled_rounding, round_table
from tabsdc.rounding._closest import closest_additive_rounding
from tabsdc.rounding._rules import decompose
from tabsdc.solver import SolveResult

from .test_rounding import bases, cubes, parity_cube


def lexicographic_by_weight(table, base, max_steps=2):
    """(extra steps, total |deviation|) of the closest rounding, from one weighted MILP
    solved by scipy: weight ``n B (L + 1) + 1`` per step ranks the steps first."""
    q, r = decompose(table.values, base)
    n = len(q)
    weight = n * base * (max_steps + 1) + 1.0
    c = np.concatenate([base - 2 * r, np.full(2 * n, weight + base)])
    A = sp.hstack([table.A, table.A, -table.A]).toarray()
    rhs = table.b / base - table.A @ q
    upper = np.concatenate([(r > 0).astype(float), np.full(2 * n, float(max_steps))])
    result = milp(c, constraints=LinearConstraint(A, rhs, rhs), integrality=np.ones(3 * n),
                  bounds=Bounds(0, upper))
    if result.status != 0:
        return None
    z, up, down = np.round(result.x).reshape(3, n)
    rounded = base * (q + z + up - down)
    steps = np.maximum(0, np.maximum(rounded - base * (q + (r > 0)), base * q - rounded))
    return int(steps.sum() / base), float(np.abs(rounded - table.values).sum())


@settings(max_examples=25)
@given(cubes(), bases)
def test_phases_agree_with_one_weighted_milp(table, base):
    q, r = decompose(table.values, base)
    reference = lexicographic_by_weight(table, base)
    if reference is None:
        return
    closest = closest_additive_rounding(table, base, q, r)
    rounded = base * closest.multiples
    np.testing.assert_array_equal(table.A @ rounded, table.b)
    assert closest.proven
    assert int(closest.steps.sum()) == reference[0]
    assert np.abs(rounded - table.values).sum() == pytest.approx(reference[1], abs=1e-6)
    assert closest.deviation.objective == pytest.approx(reference[1], abs=1e-6)


def test_parity_cube_certificates():
    table = parity_cube()
    outcome = controlled_rounding(table, 2)
    assert outcome.status == "relaxed" and outcome.steps_bound == 1
    assert int(outcome.steps.sum()) == 1
    assert outcome.solve.objective == pytest.approx(np.abs(outcome.rounded - table.values).sum())
    assert outcome.solve.gap == pytest.approx(0.0)
    result = round_table(table, 2, "controlled", audit=False)
    assert result.steps_bound == 1 and result.to_dict()["steps_bound"] == 1


def test_time_limit_covers_the_whole_call(monkeypatch):
    """Every solve uses all the time it is given (a clock that the solves advance); the
    call still ends within its limit, and an exact MILP stopped undecided leads to the
    closest alternative (before: each solve got the whole limit, and an undecided MILP
    raised)."""
    clock = [0.0]
    given_limits = []
    real_solve = closest_module.solve

    def undecided(problem, solver="highs", **options):
        given_limits.append(options["time_limit"])
        clock[0] += options["time_limit"]
        return SolveResult.without_solution("no_solution", options["time_limit"], solver,
                                            "time limit reached")

    def slow(problem, solver="highs", **options):
        # the call's limit: its time limit, or what is left of the deadline (within)
        limit = min(options[key] for key in ("time_limit", "within")
                    if options.get(key) is not None)
        given_limits.append(limit)
        result = real_solve(problem, solver, **options)
        clock[0] += limit
        return result

    monkeypatch.setattr(controlled_module.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(progress, "perf_counter", lambda: clock[0])  # the deadlines' clock
    monkeypatch.setattr(controlled_module, "solve", undecided)
    monkeypatch.setattr(closest_module, "solve", slow)
    outcome = controlled_rounding(parity_cube(), 2, time_limit=8.0)
    assert len(given_limits) == 3   # the exact MILP, then the two phases
    assert clock[0] <= 8.0
    assert "was not decided" in outcome.note and int(outcome.steps.sum()) == 1


def test_no_second_phase_after_a_first_that_overran(monkeypatch):
    """A first phase that ran past the whole limit leaves no time: its rounding is the
    answer, with the steps phase as the solver's report."""
    clock = [0.0]
    phases = []
    real_solve = closest_module.solve

    def overrunning(problem, solver="highs", **options):
        phases.append(options["time_limit"])
        result = real_solve(problem, solver, **options)
        clock[0] += 2 * options["time_limit"]
        return result

    monkeypatch.setattr(progress, "perf_counter", lambda: clock[0])  # the deadlines' clock
    monkeypatch.setattr(closest_module, "solve", overrunning)
    table = parity_cube()
    q, r = decompose(table.values, 2)
    closest = closest_additive_rounding(table, 2, q, r, time_limit=5.0)
    assert len(phases) == 1 and closest.deviation is None
    assert int(closest.steps.sum()) == 1 and closest.steps_proven
    np.testing.assert_array_equal(table.A @ (2 * closest.multiples), table.b)


def _overrunning_solves(monkeypatch) -> list[float]:
    """Make every MILP of controlled rounding run three times its time limit on a fake
    clock and return nothing; the list of the limits it was given."""
    clock = [0.0]
    calls = []

    def overrunning(problem, solver="highs", **options):
        calls.append(options["time_limit"])
        clock[0] += 3 * options["time_limit"]
        return SolveResult.without_solution("no_solution", clock[0], solver,
                                            "time limit reached")

    monkeypatch.setattr(controlled_module.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(progress, "perf_counter", lambda: clock[0])  # the deadlines' clock
    monkeypatch.setattr(controlled_module, "solve", overrunning)
    monkeypatch.setattr(closest_module, "solve", overrunning)
    return calls


def test_after_an_exact_milp_that_overran_the_tabu_rounding_is_the_answer(monkeypatch):
    """No time is left after the exact MILP: the balanced rounding the tabu search starts
    from is returned as it is (no further MILP), additive, with its steps."""
    calls = _overrunning_solves(monkeypatch)
    table = parity_cube()
    outcome = controlled_rounding(table, 2, time_limit=8.0)
    assert calls == [4.0]
    assert outcome.status == "relaxed-feasible" and int(outcome.steps.sum()) >= 1
    assert outcome.steps_bound == 0 and "found by the tabu search" in outcome.note
    np.testing.assert_array_equal(table.A @ outcome.rounded, table.b)


def test_no_alternative_started_after_an_exact_milp_that_overran(monkeypatch):
    """Without a rounding of the tabu search (relations it cannot solve), an exact MILP
    that used the whole time leaves no answer: said so."""
    calls = _overrunning_solves(monkeypatch)
    monkeypatch.setattr(controlled_module, "heuristic_rounding", lambda *a, **k: None)
    with pytest.raises(SolverError, match="used the whole time limit"):
        controlled_rounding(parity_cube(), 2, time_limit=8.0)
    assert calls == [4.0]
