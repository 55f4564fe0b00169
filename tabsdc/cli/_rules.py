"""``tabsdc rules``: sensitivity rules on microdata, interior cells or a JJ table."""

from __future__ import annotations

import argparse

from sdcreport import Report
from tabsdc.cli._io import read_table, write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import (
    Commands,
    add_command,
    add_input_options,
    add_output_options,
    add_rule_options,
    apply_rule_options,
)

EXAMPLE = ("tabsdc rules survey.csv --dims A88 NUTS3 --value TURNOVER --p 10 --freq 3 "
           "--out cells.csv --html rules.html")


def add_rules_command(commands: Commands) -> None:
    """Add ``rules`` to the subcommands (its ``run`` is :func:`run_rules`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_rules_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["rules", "s.csv", "--dims", "A", "--p", "10"])
    >>> args.input.name, args.p, args.run is run_rules
    ('s.csv', 10.0, True)
    """
    parser = add_command(commands, "rules", example=EXAMPLE, help=COMMANDS["rules"].help)
    add_input_options(parser)
    add_rule_options(parser)
    add_output_options(parser, publish=False, json_help="write the report's content as JSON")
    parser.set_defaults(run=run_rules)


def run_rules(args: argparse.Namespace) -> int:
    """Run ``tabsdc rules``; exit status 0."""
    result = apply_rule_options(read_table(args), args)
    print(result.summary())
    write_outputs(args, table=result.table, report=lambda: Report(
        f"Sensitivity rules: {args.input.name}").add(result.table.to_report(),
                                                       result.to_report()))
    return 0
