"""Certified lower bounds on the optimum of L1 and L2 CTA from Lagrangian duality.

Dualising the equality rows ``[A; E] y = 0`` with any multipliers ``pi`` leaves one
minimisation per cell over its own feasible set ``X_i`` (an interval for a non-sensitive
cell; the union ``[-m_i, -lpl_i] U [upl_i, m_i]`` of the possible protection directions for
a sensitive one):

    L(pi) = sum_i  min_{y_i in X_i}  f_i(y_i) + g_i y_i,     g = -[A; E]' pi,

with ``f_i(y) = w_i |y|`` (L1) or ``w_i y**2`` (L2). By weak duality ``L(pi) <= OPT`` for
every ``pi``; the rows kept by cuts (correlation limits) are simply dropped, which only
lowers the bound. Every term of the objective is non-negative, so a solution at least as good
as an incumbent of value ``U`` has ``f_i(y_i) <= U`` for each cell: the per-cell sets are cut
to ``f_i(y_i) <= U``, which keeps the bound finite when ``X_i`` is unbounded.

The multipliers used are the row duals of an LP or QP solved for fixed directions (HiGHS's
convention: reduced costs ``c - [A; E]' pi``). The best ``pi`` gives the bound of the LP
relaxation (for L1 the per-cell convex envelopes are the relaxation's), so the bound is
cheap and at most that strong; the heuristic also uses the LP relaxation and the MILP's dual
bound where it has them and reports the best.

References
----------
Geoffrion, A. M. "Lagrangean relaxation for integer programming", *Mathematical Programming
Study* 2, 82-114, 1974.
"""

from __future__ import annotations

import numpy as np

from tabsdc.cta._problem import CTAProblem


def _values(y: np.ndarray, w: np.ndarray, g: np.ndarray, kind: str) -> np.ndarray:
    """``f(y) + g y`` elementwise, with the limits at infinite ``y``."""
    finite = np.isfinite(y)
    safe = np.where(finite, y, 0.0)
    value = (w * np.abs(safe) if kind == "l1" else w * safe * safe) + g * safe
    if finite.all():
        return value
    sign = np.sign(y)
    slope = w + sign * g if kind == "l1" else np.where(w > 0, np.inf, sign * g)
    limit = np.where(slope > 0, np.inf, np.where(slope < 0, -np.inf, 0.0))
    return np.where(finite, value, limit)


def _interval_minimum(
    lower: np.ndarray, upper: np.ndarray, w: np.ndarray, g: np.ndarray, kind: str
) -> np.ndarray:
    """Minimum of ``f(y) + g y`` over ``[lower, upper]`` (``+inf`` for an empty interval)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "l1":
            inner = np.zeros_like(w)
        else:
            inner = np.where(w > 0, -g / (2 * w), 0.0)
    inner = np.clip(inner, lower, upper)
    candidates = np.stack([_values(lower, w, g, kind), _values(upper, w, g, kind),
                           _values(inner, w, g, kind)])
    best = candidates.min(axis=0)
    return np.where(lower <= upper, best, np.inf)


def lagrangian_bound(
    problem: CTAProblem, duals: np.ndarray, kind: str, incumbent: float
) -> float | None:
    """Lower bound ``max(0, L(pi))`` on the optimal objective (see the module docstring).

    Parameters
    ----------
    problem : CTAProblem
    duals : ndarray, shape (m + k,)
        Multipliers of the rows ``[A; E]`` (in that order).
    kind : {"l1", "l2"}
        Objective ``sum w |y|`` or ``sum w y**2``.
    incumbent : float
        Objective of a known feasible solution.

    Returns
    -------
    float or None
        None when the bound is ``-inf`` (a cell with zero cost and an unbounded range
        whose multiplier is not zero).

    Examples
    --------
    One relation ``y_0 = y_1 + y_2`` (cell 0 the total), cell 1 sensitive with levels 2,
    cost ``"count"``. With ``pi = 0`` the bound is the protected cell's own cost 2; the optimum
    is 4, since the move must be compensated (the weakness of the LP relaxation of CTA):

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2.0, 0], "upl": [0, 2.0, 0]})
    >>> p = build_problem(Table(cells, [[-1, 1, 1]], [0]), "count")
    >>> float(lagrangian_bound(p, np.array([0.0]), "l1", incumbent=4.0))
    2.0
    """
    w = problem.cost
    g = -(problem.constraint_matrix.T @ np.asarray(duals, dtype=float))
    with np.errstate(divide="ignore"):
        reach = incumbent / w if kind == "l1" else np.sqrt(incumbent / w)
    reach = np.where(w > 0, reach, np.inf)
    lower, upper = np.maximum(-problem.down, -reach), np.minimum(problem.up, reach)
    terms = _interval_minimum(lower, upper, w, g, kind)
    k = problem.sensitive
    if k.size:
        wk, gk = w[k], g[k]
        up_part = _interval_minimum(problem.upl, upper[k], wk, gk, kind)
        down_part = _interval_minimum(lower[k], -problem.lpl, wk, gk, kind)
        terms[k] = np.minimum(np.where(problem.can_up, up_part, np.inf),
                              np.where(problem.can_down, down_part, np.inf))
    total = float(np.sum(terms))
    if np.isnan(total) or total == -np.inf:
        return None
    return max(0.0, total)
