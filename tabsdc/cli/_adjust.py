"""``tabsdc adjust`` (controlled tabular adjustment) and the CTA part of ``tabsdc demo``.

``tabsdc adjust INPUT.jj [--method M] [--cost count|inverse|cost] [--preserve mean,variance]
[--time-limit S] [--out OUT.jj] [--json OUT.json] [--html OUT.html]`` adjusts the sensitive
cells (status ``u``, protection levels ``lpl``/``upl``) of a JJ table with
:func:`tabsdc.cta.adjust`, prints the result's summary and writes the adjusted table, its JSON
summary and an HTML report (any of them). The choices of ``--method`` are
:data:`tabsdc.cta.METHODS` and its default is the default of :func:`tabsdc.cta.adjust`. The
exit status is 0 when every check of the result passes (additivity, protection, bounds, fixed
cells, preserved statistics), 1 when one fails, 130 on Ctrl-C (with ``--keep-best`` the best
adjustment found so far is written first, if every check passes); user errors raise
:class:`~tabsdc.TabSDCError` subclasses, which ``tabsdc`` turns into a one-line message.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from sdcreport import Report, Section
from tabsdc._table import Table
from tabsdc.cli._io import write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import (
    Commands,
    add_command,
    add_keep_best_option,
    add_output_options,
    add_time_limit_option,
    kept_best,
    progress_printer,
    refuse_unchecked,
    time_limit_of,
)
from tabsdc.cta import COSTS, METHODS, AdjustmentResult, adjust
from tabsdc.io._csvfile import input_file

EXAMPLE = ("tabsdc adjust protected.jj --preserve mean,variance --time-limit 60 "
           "--out adjusted.jj --json adjusted.json --html adjusted.html")

#: Seconds the demo gives the CTA heuristic (search and MILP bound together).
DEMO_TIME_LIMIT = 5.0


def add_adjust_command(commands: Commands) -> None:
    """Add the ``adjust`` subcommand to a ``tabsdc`` parser's subcommands (its ``run`` is
    :func:`run_adjust`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_adjust_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["adjust", "t.jj", "--method", "l2", "--out", "o.jj"])
    >>> args.method, args.cost, args.run is run_adjust
    ('l2', 'inverse', True)
    """
    defaults = inspect.signature(adjust).parameters
    parser = add_command(commands, "adjust", example=EXAMPLE, help=COMMANDS["adjust"].help)
    parser.add_argument("input", type=Path, help="JJ file with sensitive cells (u)")
    parser.add_argument("--method", default=defaults["method"].default, choices=METHODS,
                        help="milp (exact L1), heuristic (large tables), l2 (least squares "
                        "QP), mdi (MDI-CTA); default %(default)s")
    parser.add_argument("--cost", default=defaults["cost"].default, choices=COSTS,
                        help="cost per unit of change: count (one per cell), inverse (1/value, "
                        "the default) or the table's cost column (JJ's weight field)")
    parser.add_argument("--preserve", default=None,
                        help="statistics of the interior cells to keep, e.g. mean,variance "
                        "(or correlation)")
    parser.add_argument("--min-correlation", type=float, default=0.99,
                        help="with --preserve correlation: lower limit (default 0.99)")
    parser.add_argument("--relative-capacity", type=float, default=None,
                        help="largest change of a non-sensitive cell as a fraction of its "
                        "value")
    parser.add_argument("--fix-totals", action="store_true",
                        help="keep every non-sensitive total unchanged")
    add_time_limit_option(parser)
    add_keep_best_option(parser, "adjustment (every check passed)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="mdi: significance level that ends the search")
    parser.add_argument("--seed", type=int, default=None,
                        help="randomness of the heuristic and of MDI-CTA")
    add_output_options(parser, json_help="write the result's summary: status, objective, "
                       "bound, gap, l1_distance, additive, protected, ...")
    parser.set_defaults(run=run_adjust)


def run_adjust(args: argparse.Namespace) -> int:
    """Run ``tabsdc adjust``; exit status 0 when every check of the result passes, else 1."""
    table = Table.from_jj(input_file(args.input))
    progress = progress_printer(args)
    result = adjust(table, args.method, args.cost, preserve=args.preserve,
                    min_correlation=args.min_correlation,
                    relative_capacity=args.relative_capacity, fix_totals=args.fix_totals,
                    time_limit=time_limit_of(args), seed=args.seed,
                    alpha=args.alpha, progress=progress)
    print(result.summary())
    if result.interrupted:  # --keep-best (else the interrupt has ended the command)
        refuse_unchecked(result.verification.passed, "adjustment", "its checks")
    write_outputs(args, table=result.table, data=result.to_dict, every_cell=True,
                  publishable=result.verification.passed,
                  report=lambda: Report(f"Controlled tabular adjustment of {args.input.name}"
                                        ).add(result.original.to_report(), result.to_report()))
    if result.interrupted:
        raise kept_best("adjustment (every check passed)", result.status, result.gap)
    return 0 if result.verification.passed else 1


def adjustment_demo_sections(table: Table, time_limit: float = DEMO_TIME_LIMIT
                             ) -> list[Section]:
    """Report sections of the demo: CTA of a table whose primaries have protection levels.

    Runs the L1 heuristic (inverse costs, means and variances of the interior cells kept)
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
