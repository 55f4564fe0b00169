"""Run the web app on this machine: 127.0.0.1, a free port (or the one asked for)."""

from __future__ import annotations

import socket
import threading
import webbrowser

from tabsdc.ui._app import DEFAULT_MAX_JOBS, DEFAULT_MAX_UPLOAD_MB, HOST, create_app
from tabsdc.ui._registry import DEFAULT_IDLE_MINUTES, DEFAULT_MAX_SESSIONS


def listening_socket(port: int = 0) -> socket.socket:
    """A socket bound to ``127.0.0.1:port`` (0: a free port chosen by the system).

    Examples
    --------
    >>> sock = listening_socket()
    >>> sock.getsockname()[0], sock.getsockname()[1] > 0
    ('127.0.0.1', True)
    >>> sock.close()
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(64)
    return sock


def serve(port: int = 0, open_browser: bool = True,
          max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB, *,
          max_sessions: int = DEFAULT_MAX_SESSIONS, max_jobs: int = DEFAULT_MAX_JOBS,
          idle_minutes: float = DEFAULT_IDLE_MINUTES) -> None:
    """Serve the app until Ctrl+C; prints its address and opens it in the browser.

    Nothing is reachable from other machines (the server listens on 127.0.0.1 only), and
    only the app's own page may use it (:mod:`tabsdc.ui._guard`); each session's files live
    in a temporary folder removed when the session ends (idle for ``idle_minutes``, its tab
    closed) or the server stops. The limits are those of :func:`~tabsdc.ui._app.create_app`.
    """
    import uvicorn

    sock = listening_socket(port)
    port = sock.getsockname()[1]
    try:
        app = create_app(max_upload_mb, port=port, max_sessions=max_sessions,
                         max_jobs=max_jobs, idle_minutes=idle_minutes)
    except BaseException:
        sock.close()
        raise
    url = f"http://{HOST}:{port}/"
    print(f"tabsdc ui: open {url} in your browser (Ctrl+C stops the app)", flush=True)
    if open_browser:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
