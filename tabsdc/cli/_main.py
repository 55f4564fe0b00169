"""The runner shared by ``tabsdc`` and ``microsdc``: one parser shape, one error handling.

Exit statuses, the same for every command of both programs:

* 0: done (the table is protected, every check passed);
* 1: done, but the result is not protected or a check failed (the verdict of the command),
  or the method found no result it could verify within its time limit
  (:class:`~tabsdc.NoSolutionError`);
* 2: bad input: a file, option or table the command cannot use (one line naming the file,
  line, cell or column); also argparse's own usage errors;
* 3: internal error (one line; ``--debug`` shows the traceback);
* 130: interrupted (Ctrl-C): one line saying what was interrupted, after how long and the last
  progress line; outputs are written only once the work is done, all of them or none, each
  whole. A Ctrl-C during a search stops it within seconds (:mod:`tabsdc._interrupts`, mode
  ``"raise"``); with ``--keep-best`` (mode ``"keep"``) the command writes the best result of
  the search that passes its checks, marked interrupted, and still exits 130. SIGTERM (a
  scheduler, ``timeout``, ``kill``) and SIGHUP (a closed terminal) are handled the same way
  and exit with 128 + the signal's number: 143 and 129. The solver's worker processes end
  with the command.

Outputs are checked before the work starts (:func:`tabsdc.cli._io.check_outputs`).

A program's commands are a table (:data:`COMMANDS`: name -> module, registration function,
help line). The module of a command is imported only when the command is parsed, so the
program's ``--help`` lists every command without importing any, nor the solvers and plotting
libraries they need.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tabsdc._interrupts as interrupts
from tabsdc._errors import NoSolutionError, TabSDCError

if TYPE_CHECKING:
    from tabsdc.cli._options import Commands

EXIT_OK = 0
EXIT_NOT_PROTECTED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3
EXIT_INTERRUPTED = 130

#: A command's registration: adds its subparser (with ``run`` set) to the subcommands.
Registration = Callable[["Commands"], None]


@dataclass(frozen=True)
class Command:
    """A command of a program, as its ``--help`` lists it without importing it.

    Attributes
    ----------
    module : str
        The module that holds the command (imported only when the command is parsed: when it
        runs or its own ``--help`` is asked for).
    register : str
        The name of the module's registration function (:data:`Registration`).
    help : str
        The one line the program's ``--help`` shows (the command's parser shows it too).
    """

    module: str
    register: str
    help: str

    def load(self) -> Registration:
        """The registration function, its module imported."""
        return getattr(importlib.import_module(self.module), self.register)


#: The ``tabsdc`` commands, in the order ``tabsdc --help`` lists them. A new command is a
#: module with a registration function (taking the object ``add_subparsers()`` returns and
#: setting ``run``), entered here.
COMMANDS: dict[str, Command] = {
    "sample": Command("tabsdc.cli._sample", "add_sample_command",
                      "write a sample data set shipped with the package as a CSV file"),
    "rules": Command("tabsdc.cli._rules", "add_rules_command",
                     "apply sensitivity rules to microdata, interior cells or a JJ table"),
    "protect": Command("tabsdc.cli._protect", "add_protect_command",
                       "complementary cell suppression (microdata CSV + rules, or a JJ file "
                       "with primaries)"),
    "audit": Command("tabsdc.cli._audit", "add_audit_command",
                     "interval attack on a table with hidden cells; protection verdicts"),
    "round": Command("tabsdc.cli._round", "add_round_command",
                     "round a table: the four rules, controlled or unbiased controlled "
                     "rounding, with quality statistics and the audit of the release"),
    "ptable": Command("tabsdc.cli._ckm", "add_ptable_command",
                      "build a perturbation table of the cell key method (tau-ARGUS format)"),
    "ckm": Command("tabsdc.cli._ckm", "add_ckm_command",
                   "publish a frequency table from microdata with cell-key noise"),
    "adjust": Command("tabsdc.cli._adjust", "add_adjust_command",
                      "controlled tabular adjustment of a JJ table (CTA, MDI-CTA)"),
    "demo": Command("tabsdc.cli._demo", "add_demo_command",
                    "rules, suppression, audit, rounding and CTA of the shipped business "
                    "survey, as a report"),
    "argus": Command("tabsdc.cli._argus", "add_argus_command",
                     "run a tau-ARGUS batch file (.arb) with this toolkit's methods"),
    "ui": Command("tabsdc.cli._ui", "add_ui_command",
                  "a web app on this machine: upload data, choose rules, protect, check and "
                  "download, in the browser"),
}


def build_parser(
    prog: str,
    description: str,
    commands: Mapping[str, Command],
    example: str,
    argv: Sequence[str] | None = None,
) -> argparse.ArgumentParser:
    """The top-level parser of a program: its commands, and an example at the end of --help.

    Only the command ``argv`` names is imported and given its options (every command when
    ``argv`` is None); the others are listed by name and help line, so that the program's
    ``--help`` imports no command (the pattern of pip's ``commands_dict``).

    Examples
    --------
    >>> parser = build_parser("tabsdc", "Tables.", COMMANDS, "tabsdc demo")
    >>> parser.parse_args(["audit", "t.jj", "--prior-q", "20"]).prior_q
    20.0
    """
    parser = argparse.ArgumentParser(
        prog=prog, description=description, epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = None if argv is None else next((a for a in argv if not a.startswith("-")), None)
    for name, command in commands.items():
        if argv is None or name == named:
            command.load()(subcommands)
        else:
            subcommands.add_parser(name, help=command.help)
    return parser


def run(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    user_errors: tuple[type[BaseException], ...],
) -> int:
    """Parse ``argv``, check the outputs, run the command; returns the exit status (see the
    module text). ``user_errors`` are the program's own error types (exit status 2)."""
    args = parser.parse_args(argv)
    import pandas as pd

    from sdcreport._files import OutputPathError
    from tabsdc.cli._io import check_outputs
    from tabsdc.cli._options import KeptBest

    file_errors = (OutputPathError, OSError, UnicodeDecodeError, pd.errors.ParserError,
                   pd.errors.EmptyDataError)
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
    except (*user_errors, *file_errors) as error:
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
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(
        "tabsdc", "Statistical disclosure control of tables: sensitivity rules, cell "
        "suppression, audit, rounding and controlled tabular adjustment.", COMMANDS,
        "tabsdc protect survey.csv --dims A88 NUTS3 --value TURNOVER --p 10 --freq 3 "
        "--out protected.jj --publish publish.csv --html report.html", argv)
    return run(parser, argv, (TabSDCError,))
