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

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tabsdc.errors import InputError, SolverError
from tabsdc.progress import Deadline, Progress, ProgressReporter
from tabsdc.solver import HighsModel, LinearProgram, solve
from tabsdc.table import DEFAULT_TOLERANCE

__all__ = ["IntervalAttack", "Intervals"]


@dataclass(frozen=True)
class Intervals:
    """Lower and upper bounds per hidden cell (``nan`` for published cells).

    ``status`` holds one word per cell: ``"optimal"`` when both bounds are proven,
    otherwise the worst solver status met (``"feasible"`` for a time-limited MILP bound,
    whose value is then the best bound found, i.e. the interval is an outer estimate), or
    ``"not computed"`` (NaN bounds) when the call's time limit ran out first.
    """

    lower: np.ndarray
    upper: np.ndarray
    status: np.ndarray
    n_components: int
    n_solves: int
    seconds: float

    @property
    def complete(self) -> bool:
        """Every bound was computed (no time limit cut the attack short)."""
        return not bool(np.any(self.status == "not computed"))


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
        Seconds for every bound together (the call's total); bounds not reached are left
        uncomputed (see :class:`Intervals`).
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
        # float sums of many contributions make relations hold only within the table's
        # additivity tolerance: a row gets as much slack as the values' own residual needs,
        # at most that tolerance (none for exact tables)
        values = np.nan_to_num(np.asarray(published, dtype=float))
        slack = np.minimum(np.abs(A @ values - np.asarray(b, dtype=float)),
                           DEFAULT_TOLERANCE * np.maximum(1.0, abs(A) @ np.abs(values)))
        touched = np.diff(A_hidden.indptr) > 0
        self.rows = np.flatnonzero(touched)
        self.A_hidden = A_hidden[self.rows]
        self.rhs = rhs[self.rows]
        self.slack = slack[self.rows]
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
        """Min and max of every hidden cell over the attacker's polytope.

        ``progress`` receives time-based lines (:class:`tabsdc.progress.ProgressReporter`):
        bounds done, rate, time left. Within ``time_limit`` seconds in all.
        """
        from time import perf_counter

        start = perf_counter()
        deadline = Deadline(self.time_limit)
        k = len(self.hidden_cells)
        lower, upper = np.full(k, np.nan), np.full(k, np.nan)
        status = np.full(k, "not computed", dtype=object)
        order = np.argsort(self.component, kind="stable")
        bounds = np.searchsorted(self.component[order], np.arange(self.n_components + 1))
        reporter = ProgressReporter(progress, "audit", 2 * k, unit="bounds")
        done = solves = 0
        for comp in range(self.n_components):
            if deadline.expired:
                break
            members = order[bounds[comp]:bounds[comp + 1]]
            lo, hi, st, count = self._component(members, done, reporter, deadline)
            lower[members], upper[members], status[members] = lo, hi, st
            solves += count
            done += 2 * len(members)
        reporter.finish(done)
        return Intervals(lower, upper, status, self.n_components, solves,
                         perf_counter() - start)

    def _component(
        self, members: np.ndarray, done: int, reporter: ProgressReporter, deadline: Deadline
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        sub = self.A_hidden[:, members]
        rows = np.flatnonzero(np.diff(sub.tocsr().indptr) > 0)
        sub = sub.tocsr()[rows]
        n = len(members)
        if len(rows) == 0:  # nothing links these cells to the published table
            return self.lb[members], self.ub[members], np.full(n, "optimal", dtype=object), 0
        problem = LinearProgram(
            c=np.zeros(n), A=sub, row_lower=self.rhs[rows] - self.slack[rows],
            row_upper=self.rhs[rows] + self.slack[rows],
            col_lower=self.lb[members], col_upper=self.ub[members],
            integrality=np.full(n, self.integer) if self.integer else None,
        )
        def report(done_here: int, _: int) -> None:
            reporter.update(done + done_here)

        if self.solver == "highs":
            model = HighsModel(problem, time_limit=deadline.solver_limit())
            try:
                lower, upper, status = model.column_extremes(
                    on_bound=report, stop=lambda: deadline.expired)
            except SolverError as error:
                raise InputError(
                    "the published table is inconsistent with its a-priori bounds: no hidden "
                    f"values fit the relations around cell {self.hidden_cells[members[0]]} "
                    f"({error})"
                ) from None
            return lower, upper, status, 2 * n
        lower, upper = np.full(n, np.nan), np.full(n, np.nan)
        status = np.full(n, "not computed", dtype=object)
        for j in range(n):
            if deadline.expired:
                break
            cost = np.zeros(n)
            cost[j] = 1.0
            lower[j], st_lo = _bound(problem, cost, "min", self.solver, deadline)
            upper[j], st_hi = _bound(problem, cost, "max", self.solver, deadline)
            status[j] = st_lo if st_lo != "optimal" else st_hi
            report(2 * (j + 1), 0)
        return lower, upper, status, 2 * n


def _bound(
    problem: LinearProgram, cost: np.ndarray, sense: str, solver: str, deadline: Deadline
) -> tuple[float, str]:
    """One bound through a PuLP solver (a fresh solve)."""
    result = solve(replace(problem, c=cost, sense=sense), solver,
                   time_limit=deadline.solver_limit())
    if result.status == "unbounded":
        return (np.inf if sense == "max" else -np.inf), "optimal"
    if result.status == "optimal":
        return float(result.objective), "optimal"
    if result.status == "feasible" and result.bound is not None:
        return float(result.bound), "feasible"
    raise SolverError(f"a bound ({sense}) stopped with {result.status}: {result.message}")
