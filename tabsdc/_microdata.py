"""The cells of tables built from contributions (microdata) or from interior cells.

Every total is computed by rolling interior cells up one dimension at a time
(:func:`tabsdc._structure.expand_to_ancestors`), with array operations only. The largest
contributions of a total are merged from the cells below it, except when contributors are
identified by a holding id: a holding may contribute to several interior cells, so its
contribution to a total is the sum of its contributions below that total, and the roll-up then
keeps one row per (cell, holding).

Records are first reduced to one row per cell (:mod:`tabsdc._aggregation`, in memory or
partition by partition with :mod:`tabsdc._microdata_dask`). The functions here give a table's
parts (:class:`TableParts`: cells, relations, hierarchies); :meth:`tabsdc.Table.from_microdata`
and :meth:`tabsdc.Table.from_aggregated` make the table of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

import tabsdc._structure as structure
from tabsdc._aggregation import (
    RecordSpec,
    aggregate_records,
    codes_in_order,
    largest,
    sum_by,
)
from tabsdc._codes import code_columns
from tabsdc._errors import InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import (
    cell_index,
    code_positions,
    require_columns,
    resolve_hierarchies,
)


class TableParts(NamedTuple):
    """A table's cells (one row per cell, indexed by codes), its relations ``A @ value == 0``
    and its hierarchies: what :class:`tabsdc.Table` is made of."""

    cells: pd.DataFrame
    A: sp.csr_array
    hierarchies: dict[str, Hierarchy]


def cells_from_microdata(
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
    progress: Callable[[str], None] | None = None,
) -> TableParts:
    """Aggregate contributions into the cells of a table with totals and the data the rules
    need (:meth:`tabsdc.Table.from_microdata`).

    Parameters
    ----------
    data : pandas or dask DataFrame
        One row per contribution (record). A ``dask.dataframe.DataFrame`` (read with
        ``dask.dataframe.read_parquet`` or ``read_csv``) is aggregated out of core, partition
        by partition (:mod:`tabsdc._microdata_dask`), on the active ``dask.distributed``
        client if there is one; the table is the one the pandas frame of the same records
        gives (sums may differ in the last bits by the order of additions).
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
    progress : callable, optional
        Receives the size estimate before the build (:func:`estimate_build`) and, for dask
        data, a line per batch of partitions.

    Returns
    -------
    TableParts
        The cells have the columns ``value``, ``freq``, ``n_negative`` (unless
        ``negative="absolute"``), ``x1..x{top}`` (0 where the cell has fewer contributors),
        ``contrib_total`` when weights or absolute values make it differ from ``value``, and
        ``status`` (``z`` for empty cells); :class:`tabsdc.Table` adds the standard defaults.

    Raises
    ------
    InputError
        For a missing column, a missing or non-numeric value or weight (naming the row), a
        negative weight, a missing code, or a table with every code combination that would
        not fit in the machine's memory (estimated before the build).
    HierarchyError
        For a code that is not a leaf of its dimension's hierarchy.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"region": ["A", "A", "B"], "turnover": [10.0, 5.0, 7.0]})
    >>> parts = cells_from_microdata(data, ["region"], "turnover")
    >>> parts.cells[["value", "freq", "x1", "x2"]].to_dict("index")["Total"]
    {'value': 22.0, 'freq': 3.0, 'x1': 10.0, 'x2': 7.0}
    """
    if negative not in ("keep", "absolute"):
        raise InputError(f"negative must be 'keep' or 'absolute', not {negative!r}")
    if top < 1:
        raise InputError(f"top must be at least 1, not {top}")
    require_columns(data, [*dims, *(c for c in (value, holding, weight) if c)])
    spec = RecordSpec(tuple(dims), value, holding, weight, top, negative, total)
    hier = resolve_microdata_hierarchies(data, dims, hierarchies, total)
    _report_estimate(hier, top, keep_empty, progress)
    if is_dask_frame(data):
        from tabsdc._microdata_dask import aggregate_dask

        partial = aggregate_dask(data, spec, hier, progress)
    else:
        partial = aggregate_records(data, spec, hier)
    if holding is None:
        indexer = structure.CellIndexer(tuple(len(h) for h in hier.values()))
        parts = cells_from_interior(indexer.coords(partial.keys), partial.sums, partial.tops,
                                    hierarchies=hier, keep_empty=keep_empty, coords_given=True)
    else:
        parts = _assemble(partial.keys, partial.sums, partial.tops, hier, keep_empty)
    cells = parts.cells
    if (cells["n_negative"] > 0).any():
        cells["lb"] = -np.inf
    if negative == "absolute":  # the rules see |x|: nothing negative is left for them
        cells = cells.drop(columns="n_negative")
    elif weight is None:
        cells = cells.drop(columns="contrib_total")
    return parts._replace(cells=cells)


def resolve_microdata_hierarchies(
    data: Any, dims: Sequence[str], hierarchies: Mapping[str, Hierarchy] | None, total: str
) -> dict[str, Hierarchy]:
    """The hierarchy of each dimension: as given, else flat over the codes in the order
    first seen (pandas or dask data; for dask one pass over the dimension columns)."""
    hierarchies = dict(hierarchies or {})
    missing = [d for d in dims if d not in hierarchies]
    require_columns(data, missing)
    if not missing:
        seen: dict[str, np.ndarray] = {}
    elif is_dask_frame(data):
        from tabsdc._microdata_dask import codes_seen

        seen = codes_seen(data, missing)
    else:
        seen = codes_in_order(data, missing)
    return resolve_hierarchies(seen, dims, hierarchies, total, leaves_only=False)


def estimate_build(hierarchies: Mapping[str, Hierarchy], top: int = 3) -> dict[str, float]:
    """Cells, relations, coefficients and peak bytes of a table with every code combination.

    A dimension with ``n_d`` codes of which ``p_d`` have children gives
    ``N p_d / n_d`` relations over ``N (n_d - 1 + p_d) / n_d`` coefficients, ``N`` being the
    number of cells; the estimate of the peak is three times the cell columns
    (``12 + top`` floats and a code per dimension) plus three times the sparse matrix
    (12 bytes per coefficient), the roll-up's working copies included.

    Examples
    --------
    >>> estimate_build({"r": Hierarchy.flat(["a", "b"])}, top=2)["relations"]
    1.0
    """
    cells = float(np.prod([len(h) for h in hierarchies.values()]))
    relations = sum(cells * len(h.parent_codes) / len(h) for h in hierarchies.values())
    coefficients = sum(cells * (len(h) - 1 + len(h.parent_codes)) / len(h)
                       for h in hierarchies.values())
    peak = 3.0 * (cells * (8 * (12 + top) + 8 * len(hierarchies)) + 12 * coefficients)
    return {"cells": cells, "relations": relations, "coefficients": coefficients,
            "bytes": peak}


def is_dask_frame(data: Any) -> bool:
    """True for a ``dask.dataframe.DataFrame`` (without importing dask)."""
    return type(data).__module__.startswith("dask.") and hasattr(data, "to_delayed")


def cells_from_interior(
    codes: pd.DataFrame | np.ndarray,
    sums: pd.DataFrame,
    tops: np.ndarray | None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None,
    keep_empty: bool = True,
    total: str = DEFAULT_TOTAL,
    coords_given: bool = False,
) -> TableParts:
    """Roll interior cells up to every total and assemble the table's parts.

    ``codes`` is a frame of leaf codes (or, with ``coords_given``, integer coordinates in
    the resolved ``hierarchies``); ``sums`` holds additive columns, ``tops`` the largest
    contributions per row (largest first, ``-inf`` or 0 where absent).
    """
    if coords_given:
        hier = dict(hierarchies)
        coords = np.asarray(codes)
    else:
        dims = list(codes.columns)
        codes = code_columns(codes, dims)
        hier = resolve_hierarchies(codes, dims, hierarchies, total, leaves_only=True)
        coords = code_positions(codes, dims, hier)
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
        sums = sum_by(inverse, len(keys), **{c: sums[c].to_numpy()[source] for c in sums})
        if k:
            tops = largest(np.repeat(inverse, k), tops[source].ravel(), len(keys), k)
        coords = indexer.coords(keys)
    return _assemble(keys, sums, tops, hier, keep_empty)


def _report_estimate(
    hier: Mapping[str, Hierarchy], top: int, keep_empty: bool,
    progress: Callable[[str], None] | None,
) -> None:
    """Report the size of the table to build; refuse one that cannot fit in memory."""
    size = estimate_build(hier, top)
    memory = _physical_memory()
    line = (f"building up to {size['cells']:,.0f} cells and {size['relations']:,.0f} relations "
            f"({size['coefficients']:,.0f} coefficients): about "
            f"{size['bytes'] / 2**20:,.0f} MiB at peak")
    if keep_empty and memory and size["bytes"] > memory:
        raise InputError(f"{line}, more than this machine's {memory / 2**30:.1f} GiB; build "
                         "with keep_empty=False (only non-empty cells) or fewer dimensions")
    if progress is not None:
        progress(line + ("" if keep_empty else " (fewer: only non-empty cells are kept)"))


def _physical_memory() -> float | None:
    """Bytes of physical memory (None where the system does not say)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _assemble(
    keys: np.ndarray,
    sums: pd.DataFrame,
    tops: np.ndarray,
    hier: dict[str, Hierarchy],
    keep_empty: bool,
) -> TableParts:
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
    cells = pd.DataFrame(columns, index=cell_index(coords, hier))
    cells["status"] = np.where(rows == 0, "z", "s")
    A, _, _ = structure.relations(coords, hier_list)
    return TableParts(cells, A, hier)


