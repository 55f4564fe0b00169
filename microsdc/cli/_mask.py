"""``microsdc mask``: mask the numeric columns of a CSV file (all of them unless ``--vars``
names some); every other column is copied as it is, rows keep their order.

A column of whole numbers stays one where the method keeps it whole: rank swapping only
exchanges values between records, so its integers stay integers; MDAV replaces each value by
its group's mean and noise adds real numbers, so their columns are written as integers only
when every masked value happens to be whole, and with decimals otherwise.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from microsdc._errors import DataError
from microsdc.cli import COMMANDS
from microsdc.cli._io import numbers_of, numeric_columns, read_records
from sdcreport._files import atomic_write
from tabsdc.cli._options import Commands, add_command, add_output_guards

EXAMPLE = "microsdc mask survey.csv --method noise --noise 50 --seed 1 --out masked.csv"


def add_mask_command(commands: Commands) -> None:
    """Add ``mask`` to the ``microsdc`` subcommands."""
    mask = add_command(commands, "mask", help=COMMANDS["mask"].help, example=EXAMPLE)
    mask.add_argument("original", type=Path, help="CSV of the records to mask")
    mask.add_argument("--method", required=True,
                      choices=("mdav", "noise", "correlated-noise", "rankswap"))
    mask.add_argument("--vars", nargs="+", metavar="COLUMN",
                      help="numeric columns to mask (default: every column with a number "
                      "in it; the others are copied)")
    mask.add_argument("--k", type=int, default=3, help="MDAV group size (default 3)")
    mask.add_argument("--noise", type=float, default=150.0,
                      help="noise in %% (of the sd for noise, of the covariance for "
                      "correlated-noise; default 150)")
    mask.add_argument("--p", type=float, default=15.0,
                      help="rank swapping window in %% of the records (default 15)")
    mask.add_argument("--seed", type=int, help="seed of the random methods")
    mask.add_argument("--out", type=Path, required=True, metavar="MASKED.csv")
    add_output_guards(mask)
    mask.set_defaults(run=run_mask)


def run_mask(args: argparse.Namespace) -> int:
    """Run ``microsdc mask``; exit status 0."""
    from microsdc import masking

    text = read_records(args.original)
    columns = args.vars or numeric_columns(text)
    if not columns:
        raise DataError(f"{args.original} has no numeric column to mask; name columns "
                        "with --vars")
    values = numbers_of(text, columns, args.original)
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
    out = masked_text(text, values, apply())
    with atomic_write(args.out, encoding="utf-8", newline="") as stream:
        out.to_csv(stream, index=False)
    copied = [c for c in text.columns if c not in columns]
    kept = f"; copied as they are: {', '.join(copied)}" if copied else ""
    print(f"{label}: masked {len(columns)} column(s) of {len(out)} records{kept}; "
          f"written to {args.out}")
    return 0


def masked_text(text: pd.DataFrame, original: pd.DataFrame, masked: pd.DataFrame
                ) -> pd.DataFrame:
    """``text`` with the columns of ``masked`` replaced; a column whose ``original`` and
    ``masked`` values are all whole is written as integers.

    Examples
    --------
    >>> text = pd.DataFrame({"id": ["a", "b"], "n": ["3", "5"], "x": ["1", "2"]})
    >>> original = pd.DataFrame({"n": [3.0, 5.0], "x": [1.0, 2.0]})
    >>> masked = pd.DataFrame({"n": [5.0, 3.0], "x": [1.5, 1.5]})
    >>> masked_text(text, original, masked).to_csv(index=False).splitlines()
    ['id,n,x', 'a,5,1.5', 'b,3,1.5']
    """
    out = text.copy()
    for column in masked.columns:
        values = masked[column].to_numpy(dtype=float)
        whole = _whole(original[column].to_numpy(dtype=float)) and _whole(values)
        out[column] = values.astype(np.int64) if whole else values
    return out


def _whole(values: np.ndarray) -> bool:
    """Every value a whole number that int64 holds exactly."""
    return bool(np.all((values == np.round(values)) & (np.abs(values) < 2.0**53)))
