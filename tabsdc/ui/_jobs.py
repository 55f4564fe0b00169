"""Long work of the web app in a separate process that can be stopped.

A :class:`Job` runs one call (a suppression, a rounding, an adjustment, an attack) in a
worker process started by the ``forkserver`` method (the server's threads are never forked;
the toolkit is imported once in the fork server, so a job starts in a fraction of a second).
The worker sends its progress lines and then its result or error through a pipe, and a
thread of the server reads that pipe as the lines arrive: the worker never waits for the
page (a page closed in the middle of a job does not leave its worker blocked on a full pipe),
and the page reads the job's state whenever it asks. :meth:`Job.cancel` terminates the
process: the solver stops with it, whatever it was doing.

:class:`JobSlots` bounds how many jobs run at once in the whole app.
"""

from __future__ import annotations

import inspect
import multiprocessing
import re
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from time import perf_counter
from typing import Any

from tabsdc._errors import InputError, TabSDCError

#: Progress lines kept per job (the oldest are dropped).
MAX_LINES = 200
#: The latest progress lines a job's status shows (a protection of the business survey,
#: its audit and insider attack included, fits whole).
SHOWN_LINES = 30
#: "3/10" or "3 of 10" in a progress line sets the bar (the audit, the heuristics).
_COUNT = re.compile(r"(\d+)\s*(?:/|of)\s*(\d+)")


class LimitReached(InputError):
    """A limit of the app (sessions, jobs running at once) is reached; try again later."""


class JobSlots:
    """At most ``limit`` jobs running at once, over every session of the app.

    Examples
    --------
    >>> slots = JobSlots(1)
    >>> slots.take()
    >>> try:
    ...     slots.take()
    ... except LimitReached as error:
    ...     print(str(error)[:44])
    1 computation is running already in this app
    >>> slots.give_back(); slots.running
    0
    """

    def __init__(self, limit: int) -> None:
        if int(limit) < 1:
            raise InputError(f"the job limit must be at least 1, not {limit!r}")
        self.limit = int(limit)
        self.running = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        """Count one more running job; :class:`LimitReached` when the limit is reached."""
        with self._lock:
            if self.running >= self.limit:
                what = "computation is" if self.limit == 1 else "computations are"
                raise LimitReached(
                    f"{self.limit} {what} running already in this app (its limit, "
                    f"--max-jobs {self.limit}): wait for one to end or cancel it, then try "
                    "again")
            self.running += 1

    def give_back(self) -> None:
        """A job ended."""
        with self._lock:
            self.running = max(0, self.running - 1)


def worker_context() -> multiprocessing.context.BaseContext:
    """The ``forkserver`` context with the toolkit preloaded (``spawn`` where there is no
    fork server)."""
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload(["tabsdc.ui._tasks"])
    return context


class Job:
    """One call running in a worker process.

    Parameters
    ----------
    kind : str
        What the job is (``"protect"``, ``"bases"``, ``"attack"``), for the page.
    task : callable
        A module-level function; called as ``task(**arguments)`` plus ``progress=`` (a
        callable taking one line) when its signature has that parameter.
    arguments : dict
        Picklable keyword arguments.
    time_limit : float, optional
        The task's own time limit; the progress bar shows the time used against it.
    slots : JobSlots, optional
        The app's count of running jobs: one is taken here (:class:`LimitReached` when none
        is free) and given back when the job ends, however it ends.

    Examples
    --------
    >>> import textwrap
    >>> job = Job("demo", textwrap.shorten, {"text": "a protected table", "width": 12})
    >>> job.wait(60).state, job.result
    ('done', 'a [...]')
    """

    def __init__(self, kind: str, task: Callable[..., Any], arguments: dict[str, Any],
                 time_limit: float | None = None, slots: JobSlots | None = None) -> None:
        self.kind = kind
        self.time_limit = time_limit
        self.state = "running"
        self.lines: list[str] = []
        self.fraction: float | None = None
        self.result: Any = None
        self.error: str | None = None
        self.seconds: float | None = None
        self._slots = slots
        self._lock = threading.Lock()
        self._ended = threading.Event()
        if slots is not None:
            slots.take()
        self.started = perf_counter()
        try:
            context = worker_context()
            self._receiver, sender = context.Pipe(duplex=False)
            self.process = context.Process(target=_run, args=(task, arguments, sender),
                                           daemon=True, name=f"tabsdc-ui-{kind}")
            self.process.start()
            sender.close()
        except BaseException:
            if slots is not None:
                slots.give_back()
            raise
        threading.Thread(target=self._read, daemon=True, name=f"tabsdc-ui-{kind}-pipe").start()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.state == "running"

    def wait(self, timeout: float) -> Job:
        """Block until the job ends or ``timeout`` seconds pass (for scripts and tests)."""
        self._ended.wait(timeout)
        return self

    def cancel(self) -> Job:
        """Terminate the worker (SIGTERM, then SIGKILL after 5 s) and wait for it."""
        with self._lock:
            if self.state != "running":
                return self
            self._finish("cancelled")
        self.process.terminate()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        return self

    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else perf_counter() - self.started

    def to_dict(self) -> dict[str, Any]:
        """The state the page shows: state, progress fraction, lines, error, seconds."""
        with self._lock:
            fraction = self.fraction
            if fraction is None and self.time_limit:
                fraction = min(1.0, self.elapsed() / self.time_limit)
            if self.state == "done":
                fraction = 1.0
            return {"kind": self.kind, "state": self.state, "fraction": fraction,
                    "lines": self.lines[-SHOWN_LINES:], "error": self.error,
                    "seconds": round(self.elapsed(), 1), "pid": self.pid,
                    "alive": self.process.is_alive()}

    def _read(self) -> None:
        """The pipe reader (a thread): every line as it comes, then the result or error;
        a worker that ends without a word is a failed job. A cancelled job's process is
        waited for by :meth:`cancel`, every other one here."""
        ended_here = False
        try:
            while True:
                kind, payload = self._receiver.recv()
                with self._lock:
                    if self.state != "running":
                        break
                    if kind == "line":
                        self._add_line(payload)
                        continue
                    ended_here = True
                    if kind == "done":
                        self._finish("done", result=payload)
                    else:
                        self._finish("failed", error=payload)
                    break
        except (EOFError, OSError):
            with self._lock:
                ended_here = self.state == "running"
            if ended_here:
                self.process.join(5)
                with self._lock:
                    if self.state == "running":
                        self._finish("failed", error="the worker process stopped "
                                     f"unexpectedly (exit code {self.process.exitcode})")
        finally:
            self._receiver.close()
        if ended_here:
            self.process.join(5)

    def _add_line(self, line: str) -> None:
        self.lines = [*self.lines[-MAX_LINES + 1:], str(line)]
        count = _COUNT.search(str(line))
        if count and int(count.group(2)) > 0:
            self.fraction = int(count.group(1)) / int(count.group(2))

    def _finish(self, state: str, *, result: Any = None, error: str | None = None) -> None:
        """End the job once (under ``_lock``): its state, result or error, its time; the
        slot is given back."""
        self.state, self.result, self.error = state, result, error
        self.seconds = perf_counter() - self.started
        if self._slots is not None:
            self._slots.give_back()
        self._ended.set()


def _run(task: Callable[..., Any], arguments: dict[str, Any], sender: Connection) -> None:
    """The worker: run the task, send its lines, then its result or its error."""
    def progress(line: str) -> None:
        sender.send(("line", str(line)))

    if "progress" in inspect.signature(task).parameters:
        arguments = {**arguments, "progress": progress}
    try:
        result = task(**arguments)
    except TabSDCError as error:
        sender.send(("error", str(error)))
    except Exception as error:  # noqa: BLE001 - the page shows every failure, named
        sender.send(("error", f"{type(error).__name__}: {error}"))
    else:
        sender.send(("done", result))
    finally:
        sender.close()
