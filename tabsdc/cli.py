"""Command line: ``tabsdc rules``, ``protect``, ``audit``, ``round``, ``adjust`` and ``demo``.

Every command prints a short summary and writes its results as files; reports are built with
:mod:`sdcreport` (the suffix of ``--report`` chooses HTML, Markdown, JSON or text). User errors
end with a one-line message and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from sdcreport import Report
from tabsdc.cli_adjust import add_adjust_command, adjustment_demo_sections
from tabsdc.cli_argus import add_argus_command
from tabsdc.cli_io import (
    add_publish_options,
    hierarchies_from_specs,
    publish,
    read_records,
    write_json,
    write_table,
)
from tabsdc.cli_round import add_round_command, rounding_demo_sections
from tabsdc.cli_ui import add_ui_command
from tabsdc.errors import TabSDCError
from tabsdc.rules import DominanceRule, FrequencyRule, PPercentRule, PQRule, apply_rules
from tabsdc.table import Table

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tabsdc`` command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (TabSDCError, FileNotFoundError, pd.errors.ParserError) as error:
        print(f"tabsdc {args.command}: error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tabsdc", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    rules = commands.add_parser(
        "rules", help="apply sensitivity rules to microdata, interior cells or a JJ table")
    _add_input_options(rules)
    _add_rule_options(rules)
    rules.add_argument("--out", type=Path, help="write the cells (.csv) or a JJ file (.jj)")
    rules.add_argument("--report", type=Path, help="write a report (.html, .md, .json, .txt)")
    rules.set_defaults(run=_run_rules)

    protect = commands.add_parser(
        "protect", help="complementary cell suppression (microdata CSV + rules, or a JJ file)")
    _add_input_options(protect)
    _add_rule_options(protect)
    protect.add_argument("--method", default="optimal",
                         choices=["optimal", "heuristic", "network", "modular"])
    protect.add_argument("--cost", default="value",
                         help="value, count, entropy, or a cell column (e.g. weight)")
    protect.add_argument("--time-limit", type=float,
                         help="seconds (optimal method; modular: per sub-table)")
    protect.add_argument("--no-totals", action="store_true", help="never suppress totals")
    protect.add_argument("--out", type=Path, help="write the protected table (.jj or .csv)")
    protect.add_argument("--json", type=Path, help="write status, objective, bound, gap, cells")
    protect.add_argument("--html", type=Path, help="write an HTML report (internal: everything)")
    add_publish_options(protect)
    protect.set_defaults(run=_run_protect)

    audit = commands.add_parser(
        "audit", help="interval attack on a table with hidden cells; protection verdicts")
    audit.add_argument("table", type=Path, help="JJ file (status u/m/x/w = hidden)")
    audit.add_argument("--json", type=Path, help="write the verdicts as JSON")
    audit.add_argument("--html", type=Path, help="write an HTML report")
    audit.add_argument("--integer", action="store_true",
                       help="also compute integer bounds (a MILP per bound)")
    audit.add_argument("--pq", type=float, metavar="Q",
                       help="intruder knows every value within Q %% (p/q prior)")
    audit.add_argument("--release-intervals", action="store_true",
                       help="the intervals will be published: run the p/q-interval attack")
    audit.add_argument("--solver", default="highs")
    audit.add_argument("--time-limit", type=float, help="seconds per bound")
    audit.set_defaults(run=_run_audit)

    demo = commands.add_parser(
        "demo", help="rules, suppression, audit, rounding and CTA of the shipped business "
                     "survey, as a report")
    demo.add_argument("--out", type=Path, default=Path("demo-report.html"))
    demo.add_argument("--method", default="optimal", choices=["optimal", "heuristic"],
                      help="suppression method (heuristic: a few seconds)")
    demo.set_defaults(run=_run_demo)
    add_round_command(commands)
    add_adjust_command(commands)
    add_ui_command(commands)
    add_argus_command(commands)
    return parser


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=Path, help="CSV of contributions (default), of interior "
                        "cells (--aggregated), or a .jj file")
    parser.add_argument("--dims", nargs="+", default=[], help="dimension columns")
    parser.add_argument("--value", help="response variable (omit for a frequency table)")
    parser.add_argument("--holding", help="contributor id column")
    parser.add_argument("--weight", help="sampling weight column")
    parser.add_argument("--hierarchy", action="append", default=[], metavar="DIM=L1,L2,..",
                        help="hierarchy of DIM from level columns, coarsest first; or "
                        "DIM=file.csv with columns parent,child")
    parser.add_argument("--aggregated", action="store_true",
                        help="the CSV holds interior cells (totals are computed)")
    parser.add_argument("--freq-column", help="contributor count column (--aggregated)")
    parser.add_argument("--top-columns", nargs="+", default=[],
                        help="largest-contribution columns, largest first (--aggregated)")


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
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


def _has_rules(args: argparse.Namespace) -> bool:
    return any(x is not None for x in (args.p, args.pq, args.freq)) or bool(args.nk)


def _rules_from(args: argparse.Namespace) -> list:
    rules = []
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


def _read_table(args: argparse.Namespace) -> Table:
    if args.input.suffix.lower() == ".jj":
        return Table.from_jj(args.input)
    if not args.dims:
        raise TabSDCError("--dims is required for CSV input")
    data = read_records(args.input, args.dims)
    hierarchies = hierarchies_from_specs(args.hierarchy, data)
    if args.aggregated:
        return Table.from_aggregated(data, args.dims, args.value or "value",
                                     freq=args.freq_column, top=args.top_columns,
                                     hierarchies=hierarchies)
    top = max([2, *(int(n) for n, _ in args.nk)])
    return Table.from_microdata(data, args.dims, args.value, holding=args.holding,
                                weight=args.weight, hierarchies=hierarchies, top=top)


def _run_rules(args: argparse.Namespace) -> int:
    result = apply_rules(_read_table(args), _rules_from(args), lower_ratio=args.lower_ratio)
    print(result.summary())
    if args.out:
        write_table(result.table, args.out)
    if args.report:
        Report(f"Sensitivity rules: {args.input.name}").add(
            result.table.to_report(), result.to_report()).save(args.report)
        print(f"report written to {args.report}")
    return 0


def _run_protect(args: argparse.Namespace) -> int:
    from tabsdc.suppression import suppress

    table = _read_table(args)
    rules = None
    if _has_rules(args):
        rules = apply_rules(table, _rules_from(args), lower_ratio=args.lower_ratio)
        table = rules.table
    elif args.input.suffix.lower() != ".jj":
        raise TabSDCError("choose rules (--p, --pq, --nk, --freq) for CSV input")
    result = suppress(table, args.method, args.cost,
                      time_limit=args.time_limit, suppress_totals=not args.no_totals,
                      progress=lambda line: print("  " + line, file=sys.stderr))
    print(result.summary())
    if args.out:
        write_table(result.table, args.out)
    publish(result.table, args)
    if args.json:
        write_json(result.to_dict(), args.json)
    if args.html:
        sections = [result.table.to_report(), *([rules.to_report()] if rules else []),
                    result.to_report(), result.audit.to_report()]
        Report(f"Suppression of {args.input.name}").add(*sections).save(args.html)
        print(f"report written to {args.html}")
    return 0 if result.audit.protected else 1


def _run_audit(args: argparse.Namespace) -> int:
    from tabsdc.audit import audit, print_progress

    result = audit(Table.from_jj(args.table), prior="pq" if args.pq else "table", q=args.pq,
                   integer=args.integer, release_intervals=args.release_intervals,
                   solver=args.solver, time_limit=args.time_limit, progress=print_progress)
    print(result.summary())
    if args.json:
        write_json(result.to_dict(), args.json)
    if args.html:
        Report(f"Audit of {args.table.name}").add(result.to_report()).save(args.html)
        print(f"report written to {args.html}")
    return 0 if result.protected else 1


def _run_demo(args: argparse.Namespace) -> int:
    """Rules, optimal suppression and its audit on the shipped business survey."""
    from tabsdc.datasets import business_survey_hierarchies, load_business_survey
    from tabsdc.suppression import suppress

    data = load_business_survey()
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                 hierarchies=business_survey_hierarchies(data))
    rules = apply_rules(table, [PPercentRule(10), FrequencyRule(3)])
    print(rules.summary())
    print(f"choosing complementary suppressions ({args.method}, at most 120 s) ...")
    protected = suppress(rules.table, args.method, "value", time_limit=120,
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


if __name__ == "__main__":
    raise SystemExit(main())
