"""File output shared by the ``tabsdc`` subcommands (suppression, rounding, adjustment)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tabsdc.table import Table

__all__ = ["add_publish_options", "publish", "write_json", "write_table"]


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


def publish(table: Table, args: argparse.Namespace) -> None:
    """Write the publishable file when ``--publish`` was given."""
    from tabsdc.release import write_publishable

    if args.publish:
        write_publishable(table, args.publish, symbol=args.symbol, layout=args.layout)
        print(f"publishable table written to {args.publish}")
