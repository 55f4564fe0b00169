"""Record keys and cell keys of the cell key method, in exact decimal arithmetic.

Every record gets a key, uniform on [0, 1) with ``digits`` decimals (8 as tau-ARGUS and
cellKey draw them), drawn once and stored with the microdata. The key of a cell is the
fractional part of the sum of the keys of its records (Thompson, Broadfoot and Elazar 2013;
tau-ARGUS 4.2): a cell made of the same records has the same key in every table, so it gets
the same noise wherever it is published.

Keys are integers here, in units of ``10**-digits``: the cell key is the sum of the record
keys modulo ``10**digits``, computed exactly (as two integers of at most 8 digits each when
``digits > 8``), so that no key is moved across a p-table boundary by floating-point
addition.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import tabsdc._structure as structure
from tabsdc._errors import InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._inputs import code_positions

#: Most decimals a key may have (an integer of 10**15 units and its sums stay exact).
MAX_DIGITS = 15

#: Digits of each of the two parts a key is summed in.
_PART = 10**8


def draw_record_keys(n: int, *, seed: int | np.random.Generator | None = None,
                     digits: int = 8) -> np.ndarray:
    """``n`` record keys, uniform on {0, ..., 10**digits - 1} (units of ``10**-digits``).

    Examples
    --------
    >>> draw_record_keys(3, seed=1)
    array([47318869, 51182162, 75516750])
    >>> key_fraction(draw_record_keys(3, seed=1))
    array([0.47318869, 0.51182162, 0.7551675 ])
    """
    _check_digits(digits)
    return np.random.default_rng(seed).integers(0, 10**digits, size=n, dtype=np.int64)


def key_fraction(units: np.ndarray, digits: int = 8) -> np.ndarray:
    """Keys as numbers in [0, 1) (for files and reports; lookups use the units)."""
    return np.asarray(units, dtype=np.int64) / 10.0**digits


def record_key_units(values: pd.Series, digits: int = 8, *, name: str = "record key") -> np.ndarray:
    """Record keys read from a column, as integers in units of ``10**-digits``.

    Raises
    ------
    InputError
        A missing or non-numeric key, a key outside [0, 1), or a key with more decimals
        than ``digits`` (naming the row).

    Examples
    --------
    >>> record_key_units(pd.Series([0.5, 0.12345678]))
    array([50000000, 12345678])
    """
    _check_digits(digits)
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(float)
    bad = ~np.isfinite(numbers) | (numbers < 0) | (numbers >= 1)
    if bad.any():
        row = values.index[bad][0]
        raise InputError(f"column {name!r}, {_where(values, row)}: a record key must be a "
                         f"number in [0, 1), not {values[row]!r}")
    scaled = numbers * 10.0**digits
    units = np.round(scaled)
    finer = np.abs(scaled - units) > 1e-6 * max(1.0, 10.0 ** (digits - 9))
    if finer.any():
        row = values.index[finer][0]
        raise InputError(f"column {name!r}, {_where(values, row)}: the record key "
                         f"{values[row]!r} has more than {digits} decimals; give digits= the "
                         "number it has")
    return np.minimum(units.astype(np.int64), 10**digits - 1)


def _where(values: pd.Series, row: object) -> str:
    """``line 3`` for records read from a file (indexed by line), else ``row 3``."""
    label = row.item() if isinstance(row, np.generic) else row
    return f"{values.index.name or 'row'} {label!r}"


def cell_key_units(
    codes: pd.DataFrame,
    keys: np.ndarray,
    hierarchies: Mapping[str, Hierarchy],
    cell_coords: np.ndarray,
    digits: int = 8,
) -> np.ndarray:
    """The cell key of every cell: the sum of its records' keys modulo ``10**digits``.

    Parameters
    ----------
    codes : pandas.DataFrame
        The records' leaf codes, one column per dimension (compared as text; a categorical
        column is converted once per category, not once per record).
    keys : ndarray of int64
        The records' keys in units of ``10**-digits``.
    hierarchies : mapping of str to Hierarchy
        The table's hierarchies, one per column of ``codes``, in order.
    cell_coords : ndarray of int, shape (n_cells, n_dims)
        The cells wanted (positions in the hierarchies' codes); a cell without records
        gets key 0.

    Returns
    -------
    ndarray of int64
        The cell keys, in units of ``10**-digits``, in the order of ``cell_coords``.

    Examples
    --------
    >>> h = {"r": Hierarchy.flat(["a", "b"])}
    >>> codes = pd.DataFrame({"r": ["a", "a", "b"]})
    >>> cell_key_units(codes, np.array([60, 70, 5]), h, np.array([[0], [1], [2]]), digits=2)
    array([35, 30,  5])
    """
    return roll_up_keys(leaf_keys(codes, keys, hierarchies, digits), hierarchies, cell_coords)


@dataclass(frozen=True)
class LeafKeys:
    """Record keys summed per leaf cell, modulo ``10**digits``: the part of the cell keys
    that disjoint sets of records (partitions) compute apart and :func:`merge_leaf_keys`
    adds up.

    Attributes
    ----------
    cells : ndarray of int64
        The leaf cells with records (:class:`tabsdc._structure.CellIndexer` keys, sorted).
    units : ndarray of int64
        Their key sums modulo ``10**digits``.
    digits : int
    """

    cells: np.ndarray
    units: np.ndarray
    digits: int


def leaf_keys(codes: pd.DataFrame, keys: np.ndarray, hierarchies: Mapping[str, Hierarchy],
              digits: int = 8) -> LeafKeys:
    """The records' keys summed per leaf cell (exactly, modulo ``10**digits``)."""
    _check_digits(digits)
    indexer = structure.CellIndexer(tuple(len(h) for h in hierarchies.values()))
    cells, group = np.unique(indexer.keys(record_coords(codes, hierarchies)),
                             return_inverse=True)
    return LeafKeys(cells, _sum_modulo(group, len(cells), np.asarray(keys, np.int64), digits),
                    digits)


def merge_leaf_keys(parts: Sequence[LeafKeys]) -> LeafKeys:
    """The leaf key sums of the union of disjoint record sets."""
    digits = parts[0].digits
    cells, group = np.unique(np.concatenate([p.cells for p in parts]), return_inverse=True)
    units = np.concatenate([p.units for p in parts])
    return LeafKeys(cells, _sum_modulo(group, len(cells), units, digits), digits)


def roll_up_keys(leaf: LeafKeys, hierarchies: Mapping[str, Hierarchy],
                 cell_coords: np.ndarray) -> np.ndarray:
    """Every wanted cell's key from the leaf sums: summed up each hierarchy in turn."""
    digits = leaf.digits
    hier = list(hierarchies.values())
    indexer = structure.CellIndexer(tuple(len(h) for h in hier))
    cells, units = leaf.cells, leaf.units
    for dim, hierarchy in enumerate(hier):
        source, coords = structure.expand_to_ancestors(indexer.coords(cells), dim, hierarchy)
        cells, group = np.unique(indexer.keys(coords), return_inverse=True)
        units = _sum_modulo(group, len(cells), units[source], digits)
    wanted = indexer.keys(np.asarray(cell_coords, dtype=np.int64))
    position = np.searchsorted(cells, wanted)
    found = position < len(cells)
    found[found] = cells[position[found]] == wanted[found]
    out = np.zeros(len(wanted), dtype=np.int64)
    out[found] = units[position[found]]
    return out


def dask_leaf_keys(data: Any, dims: Sequence[str], record_key: str,
                   hierarchies: Mapping[str, Hierarchy], digits: int = 8,
                   progress: Callable[[str], None] | None = None) -> LeafKeys:
    """:func:`leaf_keys` of a ``dask.dataframe.DataFrame``, partition by partition (the
    records are never gathered; :func:`tabsdc._microdata_dask.reduce_partitions`)."""
    from tabsdc._microdata_dask import reduce_partitions

    reduce = functools.partial(_partition_leaf_keys, dims=list(dims), record_key=record_key,
                               hierarchies=dict(hierarchies), digits=digits)
    return reduce_partitions(data[[*dims, record_key]], reduce, merge_leaf_keys,
                             doing="summing the record keys", done="record keys summed",
                             progress=progress,
                             describe=lambda merged: f"{len(merged.cells):,} leaf cells so far")


def _partition_leaf_keys(part: pd.DataFrame, dims: list[str], record_key: str,
                         hierarchies: dict[str, Hierarchy], digits: int) -> LeafKeys:
    return leaf_keys(part[dims], record_key_units(part[record_key], digits, name=record_key),
                     hierarchies, digits)


def _sum_modulo(group: np.ndarray, n_groups: int, units: np.ndarray, digits: int) -> np.ndarray:
    """Sums of keys within groups modulo ``10**digits``, exactly (in two parts)."""
    high, low = _split(units, digits)
    return _modulo(_group_sum(group, n_groups, high), _group_sum(group, n_groups, low), digits)


def record_coords(codes: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> np.ndarray:
    """Each record's position in each hierarchy's codes, converting each distinct code to
    text once (``pandas.factorize``), not each record.

    Raises
    ------
    HierarchyError
        A code that is not in its dimension's hierarchy.
    """
    columns = []
    for dim, hierarchy in hierarchies.items():
        column = codes[dim]
        if isinstance(column.dtype, pd.CategoricalDtype):
            group, distinct = column.cat.codes.to_numpy(), column.cat.categories
        else:
            group, distinct = pd.factorize(column, use_na_sentinel=False)
        distinct_codes = pd.DataFrame({dim: pd.Index(distinct).astype(str)})
        columns.append(code_positions(distinct_codes, [dim], {dim: hierarchy})[:, 0][group])
    return np.column_stack(columns) if columns else np.zeros((len(codes), 0), dtype=np.int64)


def _check_digits(digits: int) -> None:
    if int(digits) != digits or not 1 <= digits <= MAX_DIGITS:
        raise InputError(f"digits must be a whole number from 1 to {MAX_DIGITS}, not "
                         f"{digits!r}")


def _split(units: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """A key as ``high * 10**8 + low``, both below ``10**8``."""
    return units // _PART, units % _PART


def _modulo(high: np.ndarray, low: np.ndarray, digits: int) -> np.ndarray:
    """``(high * 10**8 + low) mod 10**digits``, exactly in int64 for sums of < 9e10 keys."""
    modulus = 10**digits
    if digits <= 8:
        return low % modulus
    return ((high % 10 ** (digits - 8)) * _PART + low % modulus) % modulus


def _group_sum(group: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    """Integer sums within groups numbered ``0..n_groups - 1`` (each non-empty)."""
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(n_groups))
    return np.add.reduceat(values[order], starts)
