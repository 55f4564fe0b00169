"""Options shared by the commands of ``tabsdc`` and ``microsdc``.

One definition per option, so that every command spells, checks and explains it the same way:
the command itself (:func:`add_command`: help, example, ``--debug``), the table input
(:func:`add_input_options`), the sensitivity rules (:func:`add_rule_options`), the outputs
(:func:`add_output_options`: ``--out/--json/--html/--report/--publish`` with ``--force`` and
``--mkdir``), the time limit (:func:`add_time_limit_option`, > 0 seconds) and ``--keep-best``
(:func:`add_keep_best_option`: on Ctrl-C, write the best checked result found so far).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from sdcreport._report import report_format
from tabsdc._errors import RuleError, TabSDCError
from tabsdc._rules import (
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    RulesResult,
    SensitivityRule,
    apply_rules,
)
from tabsdc._table import Table

#: Output options (destination, flag) in the order their files are written.
OUTPUT_OPTIONS = (("out", "--out"), ("publish", "--publish"), ("json", "--json"),
                  ("html", "--html"), ("report", "--report"), ("log", "--log"))


class Arguments(Protocol):
    """A parser or an argument group of one: what takes options."""

    def add_argument(self, *names: str, **kwargs: Any) -> argparse.Action:
        """A new option."""


class Commands(Protocol):
    """What a command's registration function receives: the object returned by
    ``ArgumentParser.add_subparsers()``."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """A new subcommand parser."""


def add_command(
    commands: Commands, name: str, *, help: str, example: str, description: str | None = None
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` ends with ``example``, with ``--debug``.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> sub = add_command(parser.add_subparsers(dest="command"), "rules", help="apply rules",
    ...                   example="tabsdc rules survey.csv --dims A --p 10")
    >>> sub.epilog
    'example:\\n  tabsdc rules survey.csv --dims A --p 10'
    """
    parser = commands.add_parser(
        name, help=help, description=description or help[:1].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an internal error")
    return parser


def positive_seconds(text: str) -> float:
    """``--time-limit``: a number of seconds > 0.

    Examples
    --------
    >>> positive_seconds("2.5")
    2.5
    >>> positive_seconds("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of seconds > 0, not '-1'
    """
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, not {text!r}")
    return seconds


def processes(text: str) -> int:
    """``--n-jobs``: a number of processes >= 1, or -1 for one per core.

    Examples
    --------
    >>> processes("2"), processes("-1")
    (2, -1)
    >>> processes("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of processes >= 1 (or -1: one per core), not '0'
    """
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1 and count != -1:
        raise argparse.ArgumentTypeError(
            f"must be a number of processes >= 1 (or -1: one per core), not {text!r}")
    return count


def whole_number(text: str, least: int = 0) -> int:
    """``--decimals`` (and, with ``least=2``, ``--base``): a whole number >= ``least``.

    Examples
    --------
    >>> whole_number("2")
    2
    >>> whole_number("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 0, not '1.5'
    """
    try:
        number = int(text)
    except ValueError:
        number = least - 1
    if number < least:
        raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, not {text!r}")
    return number


def report_path(text: str) -> Path:
    """``--report``: a file name whose suffix is a report format (.html, .md, .json, .txt).

    Examples
    --------
    >>> report_path("audit.md").name
    'audit.md'
    >>> report_path("audit.pdf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: cannot tell the report format from 'audit.pdf': use one of ...
    """
    try:
        report_format(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return Path(text)


#: Seconds a command's solve takes at most without ``--time-limit``.
DEFAULT_TIME_LIMIT = 300.0


def add_time_limit_option(parser: argparse.ArgumentParser, what: str = "the whole run") -> None:
    """``--time-limit S`` (seconds > 0; default :data:`DEFAULT_TIME_LIMIT`, see
    :func:`time_limit_of`)."""
    parser.add_argument("--time-limit", type=positive_seconds, metavar="S",
                        help=f"seconds for {what} (default {DEFAULT_TIME_LIMIT:g}); a stopped "
                        "solve is reported with its gap")


def time_limit_of(args: argparse.Namespace) -> float:
    """The command's time limit: ``--time-limit``, or :data:`DEFAULT_TIME_LIMIT` (the first
    line of :func:`progress_printer` says which).

    Examples
    --------
    >>> time_limit_of(argparse.Namespace(time_limit=None))
    300.0
    """
    return DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit


def time_limit_line(args: argparse.Namespace) -> str:
    """What the first progress line of a command says of its time limit.

    Examples
    --------
    >>> time_limit_line(argparse.Namespace(time_limit=None))
    'time limit 300 s (default; --time-limit to change)'
    >>> time_limit_line(argparse.Namespace(time_limit=60.0))
    'time limit 60 s (--time-limit)'
    """
    if args.time_limit is None:
        return f"time limit {DEFAULT_TIME_LIMIT:g} s (default; --time-limit to change)"
    return f"time limit {args.time_limit:g} s (--time-limit)"


def add_solver_option(parser: argparse.ArgumentParser) -> None:
    """``--solver NAME``: the LP/MILP solver of the commands whose method takes ``solver=``
    (default ``highs``; an unknown name is refused by the API with exit status 2).

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_solver_option(parser)
    >>> parser.parse_args(["--solver", "cbc"]).solver
    'cbc'
    """
    parser.add_argument("--solver", default="highs",
                        help="LP/MILP solver: highs (default) or a PuLP solver name such as "
                             "cbc (see docs/solvers.md)")


def add_keep_best_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--keep-best``: on Ctrl-C, stop the search and write the best ``what`` found so far
    that passes its checks (exit status still 130)."""
    parser.add_argument("--keep-best", action="store_true",
                        help=f"on Ctrl-C, stop the search within seconds and write the best "
                        f"{what} found so far to the outputs, marked interrupted in the JSON "
                        "and summary (exit status still 130); nothing is written when none "
                        "passes its checks")


class KeptBest(KeyboardInterrupt):  # noqa: N818 - an interrupt, reported as one
    """Raised by a command once it has written the best result of an interrupted search
    (``--keep-best``): the exit status is 130 and the one line names the files written."""


def refuse_unchecked(passed: bool, what: str, check: str) -> None:
    """Before writing an interrupted search's result: nothing is written unless it passed
    ``check``.

    Raises
    ------
    KeyboardInterrupt
        ``passed`` is False (the line says why nothing was written).
    """
    if not passed:
        raise KeyboardInterrupt(f"--keep-best: the {what} found so far fails {check}, so it "
                                "was not written")


def kept_best(what: str, status: str, gap: float | None) -> KeptBest:
    """The interrupt a command raises after writing the best ``what`` of an interrupted
    search (its status and gap, for the one line).

    Examples
    --------
    >>> print(kept_best("audit-clean pattern", "feasible", 0.031))  # doctest: +NORMALIZE_WHITESPACE
    --keep-best: the best audit-clean pattern found so far (status feasible, gap 3.1 %), marked
    interrupted
    """
    gap_text = ("gap unknown" if gap is None or not math.isfinite(gap)
                else f"gap {100 * gap:.3g} %")
    return KeptBest(f"--keep-best: the best {what} found so far (status {status}, "
                    f"{gap_text}), marked interrupted")


def progress_printer(args: argparse.Namespace) -> Callable[[str], None]:
    """The ``progress`` callable of a command: prints each line to stderr and keeps the last
    one in ``args.last_progress`` (an interrupt says how far the work got). A command with
    a time limit first says which (:func:`time_limit_line`), once the work has started: an
    input refused before any progress stays a one-line error."""
    pending = [time_limit_line(args)] if hasattr(args, "time_limit") else []

    def show(line: str) -> None:
        for said in [*pending, line]:
            args.last_progress = said.strip()
            print("  " + said, file=sys.stderr, flush=True)
        pending.clear()

    return show


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """The table input: a microdata CSV (default), a CSV of interior cells (``--aggregated``)
    or a JJ file."""
    parser.add_argument("input", type=Path, help="CSV of contributions (default), of interior "
                        "cells (--aggregated), or a .jj file")
    group = parser.add_argument_group("input")
    group.add_argument("--dims", nargs="+", default=[], help="dimension columns")
    group.add_argument("--value", help="response variable (omit for a frequency table)")
    group.add_argument("--holding", help="contributor id column")
    group.add_argument("--weight", help="sampling weight column")
    group.add_argument("--hierarchy", action="append", default=[], metavar="DIM=L1,L2,..",
                       help="hierarchy of DIM from level columns, coarsest first; or "
                       "DIM=file.csv with columns parent,child (once per dimension)")
    group.add_argument("--aggregated", action="store_true",
                       help="the CSV holds interior cells (totals are computed)")
    group.add_argument("--freq-column", help="contributor count column (--aggregated)")
    group.add_argument("--top-columns", nargs="+", default=[],
                       help="largest-contribution columns, largest first (--aggregated)")
    group.add_argument("--negative", choices=("keep", "absolute"), default="keep",
                       help="negative contributions: keep them (the rules then refuse their "
                       "cells) or let the rules see absolute values (default keep)")


def add_rule_options(parser: argparse.ArgumentParser) -> None:
    """Sensitivity rules; a cell is primary if any rule flags it."""
    group = parser.add_argument_group("rules (any combination; a cell is primary if any flags it)")
    group.add_argument("--p", type=float, metavar="P", help="p%% rule")
    group.add_argument("--pq", type=float, nargs=2, metavar=("P", "Q"), help="p/q rule")
    group.add_argument("--nk", type=float, nargs=2, action="append", default=[],
                       metavar=("N", "K"), help="(n,k)-dominance rule (repeatable)")
    group.add_argument("--freq", type=int, metavar="N", help="minimum frequency rule")
    group.add_argument("--freq-level", type=float, default=10.0,
                       help="protection level of the frequency rule, %% of the cell value")
    group.add_argument("--lower-ratio", type=float, default=1.0,
                       help="lower protection level as a multiple of the upper one")


def has_rules(args: argparse.Namespace) -> bool:
    """Whether any rule option was given."""
    return any(x is not None for x in (args.p, args.pq, args.freq)) or bool(args.nk)


def rules_from(args: argparse.Namespace) -> list[SensitivityRule]:
    """The rules of the rule options.

    Raises
    ------
    TabSDCError
        No rule was given.
    """
    rules: list[SensitivityRule] = []
    if args.p is not None:
        rules.append(PPercentRule(args.p))
    if args.pq is not None:
        rules.append(PQRule(*args.pq))
    rules += [DominanceRule(int(n), k) for n, k in args.nk]
    if args.freq is not None:
        rules.append(FrequencyRule(args.freq, level=args.freq_level))
    if not rules:
        raise TabSDCError("choose at least one rule: --p, --pq, --nk or --freq")
    return rules


def apply_rule_options(table: Table, args: argparse.Namespace) -> RulesResult:
    """:func:`~tabsdc._rules.apply_rules` with the rule options; an error about negative
    contributions names the option that handles them (``--negative absolute``).

    Raises
    ------
    TabSDCError
        No rule was given, or a rule cannot be applied to the table.
    """
    try:
        return apply_rules(table, rules_from(args), lower_ratio=args.lower_ratio)
    except RuleError as error:
        message = str(error)
        if "negative='absolute'" not in message:
            raise
        raise RuleError(message.replace("negative='absolute'", "--negative absolute")) from None


def add_output_options(
    parser: argparse.ArgumentParser, *, table: bool = True, publish: bool = True,
    json_help: str | None = None
) -> None:
    """``--out`` (when the command produces a ``table``), ``--publish`` (when it produces a
    protected table: ``publish``), ``--json``, ``--html``, ``--report``, ``--force`` and
    ``--mkdir``.

    Every output is checked before the work starts and written whole or not at all.
    """
    group = parser.add_argument_group("outputs (checked before the work starts, written "
                                      "whole or not at all)")
    if table:
        group.add_argument("--out", type=Path, help="write the table (confidential): a JJ "
                           "file (.jj) or a CSV of every cell with all its columns")
    if table and publish:
        group.add_argument("--publish", type=Path, metavar="FILE.csv",
                           help="write the publishable table: codes and published values "
                           "only, hidden cells as --symbol (no statuses, levels or rules)")
        group.add_argument("--symbol", default="x",
                           help="what a hidden cell shows in --publish (default x)")
        group.add_argument("--layout", default="long", choices=["long", "wide"],
                           help="--publish: one row per cell, or a 2-D view")
        group.add_argument("--decimals", type=whole_number, metavar="D",
                           help="--publish: decimals of every value (default: those of the "
                           "input's values, or fewer when no published value needs them)")
    group.add_argument("--json", type=Path, help=json_help or "write the result's summary as "
                       "JSON")
    group.add_argument("--html", type=Path, help="write an HTML report")
    group.add_argument("--report", type=report_path, help="write the report; the suffix chooses "
                       ".html, .md, .json or .txt")
    add_output_guards(group)


def add_output_guards(parser: Arguments) -> None:
    """``--force`` (an output may replace an input file) and ``--mkdir`` (create missing
    output folders), which :func:`tabsdc.cli._io.check_outputs` reads."""
    parser.add_argument("--force", action="store_true",
                        help="allow an output to replace an input file")
    parser.add_argument("--mkdir", action="store_true", help="create missing output folders")
