"""``tabsdc round`` and the rounding part of ``tabsdc demo``.

``tabsdc round INPUT.(jj|csv) --base B --method M [--seed N] [--out OUT.jj] [--json OUT.json]
[--html OUT.html]`` rounds every cell of a table (:func:`tabsdc.rounding.round_table`), writes
the rounded table, a JSON summary (``status``, ``base``, ``method``, ``total_abs_deviation``,
``max_abs_deviation``, ``additive`` and the statistics and audit) and optionally an HTML report
(any of them; see :func:`tabsdc.cli._options.add_output_options`). The choices of ``--method``
are :data:`tabsdc.rounding.METHODS`. A CSV holds every cell, totals included, one column per
dimension (as written by ``tabsdc rules --out cells.csv``); the dimensions are the columns
before ``value`` unless ``--dims`` names them, every other column is carried over, and a
hierarchical dimension needs ``--hierarchy DIM=FILE.csv`` (columns ``parent,child``).
With ``--keep-best``, a Ctrl-C during controlled rounding writes the best (additive) rounding
its MILP has found so far (exit status 130).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport import Report, Section
from tabsdc._decimals import decimals_in_text
from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc.cli._io import hierarchies_from_specs, write_outputs
from tabsdc.cli._main import COMMANDS
from tabsdc.cli._options import (
    Commands,
    add_command,
    add_keep_best_option,
    add_output_options,
    add_solver_option,
    add_time_limit_option,
    kept_best,
    progress_printer,
    refuse_unchecked,
    time_limit_of,
    whole_number,
)
from tabsdc.io._csvfile import input_file, read_csv_file, with_numbers
from tabsdc.rounding import METHODS, choose_base, round_table

EXAMPLE = ("tabsdc round counts.jj --base 5 --method controlled --seed 1 --out rounded.jj "
           "--json rounded.json --publish publish.csv")

#: Candidate bases of the demo's base choice.
DEMO_BASES = (2, 3, 4, 5, 10)


def positive_base(text: str) -> int:
    """``--base``: a whole number >= 2 (:func:`~tabsdc.cli._options.whole_number`, which
    names the bad text).

    Examples
    --------
    >>> [positive_base(text) for text in ("2", "10")]
    [2, 10]
    """
    return whole_number(text, least=2)


def add_round_command(commands: Commands) -> None:
    """Add ``round`` to the ``tabsdc`` subcommands (its ``run`` is :func:`run_round`).

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="tabsdc")
    >>> add_round_command(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["round", "t.jj", "--base", "5", "--method", "controlled"])
    >>> args.base, args.run is run_round
    (5, True)
    """
    parser = add_command(
        commands, "round", example=EXAMPLE, help=COMMANDS["round"].help)
    parser.add_argument("input", type=Path, help="JJ file, or CSV of every cell (totals "
                        "included)")
    parser.add_argument("--base", type=positive_base, required=True,
                        help="rounding base (a whole number >= 2)")
    parser.add_argument("--method", required=True, choices=METHODS)
    parser.add_argument("--seed", type=int, help="random seed of the random methods")
    parser.add_argument("--column", default="value",
                        help="cell column to round (e.g. freq for the count table)")
    parser.add_argument("--dims", nargs="+", help="dimension columns of a CSV (default: "
                        "the columns before 'value')")
    parser.add_argument("--hierarchy", action="append", default=[], metavar="DIM=FILE.csv",
                        help="hierarchy of a CSV dimension from a file with columns "
                        "parent,child")
    add_time_limit_option(parser)
    add_solver_option(parser)
    add_keep_best_option(parser, "controlled rounding (additive)")
    parser.add_argument("--no-audit", action="store_true",
                        help="skip the audit of the release (two LPs per cell)")
    parser.add_argument("--max-round", type=int, metavar="M",
                        help="small-count: published counts up to M are rounded (default "
                        "base - 1)")
    add_output_options(parser, json_help="write the result summary (status, base, method, "
                       "deviations, additive, statistics, audit)")
    parser.set_defaults(run=run_round)


def read_round_input(
    path: Path,
    column: str = "value",
    dims: Sequence[str] | None = None,
    hierarchy_specs: Sequence[str] = (),
) -> Table:
    """The table to round: a JJ file, or a CSV of every cell; ``column`` becomes its value.

    Raises
    ------
    InputError
        An unknown suffix, a CSV without ``value`` or dimension columns, or a ``column`` the
        table does not have (or misses for some cell).
    TabSDCError
        A malformed ``--hierarchy``; the table builders' errors (non-additive CSV, unknown
        codes, malformed JJ file).
    """
    suffix = path.suffix.lower()
    if suffix == ".jj":
        table = Table.from_jj(input_file(path))
    elif suffix == ".csv":
        table = _table_from_csv(path, dims, hierarchy_specs)
    else:
        raise InputError(f"{path}: expected a .jj or .csv table, got {suffix or 'no suffix'!r}")
    if column != "value":
        if column not in table.cells.columns:
            raise InputError(f"{path}: no cell column {column!r} (columns: "
                             f"{', '.join(map(str, table.cells.columns))})")
        numbers = pd.to_numeric(table.cells[column], errors="coerce").to_numpy(dtype=float)
        missing = np.flatnonzero(np.isnan(numbers))
        if missing.size:
            raise InputError(f"{path}: {table.cell_labels(missing[:1])[0]} has no "
                             f"{column}")
        table = table.with_columns(value=numbers)
    return table


def _table_from_csv(path: Path, dims: Sequence[str] | None, specs: Sequence[str]) -> Table:
    frame = read_csv_file(path)
    header = list(frame.columns)
    if "value" not in header:
        raise InputError(f"{path}: no 'value' column (columns: {', '.join(header)})")
    dims = list(dims) if dims else header[:header.index("value")]
    if not dims:
        raise InputError(f"{path}: no dimension columns before 'value'; name them with --dims")

    decimals = decimals_in_text(frame["value"])
    frame = with_numbers(frame, [c for c in header if c not in dims])
    table = Table.from_frame(frame, dims, hierarchies=hierarchies_from_specs(specs, frame))
    others = frame.drop(columns=[*dims, "value"]).set_index(frame[dims].apply(tuple, axis=1)
                                                            if len(dims) > 1 else frame[dims[0]])
    others = others.reindex(table.cells.index)  # from_frame orders the cells its own way
    return table.with_columns(**{str(c): others[c].to_numpy() for c in others.columns}
                              ).with_decimals(decimals)


def run_round(args: argparse.Namespace) -> int:
    """Run ``tabsdc round``; exit status 1 when no controlled rounding exists (the closest
    additive alternative is written instead), else 0."""
    table = read_round_input(args.input, args.column, args.dims, args.hierarchy)
    progress = progress_printer(args)
    result = round_table(table, args.base, args.method, seed=args.seed,
                         solver=args.solver, time_limit=time_limit_of(args),
                         audit=not args.no_audit, max_round=args.max_round,
                         progress=progress)
    print(result.summary())
    if result.interrupted:  # --keep-best (else the interrupt has ended the command)
        refuse_unchecked(result.additive, "rounding", "the additivity check")
    write_outputs(args, table=result.table, data=result.to_dict, every_cell=True,
                  report=lambda: Report(
                      f"Rounding of {args.input.name}",
                      metadata={"column rounded": args.column, "base": args.base,
                                "method": args.method, "seed": args.seed}
                  ).add(result.to_report(), result.table.to_report()))
    if result.interrupted:
        raise kept_best("controlled rounding (additive)", result.status,
                        None if result.solve is None else result.solve.gap)
    return 1 if result.exists is False else 0


def rounding_demo_sections(
    table: Table, candidates: Sequence[int] = DEMO_BASES, alpha: float = 0.05
) -> list[Section]:
    """Controlled rounding of the count table of ``table`` (the demo's), as report sections.

    The count (``freq``) table (both dimensions hierarchical: a MILP) is rounded with the
    largest candidate base whose conditional chi-square U is not significant at ``alpha``
    (:func:`~tabsdc.rounding.choose_base`; the smallest candidate when every one is
    significant, which the base-choice section then shows), then audited.

    Returns
    -------
    list of Section
        The base choice and the rounding result (statistics, posterior table and plot,
        deviation histogram, audit).
    """
    counts = table.with_columns(value=table.cells["freq"].to_numpy(dtype=float))
    choice = choose_base(counts, candidates, "controlled", alpha=alpha)
    base = choice.base if choice.base is not None else min(candidates)
    result = round_table(counts, base, "controlled")
    dims = " x ".join(table.dims)
    intro = choice.to_report().add_text(
        f"Counts of companies by {dims}, {counts.n_cells} cells with every subtotal of both "
        f"hierarchies, rounded to base {base} by controlled rounding: every published count "
        "is a multiple of the base and every total still equals the sum of its parts.")
    return [intro, result.to_report()]
