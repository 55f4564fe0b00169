"""A HiGHS MILP solve that ends at its time limit whatever HiGHS is doing.

HiGHS compares its clock with ``time_limit`` between the steps of a MIP solve, but some
steps (cut generation at the root node of a large MILP) run tens of seconds past it, and
cancelling from another thread does not reach them. :func:`solve_isolated` hands the solve
to a worker process (``python -m tabsdc.solver._isolated``, kept for later solves; it never
imports the caller's script). The worker gets the time limit as usual and nearly always
answers in time, incumbent and bound included; a worker that has not answered
``grace_seconds`` after the limit is ended (the next solve starts a new one), and the result
is ``"no_solution"`` with a message saying so. A time limit is then a promise: the call
returns within ``time_limit + grace`` seconds, or within the ``within`` seconds the caller
gives (start-up of a new worker included), counted from the call's start. Problems and
results cross the pipe pickled.

Every solve has a worker of its own: a process keeps a pool of workers, a solve takes an
idle one (or starts one) and gives it back, so threads solving at once never wait for each
other and the pool holds as many workers as solves ever ran at once. :func:`submit_isolated`
runs the same solve from a thread and returns at once with a
:class:`~concurrent.futures.Future`, so that the caller can work on while the worker solves
(on a second core); :func:`start_worker` starts a worker ahead of its first solve.

A worker never outlives its caller: it ends when the pipe from its caller reaches its end
(the caller has exited, however: a signal, ``SIGKILL``, a crash) and, on POSIX, when its
parent process changes (checked twice a second, also in the middle of a solve: HiGHS
releases the interpreter while it works). ``prctl(PR_SET_PDEATHSIG)`` is not used: it fires
when the *thread* that started the worker ends, and :func:`submit_isolated` starts workers
from threads that end long before the caller does. Workers still running when the caller's
interpreter exits are ended then.

Interrupts: the worker runs in its own process group, so a Ctrl-C at the terminal reaches
the caller only. When a Ctrl-C stops the caller's search (:func:`tabsdc._interrupts.stopping`)
the caller sends the worker SIGINT (again every second), which ends HiGHS's solve at its next
iteration with the incumbent found so far (the worker's SIGINT only marks an interrupt,
:func:`tabsdc._interrupts.listen`); a worker that has not answered :data:`STOP_SECONDS` later
is ended. Any other exception while the caller waits (a second Ctrl-C) ends the worker too,
so that no answer is left in the pipe for the next solve.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from time import perf_counter, sleep

import numpy as np

import tabsdc._interrupts as interrupts
from tabsdc.solver._options import SolveOptions
from tabsdc.solver._problem import LinearProgram, SolveResult

#: Seconds the worker may take to start (import numpy, scipy, highspy) before its first solve.
_START_SECONDS = 30.0

#: Seconds a worker told to stop (a Ctrl-C) may take to answer before it is ended.
STOP_SECONDS = 5.0

#: Seconds between two checks for a Ctrl-C while the caller waits for the worker.
_POLL_SECONDS = 0.2

#: Seconds a new worker typically needs to start (about 2 s on a loaded two-core machine).
STARTUP_ESTIMATE = 3.0

#: Seconds between two checks, in a worker, that its parent process is still there.
_PARENT_CHECK_SECONDS = 0.5


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
    """One worker process and its pipes."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        #: The process was just started: its first solve waits for its imports too.
        self.fresh = False

    def running(self) -> subprocess.Popen:
        if self.process is not None and self.process.poll() is not None:
            self.stop()  # it ended on its own: its pipes are closed before a new one starts
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tabsdc.solver._isolated", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=True)
            self.fresh = True
        return self.process

    def stop(self) -> None:
        """End the process and close its pipes."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(BrokenPipeError):  # unsent bytes of a dead worker
                    pipe.close()
            self.process = None


class _Pool:
    """The workers of one process: a solve takes an idle worker (or a new one) and gives it
    back, so that solves from several threads run at once, each in its own worker."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        self.idle: list[_Worker] = []

    def take(self) -> _Worker:
        with self.lock:
            if self.idle:
                return self.idle.pop()
            worker = _Worker()
            self.workers.append(worker)
            return worker

    def give_back(self, worker: _Worker) -> None:
        with self.lock:
            self.idle.append(worker)

    def stop_all(self) -> None:
        """End every worker (at the interpreter's exit; not in a forked child, whose pool
        is its own)."""
        if os.getpid() != self.owner:
            return
        with self.lock:
            for worker in self.workers:
                worker.stop()


_pools: dict[int, _Pool] = {}
_pools_lock = threading.Lock()


def _pool() -> _Pool:
    """This process's pool (a forked child starts its own: its parent's pipes are not its
    to use)."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = _Pool()
            atexit.register(pool.stop_all)
        return pool


def start_worker() -> None:
    """Start a worker now (it imports its modules while the caller works on) for the next
    solve; a no-op when an idle one is running."""
    pool = _pool()
    worker = pool.take()
    try:
        worker.running()
    finally:
        pool.give_back(worker)


def solve_isolated(problem: LinearProgram, options: SolveOptions, *,
                   start: np.ndarray | None = None, interior: bool = False,
                   crossover: bool = True, within: float | None = None) -> SolveResult:
    """Solve ``problem`` with HiGHS in a worker process of its own, ended ``grace_seconds``
    after the time limit of ``options`` (which must have one).

    Parameters
    ----------
    problem : LinearProgram
    options : SolveOptions
        With a time limit.
    start, interior, crossover
        As in :func:`~tabsdc.solver._highs.solve_highs`: a MIP start, the LP method.
    within : float, optional
        The most seconds this call may take from now, the start-up of a new worker
        included (default: the time limit, its grace and, for a new worker,
        :data:`_START_SECONDS`). The solve's time limit is then lowered to
        :func:`time_limit_within` it: a caller with a deadline passes what is left of it.

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
    pool = _pool()
    worker = pool.take()
    try:
        new = worker.process is None or worker.process.poll() is not None or worker.fresh
        process = worker.running()
        if within is not None:
            options = replace(options, time_limit=min(options.time_limit, time_limit_within(
                max(within - (perf_counter() - called), 0.0), startup=new)))
        # ended a grace after its limit, and never later than ``within``
        wait = options.time_limit + grace_seconds(options.time_limit)
        if worker.fresh:
            wait += _START_SECONDS
        if within is not None:
            wait = min(wait, within - (perf_counter() - called))
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
                return _without_answer(perf_counter() - called, "interrupted (Ctrl-C): "
                                       "HiGHS did not stop in time (it was ended)")
            return _stopped(options, perf_counter() - called, "it was stopped")
    finally:
        pool.give_back(worker)
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


def _watch_parent(parent: int) -> Callable[[], bytes]:
    """End this worker when its caller is gone: its pipe reaches its end (a thread reading
    it ahead of the solves) or, on POSIX, its parent process changes. Returns the function
    that waits for the next request."""
    source = sys.stdin.buffer
    requests: list[bytes] = []
    arrived = threading.Condition()

    def read() -> None:
        while (size := source.read(8)) and len(size) == 8:
            payload = source.read(int.from_bytes(size, "little"))
            with arrived:
                requests.append(payload)
                arrived.notify()
        os._exit(0)  # the caller has closed the pipe or exited, whatever it was doing

    def watch() -> None:
        while os.getppid() == parent:
            sleep(_PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=read, name="tabsdc-worker-pipe", daemon=True).start()
    if os.name == "posix":
        threading.Thread(target=watch, name="tabsdc-worker-parent", daemon=True).start()

    def next_request() -> bytes:
        with arrived:
            arrived.wait_for(lambda: requests)
            return requests.pop(0)

    return next_request


def _serve(parent: int) -> None:
    """The worker's loop: read a problem, solve it, write the result (or the error); end
    when the caller ``parent`` is gone (:func:`_watch_parent`)."""
    from tabsdc.solver._highs import solve_highs

    interrupts.listen()
    next_request = _watch_parent(parent)
    sink = sys.stdout.buffer
    while True:
        problem, options, extras = pickle.loads(next_request())
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
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid())
