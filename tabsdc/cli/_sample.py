"""``tabsdc sample`` (and ``microsdc sample``): write a data set shipped with the package as a
CSV file, so that the commands of the README and of ``docs/cli.md`` run in an empty folder.

The file is the shipped one, byte for byte (its values with the decimals they have there):
``tabsdc sample business-survey --out survey.csv`` writes the 9,786 companies that
:func:`tabsdc._datasets.load_business_survey` reads.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path

from sdcreport._files import atomic_write
from tabsdc._datasets import SAMPLE_FILES
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import Commands, add_command, add_output_guards

EXAMPLE = "tabsdc sample business-survey --out survey.csv"


def add_sample_command(commands: Commands) -> None:
    """Add ``sample`` to the ``tabsdc`` subcommands: the data sets of
    :data:`tabsdc._datasets.SAMPLE_FILES`.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_sample_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["sample", "business-survey", "--out", "survey.csv"])
    >>> args.name, args.out.name
    ('business-survey', 'survey.csv')
    """
    add_sample_parser(commands, "tabsdc", SAMPLE_FILES, help=COMMANDS["sample"].help,
                      example=EXAMPLE)


def add_sample_parser(
    commands: Commands, package: str, samples: Mapping[str, str], *, help: str, example: str
) -> argparse.ArgumentParser:
    """A ``sample`` command writing one of ``samples`` (name -> file in ``package``'s
    ``data`` folder) to ``--out``."""
    parser = add_command(commands, "sample", help=help, example=example)
    parser.add_argument("name", choices=list(samples), help="the data set")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.csv",
                        help="the CSV file to write")
    add_output_guards(parser)
    parser.set_defaults(run=lambda args: _write_sample(args, package, samples))
    return parser


def _write_sample(args: argparse.Namespace, package: str, samples: Mapping[str, str]) -> int:
    data = files(package).joinpath("data", samples[args.name]).read_bytes()
    with atomic_write(args.out, "wb") as stream:
        stream.write(data)
    records = data.count(b"\n") - 1
    print(f"{args.name}: {records:,} records written to {args.out}")
    return 0
