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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tabsdc._errors import InputError, SolverError
from tabsdc._parallel import parallel_map, resolve_jobs, worker_count
from tabsdc._progress import Deadline, Progress, ProgressReporter
from tabsdc._table import DEFAULT_TOLERANCE
from tabsdc.solver import HighsModel, LinearProgram, solve


@dataclass(frozen=True)
class Intervals:
    """Lower and upper bounds per hidden cell (``nan`` for published cells).

    ``status`` holds one word per cell: ``"optimal"`` when both bounds are proven,
    otherwise the worst solver status met (``"feasible"`` for a time-limited MILP bound,
    whose value is then the best bound found, i.e. the interval is an outer estimate), or
    ``"not computed"`` (NaN bounds) when the call's time limit ran out first. An audit with
    witnesses (:func:`tabsdc.audit.audit`) adds ``"witness"`` (inner bounds proven by
    checked witnesses), ``"derived"`` (``[a, a]``: the relations give the cell away) and
    ``"unsettled"`` (NaN: a non-sensitive cell nothing moved and no LP bounded).
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


def cell_components(A: sp.csr_array) -> tuple[int, np.ndarray]:
    """The groups of cells (columns of ``A``) tied by shared relations (rows): the connected
    components of the graph of cells and relations, labelled in the order of each group's
    first cell. Built on the ``cells + relations`` graph, whose edges are ``A``'s non-zeros
    (the graph of cells alone, ``A^T A``, has a row's length squared edges per row: 54
    million for a 300 x 300 table).

    Examples
    --------
    >>> A = sp.csr_array([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]])
    >>> count, component = cell_components(A)
    >>> count, component.tolist()
    (3, [0, 0, 1, 2])
    """
    m, n = A.shape
    incidence = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=(m, n))
    graph = sp.block_array([[None, incidence.T], [incidence, None]], format="csr")
    count, label = connected_components(graph, directed=False)
    cells = label[:n]
    first = np.full(count, n)  # relabel by first cell (a relation's own label can lead)
    np.minimum.at(first, cells, np.arange(n))
    used = np.unique(cells)
    order = np.empty(count, dtype=np.int64)
    order[used[np.argsort(first[used], kind="stable")]] = np.arange(len(used))
    return len(used), order[cells]


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
        self.n_components, self.component = cell_components(self.A_hidden)

    def intervals(
        self,
        progress: Progress | None = None,
        *,
        wanted: np.ndarray | None = None,
        n_jobs: int | None = 1,
        client: Any = None,
    ) -> Intervals:
        """Min and max of every hidden cell over the attacker's polytope.

        ``progress`` receives time-based lines (:class:`tabsdc._progress.ProgressReporter`):
        bounds done, rate, time left. Within ``time_limit`` seconds in all.

        ``wanted`` (a mask over :attr:`hidden_cells`) limits the bounds to those cells (the
        others keep status ``"not computed"``); ``n_jobs``/``client`` share the bounds of
        each block among processes or a Dask cluster (:func:`tabsdc._parallel.parallel_map`;
        each task re-creates its block's model and bounds a slice of its cells).
        """
        from time import perf_counter

        start = perf_counter()
        deadline = Deadline(self.time_limit)
        k = len(self.hidden_cells)
        wanted = np.ones(k, dtype=bool) if wanted is None else np.asarray(wanted, dtype=bool)
        lower, upper = np.full(k, np.nan), np.full(k, np.nan)
        status = np.full(k, "not computed", dtype=object)
        order = np.argsort(self.component, kind="stable")
        bounds = np.searchsorted(self.component[order], np.arange(self.n_components + 1))
        reporter = ProgressReporter(progress, "audit", 2 * int(wanted.sum()), unit="bounds")
        parallel = client is not None or resolve_jobs(n_jobs) > 1
        done = solves = 0
        for comp in range(self.n_components):
            if deadline.expired:
                break
            members = order[bounds[comp]:bounds[comp + 1]]
            columns = np.flatnonzero(wanted[members])
            if len(columns) == 0:
                continue
            if parallel:
                lo, hi, st = self._component_in_parallel(members, columns, deadline, n_jobs,
                                                         client)
                reporter.update(done + 2 * len(columns))
            else:
                lo, hi, st = self._component(members, columns, done, reporter, deadline)
            at = members[columns]
            lower[at], upper[at], status[at] = lo, hi, st
            solves += int(np.sum(st != "not computed")) * 2
            done += 2 * len(columns)
        reporter.finish(done)
        return Intervals(lower, upper, status, self.n_components, solves,
                         perf_counter() - start)

    def block_problem(self, members: np.ndarray) -> LinearProgram | None:
        """The LP of one block: ``members`` are positions in :attr:`hidden_cells` (sorted,
        e.g. ``np.flatnonzero(self.component == k)``), its columns in that order; None when
        no relation links the block to the published table."""
        sub = self.A_hidden[:, members].tocsr()
        rows = np.flatnonzero(np.diff(sub.indptr) > 0)
        if len(rows) == 0:
            return None
        n = len(members)
        return LinearProgram(
            c=np.zeros(n), A=sub[rows], row_lower=self.rhs[rows] - self.slack[rows],
            row_upper=self.rhs[rows] + self.slack[rows],
            col_lower=self.lb[members], col_upper=self.ub[members],
            integrality=np.full(n, self.integer) if self.integer else None,
        )

    def _component(
        self, members: np.ndarray, columns: np.ndarray, done: int, reporter: ProgressReporter,
        deadline: Deadline
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        problem = self.block_problem(members)
        n = len(columns)
        if problem is None:  # nothing links these cells to the published table
            at = members[columns]
            return self.lb[at], self.ub[at], np.full(n, "optimal", dtype=object)

        def report(done_here: int, _: int) -> None:
            reporter.update(done + done_here)

        if self.solver == "highs":
            try:
                return _block_extremes(problem, columns, deadline, report)
            except SolverError as error:
                raise self._inconsistent(members, error) from None
        lower, upper = np.full(n, np.nan), np.full(n, np.nan)
        status = np.full(n, "not computed", dtype=object)
        for k, j in enumerate(columns):
            if deadline.expired:
                break
            cost = np.zeros(len(members))
            cost[j] = 1.0
            lower[k], st_lo = _bound(problem, cost, "min", self.solver, deadline)
            upper[k], st_hi = _bound(problem, cost, "max", self.solver, deadline)
            status[k] = st_lo if st_lo != "optimal" else st_hi
            report(2 * (k + 1), 0)
        return lower, upper, status

    def _component_in_parallel(
        self, members: np.ndarray, columns: np.ndarray, deadline: Deadline,
        n_jobs: int | None, client: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        problem = self.block_problem(members)
        if problem is None or self.solver != "highs":
            return self._component(members, columns, 0, ProgressReporter(None, "", 1),
                                   deadline)
        workers = worker_count(n_jobs, client)
        slices = np.array_split(columns, min(len(columns), 4 * workers))
        tasks = [(problem, part, deadline.solver_limit()) for part in slices]
        try:
            parts = parallel_map(_bound_slice, tasks, n_jobs=n_jobs, client=client)
        except SolverError as error:
            raise self._inconsistent(members, error) from None
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))

    def _inconsistent(self, members: np.ndarray, error: Exception) -> InputError:
        return InputError(
            "the published table is inconsistent with its a-priori bounds: no hidden values "
            f"fit the relations around cell {self.hidden_cells[members[0]]} ({error})")


def _block_extremes(
    problem: LinearProgram, columns: np.ndarray, deadline: Deadline,
    report: Callable[[int, int], None] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    model = HighsModel(problem, time_limit=deadline.solver_limit())
    return model.column_extremes(columns, on_bound=report, stop=lambda: deadline.expired,
                                 time_left=deadline.solver_limit)


def _bound_slice(
    task: tuple[LinearProgram, np.ndarray, float | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One parallel task: the bounds of a slice of a block's cells (within ``seconds``)."""
    problem, columns, seconds = task
    return _block_extremes(problem, columns, Deadline(seconds))


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
