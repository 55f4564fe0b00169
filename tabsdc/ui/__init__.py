"""A web app on this machine for protecting a table without writing code.

``tabsdc ui`` (or ``python -m tabsdc.ui``) serves it on 127.0.0.1. The page walks six steps,
each calling the toolkit's public API: Data (upload, preview, columns), Hierarchies, Rules
(primaries and the status map), Protect (suppression, rounding or CTA in a worker process
that can be cancelled), Check (audit, attack, quality figures) and Download (publishable
file, internal table, report, and a Python script that reproduces the session).

Modules: :mod:`~tabsdc.ui._inputs` (uploads), :mod:`~tabsdc.ui._choices` (the page's choices
as rules and hierarchies), :mod:`~tabsdc.ui._session` (one tab's state),
:mod:`~tabsdc.ui._jobs` and :mod:`~tabsdc.ui._tasks` (work in a worker process),
:mod:`~tabsdc.ui._script` (the reproducing script), :mod:`~tabsdc.ui._app` (HTTP) and
:mod:`~tabsdc.ui._server` (running it). The HTTP part needs the ``ui`` extra
(``pip install sdctoolkit[ui]``: Starlette and uvicorn).
"""

__all__ = ["create_app", "serve"]


def __getattr__(name: str):
    if name == "create_app":
        from tabsdc.ui._app import create_app

        return create_app
    if name == "serve":
        from tabsdc.ui._server import serve

        return serve
    raise AttributeError(name)
