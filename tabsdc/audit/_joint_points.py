"""One LP that moves many hidden cells toward their protection targets at once.

Every feasible point ``x`` of the attacker's polytope is a table the intruder cannot rule out,
so it proves ``max x_j >= x_j`` and ``min x_j <= x_j`` for every cell at once (an inner
bound, :mod:`tabsdc.audit._witnesses`). The interval attack spends two LPs per cell to find the
extremes; to show that a sensitive cell is protected it is enough to find *some* point that
reaches its target ``T_j`` (``a_j + upl_j`` above, ``a_j - lpl_j`` below). This module looks
for one point that reaches as many targets as it can:

    max  sum_i w_i t_i
    s.t. x in the polytope,
         t_i <= (x_{j_i} - a_{j_i}) / (T_i - a_{j_i}),   t_i <= 1,

so ``t_i`` is the share of its way that cell ``j_i`` has gone toward its target (capped at 1:
going further earns nothing, and a cell with room to spare does not crowd out the others);
the targets may lie above or below the values, one per cell. The priorities ``w_i`` (about 1)
break ties between equally good points. Solved by HiGHS's interior point method without
crossover: the point need not be a vertex, and on blocks of 10^4 cells it takes a third of
the dual simplex's time; when it stops short of optimal (numerical trouble), the simplex
method solves the same LP. A target with ``t_i = 1`` is reached; the others are what the point
could not do together. With a single target, ``t < 1`` means the target is out of reach: the
point is then the cell's extreme (the attack's LP, capped at the target).

A point found on a restriction (:meth:`tabsdc.audit._block.Block.restriction`) is a point of the
whole polytope: the cells held fixed keep their true values.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import SolverError
from tabsdc._progress import Deadline
from tabsdc.solver import HighsModel, LinearProgram


def joint_point(
    problem: LinearProgram,
    cells: np.ndarray,
    values: np.ndarray,
    targets: np.ndarray,
    priorities: np.ndarray,
    *,
    time_limit: float | None = None,
) -> np.ndarray | None:
    """A point of ``problem`` moving ``cells`` toward ``targets`` together (module text).

    Parameters
    ----------
    problem : LinearProgram
        The polytope (its objective is ignored).
    cells : ndarray of int
        Distinct columns of ``problem`` to move.
    values : ndarray
        The true value of every column of ``problem``.
    targets : ndarray
        One target per cell of ``cells``, different from its value.
    priorities : ndarray
        One positive priority per cell (its ``w_i``).
    time_limit : float, optional
        Seconds for the solve.

    Returns
    -------
    ndarray or None
        The point (one value per column of ``problem``, inside its column bounds), or None
        when the solve did not end optimal (a time limit, numerical trouble).

    Examples
    --------
    ``x0 + x1 = 5`` with ``x0, x1`` in [0, 5] and values 2, 3: one point cannot take ``x0``
    up to 4 and ``x1`` up to 4 together; with ``x1`` given priority it goes up to its target
    and ``x0`` gives way.

    >>> lp = LinearProgram(c=[0, 0], A=sp.csr_array([[1.0, 1.0]]), row_lower=[5],
    ...                    row_upper=[5], col_lower=[0, 0], col_upper=[5, 5])
    >>> point = joint_point(lp, np.array([0, 1]), np.array([2.0, 3.0]),
    ...                     np.array([4.0, 4.0]), np.array([1.0, 2.0]))
    >>> np.round(point, 6).tolist()
    [1.0, 4.0]
    """
    cells = np.asarray(cells, dtype=np.int64)
    k, n = len(cells), problem.n_cols
    ratio = 1.0 / (np.asarray(targets, dtype=float) - values[cells])
    # rows t_i - x_{j_i} / r_i <= -a_{j_i} / r_i beneath the polytope's rows
    toward = sp.csr_array((np.concatenate([-ratio, np.ones(k)]),
                           (np.tile(np.arange(k), 2), np.concatenate([cells, n + np.arange(k)]))),
                          shape=(k, n + k))
    joint = LinearProgram(
        c=np.concatenate([np.zeros(n), priorities]),
        A=sp.vstack([sp.hstack([problem.A, sp.csr_array((problem.n_rows, k))]), toward]),
        row_lower=np.concatenate([problem.row_lower, np.full(k, -np.inf)]),
        row_upper=np.concatenate([problem.row_upper, -values[cells] * ratio]),
        col_lower=np.concatenate([problem.col_lower, np.full(k, -np.inf)]),
        col_upper=np.concatenate([problem.col_upper, np.ones(k)]),
        sense="max",
    )
    deadline = Deadline(time_limit)
    try:
        model = HighsModel(joint, time_limit=time_limit)
        model.set_interior_point(True, crossover=False)
        result = model.solve()
        if result.status != "optimal" and not deadline.expired:  # it stopped short
            model.set_interior_point(False)
            model.set_time_limit(deadline.solver_limit())
            result = model.solve()
    except SolverError:
        return None
    if result.status != "optimal":
        return None
    return np.clip(result.x[:n], problem.col_lower, problem.col_upper)
