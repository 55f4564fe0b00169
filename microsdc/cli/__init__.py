"""Command line: ``microsdc compare``, ``microsdc mask``, ``microsdc study`` and ``microsdc
sample``, one module per command.

``compare`` measures information loss and disclosure risk of a masked file against its
original; ``mask`` protects chosen columns of a CSV file (other columns are copied unchanged,
rows keep their order); ``study`` runs the perturbation study of information-loss measures on
a shipped or given data set; ``sample`` writes a shipped data set as a CSV file. Reports are
built with :mod:`sdcreport`. The runner is the one of ``tabsdc`` (:mod:`tabsdc.cli._main`):
commands are imported only when they run, outputs are checked before the work starts and
written whole or not at all; exit status 2 for a user error (one line naming the file or
column), 3 for an internal error (``--debug`` shows the traceback), 130 when interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from microsdc._errors import MicroSDCError
from tabsdc.cli._main import Command, build_parser, run

__all__ = ["main", "COMMANDS"]

#: The ``microsdc`` commands, in the order ``microsdc --help`` lists them.
COMMANDS: dict[str, Command] = {
    "sample": Command("microsdc.cli._sample", "add_sample_command",
                      "write a reference data set shipped with the package as a CSV file"),
    "mask": Command("microsdc.cli._mask", "add_mask_command", "mask columns of a CSV file"),
    "compare": Command("microsdc.cli._compare", "add_compare_command",
                       "information loss and disclosure risk of a masked file"),
    "study": Command("microsdc.cli._study", "add_study_command",
                     "how information-loss measures rank masked data sets (perturbation "
                     "grid)"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``microsdc`` command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(
        "microsdc", "Microdata: masking, information loss and disclosure risk.", COMMANDS,
        "microsdc mask survey.csv --method mdav --vars income age --k 3 --out masked.csv",
        argv)
    return run(parser, argv, (MicroSDCError,))
