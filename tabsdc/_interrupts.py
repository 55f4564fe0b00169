"""Ctrl-C during a long search: stop it within about a second and keep what it has found.

A method's *search* is the part of it that only improves an incumbent (routing, clean-up and
the cut loop of suppression, the flips and MILP of CTA, the MILP of controlled rounding); it
runs inside :func:`stoppable`. While a search runs in the main thread, the first Ctrl-C
(SIGINT) does not raise :class:`KeyboardInterrupt`: it marks the search *interrupted*, and
the search stops as at an expired time limit -

* every :class:`~tabsdc._progress.Deadline` expires (its loops stop before their next step,
  every solver call gets 0.01 s),
* every HiGHS solve of the search returns at its next iteration with its incumbent, if any
  (HiGHS's interrupt callbacks, attached only while a search can be interrupted), and a
  solve in the solver's worker process (:mod:`tabsdc.solver._isolated`) is told to stop,

so the method comes back with the best result found so far, which it then checks as usual
(the audit of a pattern, the verification of an adjustment: those run
:func:`unstoppable`, never cut short by an interrupt). A second Ctrl-C raises
:class:`KeyboardInterrupt` at once, as does a Ctrl-C outside a search.

What happens once the search has stopped is the caller's choice (:func:`on_interrupt`):

* ``"keep"``: the method returns its best result, marked ``interrupted`` (time-limited, with
  its gap); when it has none it raises :class:`KeyboardInterrupt` with a message saying so
  (the ``tabsdc`` commands with ``--keep-best``; in a script or notebook,
  ``with on_interrupt("keep"): result = suppress(...)``);
* ``"raise"``: :class:`KeyboardInterrupt` as soon as the search has stopped, without waiting
  for any check (the ``tabsdc`` commands without ``--keep-best``).

Outside an :func:`on_interrupt` block nothing changes: Ctrl-C raises
:class:`KeyboardInterrupt` wherever it comes, as in any Python program (a script looping
over tables stops at the first Ctrl-C).

Only the main thread receives signals: a method called from another thread, or while the
program has its own SIGINT handler (not Python's default), leaves Ctrl-C alone.

Other stop signals: ``on_interrupt(mode, signals=STOP_SIGNALS)`` treats SIGTERM (what a
scheduler, ``timeout``, ``kill`` or systemd sends) and SIGHUP (a closed terminal) exactly as
Ctrl-C, which the command lines do; :func:`received` then tells which signal came, so that a
command exits with ``128 + signal`` (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).

Examples
--------
An interrupt marked in a search (here by :func:`request`, as the SIGINT handler does) stops
it, and the method reads it afterwards:

>>> from tabsdc._progress import Deadline
>>> with on_interrupt("keep"):
...     with stoppable() as search:
...         deadline = Deadline(None)
...         before = deadline.expired
...         request()
...         after = deadline.expired
>>> before, after, search.interrupted
(False, True, True)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from tabsdc._validation import check_choice

Mode = Literal["keep", "raise"]

#: The signals a command line treats as Ctrl-C: SIGINT, SIGTERM and, where the platform has
#: it, SIGHUP.
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@dataclass
class _State:
    """The process's interrupt state (main thread only)."""

    #: ``"keep"``/``"raise"`` of the innermost :func:`on_interrupt` block (None: none).
    mode: Mode | None = None
    #: The SIGINT handler of this module is in place (a Ctrl-C can stop a search).
    listening: bool = False
    #: A Ctrl-C came during a search.
    interrupted: bool = False
    #: Open scopes, innermost last: True for :func:`stoppable`, False for
    #: :func:`unstoppable`.
    scopes: list[bool] = field(default_factory=list)
    #: The first stop signal of the last :func:`on_interrupt` block (kept after it ends).
    received: int | None = None


_state = _State()


@dataclass
class Search:
    """What :func:`stoppable` yields: ``interrupted`` is set when the scope ends (True: a
    Ctrl-C stopped the search)."""

    interrupted: bool = False


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _on_signal(signum: int, frame: object) -> None:
    """The first stop signal during a search marks it; any other raises KeyboardInterrupt."""
    if _state.received is None:
        _state.received = signum
    if not _state.interrupted and any(_state.scopes):
        _state.interrupted = True
        return
    raise KeyboardInterrupt


@contextmanager
def _listening(mode: Mode | None, signals: tuple[int, ...]) -> Iterator[None]:
    """Install the handler of ``signals`` (and ``mode``) for the block; restore both after
    it."""
    previous_handlers = {signum: signal.signal(signum, _on_signal) for signum in signals}
    previous = (_state.mode, _state.listening, _state.interrupted)
    _state.mode, _state.listening, _state.interrupted = mode, True, False
    _state.received = None
    try:
        yield
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
        _state.mode, _state.listening, _state.interrupted = previous


@contextmanager
def on_interrupt(mode: Mode, *, signals: tuple[int, ...] = (signal.SIGINT,)
                 ) -> Iterator[None]:
    """Within the block, a Ctrl-C during a search stops it and then ``"keep"`` returns the
    best result found so far (marked interrupted) or ``"raise"`` raises
    :class:`KeyboardInterrupt` (see the module text). ``signals`` are the signals handled
    so (:data:`STOP_SIGNALS`: SIGTERM and SIGHUP as Ctrl-C). Outside the main thread: no
    effect.

    Examples
    --------
    >>> with on_interrupt("raise"):
    ...     try:
    ...         with stoppable():
    ...             request()
    ...     except KeyboardInterrupt:
    ...         print("stopped")
    stopped
    """
    check_choice("mode", mode, ("keep", "raise"))
    if not _main_thread():
        yield
        return
    if _state.listening:  # nested: only the mode changes
        previous = _state.mode
        _state.mode = mode
        try:
            yield
        finally:
            _state.mode = previous
        return
    with _listening(mode, tuple(signals)):
        yield


@contextmanager
def stoppable() -> Iterator[Search]:
    """A method's search: a Ctrl-C within it stops it (module text). Yields a
    :class:`Search` whose ``interrupted`` is set when the block ends.

    Outside any :func:`on_interrupt` block Ctrl-C is left to Python (it raises
    :class:`KeyboardInterrupt`). In mode ``"raise"``, and when the search ends with an error
    after an interrupt (e.g. no solution at all), the block raises
    :class:`KeyboardInterrupt`.
    """
    search = Search()
    if not _main_thread() or not _state.listening:
        yield search
        return
    with _nothing():
        _state.scopes.append(True)
        try:
            yield search
        except KeyboardInterrupt:
            raise
        except Exception as error:
            if _state.interrupted and _state.mode is not None:
                raise KeyboardInterrupt(f"the search stopped without a result ({error})") \
                    from error
            raise
        finally:
            _state.scopes.pop()
            search.interrupted = _state.interrupted
        if search.interrupted and _state.mode == "raise":
            raise KeyboardInterrupt


@contextmanager
def unstoppable() -> Iterator[None]:
    """Work that must finish once begun (the audit of a pattern): within a search, a first
    Ctrl-C only marks the search interrupted and the work goes on."""
    if not _main_thread():
        yield
        return
    _state.scopes.append(False)
    try:
        yield
    finally:
        _state.scopes.pop()


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def stopping() -> bool:
    """True in a search (the innermost scope) after a Ctrl-C: stop as at a time limit."""
    return (_state.interrupted and bool(_state.scopes) and _state.scopes[-1]
            and _main_thread())


def watching() -> bool:
    """True in a search that a Ctrl-C would stop (solvers then attach their interrupt
    callbacks)."""
    return _state.listening and bool(_state.scopes) and _state.scopes[-1] and _main_thread()


def interrupted() -> bool:
    """A Ctrl-C has stopped a search of the current :func:`on_interrupt` block."""
    return _state.interrupted


def received() -> int | None:
    """The first stop signal of the current, or else the last, :func:`on_interrupt` block
    (None: none came).

    Examples
    --------
    >>> import signal
    >>> with on_interrupt("keep", signals=STOP_SIGNALS):
    ...     with stoppable():
    ...         signal.raise_signal(signal.SIGTERM)
    >>> received() == signal.SIGTERM
    True
    """
    return _state.received


def request() -> None:
    """Mark an interrupt as the first Ctrl-C during a search does (tests; the solver's
    worker process)."""
    _state.interrupted = True


def reset() -> None:
    """Forget a marked interrupt (the solver's worker process, before each solve)."""
    _state.interrupted = False


def listen() -> None:
    """Take Ctrl-C for the rest of the process: each only marks an interrupt, never raises
    (the solver's worker process, which its caller ends when it must)."""
    signal.signal(signal.SIGINT, lambda signum, frame: request())
    _state.listening = True
