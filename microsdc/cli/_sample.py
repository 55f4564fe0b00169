"""``microsdc sample``: write a reference data set shipped with the package (Tarragona,
CASC) as a CSV file, byte for byte."""

from __future__ import annotations

from microsdc._datasets import SAMPLE_FILES
from microsdc.cli import COMMANDS
from tabsdc.cli._options import Commands
from tabsdc.cli._sample import add_sample_parser

EXAMPLE = "microsdc sample tarragona --out tarragona.csv"


def add_sample_command(commands: Commands) -> None:
    """Add ``sample`` to the ``microsdc`` subcommands: the data sets of
    :data:`microsdc._datasets.SAMPLE_FILES`.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="microsdc")
    >>> add_sample_command(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["sample", "casc", "--out", "casc.csv"]).name
    'casc'
    """
    add_sample_parser(commands, "microsdc", SAMPLE_FILES, help=COMMANDS["sample"].help,
                      example=EXAMPLE)
