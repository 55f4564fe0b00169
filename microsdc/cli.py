"""Command line: ``microsdc compare``, ``microsdc mask`` and ``microsdc study``.

``compare`` measures information loss and disclosure risk of a masked file against its
original; ``mask`` protects chosen columns of a CSV file (other columns are copied unchanged,
rows keep their order); ``study`` runs the perturbation study of information-loss measures on
a shipped or given data set. Reports are built with :mod:`sdcreport`. User errors end with a
one-line message naming the file or column and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microsdc.errors import DataError, MicroSDCError
from sdcreport import Report

__all__ = ["main"]

#: Cell texts read as missing values.
_MISSING = frozenset({"", "NA", "NaN", "nan", "NULL", "null", "N/A", "."})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``microsdc`` command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (MicroSDCError, OSError) as error:
        print(f"microsdc {args.command}: error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="microsdc", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    compare = commands.add_parser(
        "compare", help="information loss and disclosure risk of a masked file")
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
    compare.set_defaults(run=_run_compare)

    mask = commands.add_parser("mask", help="mask columns of a CSV file")
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
    mask.set_defaults(run=_run_mask)

    study = commands.add_parser(
        "study", help="how information-loss measures rank masked data sets (perturbation grid)")
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
    study.set_defaults(run=_run_study)
    return parser


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
    _write(args.json, json.dumps(_plain(result), indent=2, allow_nan=False))
    print(f"measures written to {args.json}")
    if args.html:
        report = Report(f"Masked data {args.masked.name} against {args.original.name}")
        report.metadata.update({"original": str(args.original), "masked": str(args.masked),
                                "variables": ", ".join(columns)})
        _write(args.html, report.add(utility.to_report(), risk.to_report()).to_html())
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
    out.to_csv(args.out, index=False)
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
    _write(args.html, report.to_html())
    _write(args.json, report.to_json())
    print(f"report written to {args.html} and {args.json}")
    return 0


# -- input and output --------------------------------------------------------------------------
def _read_csv(path: Path) -> pd.DataFrame:
    """The file's cells as text (so that columns that are not masked are copied verbatim),
    indexed by the line of the file each record starts on (the header is line 1). Blank
    lines are not records."""
    try:
        text = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=False)
    except FileNotFoundError:
        raise DataError(f"file not found: {path}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read {path} as CSV: {error}") from None
    breaks = sum((text[c].str.count("\n").to_numpy() for c in text.columns),
                 np.zeros(len(text), dtype=int))  # line breaks inside quoted cells
    first_line = 2 + np.arange(len(text)) + np.concatenate([[0], np.cumsum(breaks)[:-1]])
    text.index = pd.Index(first_line, name="line")
    text = text[~(text == "").all(axis=1)]
    if text.empty:
        raise DataError(f"{path} has no records (only a header)")
    return text


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


def _write(path: Path, content: str) -> None:
    path.write_text(content, encoding="utf-8")


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
    sys.exit(main())
