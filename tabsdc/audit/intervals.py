"""Exact intervals of hidden cells: the interval attack on a published table.

An intruder who sees the published cells of a table knows that the hidden values ``x_H``
satisfy ``A_H x_H = b - A_P a_P`` and the a-priori bounds ``lb <= x_H <= ub``. For each hidden
cell the attack computes ``min x_i`` and ``max x_i`` over this polytope (Cox, *Towards a
quality assessment of disclosure-limited statistical data*, slides 13-20; the audit of
tau-ARGUS and sdcTable's ``attack``).

Engineering: published cells are eliminated (they are constants), the hidden cells are split
into independent blocks (connected through the relations they share), and each block is one
HiGHS model kept alive: every bound is a re-solve after changing the objective, warm-started
from the previous basis. With ``integer=True`` every bound is a MILP (sharper in tables of
three or more dimensions, where LP vertices can be fractional).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tabsdc.errors import InputError, SolverError
from tabsdc.solver import HighsModel, LinearProgram, solve

__all__ = ["IntervalAttack", "Intervals"]

#: Signature of progress callbacks: (bounds done, bounds in all).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Intervals:
    """Lower and upper bounds per hidden cell (``nan`` for published cells).

    ``status`` holds one word per cell: ``"optimal"`` when both bounds are proven,
    otherwise the worst solver status met (``"feasible"`` for a time-limited MILP bound,
    whose value is then the best bound found, i.e. the interval is an outer estimate).
    """

    lower: np.ndarray
    upper: np.ndarray
    status: np.ndarray
    n_components: int
    n_solves: int
    seconds: float


class IntervalAttack:
    """The attacker's polytope of a table with some cells hidden.

    Parameters
    ----------
    A : sparse matrix (m, n)
        Relations of the table.
    b : ndarray (m,)
        Right-hand sides.
    published : ndarray (n,)
        Values the intruder sees (only entries of published cells are used).
    hidden : ndarray of bool (n,)
        Cells not published.
    lb, ub : ndarray (n,)
        A-priori bounds the intruder knows for every cell.
    integer : bool
        Integer hidden values (MILP per bound).
    solver : str
        ``"highs"`` (kept models, warm starts) or a PuLP solver name (a fresh solve per bound).
    time_limit : float, optional
        Per bound (MILP) time limit in seconds.
    """

    def __init__(
        self,
        A: sp.sparray | sp.spmatrix,
        b: np.ndarray,
        published: np.ndarray,
        hidden: np.ndarray,
        lb: np.ndarray,
        ub: np.ndarray,
        *,
        integer: bool = False,
        solver: str = "highs",
        time_limit: float | None = None,
    ) -> None:
        A = sp.csc_array(A, dtype=float)
        hidden = np.asarray(hidden, dtype=bool)
        self.hidden_cells = np.flatnonzero(hidden)
        published_values = np.where(hidden, 0.0, np.asarray(published, dtype=float))
        A_hidden = A[:, self.hidden_cells].tocsr()
        rhs = np.asarray(b, dtype=float) - A @ published_values
        touched = np.diff(A_hidden.indptr) > 0
        self.rows = np.flatnonzero(touched)
        self.A_hidden = A_hidden[self.rows]
        self.rhs = rhs[self.rows]
        self.lb = np.asarray(lb, dtype=float)[self.hidden_cells]
        self.ub = np.asarray(ub, dtype=float)[self.hidden_cells]
        bad = self.lb > self.ub
        if bad.any():
            raise InputError(f"cell {self.hidden_cells[bad][0]} has lb > ub")
        self.integer = integer
        self.solver = solver
        self.time_limit = time_limit
        pattern = sp.csr_array((np.ones(self.A_hidden.nnz), self.A_hidden.indices,
                                self.A_hidden.indptr), shape=self.A_hidden.shape)
        adjacency = (pattern.T @ pattern).tocsr()
        self.n_components, self.component = connected_components(adjacency, directed=False)

    def intervals(self, progress: Progress | None = None) -> Intervals:
        """Min and max of every hidden cell over the attacker's polytope."""
        from time import perf_counter

        start = perf_counter()
        k = len(self.hidden_cells)
        lower, upper = np.full(k, np.nan), np.full(k, np.nan)
        status = np.full(k, "optimal", dtype=object)
        order = np.argsort(self.component, kind="stable")
        bounds = np.searchsorted(self.component[order], np.arange(self.n_components + 1))
        done = solves = 0
        for comp in range(self.n_components):
            members = order[bounds[comp]:bounds[comp + 1]]
            lo, hi, st, count = self._component(members, done, 2 * k, progress)
            lower[members], upper[members], status[members] = lo, hi, st
            solves += count
            done += 2 * len(members)
        return Intervals(lower, upper, status, self.n_components, solves,
                         perf_counter() - start)

    def _component(
        self, members: np.ndarray, done: int, total: int, progress: Progress | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        sub = self.A_hidden[:, members]
        rows = np.flatnonzero(np.diff(sub.tocsr().indptr) > 0)
        sub = sub.tocsr()[rows]
        n = len(members)
        if len(rows) == 0:  # nothing links these cells to the published table
            return self.lb[members], self.ub[members], np.full(n, "optimal", dtype=object), 0
        problem = LinearProgram(
            c=np.zeros(n), A=sub, row_lower=self.rhs[rows], row_upper=self.rhs[rows],
            col_lower=self.lb[members], col_upper=self.ub[members],
            integrality=np.full(n, self.integer) if self.integer else None,
        )
        lower, upper = np.empty(n), np.empty(n)
        status = np.full(n, "optimal", dtype=object)
        bound_of = _BoundSolver(problem, self.solver, self.time_limit)
        for j in range(n):
            cost = np.zeros(n)
            cost[j] = 1.0
            lower[j], st_lo = bound_of(cost, "min", members[j], self.hidden_cells)
            upper[j], st_hi = bound_of(cost, "max", members[j], self.hidden_cells)
            status[j] = st_lo if st_lo != "optimal" else st_hi
            if progress is not None:
                progress(done + 2 * (j + 1), total)
        return lower, upper, status, 2 * n


class _BoundSolver:
    """Solve one bound: a kept HiGHS model, or a fresh solve through another backend."""

    def __init__(self, problem: LinearProgram, solver: str, time_limit: float | None) -> None:
        self.problem = problem
        self.solver = solver
        self.time_limit = time_limit
        self.model = HighsModel(problem, time_limit=time_limit) if solver == "highs" else None

    def __call__(
        self, cost: np.ndarray, sense: str, member: int, hidden_cells: np.ndarray
    ) -> tuple[float, str]:
        if self.model is not None:
            self.model.set_objective(cost, sense=sense)
            result = self.model.solve()
        else:
            from dataclasses import replace

            result = solve(replace(self.problem, c=cost, sense=sense), self.solver,
                           time_limit=self.time_limit)
        if result.status == "unbounded":
            return (np.inf if sense == "max" else -np.inf), "optimal"
        if result.status in ("infeasible", "infeasible_or_unbounded"):
            raise InputError(
                "the published table is inconsistent with its a-priori bounds: no hidden "
                f"values satisfy the relations around cell {hidden_cells[member]} "
                f"({result.message})"
            )
        if result.status == "optimal":
            return float(result.objective), "optimal"
        if result.status == "feasible" and result.bound is not None:
            # a time-limited MILP: the proven bound is a valid (outer) end of the interval
            return float(result.bound), "feasible"
        raise SolverError(
            f"bound of cell {hidden_cells[member]} ({sense}): solver stopped with "
            f"{result.status}: {result.message}"
        )
