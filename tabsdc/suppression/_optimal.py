"""Optimal complementary suppression: a master MILP over the binaries plus capacity cuts.

The full Fischetti-Salazar model has a copy of the table per primary cell and direction. Here
the master holds only ``z`` (one binary per cell, ``min sum c_j z_j``), seeded with cheap valid
inequalities: a protected primary needs another suppressed cell in every relation it belongs
to. Each round solves the master, attacks its pattern (one kept HiGHS attacker model, see
:mod:`tabsdc.suppression._attacker`) and adds the capacity cut of every requirement the pattern
fails; when no requirement fails, the master's optimum is a proven optimal pattern.

Each round also repairs the master's pattern into a feasible one (heuristic routing, then
clean-up), so a time limit returns the best audit-clean pattern found with its gap against the
master's bound (or no pattern, when even the first repair did not finish in time).

Insider respondents (:mod:`tabsdc.audit._insider`). The respondent of a single-contributor
primary knows its value, so every other primary must keep its levels in the attacker's
LP with that respondent's cells fixed. A requirement the master's pattern meets is proved
against every respondent by certificates (:func:`tabsdc.audit.insider_proofs`); for each
scenario without one, the attacker LP with the respondent's cells fixed gives the capacity
cut (the same dual, the fixed cells immovable: coefficient 0). These cuts are valid for
every pattern protecting against that respondent, and a master optimum that passes the
outsider's and every respondent's attacks is optimal for the model with all of them, so a
proven optimum stays proven over the insider-aware model. The repaired incumbents protect
against the respondents too (:meth:`~tabsdc.suppression._attacker.Attacker.proof`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import SolverError
from tabsdc._flows import TOL, Requirement
from tabsdc._progress import Deadline, heartbeat
from tabsdc.solver import HighsModel, LinearProgram
from tabsdc.suppression._attacker import Attacker
from tabsdc.suppression._bound import dual_bound, starting_rows
from tabsdc.suppression._heuristic import FlowRouter, clean_up, heuristic_pattern

#: Relative gap under which a pattern is reported as proven optimal (the master's tie-breaking
#: cost is far below it).
PROVEN_GAP = 1e-6
ROUND_LIMIT = 2.0  # seconds for the first master MILP round; doubled when it binds
#: Integer-feasible points of a round's master MILP besides its optimum (the patterns
#: HiGHS met on its way) attacked for more cuts, the cheapest first, in at most the time
#: the round's MILP took. On the sub-tables of a 3,162-cell tau-ARGUS job, 5 to 20 times
#: fewer rounds: 96- to 120-cell sub-tables proven optimal in 6-14 s instead of 42-67 s
#: (docs/performance.md).
ROUND_POINTS = 20
#: Share of the time left after the first routing that its clean-up may take (every routed
#: cell is a candidate there, tried one at a time): the rest is the cut loop's, whose
#: relaxation gives the certified bound. Without it the clean-up of a 3,162-cell table's
#: 1,356 routed cells took all of tau-ARGUS's ``OPT(1,5)``: no bound, a gap of 100 %.
FIRST_CLEAN_UP_SHARE = 0.25


@dataclass(frozen=True)
class CutLoopStats:
    """Solver statistics of a suppression.

    ``status``: ``"optimal"`` (proven), ``"feasible"`` (a protecting pattern, not proven
    optimal; ``gap`` against ``bound`` when a bound is known, else ``nan``) or
    ``"no pattern"`` (the time limit came before any protecting pattern was complete).
    ``time_limited``: the time limit stopped the search. ``bound`` is a certified lower
    bound on the cost of every protecting pattern (:mod:`tabsdc.suppression._bound`) and
    ``bound_how`` names the relaxation that gave it.
    """

    status: str
    objective: float
    bound: float
    gap: float
    rounds: int
    cuts: int
    seed_rows: int
    attacker_solves: int
    seconds: float
    time_limited: bool = False
    bound_how: str = ""


def optimal_pattern(
    A: sp.csr_array,
    reqs: Sequence[Requirement],
    attacker: Attacker,
    router: FlowRouter,
    cost: np.ndarray,
    fixed_on: np.ndarray,
    fixed_off: np.ndarray,
    labels: Callable[[int], str],
    *,
    deadline: Deadline | None = None,
    progress: Callable[[str], None] | None = None,
    incumbent: np.ndarray | None = None,
    mip_gap: float = PROVEN_GAP,
) -> tuple[np.ndarray | None, CutLoopStats]:
    """Minimum-cost pattern protecting every requirement (see module docstring), against
    the attacker's respondents too when it has them (``attacker.insiders``). The pattern is
    None when ``deadline`` expired before any protecting pattern was complete.

    ``mip_gap``: the relative gap target (as in :class:`~tabsdc.solver.SolveOptions`): the
    loop stops once ``(cost - bound) / cost <= mip_gap`` for the incumbent; the status is
    ``"optimal"`` only within :data:`PROVEN_GAP` (the default: to the proof).

    ``incumbent``: a pattern known to protect every requirement (containing ``fixed_on``,
    none of ``fixed_off``), taken as the first incumbent and the master's start instead
    of the routing's repair; the result then never costs more.
    """
    deadline = deadline or Deadline(None)
    n = len(cost)
    cost = np.where(fixed_on, 0.0, cost)  # the objective counts new suppressions only
    removable = ~fixed_on & ~fixed_off
    # incumbent from the heuristic: an upper bound and the fallback under a time limit
    def repair(start: np.ndarray, report: Callable[[str], None] | None = None,
               clean_up_share: float = 1.0) -> np.ndarray | None:
        """Complete a pattern by routing; then drop what routing added and is not needed,
        within ``clean_up_share`` of the time then left (None: the deadline came first);
        ``report`` receives the routing's progress."""
        pattern, certificates, complete = heuristic_pattern(
            reqs, attacker, router, cost, start, labels, report, deadline=deadline)
        if not complete:
            return None
        return clean_up(reqs, attacker, cost, pattern, removable & ~start, certificates,
                        report, deadline=deadline.share(clean_up_share))

    if progress is not None:
        progress(f"optimal: {len(reqs)} protection requirements on {n} cells; first a "
                 "protecting pattern " + ("(the incumbent given)" if incumbent is not None
                                          else "by routing (the incumbent)"))
    best = (repair(fixed_on, progress, FIRST_CLEAN_UP_SHARE) if incumbent is None
            else incumbent.copy())
    best_cost = np.inf if best is None else float(cost @ best)
    if progress is not None:
        progress("incumbent: " + ("none before the time limit" if best is None else
                                  f"cost {best_cost:.6g}") + "; then cuts from the LP "
                 "relaxation, and rounds of the master MILP")
    tie = _tie_breaker(cost)
    seeds = starting_rows(A, reqs, attacker)
    relaxation = LinearProgram(
        c=cost + tie, A=seeds, row_lower=np.ones(seeds.shape[0]),
        row_upper=np.full(seeds.shape[0], np.inf), col_lower=fixed_on.astype(float),
        col_upper=(~fixed_off).astype(float))
    # phase 1: cuts from the LP relaxation's fractional patterns (cheap rounds); neither
    # phase builds its model once the deadline has expired (on large tables passing the
    # model to HiGHS alone takes seconds)
    cut_rows, cut_levels, bound = ([], [], 0.0) if deadline.expired else _relaxation_cuts(
        relaxation, reqs, attacker, tie, deadline, progress)
    rows = sp.vstack([seeds, *cut_rows], format="csr") if cut_rows else seeds
    with heartbeat(progress, "master MILP: building the model", quiet=True):
        master = None if deadline.expired else HighsModel(replace(
            relaxation, A=rows,
            row_lower=np.concatenate([np.ones(seeds.shape[0]), *cut_levels]),
            row_upper=np.full(rows.shape[0], np.inf), integrality=np.ones(n, dtype=bool)))
    rounds, cuts, status = 0, sum(r.shape[0] for r in cut_rows), "feasible"
    if master is not None:
        master.keep_feasible_points()
        if best is not None:
            master.set_start(best.astype(float))
    # a master that is slow to prove optimality still yields patterns whose failures give
    # cuts: cap each round's MILP and give the next round twice as long when the cap binds
    round_limit = ROUND_LIMIT
    while master is not None and not deadline.expired:
        master.set_time_limit(deadline.solver_limit(round_limit))
        with heartbeat(progress, f"round {rounds + 1}: master MILP", quiet=True):
            milp_start = deadline.clock()
            result = master.solve()
            milp_seconds = deadline.clock() - milp_start
        rounds += 1
        if not result.optimal:
            round_limit *= 2
        if result.bound is not None:  # the tie-breaker adds at most tie.sum() to any pattern
            bound = max(bound, float(result.bound) - float(tie.sum()))
        if not result.has_solution:
            break
        z = np.round(result.x).astype(bool)
        with heartbeat(progress, f"round {rounds}: attacks on the master's pattern",
                       quiet=True):
            violated = _violated(reqs, attacker, z, deadline)
        if violated is None:  # the deadline came during the attacks
            break
        if progress is not None:
            progress(f"round {rounds}: master cost {cost @ z:.6g}, bound {bound:.6g}, "
                     f"incumbent {best_cost:.6g}, {len(violated)} requirements fail")
        if not violated:
            if cost @ z < best_cost - 1e-9:
                best, best_cost = z, float(cost @ z)
            if result.optimal:
                status = "optimal"
                break
        else:
            more, protecting = cuts_at_points(master.feasible_points(), z, reqs, attacker,
                                              cost, fixed_on, deadline.clock,
                                              min(milp_seconds, deadline.remaining()))
            if protecting is not None and cost @ protecting < best_cost - 1e-9:
                best, best_cost = protecting, float(cost @ protecting)
            rows = sp.csr_array(np.unique(np.vstack([k for _, k in violated + more]), axis=0))
            master.add_rows(rows, 1.0, np.inf)
            cuts += rows.shape[0]
            # repair the master's pattern into a feasible one: a new incumbent candidate
            with heartbeat(progress, f"round {rounds}: repairing the master's pattern",
                           quiet=True):
                repaired = repair(z | fixed_on)
            if repaired is not None and cost @ repaired < best_cost - 1e-9:
                best, best_cost = repaired, float(cost @ repaired)
        if best_cost <= bound + mip_gap * max(1.0, abs(best_cost)):
            status = "optimal"
            break
    if best is None:
        return None, CutLoopStats("no pattern", np.nan, bound, np.nan, rounds, cuts,
                                  seeds.shape[0], attacker.n_solves, deadline.elapsed(),
                                  time_limited=True)
    bound = min(bound, best_cost)
    gap = (best_cost - bound) / max(abs(best_cost), 1e-10)
    if status == "optimal" and gap > PROVEN_GAP:
        status = "feasible"
    stats = CutLoopStats(status, best_cost, bound, gap, rounds, cuts, seeds.shape[0],
                         attacker.n_solves, deadline.elapsed(),
                         time_limited=deadline.hit and status != "optimal")
    return best, stats


def _relaxation_cuts(
    relaxation: LinearProgram,
    reqs: Sequence[Requirement],
    attacker: Attacker,
    tie: np.ndarray,
    deadline: Deadline,
    progress: Callable[[str], None] | None,
    max_rounds: int = 200,
) -> tuple[list[sp.csr_array], list[np.ndarray], float]:
    """Cut the LP relaxation until its fractional pattern protects every requirement
    (using at most half of the deadline's time)."""
    model = HighsModel(relaxation)
    rows, levels, bound = [], [], 0.0
    phase = deadline.share(0.5)
    for round_ in range(max_rounds):
        if phase.expired:
            break
        model.set_time_limit(phase.solver_limit())
        with heartbeat(progress, f"LP round {round_ + 1}: relaxation", quiet=True):
            result = model.solve()
        if not result.optimal:
            break
        # certified by weak duality from the row duals (not the primal objective), with the
        # costs without the tie-breaker
        bound = max(bound, dual_bound(sp.vstack([relaxation.A, *rows], format="csr"),
                                      result.row_duals, relaxation.c - tie,
                                      relaxation.col_lower, relaxation.col_upper))
        with heartbeat(progress, f"LP round {round_ + 1}: attacks on the relaxation",
                       quiet=True):
            violated = _violated(reqs, attacker, np.clip(result.x, 0.0, 1.0), phase)
        if violated is None:
            break
        if progress is not None:
            progress(f"LP round {round_ + 1}: bound {bound:.6g}, {len(violated)} cuts")
        if not violated:
            break
        block = sp.csr_array(np.vstack([k for _, k in violated]))
        model.add_rows(block, 1.0, np.inf)
        rows.append(block)
        levels.append(np.ones(block.shape[0]))
    return rows, levels, bound


def _violated(
    reqs: Sequence[Requirement], attacker: Attacker, z: np.ndarray, deadline: Deadline
) -> list[tuple[Requirement, np.ndarray]] | None:
    """Requirements the pattern fails, each with its capacity cut; when it fails none, the
    respondents' scenarios it fails (None: ``deadline`` expired before every requirement
    was attacked).

    A respondent's scenarios are examined only once the outsider's requirements all hold
    (the outsider's cuts come first and are cheaper to find). Each requirement is proved
    against every respondent by certificates (:func:`tabsdc.audit.insider_proofs`, over
    the whole pattern); a scenario without one fails exactly, and its attacker LP, the
    respondent's cells fixed, gives its cut."""
    attacker.set_pattern(z)
    out: list[tuple[Requirement, np.ndarray]] = []

    def attack(req: Requirement) -> None:
        reach, duals, _ = attacker.reach(req)
        if reach < req.level * (1 - TOL):
            out.append((req, attacker.cut(req, duals)))

    def against_insiders(req: Requirement) -> None:
        for scenario in attacker.failing_scenarios(req):
            attack(scenario)

    passes = [attack] + ([against_insiders] if attacker.insiders is not None else [])
    for check in passes:
        for req in reqs:
            if deadline.expired:
                return None
            try:
                check(req)
            except SolverError:
                if deadline.expired:  # the attack LP was stopped by the time limit
                    return None
                raise
        if out:
            break
    return out


def cuts_at_points(
    points: np.ndarray, z: np.ndarray, reqs: Sequence[Requirement], attacker: Attacker,
    cost: np.ndarray, fixed_on: np.ndarray, clock: Callable[[], float], seconds: float
) -> tuple[list[tuple[Requirement, np.ndarray]], np.ndarray | None]:
    """The cuts of the requirements failing at the master's other integer-feasible points
    (:data:`ROUND_POINTS` of them at most, the cheapest first, ``z`` itself skipped) within
    ``seconds`` on ``clock``, and the cheapest of them that protects every requirement
    (None: none does). Each point satisfies every cut so far, so each cut found is new to
    the master: one round then cuts off many of its candidate patterns, not one."""
    patterns = np.unique(np.round(points).astype(bool) | fixed_on, axis=0)
    patterns = patterns[(patterns != z).any(axis=1)]
    patterns = patterns[np.argsort(patterns @ cost, kind="stable")][:ROUND_POINTS]
    end = clock() + seconds
    cuts: list[tuple[Requirement, np.ndarray]] = []
    protecting = None
    for pattern in patterns:
        if clock() >= end:
            break
        failing = _violated(reqs, attacker, pattern, Deadline(end - clock(), clock=clock))
        if failing is None:
            break
        if not failing and protecting is None:
            protecting = pattern
        cuts += failing
    return cuts, protecting


def _tie_breaker(cost: np.ndarray) -> np.ndarray:
    """A tiny per-cell cost so that zero-cost cells are not suppressed for nothing."""
    positive = cost[cost > 0]
    unit = (positive.min() if len(positive) else 1.0) * 1e-7 / max(len(cost), 1)
    return np.full(len(cost), unit)
