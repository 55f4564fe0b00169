"""L1 controlled tabular adjustment as a mixed-integer linear program (Cox's slide 26).

    minimise    sum_i w_i (p_i + q_i)                         (y = p - q, p, q >= 0)
    subject to  A (p - q) = 0,   E (p - q) = 0                (relations, QP-CTA rows)
                p_i >= upl_i I_i,      p_i <= m+_i I_i         for each sensitive cell i
                q_i >= lpl_i (1 - I_i), q_i <= m-_i (1 - I_i)
                0 <= p_j <= e+_j,  0 <= q_j <= e-_j            for every other cell j
                I_i binary

``I_i = 1`` moves sensitive cell i up to at least ``a_i + upl_i``, ``I_i = 0`` down to at most
``a_i - lpl_i``; ``m+-`` and ``e+-`` are the capacities of :class:`~tabsdc.cta._problem.
CTAProblem` (``up``/``down``). A direction that is impossible fixes ``I_i``. Quadratic limits
(correlation) are kept by cuts and re-solves.

The ``method="milp"`` of :func:`tabsdc.cta.adjust` (the MILP started from the
fixed-directions adjustment, its solution polished) is :mod:`tabsdc.cta._exact`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from tabsdc._progress import Deadline
from tabsdc.cta._constraints import solve_with_cuts
from tabsdc.cta._highs import CTAHighsModel
from tabsdc.cta._problem import CTAProblem
from tabsdc.solver import LinearProgram, SolveOptions, SolveResult
from tabsdc.solver._isolated import solve_isolated


def milp_program(problem: CTAProblem, cuts: sp.sparray | None = None) -> LinearProgram:
    """The MILP above as a :class:`~tabsdc.solver.LinearProgram` over ``[p, q, I]``.

    Parameters
    ----------
    problem : CTAProblem
    cuts : sparse matrix, shape (c, 2 n), optional
        Rows ``cuts @ [p, q] >= 0`` valid for the MILP's complementary solutions (the mass
        cuts of :meth:`tabsdc.cta._mass.MassRelaxation.cuts`), appended after the rows above.

    Examples
    --------
    A 2 x 2 table with its totals (9 cells, 6 relations), one sensitive cell: columns
    ``p, q`` per cell and one binary, rows: relations and four per sensitive cell.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
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
    cuts = sp.csr_array((0, 2 * n)) if cuts is None else sp.csr_array(cuts)
    c = cuts.shape[0]
    matrix = sp.vstack([
        sp.hstack([equal, -equal, sp.csr_array((m, s))]),
        sp.hstack([select, none, -sp.diags_array(problem.upl)]),
        sp.hstack([select, none, -sp.diags_array(up_cap)]),
        sp.hstack([none, select, sp.diags_array(problem.lpl)]),
        sp.hstack([none, select, sp.diags_array(down_cap)]),
        sp.hstack([cuts, sp.csr_array((c, s))]),
    ], format="csr")
    lower = np.concatenate([np.zeros(m), np.zeros(s), np.full(s, -np.inf), problem.lpl,
                            np.full(s, -np.inf), np.zeros(c)])
    upper = np.concatenate([np.zeros(m), np.full(s, np.inf), np.zeros(s),
                            np.full(s, np.inf), down_cap, np.full(c, np.inf)])
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
    cuts: sp.sparray | None = None,
) -> tuple[SolveResult, np.ndarray | None, int]:
    """Solve the MILP with HiGHS, keeping quadratic limits by cuts.

    With a time limit the solves run in the solver's worker process
    (:func:`tabsdc.solver._isolated.solve_isolated`), which is ended if HiGHS runs past the
    limit (its presolve or root cuts can, by tens of seconds on large tables): the call
    returns within ``time_limit`` seconds, with whatever HiGHS had by then. Without one, in
    this process.

    Parameters
    ----------
    problem : CTAProblem
    time_limit : float, optional
        Seconds for all solves together (cut rounds re-solve with the time left).
    mip_gap : float, optional
        Relative gap at which HiGHS may stop (reported as not optimal).
    start : (y, up), optional
        A feasible adjustment and its directions, given to HiGHS as incumbent.
    cuts : sparse matrix, shape (c, 2 n), optional
        Valid rows ``cuts @ [p, q] >= 0`` (:func:`milp_program`).

    Returns
    -------
    result : SolveResult
        The last MILP solve (status, objective, dual bound, gap).
    up : ndarray of bool or None
        Directions of the solution (None without one).
    cuts : int
        Cuts added for quadratic limits.
    """
    program = milp_program(problem, cuts)
    deadline = Deadline(time_limit)
    n = problem.n
    x0 = None
    if start is not None:
        y, up = start
        x0 = np.concatenate([np.maximum(y, 0), np.maximum(-y, 0), up.astype(float)])
    model = None
    if not deadline.limited:
        model = CTAHighsModel(program, mip_gap=mip_gap)
        if x0 is not None:
            model.set_start(x0)
    extra: list[tuple[sp.csr_array, np.ndarray]] = []

    def run() -> SolveResult:
        if model is not None:
            return model.solve()
        left = deadline.solver_limit()
        options = SolveOptions(time_limit=left, mip_gap=mip_gap)
        current = _with_rows(program, extra)
        return solve_isolated(current, options, start=x0, within=left)

    def add_cuts(rows: sp.csr_array, upper: np.ndarray) -> None:
        rows = sp.csr_array(sp.hstack([rows, -rows, sp.csr_array((rows.shape[0], problem.s))],
                                      format="csr"))
        if model is not None:
            model.add_rows(rows, -np.inf, upper)
        else:
            extra.append((rows, upper))

    result, added = solve_with_cuts(problem, run, add_cuts, lambda r: r.x[:n] - r.x[n:2 * n])
    up = None if result.x is None else result.x[2 * n:] > 0.5
    return result, up, added


def _with_rows(program: LinearProgram, rows: list[tuple[sp.csr_array, np.ndarray]]
               ) -> LinearProgram:
    """``program`` with the rows ``matrix @ x <= upper`` appended."""
    if not rows:
        return program
    return replace(program, A=sp.vstack([program.A, *(r for r, _ in rows)], format="csr"),
                   row_lower=np.concatenate([program.row_lower,
                                             *(np.full(len(u), -np.inf) for _, u in rows)]),
                   row_upper=np.concatenate([program.row_upper, *(u for _, u in rows)]))
