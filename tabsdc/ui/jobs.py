"""Long work of the web app in a separate process that can be stopped.

A :class:`Job` runs one call (a suppression, a rounding, an adjustment, an attack) in a
worker process started by the ``forkserver`` method (the server's threads are never forked;
the toolkit is imported once in the fork server, so a job starts in a fraction of a second).
The worker sends its progress lines and then its result or error through a pipe; the server
reads them when the page asks. :meth:`Job.cancel` terminates the process: the solver stops
with it, whatever it was doing.
"""

from __future__ import annotations

import inspect
import multiprocessing
import re
from collections.abc import Callable
from multiprocessing.connection import Connection
from time import perf_counter
from typing import Any

from tabsdc.errors import TabSDCError

__all__ = ["Job", "worker_context"]

#: Progress lines kept per job (the oldest are dropped).
MAX_LINES = 200
#: "3/10" or "3 of 10" in a progress line sets the bar (the audit, the heuristics).
_COUNT = re.compile(r"(\d+)\s*(?:/|of)\s*(\d+)")


def worker_context() -> multiprocessing.context.BaseContext:
    """The ``forkserver`` context with the toolkit preloaded (``spawn`` where there is no
    fork server)."""
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload(["tabsdc.ui.tasks"])
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

    Examples
    --------
    >>> import textwrap
    >>> job = Job("demo", textwrap.shorten, {"text": "a protected table", "width": 12})
    >>> job.wait(60).state, job.result
    ('done', 'a [...]')
    """

    def __init__(self, kind: str, task: Callable[..., Any], arguments: dict[str, Any],
                 time_limit: float | None = None) -> None:
        self.kind = kind
        self.time_limit = time_limit
        self.state = "running"
        self.lines: list[str] = []
        self.fraction: float | None = None
        self.result: Any = None
        self.error: str | None = None
        self.started = perf_counter()
        self.seconds: float | None = None
        context = worker_context()
        self._receiver, sender = context.Pipe(duplex=False)
        self.process = context.Process(target=_run, args=(task, arguments, sender),
                                       daemon=True, name=f"tabsdc-ui-{kind}")
        self.process.start()
        sender.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def poll(self) -> Job:
        """Read what the worker sent; notice a worker that died without a word."""
        if self.state != "running":
            return self
        try:
            while self.state == "running" and self._receiver.poll():
                kind, payload = self._receiver.recv()
                if kind == "line":
                    self._add_line(payload)
                elif kind == "done":
                    self._finish("done", result=payload)
                else:
                    self._finish("failed", error=payload)
        except EOFError:
            self.process.join(5)
            self._finish("failed", error=f"the worker process stopped unexpectedly (exit "
                                         f"code {self.process.exitcode})")
        return self

    def wait(self, timeout: float) -> Job:
        """Block until the job ends or ``timeout`` seconds pass (for scripts and tests)."""
        end = perf_counter() + timeout
        while self.poll().state == "running" and perf_counter() < end:
            self._receiver.poll(min(0.2, max(0.0, end - perf_counter())))
        return self

    def cancel(self) -> Job:
        """Terminate the worker (SIGTERM, then SIGKILL after 5 s) and wait for it."""
        if self.state == "running":
            self.process.terminate()
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)
            self._finish("cancelled", error="cancelled: the worker process was stopped")
        return self

    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else perf_counter() - self.started

    def to_dict(self) -> dict[str, Any]:
        """The state the page shows: state, progress fraction, lines, error, seconds."""
        fraction = self.fraction
        if fraction is None and self.time_limit:
            fraction = min(1.0, self.elapsed() / self.time_limit)
        if self.state == "done":
            fraction = 1.0
        return {"kind": self.kind, "state": self.state, "fraction": fraction,
                "lines": self.lines[-20:], "error": self.error,
                "seconds": round(self.elapsed(), 1), "pid": self.pid,
                "alive": self.process.is_alive()}

    def _add_line(self, line: str) -> None:
        self.lines = [*self.lines[-MAX_LINES + 1:], str(line)]
        count = _COUNT.search(str(line))
        if count and int(count.group(2)) > 0:
            self.fraction = int(count.group(1)) / int(count.group(2))

    def _finish(self, state: str, *, result: Any = None, error: str | None = None) -> None:
        self.state, self.result, self.error = state, result, error
        self.seconds = perf_counter() - self.started
        self._receiver.close()
        if state != "cancelled":
            self.process.join(5)


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
