"""L1 CTA for large tables: fix the protection directions, solve the LP, improve by flipping.

The MILP of :mod:`tabsdc.cta._milp` has one binary per sensitive cell; once every binary is
fixed, what remains is an LP (:class:`~tabsdc.cta._lp.L1Model`) that HiGHS solves fast and
re-solves faster from the previous basis. The heuristic:

0. **Mass LP, alongside.** With a time limit, the mass LP of :mod:`tabsdc.cta._mass` (a
   lower bound that pays for the compensation each move needs in every relation) is
   handed at once to the solver's worker process, which solves it on the second core while
   steps 1-3 run here, and is over before step 4.
1. **Directions from the LP relaxation.** Solve the relaxation (it also gives the first
   certified lower bound) and round it (:func:`~tabsdc.cta._lp.directions_from_relaxation`:
   cells tied by two-cell relations take one direction, and a relation whose movable cells
   all have a decided sign gets moves of both signs,
   :func:`~tabsdc.cta._search.consistent_directions`). If the relaxation does not finish in
   its share of the time, each cell takes the direction of its cheaper own move (``w upl``
   against ``w lpl``, made consistent the same way).
2. **LP for fixed directions**, warm-started from the relaxation's basis: the incumbent.
   Rounding can still pick directions that admit no adjustment (sign conditions that chain
   through several relations; preserved statistics); they are then repaired by moving every
   sensitive cell up (one LP), by LP diving (:func:`_dive`: fix what the relaxation decides,
   round a few cells, re-solve) and, failing that, by the MILP for the time left.
3. **Block coordinate descent on the directions** (in the spirit of González and Castro
   2011): the direction variables are split into blocks - each group of tied sensitive
   cells, and the sensitive cells of each relation together with their groups - visited in
   random order (``seed``). A block's directions are flipped and the LP re-solved from the
   current basis with an objective cutoff at the incumbent (the dual simplex stops as soon as
   the flip cannot win); a flip that lowers the objective is kept. Passes repeat until one
   brings no improvement, the pass limit or the time budget.
4. **MILP with the incumbent as start** (only with a time limit, for the time left, and for
   models up to :data:`MILP_PHASE_MAX_CELLS` cells), with the mass LP's binding rows as
   cuts, in the worker process, which is ended if HiGHS runs past the time left
   (:func:`~tabsdc.cta._milp.solve_milp`): HiGHS's branch and cut tightens the lower bound
   and may find a better incumbent, whose directions are then re-solved as in 2.
5. **Certified gap**: the best of the MILP's dual bound, the mass LP's bound and the
   Lagrangian bounds (:mod:`tabsdc.cta._bounds`) at the duals of the relaxation and of the
   final LP. The relaxation's and the mass LP's bounds are taken as Lagrangians at their
   duals, not as the objectives HiGHS reports: weak duality makes them valid for any
   multipliers, whatever the solver's tolerances, and with optimal duals they equal the
   LPs' optima. The status is ``"optimal"`` only when that bound proves it.

A time-limited run ends within its limit: every LP here gets the time left, the MILP runs
in the worker process (ended when late), the mass LP is over before the MILP phase, and the
last :data:`~tabsdc.cta._search.FINISH_SECONDS` are kept for the last LP, the polishing (in
bounded rounds, :func:`~tabsdc.cta._polish.polish`) and the bounds.

References
----------
González, J. A. and Castro, J. "A heuristic block coordinate descent approach for controlled
tabular adjustment", *Computers & Operations Research* 38(12), 1826-1835, 2011.
Cox, L. H., Kelly, J. P. and Patil, R. "Balancing quality and confidentiality for
multivariate tabular data", *PSD 2004*, LNCS 3050, 87-98.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tabsdc._errors import NoSolutionError, SolverError
from tabsdc._progress import Deadline
from tabsdc.cta._bounds import lagrangian_bound
from tabsdc.cta._lp import L1Model, directions_from_relaxation, relaxed_indicators
from tabsdc.cta._mass import MASS_MAX_NONZEROS, MassJob, mass_nonzeros
from tabsdc.cta._milp import solve_milp
from tabsdc.cta._polish import polish
from tabsdc.cta._problem import CTAProblem
from tabsdc.cta._search import (
    FINISH_SECONDS,
    Search,
    blocks,
    consistent_directions,
    improve,
)
from tabsdc.cta._solution import CTASolution, certify, infeasible
from tabsdc.solver import SolveResult

#: Largest problem (cells, all tables together) for which the MILP phase is run: above it,
#: HiGHS's presolve and root LP alone would take the whole budget.
MILP_PHASE_MAX_CELLS = 200_000

#: Share of the time budget the relaxation may use before the rule directions are taken.
RELAXATION_SHARE = 0.4

#: Share of the undecided directions one LP-diving step rounds (:func:`_dive`).
DIVE_SHARE = 0.1

#: Share of the time budget for steps 1-3 when the MILP phase follows.
SEARCH_SHARE = 0.5


def _rule_directions(problem: CTAProblem) -> np.ndarray:
    own_up = problem.cost[problem.sensitive] * problem.upl
    own_down = problem.cost[problem.sensitive] * problem.lpl
    return consistent_directions(problem, own_down - own_up)


def _initial(problem: CTAProblem, deadline: Deadline, share: float
             ) -> tuple[L1Model, np.ndarray, np.ndarray | None, dict]:
    """Step 1: relaxation and rounding. Returns the model, the directions, the relaxation's
    row duals (None when it did not finish) and the figures so far."""
    model = L1Model(problem, time_limit=deadline.solver_limit(share=RELAXATION_SHARE * share))
    relaxation = model.relax()
    info: dict = {"relaxation_status": relaxation.status,
                  "relaxation_seconds": round(relaxation.seconds, 3)}
    if relaxation.status == "infeasible":
        raise infeasible("the LP relaxation is infeasible")
    duals = model.duals(relaxation) if relaxation.optimal else None
    if relaxation.optimal:
        n = problem.n
        up = directions_from_relaxation(problem, relaxation.x[:n], relaxation.x[n:])
        info["initial_directions"] = "LP relaxation"
    else:
        up = _rule_directions(problem)
        info["initial_directions"] = "cheaper own move (relaxation stopped by the time limit)"
    info["lp_relaxation_objective"] = relaxation.objective if relaxation.optimal else None
    return model, up, duals, info


def _dive(problem: CTAProblem, model: L1Model, deadline: Deadline, info: dict) -> np.ndarray | None:
    """LP diving for directions that admit an adjustment (when rounding found none).

    The relaxation is solved; the directions it already decides (a cell moved by its whole
    protection level one way and not at all the other) are fixed, which keeps its solution
    feasible. When it decides none, the :data:`DIVE_SHARE` most one-sided undecided cells
    are rounded and the relaxation re-solved from its basis; if that is infeasible, only the
    most one-sided cell is rounded, then the other way. Stops when every direction is fixed;
    returns None when all three roundings fail or a solve is stopped by the time limit.
    """
    n = problem.n
    fixed = np.zeros(problem.s, dtype=bool)
    up = problem.can_up.copy()
    model.set_time_limit(deadline.solver_limit())
    result = model.relax()
    steps = 0
    while result.optimal and result.x is not None:
        moved_up, moved_down = relaxed_indicators(problem, result.x[:n], result.x[n:])
        whole = 1 - 1e-7
        decided_up = ~fixed & (moved_up >= whole) & (moved_down <= 1e-7)
        decided = decided_up | (~fixed & (moved_down >= whole) & (moved_up <= 1e-7))
        if decided.any():
            up[decided], fixed[decided] = decided_up[decided], True
            if fixed.all():
                info["dive_steps"] = steps
                return up
            trials = [(np.flatnonzero(decided), decided_up[decided])]
        else:
            score = moved_up - moved_down
            undecided = np.flatnonzero(~fixed)
            order = undecided[np.argsort(-np.abs(score[undecided]), kind="stable")]
            count = max(1, int(DIVE_SHARE * undecided.size))
            lean = np.where(problem.free_direction, score > 0, problem.can_up)
            other = np.where(problem.free_direction, ~lean, lean)
            best = order[:1]
            trials = [(order[:count], lean[order[:count]]), (best, lean[best]),
                      (best, other[best])]
        for cells, directions in trials:
            steps += 1
            up[cells], fixed[cells] = directions, True
            model.fix(directions, cells)
            model.set_time_limit(deadline.solver_limit())
            result = model.solve()
            if result.optimal and result.x is not None:
                break
            model.release(cells)
            fixed[cells] = False
        if result.optimal and fixed.all():
            info["dive_steps"] = steps
            return up
    return None


def _solve_fixed(model: L1Model, up: np.ndarray, deadline: Deadline) -> SolveResult:
    """The LP for the directions ``up``: interior point (a fresh start after many bounds
    changed), the dual simplex when that gives no usable point."""
    model.set_time_limit(deadline.solver_limit())
    model.fix(up)
    result = model.solve(interior=True)
    if result.optimal and result.x is None:  # interior point without a usable point
        result = model.solve()
    if result.optimal and result.x is None:
        raise SolverError("HiGHS reported the LP for fixed directions optimal without a "
                          "primal feasible point (numerical trouble on this model)")
    return result


def _first_solution(problem: CTAProblem, model: L1Model, up: np.ndarray, deadline: Deadline,
                    info: dict) -> Search:
    """Step 2, with three repairs when the rounded directions admit no adjustment (e.g.
    preserved statistics): every cell upward (where it can be, and cells tied the other way
    to an upward one downward, :func:`~tabsdc.cta._search.consistent_directions`: a relation
    ``total = sum of parts`` whose cells all move up only needs room above its total, so this
    is feasible whenever the totals have that room; Castro's CTA instances are built that
    way), LP diving, then the MILP for the time left.

    When the rounding succeeds and differs from every cell upward, that LP is solved too and
    the better kept: the relaxation often splits most sensitive cells evenly (on Castro's
    TABLE1, 95 of 146), and the rounded directions of those (upward) can cost far more."""
    upward = consistent_directions(problem, np.ones(problem.s))
    for attempt in ("rounding", "every cell upward", "diving", "MILP"):
        if attempt == "every cell upward":
            up = upward
        elif attempt == "diving":
            up = _dive(problem, model, deadline, info)
        elif attempt == "MILP":
            milp, up, _ = solve_milp(problem, time_limit=deadline.solver_limit())
            if milp.status == "infeasible":
                raise infeasible("the CTA MILP is infeasible")
            if up is None:
                raise NoSolutionError(f"no feasible directions found: MILP {milp.status} "
                                      f"({milp.message}); try a longer time limit")
        if up is None:
            continue
        result = _solve_fixed(model, up, deadline)
        if result.optimal:
            if attempt != "rounding":
                info["initial_directions"] += f"; repaired by {attempt}"
            elif np.any(up != upward) and deadline.remaining(0.5) > 0:
                other = _solve_fixed(model, upward, deadline)
                if other.optimal and other.objective < result.objective:
                    up, result = upward, other
                    info["initial_directions"] += "; every cell upward was better"
            return Search(model, up, result.objective, model.adjustment(result),
                          model.duals(result))
        if result.status == "no_solution":
            raise NoSolutionError(f"the time limit was reached before a first adjustment "
                                  f"was found (directions by {attempt}); use a longer time "
                                  "limit")
        if result.status != "infeasible":
            raise NoSolutionError(f"the LP for fixed directions ended {result.status}")
    raise SolverError("the LP for the MILP's directions is infeasible")


def heuristic(
    problem: CTAProblem,
    *,
    time_limit: float | None = None,
    seed: int | np.random.Generator | None = None,
    max_passes: int = 3,
    milp_phase: bool = True,
    mass_bound: bool = True,
) -> CTASolution:
    """Run the heuristic of the module docstring.

    Parameters
    ----------
    problem : CTAProblem
    time_limit : float, optional
        Seconds in all. Without one, the search runs until a pass brings no improvement and
        the MILP phase is skipped (the bound is then the best of the LP relaxation's, the
        Lagrangian and the mass LP's).
    seed : int or numpy Generator, optional
        Order of the blocks.
    max_passes : int
        Passes over the blocks.
    milp_phase : bool
        Run step 4 when there is a time limit and time left.
    mass_bound : bool
        Solve the mass LP of :mod:`tabsdc.cta._mass` for the bound and the MILP's cuts (with a
        time limit in the solver's worker process, alongside steps 1-3).

    Returns
    -------
    CTASolution
    """
    deadline = Deadline(time_limit)
    rng = np.random.default_rng(seed)
    with_milp = (milp_phase and time_limit is not None and problem.n <= MILP_PHASE_MAX_CELLS)
    share = SEARCH_SHARE if with_milp else 1.0
    job = _mass_job(problem, deadline, share) if mass_bound else None
    model, up, relaxation_duals, info = _initial(problem, deadline, share)
    search = _first_solution(problem, model, up, deadline, info)
    info["initial_objective"] = search.objective
    improve(search, blocks(problem, rng), deadline, share, max_passes)
    info.update(passes=search.passes, trials=search.trials, accepted=search.accepted,
                search_objective=search.objective, search_seconds=round(deadline.elapsed(), 3))
    cuts = None
    if job is not None and deadline.remaining() > FINISH_SECONDS:
        cuts = job.cuts()
        info.update(mass_seconds=job.seconds, mass_cuts=None if cuts is None else cuts.shape[0])
    milp_bound = None
    left = deadline.remaining()
    if with_milp and left > FINISH_SECONDS + 0.5:
        milp, milp_up, _ = solve_milp(problem, time_limit=left - FINISH_SECONDS,
                                      start=(search.y, search.up), cuts=cuts)
        milp_bound = milp.bound
        info.update(milp_status=milp.status, milp_bound=milp.bound,
                    milp_objective=milp.objective, milp_seconds=round(milp.seconds, 3))
        if (milp_up is not None and milp.objective < search.objective - 1e-9
                and deadline.remaining() > 0):
            model.set_time_limit(deadline.solver_limit())
            model.fix(milp_up)
            result = model.solve()
            if result.optimal and result.x is not None and result.objective < search.objective:
                search.up, search.objective = milp_up, result.objective
                search.y, search.duals = model.adjustment(result), model.duals(result)
    y = polish(problem, search.y, search.up,
               seconds=None if time_limit is None else max(deadline.remaining() - 0.5, 0.2))
    objective = problem.objective(y)
    lp_bound, lagrangian = (None if duals is None
                            else lagrangian_bound(problem, duals, "l1", objective)
                            for duals in (relaxation_duals, search.duals))
    mass = None if cuts is None else job.bound(objective)
    info.update(lp_relaxation_bound=lp_bound, lagrangian_bound=lagrangian, mass_bound=mass,
                cuts=model.cuts)
    bound, gap, status = certify(objective, [lp_bound, milp_bound, lagrangian, mass])
    message = (f"heuristic: {info['initial_directions']}, {search.accepted} of {search.trials} "
               f"block flips kept in {search.passes} pass(es)"
               + ("" if milp_bound is None else ", MILP phase for the bound")
               + ("" if mass is None else ", mass LP bound"))
    return CTASolution(y=y, up=search.up, objective=objective, bound=bound, status=status,
                       gap=gap, message=message, details=info)


def _mass_job(problem: CTAProblem, deadline: Deadline, share: float) -> MassJob | None:
    """The mass LP, started at once: with a time limit in the worker process, to be over
    before the MILP phase (or, without one, before the end less :data:`FINISH_SECONDS`);
    None when it would be too large."""
    if mass_nonzeros(problem) > MASS_MAX_NONZEROS:
        return None
    if not deadline.limited:
        return MassJob(problem, within=None)
    within = deadline.remaining(share) - (FINISH_SECONDS if share == 1.0 else 0.5)
    return MassJob(problem, within=within) if within > 1.0 else None


def fixed_directions(
    problem: CTAProblem,
    *,
    time_limit: float | None = None,
    seed: int | np.random.Generator | None = None,
) -> CTASolution:
    """CTA with fixed directions: one LP (the ``method="fixed-directions"`` of
    :func:`tabsdc.cta.adjust`).

    Steps 1, 2 and 5 of the module docstring: the protection directions are read from the LP
    relaxation (or, if it does not finish in its share of ``time_limit``, each cell's cheaper
    own move), and the LP for those directions is solved once; directions that admit no
    adjustment are repaired as in step 2. No flips, no MILP: an answer in the time of two
    LPs, with the certified gap of the Lagrangian bounds. This is the fast CTA of Castro's
    work, where the directions are given and only the LP (or QP) is solved.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2.0, 0], "upl": [0, 2.0, 0]})
    >>> solution = fixed_directions(build_problem(Table(cells, [[-1, 1, 1]], [0]), "count"),
    ...                             seed=0)
    >>> solution.objective, round(solution.bound, 6), solution.status
    (4.0, 4.0, 'optimal')
    >>> solution.details["lp_relaxation_bound"]  # the mass LP's bound proves it, not this
    2.0
    """
    solution = heuristic(problem, time_limit=time_limit, seed=seed, max_passes=0,
                         milp_phase=False)
    message = f"fixed directions: {solution.details['initial_directions']}, one LP"
    return replace(solution, message=message)
