"""L1 CTA by its MILP: the ``method="milp"`` of :func:`tabsdc.cta.adjust`.

Without a time limit HiGHS solves the MILP of :mod:`tabsdc.cta._milp` to optimality, in this
process. With one, three phases share the limit, and the answer is the best verified
adjustment any of them found, with the best bound any of them proved:

1. the **mass LP** of :mod:`tabsdc.cta._mass`, in the solver's worker process: its rows with
   positive multipliers are added to the MILP as cuts, and its certified bound joins
   HiGHS's dual bound;
2. meanwhile, in this process, the **fixed-directions adjustment** (the LP relaxation's
   directions and one LP: steps 1, 2 and 5 of :mod:`tabsdc.cta._heuristic`): the MILP's
   starting incumbent, and the answer when the MILP finds no better adjustment in its time
   (on large tables HiGHS's presolve and root node alone can take the whole limit: Castro's
   NINE12 at 60 s);
3. the **MILP** from that start, with the cuts, for the time left, in a worker process
   (ended if HiGHS runs past it, :func:`tabsdc.cta._milp.solve_milp`).

The MILP's solution is then *polished*: its directions are fixed and the LP of
:class:`~tabsdc.cta._lp.L1Model` re-solved, which removes the leakage that the integrality
tolerance allows through big-M rows (``I = 1e-6`` lets ``p`` reach ``1e-6 m+``) and gives
the exact best adjustment for those directions. When no phase finds an adjustment within
the limit, :class:`~tabsdc.NoSolutionError` says so.
"""

from __future__ import annotations

import numpy as np

from tabsdc._errors import NoSolutionError, SolverError
from tabsdc._progress import Deadline
from tabsdc.cta._heuristic import heuristic
from tabsdc.cta._lp import L1Model
from tabsdc.cta._mass import MASS_MAX_NONZEROS, MassJob, mass_nonzeros
from tabsdc.cta._milp import solve_milp
from tabsdc.cta._polish import polish
from tabsdc.cta._problem import CTAProblem
from tabsdc.cta._search import FINISH_SECONDS
from tabsdc.cta._solution import CTASolution, certify, infeasible
from tabsdc.solver import SolveResult

#: Share of the time limit the first two phases may take, the mass LP in the worker and the
#: fixed-directions adjustment here, at once (on small tables they take a fraction of a
#: second; NINE12's take about 20 s on a loaded two-core machine).
START_SHARE = 0.5


def milp_method(
    problem: CTAProblem, *, time_limit: float | None = None, mip_gap: float | None = None
) -> CTASolution:
    """L1 CTA by the MILP (see the module text).

    Parameters
    ----------
    problem : CTAProblem
    time_limit : float, optional
        Seconds for the whole method; without one the MILP is solved to optimality.
    mip_gap : float, optional
        Relative gap at which HiGHS may stop (reported as not optimal).

    Returns
    -------
    CTASolution
        ``details["found_by"]`` says which phase found the adjustment returned.

    Raises
    ------
    InputError
        The MILP is infeasible (e.g. a sensitive total with every other total fixed).
    NoSolutionError
        No phase found an adjustment within the time limit.

    Examples
    --------
    The total 12 = 7 + 5 with 7 sensitive (up 1 or down 3) and cost "count": the start moves it
    up with its total, and the MILP proves that nothing cheaper exists.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> total = Table(pd.DataFrame({"value": [12.0, 7.0, 5.0], "status": ["s", "u", "s"],
    ...                             "lpl": [0, 3.0, 0], "upl": [0, 1.0, 0]}), [[-1, 1, 1]], [0])
    >>> solution = milp_method(build_problem(total, "count"), time_limit=30)
    >>> solution.y.tolist(), solution.status, solution.details["found_by"]
    ([1.0, 1.0, 0.0], 'optimal', 'fixed directions')
    """
    deadline = Deadline(time_limit)
    job = None
    if mass_nonzeros(problem) <= MASS_MAX_NONZEROS:
        job = MassJob(problem, within=None if time_limit is None else START_SHARE * time_limit)
    start = None if time_limit is None else _start(problem, START_SHARE * time_limit)
    mass_cuts = None if job is None else job.cuts()
    left = deadline.remaining()
    result, up, cuts = solve_milp(
        problem, time_limit=(max(left - FINISH_SECONDS, 0.05 * left, 0.01) if deadline.limited
                             else None),
        mip_gap=mip_gap, cuts=mass_cuts,
        start=None if start is None else (start.y, start.up))
    if result.status == "infeasible":
        raise infeasible("the CTA MILP is infeasible")
    if up is None and start is None:
        raise NoSolutionError(f"the CTA MILP ended without a solution: {result.status} "
                              f"({result.message}); try method='heuristic' or a longer time "
                              "limit")
    details = {"milp_status": result.status, "milp_objective": result.objective,
               "milp_bound": result.bound, "milp_seconds": round(result.seconds, 3),
               "nodes": result.nodes, "cuts": cuts,
               "mass_cuts": None if mass_cuts is None else mass_cuts.shape[0],
               "start_objective": None if start is None else start.objective,
               "start_bound": None if start is None else start.bound}
    message = f"MILP (HiGHS): {result.message}"
    same = start is not None and up is not None and np.array_equal(up, start.up)
    if up is not None and not same:  # (the start is already the best for its directions)
        y = _polished(problem, result, up, deadline)
        objective, found_by = problem.objective(y), "MILP"
    if start is not None and (up is None or same or start.objective < objective):
        y, up, objective = start.y, start.up, start.objective
        found_by = "fixed directions"
        message = (f"fixed directions ({start.details['initial_directions']}): the MILP found "
                   f"no better adjustment ({result.status}: {result.message})")
    mass = None if mass_cuts is None else job.bound(objective)
    bound, gap, status = certify(objective, [result.bound, mass,
                                             None if start is None else start.bound])
    return CTASolution(y=y, up=up, objective=objective, bound=bound, status=status, gap=gap,
                       message=message, details={**details, "mass_bound": mass,
                                                 "found_by": found_by})


def _start(problem: CTAProblem, seconds: float) -> CTASolution | None:
    """The fixed-directions adjustment within ``seconds`` (None when it found none)."""
    try:
        return heuristic(problem, time_limit=seconds, max_passes=0, milp_phase=False,
                         mass_bound=False)
    except SolverError:  # no adjustment in its time: the MILP may still find one
        return None


def _polished(problem: CTAProblem, result: SolveResult, up: np.ndarray, deadline: Deadline
              ) -> np.ndarray:
    """The MILP's adjustment for its directions ``up``: the LP for them re-solved, then
    :func:`~tabsdc.cta._polish.polish`."""
    model = L1Model(problem, time_limit=deadline.solver_limit())
    model.fix(up)
    lp = model.solve()
    # the LP can fail where the MILP succeeded (numerics on very large models, the time
    # limit): then the MILP's own adjustment is polished
    source = lp if lp.optimal and lp.x is not None else result
    n = problem.n
    return polish(problem, source.x[:n] - source.x[n:2 * n], up,
                  seconds=max(deadline.remaining() - 0.5, 0.2) if deadline.limited else None)
