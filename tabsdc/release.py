"""The publishable file: what a publication team receives, and nothing an intruder could use.

A protected table carries much that must stay inside the office: cell statuses (which cells
are primary, which secondary), protection levels, a-priori bounds, contributor counts, the
largest contributions and the rule parameters. The publishable file keeps only the dimension
codes and the published values; every hidden cell (status ``u``, ``m``, ``x`` or ``w``) shows
one symbol, whatever the reason it is hidden. The file depends on nothing but the published
values and the set of hidden cells, so two tables protected with different rules, levels or
primary/secondary roles but the same outcome give byte-identical files.

Everything else (rules, levels, audit intervals, costs) belongs in the internal report
(``to_report()`` of each result).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from sdcreport.files import atomic_write
from tabsdc.errors import InputError
from tabsdc.table import HIDDEN_STATUSES, Table
from tabsdc.tableset import TableSet, write_publishable_set

__all__ = ["publishable_frame", "write_publishable"]


def publishable_frame(
    table: Table,
    *,
    symbol: str = "x",
    decimals: int | None = None,
    layout: Literal["long", "wide"] = "long",
    rows: str | None = None,
    columns: str | None = None,
) -> pd.DataFrame:
    """The published cells as text: dimension codes and values, hidden cells as ``symbol``.

    Parameters
    ----------
    table : Table
        A protected table (suppressed, rounded or adjusted); its ``value`` column is published.
    symbol : str
        What a hidden cell shows (tau-ARGUS and most offices use ``x``).
    decimals : int, optional
        Digits after the decimal point; default: integers when every value is whole, else up
        to 15 significant digits.
    layout : {"long", "wide"}
        ``"long"``: one row per cell (columns: the dimensions, then ``value``; a table read
        from JJ has a ``cell`` column instead). ``"wide"``: a 2-D view ``rows`` x
        ``columns`` (other dimensions at their totals), as a printed table looks.

    Returns
    -------
    pandas.DataFrame
        Strings only, in the table's own cell order (never sorted by status).
    """
    if not symbol or symbol.strip() != symbol:
        raise InputError("the suppression symbol must be a non-empty string without "
                         "leading or trailing blanks")
    hidden = table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    text = np.where(hidden, symbol, _format_values(table.values, decimals)).astype(object)
    if layout == "wide":
        view = table.with_columns(published=text).pivot(rows, columns, values="published")
        return view.rename_axis(index=None, columns=None).reset_index(names=rows or table.dims[0])
    if layout != "long":
        raise InputError(f"layout must be 'long' or 'wide', not {layout!r}")
    if not table.dims:
        return pd.DataFrame({"cell": np.arange(table.n_cells), "value": text})
    frame = table.cells.index.to_frame(index=False)
    frame.columns = list(table.dims)
    return frame.assign(value=text)


def write_publishable(
    table: Table | TableSet,
    path: str | Path,
    *,
    symbol: str = "x",
    decimals: int | None = None,
    layout: Literal["long", "wide"] = "long",
    rows: str | None = None,
    columns: str | None = None,
    sep: str = ",",
) -> Path | tuple[Path, ...]:
    """Write :func:`publishable_frame` as a CSV that Excel opens correctly.

    UTF-8 with a byte-order mark (so Excel reads accented labels), no index column, every
    field as text. Use ``sep=";"`` for locales whose spreadsheets expect semicolons. The file
    is written whole or not at all (:func:`sdcreport.files.atomic_write`).
    A :class:`~tabsdc.tableset.TableSet` is written as one file per table into the
    directory ``path`` (:func:`~tabsdc.tableset.write_publishable_set`).
    """
    if isinstance(table, TableSet):
        return write_publishable_set(table, path, symbol=symbol, decimals=decimals,
                                     layout=layout, rows=rows, columns=columns, sep=sep)
    path = Path(path)
    frame = publishable_frame(table, symbol=symbol, decimals=decimals, layout=layout,
                              rows=rows, columns=columns)
    with atomic_write(path, encoding="utf-8-sig", newline="") as stream:
        frame.to_csv(stream, index=False, sep=sep)
    return path


def _format_values(values: np.ndarray, decimals: int | None) -> np.ndarray:
    if decimals is not None:
        return np.char.mod(f"%.{int(decimals)}f", values)
    # whole numbers as integers where int64 holds them (beyond 2**63 a cast would wrap)
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2.0**63)
    if whole.all():
        return np.char.mod("%d", values.astype(np.int64))
    return np.char.mod("%.15g", values)
