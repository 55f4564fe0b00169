"""``tabsdc audit``: the interval attack on a table with hidden cells, and its verdicts.

``--prior-q Q`` gives the attacker the p/q prior (every value known within Q %). Exit status
1 when a sensitive cell is not protected.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sdcreport import Report
from tabsdc._table import Table
from tabsdc.cli._io import write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import (
    Commands,
    add_command,
    add_output_options,
    add_solver_option,
    add_time_limit_option,
    progress_printer,
    time_limit_of,
)
from tabsdc.io._csvfile import input_file

EXAMPLE = "tabsdc audit protected.jj --prior-q 20 --json audit.json --html audit.html"


def add_audit_command(commands: Commands) -> None:
    """Add ``audit`` to the subcommands (its ``run`` is :func:`run_audit`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_audit_command(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["audit", "t.jj", "--prior-q", "20"]).prior_q
    20.0
    """
    parser = add_command(commands, "audit", example=EXAMPLE, help=COMMANDS["audit"].help)
    parser.add_argument("input", type=Path, help="JJ file (status u/m/x/w = hidden)")
    parser.add_argument("--prior-q", type=float, metavar="Q",
                        help="the attacker knows every value within Q %% (p/q prior)")
    parser.add_argument("--integer", action="store_true",
                        help="also compute integer bounds (a MILP per bound)")
    parser.add_argument("--release-intervals", action="store_true",
                        help="the intervals will be published: run the p/q-interval attack")
    add_solver_option(parser)
    add_time_limit_option(parser)
    add_output_options(parser, table=False, json_help="write the verdicts as JSON")
    parser.set_defaults(run=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    """Run ``tabsdc audit``; exit status 0 when every sensitive cell is protected, else 1."""
    from tabsdc.audit import audit

    q = args.prior_q
    table = Table.from_jj(input_file(args.input))
    progress = progress_printer(args)
    result = audit(table, prior="pq" if q else "table", q=q, integer=args.integer,
                   release_intervals=args.release_intervals, solver=args.solver,
                   time_limit=time_limit_of(args), progress=progress)
    print(result.summary())
    write_outputs(args, data=result.to_dict, report=lambda: Report(
        f"Audit of {args.input.name}").add(result.to_report()))
    return 0 if result.protected else 1
