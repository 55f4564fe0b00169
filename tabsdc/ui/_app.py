"""The web app's HTTP interface: one page, and a small JSON API over :class:`Session`.

The page (``static/index.html`` with plain JavaScript) asks for a session when it loads and
sends every request under that session's id, so each browser tab has its own state. Uploads
are sent as the request body (not multipart) and streamed into the session folder, stopping
at the size limit. Every request must come from the app's own page
(:class:`~tabsdc.ui._guard.RequestGuard`: 403 otherwise). Errors come back as
``{"error": sentence}``: 400 for a choice or a file that cannot be used, 404 for a session
that has ended, 413 for an upload over the limit, 429 when the app's limit of sessions or
of computations running at once is reached, 500 for an error of the app itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sdcreport._files import atomic_write
from tabsdc._errors import InputError, TabSDCError
from tabsdc.ui._choices import options
from tabsdc.ui._guard import RequestGuard, allowed_hosts
from tabsdc.ui._jobs import LimitReached
from tabsdc.ui._registry import DEFAULT_IDLE_MINUTES, DEFAULT_MAX_SESSIONS, SessionEnded, Sessions
from tabsdc.ui._session import Session

#: Default upload limit in megabytes.
DEFAULT_MAX_UPLOAD_MB = 200
#: Default number of computations (worker processes) running at once: the machine's cores.
DEFAULT_MAX_JOBS = max(2, os.cpu_count() or 1)
#: The address the app is served on.
HOST = "127.0.0.1"

_MEDIA = {"publishable": "text/csv", "internal-csv": "text/csv", "internal-jj": "text/plain",
          "report": "text/html", "script": "text/plain",
          "notebook": "application/x-ipynb+json"}


class UploadTooLarge(InputError):
    """An upload over the session's size limit."""


def create_app(max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB,
               root: str | Path | None = None, *, port: int | None = None,
               host: str = HOST, max_sessions: int = DEFAULT_MAX_SESSIONS,
               max_jobs: int = DEFAULT_MAX_JOBS,
               idle_minutes: float = DEFAULT_IDLE_MINUTES) -> Starlette:
    """The web app: the page, its static files and the JSON API.

    Parameters
    ----------
    max_upload_mb : float
        Largest upload accepted, in megabytes (10^6 bytes).
    root : path, optional
        Where session folders are made (default: the system's temporary folder).
    port : int, optional
        The port the app is served on: requests must name ``host:port`` (or
        ``localhost:port``) as their ``Host``. None accepts these names on any port.
    host : str
        The address the app is served on (``127.0.0.1``).
    max_sessions : int
        Sessions (browser tabs) at once; one more is refused with 429.
    max_jobs : int
        Computations running at once over every session; one more is refused with 429.
    idle_minutes : float
        Minutes without a request after which a session ends: its worker is stopped and
        its folder deleted (an open page sends a sign of life every minute).

    Examples
    --------
    >>> app = create_app(max_upload_mb=5, port=8050)
    >>> sorted(r.path for r in app.routes if r.path.startswith("/api/{sid}"))[:3]
    ['/api/{sid}/attack', '/api/{sid}/bases', '/api/{sid}/cancel']
    """
    sessions = Sessions(int(max_upload_mb * 1_000_000), root, max_sessions=max_sessions,
                        max_jobs=max_jobs, idle_timeout=idle_minutes * 60)
    static = files("tabsdc.ui").joinpath("static")

    def api(handler: Callable[[Session, Request], Awaitable[Any]]) -> Callable:
        async def endpoint(request: Request) -> Response:
            try:
                session = sessions.get(request.path_params["sid"])
                result = await handler(session, request)
            except Exception as error:  # noqa: BLE001 - every failure becomes a sentence
                return _error_response(error)
            return result if isinstance(result, Response) else JSONResponse(result)
        return endpoint

    def call(method: Callable[..., Any]) -> Callable:
        """An endpoint calling a session method (in a thread) with the JSON body."""
        async def handler(session: Session, request: Request) -> Any:
            body = await _json(request)
            return await run_in_threadpool(method, session, body)
        return api(handler)

    def info() -> dict[str, Any]:
        """What the page needs to know of the app: its upload limit, the methods offered."""
        return {"max_upload_mb": max_upload_mb, "options": options()}

    async def new_session(request: Request) -> Response:
        try:
            session = await run_in_threadpool(sessions.create)
        except LimitReached as error:
            return _error_response(error)
        return JSONResponse({"id": session.id, **info()})

    async def upload(session: Session, request: Request) -> Any:
        name = request.query_params.get("name", "")
        path = await run_in_threadpool(session.upload_path, name)
        await _receive(request, path, session.max_upload, name)
        dim = request.query_params.get("dim")
        if dim:
            return await run_in_threadpool(session.load_hierarchy_file, dim, path, name)
        return await run_in_threadpool(session.load_source, path, name)

    async def download(session: Session, request: Request) -> Any:
        kind = request.path_params["kind"]
        symbol = request.query_params.get("symbol", "x")
        path = await run_in_threadpool(session.download, kind, symbol)
        return FileResponse(path, media_type=_MEDIA.get(kind), filename=path.name)

    async def script(session: Session, request: Request) -> Any:
        return await run_in_threadpool(session.script,
                                       request.query_params.get("symbol", "x"))

    async def leave(request: Request) -> Response:
        sessions.leave(request.path_params["sid"])
        return Response(status_code=204)

    async def close(session: Session, request: Request) -> Any:
        await run_in_threadpool(sessions.close, session.id)
        return {"closed": True}

    async def index(request: Request) -> Response:
        return Response(static.joinpath("index.html").read_text(encoding="utf-8"),
                        media_type="text/html", headers={"cache-control": "no-cache"})

    async def expire_idle_sessions() -> None:
        period = min(30.0, sessions.idle_timeout / 4)
        while True:
            await asyncio.sleep(period)
            await run_in_threadpool(sessions.expire)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        sweeper = asyncio.create_task(expire_idle_sessions())
        try:
            yield
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            sessions.close_all()

    routes = [
        Route("/", index),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
        Route("/api/session", new_session, methods=["POST"]),
        Route("/api/session/info", lambda request: JSONResponse(info()), methods=["GET"]),
        Route("/api/{sid}/state", call(lambda s, b: s.state()), methods=["GET"]),
        Route("/api/{sid}/ping", call(lambda s, b: {"alive": True}), methods=["GET"]),
        Route("/api/{sid}/leave", leave, methods=["POST"]),
        Route("/api/{sid}/upload", api(upload), methods=["POST"]),
        Route("/api/{sid}/example", call(lambda s, b: s.load_example()), methods=["POST"]),
        Route("/api/{sid}/table", call(lambda s, b: s.build_table(
            _object(b, "data"), _object(b, "hierarchies"))), methods=["POST"]),
        Route("/api/{sid}/rules", call(lambda s, b: s.apply_rules(
            _object(b, "rules"), _object(b, "view"))), methods=["POST"]),
        Route("/api/{sid}/view", call(lambda s, b: s.view(_object(b, "view"))),
              methods=["POST"]),
        Route("/api/{sid}/protect", call(Session.start_protection), methods=["POST"]),
        Route("/api/{sid}/bases", call(Session.start_base_choice), methods=["POST"]),
        Route("/api/{sid}/attack", call(lambda s, b: s.start_attack(b.get("q", 20))),
              methods=["POST"]),
        Route("/api/{sid}/job", call(lambda s, b: s.job_state()), methods=["GET"]),
        Route("/api/{sid}/cancel", call(lambda s, b: s.cancel()), methods=["POST"]),
        Route("/api/{sid}/check", call(lambda s, b: s.check()), methods=["GET"]),
        Route("/api/{sid}/script", api(script), methods=["GET"]),
        Route("/api/{sid}/download/{kind}", api(download), methods=["GET"]),
        Route("/api/{sid}/close", api(close), methods=["POST"]),
    ]
    guard = Middleware(RequestGuard, hosts=allowed_hosts(host, port))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[guard])
    app.state.sessions = sessions
    return app


def _error_response(error: Exception) -> JSONResponse:
    """The answer to a request that failed: its status and one sentence."""
    if isinstance(error, SessionEnded):
        return JSONResponse({"error": str(error)}, status_code=404)
    if isinstance(error, UploadTooLarge):
        return JSONResponse({"error": str(error)}, status_code=413)
    if isinstance(error, LimitReached):
        return JSONResponse({"error": str(error)}, status_code=429)
    if isinstance(error, TabSDCError | ValueError):
        return JSONResponse({"error": str(error)}, status_code=400)
    if isinstance(error, KeyError):
        return JSONResponse({"error": f"the request lacks the choice {error.args[0]!r}"},
                            status_code=400)
    return JSONResponse({"error": f"the app failed ({type(error).__name__}: {error}); the "
                                  "session is kept: try again, or reload the page"},
                        status_code=500)


def _object(body: dict[str, Any], key: str) -> dict[str, Any]:
    """``body[key]`` as a JSON object (absent: empty)."""
    value = body.get(key) or {}
    if not isinstance(value, dict):
        raise InputError(f"the request's {key!r} must be a JSON object, not {value!r}")
    return value


async def _json(request: Request) -> dict[str, Any]:
    if request.method == "GET":
        return {}
    body = await request.body()
    if not body:
        return {}
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise InputError(f"the request is not valid JSON ({error})") from error
    if not isinstance(data, dict):
        raise InputError("the request must be a JSON object")
    return data


async def _receive(request: Request, path: Path, limit: int, name: str) -> None:
    """Stream the request body into ``path`` (whole or not at all,
    :func:`sdcreport._files.atomic_write`); past ``limit`` bytes, stop writing and refuse the
    upload (the rest of the body is read and dropped, so the browser receives the message
    rather than a broken connection)."""
    size = 0
    with atomic_write(path, "wb") as handle:
        async for chunk in request.stream():
            size += len(chunk)
            if size <= limit:
                handle.write(chunk)
        if size > limit:
            raise UploadTooLarge(f"{name} is larger than the upload limit of {limit / 1e6:g} "
                                 "MB; start the app with a larger --max-upload-mb, or upload "
                                 "a smaller file")
        if size == 0:
            raise InputError(f"{name} is empty")
