"""``microsdc compare``: information loss and disclosure risk of a masked file against its
original."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from microsdc.cli import COMMANDS
from microsdc.cli._io import numbers_of, read_records
from sdcreport import Report
from sdcreport._files import all_or_none, write_text
from sdcreport._report import jsonable
from tabsdc.cli._options import Commands, add_command, add_output_guards

EXAMPLE = ("microsdc compare survey.csv masked.csv --vars income age --json loss.json "
           "--html loss.html")


def add_compare_command(commands: Commands) -> None:
    """Add ``compare`` to the ``microsdc`` subcommands."""
    compare = add_command(commands, "compare", help=COMMANDS["compare"].help, example=EXAMPLE)
    compare.add_argument("original", type=Path, help="CSV of the original records")
    compare.add_argument("masked", type=Path, help="CSV of the masked records, same order")
    compare.add_argument("--vars", nargs="+", metavar="COLUMN",
                         help="numeric columns to compare (default: all)")
    compare.add_argument("--seed", type=int, help="seed of the random rank tie breaking")
    compare.add_argument("--ties", choices=("random", "first"), default="random",
                         help="rank tie breaking for brMAE and brMSE")
    compare.add_argument("--json", type=Path, required=True, metavar="OUT.json",
                         help="write every measure as JSON")
    compare.add_argument("--html", type=Path, metavar="OUT.html",
                         help="write an HTML report with figures")
    add_output_guards(compare)
    compare.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    """Run ``microsdc compare``; exit status 0."""
    from microsdc._risk import disclosure_risk
    from microsdc.utility import information_loss

    original_text = read_records(args.original)
    masked_text = read_records(args.masked)
    columns = args.vars or list(original_text.columns)
    original = numbers_of(original_text, columns, args.original)
    masked = numbers_of(masked_text, columns, args.masked)
    utility = information_loss(original, masked, ties=args.ties, seed=args.seed)
    risk = disclosure_risk(original, masked, seed=args.seed)
    print(utility.summary())
    print(risk.summary())
    result = {"original": str(args.original), "masked": str(args.masked),
              "variables": columns, **utility.to_dict(), "risk": risk.to_dict()}
    with all_or_none():
        write_text(args.json, json.dumps(jsonable(result), indent=2, allow_nan=False))
        if args.html:
            report = Report(f"Masked data {args.masked.name} against {args.original.name}")
            report.metadata.update({"original": str(args.original),
                                    "masked": str(args.masked),
                                    "variables": ", ".join(columns)})
            write_text(args.html, report.add(utility.to_report(), risk.to_report()).to_html())
    print(f"measures written to {args.json}")
    if args.html:
        print(f"report written to {args.html}")
    return 0
