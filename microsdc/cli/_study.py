"""``microsdc study``: how information-loss measures rank masked data sets (perturbation
grid), on a shipped data set or a CSV file."""

from __future__ import annotations

import argparse
from pathlib import Path

from microsdc.cli import COMMANDS
from microsdc.cli._io import known_columns, numbers_of, read_records
from sdcreport import Report
from sdcreport._files import all_or_none, write_text
from tabsdc.cli._options import Commands, add_command, add_output_guards

EXAMPLE = "microsdc study --data tarragona --quick --html study.html --json study.json"


def add_study_command(commands: Commands) -> None:
    """Add ``study`` to the ``microsdc`` subcommands."""
    study = add_command(commands, "study", help=COMMANDS["study"].help, example=EXAMPLE)
    study.add_argument("--data", default="tarragona",
                       help="tarragona, casc (shipped) or a CSV file (default tarragona)")
    study.add_argument("--vars", nargs="+", metavar="COLUMN",
                       help="numeric columns of a CSV file (default: all)")
    study.add_argument("--quick", action="store_true",
                       help="small grid and 3 replications instead of the full protocol")
    study.add_argument("--replications", type=int,
                       help="replications per method (default 30, or 3 with --quick)")
    study.add_argument("--risk", action="store_true",
                       help="also measure disclosure risk and draw the risk-utility map")
    study.add_argument("--seed", type=int, help="seed of masking and tie breaking")
    study.add_argument("--html", type=Path, required=True, metavar="OUT.html")
    study.add_argument("--json", type=Path, required=True, metavar="OUT.json")
    add_output_guards(study)
    study.set_defaults(run=run_study_command)


def run_study_command(args: argparse.Namespace) -> int:
    """Run ``microsdc study``; exit status 0."""
    from microsdc._datasets import load_casc, load_tarragona
    from microsdc._studies import default_grid, quick_grid, run_study

    shipped = {"tarragona": load_tarragona, "casc": load_casc}
    if args.data.lower() in shipped:
        data = shipped[args.data.lower()]()
        if args.vars:
            data = data[known_columns(data, args.vars, args.data)]
        name = args.data.lower()
    else:
        path = Path(args.data)
        text = read_records(path)
        data = numbers_of(text, args.vars or list(text.columns), path)
        name = path.name
    replications = args.replications or (3 if args.quick else 30)
    result = run_study(data, grid=quick_grid() if args.quick else default_grid(),
                       replications=replications, seed=args.seed, risk=args.risk, name=name)
    print(result.summary())
    report = Report(f"Information-loss study: {name}").add(result.to_report())
    report.metadata.update({"data": name, "records": len(data), "variables": data.shape[1],
                            "replications": replications, "quick": args.quick})
    with all_or_none():
        write_text(args.html, report.to_html())
        write_text(args.json, report.to_json())
    print(f"report written to {args.html} and {args.json}")
    return 0
