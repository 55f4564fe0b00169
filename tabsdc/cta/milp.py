"""L1 controlled tabular adjustment as a mixed-integer linear program (Cox's slide 26).

    minimise    sum_i w_i (p_i + q_i)                         (y = p - q, p, q >= 0)
    subject to  A (p - q) = 0,   E (p - q) = 0                (relations, QP-CTA rows)
                p_i >= upl_i I_i,      p_i <= m+_i I_i         for each sensitive cell i
                q_i >= lpl_i (1 - I_i), q_i <= m-_i (1 - I_i)
                0 <= p_j <= e+_j,  0 <= q_j <= e-_j            for every other cell j
                I_i binary

``I_i = 1`` moves sensitive cell i up to at least ``a_i + upl_i``, ``I_i = 0`` down to at most
``a_i - lpl_i``; ``m+-`` and ``e+-`` are the capacities of :class:`~tabsdc.cta.problem.
CTAProblem` (``up``/``down``). A direction that is impossible fixes ``I_i``. Quadratic limits
(correlation) are kept by cuts and re-solves.

The solver's solution is then *polished*: its directions are fixed and the LP of
:class:`~tabsdc.cta.lp.L1Model` re-solved, which removes the leakage that the integrality
tolerance allows through big-M rows (``I = 1e-6`` lets ``p`` reach ``1e-6 m+``) and gives
the exact best adjustment for those directions.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from tabsdc.cta._highs import CTAHighsModel
from tabsdc.cta.constraints import solve_with_cuts
from tabsdc.cta.lp import L1Model
from tabsdc.cta.polish import polish
from tabsdc.cta.problem import CTAProblem
from tabsdc.cta.solution import CTASolution, certify, infeasible
from tabsdc.errors import SolverError
from tabsdc.solver import LinearProgram, SolveResult

__all__ = ["milp_program", "solve_milp", "milp_method"]


def milp_program(problem: CTAProblem) -> LinearProgram:
    """The MILP above as a :class:`~tabsdc.solver.LinearProgram` over ``[p, q, I]``.

    Examples
    --------
    A 2 x 2 table with its totals (9 cells, 6 relations), one sensitive cell: columns
    ``p, q`` per cell and one binary, rows: relations and four per sensitive cell.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta.problem import build_problem
    >>> frame = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"), "value": [1.0, 2, 3, 4]})
    >>> t = Table.from_aggregated(frame, ["r", "c"])
    >>> p = build_problem(t.with_columns(status=list("ssssussss"), lpl=0.5, upl=0.5))
    >>> program = milp_program(p)
    >>> program.n_cols, program.n_rows, int(program.integrality.sum())
    (19, 10, 1)
    """
    n, s, k = problem.n, problem.s, problem.sensitive
    equal = problem.constraint_matrix
    m = equal.shape[0]
    select = sp.csr_array((np.ones(s), (np.arange(s), k)), shape=(s, n))
    none = sp.csr_array((s, n))
    up_cap = np.where(problem.can_up, problem.up[k], 0.0)
    down_cap = np.where(problem.can_down, problem.down[k], 0.0)
    matrix = sp.vstack([
        sp.hstack([equal, -equal, sp.csr_array((m, s))]),
        sp.hstack([select, none, -sp.diags_array(problem.upl)]),
        sp.hstack([select, none, -sp.diags_array(up_cap)]),
        sp.hstack([none, select, sp.diags_array(problem.lpl)]),
        sp.hstack([none, select, sp.diags_array(down_cap)]),
    ], format="csr")
    lower = np.concatenate([np.zeros(m), np.zeros(s), np.full(s, -np.inf), problem.lpl,
                            np.full(s, -np.inf)])
    upper = np.concatenate([np.zeros(m), np.full(s, np.inf), np.zeros(s),
                            np.full(s, np.inf), down_cap])
    indicator_lower = np.where(problem.can_down, 0.0, 1.0)
    indicator_upper = np.where(problem.can_up, 1.0, 0.0)
    col_upper = np.concatenate([problem.up, problem.down, indicator_upper])
    col_upper[k] = up_cap
    col_upper[n + k] = down_cap
    return LinearProgram(
        c=np.concatenate([problem.cost, problem.cost, np.zeros(s)]),
        A=matrix, row_lower=lower, row_upper=upper,
        col_lower=np.concatenate([np.zeros(2 * n), indicator_lower]),
        col_upper=col_upper,
        integrality=np.concatenate([np.zeros(2 * n, dtype=bool), np.ones(s, dtype=bool)]),
    )


def solve_milp(
    problem: CTAProblem,
    *,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[SolveResult, np.ndarray | None, int]:
    """Solve the MILP with HiGHS, keeping quadratic limits by cuts.

    Parameters
    ----------
    problem : CTAProblem
    time_limit : float, optional
        Seconds for all solves together (cut rounds re-solve with the time left).
    mip_gap : float, optional
        Relative gap at which HiGHS may stop (reported as not optimal).
    start : (y, up), optional
        A feasible adjustment and its directions, given to HiGHS as incumbent.

    Returns
    -------
    result : SolveResult
        The last MILP solve (status, objective, dual bound, gap).
    up : ndarray of bool or None
        Directions of the solution (None without one).
    cuts : int
        Cuts added.
    """
    program = milp_program(problem)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    model = CTAHighsModel(program, time_limit=time_limit, mip_gap=mip_gap)
    n = problem.n
    if start is not None:
        y, up = start
        model.set_start(np.concatenate([np.maximum(y, 0), np.maximum(-y, 0),
                                        up.astype(float)]))

    def run() -> SolveResult:
        if deadline is not None:
            model.set_time_limit(max(deadline - time.perf_counter(), 1e-3))
        return model.solve()

    def add_cuts(rows: sp.csr_array, upper: np.ndarray) -> None:
        model.add_rows(sp.hstack([rows, -rows, sp.csr_array((rows.shape[0], problem.s))],
                                 format="csr"), -np.inf, upper)

    result, cuts = solve_with_cuts(problem, run, add_cuts, lambda r: r.x[:n] - r.x[n:2 * n])
    up = None if result.x is None else result.x[2 * n:] > 0.5
    return result, up, cuts


def milp_method(
    problem: CTAProblem, *, time_limit: float | None = None, mip_gap: float | None = None
) -> CTASolution:
    """L1 CTA by the MILP alone, polished (the ``method="milp"`` of :func:`tabsdc.cta.adjust`).

    Raises
    ------
    InputError
        The MILP is infeasible (e.g. a sensitive total with every other total fixed).
    SolverError
        HiGHS stopped without any feasible solution (time limit).
    """
    result, up, cuts = solve_milp(problem, time_limit=time_limit, mip_gap=mip_gap)
    if result.status == "infeasible":
        raise infeasible("the CTA MILP is infeasible")
    if up is None:
        raise SolverError(f"the CTA MILP ended without a solution: {result.status} "
                          f"({result.message}); try method='heuristic' or a longer time limit")
    model = L1Model(problem)
    model.fix(up)
    lp = model.solve()
    # the LP can fail where the MILP succeeded (numerics on very large models): then the
    # MILP's own adjustment is polished
    source = lp if lp.optimal and lp.x is not None else result
    y = polish(problem, source.x[:problem.n] - source.x[problem.n:2 * problem.n], up)
    objective = problem.objective(y)
    bound, gap, status = certify(objective, [result.bound])
    details = {"milp_status": result.status, "milp_objective": result.objective,
               "milp_bound": result.bound, "milp_seconds": round(result.seconds, 3),
               "nodes": result.nodes, "cuts": cuts}
    return CTASolution(y=y, up=up, objective=objective, bound=bound, status=status, gap=gap,
                       message=f"MILP (HiGHS): {result.message}", details=details)
