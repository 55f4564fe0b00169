"""``tabsdc protect``: complementary cell suppression of microdata (with rules) or a JJ file.

The choices of ``--method`` are :data:`tabsdc.suppression.METHODS` and its default is the
default of :func:`tabsdc.suppression.suppress`. Exit status 1 when the audit of the result
finds a sensitive cell unprotected. With ``--keep-best``, a Ctrl-C during the search writes
the best pattern found so far if the audit finds it protecting (exit status 130).
"""

from __future__ import annotations

import argparse
import inspect
import sys

from sdcreport import Report
from tabsdc._errors import InputError
from tabsdc.cli._io import read_table, write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import (
    Commands,
    add_command,
    add_input_options,
    add_keep_best_option,
    add_output_options,
    add_rule_options,
    add_time_limit_option,
    apply_rule_options,
    has_rules,
    kept_best,
    progress_printer,
    refuse_unchecked,
    time_limit_of,
)
from tabsdc.suppression import METHODS, suppress

EXAMPLE = ("tabsdc protect survey.csv --dims A88 NUTS3 --value TURNOVER --p 10 --freq 3 "
           "--time-limit 600 --out protected.jj --publish publish.csv --html report.html")


def add_protect_command(commands: Commands) -> None:
    """Add ``protect`` to the subcommands (its ``run`` is :func:`run_protect`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_protect_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["protect", "t.jj", "--time-limit", "60"])
    >>> args.method == inspect.signature(suppress).parameters["method"].default
    True
    """
    parser = add_command(commands, "protect", example=EXAMPLE,
                         help=COMMANDS["protect"].help)
    add_input_options(parser)
    add_rule_options(parser)
    method = parser.add_argument_group("suppression")
    method.add_argument("--method", choices=METHODS,
                        default=inspect.signature(suppress).parameters["method"].default,
                        help="suppression method (default %(default)s)")
    method.add_argument("--cost", default="value",
                        help="value, count, entropy, or a cell column (e.g. cost, the JJ "
                        "weight field)")
    add_time_limit_option(method)
    add_keep_best_option(method, "audit-clean pattern")
    method.add_argument("--no-totals", action="store_true", help="never suppress totals")
    add_output_options(parser, json_help="write status, objective, bound, gap, cells")
    parser.set_defaults(run=run_protect)


def run_protect(args: argparse.Namespace) -> int:
    """Run ``tabsdc protect``; exit status 0 when the audit finds the table protected, else
    1."""
    table = read_table(args)
    rules = None
    if has_rules(args):
        rules = apply_rule_options(table, args)
        print(rules.summary(), flush=True)
        table = rules.table
    elif args.input.suffix.lower() != ".jj":
        raise InputError("choose rules (--p, --pq, --nk, --freq) for CSV input")
    progress = progress_printer(args)
    result = suppress(table, args.method, args.cost, time_limit=time_limit_of(args),
                      suppress_totals=not args.no_totals, progress=progress)
    print(result.summary())
    if result.interrupted:  # --keep-best (else the interrupt has ended the command)
        refuse_unchecked(result.protected, "pattern", "the audit")
    if result.audit is None:  # the time limit came before any protecting pattern
        print("tabsdc protect: no protecting pattern within the time limit: nothing written "
              "(raise --time-limit)", file=sys.stderr)
        return 1
    write_outputs(args, table=result.table, data=result.to_dict, publishable=result.protected,
                  report=lambda: Report(f"Suppression of {args.input.name}").add(
                      result.table.to_report(), *([rules.to_report()] if rules else []),
                      result.to_report(), result.audit.to_report()))
    if result.interrupted:
        raise kept_best("audit-clean pattern", result.status, result.stats.gap)
    return 0 if result.protected else 1
