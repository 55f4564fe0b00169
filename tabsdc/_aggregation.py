"""Records aggregated to one row per cell, in pieces that merge.

Records are reduced to a :class:`Partial` (one row per cell: sums and largest
contributions) by :func:`aggregate_records`; partials of disjoint records merge exactly
(:func:`merge_partials`), which is how :mod:`tabsdc._microdata_dask` builds a table from
partitions of data that does not fit in memory with the same code as the in-memory build
(:mod:`tabsdc._microdata`). Whole-array work only: codes to integer keys, ``np.unique`` and
``np.bincount``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

import tabsdc._structure as structure
from tabsdc._codes import code_column, code_columns
from tabsdc._errors import InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._inputs import code_positions, require_numeric, resolve_hierarchies


@dataclass(frozen=True)
class RecordSpec:
    """What to aggregate from each record (the arguments of
    :func:`tabsdc._microdata.cells_from_microdata`)."""

    dims: tuple[str, ...]
    value: str | None
    holding: str | None
    weight: str | None
    top: int
    negative: str
    total: str

    @property
    def columns(self) -> list[str]:
        return [*self.dims, *(c for c in (self.value, self.holding, self.weight) if c)]


@dataclass(frozen=True)
class Partial:
    """Aggregates of some records, one row per cell key: additive ``sums`` and the ``tops``
    largest contributions (largest first, ``-inf`` where a cell has fewer).

    Without holdings the keys are interior cells (totals are rolled up at the end); with
    holdings every cell, since a holding's contribution to a total is summed first.
    Partials of disjoint records (disjoint holdings) merge exactly (:func:`merge_partials`).
    """

    keys: np.ndarray
    sums: pd.DataFrame
    tops: np.ndarray


def aggregate_records(
    data: pd.DataFrame, spec: RecordSpec, hier: dict[str, Hierarchy]
) -> Partial:
    """Aggregate records (a pandas frame, or one partition) into a :class:`Partial`.

    Whole-array work only: codes to integer keys, ``np.unique`` and ``np.bincount``.
    """
    codes = _checked_codes(data, spec)
    resolve_hierarchies(codes, spec.dims, hier, spec.total, leaves_only=True)
    require_numeric(data, [c for c in (spec.value, spec.weight) if c])
    coords = code_positions(codes, spec.dims, hier)
    x = np.ones(len(data)) if spec.value is None else data[spec.value].to_numpy(float)
    w = np.ones(len(data)) if spec.weight is None else data[spec.weight].to_numpy(float)
    if (w < 0).any():
        raise InputError(f"column {spec.weight!r} has a negative weight at row "
                         f"{data.index[w < 0][0]!r}")
    if spec.holding is not None:
        holder = pd.factorize(codes[spec.holding])[0]
        return _partial_by_holding(coords, holder, x, w * x, hier, spec.top, spec.negative)
    indexer = structure.CellIndexer(tuple(len(h) for h in hier.values()))
    keys, inverse = np.unique(indexer.keys(coords), return_inverse=True)
    x_rule = np.abs(x) if spec.negative == "absolute" else x
    sums = sum_by(inverse, len(keys), value=w * x, contrib_total=x_rule,
                   freq=np.ones(len(x)), n_negative=(x < 0).astype(float))
    return Partial(keys, sums, largest(inverse, x_rule, len(keys), spec.top))


def merge_partials(partials: Sequence[Partial]) -> Partial:
    """Aggregates of the union of disjoint record sets: sums added, largest values merged."""
    keys = np.concatenate([p.keys for p in partials])
    sums = pd.concat([p.sums for p in partials], ignore_index=True)
    tops = np.concatenate([p.tops for p in partials])
    merged, inverse = np.unique(keys, return_inverse=True)
    k = tops.shape[1]
    return Partial(merged, sum_by(inverse, len(merged), **{c: sums[c].to_numpy() for c in sums}),
                   largest(np.repeat(inverse, k), tops.ravel(), len(merged), k))


def _partial_by_holding(
    coords: np.ndarray,
    holder: np.ndarray,
    x: np.ndarray,
    wx: np.ndarray,
    hier: dict[str, Hierarchy],
    top: int,
    negative: str,
) -> Partial:
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
    sums = sum_by(cell_of_pair, len(keys), value=wx_sum, contrib_total=x_rule,
                   freq=np.ones(len(x_sum)), n_negative=(x_sum < 0).astype(float),
                   _rows=np.ones(len(x_sum)))
    return Partial(keys, sums, largest(cell_of_pair, x_rule, len(keys), top))


def _checked_codes(data: pd.DataFrame, spec: RecordSpec) -> pd.DataFrame:
    """The dimension codes and the holding ids as text (:mod:`tabsdc._codes`: a missing code
    is refused, naming the column and the row)."""
    return code_columns(data, [*spec.dims, *([spec.holding] if spec.holding else [])])


def codes_in_order(data: pd.DataFrame, dims: Sequence[str]) -> dict[str, np.ndarray]:
    """The distinct codes of each column as text (:mod:`tabsdc._codes`), in the order first
    seen. Only the distinct values are converted; when one of them is refused, the column
    is converted whole, so that the error names the row."""
    seen = {}
    for dim in dims:
        try:
            distinct = code_column(pd.Series(pd.unique(data[dim]), dtype=object), dim)
        except InputError:
            code_column(data[dim], dim)
            raise
        seen[dim] = pd.unique(distinct.to_numpy())
    return seen


def sum_by(group: np.ndarray, n_groups: int, **columns: np.ndarray) -> pd.DataFrame:
    """Sum each column within groups (``group`` holds each row's group number)."""
    return pd.DataFrame(
        {name: np.bincount(group, weights=col, minlength=n_groups) for name, col in columns.items()}
    )


def largest(group: np.ndarray, values: np.ndarray, n_groups: int, k: int) -> np.ndarray:
    """The ``k`` largest values per group, largest first (``-inf`` where a group has fewer)."""
    order = np.lexsort((-values, group))
    g, v = group[order], values[order]
    start = np.searchsorted(g, np.arange(n_groups))
    rank = np.arange(len(g)) - start[g]
    keep = rank < k
    out = np.full((n_groups, k), -np.inf)
    out[g[keep], rank[keep]] = v[keep]
    return out
