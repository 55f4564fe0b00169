"""The one door out: every publishable file is written by :func:`write_release`.

A protected table carries much that must stay inside the office: the values of its hidden
cells, cell statuses (which cells are primary, which secondary), protection levels, a-priori
bounds, contributor counts, the largest contributions and the rule parameters. A publishable
file keeps only the dimension codes and what is published of the published cells; every
field of a hidden cell (status ``u``, ``m``, ``x`` or ``w``) shows one symbol, whatever the
reason it is hidden.

:func:`write_release` is the one function that writes such a file. It never sees a hidden
cell's value: it takes the codes of every cell, the fields of the *published* cells only
(:func:`published_cells` picks them), and the symbol for the others; it lays them out (one
line per cell, or a printed table with one dimension across) and writes the file whole or not
at all. Every writer of publishable files goes through it: :func:`write_publishable` (the
command line's ``--publish``, the browser app's download, table sets) and tau-ARGUS's
``<WRITETABLE>`` types 1 to 4 (:mod:`tabsdc.io.argus._output`). So the file depends on nothing
but the published fields and the set of hidden cells: two tables protected with different
rules, levels or primary/secondary roles but the same outcome give byte-identical files.

Everything else belongs in internal files, which say so of themselves
(:data:`sdcreport._files.CONFIDENTIAL`): :func:`write_internal_table` writes a table with all
its cells, and every result's ``to_report()`` gives the internal report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from sdcreport._files import CSV_MARK, atomic_write
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._decimals import checked_decimals, decimals_of, format_decimals
from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc._tableset import TableSet


def published_cells(table: Table, cells: np.ndarray | None = None) -> pd.Series:
    """The published cells among ``cells``: the only cells whose fields may be released.

    Parameters
    ----------
    table : Table
        A protected table; cells with a status in ``HIDDEN_STATUSES`` are hidden.
    cells : array of int, optional
        Positions of the cells to release, in the order of the file (default: every cell in
        table order).

    Returns
    -------
    pandas.Series
        Table positions of the published cells, indexed by their rank in ``cells``: build
        the ``published`` frame of :func:`write_release` from ``values[series]`` with the
        series' index.

    Examples
    --------
    >>> import pandas as pd
    >>> t = Table(pd.DataFrame({"value": [5.0, 2.0, 3.0], "status": ["s", "u", "m"]}),
    ...           [[-1, 1, 1]], [0])
    >>> published_cells(t).tolist(), published_cells(t, [2, 0]).to_dict()
    ([0], {1: 0})
    """
    positions = np.arange(table.n_cells) if cells is None else np.asarray(cells, dtype=np.int64)
    shown = ~table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()[positions]
    return pd.Series(positions[shown], index=np.flatnonzero(shown))


def release_frame(
    codes: pd.DataFrame,
    published: pd.DataFrame,
    *,
    symbol: str = "x",
    across: str | None = None,
) -> pd.DataFrame:
    """The content of a publishable file: codes, published fields, the symbol elsewhere.

    Parameters
    ----------
    codes : pandas.DataFrame
        One row per cell of the file, in its order: the codes (and anything else that
        depends on the codes alone, such as hierarchy levels).
    published : pandas.DataFrame
        The fields of the published cells only, as text, indexed by the row of ``codes``
        they belong to (see :func:`published_cells`). A row of ``codes`` missing here is a
        hidden cell: every one of its fields shows ``symbol``.
    symbol : str
        What a hidden cell shows (tau-ARGUS and most offices use ``x``).
    across : str, optional
        A column of ``codes`` to spread across, as a printed table looks: one line per
        combination of the other codes (in order of first appearance), one column per code
        of ``across`` (likewise), the one field of ``published`` in the body; a combination
        that is not a cell is empty.

    Returns
    -------
    pandas.DataFrame
        Text only.

    Raises
    ------
    InputError
        A bad symbol, a ``published`` row that is not a row of ``codes`` or given twice, a
        field that is not text, ``across`` not a column of ``codes`` or with more than one
        field.

    Examples
    --------
    >>> codes = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"]})
    >>> published = pd.DataFrame({"value": ["1", "4"]}, index=[0, 3])
    >>> release_frame(codes, published).to_numpy().tolist()
    [['a', 'x', '1'], ['a', 'y', 'x'], ['b', 'x', 'x'], ['b', 'y', '4']]
    >>> release_frame(codes, published, symbol="..", across="c").to_numpy().tolist()
    [['a', '1', '..'], ['b', '..', '4']]
    """
    if not isinstance(symbol, str) or not symbol or symbol.strip() != symbol:
        raise InputError("the suppression symbol must be a non-empty string without "
                         "leading or trailing blanks")
    rows = published.index.to_numpy()
    if not published.index.is_unique or not np.isin(rows, np.arange(len(codes))).all():
        raise InputError("published cells must be distinct rows of the codes")
    for name in published.columns:
        if len(published) and pd.api.types.infer_dtype(published[name]) != "string":
            raise InputError(f"published field {name!r} must be text")
    body = np.full((len(codes), published.shape[1]), symbol, dtype=object)
    body[rows] = published.to_numpy(dtype=object)
    codes = codes.reset_index(drop=True).astype(str).astype(object)
    if across is None:
        return pd.concat([codes, pd.DataFrame(body, columns=published.columns, dtype=object)],
                         axis=1)
    if across not in codes.columns or published.shape[1] != 1:
        raise InputError(f"across must name a code column ({list(codes.columns)}) of a file "
                         "with one field")
    down = [c for c in codes.columns if c != across]
    line, lines = pd.factorize(pd.MultiIndex.from_frame(codes[down]))
    column, labels = pd.factorize(codes[across])
    grid = np.full((len(lines), len(labels)), "", dtype=object)
    grid[line, column] = body[:, 0]
    head = lines.to_frame(index=False, name=down).astype(object)
    return pd.concat([head, pd.DataFrame(grid, columns=labels, dtype=object)], axis=1)


def write_release(
    path: str | Path,
    codes: pd.DataFrame,
    published: pd.DataFrame,
    *,
    symbol: str = "x",
    across: str | None = None,
    header: bool = True,
    names: Sequence[str] | None = None,
    sep: str = ",",
    quoting: bool = True,
    encoding: str = "utf-8-sig",
) -> Path:
    """Write a publishable file: the one function through which one leaves the toolkit.

    The content is :func:`release_frame` of ``codes``, ``published``, ``symbol`` and
    ``across``; the file is written whole or not at all
    (:func:`sdcreport._files.atomic_write`).

    Parameters
    ----------
    path : str or Path
        The file.
    codes, published, symbol, across
        As for :func:`release_frame`.
    header : bool
        Write a first line of column names: ``names`` for the code columns (default their
        own names), then the field names (with ``across``: its codes).
    names : sequence of str, optional
        Header names of the first columns.
    sep : str
        Field separator.
    quoting : bool
        ``True``: CSV quoting (a field holding ``sep``, a quote or a line end is quoted).
        ``False``: fields joined by ``sep`` as they are, one line each (tau-ARGUS's
        writers; codes quoted by the caller where the format wants quotes).
    encoding : str
        ``"utf-8-sig"`` (UTF-8 with a byte-order mark, so spreadsheet programs read accented
        labels) or, for instance, ``"latin-1"`` (tau-ARGUS).

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile
    >>> codes = pd.DataFrame({"r": ["Total", "a", "b"]})
    >>> published = pd.DataFrame({"value": ["9"]}, index=[0])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_release(Path(tmp) / "t.csv", codes, published, encoding="utf-8")
    ...     path.read_text(encoding="utf-8").splitlines()
    ['r,value', 'Total,9', 'a,x', 'b,x']
    """
    frame = release_frame(codes, published, symbol=symbol, across=across)
    head = [str(c) for c in frame.columns]
    if names is not None:
        head[:len(names)] = names
    path = Path(path)
    with atomic_write(path, encoding=encoding, newline="") as stream:
        if quoting:
            frame.to_csv(stream, index=False, sep=sep, header=head if header else False)
        else:
            rows = map(sep.join, frame.to_numpy(dtype=object).tolist())
            text = [sep.join(head)] * header + list(rows)
            stream.write("\n".join(text) + "\n" if text else "")
    return path


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
        Digits after the decimal point of every published value. Default: the table's own
        (:attr:`~tabsdc._table.Table.decimals`, those of its input), or fewer when no
        published value needs them (:func:`tabsdc._decimals.decimals_of` of the published
        values: hidden values play no part).
    layout : {"long", "wide"}
        ``"long"``: one row per cell (columns: the dimensions, then ``value``; a table read
        from JJ has a ``cell`` column instead, in the file's order). ``"wide"``: a 2-D view
        ``rows`` x ``columns`` (other dimensions at their totals, rows and columns in
        hierarchy order), as a printed table looks.

    Returns
    -------
    pandas.DataFrame
        Strings only, cells in hierarchy order (:meth:`~tabsdc._table.Table.hierarchy_order`:
        totals before their parts, the codes under a parent sorted; never sorted by status).

    Examples
    --------
    >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "v": [1.5, 2.0]}), ["r"], "v")
    >>> publishable_frame(t.with_columns(status=["s", "u", "m"])).to_numpy().tolist()
    [['Total', '3.5'], ['a', 'x'], ['b', 'x']]
    """
    return release_frame(*_release_parts(table, decimals, layout, rows, columns),
                         symbol=symbol, across=_across(table, layout, columns))


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
    is written by :func:`write_release`, whole or not at all.
    A :class:`~tabsdc._tableset.TableSet` is written as one file per table into the
    directory ``path`` (:func:`write_publishable_set`).
    """
    if isinstance(table, TableSet):
        return write_publishable_set(table, path, symbol=symbol, decimals=decimals,
                                     layout=layout, rows=rows, columns=columns, sep=sep)
    return write_release(path, *_release_parts(table, decimals, layout, rows, columns),
                         symbol=symbol, across=_across(table, layout, columns), sep=sep)


def write_publishable_set(
    tables: TableSet, directory: str | Path, **options: Any
) -> tuple[Path, ...]:
    """One publishable file per table: ``directory/<name>.csv``.

    ``options`` as for :func:`write_publishable`. A name becomes a file name
    with every run of characters other than letters, digits, ``-`` and ``_`` replaced by
    ``_`` (``"A88 x NUTS3"`` gives ``A88_x_NUTS3.csv``).
    """
    directory = Path(directory)
    if directory.suffix.lower() == ".csv":
        raise InputError(f"{directory} names a file; a table set is written as one file per "
                         "table into a directory")
    directory.mkdir(parents=True, exist_ok=True)
    stems = [re.sub(r"[^\w-]+", "_", name).strip("_") or "table" for name in tables.names]
    if len(set(stems)) != len(stems):
        raise InputError(f"table names {list(tables.names)} give the same file name twice")
    return tuple(write_publishable(table, directory / f"{stem}.csv", **options)
                 for table, stem in zip(tables.tables, stems, strict=True))


def write_internal_table(table: Table, path: str | Path) -> Path:
    """Write every cell of ``table`` with all its columns: an internal file.

    A ``.jj`` path gets a JJ file (:meth:`~tabsdc._table.Table.to_jj`), exactly as tau-ARGUS
    reads it: the format allows no comment, so its name is what tells (keep ``internal`` or
    ``confidential`` in it). Any other path gets a CSV of :meth:`~tabsdc._table.Table.to_frame`
    whose first line is :data:`sdcreport._files.CSV_MARK`; the command line's readers skip it.

    Examples
    --------
    >>> import tempfile
    >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "v": [1.0, 2.0]}), ["r"], "v")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_internal_table(t, Path(tmp) / "cells.csv").read_text().splitlines()[0]
    '# confidential: contains unpublished values'
    """
    path = Path(path)
    if path.suffix.lower() == ".jj":
        return table.to_jj(path)
    with atomic_write(path, encoding="utf-8", newline="") as stream:
        stream.write(CSV_MARK + "\n")
        table.to_frame().to_csv(stream, index=False)
    return path


# -- helpers -----------------------------------------------------------------------------------
def _release_parts(table: Table, decimals: int | None, layout: str, rows: str | None,
                   columns: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Codes of the cells of the file (in its order) and the published values."""
    if layout not in ("long", "wide"):
        raise InputError(f"layout must be 'long' or 'wide', not {layout!r}")
    if not table.dims:
        if layout == "wide":
            raise InputError("the wide layout needs a table with dimensions; a table read "
                             "from JJ is written in the long layout")
        codes, cells = pd.DataFrame({"cell": np.arange(table.n_cells)}), None
    else:
        codes = table.cells.index.to_frame(index=False)
        codes.columns = list(table.dims)
        if layout == "long":
            cells = table.hierarchy_order()
            codes = codes.iloc[cells]
        else:
            cells = _wide_cells(table, rows, columns)
            shown = [d for d in (rows or table.dims[0], _across(table, layout, columns)) if d]
            codes = codes.loc[cells, shown]
    chosen = published_cells(table, cells)
    values = table.values[chosen.to_numpy()]
    # the table's decimals, or fewer when no published value needs them: nothing of the
    # hidden values shows in the file
    shown = (min(table.decimals, decimals_of(values)) if decimals is None
             else checked_decimals(decimals))
    text = format_decimals(values, shown, given=table.decimals)
    return codes, pd.DataFrame({"value": text}, index=chosen.index)


def _across(table: Table, layout: str, columns: str | None) -> str | None:
    if layout != "wide" or len(table.dims) < 2:
        return None
    return columns if columns is not None else table.dims[1]


def _wide_cells(table: Table, rows: str | None, columns: str | None) -> np.ndarray:
    """Positions of the cells of the 2-D view, rows then columns in hierarchy order."""
    rows = rows or table.dims[0]
    across = _across(table, "wide", columns)
    for dim in (rows, across):
        if dim is not None and dim not in table.dims:
            raise InputError(f"unknown dimension {dim!r}; the table has {table.dims}")
    keep = np.ones(table.n_cells, dtype=bool)
    for dim in table.dims:
        if dim not in (rows, across):
            keep &= table.cells.index.get_level_values(dim) == table.hierarchies[dim].root
    cells = np.flatnonzero(keep)
    keys = [table.code_ranks(dim)[cells] for dim in (across, rows) if dim is not None]
    return cells[np.lexsort(keys)]  # rows first
