"""The sessions of the web app: how many there may be, and when an idle one ends.

Each browser tab has a :class:`~tabsdc.ui._session.Session`. :class:`Sessions` creates them
up to a limit, finds them by id (each request counts as a sign of life) and ends those
that went quiet: a session not heard from for ``idle_timeout`` seconds, or one whose page
said it was leaving (the tab was closed) and did not come back within ``LEAVE_GRACE``
seconds (a reload comes back at once). Ending a session stops its worker process and
deletes its temporary folder. The page sends a sign of life every minute while it is
open, so only closed, killed or long-asleep tabs end.
"""

from __future__ import annotations

import threading
from pathlib import Path
from time import monotonic

from tabsdc._errors import InputError
from tabsdc.ui._jobs import JobSlots, LimitReached
from tabsdc.ui._session import Session

#: Default number of sessions (browser tabs) at once.
DEFAULT_MAX_SESSIONS = 20
#: Default minutes without a sign of life after which a session ends.
DEFAULT_IDLE_MINUTES = 30.0
#: Seconds a page that said it was leaving has to come back (a reload) before its session
#: ends.
LEAVE_GRACE = 30.0


class SessionEnded(Exception):
    """A request for a session that does not exist (ended, expired, or never made)."""


class Sessions:
    """The app's sessions, their limits and their expiry.

    Parameters
    ----------
    max_upload : int
        Largest upload of a session, in bytes.
    root : path, optional
        Where session folders are made.
    max_sessions : int
        Sessions at once; one more is refused with :class:`LimitReached`.
    max_jobs : int
        Computations (worker processes) running at once over every session.
    idle_timeout : float
        Seconds without a request after which a session ends.

    Examples
    --------
    >>> sessions = Sessions(10**6, max_sessions=1, max_jobs=1, idle_timeout=60)
    >>> first = sessions.create()
    >>> sessions.get(first.id) is first
    True
    >>> try:
    ...     sessions.create()
    ... except LimitReached as error:
    ...     print(str(error)[:37])
    1 session is open already in this app
    >>> sessions.expire(now=first.last_seen + 61)
    1
    >>> first.folder.exists()
    False
    """

    def __init__(self, max_upload: int, root: str | Path | None = None, *,
                 max_sessions: int = DEFAULT_MAX_SESSIONS, max_jobs: int = 2,
                 idle_timeout: float = DEFAULT_IDLE_MINUTES * 60) -> None:
        if int(max_sessions) < 1:
            raise InputError(f"the session limit must be at least 1, not {max_sessions!r}")
        if not idle_timeout > 0:
            raise InputError(f"the idle time of a session must be positive, not "
                             f"{idle_timeout / 60:g} minutes")
        self.max_upload = int(max_upload)
        self.root = root
        self.max_sessions = int(max_sessions)
        self.idle_timeout = float(idle_timeout)
        self.slots = JobSlots(max_jobs)
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, sid: str) -> bool:
        return sid in self._sessions

    def __getitem__(self, sid: str) -> Session:
        return self._sessions[sid]

    def values(self) -> list[Session]:
        return list(self._sessions.values())

    def create(self) -> Session:
        """A new session; :class:`LimitReached` when ``max_sessions`` are open."""
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                what = "session is" if self.max_sessions == 1 else "sessions are"
                raise LimitReached(
                    f"{self.max_sessions} {what} open already in this app (its limit, "
                    f"--max-sessions {self.max_sessions}): close another tab of the app, or "
                    f"wait: a closed tab's session ends within {LEAVE_GRACE:g} seconds, an "
                    f"idle one after {self.idle_timeout / 60:g} minutes")
            session = Session(self.max_upload, self.root, slots=self.slots)
            self._sessions[session.id] = session
            return session

    def get(self, sid: str) -> Session:
        """The session ``sid``, marked as alive; :class:`SessionEnded` when there is none."""
        session = self._sessions.get(sid)
        if session is None:
            raise SessionEnded(
                "this session has ended (the app was restarted, or the page was left "
                f"without contact for more than {self.idle_timeout / 60:g} minutes, and its "
                "files were deleted): reload the page to start again")
        session.touch()
        return session

    def leave(self, sid: str) -> None:
        """The page of ``sid`` is being closed: end the session unless it comes back."""
        session = self._sessions.get(sid)
        if session is not None:
            session.left_at = monotonic()

    def close(self, sid: str) -> None:
        """End session ``sid`` now (stop its job, delete its folder)."""
        with self._lock:
            session = self._sessions.pop(sid, None)
        if session is not None:
            session.close()

    def expire(self, now: float | None = None) -> int:
        """End the sessions idle for longer than ``idle_timeout``, and those left more than
        ``LEAVE_GRACE`` seconds ago; returns how many ended."""
        now = monotonic() if now is None else now
        ended = [sid for sid, s in list(self._sessions.items())
                 if now - s.last_seen > self.idle_timeout
                 or (s.left_at is not None and now - s.left_at > LEAVE_GRACE)]
        for sid in ended:
            self.close(sid)
        return len(ended)

    def close_all(self) -> None:
        for sid in list(self._sessions):
            self.close(sid)
