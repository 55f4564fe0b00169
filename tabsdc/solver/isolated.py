"""A HiGHS MILP solve that ends at its time limit whatever HiGHS is doing.

HiGHS compares its clock with ``time_limit`` between the steps of a MIP solve, but some
steps (cut generation at the root node of a large MILP) run tens of seconds past it, and
cancelling from another thread does not reach them. :func:`solve_isolated` hands the solve
to a worker process (``python -m tabsdc.solver.isolated``, started once and kept for later
solves; it never imports the caller's script). The worker gets the time limit as usual and
nearly always answers in time, incumbent and bound included; a worker that has not answered
``grace_seconds`` after the limit is ended (the next solve starts a new one), and the result
is ``"no_solution"`` with a message saying so. A time limit is then a promise: the call
returns within ``time_limit + grace`` seconds, or within the ``within`` seconds the caller
gives (start-up of a new worker included). Problems and results cross the pipe pickled.

:func:`submit_isolated` runs the same solve from a thread and returns at once with a
:class:`~concurrent.futures.Future`, so that the caller can work on while the worker solves
(on a second core); :func:`start_worker` starts the worker ahead of its first solve.

Interrupts: the worker runs in its own process group, so a Ctrl-C at the terminal reaches
the caller only. When a Ctrl-C stops the caller's search (:func:`tabsdc.interrupts.stopping`)
the caller sends the worker SIGINT (again every second), which ends HiGHS's solve at its next
iteration with the incumbent found so far (the worker's SIGINT only marks an interrupt,
:func:`tabsdc.interrupts.listen`); a worker that has not answered :data:`STOP_SECONDS` later
is ended. Any other exception while the caller waits (a second Ctrl-C) ends the worker too,
so that no answer is left in the pipe for the next solve.
"""

from __future__ import annotations

import pickle
import select
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from dataclasses import replace
from functools import cache
from time import perf_counter

import numpy as np

from tabsdc import interrupts
from tabsdc.solver.options import SolveOptions
from tabsdc.solver.problem import LinearProgram, SolveResult

__all__ = ["solve_isolated", "submit_isolated", "start_worker", "grace_seconds",
           "time_limit_within", "STARTUP_ESTIMATE"]

#: Seconds the worker may take to start (import numpy, scipy, highspy) before its first solve.
_START_SECONDS = 30.0

#: Seconds a worker told to stop (a Ctrl-C) may take to answer before it is ended.
STOP_SECONDS = 5.0

#: Seconds between two checks for a Ctrl-C while the caller waits for the worker.
_POLL_SECONDS = 0.2

#: Seconds a new worker typically needs to start (about 2 s on a loaded two-core machine).
STARTUP_ESTIMATE = 3.0


def grace_seconds(time_limit: float) -> float:
    """How long after its time limit a worker may still answer: 2 s plus 5 % of the limit.

    Examples
    --------
    >>> grace_seconds(60.0)
    5.0
    """
    return 2.0 + 0.05 * time_limit


def time_limit_within(seconds: float, *, startup: bool = True) -> float:
    """The time limit to give a worker's solve that has to answer within ``seconds``: room
    for its grace (:func:`grace_seconds`) and, with ``startup``, for a new worker's start-up
    (:data:`STARTUP_ESTIMATE`); at least 5 % of ``seconds``.

    Examples
    --------
    >>> round(time_limit_within(30.0), 3), round(time_limit_within(30.0, startup=False), 3)
    (23.81, 26.667)
    """
    room = seconds - 2.0 - (STARTUP_ESTIMATE if startup else 0.0)
    return max(room / 1.05, 0.05 * seconds, 1e-3)


class _Worker:
    """One worker process, its pipes, and a lock so that one solve uses it at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        #: The process was just started: its first solve waits for its imports too.
        self.fresh = False

    def running(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tabsdc.solver.isolated"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
            self.fresh = True
        return self.process

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@cache
def _worker() -> _Worker:
    return _Worker()


def start_worker() -> None:
    """Start the worker now (it imports its modules while the caller works on); a no-op
    when one is running or a solve holds it."""
    worker = _worker()
    if worker.lock.acquire(blocking=False):
        try:
            worker.running()
        finally:
            worker.lock.release()


def solve_isolated(problem: LinearProgram, options: SolveOptions, *,
                   start: np.ndarray | None = None, interior: bool = False,
                   crossover: bool = True, within: float | None = None) -> SolveResult:
    """Solve ``problem`` with HiGHS in the worker process, ended ``grace_seconds`` after the
    time limit of ``options`` (which must have one).

    Parameters
    ----------
    problem : LinearProgram
    options : SolveOptions
        With a time limit.
    start, interior, crossover
        As in :func:`~tabsdc.solver.highs.solve_highs`: a MIP start, the LP method.
    within : float, optional
        The most seconds this call may take from now, waiting for another solve and the
        start-up of a new worker included (default: the time limit, its grace and, for a
        new worker, :data:`_START_SECONDS`). The solve's time limit is then lowered to
        :func:`time_limit_within` what is left once the worker is free: a caller with a
        deadline passes what is left of it.

    Examples
    --------
    >>> import numpy as np
    >>> milp = LinearProgram(c=[-1.0, -1.0], A=np.array([[2.0, 2.0]]), row_lower=[-np.inf],
    ...                      row_upper=[3.0], col_lower=[0, 0], col_upper=[5, 5],
    ...                      integrality=[True, True])
    >>> result = solve_isolated(milp, SolveOptions(time_limit=10.0))
    >>> result.status, result.objective
    ('optimal', -1.0)
    """
    called = perf_counter()
    if interrupts.stopping():  # a Ctrl-C stopped the search: no new solve
        return _without_answer(perf_counter() - called, "interrupted (Ctrl-C) before the solve")
    worker = _worker()
    if within is not None and not worker.lock.acquire(timeout=max(within, 0.0)):
        return _stopped(options, perf_counter() - called, "the worker stayed busy")
    if within is None:
        worker.lock.acquire()
    try:
        start_time = perf_counter()
        new = worker.process is None or worker.process.poll() is not None or worker.fresh
        process = worker.running()
        if within is not None:
            options = replace(options, time_limit=min(options.time_limit, time_limit_within(
                max(within - (start_time - called), 0.0), startup=new)))
        # ended a grace after its limit, and never later than ``within``
        wait = options.time_limit + grace_seconds(options.time_limit)
        if worker.fresh:
            wait += _START_SECONDS
        if within is not None:
            wait = min(wait, within - (start_time - called))
        worker.fresh = False
        extras = {"start": start, "interior": interior, "crossover": crossover}
        payload = pickle.dumps((problem, options, extras), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            process.stdin.write(len(payload).to_bytes(8, "little") + payload)
            process.stdin.flush()
            answer = _answer(process, max(wait, 0.0))
        except (BrokenPipeError, EOFError):
            answer = None
        except BaseException:  # a second Ctrl-C, ...: the answer would be left in the pipe
            worker.stop()
            raise
        if answer is None:
            worker.stop()
            if interrupts.stopping():
                return _without_answer(perf_counter() - start_time, "interrupted (Ctrl-C): "
                                       "HiGHS did not stop in time (it was ended)")
            return _stopped(options, perf_counter() - start_time, "it was stopped")
    finally:
        worker.lock.release()
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _without_answer(seconds: float, message: str) -> SolveResult:
    return SolveResult(status="no_solution", optimal=False, objective=None, bound=None,
                       gap=None, x=None, row_duals=None, col_duals=None, seconds=seconds,
                       solver="highs", message=message)


def _stopped(options: SolveOptions, seconds: float, why: str) -> SolveResult:
    return _without_answer(seconds, f"HiGHS did not return within its time limit of "
                           f"{options.time_limit:g} s ({why})")


def submit_isolated(problem: LinearProgram, options: SolveOptions, **kwargs: object
                    ) -> Future:
    """:func:`solve_isolated` from a thread: returns at once; the future's result is the
    :class:`SolveResult` (or the error the solve raised). ``kwargs`` are those of
    :func:`solve_isolated`.

    Examples
    --------
    >>> import numpy as np
    >>> lp = LinearProgram(c=[1.0], A=np.array([[1.0]]), row_lower=[2.0], row_upper=[np.inf],
    ...                    col_lower=[0], col_upper=[5])
    >>> future = submit_isolated(lp, SolveOptions(time_limit=10.0), interior=True)
    >>> round(future.result().objective, 6)
    2.0
    """
    future: Future = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(solve_isolated(problem, options, **kwargs))
        except BaseException as error:  # handed to the caller through the future
            future.set_exception(error)

    threading.Thread(target=run, name="tabsdc-isolated-solve", daemon=True).start()
    return future


def _answer(process: subprocess.Popen, seconds: float) -> object | None:
    """The worker's answer, or None when none came within ``seconds`` (after a Ctrl-C that
    stops the search: within :data:`STOP_SECONDS`; the worker is told to stop, once a
    second)."""
    end = perf_counter() + seconds
    told = None
    while True:
        now = perf_counter()
        if interrupts.stopping() and (told is None or now - told >= 1.0):
            if told is None:
                end = min(end, now + STOP_SECONDS)
            process.send_signal(signal.SIGINT)
            told = now
        if now >= end:
            return None
        ready, _, _ = select.select([process.stdout], [], [], min(end - now, _POLL_SECONDS))
        if ready:
            return _read(process.stdout)


def _read(stream) -> object:
    """One length-prefixed pickle from ``stream``."""
    size = stream.read(8)
    if len(size) < 8:
        raise EOFError
    return pickle.loads(stream.read(int.from_bytes(size, "little")))


def _serve() -> None:
    """The worker's loop: read a problem, solve it, write the result (or the error)."""
    from tabsdc.solver.highs import solve_highs

    interrupts.listen()
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while size := source.read(8):
        problem, options, extras = pickle.loads(source.read(int.from_bytes(size, "little")))
        interrupts.reset()
        try:
            with interrupts.stoppable():
                answer: object = solve_highs(problem, options, **extras)
        except Exception as error:  # handed to the caller, which raises it
            answer = error
        payload = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(len(payload).to_bytes(8, "little") + payload)
        sink.flush()


if __name__ == "__main__":
    _serve()
