"""File output shared by the ``tabsdc`` subcommands (suppression, rounding, adjustment)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tabsdc.errors import TabSDCError
from tabsdc.hierarchy import Hierarchy
from tabsdc.table import Table

__all__ = [
    "add_publish_options", "hierarchies_from_specs", "publish", "read_records", "write_json",
    "write_table",
]


def read_records(path: Path, codes: Sequence[str] = ()) -> pd.DataFrame:
    """A CSV of records (or interior cells), indexed by the line of the file each record is on
    (the header is line 1), so that every error names the line; ``codes`` columns as text.

    Raises
    ------
    TabSDCError
        The file is empty or holds a header only.
    """
    try:
        data = pd.read_csv(path, dtype=dict.fromkeys(codes, str))
    except pd.errors.EmptyDataError:
        raise TabSDCError(f"{path} is empty") from None
    if data.empty:
        raise TabSDCError(f"{path} has a header but no records")
    data.index = pd.RangeIndex(2, len(data) + 2, name="line")
    return data


def write_table(table: Table, path: Path) -> None:
    """Write a JJ file for ``.jj``, else a CSV of every cell with all its columns."""
    if path.suffix.lower() == ".jj":
        table.to_jj(path)
    else:
        table.to_frame().to_csv(path, index=False)
    print(f"table written to {path}")


def write_json(data: dict[str, Any], path: Path) -> None:
    """Write a result's machine-readable summary."""
    path.write_text(json.dumps(data, indent=2))
    print(f"result written to {path}")


def add_publish_options(parser: argparse.ArgumentParser) -> None:
    """``--publish FILE.csv`` and ``--symbol``: the file a publication team receives."""
    parser.add_argument("--publish", type=Path, metavar="FILE.csv",
                        help="write the publishable table: codes and published values only, "
                             "hidden cells as --symbol (no statuses, levels or rules)")
    parser.add_argument("--symbol", default="x", help="what a hidden cell shows (default x)")
    parser.add_argument("--layout", default="long", choices=["long", "wide"],
                        help="publishable file: one row per cell, or a 2-D view")


def publish(table: Table, args: argparse.Namespace, *, every_cell: bool = False) -> None:
    """Write the publishable file when ``--publish`` was given; ``every_cell`` for rounded
    or adjusted tables, which publish every cell (sensitive ones at their new values)."""
    from tabsdc.release import write_publishable

    if every_cell:
        table = table.with_columns(status="s")
    if args.publish:
        write_publishable(table, args.publish, symbol=args.symbol, layout=args.layout)
        print(f"publishable table written to {args.publish}")


def hierarchies_from_specs(specs: Sequence[str], data: pd.DataFrame) -> dict[str, Hierarchy]:
    """``--hierarchy DIM=L1,L2,...`` (level columns of ``data``) or ``DIM=file.csv``
    (a parent/child file) options, as hierarchies."""
    hierarchies = {}
    for spec in specs:
        dim, _, source = spec.partition("=")
        if not source:
            raise TabSDCError(f"--hierarchy {spec!r}: expected DIM=L1,L2,... or DIM=file.csv")
        if source.endswith(".csv"):
            hierarchies[dim] = Hierarchy.from_parent_child(pd.read_csv(source, dtype=str))
        else:
            columns = source.split(",")
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise TabSDCError(f"--hierarchy {spec!r}: no column {missing[0]!r} in the data")
            hierarchies[dim] = Hierarchy.from_levels(data[columns].astype(str))
    return hierarchies
