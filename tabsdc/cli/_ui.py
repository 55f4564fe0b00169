"""The ``tabsdc ui`` subcommand: the web app for protecting a table in the browser.

``tabsdc ui [--port N] [--no-browser] [--max-upload-mb MB] [--max-sessions N]
[--max-jobs N] [--idle-minutes M]`` serves the app on 127.0.0.1 (a free port unless
``--port`` is given), prints its address and opens it in the browser.
It needs the ``ui`` extra: ``pip install sdctoolkit[ui]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tabsdc._errors import InputError
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import Commands, add_command

#: Default upload limit of the command, in megabytes.
MAX_UPLOAD_MB = 200.0
#: Default number of sessions at once (as :data:`tabsdc.ui._registry.DEFAULT_MAX_SESSIONS`).
MAX_SESSIONS = 20
#: Default minutes of silence that end a session (as
#: :data:`tabsdc.ui._registry.DEFAULT_IDLE_MINUTES`).
IDLE_MINUTES = 30.0


def add_ui_command(commands: Commands) -> None:
    """Add ``ui`` to the ``tabsdc`` subcommands (its ``run`` is :func:`run_ui`)."""
    parser = add_command(
        commands, "ui", help=COMMANDS["ui"].help,
        example="tabsdc ui --port 8050 --no-browser")
    _add_options(parser)
    parser.set_defaults(run=run_ui)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one, printed)")
    parser.add_argument("--no-browser", action="store_true",
                        help="do not open the browser (print the address only)")
    parser.add_argument("--max-upload-mb", type=float, default=MAX_UPLOAD_MB,
                        help="largest upload accepted, in MB (default %(default)g)")
    parser.add_argument("--max-sessions", type=int, default=MAX_SESSIONS,
                        help="browser tabs (sessions) at once (default %(default)d)")
    parser.add_argument("--max-jobs", type=int, default=None,
                        help="computations running at once over every tab (default: the "
                        "number of cores, at least 2)")
    parser.add_argument("--idle-minutes", type=float, default=IDLE_MINUTES,
                        help="a session not heard from for this long ends: its computation "
                        "is stopped and its files deleted (default %(default)g)")


def run_ui(args: argparse.Namespace) -> int:
    """Serve the app until Ctrl+C; exit status 2 when the ``ui`` extra is missing or the
    port is taken."""
    try:
        from tabsdc.ui._server import serve
    except ImportError as error:
        print(f"tabsdc ui: error: the web app needs the ui extra ({error.name} is missing): "
              "pip install 'sdctoolkit[ui]'", file=sys.stderr)
        return 2
    limits = {"max_sessions": args.max_sessions, "idle_minutes": args.idle_minutes}
    if args.max_jobs is not None:
        limits["max_jobs"] = args.max_jobs
    try:
        serve(args.port, open_browser=not args.no_browser, max_upload_mb=args.max_upload_mb,
              **limits)
    except InputError as error:
        print(f"tabsdc ui: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"tabsdc ui: error: cannot listen on 127.0.0.1:{args.port} ({error})",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tabsdc.ui``: the same as ``tabsdc ui``."""
    parser = argparse.ArgumentParser(prog="python -m tabsdc.ui",
                                     description=__doc__.splitlines()[0])
    _add_options(parser)
    return run_ui(parser.parse_args(argv))
