"""An additive rounding built without a MILP: the table's integer solutions by elimination,
a balanced rounding of the free cells, then a tabu search.

Work in multiples of the base ``B``: a rounding is ``R = B Y`` with ``Y`` integer and
``A Y = b / B``. :func:`integer_solutions` eliminates the relations with unit pivots (a
total of the table first), which gives *every* integer solution as

    ``Y = G w + g``,  ``w`` any integer vector (one entry per *free* cell),

with ``G`` integer and sparse. For a table built from dimensions and hierarchies, each
total defined by one breakdown, the free cells are the interior cells and ``G`` sums them
into the totals; a total with two breakdowns links interior cells, and some of those are
eliminated too. So an additive rounding in which every cell is a multiple of ``B`` always
exists and costs one matrix product: any integer ``w``. It is a controlled rounding when
every cell also lies on one of its adjacent multiples; a cell off them by ``s`` multiples
of ``B`` takes ``s`` *extra steps* (``s(Y) = max(0, Y - q - [r > 0], q - Y)`` with ``q =
floor(x / B)``, ``r = x - B q``).

:func:`additive_rounding` starts from a zero-restricted rounding of the free cells chosen
one cell at a time so that the errors passed on stay balanced (:func:`balanced_choice`),
and runs a tabu search (Glover 1989) whose moves raise or lower one free cell by one
multiple (every other cell moves by ``G[:, j]``); all moves are scored at once from the
nonzeros of ``G``, lexicographically by

1. the steps beyond ``max_steps`` and the multiples below 0 of non-negative cells (what
   the MILPs of :mod:`tabsdc.rounding._closest` forbid),
2. the extra steps of all cells,
3. the total absolute deviation ``sum |B Y - x|``.

Each iteration makes the improving moves that touch disjoint cells (at most
:data:`BATCH`), or, when none improves, the best move not undone within the last few
iterations (the way out of a local minimum), unless a move leads to the best rounding so
far. The result is an upper bound on the fewest extra steps, and the starting solution of
the MILPs.

References
----------
F. Glover, "Tabu search - part I", *ORSA Journal on Computing* 1(3), 190-206, 1989.
J. Spencer, "Six standard deviations suffice", *Transactions of the AMS* 289(2), 679-706,
1985 (balancing signed sums).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._table import Table

#: Iterations of the tabu search without a better rounding after which it stops.
PATIENCE = 2000

#: Most improving moves (on disjoint cells) made in one iteration of the tabu search.
BATCH = 64


@dataclass(frozen=True)
class IntegerSolutions:
    """Every integer solution of ``A Y = b / B`` as ``Y = G z + g``, ``z`` any integer vector.

    Attributes
    ----------
    free : ndarray of int
        The cells whose multiples are the parameters ``z`` (``Y[free] = z``).
    G : scipy.sparse.csc_array, shape (n_cells, len(free))
        Integer coefficients (an identity row for each free cell).
    offset : ndarray of float
        ``g``, integer valued.
    rounds : int
        Rounds of elimination it took.
    """

    free: np.ndarray
    G: sp.csc_array
    offset: np.ndarray
    rounds: int

    def complete(self, parameters: np.ndarray) -> np.ndarray:
        """Every cell's multiples ``G z + g``."""
        return self.G @ parameters + self.offset


def integer_solutions(table: Table, base: int, *, max_rounds: int = 500
                      ) -> IntegerSolutions | None:
    """All integer solutions of the table's relations in multiples of ``base``, or None when
    the elimination below cannot find them.

    Elimination with unit pivots, a round at a time: each remaining relation proposes one of
    its cells with coefficient +-1 as pivot (a total of the table first, then a cell in
    fewest relations), a cell proposed by several relations goes to the first, and the
    relations that contain no other relation's pivot are solved for their pivots at once
    (``Y_p = (d - sum_j c_j Y_j) / c_p``, integer because ``c_p = +-1``) and substituted into
    every other relation and into the expressions found so far (sparse products). Relations
    that become ``0 = 0`` are dropped. The cells never eliminated are free. Because every
    pivot is a unit, ``z`` integer gives ``Y`` integer and every integer solution has this
    form. None when a relation has no unit coefficient left, a relation becomes ``0 = d``
    with ``d != 0`` (no integer solution: e.g. a right-hand side that is not a multiple of
    the base), or after ``max_rounds`` rounds.

    For a table built from dimensions and hierarchies the free cells are its interior cells
    (those that are no relation's total) when totals are defined by one breakdown only; a
    total with two breakdowns links interior cells, and some of those are eliminated too.

    Examples
    --------
    A 2 x 2 table with its margins: the four interior cells determine the five totals.

    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
    ...                       "value": [1.0, 2.0, 3.0, 4.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> solutions = integer_solutions(t, 5)
    >>> len(solutions.free), int(solutions.G.sum())   # 4 identity rows, 4 x 2 + 1 x 4
    (4, 16)
    """
    n = table.n_cells
    C = sp.csr_array(table.A, dtype=float)
    d = np.asarray(table.b, dtype=float) / base
    if np.any(C.data != np.round(C.data)) or np.any(d != np.round(d)):
        return None
    preference = np.where(table.total_cells, 0, 1)          # totals become pivots first
    columns = np.arange(n)                                  # cell of each current column
    G = sp.csr_array(sp.identity(n, format="csr"))
    g = np.zeros(n)
    rounds = 0
    while C.shape[0]:
        C.eliminate_zeros()
        counts = np.diff(C.indptr)
        empty = counts == 0
        if np.any(empty & (np.abs(d) > 0.5)):
            return None                                     # 0 = d: no integer solution
        if empty.any():
            C, d = sp.csr_array(C[~empty]), d[~empty]
            if not C.shape[0]:
                break
        rounds += 1
        if rounds > max_rounds:
            return None
        coo = C.tocoo()
        unit = np.abs(coo.data) == 1
        if np.setdiff1d(np.arange(C.shape[0]), coo.row[unit]).size:
            return None                                     # a relation without a unit
        in_rows = np.bincount(coo.col, minlength=C.shape[1])
        rows, cols = coo.row[unit], coo.col[unit]
        order = np.lexsort((in_rows[cols], preference[columns[cols]], rows))
        rows, cols = rows[order], cols[order]
        pick = np.ones(len(rows), dtype=bool)
        pick[1:] = rows[1:] != rows[:-1]                    # each relation's best unit cell
        rows, cols = rows[pick], cols[pick]
        order = np.lexsort((rows, cols))
        rows, cols = rows[order], cols[order]
        pick = np.ones(len(rows), dtype=bool)
        pick[1:] = cols[1:] != cols[:-1]                    # each cell to one relation
        rows, cols = rows[pick], cols[pick]
        block = C[rows][:, cols]                            # relations x proposed pivots
        alone = np.diff(sp.csr_array(block).indptr) == 1    # only its own pivot
        if not alone.any():
            alone[0] = True
        rows, cols = rows[alone], cols[alone]
        pivot_of = np.full(C.shape[1], -1)
        pivot_of[cols] = np.arange(len(cols))
        keep = np.flatnonzero(pivot_of < 0)
        # Y_pivots = E Y_keep + e  from  c_p Y_p + C[r, keep] Y_keep = d_r
        sign = C[rows, cols]
        E = sp.csr_array(sp.diags(-1.0 / sign) @ C[rows][:, keep])
        e = d[rows] / sign
        others = np.setdiff1d(np.arange(C.shape[0]), rows)
        Cp = sp.csr_array(C[others][:, cols])
        C = sp.csr_array(C[others][:, keep] + Cp @ E)
        d = d[others] - Cp @ e
        Gp = sp.csr_array(G[:, cols])
        g = g + Gp @ e
        G = sp.csr_array(G[:, keep] + Gp @ E)
        columns = columns[keep]
    G = sp.csc_array(G)
    G.eliminate_zeros()
    if np.any(G.data != np.round(G.data)) or np.any(g != np.round(g)):
        return None
    solutions = IntegerSolutions(columns, G, np.round(g), rounds)
    probe = np.random.default_rng(0).integers(-3, 4, len(columns)).astype(float)
    for values in (np.zeros(len(columns)), probe):
        if table.failing_relations(values=base * solutions.complete(values)).size:
            return None
    return solutions


def extra_steps(multiples: np.ndarray, q: np.ndarray, adjacent: np.ndarray) -> np.ndarray:
    """Per cell, how many multiples of the base it lies outside ``[q, q + adjacent]``.

    Examples
    --------
    >>> extra_steps(np.array([3, 5, 1]), np.array([3, 3, 3]), np.array([1, 1, 0]))
    array([0, 1, 2])
    """
    return np.maximum(0, np.maximum(multiples - (q + adjacent), q - multiples)).astype(int)


@dataclass(frozen=True)
class AdditiveRounding:
    """What :func:`additive_rounding` found.

    Attributes
    ----------
    multiples : ndarray of int
        ``R / B`` per cell (additive; ``R`` the rounded values).
    steps : ndarray of int
        Extra steps per cell (:func:`extra_steps`).
    deviation : float
        ``sum |R - x|``.
    iterations : int
        Moves made by the tabu search.
    seconds : float
    solutions : IntegerSolutions
        The parametrisation searched (``multiples = solutions.complete(parameters)``).
    parameters : ndarray of int
        ``z``.
    """

    multiples: np.ndarray
    steps: np.ndarray
    deviation: float
    iterations: int
    seconds: float
    solutions: IntegerSolutions
    parameters: np.ndarray


def additive_rounding(
    table: Table,
    base: int,
    solutions: IntegerSolutions,
    q: np.ndarray,
    r: np.ndarray,
    *,
    max_steps: int,
    time_limit: float,
    seed: int = 0,
) -> AdditiveRounding:
    """An additive rounding with few extra steps (module docstring).

    Parameters
    ----------
    table : Table
    base : int
    solutions : IntegerSolutions
        From :func:`integer_solutions`.
    q, r : ndarray
        ``floor(x / B)`` and the residues (:func:`tabsdc.rounding._rules.decompose`).
    max_steps : int
        Steps per cell beyond which a rounding is scored first by its excess.
    time_limit : float
        Seconds for the tabu search (it also stops after :data:`PATIENCE` moves without a
        better rounding, or when it reaches zero extra steps).
    seed : int
        Of the random tabu tenures (the search is deterministic for a seed).

    Returns
    -------
    AdditiveRounding

    Examples
    --------
    The 2 x 2 x 2 parity cube (1 where ``i + j + k`` is even) to base 2: no controlled
    rounding exists, one extra step suffices.

    >>> import itertools
    >>> import pandas as pd
    >>> from tabsdc.rounding._rules import decompose
    >>> rows = [(str(i), str(j), str(k), float((i + j + k + 1) % 2))
    ...         for i, j, k in itertools.product(range(2), repeat=3)]
    >>> t = Table.from_aggregated(pd.DataFrame(rows, columns=["i", "j", "k", "value"]),
    ...                           ["i", "j", "k"])
    >>> q, r = decompose(t.values, 2)
    >>> found = additive_rounding(t, 2, integer_solutions(t, 2), q, r, max_steps=2,
    ...                           time_limit=5)
    >>> int(found.steps.sum()), bool(np.all(t.A @ (2 * found.multiples) == 0))
    (1, True)
    """
    start = time.perf_counter()
    target = table.values / base                        # x, in multiples of the base
    adjacent = (r > 0).astype(float)
    low, high = q.astype(float), q + adjacent
    floor = np.where(table.values >= 0, 0.0, -1e300)    # non-negative cells stay so
    free, G = solutions.free, solutions.G
    z = q[free] + balanced_choice(G, r / base, adjacent, free)
    y = solutions.complete(z)
    cell = G.indices                                    # nonzeros of G, column by column
    coef = G.data
    # a move changes a cell by one of a few values: score each cell at each, then gather
    shifts, where = np.unique(np.concatenate([coef, -coef]), return_inverse=True)
    at = where.reshape(2, -1) * table.n_cells + cell    # (raise, lower) into the scores
    starts = G.indptr[:-1]                              # every column has its identity row

    def scores(values):
        """(excess over max_steps or below 0 for a non-negative cell, extra steps,
        |deviation|) of each cell at ``values``."""
        steps = np.maximum(0.0, np.maximum(values - high, low - values))
        below = np.maximum(0.0, floor - values)
        return np.stack([np.maximum(0.0, steps - max_steps) + below, steps,
                         np.abs(values - target)])

    current = scores(y).sum(axis=1)
    best, best_score = z.copy(), current.copy()
    rng = np.random.default_rng(seed)
    k = len(free)
    tabu = np.zeros(2 * k, dtype=np.int64)              # [raise, lower] forbidden until
    taken = np.zeros(table.n_cells, dtype=bool)
    iteration = since_best = 0
    while (since_best < PATIENCE and best_score[:2].any() and k
           and time.perf_counter() - start < time_limit):
        iteration += 1
        now = scores(y)
        gain = (scores(y[None, :] + shifts[:, None]) - now[:, None, :]).reshape(3, -1)
        delta = np.concatenate([np.add.reduceat(gain[:, index], starts, axis=1)
                                for index in at], axis=1)   # (3, 2k): raise, then lower
        zero = np.zeros((3, 1))
        better = _lexicographic_less(current[:, None] + delta, best_score[:, None])
        allowed = (tabu <= iteration) | better
        if not allowed.any():
            break
        candidates = np.flatnonzero(allowed)
        candidates = candidates[np.lexsort(delta[::-1, candidates])]
        improving = candidates[_lexicographic_less(delta[:, candidates], zero)][:BATCH * 4]
        moves = []
        for move in improving:                          # improving moves on disjoint cells
            span = cell[G.indptr[move % k]:G.indptr[move % k + 1]]
            if not taken[span].any():
                taken[span] = True
                moves.append(int(move))
                if len(moves) == BATCH:
                    break
        taken[:] = False
        for move in moves or [int(candidates[0])]:
            direction, column = divmod(move, k)
            step = 1.0 if direction == 0 else -1.0
            z[column] += step
            span = slice(G.indptr[column], G.indptr[column + 1])
            y[cell[span]] += step * coef[span]
            tabu[(1 - direction) * k + column] = iteration + 5 + int(rng.integers(0, 10))
        current = scores(y).sum(axis=1)
        if _lexicographic_less(current[:, None], best_score[:, None])[0]:
            best, best_score, since_best = z.copy(), current.copy(), 0
        else:
            since_best += 1
    multiples = np.round(solutions.complete(best))
    return AdditiveRounding(
        multiples=multiples.astype(np.int64),
        steps=extra_steps(multiples, q, adjacent),
        deviation=float(np.abs(base * multiples - table.values).sum()),
        iterations=iteration, seconds=time.perf_counter() - start, solutions=solutions,
        parameters=best.astype(np.int64))


def balanced_choice(G: sp.csc_array, fraction: np.ndarray, adjacent: np.ndarray,
                    free: np.ndarray) -> np.ndarray:
    """Round the free cells up (1) or down (0), one after the other, so that the errors
    they pass on to the other cells stay small (a greedy balancing of signed sums, as in
    discrepancy theory).

    With ``f = r / B`` the cell's fraction, rounding the free cells changes every cell by
    ``e = G (choice - f[free])``, and a cell is then ``max(0, f + e - [r > 0], -(f + e))``
    outside its adjacent multiples. The free cells are taken in order of how many cells
    depend on them (most first); each is rounded the way that leaves the cells it moves
    least outside (then the smaller sum of squared errors ``e``). Cells with ``f = 0`` stay
    (zero-restriction).

    Examples
    --------
    Three cells and their total, fractions 0.5 each: rounding all three alike would put
    the total 1.5 off; the greedy rounds one way, then the other.

    >>> G = sp.csc_array(np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]))
    >>> balanced_choice(G, np.array([0.5, 0.5, 0.5, 0.5]), np.ones(4), np.arange(3))
    array([0., 1., 0.])
    """
    error = np.zeros(G.shape[0])
    choice = np.zeros(G.shape[1])
    share = fraction[free]
    for j in np.argsort(-np.diff(G.indptr), kind="stable"):
        span = slice(G.indptr[j], G.indptr[j + 1])
        cells, coef = G.indices[span], G.data[span]
        down = error[cells] - coef * share[j]
        if share[j] == 0:
            error[cells] = down
            continue
        up = down + coef
        costs = []
        for moved in (down, up):
            value = fraction[cells] + moved
            outside = np.maximum(0.0, np.maximum(value - adjacent[cells], -value))
            costs.append((outside.sum(), float(moved @ moved)))
        if costs[1] < costs[0]:
            choice[j], error[cells] = 1.0, up
        else:
            error[cells] = down
    return choice


def _lexicographic_less(a: np.ndarray, b: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Column-wise ``a < b`` comparing rows in order (ties within ``tol``)."""
    less = np.zeros(a.shape[1], dtype=bool)
    equal = np.ones(a.shape[1], dtype=bool)
    for row_a, row_b in zip(a, b, strict=True):
        less |= equal & (row_a < row_b - tol)
        equal &= np.abs(row_a - row_b) <= tol
    return less


def heuristic_rounding(
    table: Table,
    base: int,
    q: np.ndarray,
    r: np.ndarray,
    *,
    max_steps: int,
    time_limit: float | None,
) -> AdditiveRounding | None:
    """:func:`additive_rounding` over :func:`integer_solutions`, or None when the table's
    integer solutions were not found by elimination (the caller then goes without).
    ``time_limit`` counts both; the search gets what the elimination left (none: the
    conventional rounding of the free cells, completed)."""
    start = time.perf_counter()
    solutions = integer_solutions(table, base)
    if solutions is None:
        return None
    left = np.inf if time_limit is None else time_limit - (time.perf_counter() - start)
    return additive_rounding(table, base, solutions, q, r, max_steps=max_steps,
                             time_limit=left)
