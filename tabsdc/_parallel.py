"""One map over independent tasks: in this process, in a process pool or on a Dask cluster.

:func:`parallel_map` is the toolkit's way of running work in parallel (sub-tables,
blocks of the audit, attacker LPs per requirement), and :func:`alongside` its way of running
one task beside the caller's own work (a lower bound while the pattern is built). The tasks
must be independent and the function and its arguments picklable (a module-level
function); results come back in the order of the tasks, so a computation gives the same
answer with ``n_jobs=1``, ``n_jobs=k`` or a ``dask.distributed`` client.

* ``client`` given: ``client.map`` then ``client.gather`` on that cluster (Dask is an
  optional extra: ``pip install sdctoolkit[dask]``). A cluster that fails mid-run raises
  :class:`ParallelError` naming the task; nothing is returned partially.
* ``n_jobs > 1``: a :class:`concurrent.futures.ProcessPoolExecutor` with that many processes
  (``-1``: one per core).
* otherwise: a plain loop.

Examples
--------
>>> parallel_map(abs, [-2, 3, -5])
[2, 3, 5]
>>> parallel_map(abs, [-2, 3, -5], n_jobs=2)
[2, 3, 5]
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError, TabSDCError

T = TypeVar("T")
R = TypeVar("R")


#: Seconds between two looks at a process of :func:`alongside` while its result is awaited.
_POLL_SECONDS = 0.2


class ParallelError(TabSDCError, RuntimeError):
    """A worker process or the Dask cluster failed while running tasks."""


def resolve_jobs(n_jobs: int | None) -> int:
    """Number of worker processes for ``n_jobs`` (``None`` or 1: none; ``-1``: one per
    core)."""
    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return os.cpu_count() or 1
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise InputError(f"n_jobs must be a positive integer or -1, got {n_jobs!r}")
    return n_jobs


def worker_count(n_jobs: int | None, client: Any = None) -> int:
    """How many tasks run at once: the workers of a ``dask.distributed`` client, else
    :func:`resolve_jobs` of ``n_jobs``.

    >>> worker_count(2), worker_count(None)
    (2, 1)
    """
    if client is None:
        return resolve_jobs(n_jobs)
    return max(1, len(client.scheduler_info().get("workers", {})))


def parallel_map(
    func: Callable[[T], R],
    tasks: Iterable[T],
    *,
    n_jobs: int | None = 1,
    client: Any = None,
    chunksize: int = 1,
    on_result: Callable[[int], None] | None = None,
    fresh_workers: bool = False,
) -> list[R]:
    """``[func(t) for t in tasks]``, run in parallel (see the module docstring).

    Parameters
    ----------
    func : callable
        A picklable function of one task.
    tasks : iterable
        The tasks (picklable).
    n_jobs : int, optional
        Processes on this machine (ignored when ``client`` is given).
    client : dask.distributed.Client, optional
        Run the tasks on this Dask cluster.
    chunksize : int
        Tasks sent to a pool process at a time.
    on_result : callable, optional
        Called in this process with a task's index as soon as that task has finished (in
        the order they finish), e.g. for progress lines.
    fresh_workers : bool
        Start the pool's processes from a fresh interpreter (``forkserver``) instead of
        forking this process: needed when the tasks solve MILPs and this process has
        solved some already (HiGHS's MIP threads do not survive a fork; a forked worker can
        wait for them forever).

    Returns
    -------
    list
        The results, in the order of ``tasks``.

    Raises
    ------
    ParallelError
        A worker died or the cluster went away (errors raised by ``func`` itself propagate
        unchanged).
    """
    tasks = list(tasks)
    if client is not None:
        return _dask_map(func, tasks, client, on_result)
    jobs = min(resolve_jobs(n_jobs), len(tasks))
    if jobs <= 1:
        return [_reported(func(t), index, on_result) for index, t in enumerate(tasks)]
    from concurrent.futures.process import BrokenProcessPool

    try:
        context = _fresh_context(func) if fresh_workers else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            if on_result is None:
                return list(pool.map(func, tasks, chunksize=max(1, chunksize)))
            futures = {pool.submit(func, t): index for index, t in enumerate(tasks)}
            for future in as_completed(futures):
                on_result(futures[future])
            return [future.result() for future in futures]
    except BrokenProcessPool as error:
        raise ParallelError(f"a worker process died while running {len(tasks)} tasks of "
                            f"{_name(func)}: {error}") from error


@contextmanager
def alongside(func: Callable[[T], R], task: T, *, client: Any = None
              ) -> Iterator[Callable[[], R]]:
    """Run ``func(task)`` while the caller goes on with its own work: a task on ``client``'s
    cluster, or else one more process, forked from a fresh interpreter (as
    ``fresh_workers``) in a session of its own. Yields a function that returns the result
    (waiting for it when it is not done yet). Leaving the block ends a task still running
    (its result is not needed then).

    Ctrl-C (:mod:`tabsdc._interrupts`): the process runs ``func`` as a search that a Ctrl-C
    stops as at its time limit; the terminal's Ctrl-C does not reach it (its own session),
    but while the caller waits for the result after a Ctrl-C stopped the caller's search,
    the process is told once, as soon as it listens, so it answers with what it has. Until
    it listens, and after its search, it ignores Ctrl-C: a Ctrl-C right after the start
    cannot kill it.

    Raises
    ------
    ParallelError
        (from the function yielded) the process or the cluster failed; errors raised by
        ``func`` itself propagate unchanged.

    Examples
    --------
    >>> with alongside(abs, -3) as result:
    ...     own = sum(range(10))
    ...     answer = result()
    >>> answer, own
    (3, 45)
    """
    if client is not None:
        future = client.submit(func, task, pure=False)
        try:
            yield lambda: _dask_outcome(future, func)
        finally:
            if not future.done():
                future.cancel()
        return
    context = _fresh_context(func)
    receive, send = context.Pipe(duplex=False)
    listening = context.Event()
    process = context.Process(target=_run_alongside, args=(func, task, send, listening),
                              daemon=True)
    process.start()
    send.close()

    def outcome() -> R:
        told = False
        while not receive.poll(_POLL_SECONDS):
            if not process.is_alive() and not receive.poll():
                raise ParallelError(f"the worker process died while running {_name(func)} "
                                    f"(exit code {process.exitcode})")
            if interrupts.stopping() and not told and listening.is_set():
                os.kill(process.pid, signal.SIGINT)
                told = True
        try:
            done, value = receive.recv()
        except EOFError as error:
            raise ParallelError(f"the worker process died while running {_name(func)}") \
                from error
        if not done:
            raise value
        return value

    try:
        yield outcome
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        receive.close()


def _run_alongside(func: Callable[[T], R], task: T, send: Any, listening: Any) -> None:
    """The process of :func:`alongside`: ``func(task)`` as a search a Ctrl-C stops, in a
    session of its own; sets ``listening`` once a Ctrl-C would stop it (before, and after
    the search, Ctrl-C is ignored); sends ``(True, result)`` or ``(False, error)``."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.on_interrupt("keep"), interrupts.stoppable():
            listening.set()
            answer = (True, func(task))
    except BaseException as error:  # handed to the caller, who raises it
        answer = (False, error)
    send.send(answer)
    send.close()


def _fresh_context(func: Callable) -> multiprocessing.context.BaseContext:
    """The ``forkserver`` context, its server importing ``func``'s module once: each worker
    forked from it starts with that module (and what it imports) loaded instead of
    importing it again (about a second for the solvers' modules). A function of the main
    script is not preloaded: the server would run the script."""
    context = multiprocessing.get_context("forkserver")
    if func.__module__ != "__main__":
        context.set_forkserver_preload([func.__module__])
    return context


def _reported(result: R, index: int, on_result: Callable[[int], None] | None) -> R:
    if on_result is not None:
        on_result(index)
    return result


def _dask_map(func: Callable[[T], R], tasks: Sequence[T], client: Any,
              on_result: Callable[[int], None] | None = None) -> list[R]:
    try:
        from distributed import CancelledError, as_completed
    except ImportError as error:  # a client without distributed cannot exist; be explicit
        raise InputError("client= needs dask.distributed: pip install sdctoolkit[dask]") \
            from error
    if not tasks:
        return []
    try:
        futures = client.map(func, tasks, pure=False)
        if on_result is not None:
            index = {future.key: k for k, future in enumerate(futures)}
            for future in as_completed(futures):
                on_result(index[future.key])
        return client.gather(futures)
    except (CancelledError, OSError, TimeoutError) as error:
        raise ParallelError(f"the Dask cluster failed while running {len(tasks)} tasks of "
                            f"{_name(func)}: {type(error).__name__}: {error}") from error


def _dask_outcome(future: Any, func: Callable[[T], R]) -> R:
    """The result of one Dask future, a failed cluster raised as :class:`ParallelError`."""
    from distributed import CancelledError

    try:
        return future.result()
    except (CancelledError, OSError, TimeoutError) as error:
        raise ParallelError(f"the Dask cluster failed while running {_name(func)}: "
                            f"{type(error).__name__}: {error}") from error


def _name(func: Callable) -> str:
    return getattr(func, "__qualname__", repr(func))
