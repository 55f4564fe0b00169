"""A HiGHS MILP with a time limit returns within it, whatever HiGHS does; solves from
several threads each have a worker of their own; a worker never outlives its caller."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import tabsdc.solver._isolated as isolated
from tabsdc.solver import LinearProgram, SolveOptions, solve
from tests.tabsdc.test_interrupts import hard_milp

ROOT = Path(__file__).resolve().parents[2]


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
    solve(problem, time_limit=30)  # a worker is running, idle
    stopped = isolated._pool().idle[-1].process
    monkeypatch.setattr(isolated, "_answer", lambda process, seconds: None)  # never answers
    result = solve(problem, time_limit=1)
    assert result.status == "no_solution" and not result.optimal and result.x is None
    assert "did not return within its time limit of 1 s" in result.message
    assert stopped.poll() is not None  # ended
    monkeypatch.undo()
    assert solve(problem, time_limit=30).status == "optimal"  # by a new worker
    assert all(worker.process is not stopped for worker in isolated._pool().workers)


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


def test_solves_from_several_threads_each_have_a_worker_and_their_whole_time(monkeypatch):
    real = isolated._answer
    served = []

    def answer(process, seconds):
        served.append(process.pid)
        return real(process, seconds)

    monkeypatch.setattr(isolated, "_answer", answer)
    milp, results = hard_milp(), {}

    def solve_one(k: int) -> None:  # 3 s of a MILP HiGHS does not finish in a minute
        results[k] = isolated.solve_isolated(milp, SolveOptions(time_limit=3.0), within=20.0)

    threads = [threading.Thread(target=solve_one, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(served)) == 3  # one worker each: none waited for another's solve
    for result in results.values():
        assert result.status == "feasible" and result.x is not None
        assert result.message == "Time limit reached"  # HiGHS's own limit: 3 s each
        assert np.all(milp.A @ result.x <= milp.row_upper + 1e-6)


_CALLER = """
from tabsdc.solver import SolveOptions
import tabsdc.solver._isolated as isolated
from tests.tabsdc.test_interrupts import hard_milp
isolated.solve_isolated(hard_milp(), SolveOptions(time_limit=600.0))
"""


def running(pid: int) -> bool:
    """Process ``pid`` exists and has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def cpu_seconds(pid: int) -> float:
    """CPU seconds process ``pid`` has used (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workers_of(parent: int) -> list[int]:
    """The solver's worker processes started by process ``parent`` (Linux: from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rpartition(")")[2].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"tabsdc.solver._isolated" in command:
            found.append(int(stat.parent.name))
    return found


def wait_for(condition, seconds: float) -> bool:
    """Whether ``condition()`` comes true within ``seconds`` (polled every 0.1 s)."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_worker_ends_when_its_caller_is_killed():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    caller = subprocess.Popen([sys.executable, "-c", _CALLER], env=env, cwd=ROOT)
    try:
        assert wait_for(lambda: workers_of(caller.pid), 60.0)
        worker = workers_of(caller.pid)[0]
        # the worker is solving the 600 s MILP: beyond its imports' second or two of CPU
        assert wait_for(lambda: cpu_seconds(worker) > 5.0, 120.0)
    finally:
        caller.kill()  # SIGKILL: the caller can do nothing about its worker
        caller.wait()
    assert wait_for(lambda: not running(worker), 20.0)
