"""Files of the ``tabsdc`` commands: reading the input table, checking and writing outputs.

Readers turn every problem with a file (missing, a folder, empty, not UTF-8, not CSV) into a
:class:`~tabsdc.InputError` naming the file and, where there is one, the line; they
skip the confidentiality line of an internal CSV (:mod:`tabsdc.io._csvfile`). Writers
go through :mod:`sdcreport._files`: outputs are checked by :func:`check_outputs` before the
work starts and each is written whole or not at all. ``--publish`` goes through the one door
(:func:`tabsdc._release.write_publishable`); every other output is internal and says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sdcreport import Report
from sdcreport._files import (
    CONFIDENTIAL,
    CONFIDENTIAL_FIELD,
    all_or_none,
    check_output_paths,
    write_text,
)
from sdcreport._report import jsonable
from tabsdc._decimals import decimals_in_text
from tabsdc._errors import InputError, TabSDCError
from tabsdc._hierarchy import Hierarchy
from tabsdc._table import Table
from tabsdc.cli._options import OUTPUT_OPTIONS
from tabsdc.io._csvfile import input_file, read_csv_file, with_numbers


def read_table(args: argparse.Namespace) -> Table:
    """The table of the input options (:func:`tabsdc.cli._options.add_input_options`); a CSV
    table keeps the decimals its value column is written with
    (:func:`tabsdc._decimals.decimals_in_text`), which its publishable file shows.

    Raises
    ------
    TabSDCError
        A bad file, option or table (the table builders' errors name the cell or line).
    """
    if args.input.suffix.lower() == ".jj":
        return Table.from_jj(input_file(args.input))
    if not args.dims:
        raise InputError("--dims is required for CSV input")
    value = (args.value or "value") if args.aggregated else args.value
    numbers = ([args.freq_column, *(args.top_columns or ())] if args.aggregated
               else [args.weight])
    data = read_csv_file(args.input, numbers=[c for c in numbers if c])
    decimals = decimals_in_text(data[value]) if value in data.columns else None
    data = with_numbers(data, [value] if value else [])
    hierarchies = hierarchies_from_specs(args.hierarchy, data)
    if args.aggregated:
        table = Table.from_aggregated(data, args.dims, value, freq=args.freq_column,
                                      top=args.top_columns, hierarchies=hierarchies)
    else:
        top = max([2, *(int(n) for n, _ in args.nk)])
        table = Table.from_microdata(data, args.dims, value, holding=args.holding,
                                     weight=args.weight, hierarchies=hierarchies, top=top,
                                     negative=args.negative)
    return table if decimals is None else table.with_decimals(decimals)


def hierarchies_from_specs(specs: Sequence[str], data: pd.DataFrame) -> dict[str, Hierarchy]:
    """``--hierarchy DIM=L1,L2,...`` (level columns of ``data``) or ``DIM=file.csv``
    (a parent/child file) options, as hierarchies.

    Raises
    ------
    TabSDCError
        A malformed option, a dimension given twice, a missing column or file.
    """
    hierarchies = {}
    for spec in specs:
        dim, _, source = spec.partition("=")
        if not source:
            raise InputError(f"--hierarchy {spec!r}: expected DIM=L1,L2,... or DIM=file.csv")
        if dim in hierarchies:
            raise InputError(f"--hierarchy is given twice for the dimension {dim!r}; give "
                             "one hierarchy per dimension")
        if source.lower().endswith(".csv"):
            path = Path(source)
            frame = read_csv_file(path)
            try:
                hierarchies[dim] = Hierarchy.from_parent_child(frame)
            except TabSDCError as error:
                raise type(error)(f"{path}: {error}") from None
        else:
            columns = source.split(",")
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise InputError(f"--hierarchy {spec!r}: no column {missing[0]!r} in the data")
            hierarchies[dim] = Hierarchy.from_levels(data[columns])
    return hierarchies


def input_paths(args: argparse.Namespace) -> list[Path]:
    """Every file the command reads: its positional inputs, ``--hierarchy DIM=file.csv`` and
    ``microsdc study --data file.csv``."""
    paths = [getattr(args, name, None) for name in ("input", "original", "masked")]
    paths += [Path(spec.partition("=")[2]) for spec in getattr(args, "hierarchy", None) or ()
              if spec.lower().endswith(".csv")]
    data = getattr(args, "data", None)
    if isinstance(data, str) and Path(data).is_file():
        paths.append(Path(data))
    return [p for p in paths if isinstance(p, Path)]


def _outputs(args: argparse.Namespace) -> Iterator[tuple[str, Path]]:
    for dest, flag in OUTPUT_OPTIONS:
        path = getattr(args, dest, None)
        if path is not None:
            yield flag, path


def check_outputs(args: argparse.Namespace) -> None:
    """Check every output option before the work starts (see
    :func:`sdcreport._files.check_output_paths`).

    Raises
    ------
    sdcreport.OutputPathError
        An output that cannot or must not be written.
    """
    check_output_paths(_outputs(args), input_paths(args), force=getattr(args, "force", False),
                       mkdir=getattr(args, "mkdir", False))


def write_json(data: dict[str, Any], path: Path) -> None:
    """Write a result's machine-readable summary (NaN and infinities as null), whole or not
    at all; its first field says it is confidential
    (:data:`sdcreport._files.CONFIDENTIAL_FIELD`)."""
    field, note = CONFIDENTIAL_FIELD
    write_text(path, json.dumps({field: note, **jsonable(data)}, indent=2, allow_nan=False))


def write_outputs(
    args: argparse.Namespace,
    *,
    table: Table | None = None,
    data: Callable[[], dict[str, Any]] | None = None,
    report: Callable[[], Report] | None = None,
    every_cell: bool = False,
    publishable: bool = True,
    also: Sequence[tuple[Path, Callable[[Path], object], str]] = (),
) -> None:
    """Write the outputs the options ask for: the ``table`` (``--out``, ``--publish``), the
    result's ``data`` (``--json``; the report's content when there is no ``data``) and the
    ``report`` (``--html``, ``--report``), all of them or none
    (:func:`sdcreport._files.all_or_none`), each whole.

    ``every_cell`` publishes every cell of a rounded or adjusted table (sensitive ones at
    their new values). A result that is not ``publishable`` (not protected, a check failed)
    gets no ``--publish`` file, said on standard error; its other outputs are written, to
    show what failed. ``also`` are further outputs of the command, ``(path, writer, what)``,
    written with the others. Each file written is appended to ``args.written`` once all are
    in place.
    """
    from tabsdc._release import write_internal_table, write_publishable

    built = []

    def the_report() -> Report:
        if not built:
            built.append(report())
        return built[0]

    def publish(path: Path) -> None:
        published = table.with_columns(status="s") if every_cell else table
        write_publishable(published, path, symbol=args.symbol, layout=args.layout,
                          decimals=args.decimals)

    def write_data(path: Path) -> None:
        if data:
            write_json(data(), path)
        else:
            write_text(path, the_report().to_json())

    has_table = table is not None
    published = getattr(args, "publish", None) if has_table else None
    if published is not None and not publishable:
        print(f"--publish: nothing written to {published}: the result is not protected or "
              "failed a check (exit status 1); the other outputs show why", file=sys.stderr)
        published = None
    outputs = [*also,
               (getattr(args, "out", None) if has_table else None,
                lambda p: write_internal_table(table, p), f"table ({CONFIDENTIAL})"),
               (published, publish, "publishable table"),
               (args.json, write_data, "result"),
               (args.html, lambda p: write_text(p, the_report().to_html()), "report"),
               (args.report, lambda p: the_report().save(p), "report")]
    wanted = [(path, write, what) for path, write, what in outputs if path is not None]
    with all_or_none():
        for path, write, _ in wanted:
            write(path)
    written = getattr(args, "written", [])
    for path, _, what in wanted:
        written.append(path)
        print(f"{what} written to {path}")
