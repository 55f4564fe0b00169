"""``tabsdc demo``: rules, suppression, audit, rounding and CTA of the shipped business
survey, as one report."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdcreport import Report
from tabsdc.cli.adjust import adjustment_demo_sections
from tabsdc.cli.main import COMMANDS
from tabsdc.cli.options import Commands, add_command, report_path
from tabsdc.cli.round import rounding_demo_sections
from tabsdc.rules import FrequencyRule, PPercentRule, apply_rules
from tabsdc.table import Table

__all__ = ["add_demo_command", "run_demo", "EXAMPLE", "DEMO_TIME_LIMIT"]

EXAMPLE = "tabsdc demo --method heuristic --out demo-report.html"

#: Seconds the demo gives the suppression.
DEMO_TIME_LIMIT = 120.0


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
    parser.add_argument("--mkdir", action="store_true", help="create a missing output folder")
    parser.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Rules, suppression and its audit, rounding and CTA on the shipped business survey."""
    from tabsdc.datasets import business_survey_hierarchies, load_business_survey
    from tabsdc.suppression import suppress

    data = load_business_survey()
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                 hierarchies=business_survey_hierarchies(data))
    rules = apply_rules(table, [PPercentRule(10), FrequencyRule(3)])
    print(rules.summary())
    print(f"choosing complementary suppressions ({args.method}, at most "
          f"{DEMO_TIME_LIMIT:g} s) ...")
    protected = suppress(rules.table, args.method, "value", time_limit=DEMO_TIME_LIMIT,
                         progress=lambda line: print("  " + line))
    print(protected.summary())
    report = Report(
        "Business survey: turnover by activity x region",
        metadata={"data": "rtauargus indiv_dt (9,786 fictitious companies)",
                  "rules": "p% rule (p = 10), minimum frequency 3",
                  "suppression": f"{args.method}, cost = value suppressed"},
    ).add(table.to_report(), rules.to_report(), protected.to_report(),
          protected.audit.to_report())
    print("controlled rounding of the count table ...")
    report.add(*rounding_demo_sections())
    print("controlled tabular adjustment of the turnover table ...")
    report.add(*adjustment_demo_sections(rules.table))
    print(f"report written to {report.save(args.out)}")
    return 0
