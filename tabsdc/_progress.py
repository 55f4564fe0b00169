"""Time limits and progress lines shared by every long computation of the toolkit.

Two small objects:

* :class:`Deadline`: the total seconds a call may take. Every loop asks ``expired`` before a
  new step, and every solver call gets at most ``remaining()`` seconds (``solver_limit``), so
  the whole call stops within a few seconds of its limit whatever step it is in. A Ctrl-C
  during a search (:mod:`tabsdc._interrupts`) makes every deadline of the search expire at
  once, so an interrupt takes the same path as the time limit.
* :class:`ProgressReporter`: time-based progress lines for a loop over ``total`` items. A
  first line comes at once, the first rate after ``first`` seconds (default 2), the next
  ones at least every ``interval`` seconds (default 10),
  each with ``done of total``, the rate and an estimate of the time left,
  ``left = (total - done) / rate``, ``rate = done / elapsed``. Lines go to a ``progress``
  callable taking one str per line (the toolkit's one progress signature).

Both take a ``clock`` (default :func:`time.perf_counter`) so that tests can drive them with
a fake clock.

Examples
--------
>>> ticks = iter([0.0, 1.0, 4.0, 12.0, 15.0, 30.0])
>>> lines = []
>>> reporter = ProgressReporter(lines.append, "routing", 100, unit="requirements",
...                             clock=lambda: next(ticks))
>>> for done in (5, 30, 35, 50):
...     reporter.update(done)
>>> reporter.finish(100)
>>> print("\\n".join(lines))
routing: 0 of 100 requirements
routing: 30 of 100 requirements (30 %), 7.5/s, about 9 s left
routing: 50 of 100 requirements (50 %), 3.33/s, about 15 s left
routing: 100 of 100 requirements done in 30 s
>>> deadline = Deadline(60.0, clock=iter([0.0, 45.0, 70.0]).__next__)
>>> deadline.remaining(), deadline.expired
(15.0, True)
>>> Deadline(60.0, clock=iter([0.0, 20.0]).__next__).remaining(share=0.5)
10.0
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from numbers import Real
from time import perf_counter

import tabsdc._interrupts as interrupts

#: The toolkit's progress signature: one line of text per call.
Progress = Callable[[str], None]


class Deadline:
    """The total time a call may take, counted from construction.

    Parameters
    ----------
    seconds : float or None
        Total seconds; None (or ``inf``) for no limit.
    clock : callable, optional
        Seconds since some fixed point (default :func:`time.perf_counter`, looked up when
        the deadline is made: a test may replace ``tabsdc._progress.perf_counter``).
    """

    def __init__(self, seconds: float | None, *, clock: Callable[[], float] | None = None):
        self.seconds = math.inf if seconds is None else validate_time_limit(seconds)
        self._clock = perf_counter if clock is None else clock
        self.start = self._clock()
        #: Set by the code that stopped early because of this deadline.
        self.hit = False

    @property
    def clock(self) -> Callable[[], float]:
        """The clock this deadline reads (for deadlines of parts of the work)."""
        return self._clock

    @property
    def limited(self) -> bool:
        """True when there is a limit at all."""
        return math.isfinite(self.seconds)

    def elapsed(self) -> float:
        """Seconds since construction."""
        return self._clock() - self.start

    def remaining(self, share: float = 1.0) -> float:
        """Seconds left until ``share`` of the limit has passed since the start,
        ``max(share * seconds - elapsed, 0)`` (``inf`` without a limit; 0 once a Ctrl-C has
        stopped the search, :func:`tabsdc._interrupts.stopping`). A method in phases gives
        its first phase ``remaining(0.6)`` and the rest ``remaining()``."""
        if interrupts.stopping():
            return 0.0
        return max(self.seconds * share - self.elapsed(), 0.0)

    @property
    def expired(self) -> bool:
        """True once the time is up (within 0.02 s, the solvers' own granularity) or a
        Ctrl-C has stopped the search; records that the deadline was hit."""
        if interrupts.stopping() or (self.limited and self.remaining() <= 0.02):
            self.hit = True
        return self.hit

    @property
    def why(self) -> str:
        """Why the work stopped early: ``"interrupted (Ctrl-C)"`` or ``"time limit
        reached"`` (for progress lines)."""
        return "interrupted (Ctrl-C)" if interrupts.interrupted() else "time limit reached"

    def solver_limit(self, cap: float | None = None, *, share: float = 1.0) -> float | None:
        """Seconds a solver call may take now: what is left (of ``share`` of the limit,
        :meth:`remaining`), at most ``cap`` (None: no limit).

        Never below 0.01 s, so that a solver always gets to return its incumbent.
        """
        left = min(self.remaining(share), math.inf if cap is None else cap)
        return None if math.isinf(left) else max(left, 0.01)

    def wall_clock_end(self) -> float | None:
        """The end on the wall clock (:func:`time.time`), for work handed to other
        processes, whose own clocks start elsewhere (None: no limit). Read it there with
        :func:`seconds_until`."""
        return time.time() + self.remaining() if self.limited else None

    def share(self, fraction: float) -> Deadline:
        """A deadline for a part of the work: ``fraction`` of what is left (same clock)."""
        part = Deadline(None, clock=self._clock)
        part.seconds = self.remaining() * fraction if self.limited else math.inf
        return part


def seconds_until(end: float | None) -> float | None:
    """Seconds left before the wall-clock ``end`` of :meth:`Deadline.wall_clock_end`
    (at most zero once it has passed; None: no limit).

    Examples
    --------
    >>> seconds_until(None) is None, seconds_until(time.time() - 5.0) < 0
    (True, True)
    """
    return None if end is None else end - time.time()


def validate_time_limit(seconds: object, name: str = "time_limit") -> float | None:
    """The toolkit's one check of ``time_limit`` (and of other limits in seconds, called
    ``name`` in the message): None (no limit) or a number of seconds > 0.

    Raises
    ------
    InputError
        Anything else (``-1``, ``0``, ``"5"``, ``nan``, ``True``), with one wording for every
        entry point.

    Examples
    --------
    >>> validate_time_limit(30), validate_time_limit(None)
    (30.0, None)
    """
    if seconds is None:
        return None
    number = isinstance(seconds, Real) and not isinstance(seconds, bool)
    if not number or not seconds > 0 or math.isnan(seconds):
        from tabsdc._errors import InputError

        raise InputError(f"{name} must be a positive number of seconds (or None for no "
                         f"limit), got {seconds!r}")
    return float(seconds)


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3 min 20 s``, ``2 h 5 min`` (rounded)."""
    if not math.isfinite(seconds):
        return "unknown"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s" if seconds % 60 else f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class ProgressReporter:
    """Time-based progress lines for a loop over ``total`` items.

    Parameters
    ----------
    progress : callable or None
        Receives each line (nothing is computed when None, nor when ``total`` is 0).
    task : str
        What the loop does (``"routing"``); starts every line.
    total : int
        Number of items.
    unit : str
        What the items are (``"requirements"``).
    first : float
        Seconds before the first line with a rate.
    interval : float
        At most this many seconds between two lines while :meth:`update` is called.
    clock : callable
        As in :class:`Deadline`.
    """

    def __init__(self, progress: Progress | None, task: str, total: int, *, unit: str = "",
                 first: float = 2.0, interval: float = 10.0,
                 clock: Callable[[], float] = perf_counter):
        self.progress = progress if total > 0 else None  # nothing to do: nothing to say
        self.task = task
        self.total = int(total)
        self.unit = f" {unit}" if unit else ""
        self.interval = interval
        self._clock = clock
        self.start = clock() if progress is not None else 0.0
        self._next = self.start + first
        self._emit(f"{task}: 0 of {self.total:,}{self.unit}")

    def _emit(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)

    def update(self, done: int, note: str = "") -> None:
        """Report ``done`` items (and ``note``) when ``interval`` seconds have passed since
        the last line."""
        if self.progress is None:
            return
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self.interval
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else math.inf
        left = (self.total - done) / rate if rate > 0 else math.inf
        share = 100.0 * done / self.total if self.total else 100.0
        line = (f"{self.task}: {done:,} of {self.total:,}{self.unit} ({share:.0f} %), "
                f"{rate:,.3g}/s, about {format_seconds(left)} left")
        self._emit(line + (f"; {note}" if note else ""))

    def finish(self, done: int | None = None, note: str = "") -> None:
        """The closing line: how many items in how long (``done`` < total: stopped early,
        ``note`` says why)."""
        if self.progress is None:
            return
        done = self.total if done is None else done
        elapsed = self._clock() - self.start
        stopped = "" if done >= self.total else " (stopped early)"
        self._emit(f"{self.task}: {done:,} of {self.total:,}{self.unit} done in "
                   f"{format_seconds(elapsed)}{stopped}" + (f"; {note}" if note else ""))


@contextmanager
def heartbeat(
    progress: Progress | None, task: str, time_limit: float | None = None, *,
    first: float = 2.0, interval: float = 10.0, quiet: bool = False,
) -> Iterator[None]:
    """Progress lines from a background thread while a block runs whose steps cannot report
    (one long solve): a first line at once, the next after ``first`` seconds, then every
    ``interval`` seconds, each with the time used and, under a time limit, the most that is
    left; a last line when the block ends.

    ``quiet`` is for a step of a loop that reports its own lines (a round of a cut loop, one
    sub-table): nothing is said unless the step lasts ``interval`` seconds, then a line every
    ``interval`` seconds and the last line; so a long step is never silent and short steps
    add nothing.

    Examples
    --------
    >>> lines = []
    >>> with heartbeat(lines.append, "controlled rounding", 60):
    ...     pass
    >>> lines[0], lines[-1].startswith("controlled rounding: done in")
    ('controlled rounding: started (time limit 1 min)', True)
    >>> with heartbeat(lines.append, "round 2: master MILP", quiet=True):
    ...     pass
    >>> len(lines)
    2
    """
    if progress is None:
        yield
        return
    deadline = Deadline(time_limit)
    if not quiet:
        limit = f" (time limit {format_seconds(deadline.seconds)})" if deadline.limited else ""
        progress(f"{task}: started{limit}")
    stop = threading.Event()
    beats = []

    def beat() -> None:
        wait = interval if quiet else first
        while not stop.wait(wait):
            left = (f", at most {format_seconds(deadline.remaining())} left"
                    if deadline.limited else "")
            progress(f"{task}: {format_seconds(deadline.elapsed())} so far{left}")
            beats.append(1)
            wait = interval

    thread = threading.Thread(target=beat, name=f"progress of {task}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    if beats or not quiet:
        progress(f"{task}: done in {format_seconds(deadline.elapsed())}")
