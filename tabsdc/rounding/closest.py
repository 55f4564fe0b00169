"""The closest additive rounding when no controlled rounding exists: fewest extra steps
first, least total deviation second, each with its certificate.

With ``q = floor(x / B)``, ``r = x - B q`` and the adjacent choice ``z`` in
``{0, [r > 0]}``, a rounding ``R = B (q + z + p - m)`` moves a cell ``p`` multiples of
``B`` above or ``m`` below its adjacent ones (``0 <= p, m <= L``, ``L = max_steps``); it is
additive when ``A R = b``. The two objectives are solved one after the other
(lexicographically), never as one weighted sum - a weight large enough to rank the steps
first (``n B (L + 1)``) swamps the deviation and leaves HiGHS a bound it cannot close:

1. **steps**: ``S* = min sum (p + m)``; HiGHS's dual bound (rounded up: ``S`` is integer)
   certifies it;
2. **deviation**: ``min sum [(B - 2r) z + B (p + m)] + sum r`` subject to
   ``sum (p + m) <= S*``, the total absolute deviation ``sum |R - x|`` (every combination
   that moves a cell off its canonical form ``q - m`` or ``q + 1 + p`` reaches the same ``R``
   at a higher cost, so an optimum never uses one).

Both share one time limit (``time_limit`` seconds for the two together; the first gets
:data:`STEPS_SHARE` of it, the second the rest, if at least :data:`MIN_PHASE_SECONDS`).
The answer is the second phase's rounding, or the first's when the second finds none in
its time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc.errors import InputError, SolverError
from tabsdc.solver import LinearProgram, SolveResult, solve
from tabsdc.table import Table

__all__ = ["ClosestRounding", "closest_additive_rounding", "STEPS_SHARE", "MIN_PHASE_SECONDS"]

#: Share of the time limit for the first phase (fewest extra steps).
STEPS_SHARE = 0.6

#: No phase is started with less time than this (seconds): HiGHS's branch and cut can
#: overrun a tiny limit by a whole round of root cuts.
MIN_PHASE_SECONDS = 1.0


@dataclass(frozen=True)
class ClosestRounding:
    """The closest additive rounding and its certificates.

    Attributes
    ----------
    multiples : ndarray of int
        ``R / B`` per cell.
    steps : ndarray of int
        Extra multiples of the base per cell beyond its adjacent ones.
    steps_bound : int
        Proven lower bound on the fewest extra steps (``steps.sum()`` when proven minimal).
    deviation : SolveResult or None
        The second phase (objective: total absolute deviation, bound, gap); None when it
        found nothing in its time.
    stepping : SolveResult
        The first phase (objective: extra steps).
    """

    multiples: np.ndarray
    steps: np.ndarray
    steps_bound: int
    deviation: SolveResult | None
    stepping: SolveResult

    @property
    def steps_proven(self) -> bool:
        """The number of extra steps is proven minimal."""
        return self.steps_bound >= int(self.steps.sum())

    @property
    def proven(self) -> bool:
        """Both phases proven optimal: the lexicographic optimum."""
        return (self.steps_proven and self.deviation is not None
                and self.deviation.optimal)


def _deadline_left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.perf_counter(), 1e-3)


def closest_additive_rounding(
    table: Table,
    base: int,
    q: np.ndarray,
    r: np.ndarray,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    max_steps: int = 2,
) -> ClosestRounding:
    """Solve the two phases of the module docstring.

    Parameters
    ----------
    table : Table
    base : int
    q, r : ndarray
        ``floor(x / B)`` and the residues (:func:`tabsdc.rounding.rules.decompose`).
    solver, mip_gap
        Of both MILPs (:func:`tabsdc.solver.solve`).
    time_limit : float, optional
        Seconds for both phases together.
    max_steps : int
        ``L``: extra multiples of the base a cell may move.

    Returns
    -------
    ClosestRounding

    Raises
    ------
    InputError
        ``max_steps`` not a positive integer.
    SolverError
        No additive rounding within ``max_steps`` (proven), or none found in the time.

    Examples
    --------
    The 2 x 2 x 2 parity cube (1 where ``i + j + k`` is even: every line sums to 1) has no
    controlled rounding to base 2; one cell moved one extra step is the closest:

    >>> import itertools
    >>> import pandas as pd
    >>> from tabsdc.rounding.rules import decompose
    >>> rows = [(str(i), str(j), str(k), float((i + j + k + 1) % 2))
    ...         for i, j, k in itertools.product(range(2), repeat=3)]
    >>> t = Table.from_aggregated(pd.DataFrame(rows, columns=["i", "j", "k", "value"]),
    ...                           ["i", "j", "k"])
    >>> q, r = decompose(t.values, 2)
    >>> closest = closest_additive_rounding(t, 2, q, r)
    >>> int(closest.steps.sum()), closest.proven
    (1, True)
    """
    if not (isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps >= 1):
        raise InputError(f"max_steps must be a positive integer, got {max_steps!r}")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    n = len(q)
    adjacent = (r > 0).astype(float)
    rhs = table.b / base - table.A @ q
    matrix = sp.csr_array(sp.hstack([table.A, table.A, -table.A], format="csr"))
    col_upper = np.concatenate([adjacent, np.full(2 * n, float(max_steps))])
    zeros = np.zeros(3 * n)
    integer = np.ones(3 * n, dtype=bool)
    steps_cost = np.concatenate([np.zeros(n), np.ones(2 * n)])
    first = solve(LinearProgram(c=steps_cost, A=matrix, row_lower=rhs, row_upper=rhs,
                                col_lower=zeros, col_upper=col_upper, integrality=integer),
                  solver, time_limit=None if time_limit is None else STEPS_SHARE * time_limit,
                  mip_gap=mip_gap)
    if not first.has_solution:
        proof = first.status in ("infeasible", "infeasible_or_unbounded")
        raise SolverError(
            "no zero-restricted controlled rounding exists, and "
            + (f"no additive rounding moves every cell at most {max_steps} extra multiples of "
               f"the base (proven); raise max_steps" if proof else
               f"the search for an additive alternative found none before its time limit "
               f"(status {first.status!r}); raise time_limit"))
    best = np.round(first.x)
    least = int(round(best[n:].sum()))
    steps_bound = least if first.optimal else int(np.ceil((first.bound or 0.0) - 1e-6))
    left = _deadline_left(deadline)
    if left is not None and left < MIN_PHASE_SECONDS:   # the first phase used up the time
        return _closest(q, adjacent, best, steps_bound, None, first)
    deviation_cost = np.concatenate([base - 2 * r, np.full(2 * n, float(base))])
    second = solve(
        LinearProgram(c=deviation_cost,
                      A=sp.vstack([matrix, sp.csr_array(steps_cost[None, :])], format="csr"),
                      row_lower=np.append(rhs, -np.inf), row_upper=np.append(rhs, least),
                      col_lower=zeros, col_upper=col_upper, integrality=integer,
                      offset=float(r.sum())),
        solver, time_limit=left, mip_gap=mip_gap)
    if not second.has_solution:
        return _closest(q, adjacent, best, steps_bound, None, first)
    return _closest(q, adjacent, np.round(second.x), steps_bound, second, first)


def _closest(q: np.ndarray, adjacent: np.ndarray, x: np.ndarray, steps_bound: int,
             deviation: SolveResult | None, stepping: SolveResult) -> ClosestRounding:
    """The rounding of a solution ``x = [z, p, m]`` with its certificates."""
    z, up, down = x.reshape(3, len(q))
    multiples = q + z + up - down
    steps = np.maximum(0, np.maximum(multiples - (q + adjacent), q - multiples)).astype(int)
    return ClosestRounding(multiples=multiples, steps=steps,
                           steps_bound=min(steps_bound, int(steps.sum())),
                           deviation=deviation, stepping=stepping)
