"""HiGHS backend: a model passed to HiGHS once from arrays and kept for re-solving.

The problem's arrays go to HiGHS in one call (``Highs.passModel`` with the numpy arrays of the
bounds, costs and CSC matrix), never column by column. The model then stays alive: the
objective, column bounds and row bounds can be changed and rows added in bulk, and the next
:meth:`HighsModel.solve` starts from the previous basis (for an LP, HiGHS's simplex warm
start). The audit (two LPs per suppressed cell) and cut generation (rows added to a master
MILP) rely on this.

Status mapping (``HighsModelStatus`` -> :data:`~tabsdc.solver._problem.STATUSES`):

* ``kOptimal`` -> ``"optimal"`` for an LP; for a MIP ``"optimal"`` only when the incumbent and
  the dual bound agree within :data:`~tabsdc.solver._problem.PROOF_ABS_GAP` or
  :data:`~tabsdc.solver._problem.PROOF_REL_GAP`, otherwise (HiGHS stopped at the caller's
  ``mip_gap``) ``"feasible"``;
* ``kInfeasible`` -> ``"infeasible"``, ``kUnbounded`` -> ``"unbounded"``,
  ``kUnboundedOrInfeasible`` -> ``"infeasible_or_unbounded"``;
* every limit or interrupt (``kTimeLimit``, ``kIterationLimit``, ``kSolutionLimit``,
  ``kObjectiveBound``, ``kObjectiveTarget``, ``kInterrupt``, ``kHighsInterrupt``,
  ``kMemoryLimit``) and ``kUnknown`` -> ``"feasible"`` with a primal feasible solution, else
  ``"no_solution"`` (``"error"`` for ``kUnknown``);
* load, model, presolve, solve and postsolve errors -> ``"error"``.

Interrupts: while a search that a Ctrl-C can stop is running (:func:`tabsdc._interrupts.watching`),
a solve that may take long (any MIP; an LP of at least :data:`WATCHED_NONZEROS` nonzeros)
subscribes to HiGHS's simplex, interior point and MIP interrupt callbacks, which end it at
the next iteration once a Ctrl-C has come (status ``kInterrupt``: the incumbent, if any, is
kept as at a time limit). The callbacks run in the calling thread, so Python's signal handler
gets its turn during a long solve. Smaller LPs (the attacker's, thousands of milliseconds-long
solves, whose callbacks would cost 10-20 % of their time) and solves outside a search (the
audit) carry no callback.

References
----------
Q. Huangfu and J. A. J. Hall, "Parallelizing the dual revised simplex method", *Mathematical
Programming Computation* 10(1), 119-142, 2018. HiGHS documentation, https://highs.dev.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from time import perf_counter

import highspy
import numpy as np
import scipy.sparse as sp

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError, SolverError
from tabsdc.solver._banner import absorb_highs_banner
from tabsdc.solver._checks import as_csr, as_vector, check_bounds, check_finite
from tabsdc.solver._options import SolveOptions
from tabsdc.solver._problem import (
    PROOF_ABS_GAP,
    PROOF_REL_GAP,
    LinearProgram,
    SolveResult,
    relative_gap,
)

#: LPs with at least this many nonzeros get HiGHS's interrupt callbacks during a search that
#: a Ctrl-C can stop (smaller ones end within a fraction of a second anyway).
WATCHED_NONZEROS = 20_000

_STATUS = highspy.HighsModelStatus
_LIMITS = frozenset(
    {
        _STATUS.kTimeLimit,
        _STATUS.kIterationLimit,
        _STATUS.kSolutionLimit,
        _STATUS.kObjectiveBound,
        _STATUS.kObjectiveTarget,
        _STATUS.kInterrupt,
        _STATUS.kHighsInterrupt,
        _STATUS.kMemoryLimit,
    }
)
_PROVEN = {
    _STATUS.kInfeasible: "infeasible",
    _STATUS.kUnbounded: "unbounded",
    _STATUS.kUnboundedOrInfeasible: "infeasible_or_unbounded",
}
_SENSE = {"min": highspy.ObjSense.kMinimize, "max": highspy.ObjSense.kMaximize}
#: Run time (s) the probe of :func:`limit_counts_earlier_runs` gathers before its test solve.
_PROBE_SECONDS = 0.01


@cache
def limit_counts_earlier_runs(mip: bool) -> bool:
    """Whether this HiGHS compares ``time_limit`` with the run time of all the solves of one
    ``Highs`` object together (True) or with the current solve's alone, for an LP or a MIP.

    HiGHS 1.16 does the first for LPs and the second for MIPs (ERGO-Code/HiGHS issues 1331
    and 1477: the run clock is to be reset at every run from version 2.0). Probed once per
    process and kind: a 100 x 200 LP is solved until the object's run time passes
    :data:`_PROBE_SECONDS`; then, with ``time_limit`` at nine tenths of that time, a quick
    solve (the LP with one cost changed, or one integer column with the others fixed) stops
    at once only when earlier runs count.
    """
    absorb_highs_banner()
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    rng = np.random.default_rng(0)
    m, n = 100, 200
    columns = np.arange(n, dtype=np.int32)
    _check(_pass_model(highs, LinearProgram(
        c=-rng.random(n), A=sp.csr_array(rng.random((m, n))), row_lower=np.full(m, -np.inf),
        row_upper=np.full(m, 10.0), col_lower=np.zeros(n), col_upper=np.ones(n))),
        "the time-limit probe")
    while highs.getRunTime() < _PROBE_SECONDS:
        highs.clearSolver()
        highs.run()
    highs.setOptionValue("time_limit", 0.9 * highs.getRunTime())
    if mip:
        others = columns[1:]
        highs.changeColsBounds(n - 1, others, np.zeros(n - 1), np.zeros(n - 1))
        highs.changeColsIntegrality(1, columns[:1], np.array([highspy.HighsVarType.kInteger]))
    else:
        highs.changeColCost(0, -2.0)
    highs.run()
    return highs.getModelStatus() == _STATUS.kTimeLimit


def highs_status(
    model_status: highspy.HighsModelStatus,
    *,
    has_solution: bool,
    is_mip: bool,
    objective: float | None = None,
    bound: float | None = None,
) -> str:
    """Map a HiGHS model status to one of :data:`~tabsdc.solver._problem.STATUSES`.

    Parameters
    ----------
    model_status : highspy.HighsModelStatus
        ``Highs.getModelStatus()`` after the run.
    has_solution : bool
        Whether HiGHS holds a primal feasible solution (``primal_solution_status``).
    is_mip : bool
        Whether the model has integer variables.
    objective, bound : float or None
        Incumbent objective and dual bound of a MIP (used for ``kOptimal`` only).

    Returns
    -------
    str
        The status; the module docstring gives the full mapping.

    Examples
    --------
    >>> import highspy
    >>> highs_status(highspy.HighsModelStatus.kTimeLimit, has_solution=True, is_mip=True)
    'feasible'
    """
    if model_status == _STATUS.kOptimal:
        if not is_mip:
            return "optimal"
        if objective is None or bound is None:
            return "feasible" if has_solution else "no_solution"
        proven = (
            abs(objective - bound) <= PROOF_ABS_GAP
            or relative_gap(objective, bound) <= PROOF_REL_GAP
        )
        return "optimal" if proven else "feasible"
    if model_status in _PROVEN:
        return _PROVEN[model_status]
    if model_status in _LIMITS or model_status == _STATUS.kUnknown:
        if has_solution:
            return "feasible"
        return "no_solution" if model_status in _LIMITS else "error"
    return "error"


def _stop_when_interrupted(event: object) -> None:
    """HiGHS's interrupt callback: end the solve once a Ctrl-C has stopped the search."""
    if interrupts.stopping():
        event.interrupt()


def _inf(values: np.ndarray) -> np.ndarray:
    """Infinite bounds as HiGHS's ``kHighsInf`` (float64, contiguous)."""
    out = np.array(values, dtype=np.float64)
    out[np.isposinf(out)] = highspy.kHighsInf
    out[np.isneginf(out)] = -highspy.kHighsInf
    return out


def _int32(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int32)


def _pass_model(highs: highspy.Highs, problem: LinearProgram) -> highspy.HighsStatus:
    """Pass the whole problem to HiGHS in one ``passModel`` call, matrix in CSC form.

    The array overload of ``passModel`` reads the numpy buffers directly; filling a
    ``HighsLp`` field by field would convert every entry through Python.
    """
    A = problem.A.tocsc()
    integrality = np.zeros(problem.n_cols, dtype=np.int32)
    if problem.integrality is not None:
        integrality[problem.integrality] = int(highspy.HighsVarType.kInteger)
    return highs.passModel(
        problem.n_cols,
        problem.n_rows,
        A.nnz,
        int(highspy.MatrixFormat.kColwise),
        int(_SENSE[problem.sense]),
        problem.offset,
        np.ascontiguousarray(problem.c),
        _inf(problem.col_lower),
        _inf(problem.col_upper),
        _inf(problem.row_lower),
        _inf(problem.row_upper),
        _int32(A.indptr),
        _int32(A.indices),
        np.ascontiguousarray(A.data),
        integrality,
    )


def _check(status: highspy.HighsStatus, action: str) -> None:
    if status == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS rejected {action}")


class HighsModel:
    """A HiGHS model kept alive for re-solving (warm start).

    Parameters
    ----------
    problem : LinearProgram
        The problem; its arrays are passed to HiGHS once.
    presolve : bool
        Let HiGHS presolve the model before each solve (its default). Off for a model
        re-solved many times after small changes of its bounds and objective: a presolve
        discards the basis of the last solve, and on a flow model of 10^4 cells it costs
        seconds where the dual simplex from that basis takes a fraction of one.
    time_limit, mip_gap, threads, verbose
        See :class:`~tabsdc.solver._options.SolveOptions`. HiGHS's log is silenced
        (``output_flag`` off) unless ``verbose``. HiGHS keeps one thread pool per process
        and fixes its size at the first solve; a model with ``threads`` set resets that pool
        before each of its solves, so it must not run alongside HiGHS solves in other
        threads.

    Raises
    ------
    InputError
        Invalid options.
    SolverError
        HiGHS rejects the model.

    Notes
    -----
    The model keeps the objective sense and offset it was given or last set; integrality is
    fixed at construction. Rows added with :meth:`add_rows` stay in the model.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> lp = LinearProgram(c=[3, 5], A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
    ...                    row_lower=[-np.inf] * 3, row_upper=[4, 12, 18],
    ...                    col_lower=[0, 0], col_upper=[np.inf, np.inf], sense="max")
    >>> model = HighsModel(lp)
    >>> model.solve().objective
    36.0
    >>> model.set_objective(np.array([1.0, 0.0]))
    >>> model.solve().objective
    4.0
    """

    def __init__(
        self,
        problem: LinearProgram,
        *,
        presolve: bool = True,
        time_limit: float | None = None,
        mip_gap: float | None = None,
        threads: int | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(problem, LinearProgram):
            raise InputError(f"problem must be a LinearProgram, got {type(problem).__name__}")
        self._options = SolveOptions(time_limit, mip_gap, threads, verbose)
        self._presolve = "choose" if presolve else "off"
        self._is_mip = problem.is_mip
        absorb_highs_banner()
        self._highs = highspy.Highs()
        self._set_options()
        _check(_pass_model(self._highs, problem), "the model")
        self._all_cols = _int32(np.arange(problem.n_cols))
        self._started = False  # a start is set for the next solve
        self._points: list[np.ndarray] | None = None  # see keep_feasible_points

    def _set_options(self) -> None:
        options = self._options
        highs = self._highs
        highs.setOptionValue("output_flag", bool(options.verbose))
        highs.setOptionValue("presolve", self._presolve)
        highs.setOptionValue("mip_rel_gap", options.gap_target)
        if options.threads is not None:
            highs.setOptionValue("threads", int(options.threads))

    def _run(self, limit: float | None) -> highspy.HighsStatus:
        """``run()`` with the time limit ``limit`` counted from now (the object's earlier run
        time added where HiGHS counts it: :func:`limit_counts_earlier_runs`). In a search
        that a Ctrl-C can stop, with HiGHS's interrupt callbacks (module text)."""
        highs = self._highs
        earlier = (float(highs.getRunTime()) if limit is not None
                   and limit_counts_earlier_runs(self._is_mip) else 0.0)
        highs.setOptionValue("time_limit", highspy.kHighsInf if limit is None else
                             float(limit) + earlier)
        if not interrupts.watching() or (not self._is_mip
                                          and highs.getNumNz() < WATCHED_NONZEROS):
            return highs.run()
        events = (highs.cbSimplexInterrupt, highs.cbIpmInterrupt, highs.cbMipInterrupt)
        for event in events:
            event.subscribe(_stop_when_interrupted)
        try:
            return highs.run()
        finally:
            for event in events:
                event.unsubscribe(_stop_when_interrupted)

    @property
    def n_rows(self) -> int:
        """Number of rows, including added ones."""
        return self._highs.getNumRow()

    @property
    def n_cols(self) -> int:
        """Number of columns."""
        return self._highs.getNumCol()

    def solve(self) -> SolveResult:
        """Solve the model in its current state.

        A MIP solved from a start (:meth:`set_start`) whose answer is not consistent (the
        objective HiGHS reports is not that of the point it returns: HiGHS 1.16 with
        presolve may return the start with the objective and dual bound of another point)
        is solved again without the start in the time left; with no time left the point is
        returned as feasible, with its own objective and no bound.

        Returns
        -------
        SolveResult
            With ``solver="highs"``; see :class:`~tabsdc.solver._problem.SolveResult` and the
            module docstring for the status mapping.
        """
        limit = self._options.time_limit
        result = self._solve(limit)
        started, self._started = self._started, False
        objective = self._objective_of(result.x) if started and self._is_mip else None
        if objective is None or abs(objective - result.objective) <= \
                1e-6 * max(1.0, abs(objective)):
            return result
        why = "HiGHS returned its start with an objective that is not the start's"
        left = None if limit is None else limit - result.seconds
        if left is not None and left <= 0.05 * limit:
            return replace(result, status="feasible", optimal=False, objective=objective,
                           bound=None, gap=None,
                           message=f"{result.message} ({why}: no bound; the time was up)")
        self._highs.clearSolver()
        again = self._solve(left)
        return replace(again, seconds=result.seconds + again.seconds,
                       message=f"{again.message} ({why}; solved again without it)")

    def _objective_of(self, x: np.ndarray | None) -> float | None:
        """The model's objective at ``x`` (None without a point)."""
        if x is None:
            return None
        lp = self._highs.getLp()
        return float(np.asarray(lp.col_cost_) @ x + lp.offset_)

    def _solve(self, limit: float | None) -> SolveResult:
        """One run of HiGHS within ``limit`` seconds, read into a :class:`SolveResult`."""
        highs = self._highs
        if self._options.threads is not None:
            highspy.Highs.resetGlobalScheduler(True)
        if self._points is not None:
            self._points.clear()
        start = perf_counter()
        run_status = self._run(limit)
        elapsed = perf_counter() - start
        model_status = highs.getModelStatus()
        message = highs.modelStatusToString(model_status)
        info = highs.getInfo()
        if run_status == highspy.HighsStatus.kError:
            return SolveResult.without_solution(
                "error", elapsed, "highs", f"{message}; HiGHS returned an error"
            )
        solution = highs.getSolution()
        # HiGHS may call a large LP optimal while its unscaled point misses a tolerance by
        # a hair (primal status not "feasible"); the point is still the answer it proves
        has_solution = model_status not in _PROVEN and (
            info.primal_solution_status == highspy.kSolutionStatusFeasible
            or (model_status == _STATUS.kOptimal and solution.value_valid)
        )
        objective = float(info.objective_function_value) if has_solution else None
        x = np.array(solution.col_value, dtype=np.float64) if has_solution else None
        if self._is_mip:
            bound = float(info.mip_dual_bound)
            bound = bound if np.isfinite(bound) and model_status not in _PROVEN else None
            gap = float(info.mip_gap) if objective is not None and bound is not None else None
            status = highs_status(
                model_status,
                has_solution=has_solution,
                is_mip=True,
                objective=objective,
                bound=bound,
            )
            if model_status == _STATUS.kOptimal and status == "feasible":
                message += (
                    f" (stopped at the requested relative gap {self._options.gap_target:g}"
                    + ("" if gap is None else f"; gap {gap:.3g}")
                    + ")"
                )
            return SolveResult(
                status=status,
                optimal=status == "optimal",
                objective=objective,
                bound=bound,
                gap=gap,
                x=x,
                row_duals=None,
                col_duals=None,
                seconds=elapsed,
                solver="highs",
                message=message,
                nodes=int(info.mip_node_count),
            )
        status = highs_status(model_status, has_solution=has_solution, is_mip=False)
        optimal = status == "optimal"
        iterations = (
            info.simplex_iteration_count,
            info.ipm_iteration_count,
            info.crossover_iteration_count,
            info.pdlp_iteration_count,
        )
        return SolveResult(
            status=status,
            optimal=optimal,
            objective=objective,
            bound=objective if optimal else None,
            gap=0.0 if optimal else None,
            x=x,
            row_duals=np.array(solution.row_dual, dtype=np.float64) if optimal else None,
            col_duals=np.array(solution.col_dual, dtype=np.float64) if optimal else None,
            seconds=elapsed,
            solver="highs",
            message=message,
            iterations=sum(max(0, count) for count in iterations),
        )

    def set_objective(
        self, c: np.ndarray, sense: str | None = None, offset: float | None = None
    ) -> None:
        """Replace the whole objective vector (and optionally its sense and offset).

        Parameters
        ----------
        c : array-like, shape (n_cols,)
            New objective coefficients (finite).
        sense : {"min", "max"} or None
            New direction; None keeps the current one.
        offset : float or None
            New constant; None keeps the current one.

        Raises
        ------
        InputError
            ``c`` of the wrong shape or not finite, an unknown sense, a non-finite offset.
        """
        n = self.n_cols
        cost = as_vector("c", c, n, f"the model has {n} columns")
        check_finite("c", cost)
        if sense is not None and sense not in _SENSE:
            raise InputError(f"sense must be 'min' or 'max', got {sense!r}")
        if offset is not None and not np.isfinite(offset):
            raise InputError(f"offset = {offset} is not finite")
        highs = self._highs
        _check(
            highs.changeColsCost(n, self._all_cols, np.ascontiguousarray(cost)),
            "the objective",
        )
        if sense is not None:
            _check(highs.changeObjectiveSense(_SENSE[sense]), "the objective sense")
        if offset is not None:
            _check(highs.changeObjectiveOffset(float(offset)), "the objective offset")

    def _bounds(
        self, kind: str, size: int, index: object, lower: object, upper: object
    ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """Validated (count, index, lower, upper) for a bulk bound change."""
        idx = np.asarray(index)
        if idx.ndim == 0:
            idx = idx.reshape(1)
        if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise InputError(f"{kind} index must be a 1-D array of integers, got {idx!r}")
        outside = np.flatnonzero((idx < 0) | (idx >= size))
        if outside.size:
            raise InputError(f"{kind} index {int(idx[outside[0]])} is outside 0..{size - 1}")
        values, counts = np.unique(idx, return_counts=True)
        if np.any(counts > 1):
            raise InputError(f"{kind} index {int(values[counts > 1][0])} is repeated")
        what = f"one per {kind} index"
        lo = as_vector(f"{kind}_lower", lower, idx.size, what, broadcast=True)
        up = as_vector(f"{kind}_upper", upper, idx.size, what, broadcast=True)
        check_bounds(f"{kind}_lower", lo, f"{kind}_upper", up)
        return idx.size, _int32(idx), _inf(lo), _inf(up)

    def set_col_bounds(self, index: object, lower: object, upper: object) -> None:
        """Change the bounds of some columns in one call.

        Parameters
        ----------
        index : array-like of int
            Distinct column indices.
        lower, upper : float or array-like
            New bounds, one per index or a scalar for all (``-inf``/``+inf`` allowed).

        Raises
        ------
        InputError
            An index out of range or repeated, bounds of the wrong length, NaN, or a lower
            bound above its upper bound (naming the position).
        """
        count, idx, lo, up = self._bounds("col", self.n_cols, index, lower, upper)
        _check(self._highs.changeColsBounds(count, idx, lo, up), "the column bounds")

    def set_row_bounds(self, index: object, lower: object, upper: object) -> None:
        """Change the bounds of some rows in one call (as :meth:`set_col_bounds`)."""
        count, idx, lo, up = self._bounds("row", self.n_rows, index, lower, upper)
        _check(self._highs.changeRowsBounds(count, idx, lo, up), "the row bounds")

    def add_rows(self, A_rows: object, lower: object, upper: object) -> None:
        """Append rows ``lower <= A_rows @ x <= upper`` in one call (e.g. cuts).

        Parameters
        ----------
        A_rows : sparse matrix or 2-D array-like, shape (k, n_cols)
            Coefficients of the new rows.
        lower, upper : float or array-like, shape (k,)
            Their bounds (a scalar applies to all new rows).

        Raises
        ------
        InputError
            ``A_rows`` with the wrong number of columns or non-finite entries, or invalid
            bounds.
        """
        rows = as_csr("A_rows", A_rows)
        k, n = rows.shape
        if n != self.n_cols:
            raise InputError(
                f"A_rows has shape {rows.shape}, expected (k, {self.n_cols}) "
                f"(the model has {self.n_cols} columns)"
            )
        what = f"A_rows has {k} rows"
        lo = as_vector("lower", lower, k, what, broadcast=True)
        up = as_vector("upper", upper, k, what, broadcast=True)
        check_bounds("lower", lo, "upper", up)
        if k == 0:
            return
        _check(
            self._highs.addRows(
                k,
                _inf(lo),
                _inf(up),
                rows.nnz,
                _int32(rows.indptr[:-1]),
                _int32(rows.indices),
                np.ascontiguousarray(rows.data),
            ),
            "the added rows",
        )

    def column_extremes(
        self,
        columns: np.ndarray | None = None,
        on_bound: Callable[[int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
        time_left: Callable[[], float | None] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Minimum and maximum of each given column over the model's feasible set.

        The interval attack's engine: for each column j the objective becomes ``x_j``
        (two cost entries change), and the model is re-solved for ``min`` and for ``max``.
        For an LP every re-solve is a primal simplex started from the previous optimal basis,
        which stays primal feasible when only the objective changes, so each bound takes a
        handful of iterations. The model's objective is left at zero afterwards.

        Parameters
        ----------
        columns : array of int, optional
            Columns to bound (default all).
        on_bound : callable, optional
            Called as ``on_bound(bounds done, bounds in all)`` after each bound (a counter
            for a :class:`~tabsdc._progress.ProgressReporter`).
        stop : callable, optional
            Asked before each column; when it returns True the remaining columns are left
            uncomputed (a caller's time limit).
        time_left : callable, optional
            Asked before each solve for the seconds it may take (a caller's deadline, e.g.
            :meth:`~tabsdc._progress.Deadline.solver_limit`); default the model's time limit.

        Returns
        -------
        lower, upper : ndarray
            ``-inf``/``+inf`` where the column is unbounded in that direction. For a MIP
            stopped by its time limit, the proven dual bound (an outer end of the interval);
            NaN for columns left uncomputed.
        status : ndarray of str
            ``"optimal"`` where both ends are proven, ``"feasible"`` for a time-limited MIP
            bound (the interval is valid but may be wider than the exact one),
            ``"not computed"`` for columns left when ``stop`` said so.

        Raises
        ------
        SolverError
            When the model is infeasible or a solve fails.
        """
        highs = self._highs
        columns = np.arange(self.n_cols) if columns is None else np.asarray(columns, dtype=int)
        _check(highs.changeColsCost(self.n_cols, _int32(np.arange(self.n_cols)),
                                    np.zeros(self.n_cols)), "the objective")
        if not self._is_mip:
            highs.setOptionValue("simplex_strategy", 4)  # primal simplex
        def limit() -> float | None:
            return self._options.time_limit if time_left is None else time_left()

        feasibility = self._run(limit())
        if feasibility == highspy.HighsStatus.kError or highs.getModelStatus() in _PROVEN:
            state = highs.modelStatusToString(highs.getModelStatus())
            raise SolverError(f"no point satisfies the model ({state})")
        lower, upper = np.full(len(columns), np.nan), np.full(len(columns), np.nan)
        status = np.full(len(columns), "optimal", dtype=object)
        previous = None
        try:
            for k, j in enumerate(columns):
                if stop is not None and stop():
                    status[k:] = "not computed"
                    break
                if previous is not None:
                    highs.changeColCost(int(previous), 0.0)
                highs.changeColCost(int(j), 1.0)
                previous = j
                for sense, out in (("min", lower), ("max", upper)):
                    highs.changeObjectiveSense(_SENSE[sense])
                    out[k], proven = self._extreme(sense, int(j), limit())
                    if not proven:
                        status[k] = "feasible"
                    if on_bound is not None:
                        on_bound(2 * k + (1 if sense == "min" else 2), 2 * len(columns))
        finally:
            if previous is not None:
                highs.changeColCost(int(previous), 0.0)
            highs.changeObjectiveSense(_SENSE["min"])
            if not self._is_mip:
                highs.setOptionValue("simplex_strategy", 1)
        return lower, upper, status

    def _extreme(self, sense: str, column: int, limit: float | None) -> tuple[float, bool]:
        """Run the model with the current objective within ``limit`` seconds; (value,
        proven) of the column's bound."""
        highs = self._highs
        self._run(limit)
        model_status = highs.getModelStatus()
        if not self._is_mip and model_status not in (
                _STATUS.kOptimal, _STATUS.kUnbounded, _STATUS.kUnboundedOrInfeasible):
            # the model was feasible before only the objective changed: a warm start that
            # lost its way on badly scaled data (values near 1e9); solve this bound afresh
            highs.clearSolver()
            highs.setOptionValue("simplex_strategy", 1)
            self._run(limit)
            highs.setOptionValue("simplex_strategy", 4)
            model_status = highs.getModelStatus()
        info = highs.getInfo()
        if model_status == _STATUS.kOptimal:
            if self._is_mip and info.mip_gap > PROOF_REL_GAP and abs(
                    info.objective_function_value - info.mip_dual_bound) > PROOF_ABS_GAP:
                return float(info.mip_dual_bound), False
            return float(info.objective_function_value), True
        if model_status in (_STATUS.kUnbounded, _STATUS.kUnboundedOrInfeasible):
            # the model was feasible before the objective changed: unbounded
            return (np.inf if sense == "max" else -np.inf), True
        if self._is_mip and model_status in _LIMITS and np.isfinite(info.mip_dual_bound):
            return float(info.mip_dual_bound), False
        raise SolverError(
            f"bound ({sense}) of column {column}: HiGHS stopped with "
            f"{highs.modelStatusToString(model_status)}"
        )

    def keep_feasible_points(self) -> None:
        """From now on keep every integer-feasible point HiGHS meets during a MIP solve (its
        MIP-solution callback: the incumbents and the other feasible points its heuristics
        and branching find), for :meth:`feasible_points`."""
        if self._points is None:
            self._points = []
            self._highs.cbMipSolution.subscribe(
                lambda event: self._points.append(np.array(event.data_out.mip_solution)))

    def feasible_points(self) -> np.ndarray:
        """The integer-feasible points of the last solve (rows, in HiGHS's order; none
        before :meth:`keep_feasible_points`).

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> lp = LinearProgram(c=[1, 1], A=sp.csr_array([[1.0, 1.0]]), row_lower=[1],
        ...                    row_upper=[np.inf], col_lower=[0, 0], col_upper=[1, 1],
        ...                    integrality=[True, True])
        >>> model = HighsModel(lp)
        >>> model.keep_feasible_points()
        >>> _ = model.solve()
        >>> points = model.feasible_points()
        >>> bool(len(points)) and bool((points.sum(axis=1) >= 1).all())
        True
        """
        if not self._points:
            return np.zeros((0, self.n_cols))
        return np.array(self._points)

    def clear_basis(self) -> None:
        """Forget the last solve's basis: the next solve starts cold (a kept model re-solved
        from the basis of an unrelated problem can take far longer than from scratch)."""
        self._highs.clearSolver()

    def set_time_limit(self, seconds: float | None) -> None:
        """Set (or with None remove) the time limit of each following solve (seconds from
        the start of that solve)."""
        self._options = replace(self._options, time_limit=seconds)
        self._set_options()

    def set_start(self, x: np.ndarray) -> None:
        """Give HiGHS a start point (all columns) for the next MIP solve; HiGHS checks it and
        keeps it as incumbent when it is feasible.

        Raises
        ------
        InputError
            ``x`` of the wrong length.
        SolverError
            HiGHS rejects it.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_cols,):
            raise InputError(f"start has shape {x.shape}, the model has {self.n_cols} columns")
        index = np.arange(self.n_cols, dtype=np.int32)
        _check(self._highs.setSolution(self.n_cols, index, x), "the start solution")
        self._started = True

    def set_interior_point(self, on: bool, *, crossover: bool = True) -> None:
        """Solve LPs by the interior point method or, off, by HiGHS's choice (the simplex
        method). Without ``crossover`` the interior point ends at its approximately optimal
        point and duals (no basis: later re-solves start cold); with it, at a basis."""
        self._highs.setOptionValue("solver", "ipm" if on else "choose")
        self._highs.setOptionValue("run_crossover", "on" if crossover or not on else "off")


def solve_highs(problem: LinearProgram, options: SolveOptions, *,
                start: np.ndarray | None = None, interior: bool = False,
                crossover: bool = True) -> SolveResult:
    """Solve ``problem`` once with HiGHS (a :class:`HighsModel` used once).

    ``start`` is a MIP start (:meth:`HighsModel.set_start`); ``interior`` and ``crossover``
    choose the LP method (:meth:`HighsModel.set_interior_point`).
    """
    model = HighsModel(
        problem,
        time_limit=options.time_limit,
        mip_gap=options.mip_gap,
        threads=options.threads,
        verbose=options.verbose,
    )
    if start is not None:
        model.set_start(start)
    if interior:
        model.set_interior_point(True, crossover=crossover)
    return model.solve()
