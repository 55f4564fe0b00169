"""Command line: ``microsdc compare``, ``microsdc mask`` and ``microsdc study``.

``compare`` measures information loss and disclosure risk of a masked file against its
original; ``mask`` protects chosen columns of a CSV file (other columns are copied unchanged,
rows keep their order); ``study`` runs the perturbation study of information-loss measures on
a shipped or given data set. Reports are built with :mod:`sdcreport`. The runner is the one
of ``tabsdc`` (:mod:`tabsdc.cli.main`): outputs are checked before the work starts and written
whole or not at all; exit status 2 for a user error (one line naming the file or column), 3
for an internal error (``--debug`` shows the traceback), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microsdc.errors import DataError, MicroSDCError
from sdcreport import Report
from sdcreport.files import all_or_none, atomic_write, write_text
from tabsdc.cli.main import build_parser, run
from tabsdc.cli.options import Commands, add_command
from tabsdc.errors import TabSDCError
from tabsdc.io.csvfile import read_csv_file

__all__ = ["main", "add_compare_command", "add_mask_command", "add_study_command"]

#: Cell texts read as missing values.
_MISSING = frozenset({"", "NA", "NaN", "nan", "NULL", "null", "N/A", "."})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``microsdc`` command line; returns the exit status."""
    parser = build_parser(
        "microsdc", __doc__.splitlines()[0],
        [add_compare_command, add_mask_command, add_study_command],
        "microsdc mask survey.csv --method mdav --vars income age --k 3 --out masked.csv")
    return run(parser, argv, (MicroSDCError,))


def _add_output_guards(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true",
                        help="allow an output to replace an input file")
    parser.add_argument("--mkdir", action="store_true", help="create missing output folders")


def add_compare_command(commands: Commands) -> None:
    """Add ``compare`` to the ``microsdc`` subcommands."""
    compare = add_command(
        commands, "compare", help="information loss and disclosure risk of a masked file",
        example="microsdc compare survey.csv masked.csv --vars income age --json loss.json "
                "--html loss.html")
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
    _add_output_guards(compare)
    compare.set_defaults(run=_run_compare)


def add_mask_command(commands: Commands) -> None:
    """Add ``mask`` to the ``microsdc`` subcommands."""
    mask = add_command(commands, "mask", help="mask columns of a CSV file",
                       example="microsdc mask survey.csv --method noise --noise 50 --seed 1 "
                               "--out masked.csv")
    mask.add_argument("original", type=Path, help="CSV of the records to mask")
    mask.add_argument("--method", required=True,
                      choices=("mdav", "noise", "correlated-noise", "rankswap"))
    mask.add_argument("--vars", nargs="+", metavar="COLUMN",
                      help="numeric columns to mask (default: all); the others are copied")
    mask.add_argument("--k", type=int, default=3, help="MDAV group size (default 3)")
    mask.add_argument("--noise", type=float, default=150.0,
                      help="noise in %% (of the sd for noise, of the covariance for "
                      "correlated-noise; default 150)")
    mask.add_argument("--p", type=float, default=15.0,
                      help="rank swapping window in %% of the records (default 15)")
    mask.add_argument("--seed", type=int, help="seed of the random methods")
    mask.add_argument("--out", type=Path, required=True, metavar="MASKED.csv")
    _add_output_guards(mask)
    mask.set_defaults(run=_run_mask)


def add_study_command(commands: Commands) -> None:
    """Add ``study`` to the ``microsdc`` subcommands."""
    study = add_command(
        commands, "study", help="how information-loss measures rank masked data sets "
        "(perturbation grid)",
        example="microsdc study --data tarragona --quick --html study.html --json study.json")
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
    _add_output_guards(study)
    study.set_defaults(run=_run_study)


# -- commands ----------------------------------------------------------------------------------
def _run_compare(args: argparse.Namespace) -> int:
    from microsdc.risk import disclosure_risk
    from microsdc.utility import information_loss

    original_text = _read_csv(args.original)
    masked_text = _read_csv(args.masked)
    columns = args.vars or list(original_text.columns)
    original = _numeric(original_text, columns, args.original)
    masked = _numeric(masked_text, columns, args.masked)
    utility = information_loss(original, masked, ties=args.ties, seed=args.seed)
    risk = disclosure_risk(original, masked, seed=args.seed)
    print(utility.summary())
    print(risk.summary())
    result = {"original": str(args.original), "masked": str(args.masked),
              "variables": columns, **utility.to_dict(), "risk": risk.to_dict()}
    with all_or_none():
        write_text(args.json, json.dumps(_plain(result), indent=2, allow_nan=False))
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


def _run_mask(args: argparse.Namespace) -> int:
    from microsdc import masking

    text = _read_csv(args.original)
    columns = args.vars or list(text.columns)
    values = _numeric(text, columns, args.original)
    methods = {
        "mdav": (lambda: masking.mdav(values, k=args.k), f"MDAV, k = {args.k}"),
        "noise": (lambda: masking.additive_noise(values, args.noise, seed=args.seed),
                  f"additive noise, {args.noise:g} % of the sd"),
        "correlated-noise": (lambda: masking.correlated_noise(values, args.noise,
                                                              seed=args.seed),
                             f"correlated noise, {args.noise:g} % of the covariance"),
        "rankswap": (lambda: masking.rank_swap(values, args.p, seed=args.seed),
                     f"rank swapping, p = {args.p:g} %"),
    }
    apply, label = methods[args.method]
    out = text.copy()
    out[columns] = apply()
    with atomic_write(args.out, encoding="utf-8", newline="") as stream:
        out.to_csv(stream, index=False)
    print(f"{label}: masked {len(columns)} column(s) of {len(out)} records; "
          f"written to {args.out}")
    return 0


def _run_study(args: argparse.Namespace) -> int:
    from microsdc.datasets import load_casc, load_tarragona
    from microsdc.studies import default_grid, quick_grid, run_study

    shipped = {"tarragona": load_tarragona, "casc": load_casc}
    if args.data.lower() in shipped:
        data = shipped[args.data.lower()]()
        if args.vars:
            data = data[_known(data, args.vars, args.data)]
        name = args.data.lower()
    else:
        path = Path(args.data)
        text = _read_csv(path)
        data = _numeric(text, args.vars or list(text.columns), path)
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


# -- input and output --------------------------------------------------------------------------
def _read_csv(path: Path) -> pd.DataFrame:
    """The file's cells as text (so that columns that are not masked are copied verbatim),
    indexed by the line of the file each record starts on (the header is line 1;
    :func:`tabsdc.io.csvfile.read_csv_file`)."""
    try:
        return read_csv_file(path)
    except TabSDCError as error:  # missing, a folder, empty, not UTF-8 or not CSV
        raise DataError(str(error)) from None


def _known(frame: pd.DataFrame, columns: Sequence[str], source: Any) -> list[str]:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise DataError(f"column {absent[0]!r} is not in {source}")
    if len(set(columns)) != len(columns):
        raise DataError(f"a column is named twice in --vars: {list(columns)}")
    return list(columns)


def _numeric(text: pd.DataFrame, columns: Sequence[str], path: Path) -> pd.DataFrame:
    """The chosen columns as finite numbers; names the column and the file line of the first
    bad cell."""
    out = {}
    for column in _known(text, columns, path):
        cells = text[column].str.strip()
        values = pd.to_numeric(cells, errors="coerce").astype(float)
        missing = cells.isin(_MISSING)
        bad = values.isna() & ~missing
        infinite = np.isinf(values)
        for problem, where in (("is not numeric", bad), ("has a missing value", missing),
                               ("has an infinite value", infinite)):
            if where.any():
                row = int(where.to_numpy().argmax())
                hint = "; choose columns with --vars" if problem == "is not numeric" else ""
                raise DataError(f"column {column!r} of {path} {problem} "
                                f"({text[column].iloc[row]!r} on line {text.index[row]}){hint}")
        out[column] = values
    return pd.DataFrame(out, index=text.index)


def _plain(value: Any) -> Any:
    """JSON-ready: NaN and infinities become null."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


if __name__ == "__main__":
    raise SystemExit(main())
