"""``tabsdc ptable`` and ``tabsdc ckm``: the cell key method from the command line.

``tabsdc ptable --max-noise D --variance V [--js N] [--pstay P] --out FILE`` builds a p-table
(:func:`tabsdc.ckm.build_ptable`) and writes it in tau-ARGUS's format.

``tabsdc ckm INPUT.csv --dims ... --record-key COL --ptable FILE --publish FILE`` counts the
records of a microdata CSV per cell (totals from ``--hierarchy`` as in ``tabsdc rules``) and
publishes every count with its cell-key noise (:func:`tabsdc.ckm.perturb_counts`);
``--out`` writes every cell with its original count (internal), ``--json``/``--html`` the
result and its quality and risk figures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sdcreport import Report
from tabsdc._errors import InputError
from tabsdc.ckm import build_ptable, perturb_counts, read_ptable
from tabsdc.ckm._ptable import VARIANCE_RULES
from tabsdc.cli._io import hierarchies_from_specs, write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import Commands, add_command, add_output_options, progress_printer
from tabsdc.io._csvfile import input_file, read_csv_file

PTABLE_EXAMPLE = "tabsdc ptable --max-noise 5 --variance 3 --js 2 --pstay 0.5 --out ptab.txt"
CKM_EXAMPLE = ("tabsdc ckm census.csv --dims region sex age --record-key rkey "
               "--ptable ptab.txt --publish counts.csv --html ckm.html")


def add_ptable_command(commands: Commands) -> None:
    """Add ``ptable`` to the ``tabsdc`` subcommands (its ``run`` is :func:`run_ptable`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_ptable_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["ptable", "--max-noise", "5", "--variance", "3",
    ...                           "--out", "p.txt"])
    >>> args.max_noise, args.js, args.run is run_ptable
    (5, 0, True)
    """
    parser = add_command(commands, "ptable", example=PTABLE_EXAMPLE,
                         help=COMMANDS["ptable"].help)
    parser.add_argument("--max-noise", type=int, required=True, metavar="D",
                        help="largest absolute noise")
    parser.add_argument("--variance", type=float, required=True, metavar="V",
                        help="variance of the noise")
    parser.add_argument("--js", type=int, default=0, metavar="N",
                        help="counts 1..N are never published (default 0)")
    parser.add_argument("--pstay", type=float, metavar="P",
                        help="lower bound of the probability of no noise")
    parser.add_argument("--variance-rule", choices=VARIANCE_RULES, default="at-most",
                        help="the noise variance at most V (default) or exactly V")
    parser.add_argument("--no-mono", action="store_true",
                        help="do not require probabilities to grow towards no noise")
    parser.add_argument("--magnitude", action="store_true",
                        help="a magnitude p-table (with --step and --icat)")
    parser.add_argument("--step", type=int, default=2, help="magnitudes: targets on a grid "
                        "of 1/step (default 2)")
    parser.add_argument("--icat", type=float, nargs="+", help="magnitudes: the rows (must "
                        "hold 1 and D)")
    parser.add_argument("--out", type=Path, required=True, help="the p-table file to write")
    add_output_options(parser, table=False, json_help="write the p-table's rows as JSON")
    parser.set_defaults(run=run_ptable)


def run_ptable(args: argparse.Namespace) -> int:
    """Run ``tabsdc ptable``; exit status 0."""
    table = build_ptable(args.max_noise, args.variance, js=args.js, pstay=args.pstay,
                         variance_rule=args.variance_rule, monotone=not args.no_mono,
                         kind="magnitude" if args.magnitude else "counts", step=args.step,
                         icat=args.icat)
    print(table.summary())
    write_outputs(args, data=lambda: {"status": "built", "parameters": table.parameters,
                                      "rows": table.to_frame().to_dict("records")},
                  report=lambda: _ptable_report(table),
                  also=[(args.out, table.write, "p-table")])
    return 0


def _ptable_report(table) -> Report:
    from sdcreport import Section
    from tabsdc.ckm._plots import ptable_figure

    section = Section("Perturbation table").add_text(table.summary())
    section.add_table(table.to_frame(), "Transitions")
    section.add_figure(ptable_figure(table), "Transition probabilities")
    return Report("Perturbation table of the cell key method").add(section)


def add_ckm_command(commands: Commands) -> None:
    """Add ``ckm`` to the ``tabsdc`` subcommands (its ``run`` is :func:`run_ckm`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_ckm_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["ckm", "c.csv", "--dims", "a", "b", "--record-key", "k",
    ...                           "--ptable", "p.txt", "--publish", "out.csv"])
    >>> args.dims, args.record_key, args.run is run_ckm
    (['a', 'b'], 'k', True)
    """
    parser = add_command(commands, "ckm", example=CKM_EXAMPLE, help=COMMANDS["ckm"].help)
    parser.add_argument("input", type=Path, help="CSV of records (one row per unit)")
    parser.add_argument("--dims", nargs="+", required=True, help="dimension columns")
    parser.add_argument("--hierarchy", action="append", default=[], metavar="DIM=L1,L2,..",
                        help="hierarchy of DIM from level columns, coarsest first; or "
                        "DIM=file.csv with columns parent,child (once per dimension)")
    parser.add_argument("--ptable", type=Path, required=True,
                        help="the p-table file (tau-ARGUS format; tabsdc ptable writes one)")
    parser.add_argument("--record-key", metavar="COL",
                        help="column of the record keys; without it keys are drawn with "
                        "--seed (store them: the same keys give the same noise next time)")
    parser.add_argument("--digits", type=int, default=8,
                        help="decimals of the record keys (default 8)")
    parser.add_argument("--seed", type=int, help="seed of drawn record keys")
    add_output_options(parser, json_help="write the result summary (cells, noise, distance "
                       "measures, posterior risk)")
    parser.set_defaults(run=run_ckm)


def run_ckm(args: argparse.Namespace) -> int:
    """Run ``tabsdc ckm``; exit status 0."""
    ptable = read_ptable(input_file(args.ptable))
    data = read_csv_file(args.input)
    if args.record_key is not None and args.record_key not in data.columns:
        raise InputError(f"{args.input}: no column {args.record_key!r} for --record-key")
    result = perturb_counts(data, args.dims, ptable, record_key=args.record_key,
                            hierarchies=hierarchies_from_specs(args.hierarchy, data),
                            digits=args.digits, seed=args.seed,
                            progress=progress_printer(args))
    print(result.summary())
    write_outputs(args, table=result.table, data=result.to_dict, every_cell=True,
                  report=lambda: Report(f"Cell key method on {args.input.name}", metadata={
                      "p-table": str(args.ptable), "record key": args.record_key or "drawn",
                      "seed": args.seed}).add(result.to_report()))
    return 0
