"""``tabsdc demo``: rules, suppression, audit, rounding and CTA of the shipped business
survey, as one report.

The full demo protects turnover by activity x region at the finest levels (A88 x NUTS3,
2,420 cells); ``--quick`` does the same at the levels above (A21 x NUTS2, 144 cells) in a few
seconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from sdcreport import Report
from tabsdc._rules import FrequencyRule, PPercentRule, apply_rules
from tabsdc._table import Table
from tabsdc.cli._adjust import adjustment_demo_sections
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import Commands, add_command, report_path
from tabsdc.cli._round import rounding_demo_sections

EXAMPLE = "tabsdc demo --method heuristic --out demo-report.html"

#: Seconds the demo gives the suppression.
DEMO_TIME_LIMIT = 120.0

#: The hierarchy levels of activity and region, coarsest first: the full demo's and the
#: quick one's (one level less each).
DEMO_LEVELS = {False: {"A88": ["A10", "A21", "A88"], "NUTS3": ["NUTS1", "NUTS2", "NUTS3"]},
               True: {"A21": ["A10", "A21"], "NUTS2": ["NUTS1", "NUTS2"]}}


def add_demo_command(commands: Commands) -> None:
    """Add ``demo`` to the subcommands (its ``run`` is :func:`run_demo`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_demo_command(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["demo"]).out.name
    'demo-report.html'
    """
    parser = add_command(commands, "demo", example=EXAMPLE, help=COMMANDS["demo"].help)
    parser.add_argument("--out", type=report_path, default=Path("demo-report.html"),
                        help="the report (.html, .md, .json or .txt; default %(default)s)")
    parser.add_argument("--method", default="optimal", choices=["optimal", "heuristic"],
                        help="suppression method (heuristic: a few seconds)")
    parser.add_argument("--quick", action="store_true",
                        help="the table one level coarser (A21 x NUTS2, 144 cells): seconds")
    parser.add_argument("--mkdir", action="store_true", help="create a missing output folder")
    parser.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Rules, suppression and its audit, rounding and CTA on the shipped business survey."""
    report = demo_report(args.method, quick=args.quick, say=print)
    print(f"report written to {report.save(args.out)}")
    return 0


def demo_table(quick: bool = False) -> Table:
    """Turnover of the shipped business survey by activity x region (:data:`DEMO_LEVELS`).

    Examples
    --------
    >>> demo_table(quick=True)
    Table(144 cells, 96 relations, A21(12) x NUTS2(12), status {'s': 142, 'z': 2})
    """
    from tabsdc._datasets import load_business_survey
    from tabsdc._hierarchy import Hierarchy

    data = load_business_survey()
    levels = DEMO_LEVELS[quick]
    return Table.from_microdata(
        data, list(levels), "TURNOVER",
        hierarchies={dim: Hierarchy.from_levels(data[columns])
                     for dim, columns in levels.items()})


def demo_report(method: str = "optimal", *, quick: bool = False,
                say: Callable[[str], None] | None = None) -> Report:
    """The demo's report: the table, its rules, suppression by ``method`` (at most
    :data:`DEMO_TIME_LIMIT` seconds) and its audit, controlled rounding of the count table
    and controlled tabular adjustment of the turnover table; ``say`` receives what is being
    done and the progress lines."""
    from tabsdc.suppression import suppress

    say = say or (lambda line: None)
    table = demo_table(quick)
    rules = apply_rules(table, [PPercentRule(10), FrequencyRule(3)])
    say(rules.summary())
    say(f"choosing complementary suppressions ({method}, at most {DEMO_TIME_LIMIT:g} s) ...")
    protected = suppress(rules.table, method, "value", time_limit=DEMO_TIME_LIMIT,
                         progress=lambda line: say("  " + line))
    say(protected.summary())
    dims = " x ".join(table.dims)
    report = Report(
        f"Business survey: turnover by activity x region ({dims})",
        metadata={"data": "rtauargus indiv_dt (9,786 fictitious companies)",
                  "rules": "p% rule (p = 10), minimum frequency 3",
                  "suppression": f"{method}, cost = value suppressed"},
    ).add(table.to_report(), rules.to_report(), protected.to_report(),
          protected.audit.to_report())
    say("controlled rounding of the count table ...")
    report.add(*rounding_demo_sections(table))
    say("controlled tabular adjustment of the turnover table ...")
    report.add(*adjustment_demo_sections(rules.table))
    return report
