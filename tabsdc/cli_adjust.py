"""Command line of controlled tabular adjustment: ``tabsdc adjust`` and the demo's CTA part.

``tabsdc adjust TABLE.jj --method milp|heuristic|l2|mdi [--weights unit|inverse|jj]
[--preserve mean,variance] [--time-limit S] --out OUT.jj --json OUT.json [--html OUT.html]``
adjusts the sensitive cells (status ``u``, protection levels ``lpl``/``upl``) of a JJ table
with :func:`tabsdc.cta.adjust`, prints the result's summary and writes the adjusted table,
its JSON summary and optionally an HTML report. The exit status is 0 when every check of the
result passes (additivity, protection, bounds, fixed cells, preserved statistics), 1 when one
fails; user errors raise :class:`~tabsdc.errors.TabSDCError` subclasses, which ``tabsdc``
turns into a one-line message.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sdcreport import Report, Section
from tabsdc.cli_io import add_publish_options, publish, write_json, write_table
from tabsdc.cta import METHODS, WEIGHTS, AdjustmentResult, adjust
from tabsdc.table import Table

__all__ = ["add_adjust_command", "adjustment_demo_sections", "DEMO_TIME_LIMIT"]

#: Seconds the demo gives the CTA heuristic (search and MILP bound together).
DEMO_TIME_LIMIT = 5.0


def add_adjust_command(commands: argparse._SubParsersAction) -> None:
    """Add the ``adjust`` subcommand to a ``tabsdc`` parser's subcommands.

    The subcommand's ``run`` default (set with ``set_defaults``) takes the parsed arguments
    and returns the exit status.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_adjust_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["adjust", "t.jj", "--method", "l2", "--out", "o.jj",
    ...                           "--json", "o.json"])
    >>> args.method, args.weights, args.run.__name__
    ('l2', 'inverse', '_run_adjust')
    """
    adjust_parser = commands.add_parser(
        "adjust", help="controlled tabular adjustment of a JJ table (CTA, MDI-CTA)",
        description=__doc__.splitlines()[0])
    adjust_parser.add_argument("table", type=Path, help="JJ file with sensitive cells (u)")
    adjust_parser.add_argument("--method", default="heuristic", choices=METHODS,
                               help="milp (exact L1), heuristic (large tables), l2 (least "
                                    "squares QP), mdi (MDI-CTA); default heuristic")
    adjust_parser.add_argument("--weights", default="inverse", choices=WEIGHTS,
                               help="cost per unit of change: unit, inverse (1/value, the "
                                    "default) or the JJ weight column")
    adjust_parser.add_argument("--preserve", default=None,
                               help="statistics of the interior cells to keep, e.g. "
                                    "mean,variance (or correlation)")
    adjust_parser.add_argument("--min-correlation", type=float, default=0.99,
                               help="with --preserve correlation: lower limit (default 0.99)")
    adjust_parser.add_argument("--relative-capacity", type=float, default=None,
                               help="largest change of a non-sensitive cell as a fraction of "
                                    "its value")
    adjust_parser.add_argument("--fix-totals", action="store_true",
                               help="keep every non-sensitive total unchanged")
    adjust_parser.add_argument("--time-limit", type=float, default=None,
                               help="seconds; a stopped solve is reported with its gap")
    adjust_parser.add_argument("--alpha", type=float, default=0.05,
                               help="mdi: significance level that ends the search")
    adjust_parser.add_argument("--seed", type=int, default=None,
                               help="randomness of the heuristic and of MDI-CTA")
    adjust_parser.add_argument("--out", type=Path, required=True,
                               help="the adjusted table (.jj, or .csv for every column)")
    adjust_parser.add_argument("--json", type=Path, required=True,
                               help="the result's summary: status, objective, bound, gap, "
                                    "l1_distance, additive, protected, ...")
    adjust_parser.add_argument("--html", type=Path, help="an HTML report")
    add_publish_options(adjust_parser)
    adjust_parser.set_defaults(run=_run_adjust)


def _run_adjust(args: argparse.Namespace) -> int:
    table = Table.from_jj(args.table)
    result = adjust(table, args.method, args.weights, preserve=args.preserve,
                    min_correlation=args.min_correlation,
                    relative_capacity=args.relative_capacity, fix_totals=args.fix_totals,
                    time_limit=args.time_limit, seed=args.seed, alpha=args.alpha)
    print(result.summary())
    write_table(result.adjusted, args.out)
    publish(result.adjusted, args, every_cell=True)
    write_json(result.to_dict(), args.json)
    if args.html:
        Report(f"Controlled tabular adjustment of {args.table.name}").add(
            result.table.to_report(), result.to_report()).save(args.html)
        print(f"report written to {args.html}")
    return 0 if result.verification.passed else 1


def adjustment_demo_sections(table: Table, time_limit: float = DEMO_TIME_LIMIT
                             ) -> list[Section]:
    """Report sections of the demo: CTA of a table whose primaries have protection levels.

    Runs the L1 heuristic (inverse weights, means and variances of the interior cells kept)
    with ``time_limit`` seconds in all, and reports its certificate, checks, quality figures
    and scatter plot.

    Parameters
    ----------
    table : Table
        A table after sensitivity rules (status ``u``, ``lpl``/``upl`` set), e.g.
        ``apply_rules(...).table``.
    time_limit : float
        Seconds for the adjustment.

    Returns
    -------
    list of sdcreport.Section
    """
    result: AdjustmentResult = adjust(table, "heuristic", "inverse", preserve="mean,variance",
                                      time_limit=time_limit, seed=0)
    return [result.to_report()]
