"""A HiGHS MILP with a time limit returns within it, whatever HiGHS does."""

import numpy as np
import pytest

from tabsdc.solver import LinearProgram, SolveOptions, isolated, solve


def knapsack(n: int = 30) -> LinearProgram:
    rng = np.random.default_rng(4)
    weights = rng.integers(10, 100, n).astype(float)
    return LinearProgram(c=-rng.integers(10, 100, n).astype(float), A=weights[None, :],
                         row_lower=[-np.inf], row_upper=[weights.sum() / 2],
                         col_lower=np.zeros(n), col_upper=np.ones(n),
                         integrality=np.ones(n, dtype=bool))


def test_a_time_limited_milp_is_solved_in_a_child_with_the_same_answer():
    problem = knapsack()
    plain = solve(problem)  # no time limit: in this process
    limited = solve(problem, time_limit=30)
    assert limited.status == plain.status == "optimal"
    assert limited.objective == pytest.approx(plain.objective)
    np.testing.assert_array_equal(limited.x, plain.x)


def test_a_worker_that_does_not_answer_in_time_is_stopped_and_replaced(monkeypatch):
    problem = knapsack()
    solve(problem, time_limit=30)  # a worker is running
    stopped = isolated._worker().process
    monkeypatch.setattr(isolated, "_answer", lambda process, seconds: None)  # never answers
    result = solve(problem, time_limit=1)
    assert result.status == "no_solution" and not result.optimal and result.x is None
    assert "did not return within its time limit of 1 s" in result.message
    assert stopped.poll() is not None  # ended
    monkeypatch.undo()
    assert solve(problem, time_limit=30).status == "optimal"  # by a new worker
    assert isolated._worker().process is not stopped


def test_within_caps_the_wait_and_a_submitted_solve_gives_the_same_answer(monkeypatch):
    problem = knapsack()
    plain = solve(problem)
    future = isolated.submit_isolated(problem, SolveOptions(time_limit=30.0), within=60.0)
    answer = future.result()
    assert answer.status == "optimal" and answer.objective == pytest.approx(plain.objective)
    waits = []

    def never(process, seconds):
        waits.append(seconds)
        return None

    monkeypatch.setattr(isolated, "_answer", never)
    result = isolated.solve_isolated(problem, SolveOptions(time_limit=300.0), within=4.0)
    assert result.status == "no_solution" and result.x is None
    assert len(waits) == 1 and 0 < waits[0] <= 4.0  # not the 300 s limit and its grace
