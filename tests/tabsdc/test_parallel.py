"""Parallel and distributed execution: identical answers with one process, a pool and Dask."""

import os
import time
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest

import tabsdc._interrupts as interrupts
from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._bounds import capacities
from tabsdc._errors import InputError
from tabsdc._parallel import ParallelError, alongside, parallel_map, resolve_jobs
from tabsdc._progress import Deadline
from tabsdc.audit import audit
from tabsdc.suppression import SuppressionResult, suppress
from tabsdc.suppression._attacker import Attacker, requirements
from tabsdc.suppression._checks import failing_requirements
from tabsdc.suppression._problem import (
    MethodOptions,
    certified_bound_alongside,
    suppression_problem,
)


def square(x: int) -> int:
    return x * x


def die(x: int) -> int:
    os._exit(3)


def process_and_session(x: int) -> tuple[int, int, int]:
    return os.getpid(), os.getsid(0), x


def run_until_stopped(seconds: float) -> float:
    """Wait as a search does, until its deadline expires; the seconds waited."""
    deadline = Deadline(seconds)
    while not deadline.expired:
        time.sleep(0.05)
    return deadline.elapsed()


class ArrivesLate(float):
    """Seconds for :func:`run_until_stopped` whose unpickling in the task's process takes a
    second: that process starts listening for Ctrl-C only after it."""

    def __reduce__(self):
        return _arrive_late, (float(self),)


def _arrive_late(seconds: float) -> float:
    time.sleep(1.0)
    return seconds


def small_hierarchical_table(seed: int = 4) -> Table:
    """A 3-D table (one two-level hierarchy) of a few hundred cells with p% primaries."""
    rng = np.random.default_rng(seed)
    n = 400
    a1 = rng.integers(0, 3, n)
    a2 = rng.integers(0, 3, n)
    data = pd.DataFrame({
        "a1": np.char.add("A", a1.astype(str)),
        "a2": np.char.add(np.char.add("A", a1.astype(str)), a2.astype(str)),
        "g": np.char.add("G", rng.integers(0, 4, n).astype(str)),
        "s": np.char.add("S", rng.integers(0, 3, n).astype(str)),
        "v": np.round(rng.pareto(1.3, n) * 100 + 1, 2),
    })
    hierarchies = {"a2": Hierarchy.from_levels(data[["a1", "a2"]].drop_duplicates())}
    table = Table.from_microdata(data, ["a2", "g", "s"], "v", hierarchies=hierarchies, top=2)
    return apply_rules(table, [PPercentRule(15), FrequencyRule(3)]).table


@lru_cache
def small_table_run(seed: int, method: str) -> tuple[SuppressionResult, tuple[str, ...]]:
    """``suppress(small_hierarchical_table(seed), method)`` with the defaults and its progress
    lines, once a test session: several test modules examine the same patterns, and each run
    costs seconds (most of it the lower bound). Callers read the result and never change it
    in place."""
    lines: list[str] = []
    result = suppress(small_hierarchical_table(seed), method, progress=lines.append)
    return result, tuple(lines)


def suppressed_small_table(seed: int, method: str) -> SuppressionResult:
    """The result of :func:`small_table_run`."""
    return small_table_run(seed, method)[0]


def test_results_come_back_in_task_order():
    tasks = list(range(-5, 6))
    assert parallel_map(square, tasks) == parallel_map(square, tasks, n_jobs=2) == \
        [x * x for x in tasks]
    assert parallel_map(square, []) == []


@pytest.mark.parametrize("options", [{"n_jobs": 1}, {"n_jobs": 2},
                                     {"n_jobs": 2, "fresh_workers": True}])
def test_each_finished_task_is_reported_once(options):
    finished = []
    tasks = list(range(7))
    assert parallel_map(square, tasks, on_result=finished.append, **options) == \
        [x * x for x in tasks]
    assert sorted(finished) == tasks


def test_a_dying_worker_raises_a_clear_error():
    with pytest.raises(ParallelError, match="worker process died .* die"):
        parallel_map(die, [1, 2], n_jobs=2)


def test_a_task_alongside_runs_in_another_process_while_the_caller_works():
    with alongside(process_and_session, 7) as result:
        own = os.getpid()
        pid, session, x = result()
    # its own session: the terminal's Ctrl-C reaches the caller only
    assert x == 7 and pid != own and session == pid != os.getsid(0)


def test_a_ctrl_c_that_stopped_the_callers_search_stops_the_task_alongside():
    with interrupts.on_interrupt("keep"), interrupts.stoppable() as search:
        with alongside(run_until_stopped, 120.0) as result:
            interrupts.request()  # as the handler of a Ctrl-C does
            waited = result()
    assert search.interrupted
    assert waited < 30  # told to stop, it answered long before its 120 s


def test_a_ctrl_c_before_the_task_alongside_listens_does_not_kill_it():
    # told at once, it died before it could answer: "the search stopped without a result"
    with interrupts.on_interrupt("keep"), interrupts.stoppable() as search:
        interrupts.request()
        with alongside(run_until_stopped, ArrivesLate(120.0)) as result:
            waited = result()
    assert search.interrupted
    assert waited < 30


def test_leaving_the_block_ends_a_task_still_running():
    started = time.perf_counter()
    with alongside(run_until_stopped, 120.0):
        pass
    assert time.perf_counter() - started < 30


def test_a_bound_alongside_with_no_time_left_is_the_one_without_lps():
    table = small_hierarchical_table()
    problem = suppression_problem(table, table.values)
    spent = Deadline(1e-9)  # as after a Ctrl-C or a limit the earlier steps used up
    with certified_bound_alongside(problem, MethodOptions(spent, n_jobs=2)) as bound:
        found = bound()
    assert found.rounds == 0 and "no LP" in found.how and found.value > 0


def test_a_task_alongside_whose_process_dies_raises_a_clear_error():
    with alongside(die, 1) as result, pytest.raises(ParallelError, match="died .* die"):
        result()


def test_a_task_alongside_runs_on_the_cluster(dask_client):
    with alongside(square, 5, client=dask_client) as result:
        assert result() == 25


@pytest.mark.parametrize("bad", [0, -2, 1.5])
def test_bad_n_jobs_is_refused(bad):
    with pytest.raises(InputError, match="n_jobs"):
        resolve_jobs(bad)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_requirement_checks_are_identical_serial_in_a_pool_and_on_dask(dask_client):
    table = small_hierarchical_table()
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    reqs = requirements(primary, cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float))
    assert len(reqs) > 10
    down, up = capacities(table)
    attacker = Attacker(table.A, down, up)
    rng = np.random.default_rng(0)
    pattern = primary | (rng.random(table.n_cells) < 0.3)
    serial = failing_requirements(attacker, reqs, pattern)
    pooled = failing_requirements(attacker, reqs, pattern, n_jobs=2, chunk=7)
    on_dask = failing_requirements(attacker, reqs, pattern, client=dask_client, chunk=7)
    assert 0 < len(serial) < len(reqs)  # some requirements hold, some fail
    assert serial == pooled == on_dask
    # the primaries alone fail more requirements than the larger pattern
    assert len(failing_requirements(attacker, reqs, primary)) > len(serial)


@pytest.mark.slow
def test_modular_pattern_does_not_depend_on_n_jobs_or_dask(dask_client):
    table = small_hierarchical_table()  # no sub-table near its limit: the same patterns
    one = suppress(table, "modular", n_jobs=1, subtable_limit=300)
    two = suppress(table, "modular", n_jobs=2, subtable_limit=300)
    distributed = suppress(table, "modular", client=dask_client, subtable_limit=300)
    assert one.protected
    assert (one.suppressed == two.suppressed).all()
    assert (one.suppressed == distributed.suppressed).all()
    # the lower bound: in this process, in another one, on the cluster; the same relaxation
    # once it has converged (every requirement's cut in), so the same value
    assert one.stats.bound > 0
    for other in (two, distributed):
        assert other.stats.bound == pytest.approx(one.stats.bound, rel=1e-6)
        assert other.stats.bound_how == one.stats.bound_how


def test_hypercube_pattern_and_its_audit_do_not_depend_on_n_jobs_or_dask(dask_client):
    one = suppressed_small_table(5, "hypercube")  # n_jobs=1, the default
    two = suppress(small_hierarchical_table(5), "hypercube", n_jobs=2)
    assert one.protected and two.protected
    assert (one.suppressed == two.suppressed).all()
    # the method hands n_jobs and the client to the pattern's audit only: the same audit on
    # the cluster (a second run would repeat the pattern's serial search and its bound)
    distributed = audit(one.table, witnesses=one.witnesses, client=dask_client)
    assert distributed.protected and distributed.witnesses == one.audit.witnesses
    for other in (two.audit, distributed):
        assert other.frame["solver_status"].equals(one.audit.frame["solver_status"])
        assert np.allclose(other.frame[["lower", "upper"]], one.audit.frame[[
            "lower", "upper"]], rtol=1e-9, atol=1e-9, equal_nan=True)
