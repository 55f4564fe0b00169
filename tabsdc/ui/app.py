"""The web app's HTTP interface: one page, and a small JSON API over :class:`Session`.

The page (``static/index.html`` with plain JavaScript) asks for a session when it loads and
sends every request under that session's id, so each browser tab has its own state. Uploads
are sent as the request body (not multipart) and streamed into the session folder, stopping
at the size limit. Errors the person can act on come back as ``{"error": message}`` with
status 400 (413 for an upload over the limit, 404 for a session that no longer exists).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sdcreport.files import atomic_write
from tabsdc.errors import InputError, TabSDCError
from tabsdc.ui.choices import options
from tabsdc.ui.session import Session

__all__ = ["create_app", "DEFAULT_MAX_UPLOAD_MB"]

#: Default upload limit in megabytes.
DEFAULT_MAX_UPLOAD_MB = 200

_MEDIA = {"publishable": "text/csv", "internal-csv": "text/csv", "internal-jj": "text/plain",
          "report": "text/html", "script": "text/x-python"}


class UploadTooLarge(InputError):
    """An upload over the session's size limit."""


def create_app(max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB,
               root: str | Path | None = None) -> Starlette:
    """The web app: the page, its static files and the JSON API.

    Parameters
    ----------
    max_upload_mb : float
        Largest upload accepted, in megabytes (10^6 bytes).
    root : path, optional
        Where session folders are made (default: the system's temporary folder).

    Examples
    --------
    >>> app = create_app(max_upload_mb=5)
    >>> sorted(r.path for r in app.routes if r.path.startswith("/api/{sid}"))[:3]
    ['/api/{sid}/attack', '/api/{sid}/bases', '/api/{sid}/cancel']
    """
    sessions: dict[str, Session] = {}
    limit = int(max_upload_mb * 1_000_000)
    static = files("tabsdc.ui").joinpath("static")

    def session_of(request: Request) -> Session:
        session = sessions.get(request.path_params["sid"])
        if session is None:
            raise LookupError("this session has ended (the server was restarted or the page "
                              "is old): reload the page")
        return session

    def api(handler: Callable[[Session, Request], Awaitable[Any]]) -> Callable:
        async def endpoint(request: Request) -> Response:
            try:
                session = session_of(request)
                result = await handler(session, request)
            except LookupError as error:
                return JSONResponse({"error": str(error).strip("'\"")}, status_code=404)
            except UploadTooLarge as error:
                return JSONResponse({"error": str(error)}, status_code=413)
            except (TabSDCError, ValueError, KeyError) as error:
                return JSONResponse({"error": _message(error)}, status_code=400)
            return result if isinstance(result, Response) else JSONResponse(result)
        return endpoint

    def call(method: Callable[..., Any]) -> Callable:
        """An endpoint calling a session method (in a thread) with the JSON body."""
        async def handler(session: Session, request: Request) -> Any:
            body = await _json(request)
            return await run_in_threadpool(method, session, body)
        return api(handler)

    async def new_session(request: Request) -> Response:
        session = Session(limit, root)
        sessions[session.id] = session
        return JSONResponse({"id": session.id, "max_upload_mb": max_upload_mb,
                             "options": options()})

    async def upload(session: Session, request: Request) -> Any:
        name = request.query_params.get("name", "")
        path = session.upload_path(name)
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

    async def close(session: Session, request: Request) -> Any:
        sessions.pop(session.id, None)
        await run_in_threadpool(session.close)
        return {"closed": True}

    async def index(request: Request) -> Response:
        return Response(static.joinpath("index.html").read_text(encoding="utf-8"),
                        media_type="text/html")

    @asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        for session in list(sessions.values()):
            session.close()
        sessions.clear()

    routes = [
        Route("/", index),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
        Route("/api/session", new_session, methods=["POST"]),
        Route("/api/{sid}/upload", api(upload), methods=["POST"]),
        Route("/api/{sid}/example", call(lambda s, b: s.load_example()), methods=["POST"]),
        Route("/api/{sid}/table", call(lambda s, b: s.build_table(
            b.get("data", {}), b.get("hierarchies", {}))), methods=["POST"]),
        Route("/api/{sid}/rules", call(lambda s, b: s.apply_rules(
            b.get("rules", {}), b.get("view"))), methods=["POST"]),
        Route("/api/{sid}/protect", call(Session.start_protection), methods=["POST"]),
        Route("/api/{sid}/bases", call(Session.start_base_choice), methods=["POST"]),
        Route("/api/{sid}/attack", call(lambda s, b: s.start_attack(b.get("q", 20))),
              methods=["POST"]),
        Route("/api/{sid}/job", call(lambda s, b: s.job_state()), methods=["GET"]),
        Route("/api/{sid}/cancel", call(lambda s, b: s.cancel()), methods=["POST"]),
        Route("/api/{sid}/check", call(lambda s, b: s.check()), methods=["GET"]),
        Route("/api/{sid}/download/{kind}", api(download), methods=["GET"]),
        Route("/api/{sid}/close", api(close), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.sessions = sessions
    return app


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
    :func:`sdcreport.files.atomic_write`); past ``limit`` bytes, stop writing and refuse the
    upload (the rest of the body is read and dropped, so the browser receives the message
    rather than a broken connection)."""
    if not name:
        raise InputError("the upload has no file name")
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


def _message(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"missing choice: {error.args[0]}"
    return str(error)
