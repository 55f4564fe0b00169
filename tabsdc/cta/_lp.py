"""The L1 CTA linear program, kept in HiGHS: its relaxation and its fixed-direction LPs.

Variables ``x = [p, q]`` (``y = p - q``, ``p, q >= 0``), objective ``sum w (p + q)``, rows
``A (p - q) = 0`` and ``E (p - q) = 0``.

* **Fixed directions** (a sensitive cell either up, ``p >= upl, q = 0``, or down, ``p = 0,
  q >= lpl``): an LP whose optimum is the best adjustment for those directions. Changing
  directions only changes column bounds, so HiGHS re-solves from the previous basis (dual
  simplex warm start).
* **Relaxation** of the MILP of Cox's slide 26: projecting the binary ``I`` out of
  ``p >= upl I, q >= lpl (1 - I), 0 <= I <= 1`` leaves one row per sensitive cell,
  ``p / upl + q / lpl >= 1`` (scaled by ``max(upl, lpl)``); its optimum is the MILP's LP
  bound. The rows are switched off (free row bounds) while directions are fixed, where they
  are redundant.

Quadratic limits (correlation) are kept by cuts added to the same model
(:func:`tabsdc.cta._constraints.solve_with_cuts`); cuts are valid for every choice of
directions, so they stay.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc.cta._constraints import solve_with_cuts
from tabsdc.cta._highs import CTAHighsModel
from tabsdc.cta._problem import CTAProblem
from tabsdc.cta._search import consistent_directions
from tabsdc.solver import LinearProgram, SolveResult


class L1Model:
    """A kept HiGHS model of the L1 CTA LP (see the module docstring).

    Parameters
    ----------
    problem : CTAProblem
    time_limit : float, optional
        Time limit of each solve (change it with :meth:`set_time_limit`).
    """

    def __init__(self, problem: CTAProblem, *, time_limit: float | None = None) -> None:
        self.problem = problem
        n, k = problem.n, problem.sensitive
        both = problem.free_direction & (problem.upl > 0) & (problem.lpl > 0)
        self._relax_cells = np.flatnonzero(both)
        r = len(self._relax_cells)
        cells = k[self._relax_cells]
        # row i scaled by max(upl, lpl) (coefficients <= 1, right-hand side the level):
        # ``1 / level`` coefficients are tiny on magnitude tables and upset HiGHS's
        # feasibility tolerances
        self._relax_scale = np.maximum(problem.upl[both], problem.lpl[both])
        relax = sp.csr_array(
            (np.concatenate([self._relax_scale / problem.upl[both],
                             self._relax_scale / problem.lpl[both]]),
             (np.tile(np.arange(r), 2), np.concatenate([cells, cells + n]))),
            shape=(r, 2 * n),
        )
        equal = problem.constraint_matrix
        self._n_equal = equal.shape[0]
        matrix = sp.vstack([sp.hstack([equal, -equal]), relax], format="csr")
        lower = np.concatenate([np.zeros(self._n_equal), self._relax_scale])
        upper = np.concatenate([np.zeros(self._n_equal), np.full(r, np.inf)])
        col_lower, col_upper = self._relaxed_bounds()
        program = LinearProgram(np.concatenate([problem.cost, problem.cost]), matrix,
                                lower, upper, col_lower, col_upper)
        self.model = CTAHighsModel(program, time_limit=time_limit)
        self._relax_rows = self._n_equal + np.arange(r)
        self.relaxed = True
        self.cuts = 0

    def _relaxed_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.problem
        k = p.sensitive
        lower = np.zeros(2 * p.n)
        upper = np.concatenate([p.up, p.down])
        upper[k] = np.where(p.can_up, p.up[k], 0.0)
        upper[k + p.n] = np.where(p.can_down, p.down[k], 0.0)
        lower[k] = np.where(~p.can_down, p.upl, 0.0)
        lower[k + p.n] = np.where(~p.can_up, p.lpl, 0.0)
        return lower, upper

    def _sensitive_columns(self) -> np.ndarray:
        k = self.problem.sensitive
        return np.concatenate([k, k + self.problem.n])

    def relax(self, *, interior: bool = False) -> SolveResult:
        """Solve the LP relaxation (every direction free); ``interior`` as in :meth:`solve`."""
        lower, upper = self._relaxed_bounds()
        columns = self._sensitive_columns()
        self.model.set_col_bounds(columns, lower[columns], upper[columns])
        if not self.relaxed:
            self.model.set_row_bounds(self._relax_rows, self._relax_scale, np.inf)
            self.relaxed = True
        return self.solve(interior=interior)

    def fix(self, up: np.ndarray, cells: np.ndarray | None = None) -> None:
        """Fix directions (True = up) for the next solves.

        Parameters
        ----------
        up : ndarray of bool
            One direction per sensitive cell, or one per entry of ``cells``.
        cells : ndarray of int, optional
            Positions (among the sensitive cells) to fix; the others keep their current
            bounds and the relaxation rows stay as they are (LP diving). Default: all, and
            the relaxation rows are switched off.
        """
        p = self.problem
        if cells is None:
            cells = np.arange(p.s)
            if self.relaxed and len(self._relax_rows):
                self.model.set_row_bounds(self._relax_rows, -np.inf, np.inf)
            self.relaxed = False
        k = p.sensitive[cells]
        lower = np.concatenate([np.where(up, p.upl[cells], 0.0),
                                np.where(up, 0.0, p.lpl[cells])])
        upper = np.concatenate([np.where(up, p.up[k], 0.0), np.where(up, 0.0, p.down[k])])
        self.model.set_col_bounds(np.concatenate([k, k + p.n]), lower, upper)

    def release(self, cells: np.ndarray) -> None:
        """Give the sensitive cells at ``cells`` both directions again (relaxed bounds)."""
        lower, upper = self._relaxed_bounds()
        k = self.problem.sensitive[cells]
        columns = np.concatenate([k, k + self.problem.n])
        self.model.set_col_bounds(columns, lower[columns], upper[columns])

    def solve(self, cutoff: float | None = None, *, interior: bool = False) -> SolveResult:
        """Solve the model as it stands (adding cuts for violated quadratic limits).

        Parameters
        ----------
        cutoff : float, optional
            The dual simplex stops once the objective exceeds it; the result then has no
            solution (a losing flip).
        interior : bool
            Forget the previous basis and solve by the interior point method, with crossover
            so that later re-solves are warm again. After many bounds change at once (new
            directions, a diving step) the warm dual simplex can be far slower: on Castro's
            NINE12 the LP with every direction fixed takes 3 s this way, 50 s by the
            simplex method, warm or cold.
        """
        self.model.set_cutoff(cutoff)
        if interior:
            self.model.clear_basis()
        self.model.set_interior_point(interior)
        result, added = solve_with_cuts(self.problem, self.model.solve, self._add_cuts,
                                        self.adjustment)
        self.model.set_interior_point(False)
        self.cuts += added
        return result

    def _add_cuts(self, rows: sp.csr_array, upper: np.ndarray) -> None:
        self.model.add_rows(sp.hstack([rows, -rows], format="csr"), -np.inf, upper)

    def adjustment(self, result: SolveResult) -> np.ndarray:
        """``y = p - q`` of a solution."""
        n = self.problem.n
        return result.x[:n] - result.x[n:]

    def duals(self, result: SolveResult) -> np.ndarray | None:
        """Row duals of ``[A; E]`` (None when the LP was not solved to optimality)."""
        if result.row_duals is None:
            return None
        return result.row_duals[: self._n_equal]

    def set_time_limit(self, seconds: float | None) -> None:
        """Time limit of the next solves (None: none)."""
        self.model.set_time_limit(seconds)


def relaxed_indicators(
    problem: CTAProblem, y_plus: np.ndarray, y_minus: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(p / upl, q / lpl)`` of each sensitive cell: how far a relaxed solution moves it up
    and down, as fractions of the protection levels (a level of 0 counts any move as 1)."""
    k = problem.sensitive
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(problem.upl > 0, y_plus[k] / problem.upl, y_plus[k] > 0)
        down = np.where(problem.lpl > 0, y_minus[k] / problem.lpl, y_minus[k] > 0)
    return up, down


def directions_from_relaxation(
    problem: CTAProblem, y_plus: np.ndarray, y_minus: np.ndarray
) -> np.ndarray:
    """Round a relaxed solution to directions (True = up).

    A sensitive cell leans up when ``p / upl > q / lpl`` (its relaxed indicator
    ``I = p / upl`` exceeds ``1 - q / lpl``), down when smaller; cells tied by relations of
    two cells (:func:`~tabsdc.cta._search.direction_groups`) go together the way their summed
    leanings say, and a group that does not lean (the relaxation splits it evenly) goes up;
    impossible directions are never chosen.
    """
    moved_up, moved_down = relaxed_indicators(problem, y_plus, y_minus)
    score = moved_up - moved_down
    score = np.where(np.abs(score) <= 1e-9, 0.0, score)
    return consistent_directions(problem, score)
