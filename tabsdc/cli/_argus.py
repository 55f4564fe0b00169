"""``tabsdc argus JOB.arb``: run a tau-ARGUS batch file here.

``tabsdc argus JOB.arb [--time-limit S] [--n-jobs N] [--log FILE] [--json FILE] [--quiet]``
reads the job's metadata, data, hierarchies, recodes and a-priori files, protects its tables
with the toolkit's methods (``--n-jobs``: in that many processes where the work splits)
and writes the output files the batch file asks for
(:func:`tabsdc.io.argus._batch.run_batch`). The log goes to standard output (and to
``--log``, besides any ``<LOGBOOK>`` of the job). Exit status: 0 when every protection passed
its audit, 1 when one did not, 2 for a job that cannot run (the message names file, line,
command and reason; nothing is written). The whole job is checked before any work, ``--log``
and ``--json`` included: neither may be a file the job reads or writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sdcreport._files import OutputPathError, all_or_none, write_text
from tabsdc.cli._io import write_json
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import Commands, add_command, positive_seconds, processes
from tabsdc.io.argus._batch import run_batch
from tabsdc.io.argus._plan import plan_batch


def add_argus_command(commands: Commands) -> None:
    """Add the ``argus`` subcommand to a ``tabsdc`` parser's subcommands.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_argus_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["argus", "job.arb", "--time-limit", "60"])
    >>> args.input.name, args.time_limit, args.run.__name__
    ('job.arb', 60.0, '_run_argus')
    """
    parser = add_command(
        commands, "argus", help=COMMANDS["argus"].help,
        example="tabsdc argus TestTable.arb --log job.log --json job.json",
        description=__doc__.splitlines()[0])
    parser.add_argument("input", type=Path, metavar="JOB.arb",
                        help="the tau-ARGUS batch file (.arb)")
    parser.add_argument("--time-limit", type=positive_seconds,
                        help="total seconds for the whole job (caps the batch file's own "
                             "limits)")
    parser.add_argument("--n-jobs", type=processes, default=1, metavar="N",
                        help="processes for the modular method's sub-tables, the checks and "
                             "the audits (-1: one per core)")
    parser.add_argument("--log", type=Path, help="also write the log to this file")
    parser.add_argument("--json", type=Path,
                        help="write every table's protection result as JSON")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.set_defaults(run=_run_argus)


def _run_argus(args: argparse.Namespace) -> int:
    plan = plan_batch(args.input)
    for flag, path in (("--log", args.log), ("--json", args.json)):
        use = plan.use_of(path) if path is not None else None
        if use is not None:
            raise OutputPathError(f"{flag} {path} is {use}; give the command's output a file "
                                  "of its own")
    result = run_batch(plan, time_limit=args.time_limit, n_jobs=args.n_jobs,
                       progress=None if args.quiet else print)
    with all_or_none():
        if args.log:
            write_text(args.log, "\n".join(result.log) + "\n")
        if args.json:
            write_json({"batch": str(args.input), **result.to_dict()}, args.json)
    if args.json:
        print(f"result written to {args.json}")
    protected = sum(job.outcome is not None for job in result.tables)
    each = all(job.outcome.passed for job in result.tables if job.outcome is not None)
    verdict = ("no table was protected (no SUPPRESS)" if not protected else
               "every protection passed its audit" if result.passed else
               "a protection did NOT pass its audit" if not each else
               "tables protected one by one do NOT protect each other (see the log)")
    print(f"{len(result.tables)} table(s), {protected} protected, {len(result.written)} "
          f"file(s) written; {verdict}")
    return 0 if result.passed else 1
