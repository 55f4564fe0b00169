"""PuLP backend: the same arrays as a PuLP problem, so any solver PuLP drives can be chosen.

Short names and the PuLP solver classes they stand for (the first available one is used):

=============  ====================================================================
``"cbc"``      ``PULP_CBC_CMD`` (CBC bundled with PuLP), else ``COIN_CMD`` (CBC on PATH)
``"glpk"``     ``GLPK_CMD``
``"cplex"``    ``CPLEX_PY``, else ``CPLEX_CMD``
``"gurobi"``   ``GUROBI`` (gurobipy), else ``GUROBI_CMD``
``"scip"``     ``SCIP_PY``, else ``SCIP_CMD``
``"highs-pulp"`` ``HiGHS`` (highspy through PuLP), else ``HiGHS_CMD``
=============  ====================================================================

Building: PuLP creates one variable object per column (it needs them), but every row
expression is made in bulk from the CSR arrays: the variable objects of all nonzeros are
gathered with one numpy fancy index, and each row's ``LpAffineExpression`` is built from a
zip of two list slices. A row with ``row_lower == row_upper`` becomes one equality; a ranged
row (both bounds finite and different) becomes a ``>=`` and a ``<=`` constraint, and its dual
is the sum of theirs; a free row is left out (dual 0).

Status: PuLP's ``status`` says "Optimal" for a MIP that CBC stopped at its time limit with
an incumbent; only ``sol_status`` (``LpSolutionIntegerFeasible``) tells it apart.
:func:`pulp_status` reads both. PuLP's solvers report no dual bound, so a MIP not proven
optimal gets ``bound = gap = None``, and a MIP solved with a positive ``mip_gap`` cannot be
told from a proven one: it is reported as ``"feasible"`` with ``bound = gap = None``. Solvers
that do not set ``sol_status`` (e.g. ``GLPK_CMD``) can only be trusted as far as their
``status`` goes.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from time import perf_counter
from types import MappingProxyType

import numpy as np
import pulp

from tabsdc._errors import SolverError
from tabsdc.solver._banner import absorb_highs_banner
from tabsdc.solver._options import SolveOptions
from tabsdc.solver._problem import LinearProgram, SolveResult

#: Short solver name -> PuLP solver classes, in order of preference.
PULP_SOLVERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "cbc": ("PULP_CBC_CMD", "COIN_CMD"),
        "glpk": ("GLPK_CMD",),
        "cplex": ("CPLEX_PY", "CPLEX_CMD"),
        "gurobi": ("GUROBI", "GUROBI_CMD"),
        "scip": ("SCIP_PY", "SCIP_CMD"),
        "highs-pulp": ("HiGHS", "HiGHS_CMD"),
    }
)

# PuLP 3.3 warns that the bundled CBC will move to a separate package in PuLP 4.0; the
# class order above already falls back to COIN_CMD, so the notice is not the caller's concern.
_CBC_NOTICE = "PULP_CBC_CMD is deprecated"
# Relative tolerance of the check d = c - A.T y on the duals a PuLP solver reports.
_DUAL_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False)
class PulpModel:
    """A PuLP problem built from a :class:`LinearProgram`, with the maps back to its arrays.

    Attributes
    ----------
    problem : pulp.LpProblem
        The PuLP problem.
    variables : list of pulp.LpVariable
        Variable ``j`` is column ``j``.
    constraints : list of pulp.LpConstraint
        The constraints in the order they were added.
    constraint_rows : numpy.ndarray of int
        Row of the array problem each constraint comes from (a ranged row appears twice).
    """

    problem: pulp.LpProblem
    variables: list[pulp.LpVariable]
    constraints: list[pulp.LpConstraint]
    constraint_rows: np.ndarray


def _bound_list(values: np.ndarray) -> list[float | None]:
    """Bounds as PuLP wants them: Python floats, None for an infinite side."""
    out = values.astype(object)
    out[~np.isfinite(values)] = None
    return out.tolist()


def build_pulp_problem(problem: LinearProgram) -> PulpModel:
    """Build the PuLP problem of ``problem`` (variables ``x{j}``, constraints ``r{i}``).

    Parameters
    ----------
    problem : LinearProgram
        The problem.

    Returns
    -------
    PulpModel
        The problem and the maps from its variables and constraints to columns and rows.

    Notes
    -----
    Every variable enters the objective (with coefficient 0 where ``c`` is 0) so PuLP
    passes it to the solver even when no row uses it.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> lp = LinearProgram(c=[1, 1], A=sp.csr_array([[1, 1]]), row_lower=[2],
    ...                    row_upper=[5], col_lower=[0, 0], col_upper=[np.inf, 3])
    >>> model = build_pulp_problem(lp)
    >>> [c.name for c in model.constraints], model.constraint_rows.tolist()
    (['r0_up', 'r0_lo'], [0, 0])
    """
    n, A = problem.n_cols, problem.A
    prob = pulp.LpProblem("tabsdc", pulp.LpMaximize if problem.sense == "max" else pulp.LpMinimize)
    # PuLP >= 3.3 creates variables through the problem; older versions only by the class.
    make = getattr(prob, "add_variable", None) or pulp.LpVariable
    integer = problem.integrality if problem.integrality is not None else np.zeros(n, dtype=bool)
    categories = np.where(integer, pulp.LpInteger, pulp.LpContinuous).tolist()
    variables = [
        make(f"x{j}", low, up, cat)
        for j, low, up, cat in zip(
            range(n),
            _bound_list(problem.col_lower),
            _bound_list(problem.col_upper),
            categories,
            strict=True,
        )
    ]
    prob.setObjective(
        pulp.LpAffineExpression(
            zip(variables, problem.c.tolist(), strict=True), constant=problem.offset
        )
    )

    lower, upper = problem.row_lower, problem.row_upper
    equal = lower == upper
    with_lower = np.isfinite(lower) & ~equal
    with_upper = np.isfinite(upper) & ~equal
    parts = (
        (equal, pulp.LpConstraintEQ),
        (with_lower, pulp.LpConstraintGE),
        (with_upper, pulp.LpConstraintLE),
    )
    rows = np.concatenate([np.flatnonzero(mask) for mask, _ in parts])
    senses = np.concatenate([np.full(int(mask.sum()), sense) for mask, sense in parts])
    order = np.lexsort((senses, rows))
    rows, senses = rows[order], senses[order]
    rhs = np.where(senses == pulp.LpConstraintLE, upper[rows], lower[rows])
    ranged = (with_lower & with_upper)[rows]
    suffix = np.where(ranged, np.where(senses == pulp.LpConstraintGE, "_lo", "_up"), "")

    nz_variables = np.fromiter(variables, dtype=object, count=n)[A.indices].tolist()
    coefficients = A.data.tolist()
    starts = A.indptr.tolist()
    constraints = []
    for i, sense, value, tail in zip(
        rows.tolist(), senses.tolist(), rhs.tolist(), suffix.tolist(), strict=True
    ):
        start, end = starts[i], starts[i + 1]
        constraint = pulp.LpConstraint(
            pulp.LpAffineExpression(
                zip(nz_variables[start:end], coefficients[start:end], strict=True)
            ),
            sense,
            f"r{i}{tail}",
            value,
        )
        prob.addConstraint(constraint)
        constraints.append(constraint)
    return PulpModel(prob, variables, constraints, rows)


def pulp_status(status: int, sol_status: int, *, is_mip: bool, gap_target: float) -> str:
    """Map PuLP's ``(status, sol_status)`` to one of :data:`~tabsdc.solver._problem.STATUSES`.

    Parameters
    ----------
    status : int
        ``LpProblem.status`` (``pulp.LpStatus*``).
    sol_status : int
        ``LpProblem.sol_status`` (``pulp.LpSolution*``).
    is_mip : bool
        Whether the problem has integer variables.
    gap_target : float
        The relative gap the solver was allowed to stop at (0 for none).

    Returns
    -------
    str
        ``"feasible"`` whenever ``sol_status`` is ``LpSolutionIntegerFeasible`` (whatever
        ``status`` says: CBC's time-limited MIP has ``status`` Optimal); ``"optimal"`` when
        both say optimal, except for a MIP with ``gap_target > 0`` (``"feasible"``: the
        solver may have stopped at the target); ``"infeasible"``, ``"unbounded"`` from
        ``status``; ``"no_solution"`` for a solve not finished or with no solution;
        ``"error"`` for PuLP's undefined status.

    Examples
    --------
    >>> import pulp
    >>> pulp_status(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible, is_mip=True,
    ...             gap_target=0.0)
    'feasible'
    """
    if sol_status == pulp.LpSolutionIntegerFeasible:
        return "feasible"
    if status == pulp.LpStatusOptimal:
        if sol_status != pulp.LpSolutionOptimal:
            return "no_solution"
        return "feasible" if is_mip and gap_target > 0 else "optimal"
    if status == pulp.LpStatusInfeasible:
        return "infeasible"
    if status == pulp.LpStatusUnbounded:
        return "unbounded"
    if status == pulp.LpStatusNotSolved:
        return "no_solution"
    return "error"


def _instantiate(cls: type, **kwargs: object) -> pulp.LpSolver:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_CBC_NOTICE, category=DeprecationWarning)
        return cls(**kwargs)


def pulp_solver_class(name: str) -> type | None:
    """The first available PuLP solver class for a short name, or None if none is available.

    Raises
    ------
    SolverError
        ``name`` is not one of :data:`PULP_SOLVERS`.
    """
    if name not in PULP_SOLVERS:
        raise SolverError(f"unknown PuLP solver {name!r}; known: {', '.join(PULP_SOLVERS)}")
    for class_name in PULP_SOLVERS[name]:
        cls = getattr(pulp, class_name, None)
        if cls is not None and _instantiate(cls, msg=False).available():
            return cls
    return None


def _solver_arguments(cls: type, name: str, options: SolveOptions) -> dict[str, object]:
    """Keyword arguments of ``cls`` for the options; raise if it cannot take one given."""
    parameters = inspect.signature(cls.__init__).parameters
    open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    arguments: dict[str, object] = {"msg": bool(options.verbose)}
    for option, keyword, value in (
        ("time_limit", "timeLimit", options.time_limit),
        ("mip_gap", "gapRel", options.mip_gap),
        ("threads", "threads", options.threads),
    ):
        if value is None:
            continue
        if keyword not in parameters and not open_kwargs:
            raise SolverError(f"solver {name!r} ({cls.__name__}) does not accept {option}")
        arguments[keyword] = value
    return arguments


def _values(items: list, attribute: str) -> np.ndarray | None:
    """``getattr(item, attribute)`` for all items as floats; None if any is missing."""
    values = [getattr(item, attribute) for item in items]
    if any(value is None for value in values):
        return None
    return np.array(values, dtype=np.float64)


def _duals(
    problem: LinearProgram, model: PulpModel
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Row duals and reduced costs in the problem's sense, or (None, None).

    PuLP's solvers differ in the sign they report for a maximisation problem (CBC: the
    problem's own sense; HiGHS through PuLP: the sense of the negated problem it minimises).
    The sign kept is the one for which the reduced costs satisfy ``d = c - A.T @ y``, the
    identity that defines the convention; duals satisfying it with neither sign are dropped.
    """
    pi = _values(model.constraints, "pi")
    dj = _values(model.variables, "dj")
    if pi is None or dj is None:
        return None, None
    y = np.bincount(model.constraint_rows, weights=pi, minlength=problem.n_rows)
    aty = problem.A.T @ y
    tolerance = _DUAL_TOLERANCE * (1.0 + np.abs(problem.c).max() + np.abs(aty).max(initial=0.0))
    for sign in (1.0, -1.0):
        if np.abs(problem.c - sign * (aty + dj)).max() <= tolerance:
            return sign * y, sign * dj
    return None, None


def solve_pulp(problem: LinearProgram, name: str, options: SolveOptions,
               start: np.ndarray | None = None) -> SolveResult:
    """Solve ``problem`` with the PuLP solver of short name ``name``.

    Parameters
    ----------
    problem : LinearProgram
        The problem.
    name : str
        A key of :data:`PULP_SOLVERS`.
    options : SolveOptions
        Limits and settings, passed as ``timeLimit``, ``gapRel``, ``threads``, ``msg``.
    start : ndarray, optional
        A starting solution, given as the variables' initial values with ``warmStart=True``
        to solvers that accept a warm start; the others solve without it.

    Returns
    -------
    SolveResult
        With ``solver=name``; see the module docstring for status, bound and gap.

    Raises
    ------
    SolverError
        ``name`` unknown or not available, or the solver cannot take a requested option.
    """
    cls = pulp_solver_class(name)
    if cls is None:
        raise SolverError(
            f"solver {name!r} is not available: PuLP finds none of {', '.join(PULP_SOLVERS[name])}"
        )
    absorb_highs_banner()  # PuLP's HiGHS class constructs a Highs object of its own
    arguments = _solver_arguments(cls, name, options)
    model = build_pulp_problem(problem)
    if start is not None and "warmStart" in inspect.signature(cls.__init__).parameters:
        arguments["warmStart"] = True
        for variable, value in zip(model.variables, start, strict=True):
            variable.setInitialValue(float(value))
    solver = _instantiate(cls, **arguments)
    began = perf_counter()
    try:
        model.problem.solve(solver)
    except pulp.PulpError as error:
        return SolveResult.without_solution(
            "error", perf_counter() - began, name, f"{cls.__name__} failed: {error}"
        )
    elapsed = perf_counter() - began
    lp = model.problem
    status = pulp_status(
        lp.status, lp.sol_status, is_mip=problem.is_mip, gap_target=options.gap_target
    )
    message = f"{pulp.LpStatus[lp.status]}; {pulp.LpSolution[lp.sol_status]}"
    x = _values(model.variables, "varValue") if status in ("optimal", "feasible") else None
    if x is None and status in ("optimal", "feasible"):
        status, message = "error", message + "; the solver returned no variable values"
    if status == "feasible" and problem.is_mip and lp.sol_status == pulp.LpSolutionOptimal:
        message += f" (within the requested relative gap {options.gap_target:g})"
    optimal = status == "optimal"
    objective = problem.objective_value(x) if x is not None else None
    row_duals = col_duals = None
    if optimal and not problem.is_mip:
        row_duals, col_duals = _duals(problem, model)
        if row_duals is None:
            message += "; duals not reported or not in a known sign convention"
    return SolveResult(
        status=status,
        optimal=optimal,
        objective=objective,
        bound=objective if optimal else None,
        gap=0.0 if optimal else None,
        x=x,
        row_duals=row_duals,
        col_duals=col_duals,
        seconds=elapsed,
        solver=name,
        message=message,
    )
