"""Bounded rank-based information loss: brMAE and brMSE (Chaibub Neto).

Each variable of the original and the masked data is replaced by its ranks 1..n (ties broken
so that every rank occurs once). The rank distances sum_i |r_ij - r'_ij| and
sum_i (r_ij - r'_ij)^2 are largest when one rank vector is the reverse of the other; dividing
by that maximum bounds the measures in [0, 1] (note, eqs. (1)-(3), (8), (9)):

    brMAE = sum_j sum_i |r_ij - r'_ij|   / (2 p sum_{k=1}^K (n - 2k + 1))
    brMSE = sum_j sum_i (r_ij - r'_ij)^2 / (2 p sum_{k=1}^K (n - 2k + 1)^2)

with K = n/2 for even n and (n - 1)/2 for odd n. The sums have closed forms, used here in
exact integer arithmetic: 2 sum_k (n - 2k + 1) = floor(n^2 / 2) and
2 sum_k (n - 2k + 1)^2 = n (n^2 - 1) / 3.

Ties: the note asks for ranks without repeats and suggests random assignment of ranks to tied
values. ``ties="random"`` (default) ranks tied values in the order of a random permutation of
the records, drawn from the seed once and used for both the original and the masked data
(so identical data get identical ranks and a distance of 0, and every tied group is still
ordered uniformly at random); ``ties="first"`` ranks tied values in record order (R's
``ties.method = "first"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc._data import (
    NumericPair,
    Seed,
    generator,
    numeric_matrix,
    numeric_pair,
)
from microsdc._errors import DataError
from microsdc.utility._sums import ColumnSums, reduce_sums
from tabsdc._validation import check_choice

#: Tie-breaking rules for ranks.
TIES = ("random", "first")


def _priority(n: int, ties: str, rng: np.random.Generator) -> np.ndarray:
    """Order in which tied records get their ranks: random, or record order."""
    return rng.permutation(n) if ties == "random" else np.arange(n)


def _rank_columns(values: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """Ranks 1..n of each column (int64); tied values ranked by ``priority`` of the record.

    One unstable argsort per column (all columns at once), then only the records inside
    runs of tied values are reordered by priority, with one argsort over the tied records
    of every column together.
    """
    n, p = values.shape
    columns = np.ascontiguousarray(values.T)
    order = np.argsort(columns, axis=1)
    ordered = np.take_along_axis(columns, order, axis=1)
    tied_next = ordered[:, 1:] == ordered[:, :-1]
    if tied_next.any():
        in_run = np.zeros((p, n), dtype=bool)
        in_run[:, 1:] |= tied_next
        in_run[:, :-1] |= tied_next
        run = np.zeros((p, n), dtype=np.int64)
        run[:, 1:] = np.cumsum(~tied_next, axis=1)
        run += np.arange(p)[:, None] * n  # run numbers unique over all columns
        flat_order, where = order.ravel(), np.flatnonzero(in_run.ravel())
        records = flat_order[where]
        key = run.ravel()[where] * n + priority[records]  # runs ascending: nearly sorted
        flat_order[where] = records[np.argsort(key, kind="stable")]
    result = np.empty((p, n), dtype=np.int64)
    np.put_along_axis(result, order, np.broadcast_to(np.arange(1, n + 1), (p, n)), axis=1)
    return result.T


def ranks(X: Any, *, ties: str = "random", seed: Seed = None) -> np.ndarray:
    """Ranks 1..n of every column, each rank used once (ties broken by ``ties``).

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Numeric data.
    ties : {"random", "first"}
        ``"random"``: tied values get their ranks in the order of a random permutation of
        the records drawn from ``seed``; ``"first"``: in record order.
    seed : int, numpy.random.Generator or None
        Randomness for ``ties="random"``; None draws fresh entropy.

    Returns
    -------
    numpy.ndarray of int64, shape (n, p)

    Examples
    --------
    >>> ranks([[3.0], [1.0], [3.0], [2.0]], ties="first").ravel().tolist()
    [3, 1, 4, 2]
    """
    check_choice("ties", ties, TIES, error=DataError)
    values = numeric_matrix(X)[0]
    return _rank_columns(values, _priority(values.shape[0], ties, generator(seed)))


def rank_distance_bound(n: int, *, squared: bool = False) -> int:
    """Largest total rank distance between two rank vectors of length n.

    Parameters
    ----------
    n : int
        Number of records (n >= 1).
    squared : bool
        False: ``2 sum_{k=1}^K (n - 2k + 1)`` (note, eqs. (1), (2));
        True: ``2 sum_{k=1}^K (n - 2k + 1)^2`` (note, eq. (3)).

    Returns
    -------
    int
        ``floor(n^2 / 2)`` or ``n (n^2 - 1) / 3`` (exact integers).

    Examples
    --------
    >>> rank_distance_bound(3), rank_distance_bound(3, squared=True)
    (4, 8)
    >>> rank_distance_bound(4), rank_distance_bound(4, squared=True)
    (8, 20)
    """
    n = int(n)
    if n < 1:
        raise DataError(f"rank distances need at least one record; got n = {n}")
    return n * (n * n - 1) // 3 if squared else n * n // 2


def rank_sums(pair: NumericPair, ties: str, rng: np.random.Generator
              ) -> tuple[ColumnSums, ColumnSums]:
    """Bounded per-column rank distances (absolute, squared), each column in [0, 1].

    ``sums[j]`` is the bounded distance of column j and ``counts[j]`` is 1, so the mean over
    columns is eq. (8) resp. (9).
    """
    check_choice("ties", ties, TIES, error=DataError)
    if pair.n < 2:
        raise DataError(f"brMAE and brMSE need at least 2 records; got {pair.n}")
    priority = _priority(pair.n, ties, rng)  # one order for both: identical data, equal ranks
    diff = _rank_columns(pair.x, priority) - _rank_columns(pair.xm, priority)
    absolute = np.abs(diff).sum(axis=0) / rank_distance_bound(pair.n)
    real = diff.astype(float)  # int64 squares overflow for n > 2e6; sums exact below 2**53
    squared = np.einsum("ij,ij->j", real, real) / rank_distance_bound(pair.n, squared=True)
    ones = np.ones(pair.p, dtype=np.int64)
    return ColumnSums(absolute, ones), ColumnSums(squared, ones)


def brmae(X: Any, X_masked: Any, *, ties: str = "random", seed: Seed = None) -> float:
    """Bounded rank-based mean absolute error, in [0, 1].

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked data, as in :func:`microsdc.utility.mae`; n >= 2.
    ties, seed
        Tie breaking of the ranks of both data sets, as in :func:`ranks`.

    Returns
    -------
    float
        0 when every variable keeps its ranks, 1 when every variable's ranks are reversed.

    Notes
    -----
    ``brMAE = sum_j sum_i |r_ij - r'_ij| / (2 p sum_{k=1}^K (n - 2k + 1))``, Chaibub Neto,
    eq. (8): the rank MAE of eq. (6) divided by its maximum, eq. (7).

    References
    ----------
    Chaibub Neto, E. A note on bounded distance-based information loss metrics for
    statistical disclosure control of numeric microdata.

    Examples
    --------
    >>> brmae([[1.0], [2.0], [3.0]], [[3.0], [2.0], [1.0]])
    1.0
    >>> brmae([[1.0], [2.0], [3.0], [4.0]], [[1.0], [2.0], [4.0], [3.0]])
    0.25
    """
    pair = numeric_pair(X, X_masked)
    return reduce_sums(rank_sums(pair, ties, generator(seed))[0], "mean")


def brmse(X: Any, X_masked: Any, *, ties: str = "random", seed: Seed = None) -> float:
    """Bounded rank-based mean squared error, in [0, 1].

    Parameters are those of :func:`brmae`.

    Notes
    -----
    ``brMSE = sum_j sum_i (r_ij - r'_ij)^2 / (2 p sum_{k=1}^K (n - 2k + 1)^2)``,
    Chaibub Neto, eq. (9).

    Examples
    --------
    >>> brmse([[1.0], [2.0], [3.0], [4.0]], [[1.0], [2.0], [4.0], [3.0]])
    0.1
    """
    pair = numeric_pair(X, X_masked)
    return reduce_sums(rank_sums(pair, ties, generator(seed))[1], "mean")
