"""Rank swapping (Moore 1996): swap values between records whose ranks are close."""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc._data import Seed, generator
from microsdc.masking._frame import check_number, input_values, same_type


def rank_swap(X: Any, p: float = 15.0, *, seed: Seed = None) -> Any:
    """Swap each column's values in pairs of records whose ranks differ by at most p % of n.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, q)
        Numeric data without missing values.
    p : float, default 15
        Swapping window in percent of the number of records, 0 <= p <= 100.
    seed : int, numpy.random.Generator or None
        Random source; the same int gives the same result, None draws fresh entropy.

    Returns
    -------
    pandas.DataFrame or numpy.ndarray
        Same type, columns, index and row order as ``X``; every column holds exactly the
        same values as before (the same multiset), only moved between records.

    Raises
    ------
    DataError
        A non-numeric column or missing value (naming column and record), or ``p`` outside
        [0, 100].

    Notes
    -----
    Each column is swapped on its own (Moore 1996; Domingo-Ferrer and Torra 2001, Sect. 3.2;
    mu-Argus). The records are ranked by the column's value (equal values in record order)
    and the window is :math:`w = \\lfloor p n / 100 \\rfloor` ranks. Every record takes part
    in at most one swap, always with a partner whose rank differs by 1 to w; ``w = 0`` leaves
    the column unchanged. The pairs are drawn in rounds, each round a vectorised step over
    all records not yet swapped (called *free*):

    1. every free record whose window ahead of it, ranks r+1 .. r+w, holds at least one free
       record proposes to one of those free records, chosen uniformly at random;
    2. the proposals get distinct random priorities; a proposal becomes a swap when its
       priority is the highest among all proposals made or received by either of its two
       records (so the pairs are disjoint, and the highest proposal always succeeds);
    3. the swapped pairs stop being free; the rounds end when no free record has a free
       record within w ranks above it.

    This is the parallel form of Moore's sequential pass (which walks up the ranks and swaps
    each free record with a uniformly chosen free record among the next w): both end in a
    maximal set of disjoint pairs within the window (no two free records remain within w
    ranks), but the chance of a given pairing differs. A round costs O(n log n); the number of
    rounds grows like log n.

    References
    ----------
    Moore, R. (1996). Controlled data swapping techniques for masking public use microdata
    sets. Research Report RR96/04, U.S. Bureau of the Census.

    Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
    methods for microdata. In Doyle et al. (eds.), Confidentiality, Disclosure and Data
    Access, 111-133. North-Holland.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(10.0).reshape(10, 1)
    >>> Z = rank_swap(X, p=20, seed=3)
    >>> sorted(Z[:, 0]) == sorted(X[:, 0])
    True
    >>> bool(np.abs(Z - X).max() <= 2)
    True
    """
    p = check_number("p", p, low=0, high=100)
    values = input_values(X, min_records=1, what="rank swapping")
    n = values.shape[0]
    window = int(np.floor(p * n / 100.0))
    rng = generator(seed)
    out = np.empty_like(values)
    for j in range(values.shape[1]):  # loop over variables
        order = np.argsort(values[:, j], kind="stable")
        ranked = values[order, j]
        out[order, j] = ranked[_partners(n, window, rng)]
    return same_type(X, out)


def _partners(n: int, window: int, rng: np.random.Generator) -> np.ndarray:
    """For each rank, the rank it swaps with (itself when not swapped)."""
    partner = np.arange(n)
    free = np.arange(n)
    while free.size > 1:
        reach = np.searchsorted(free, free + window, side="right") - np.arange(1, free.size + 1)
        proposer = np.flatnonzero(reach > 0)
        if proposer.size == 0:
            break
        target = proposer + 1 + rng.integers(reach[proposer])
        priority = rng.permutation(proposer.size)
        best = np.full(free.size, -1)
        best[proposer] = priority
        np.maximum.at(best, target, priority)
        won = (best[proposer] == priority) & (best[target] == priority)
        a, b = free[proposer[won]], free[target[won]]
        partner[a], partner[b] = b, a
        still = np.ones(free.size, dtype=bool)
        still[proposer[won]] = False
        still[target[won]] = False
        free = free[still]
    return partner
