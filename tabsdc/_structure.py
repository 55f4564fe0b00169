"""Cells of a multi-dimensional hierarchical table and the sparse additivity system ``A x = b``.

A cell is a tuple of code positions, one per dimension (positions in each hierarchy's
:attr:`~tabsdc._hierarchy.Hierarchy.codes`). Cells are ordered odometer-style with the first
dimension most significant, as in tau-ARGUS's JJ writer; each code's position follows its
hierarchy's depth-first order, so the grand total is cell 0.

For every dimension ``d`` and every cell whose code in ``d`` has children, one relation reads
``cell = sum of the cells that replace its d-code by each child``; relations are numbered
dimension by dimension and, within a dimension, in cell order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._hierarchy import Hierarchy


@dataclass(frozen=True)
class CellIndexer:
    """Map cell coordinates to integer keys (mixed radix) and keys to cell positions."""

    sizes: tuple[int, ...]

    def keys(self, coords: np.ndarray) -> np.ndarray:
        if coords.shape[1] == 0:
            return np.zeros(len(coords), dtype=np.int64)
        return np.ravel_multi_index(tuple(coords.T), self.sizes).astype(np.int64)

    def coords(self, keys: np.ndarray) -> np.ndarray:
        return np.column_stack(np.unravel_index(keys, self.sizes)).astype(np.int64)


def expand_to_ancestors(
    coords: np.ndarray, dim: int, hierarchy: Hierarchy
) -> tuple[np.ndarray, np.ndarray]:
    """Replicate each row once per ancestor-or-self of its code in dimension ``dim``.

    Returns
    -------
    source : ndarray of int
        Row of ``coords`` each new row comes from (use it to carry payload columns).
    new_coords : ndarray of int
        The coordinates with dimension ``dim`` replaced by the ancestor.
    """
    code, ancestor = hierarchy.ancestor_pairs()
    return expand_by_pairs(coords, dim, code, ancestor, len(hierarchy))


def expand_by_pairs(
    coords: np.ndarray, dim: int, code: np.ndarray, target: np.ndarray, n_codes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Replicate each row once per pair ``(code, target)`` whose ``code`` is the row's code
    in dimension ``dim``, that code replaced by ``target`` (``n_codes`` codes in all).

    Returns ``source`` and ``new_coords`` as :func:`expand_to_ancestors`.
    """
    order = np.argsort(code, kind="stable")
    code, target = code[order], target[order]
    count = np.bincount(code, minlength=n_codes)
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    row_code = coords[:, dim]
    reps = count[row_code]
    source = np.repeat(np.arange(len(coords)), reps)
    offset = np.arange(len(source)) - np.repeat(np.cumsum(reps) - reps, reps)
    new_coords = coords[source].copy()
    new_coords[:, dim] = target[start[row_code[source]] + offset]
    return source, new_coords


def all_cells(hierarchies: Sequence[Hierarchy]) -> np.ndarray:
    """Coordinates of the full cross product of all codes, in table order."""
    sizes = [len(h) for h in hierarchies]
    if not sizes:
        return np.zeros((1, 0), dtype=np.int64)
    grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
    return np.column_stack([g.ravel() for g in grids]).astype(np.int64)


def closed_cells(leaf_coords: np.ndarray, hierarchies: Sequence[Hierarchy]) -> np.ndarray:
    """Every cell that is a leaf cell given or a total over some of them, in table order."""
    coords = np.unique(leaf_coords, axis=0)
    indexer = CellIndexer(tuple(len(h) for h in hierarchies))
    for dim, hierarchy in enumerate(hierarchies):
        _, coords = expand_to_ancestors(coords, dim, hierarchy)
        coords = indexer.coords(np.unique(indexer.keys(coords)))
    return coords


def relations(
    coords: np.ndarray, hierarchies: Sequence[Hierarchy]
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    """The additivity system of the cells ``coords`` (which must be in table order).

    Returns
    -------
    A : scipy.sparse.csr_array, shape (m, n)
        -1 for the total of each relation, +1 for each of its children.
    total_cell : ndarray of int, shape (m,)
        The cell that is the total of each relation.
    relation_dim : ndarray of int, shape (m,)
        The dimension each relation sums over.
    """
    n = len(coords)
    indexer = CellIndexer(tuple(len(h) for h in hierarchies))
    keys = indexer.keys(coords)
    rows, cols, vals, totals, dims = [], [], [], [], []
    n_rows = 0
    for dim, hierarchy in enumerate(hierarchies):
        parent_pos = hierarchy.parent_positions()
        child = np.flatnonzero(parent_pos[coords[:, dim]] >= 0)
        if len(child) == 0:
            continue
        parent_coords = coords[child].copy()
        parent_coords[:, dim] = parent_pos[coords[child, dim]]
        parent_cell = np.searchsorted(keys, indexer.keys(parent_coords))
        total_cells, row_of_child = np.unique(parent_cell, return_inverse=True)
        m_dim = len(total_cells)
        rows += [n_rows + np.arange(m_dim), n_rows + row_of_child]
        cols += [total_cells, child]
        vals += [-np.ones(m_dim), np.ones(len(child))]
        totals.append(total_cells)
        dims.append(np.full(m_dim, dim))
        n_rows += m_dim
    if n_rows == 0:
        return sp.csr_array((0, n)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    A = sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n)
    )
    return A, np.concatenate(totals), np.concatenate(dims)
