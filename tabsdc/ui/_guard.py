"""What keeps other web pages out of the app: the request's address and origin, and the
headers of every response.

The app listens on this machine only, but a page from anywhere, open in the same browser,
can still send requests to ``127.0.0.1``: directly (the browser adds the ``Origin`` of that
page) or through DNS rebinding (a name of the attacker's that resolves to ``127.0.0.1``;
the browser then sends that name as ``Host``). :class:`RequestGuard` refuses both with 403:
a request must name the address the app is bound to as its ``Host``, and when it carries
an ``Origin``, that origin must be the app's own page (``http://`` and the same ``Host``).
Every response carries a Content Security Policy (scripts, styles, images and connections
of the app only; no inline script; no framing), ``X-Frame-Options: DENY``,
``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``; API answers are
not cached.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

#: Headers of every response.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; object-src 'none'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}

#: Names of this machine the app answers to.
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def allowed_hosts(host: str, port: int | None) -> frozenset[str]:
    """The ``Host`` values of requests to an app bound to ``host:port``: the bound address
    and, for a loopback address, ``localhost``; every port of these when ``port`` is None.

    Examples
    --------
    >>> sorted(allowed_hosts("127.0.0.1", 8050))
    ['127.0.0.1:8050', 'localhost:8050']
    >>> sorted(allowed_hosts("::1", 8050))
    ['[::1]:8050', 'localhost:8050']
    """
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names = {name, "localhost"} if name in LOOPBACK else {name}
    if port is None:
        return frozenset(names)
    return frozenset(f"{n}:{port}" for n in names)


class RequestGuard:
    """ASGI middleware: 403 for a foreign ``Host`` or ``Origin``; security headers always.

    Parameters
    ----------
    app : ASGI application
    hosts : iterable of str
        The accepted ``Host`` values (:func:`allowed_hosts`); a value without a port
        accepts that name on any port.
    """

    def __init__(self, app, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(h.lower() for h in hosts)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        refusal = self.refusal(headers.get("host", ""), headers.get("origin"))
        api = scope["path"].startswith("/api/")

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                extra = dict(SECURITY_HEADERS)
                if api:
                    extra["cache-control"] = "no-store"
                message["headers"] = [*message.get("headers", []),
                                      *((k.encode(), v.encode()) for k, v in extra.items())]
            await send(message)

        if refusal is None:
            await self.app(scope, receive, send_with_headers)
            return
        body = json.dumps({"error": refusal}).encode()
        await send_with_headers({"type": "http.response.start", "status": 403, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, host: str, origin: str | None) -> str | None:
        """Why a request with these ``Host`` and ``Origin`` headers is refused (None: it
        is not)."""
        host = host.lower()
        if host not in self.hosts and host.rsplit(":", 1)[0] not in self.hosts:
            return (f"refused: this app answers only requests to its own address "
                    f"({', '.join(sorted(self.hosts))}), not to {host or 'no host'!r}; open "
                    "the address the app printed when it started")
        if origin is not None and origin.lower() != f"http://{host}":
            return (f"refused: a page from {origin!r} may not use this app; only the app's "
                    "own page may")
        return None
