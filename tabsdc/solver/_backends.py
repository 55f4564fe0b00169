"""Choosing a backend by name: :func:`solve` and :func:`available_solvers`."""

from __future__ import annotations

import pulp

from tabsdc._errors import InputError, SolverError
from tabsdc._validation import check_choice
from tabsdc.solver._checks import as_vector, check_finite
from tabsdc.solver._highs import solve_highs
from tabsdc.solver._isolated import solve_isolated
from tabsdc.solver._options import SolveOptions
from tabsdc.solver._problem import LinearProgram, SolveResult
from tabsdc.solver._pulp_backend import PULP_SOLVERS, pulp_solver_class, solve_pulp


def require_highs(solver: str, method: str) -> None:
    """Methods that keep HiGHS models alive between solves (warm starts, added rows) take
    ``solver="highs"`` only; any other name is refused naming the method.

    Examples
    --------
    >>> require_highs("highs", "suppression")
    >>> try:
    ...     require_highs("cbc", "suppression")
    ... except InputError as error:
    ...     print(str(error)[:70])
    suppression keeps HiGHS models between solves: solver must be 'highs',
    """
    if solver != "highs":
        raise InputError(f"{method} keeps HiGHS models between solves: solver must be "
                         f"'highs', not {solver!r} (the audit and the rounding MILPs also "
                         "take PuLP's solvers)")


def available_solvers() -> list[str]:
    """Short names of the solvers that can be used here.

    Returns
    -------
    list of str
        ``"highs"`` (highspy, the default) first, then each name of
        :data:`~tabsdc.solver._pulp_backend.PULP_SOLVERS` for which PuLP reports one of its
        solver classes available (``pulp.listSolvers(onlyAvailable=True)``): ``"cbc"``,
        ``"glpk"``, ``"cplex"``, ``"gurobi"``, ``"scip"``, ``"highs-pulp"``.

    Examples
    --------
    >>> "highs" in available_solvers()
    True
    """
    found = set(pulp.listSolvers(onlyAvailable=True))
    return ["highs"] + [
        name for name, classes in PULP_SOLVERS.items() if found.intersection(classes)
    ]


def solve(
    problem: LinearProgram,
    solver: str = "highs",
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    threads: int | None = None,
    verbose: bool = False,
    start: object = None,
    within: float | None = None,
) -> SolveResult:
    """Solve an LP/MILP with the named solver.

    Parameters
    ----------
    problem : LinearProgram
        The problem in matrix form.
    solver : str
        ``"highs"`` (default: :class:`~tabsdc.solver._highs.HighsModel`) or a PuLP solver's
        short name (:data:`~tabsdc.solver._pulp_backend.PULP_SOLVERS`, e.g. ``"cbc"``).
    time_limit, mip_gap, threads, verbose
        See :class:`~tabsdc.solver._options.SolveOptions`.
    start : array-like, shape (n,), optional
        A starting solution of a MIP: HiGHS takes it as its first incumbent when it is
        feasible (:meth:`~tabsdc.solver._highs.HighsModel.set_start`), and so do PuLP's
        solvers that accept a warm start (``warmStart``, e.g. CBC); others solve without it.
    within : float, optional
        The most seconds the call may take from now: a caller with a deadline passes what
        is left of it. The time limit is lowered to fit; for a HiGHS MIP, run in a worker
        process that may answer a little after its limit, the fit leaves room for that and
        for a new worker's start-up (:func:`~tabsdc.solver._isolated.solve_isolated`).

    Returns
    -------
    SolveResult
        Status, objective, best bound, gap, time and the solution. A solve stopped by a limit
        or at a gap target is never labelled optimal.

    Raises
    ------
    SolverError
        ``solver`` not available here (the message lists the available ones), or a PuLP
        solver that cannot take a requested option.
    InputError
        ``solver`` unknown (the message lists every name), ``problem`` is not a
        :class:`LinearProgram`, or invalid options.

    See Also
    --------
    HighsModel : keep a HiGHS model to re-solve it after changes.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> lp = LinearProgram(c=[3, 5], A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
    ...                    row_lower=[-np.inf] * 3, row_upper=[4, 12, 18],
    ...                    col_lower=[0, 0], col_upper=[np.inf, np.inf], sense="max")
    >>> result = solve(lp)
    >>> result.status, result.objective, result.x.tolist(), result.row_duals.tolist()
    ('optimal', 36.0, [2.0, 6.0], [0.0, 1.5, 1.0])
    """
    if not isinstance(problem, LinearProgram):
        raise InputError(f"problem must be a LinearProgram, got {type(problem).__name__}")
    if within is not None:
        within = max(float(within), 1e-3)
        time_limit = within if time_limit is None else min(time_limit, within)
    options = SolveOptions(time_limit, mip_gap, threads, verbose)
    if start is not None:
        start = as_vector("start", start, problem.n_cols, f"the problem has {problem.n_cols} "
                          "columns")
        check_finite("start", start)
    if solver == "highs":
        if problem.is_mip and options.time_limit is not None:
            # HiGHS's MIP may overrun its limit: a worker process ended after it
            return solve_isolated(problem, options, start=start, within=within)
        return solve_highs(problem, options, start=start)
    check_choice("solver", solver, ("highs", *PULP_SOLVERS))
    if pulp_solver_class(solver) is None:
        raise SolverError(
            f"solver {solver!r} is not available here; available: "
            f"{', '.join(available_solvers())}"
        )
    return solve_pulp(problem, solver, options, start)
