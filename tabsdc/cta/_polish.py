"""Make a solver's adjustment exact: inside its bounds, on every equality row.

LP and QP solvers return points that meet bounds and rows within feasibility tolerances
(``1e-7`` scaled). :func:`polish` first clips ``y`` into its bounds for the chosen
directions (so every protection level and bound holds exactly), then removes the remaining
row residual ``r = [A; E] y`` with the least-norm correction ``d`` on the cells that have room
(``[A; E]_F d = -r`` by LSQR), so additivity holds to rounding error.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import lsqr

from tabsdc._progress import Deadline
from tabsdc.cta._problem import CTAProblem

#: Relative residual below which a row counts as exact.
EXACT = 1e-13

#: LSQR iterations of one round of :func:`polish`.
ROUND_ITERATIONS = 100


def row_residuals(problem: CTAProblem, y: np.ndarray) -> np.ndarray:
    """``|[A; E] y|`` relative to ``max(1, |[A; E]| |y|)`` per row."""
    matrix = problem.constraint_matrix
    return np.abs(matrix @ y) / np.maximum(1.0, abs(matrix) @ np.abs(y))


def polish(problem: CTAProblem, y: np.ndarray, up: np.ndarray, *,
           seconds: float | None = None) -> np.ndarray:
    """Clip ``y`` into its bounds and project out its row residual (see the module docstring).

    Parameters
    ----------
    problem : CTAProblem
    y : ndarray, shape (n,)
        A solver's adjustment.
    up : ndarray of bool, shape (s,)
        Directions of the sensitive cells.
    seconds : float, optional
        Time for the projection: LSQR runs in rounds of :data:`ROUND_ITERATIONS` iterations,
        each applied to ``y`` and started again from its residual, until the rows are exact,
        a round brings no improvement, ``10 m + 100`` iterations in all, or the time is up.

    Returns
    -------
    ndarray
        The polished adjustment (a new array). When no cell has room to absorb the residual,
        the clipped ``y`` is returned as is (verification then reports the residual).
    """
    lower, upper = problem.bounds(up)
    y = np.clip(y, lower, upper)
    if np.all(row_residuals(problem, y) <= EXACT):
        return y
    matrix = problem.constraint_matrix
    room = np.minimum(y - lower, upper - y)
    free = np.flatnonzero(room > 1e-6 * np.maximum(1.0, np.abs(problem.values)))
    if free.size == 0:
        return y
    deadline = Deadline(seconds)
    part = matrix[:, free]
    residual = matrix @ y
    for _ in range(0, 10 * len(residual) + 100, ROUND_ITERATIONS):
        correction = lsqr(part, -residual, atol=1e-15, btol=1e-15,
                          iter_lim=ROUND_ITERATIONS)[0]
        trial = y.copy()
        trial[free] += correction
        trial_residual = matrix @ trial
        if (not np.all((trial >= lower) & (trial <= upper))
                or np.max(np.abs(trial_residual)) >= np.max(np.abs(residual))):
            break
        y, residual = trial, trial_residual
        # only the time stops it, not a Ctrl-C: the adjustment kept must be exact
        if np.all(row_residuals(problem, y) <= EXACT) or deadline.elapsed() >= deadline.seconds:
            break
    return y
