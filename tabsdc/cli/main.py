"""The runner shared by ``tabsdc`` and ``microsdc``: one parser shape, one error handling.

Exit statuses, the same for every command of both programs:

* 0: done (the table is protected, every check passed);
* 1: done, but the result is not protected or a check failed (the verdict of the command),
  or the method found no result it could verify within its time limit
  (:class:`~tabsdc.errors.NoSolutionError`);
* 2: bad input: a file, option or table the command cannot use (one line naming the file,
  line, cell or column); also argparse's own usage errors;
* 3: internal error (one line; ``--debug`` shows the traceback);
* 130: interrupted (Ctrl-C): one line saying what was interrupted, after how long and the last
  progress line; outputs are written only once the work is done, all of them or none, each
  whole. A Ctrl-C during a search stops it within seconds (:mod:`tabsdc.interrupts`, mode
  ``"raise"``); with ``--keep-best`` (mode ``"keep"``) the command writes the best result of
  the search that passes its checks, marked interrupted, and still exits 130. SIGTERM (a
  scheduler, ``timeout``, ``kill``) and SIGHUP (a closed terminal) are handled the same way
  and exit with 128 + the signal's number: 143 and 129. The solver's worker processes end
  with the command.

Outputs are checked before the work starts (:func:`tabsdc.cli.io.check_outputs`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence

import pandas as pd

from sdcreport.files import OutputPathError
from tabsdc import interrupts
from tabsdc.cli.adjust import add_adjust_command
from tabsdc.cli.argus import add_argus_command
from tabsdc.cli.audit import add_audit_command
from tabsdc.cli.ckm import add_ckm_command, add_ptable_command
from tabsdc.cli.demo import add_demo_command
from tabsdc.cli.io import check_outputs
from tabsdc.cli.options import Commands, KeptBest
from tabsdc.cli.protect import add_protect_command
from tabsdc.cli.round import add_round_command
from tabsdc.cli.rules import add_rules_command
from tabsdc.cli.ui import add_ui_command
from tabsdc.errors import NoSolutionError, TabSDCError

__all__ = ["main", "build_parser", "run", "interrupted_status", "COMMANDS", "EXIT_OK",
           "EXIT_NOT_PROTECTED", "EXIT_BAD_INPUT", "EXIT_INTERNAL_ERROR", "EXIT_INTERRUPTED"]

EXIT_OK = 0
EXIT_NOT_PROTECTED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130

#: A command's registration: adds its subparser (with ``run`` set) to the subcommands.
Registration = Callable[[Commands], None]

#: The ``tabsdc`` commands, in the order ``tabsdc --help`` lists them. A new command is a
#: module with a registration function (taking the object ``add_subparsers()`` returns and
#: setting ``run``), appended here.
COMMANDS: list[Registration] = [
    add_rules_command, add_protect_command, add_audit_command, add_round_command,
    add_ptable_command, add_ckm_command, add_adjust_command, add_demo_command,
    add_argus_command, add_ui_command,
]

#: Errors of every program that are the user's to fix (exit status 2).
_FILE_ERRORS = (OutputPathError, OSError, UnicodeDecodeError, pd.errors.ParserError,
                pd.errors.EmptyDataError)


def build_parser(
    prog: str, description: str, registrations: Sequence[Registration], example: str
) -> argparse.ArgumentParser:
    """The top-level parser of a program: its commands, and an example at the end of --help.

    Examples
    --------
    >>> parser = build_parser("tabsdc", "Tables.", COMMANDS, "tabsdc demo")
    >>> parser.parse_args(["audit", "t.jj", "--prior-q", "20"]).prior_q
    20.0
    """
    parser = argparse.ArgumentParser(
        prog=prog, description=description, epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in registrations:
        register(commands)
    return parser


def run(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    user_errors: tuple[type[BaseException], ...],
) -> int:
    """Parse ``argv``, check the outputs, run the command; returns the exit status (see the
    module text). ``user_errors`` are the program's own error types (exit status 2)."""
    args = parser.parse_args(argv)
    name = f"{parser.prog} {args.command}"
    args.written = []
    args.last_progress = None
    started = time.monotonic()
    mode = "keep" if getattr(args, "keep_best", False) else "raise"
    try:
        with interrupts.on_interrupt(mode, signals=interrupts.STOP_SIGNALS):
            check_outputs(args)
            return args.run(args)
    except NoSolutionError as error:
        print(f"{name}: no verified result: {error}", file=sys.stderr)
        return EXIT_NOT_PROTECTED
    except (*user_errors, *_FILE_ERRORS) as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as error:
        if getattr(args, "debug", False):
            traceback.print_exc()
        written = ", ".join(map(str, args.written))
        note = f"; {error}" if str(error) else ""
        if isinstance(error, KeptBest):
            done = f": written {written}"
        else:
            done = (f"; written before the interrupt: {written}" if args.written
                    else "; no output written")
        last = f"; last progress: {args.last_progress}" if args.last_progress else ""
        signum = interrupts.received()
        by = "" if signum in (None, signal.SIGINT) else f" by {signal.Signals(signum).name}"
        _say(f"{name}: interrupted{by} after {time.monotonic() - started:.1f} s{last}{note}"
             f"{done}")
        return interrupted_status(signum)
    except Exception as error:  # every other exception is a bug: one line, status 3
        if getattr(args, "debug", False):
            traceback.print_exc()
        hint = "" if getattr(args, "debug", False) else " (--debug shows the traceback)"
        print(f"{name}: internal error: {type(error).__name__}: {error}{hint}",
              file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def interrupted_status(signum: int | None) -> int:
    """The exit status of a command stopped by the signal ``signum``: 128 + its number, the
    shells' convention (130 for Ctrl-C and for an interrupt without a signal).

    Examples
    --------
    >>> interrupted_status(signal.SIGTERM), interrupted_status(None)
    (143, 130)
    """
    return EXIT_INTERRUPTED if signum is None else 128 + int(signum)


def _say(line: str) -> None:
    """Print the last line on standard error, which may be gone (SIGHUP: a closed
    terminal)."""
    try:
        print(line, file=sys.stderr)
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tabsdc`` command line; returns the exit status."""
    parser = build_parser(
        "tabsdc", "Statistical disclosure control of tables: sensitivity rules, cell "
        "suppression, audit, rounding and controlled tabular adjustment.", COMMANDS,
        "tabsdc protect survey.csv --dims A88 NUTS3 --value TURNOVER --p 10 --freq 3 "
        "--out protected.jj --publish publish.csv --html report.html")
    return run(parser, argv, (TabSDCError,))
