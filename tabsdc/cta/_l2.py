"""L2 controlled tabular adjustment: weighted least squares for fixed protection directions.

    minimise    sum_i w_i y_i**2
    subject to  A y = 0,  E y = 0,
                y_i >= upl_i (sensitive, up)   or   y_i <= -lpl_i (sensitive, down),
                -down_j <= y_j <= up_j          (every other cell; 0 for fixed cells)

is a convex quadratic program once the directions are fixed (Castro's two-norm CTA; his
benchmark instances fix every direction upward). HiGHS solves it with its QP solver, the
diagonal Hessian ``2 w`` passed to a kept model (:class:`L2Model`).

**Directions.** ``"up"``, ``"down"`` or one boolean per sensitive cell may be given
(impossible directions are refused). Otherwise they are read from the convex relaxation below
(up where the relaxed ``y`` is positive, ties at random) and improved by the block flips of
:mod:`tabsdc.cta._search` (QP re-solves).

**Relaxation and bound.** Over all directions the best L2 adjustment is a mixed-integer QP.
Replacing the cost ``w y**2`` of each sensitive cell on its set ``y <= -lpl or y >= upl`` by
its convex envelope - the chord ``w ((upl - lpl) y + lpl upl)`` between the protection
limits, ``w y**2`` beyond them - gives a convex QP whose optimum is a lower bound. The envelope
is written with ``y = c + d+ - d-``, ``-lpl <= c <= upl``, ``d+, d- >= 0``:

    w ((upl - lpl) c + lpl upl) + w (d+**2 + 2 upl d+) + w (d-**2 + 2 lpl d-),

which is ``w y**2`` beyond the limits and the chord between them. This is the best bound
Lagrangian duality can give (:mod:`tabsdc.cta._bounds`); the Lagrangian bound from the final
QP's duals is computed too, and the certified gap uses the larger.

References
----------
Castro, J. "Minimum-distance controlled perturbation methods for large-scale tabular data
protection", *European Journal of Operational Research* 171, 39-52, 2006.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError, SolverError
from tabsdc._progress import Deadline
from tabsdc.cta._bounds import lagrangian_bound
from tabsdc.cta._constraints import solve_with_cuts
from tabsdc.cta._heuristic import heuristic
from tabsdc.cta._highs import CTAHighsModel
from tabsdc.cta._polish import polish
from tabsdc.cta._problem import CTAProblem
from tabsdc.cta._search import Search, blocks, improve
from tabsdc.cta._solution import CTASolution, certify, infeasible
from tabsdc.solver import LinearProgram, SolveResult

#: Share of the time budget of the relaxation (the rest: the QP and the flips).
RELAXATION_SHARE = 0.3


def resolve_directions(problem: CTAProblem, directions: object) -> np.ndarray | None:
    """``"up"``/``"down"``/array -> checked booleans; None stays None.

    ``"up"`` and ``"down"`` apply to the cells that can move that way; the others keep their
    only possible direction.
    """
    if directions is None:
        return None
    if isinstance(directions, str):
        if directions not in ("up", "down"):
            raise InputError(f"directions must be 'up', 'down' or one boolean per sensitive "
                             f"cell, got {directions!r}")
        return np.where(problem.free_direction, directions == "up", problem.can_up)
    return problem.check_directions(directions)


class L2Model:
    """A kept HiGHS QP of L2 CTA whose directions can be fixed and re-solved.

    Examples
    --------
    Total ``y_0 = y_1 + y_2``, cell 1 sensitive (levels 2) moved up, cost "count": the move
    is shared by the total and cell 2 (``y = (1, 2, -1)``, objective 6).

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> line = Table.from_aggregated(pd.DataFrame({"c": ["x", "y"], "value": [4.0, 6.0]}), ["c"])
    >>> p = build_problem(line.with_columns(status=["s", "u", "s"], lpl=[0, 2, 0], upl=[0, 2, 0]),
    ...                   "count")
    >>> model = L2Model(p)
    >>> model.fix(np.array([True]))
    >>> result = model.solve()
    >>> np.round(model.adjustment(result), 6).tolist(), round(result.objective, 6)
    ([1.0, 2.0, -1.0], 6.0)
    """

    def __init__(self, problem: CTAProblem, *, time_limit: float | None = None) -> None:
        self.problem = problem
        lower, upper = problem.bounds(None)
        matrix = problem.constraint_matrix
        self._n_equal = matrix.shape[0]
        zero = np.zeros(self._n_equal)
        self.model = CTAHighsModel(LinearProgram(np.zeros(problem.n), matrix, zero, zero,
                                                 lower, upper), time_limit=time_limit)
        self.model.set_hessian_diagonal(2.0 * problem.cost)
        self.cuts = 0

    def fix(self, up: np.ndarray) -> None:
        """Fix the directions (True = up) for the next solves."""
        lower, upper = self.problem.bounds(up)
        k = self.problem.sensitive
        self.model.set_col_bounds(k, lower[k], upper[k])

    def solve(self, cutoff: float | None = None) -> SolveResult:
        """Solve (with cuts for quadratic limits); ``cutoff`` is passed to HiGHS."""
        self.model.set_cutoff(cutoff)
        result, added = solve_with_cuts(self.problem, self.model.solve,
                                        lambda rows, ub: self.model.add_rows(rows, -np.inf, ub),
                                        self.adjustment)
        self.cuts += added
        return result

    def adjustment(self, result: SolveResult) -> np.ndarray:
        """The adjustment ``y`` of a solution."""
        return result.x

    def duals(self, result: SolveResult) -> np.ndarray | None:
        """Row duals of ``[A; E]`` (None unless solved to optimality)."""
        return None if result.row_duals is None else result.row_duals[: self._n_equal]

    def set_time_limit(self, seconds: float | None) -> None:
        """Time limit of the next solves."""
        self.model.set_time_limit(seconds)


def l2_relaxation(
    problem: CTAProblem, rng: np.random.Generator, *, time_limit: float | None = None
) -> tuple[float | None, np.ndarray, str]:
    """Solve the convex relaxation of the module docstring.

    Returns
    -------
    bound : float or None
        Its optimum (None when not proven, e.g. at the time limit).
    up : ndarray of bool
        Directions read from the relaxed adjustment (the cheaper own move where unsolved).
    status : str
        The QP's status.
    """
    n, s, k = problem.n, problem.s, problem.sensitive
    w, wk = problem.cost, problem.cost[k]
    equal = problem.constraint_matrix
    m = equal.shape[0]
    link = sp.hstack([sp.csr_array((np.ones(s), (np.arange(s), k)), shape=(s, n)),
                      -sp.identity(s), -sp.identity(s), sp.identity(s)])
    matrix = sp.vstack([sp.hstack([equal, sp.csr_array((m, 3 * s))]), link], format="csr")
    zero = np.zeros(m + s)
    lower, upper = problem.bounds(None)
    c_low = np.where(problem.can_down, -problem.lpl, problem.upl)
    c_up = np.where(problem.can_up, problem.upl, -problem.lpl)
    plus_up = np.where(problem.can_up, problem.up[k] - problem.upl, 0.0)
    minus_up = np.where(problem.can_down, problem.down[k] - problem.lpl, 0.0)
    cost = np.concatenate([np.zeros(n), wk * (problem.upl - problem.lpl),
                           2 * wk * problem.upl, 2 * wk * problem.lpl])
    program = LinearProgram(cost, matrix, zero, zero,
                            np.concatenate([lower, c_low, np.zeros(2 * s)]),
                            np.concatenate([upper, c_up, plus_up, minus_up]),
                            offset=float(wk @ (problem.lpl * problem.upl)))
    model = CTAHighsModel(program, time_limit=time_limit)
    hessian = np.concatenate([2 * w, np.zeros(s), 2 * wk, 2 * wk])
    hessian[k] = 0.0
    model.set_hessian_diagonal(hessian)
    result = model.solve()
    if result.x is None:
        own = np.where(problem.free_direction, problem.upl <= problem.lpl, problem.can_up)
        return None, own, result.status
    y = result.x[k]
    tie = np.abs(y) <= 1e-9 * np.maximum(1.0, problem.upl + problem.lpl)
    up = np.where(tie, rng.random(s) < 0.5, y > 0)
    up = np.where(problem.free_direction, up, problem.can_up)
    return (result.objective if result.optimal else None), up, result.status


def l2_method(
    problem: CTAProblem,
    *,
    directions: object = None,
    time_limit: float | None = None,
    seed: int | np.random.Generator | None = None,
    max_passes: int = 3,
) -> CTASolution:
    """L2 CTA (the ``method="l2"`` of :func:`tabsdc.cta.adjust`); see the module docstring.

    Raises
    ------
    InputError
        No adjustment exists (for the given directions, or at all).
    SolverError
        HiGHS stopped without a solution (time limit).
    """
    deadline = Deadline(time_limit)
    rng = np.random.default_rng(seed)
    relaxed, relaxed_up, relaxed_status = l2_relaxation(
        problem, rng, time_limit=deadline.solver_limit(share=RELAXATION_SHARE))
    given = resolve_directions(problem, directions)
    up = relaxed_up if given is None else given
    model = L2Model(problem, time_limit=deadline.solver_limit())
    model.fix(up)
    result = model.solve()
    if result.status == "infeasible" and given is None and relaxed_status != "infeasible":
        # directions read from the relaxation may admit no adjustment: take those of the
        # L1 heuristic (repaired by LP diving or the MILP), feasible by construction
        up = heuristic(problem, time_limit=deadline.solver_limit(), seed=rng, max_passes=0,
                       milp_phase=False, mass_bound=False).up
        model.fix(up)
        result = model.solve()
    if result.status == "infeasible":
        raise infeasible("the L2 QP is infeasible"
                         + (" for the given directions" if given is not None else ""))
    if result.x is None or not result.optimal:
        raise SolverError(f"the L2 CTA QP ended {result.status} ({result.message}) for the "
                          "chosen directions")
    search = Search(model, up, result.objective, model.adjustment(result),
                    model.duals(result))
    if given is None:
        improve(search, blocks(problem, rng), deadline, 1.0, max_passes)
    y = polish(problem, search.y, search.up)
    objective = problem.objective(y, "l2")
    lagrangian = (None if search.duals is None
                  else lagrangian_bound(problem, search.duals, "l2", objective))
    bound, gap, status = certify(objective, [lagrangian, relaxed])
    details = {"directions": "given" if given is not None else "convex relaxation",
               "relaxation_status": relaxed_status, "relaxation_bound": relaxed,
               "lagrangian_bound": lagrangian, "trials": search.trials,
               "accepted": search.accepted, "cuts": model.cuts}
    source = "given directions" if given is not None else (
        f"directions from the convex relaxation, {search.accepted} of {search.trials} block "
        "flips kept")
    return CTASolution(y=y, up=search.up, objective=objective, bound=bound, status=status,
                       gap=gap, message=f"L2 QP (HiGHS), {source}", details=details)
