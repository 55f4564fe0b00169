"""Building tables from contributions (microdata) or from interior cells.

Every total is computed by rolling interior cells up one dimension at a time
(:func:`tabsdc.structure.expand_to_ancestors`), with array operations only. The largest
contributions of a total are merged from the cells below it, except when contributors are
identified by a holding id: a holding may contribute to several interior cells, so its
contribution to a total is the sum of its contributions below that total, and the roll-up then
keeps one row per (cell, holding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from tabsdc import structure
from tabsdc.errors import InputError
from tabsdc.hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc.table import (
    Table,
    _code_positions,
    _multiindex,
    _require_columns,
    _require_numeric,
    _resolve_hierarchies,
)

__all__ = ["table_from_microdata", "table_from_cells"]


def table_from_microdata(
    data: pd.DataFrame,
    dims: Sequence[str],
    value: str | None = None,
    *,
    holding: str | None = None,
    weight: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    top: int = 3,
    negative: Literal["keep", "absolute"] = "keep",
    keep_empty: bool = True,
    total: str = DEFAULT_TOTAL,
) -> Table:
    """Aggregate contributions into a table with totals and the data the rules need.

    Parameters
    ----------
    data : DataFrame
        One row per contribution (record).
    dims : sequence of str
        Columns with the codes of each dimension, most significant first. Codes must be
        leaves of the dimension's hierarchy.
    value : str, optional
        Column of the response variable; ``None`` makes a frequency (count) table in which
        each record contributes 1.
    holding : str, optional
        Contributor id: the contributions of one holding to a cell are summed before the
        rules look at them, and ``freq`` counts holdings, not records.
    weight : str, optional
        Sampling weight: the cell ``value`` becomes the weighted total ``sum w_i x_i``; the
        rules keep using the unweighted contributions, kept as ``contrib_total`` and
        ``x1, x2, ...`` (tau-ARGUS applies the sensitivity rules to unweighted contributions
        unless asked otherwise).
    hierarchies : mapping of str to Hierarchy, optional
        Hierarchy per dimension; a dimension without one gets a flat total named ``total``.
    top : int
        How many largest contributions to keep per cell (``x1`` ... ``x{top}``); the p% and
        p/q rules need 2, the (n, k) rule needs n.
    negative : {"keep", "absolute"}
        ``"keep"`` records contributions as given (the rules then refuse cells with negative
        contributions, which are counted in ``n_negative``); ``"absolute"`` makes the rules
        see ``|x|`` (after summing per holding).
    keep_empty : bool
        Keep every combination of codes; empty cells get value 0 and status ``z``.

    Returns
    -------
    Table
        Columns ``value``, ``freq``, ``n_negative`` (unless ``negative="absolute"``),
        ``x1..x{top}`` (0 where the cell has
        fewer contributors), ``contrib_total`` when weights or absolute values make it differ
        from ``value``, and the standard defaults.

    Raises
    ------
    InputError
        For a missing column, a missing or non-numeric value or weight (naming the row), a
        negative weight, or a missing code.
    HierarchyError
        For a code that is not a leaf of its dimension's hierarchy.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"region": ["A", "A", "B"], "turnover": [10.0, 5.0, 7.0]})
    >>> t = Table.from_microdata(data, ["region"], "turnover")
    >>> t.cells[["value", "freq", "x1", "x2"]].to_dict("index")["Total"]
    {'value': 22.0, 'freq': 3.0, 'x1': 10.0, 'x2': 7.0}
    """
    if negative not in ("keep", "absolute"):
        raise InputError(f"negative must be 'keep' or 'absolute', not {negative!r}")
    if top < 1:
        raise InputError(f"top must be at least 1, not {top}")
    needed = [*dims, *(c for c in (value, holding, weight) if c)]
    _require_columns(data, needed)
    _require_numeric(data, [c for c in (value, weight) if c])
    for dim in [*dims, *([holding] if holding else [])]:
        missing = data[dim].isna().to_numpy()
        if missing.any():
            raise InputError(f"column {dim!r} has a missing code at row {data.index[missing][0]!r}")
    codes = data[list(dims)].astype(str)
    hier = _resolve_hierarchies(codes, dims, hierarchies, total, leaves_only=True)
    coords = _code_positions(codes, dims, hier)
    x = np.ones(len(data)) if value is None else data[value].to_numpy(float)
    w = np.ones(len(data)) if weight is None else data[weight].to_numpy(float)
    if (w < 0).any():
        raise InputError(f"column {weight!r} has a negative weight at row {data.index[w < 0][0]!r}")

    indexer = structure.CellIndexer(tuple(len(h) for h in hier.values()))
    if holding is None:
        keys, inverse = np.unique(indexer.keys(coords), return_inverse=True)
        x_rule = np.abs(x) if negative == "absolute" else x
        sums = _sum_by(inverse, len(keys), value=w * x, contrib_total=x_rule,
                       freq=np.ones(len(x)), n_negative=(x < 0).astype(float))
        tops = _largest(inverse, x_rule, len(keys), top)
        table = table_from_cells(
            indexer.coords(keys), sums, tops, hierarchies=hier, keep_empty=keep_empty,
            coords_given=True,
        )
    else:
        holder = pd.factorize(data[holding])[0]
        table = _table_by_holding(coords, holder, x, w * x, hier, top, negative, keep_empty)
    cells = table.cells
    if (cells["n_negative"] > 0).any():
        cells["lb"] = -np.inf
    if negative == "absolute":  # the rules see |x|: nothing negative is left for them
        cells = cells.drop(columns="n_negative")
    elif weight is None:
        cells = cells.drop(columns="contrib_total")
    return table.with_cells(cells)


def table_from_cells(
    codes: pd.DataFrame | np.ndarray,
    sums: pd.DataFrame,
    tops: np.ndarray | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None,
    keep_empty: bool = True,
    total: str = DEFAULT_TOTAL,
    coords_given: bool = False,
) -> Table:
    """Roll interior cells up to every total and assemble the Table.

    ``codes`` is a frame of leaf codes (or, with ``coords_given``, integer coordinates in
    the resolved ``hierarchies``); ``sums`` holds additive columns, ``tops`` the largest
    contributions per row (largest first, ``-inf`` or 0 where absent).
    """
    if coords_given:
        hier = dict(hierarchies)
        coords = np.asarray(codes)
    else:
        dims = list(codes.columns)
        codes = codes.astype(str)
        hier = _resolve_hierarchies(codes, dims, hierarchies, total, leaves_only=True)
        coords = _code_positions(codes, dims, hier)
    hier_list = list(hier.values())
    indexer = structure.CellIndexer(tuple(len(h) for h in hier_list))
    keys = indexer.keys(coords)
    dup = pd.Series(keys).duplicated().to_numpy()
    if dup.any():
        label = tuple(h.codes[i] for h, i in zip(hier_list, coords[np.flatnonzero(dup)[0]],
                                                  strict=True))
        raise InputError(f"duplicate cell {label}")
    sums = sums.reset_index(drop=True).assign(_rows=1.0)
    k = 0 if tops is None else tops.shape[1]
    tops = np.full((len(keys), 0), -np.inf) if tops is None else np.where(
        np.isnan(tops), -np.inf, tops)
    for dim, hierarchy in enumerate(hier_list):
        source, coords = structure.expand_to_ancestors(coords, dim, hierarchy)
        keys, inverse = np.unique(indexer.keys(coords), return_inverse=True)
        sums = _sum_by(inverse, len(keys), **{c: sums[c].to_numpy()[source] for c in sums})
        if k:
            tops = _largest(np.repeat(inverse, k), tops[source].ravel(), len(keys), k)
        coords = indexer.coords(keys)
    return _assemble(keys, sums, tops, hier, keep_empty)


def _table_by_holding(
    coords: np.ndarray,
    holder: np.ndarray,
    x: np.ndarray,
    wx: np.ndarray,
    hier: dict[str, Hierarchy],
    top: int,
    negative: str,
    keep_empty: bool,
) -> Table:
    """Roll (cell, holding) contributions up, summing each holding's parts per cell."""
    hier_list = list(hier.values())
    indexer = structure.CellIndexer(tuple(len(h) for h in hier_list))
    n_holders = int(holder.max()) + 1 if len(holder) else 1
    pair_key, inverse = np.unique(indexer.keys(coords) * n_holders + holder, return_inverse=True)
    x_sum = np.bincount(inverse, weights=x, minlength=len(pair_key))
    wx_sum = np.bincount(inverse, weights=wx, minlength=len(pair_key))
    for dim, hierarchy in enumerate(hier_list):
        cell_coords = indexer.coords(pair_key // n_holders)
        source, cell_coords = structure.expand_to_ancestors(cell_coords, dim, hierarchy)
        expanded = indexer.keys(cell_coords) * n_holders + pair_key[source] % n_holders
        pair_key, inverse = np.unique(expanded, return_inverse=True)
        x_sum = np.bincount(inverse, weights=x_sum[source], minlength=len(pair_key))
        wx_sum = np.bincount(inverse, weights=wx_sum[source], minlength=len(pair_key))
    keys, cell_of_pair = np.unique(pair_key // n_holders, return_inverse=True)
    x_rule = np.abs(x_sum) if negative == "absolute" else x_sum
    sums = _sum_by(cell_of_pair, len(keys), value=wx_sum, contrib_total=x_rule,
                   freq=np.ones(len(x_sum)), n_negative=(x_sum < 0).astype(float),
                   _rows=np.ones(len(x_sum)))
    tops = _largest(cell_of_pair, x_rule, len(keys), top)
    return _assemble(keys, sums, tops, hier, keep_empty)


def _assemble(
    keys: np.ndarray,
    sums: pd.DataFrame,
    tops: np.ndarray,
    hier: dict[str, Hierarchy],
    keep_empty: bool,
) -> Table:
    """Place rolled-up sums into the table's cells (all combinations or the non-empty ones)."""
    hier_list = list(hier.values())
    indexer = structure.CellIndexer(tuple(len(h) for h in hier_list))
    coords = structure.all_cells(hier_list) if keep_empty else indexer.coords(keys)
    position = np.searchsorted(indexer.keys(coords), keys)
    n = len(coords)
    columns = {}
    for name in sums.columns:
        column = np.zeros(n)
        column[position] = sums[name].to_numpy()
        columns[name] = column
    rows = columns.pop("_rows")
    for j in range(tops.shape[1]):
        column = np.zeros(n)
        column[position] = np.where(np.isfinite(tops[:, j]), tops[:, j], 0.0)
        columns[f"x{j + 1}"] = column
    cells = pd.DataFrame(columns, index=_multiindex(coords, hier))
    cells["status"] = np.where(rows == 0, "z", "s")
    A, _, _ = structure.relations(coords, hier_list)
    return Table(cells, A, np.zeros(A.shape[0]), hier)


def _sum_by(group: np.ndarray, n_groups: int, **columns: np.ndarray) -> pd.DataFrame:
    """Sum each column within groups (``group`` holds each row's group number)."""
    return pd.DataFrame(
        {name: np.bincount(group, weights=col, minlength=n_groups) for name, col in columns.items()}
    )


def _largest(group: np.ndarray, values: np.ndarray, n_groups: int, k: int) -> np.ndarray:
    """The ``k`` largest values per group, largest first (``-inf`` where a group has fewer)."""
    order = np.lexsort((-values, group))
    g, v = group[order], values[order]
    start = np.searchsorted(g, np.arange(n_groups))
    rank = np.arange(len(g)) - start[g]
    keep = rank < k
    out = np.full((n_groups, k), -np.inf)
    out[g[keep], rank[keep]] = v[keep]
    return out
