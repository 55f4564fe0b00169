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

from tabsdc.cta.problem import CTAProblem

__all__ = ["polish", "row_residuals"]

#: Relative residual below which a row counts as exact.
EXACT = 1e-13


def row_residuals(problem: CTAProblem, y: np.ndarray) -> np.ndarray:
    """``|[A; E] y|`` relative to ``max(1, |[A; E]| |y|)`` per row."""
    matrix = problem.constraint_matrix
    return np.abs(matrix @ y) / np.maximum(1.0, abs(matrix) @ np.abs(y))


def polish(problem: CTAProblem, y: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Clip ``y`` into its bounds and project out its row residual (see the module docstring).

    Parameters
    ----------
    problem : CTAProblem
    y : ndarray, shape (n,)
        A solver's adjustment.
    up : ndarray of bool, shape (s,)
        Directions of the sensitive cells.

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
    residual = matrix @ y
    correction = lsqr(matrix[:, free], -residual, atol=1e-15, btol=1e-15,
                      iter_lim=10 * len(residual) + 100)[0]
    if np.all(np.abs(correction) <= room[free]):
        y[free] += correction
    return y
