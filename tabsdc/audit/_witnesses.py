"""Witnesses: tables the intruder cannot rule out, proving how wide a hidden cell's interval is.

A deviation ``d`` (one entry per cell) with ``A d = 0`` that moves only hidden cells is a
direction along which the published cells stay what they are: every ``x = a + t d`` with
``lb <= x <= ub`` is a table the intruder cannot tell from the true one. Its two steps

    t_up   = min( (ub_j - a_j) / d_j  for d_j > 0,   (a_j - lb_j) / (-d_j)  for d_j < 0 )
    t_down = min( (a_j - lb_j) / d_j  for d_j > 0,   (ub_j - a_j) / (-d_j)  for d_j < 0 )

give the two tables ``a + t_up d`` and ``a - t_down d``, so for every cell ``j``

    min x_j <= a_j + min(t_up d_j, -t_down d_j),    max x_j >= a_j + max(t_up d_j, -t_down d_j).

These **inner bounds** are what the exact interval of the attack is at least (Cox's interval
attack, :mod:`tabsdc.audit._intervals`; its feasible points are exactly such tables). They
prove a sensitive cell protected (``max x_i >= a_i + upl_i`` as soon as one witness reaches
it) without an LP: on a table of 10^5-10^6 cells the audit of a pattern proven this way
takes seconds where an LP per bound takes hours.

Witnesses come from the method that built the pattern (the hypercube method's structures:
a product of one-dimensional vectors, :mod:`tabsdc._hypercubes`) and are **checked
here, on the table alone**: the relations (``A d = 0``, one sparse product for all), the
pattern (every moved cell hidden) and the bounds (the steps above). A witness failing a
check is dropped, never trusted.

A hidden cell that the relations give away by elimination (:func:`derived_cells`) has the
exact interval ``[a_j, a_j]`` without any LP. What the witnesses leave unsettled is settled by
points and outer bounds (:mod:`tabsdc.audit._settle`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError


@dataclass(frozen=True)
class WitnessBounds:
    """Inner bounds of every cell from the valid witnesses.

    ``lower``/``upper`` are ``a`` where no valid witness moves the cell; ``moved`` marks the
    cells some valid witness moves by a positive step; ``valid`` the witnesses that passed
    every check (relations, pattern, a positive step in some direction); ``deviations``
    the tables they prove possible, as deviations from ``a`` (cells x 2 per valid witness:
    ``t_up d`` and ``-t_down d``, ``inf`` entries for an unbounded step; what the insider
    attack reads, :mod:`tabsdc.audit._insider`).
    """

    lower: np.ndarray
    upper: np.ndarray
    moved: np.ndarray
    valid: np.ndarray
    deviations: sp.csc_array

    @property
    def n_valid(self) -> int:
        return int(self.valid.sum())

    def widened(self, cells: np.ndarray, lower: np.ndarray, upper: np.ndarray
                ) -> WitnessBounds:
        """These bounds with more inner bounds for ``cells`` (NaN: none) taken in."""
        out_lower, out_upper = self.lower.copy(), self.upper.copy()
        out_lower[cells] = np.fmin(out_lower[cells], lower)
        out_upper[cells] = np.fmax(out_upper[cells], upper)
        moved = self.moved.copy()
        moved[cells] |= (out_upper[cells] > self.upper[cells]) | (out_lower[cells] <
                                                                 self.lower[cells])
        return WitnessBounds(out_lower, out_upper, moved, self.valid, self.deviations)


def witness_bounds(
    A: sp.sparray | sp.spmatrix,
    values: np.ndarray,
    hidden: np.ndarray,
    lb: np.ndarray,
    ub: np.ndarray,
    deviations: sp.sparray | sp.spmatrix,
    *,
    tol: float = 1e-9,
) -> WitnessBounds:
    """Check every witness on the table and return the inner bounds they prove.

    Parameters
    ----------
    A : sparse matrix (m, n)
        The table's relations.
    values, hidden, lb, ub : ndarray (n,)
        True values, the cells not published, the intruder's a-priori bounds.
    deviations : sparse matrix (n, K)
        One witness direction per column.
    tol : float
        Relative tolerance of ``A d = 0`` (against ``|A| |d|``).

    Returns
    -------
    WitnessBounds

    Examples
    --------
    ``x0 + x1 = x2`` with all three hidden, values 3, 2, 5 and bounds [0, 10]: the direction
    (+1, -1, 0) keeps the total; it moves x0 up by 2 (x1 reaches 0) and down by 3.

    >>> A = sp.csr_array([[1.0, 1.0, -1.0]])
    >>> D = sp.csc_array(np.array([[1.0], [-1.0], [0.0]]))
    >>> w = witness_bounds(A, np.array([3.0, 2, 5]), np.ones(3, bool), np.zeros(3),
    ...                    np.full(3, 10.0), D)
    >>> w.lower.tolist(), w.upper.tolist(), w.valid.tolist()
    ([0.0, 0.0, 5.0], [5.0, 5.0, 5.0], [True])
    """
    values = np.asarray(values, dtype=float)
    hidden = np.asarray(hidden, dtype=bool)
    D = sp.csc_array(deviations, dtype=float)
    n = len(values)
    if D.shape[0] != n:
        raise InputError(f"the witnesses have {D.shape[0]} rows, the table has {n} cells")
    D.sum_duplicates()
    D.eliminate_zeros()
    A = sp.csr_array(A, dtype=float)
    residual = np.abs(A @ D).max(axis=0).toarray().ravel() if D.shape[1] else np.zeros(0)
    scale = (abs(A) @ abs(D)).max(axis=0).toarray().ravel() if D.shape[1] else np.zeros(0)
    column = np.repeat(np.arange(D.shape[1]), np.diff(D.indptr))
    row, d = D.indices, D.data
    valid = residual <= tol * np.maximum(scale, 1.0)
    valid &= np.bincount(column, weights=~hidden[row], minlength=D.shape[1]) == 0
    room_up = np.asarray(ub, dtype=float)[row] - values[row]
    room_down = values[row] - np.asarray(lb, dtype=float)[row]
    ratio_up = np.where(d > 0, room_up, room_down) / np.abs(d)
    ratio_down = np.where(d > 0, room_down, room_up) / np.abs(d)
    t_up = _column_min(ratio_up, D.indptr)
    t_down = _column_min(ratio_down, D.indptr)
    valid &= (t_up > 0) | (t_down > 0)
    keep = valid[column]
    with np.errstate(invalid="ignore"):  # inf * 0 never occurs: d != 0 on stored entries
        high = np.maximum(t_up[column] * d, -t_down[column] * d)[keep]
        low = np.minimum(t_up[column] * d, -t_down[column] * d)[keep]
    cells = row[keep]
    upper, lower = values.copy(), values.copy()
    np.maximum.at(upper, cells, values[cells] + high)
    np.minimum.at(lower, cells, values[cells] + low)
    both = np.concatenate([valid, valid])
    steps = np.concatenate([t_up, -t_down])[both]
    deviations = sp.csc_array(sp.hstack([D, D], format="csc")[:, both])
    deviations.data *= np.repeat(steps, np.diff(deviations.indptr))  # column k times step k
    deviations.eliminate_zeros()
    return WitnessBounds(lower, upper, (upper > values) | (lower < values), valid,
                         deviations)


def _column_min(entries: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Minimum of each column's entries of a CSC matrix (``inf`` for an empty column)."""
    out = np.full(len(indptr) - 1, np.inf)
    filled = np.diff(indptr) > 0
    if filled.any():
        out[filled] = np.minimum.reduceat(entries, indptr[:-1][filled])
    return out


def derived_cells(A: sp.sparray | sp.spmatrix, hidden: np.ndarray) -> np.ndarray:
    """Hidden cells whose values follow from the published ones by elimination.

    A relation with a single unknown cell gives that cell's value (``x_j = (b - the known
    terms) / a_j``); it is then known, which may leave another relation with a single
    unknown, and so on (each round one sparse product over all relations). What this finds
    is disclosed exactly, whatever the bounds.

    Examples
    --------
    ``x0 + x1 = x2`` and ``x2 + x3 = x4`` with x4 and x3 published: x2 follows from the
    second relation, but x0 and x1 stay unknown.

    >>> A = sp.csr_array([[1.0, 1, -1, 0, 0], [0, 0, 1, 1, -1]])
    >>> derived_cells(A, np.array([True, True, True, False, False])).tolist()
    [False, False, True, False, False]
    """
    pattern = sp.csr_array(sp.csr_array(A) != 0, dtype=np.int64)
    hidden = np.asarray(hidden, dtype=bool)
    unknown = hidden.copy()
    while True:
        single = (pattern @ unknown.astype(np.int64)) == 1
        if not single.any():
            break
        rows = pattern[np.flatnonzero(single)]
        found = np.unique(rows.indices[unknown[rows.indices]])
        unknown[found] = False
    return hidden & ~unknown
