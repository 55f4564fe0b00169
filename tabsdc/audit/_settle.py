"""Settling every sensitive cell's requirements with few LPs: the audit of any pattern at scale.

The interval attack (:mod:`tabsdc.audit._intervals`) solves two LPs over a whole block per
hidden cell; on a pattern of 10^4 hidden cells in one block that is 2 x 10^4 LPs of 10^4
columns, hours. A verdict needs less: for each sensitive cell ``j`` and each of its
requirements, either **a point** of the attacker's polytope that reaches the target (the
requirement is met: ``max x_j >= a_j + upl_j`` when some table the intruder cannot rule out
has ``x_j >= a_j + upl_j``) or **an outer bound** that misses it (the cell is exposed). This
module settles each requirement one way or the other, per group of blocks of hidden cells,
both directions together, by rounds of:

1. **joint points** (:func:`tabsdc.audit._joint_points.joint_point`): LPs that move every
   pending cell toward its target at once (a cell with both requirements pending toward
   its upper target in one round, its lower one in the next), each on a **region** of the
   block: hidden
   cells grown hop by hop from a pending cell (:meth:`tabsdc.audit._block.Block.grown`), every
   other hidden cell at its true value (a restriction, whose points are points of the whole
   polytope). Each pending cell not yet in a region of the round seeds the next one, which
   serves every pending requirement it holds. The regions start at ``window`` cells
   (:data:`REGION_CELLS`) and double after a round that settles less than half of what was
   pending, up to the whole block: a cell whose protection runs through distant cells
   (e.g. up and down a hierarchy) is settled once its region holds them.
2. **relaxations** (:func:`tabsdc.audit._outer_bounds.relaxed_extreme`), one hop wider each
   round: a pending requirement whose relaxed extreme already misses its target is missed
   (the cell is exposed). Missed requirements leave the rounds, so they do not hold the
   joint points back. They only show exposure, so their share of a round shrinks while they
   show nothing.
3. when the regions span the block and a round settles less than a tenth, **one
   requirement's exact extreme**: the joint point of that cell alone over the whole block,
   which either reaches the target or is the exact maximum (or minimum) of the cell: the
   attack's own LP, capped at the target.

Each round settles at least one requirement, so the rounds end. Points also move other
cells, non-sensitive ones included: :class:`Settlement` keeps every cell's widest inner
bounds. Tolerances: a target ``T`` counts as reached within ``margin`` (the verdict's
tolerance), an outer bound misses it when it falls short by more than ``margin``.

Blocks are grouped (small blocks together, so that one LP serves many). The joint points of
a round are planned from the state at its start and are independent: they are the tasks of
:func:`tabsdc._parallel.parallel_map`, whose results are taken in order, so ``n_jobs=1``,
``n_jobs=k`` and a Dask cluster give the same result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tabsdc._parallel import parallel_map, resolve_jobs
from tabsdc._progress import Deadline, Progress, ProgressReporter
from tabsdc.audit._block import Block
from tabsdc.audit._intervals import IntervalAttack
from tabsdc.audit._joint_points import joint_point
from tabsdc.audit._outer_bounds import relaxed_extreme
from tabsdc.solver import LinearProgram

#: Blocks are gathered into groups of at least this many hidden cells (one LP per region
#: for all of them); a larger block is a group of its own.
GROUP_CELLS = 4096

#: The relaxations of a round cost at most a share of what its joint points did, counting a
#: relaxation of ``s`` cells as ``RELAXATION_COST + s / RELAXATION_SPEED`` cells of joint
#: point (the dual simplex on a small relaxation against the interior point method on a
#: region, measured on the 4-D hypercube pattern of 27,005 hidden cells: a relaxation of 15
#: cells takes 1.6 ms, one of 371 cells 4.3 ms, a joint point about 60 us per cell of its
#: region of 2,048). The share starts at 1, is divided by 4 after a round whose relaxations
#: showed nothing (down to ``1 / 64``: on a protected pattern they only cost) and doubled
#: after one that did.
RELAXATION_COST, RELAXATION_SPEED = 25, 8

#: A relaxation of more cells is not solved (nor one of more than an eighth of the block):
#: it would cost about as much as the exact extreme and rarely shows anything.
RELAXATION_CELLS = 512
#: Once the regions span the block and a round settles little, the relaxations may grow
#: fourfold per such round up to this many cells before the exact extreme of one
#: requirement is taken (a relaxation of 4,096 cells by the dual simplex costs a fraction
#: of one exact extreme over a block of 10^4 cells, and an exposure that runs through a
#: hierarchy's subtotals shows there).
TAIL_RELAXATION_CELLS = 8192

#: Joint points are first solved on regions of at most this many hidden cells. The interior
#: point method's time grows faster than the cells: on the 4-D hypercube pattern of 27,005
#: hidden cells (load average 6), about 0.1 s for 2,048 cells, 1 s for 4,096, 6 s for
#: 8,192, 30 to 70 s for 16,384. Regions grown around the pending cells hold what protects
#: most of them at this size (measured on that pattern: 11,285 upper requirements, 1,180
#: left after the first round of regions of 2,048 cells, 173 after one of 4,096, none after
#: one of 8,192).
REGION_CELLS = 2048


@dataclass(frozen=True)
class Settlement:
    """What the rounds settled, one entry per hidden cell (the attack's order).

    Attributes
    ----------
    lower, upper : ndarray
        Inner bounds: the widest values the points found (and the starting bounds) give each
        cell; the exact interval contains ``[lower, upper]``.
    missed_lower, missed_upper : ndarray
        Outer bounds proving a requirement missed (the exact ``min`` is at least
        ``missed_lower``, which lies above ``a - lpl``; the exact ``max`` at most
        ``missed_upper``, below ``a + upl``); NaN where that requirement was not missed.
    requested : ndarray of bool
        The cells with a requirement the starting bounds did not meet.
    open : ndarray of bool
        A requirement of the cell was left undecided (the deadline came first, or the solver
        failed on its own LP: the exact interval attack is then the way to settle it).
    n_lps : int
        LPs solved.
    """

    lower: np.ndarray
    upper: np.ndarray
    missed_lower: np.ndarray
    missed_upper: np.ndarray
    requested: np.ndarray
    open: np.ndarray
    n_lps: int

    @property
    def exposed(self) -> np.ndarray:
        """Cells with a requirement shown missed."""
        return ~np.isnan(self.missed_lower) | ~np.isnan(self.missed_upper)


def settle_requirements(
    attack: IntervalAttack,
    values: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    targets: tuple[np.ndarray, np.ndarray],
    margins: np.ndarray,
    *,
    known: np.ndarray | None = None,
    window: int = REGION_CELLS,
    deadline: Deadline | None = None,
    progress: Progress | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
) -> Settlement:
    """Settle the requirements ``max x_j >= upper target`` and ``min x_j <= lower target``.

    Parameters
    ----------
    attack : IntervalAttack
        The attacker's polytope (its blocks, rows and bounds).
    values : ndarray
        True value of every hidden cell (the attack's order), as the other arrays.
    lower, upper : ndarray
        Inner bounds known already (e.g. from checked witnesses; ``values`` if none).
    targets : (ndarray, ndarray)
        The lower and upper targets (``a - lpl``, ``a + upl``); NaN where a cell has no
        requirement on that side (a non-sensitive cell). Requirements the starting bounds
        meet are not looked at.
    margins : ndarray
        The verdict's tolerance per cell.
    known : ndarray of bool, optional
        Cells whose value the published ones give away (e.g. by elimination,
        :func:`tabsdc.audit._witnesses.derived_cells`): held at their values in every LP,
        which changes no bound but makes the relaxations around them exact sooner.
    window : int
        Hidden cells of the first rounds' regions (:data:`REGION_CELLS`).
    deadline : Deadline, optional
        When it expires, what is pending stays open.
    progress : callable, optional
        Receives progress lines: requirements settled, LPs, and the time left.
    n_jobs, client
        Solve the joint points of a round in processes or on a Dask cluster.

    Returns
    -------
    Settlement

    Examples
    --------
    Cox's 2 x 2 cycle (slides 17-20): the four inner cells hidden, ``x`` = 10 sensitive with
    levels 2; the cycle moves it down to 2 and up to 15, so joint points meet both targets.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> t = Table.from_aggregated(pd.DataFrame({"r": list("1122"), "c": list("1212"),
    ...                           "value": [10.0, 5, 7, 8]}), ["r", "c"])
    >>> hidden = np.zeros(9, bool); hidden[[4, 5, 7, 8]] = True
    >>> attack = IntervalAttack(t.A, t.b, t.values, hidden, np.zeros(9), np.full(9, np.inf))
    >>> a = t.values[attack.hidden_cells]
    >>> nan = np.full(4, np.nan)
    >>> low, high = nan.copy(), nan.copy(); low[0], high[0] = 8.0, 12.0
    >>> s = settle_requirements(attack, a, a, a, (low, high), np.full(4, 1e-6))
    >>> bool(s.upper[0] >= 12 and s.lower[0] <= 8), bool(s.open.any() or
    ...                                                  np.isfinite(s.missed_upper).any())
    (True, False)
    """
    deadline = deadline or Deadline(None)
    lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
    requested = _pending(lower, upper, targets, margins)
    known = np.zeros(len(values), dtype=bool) if known is None else known
    groups = []
    for members in _groups(attack, requested):
        up = [_short(upper[members], targets[1][members], margins[members], "max"),
              _short(lower[members], targets[0][members], margins[members], "min")]
        cells = np.concatenate([np.flatnonzero(side) for side in up])
        sense = np.repeat([True, False], [int(side.sum()) for side in up])
        goal = np.where(sense, targets[1][members][cells], targets[0][members][cells])
        groups.append((members, _Rounds(_block(attack, values, known, members), cells, goal,
                                        margins[members][cells], sense, window)))
    total = sum(len(rounds.cells) for _, rounds in groups)
    reporter = ProgressReporter(progress, "settling requirements", total, unit="requirements")
    parallel = client is not None or resolve_jobs(n_jobs) > 1
    if parallel and progress is not None:
        progress(f"settling requirements: {total:,} in {len(groups)} block groups, the joint "
                 "points of each round in parallel")
    while not deadline.expired:
        active = [rounds for _, rounds in groups if rounds.pending.any()]
        if not active:
            break
        plans = [rounds.plan() for rounds in active]
        problems = [problem for plan in plans for _, _, problem in plan]
        if parallel:
            points = parallel_map(_solve, [(*p, deadline.solver_limit()) for p in problems],
                                  n_jobs=n_jobs, client=client)
        else:
            points = [None if deadline.expired else _solve((*p, deadline.solver_limit()))
                      for p in problems]
        for rounds, plan in zip(active, plans, strict=True):
            rounds.take(plan, points[:len(plan)])
            points = points[len(plan):]
            rounds.after(deadline)
        reporter.update(total - sum(int(rounds.pending.sum()) for _, rounds in groups),
                        _time_left(deadline))
    missed = {"min": np.full(len(values), np.nan), "max": np.full(len(values), np.nan)}
    opened = np.zeros(len(values), dtype=bool)
    lps = 0
    for members, rounds in groups:
        lower[members] = np.minimum(lower[members], rounds.lower)
        upper[members] = np.maximum(upper[members], rounds.upper)
        for sense, side in (("max", rounds.up), ("min", ~rounds.up)):
            missed[sense][members[rounds.cells[side]]] = rounds.missed[side]
        opened[members[rounds.cells[rounds.pending | rounds.failed]]] = True
        lps += rounds.lps
    missed_count = int((~np.isnan(missed["min"]) | ~np.isnan(missed["max"])).sum())
    left = sum(int((rounds.pending | rounds.failed).sum()) for _, rounds in groups)
    reporter.finish(total - left, f"{lps:,} LPs; {missed_count:,} cells miss a requirement"
                    + (f" ({deadline.why})" if opened.any() else ""))
    return Settlement(lower, upper, missed["min"], missed["max"], requested, opened, lps)


def _pending(lower: np.ndarray, upper: np.ndarray, targets: tuple[np.ndarray, np.ndarray],
             margins: np.ndarray) -> np.ndarray:
    """Hidden cells with a requirement the bounds do not meet yet."""
    return (_short(lower, targets[0], margins, "min")
            | _short(upper, targets[1], margins, "max"))


def _short(reached: np.ndarray, target: np.ndarray, margin: np.ndarray, sense: str | np.ndarray
           ) -> np.ndarray:
    """Where ``reached`` does not meet ``target`` within ``margin`` (False where NaN);
    ``sense`` is ``"max"``, ``"min"`` or an array, True where ``"max"``."""
    up = np.asarray(sense == "max") if isinstance(sense, str) else sense
    with np.errstate(invalid="ignore"):
        return np.where(up, reached < target - margin, reached > target + margin)


def _groups(attack: IntervalAttack, pending: np.ndarray) -> list[np.ndarray]:
    """The blocks holding a pending cell (and rows), gathered into groups of about
    :data:`GROUP_CELLS` hidden cells; each group's positions sorted."""
    order = np.argsort(attack.component, kind="stable")
    bounds = np.searchsorted(attack.component[order], np.arange(attack.n_components + 1))
    has_rows = np.zeros(len(attack.component), dtype=bool)
    has_rows[attack.A_hidden.indices] = True
    groups, current = [], []
    size = 0
    for comp in np.unique(attack.component[pending & has_rows]):
        members = order[bounds[comp]:bounds[comp + 1]]
        current.append(members)
        size += len(members)
        if size >= GROUP_CELLS:
            groups.append(np.sort(np.concatenate(current)))
            current, size = [], 0
    if current:
        groups.append(np.sort(np.concatenate(current)))
    return groups


def _block(attack: IntervalAttack, values: np.ndarray, known: np.ndarray, members: np.ndarray
           ) -> Block:
    sub = attack.A_hidden[:, members].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    held = known[members]
    return Block(sub[rows], attack.rhs[rows], attack.slack[rows],
                 np.where(held, values[members], attack.lb[members]),
                 np.where(held, values[members], attack.ub[members]), values[members])


def _time_left(deadline: Deadline) -> str:
    from tabsdc._progress import format_seconds

    return f"{format_seconds(deadline.remaining())} left of the time limit" \
        if deadline.limited else ""


#: One joint point to solve: the restriction, the columns to move, the values of its columns,
#: their targets and priorities.
_Problem = tuple[LinearProgram, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _solve(task: tuple[LinearProgram, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                       float | None]) -> np.ndarray | None:
    """One joint point (a parallel task): the problem of :data:`_Problem` within a limit."""
    problem, cells, values, targets, priorities, seconds = task
    return joint_point(problem, cells, values, targets, priorities, time_limit=seconds)


class _Rounds:
    """The state of one group's rounds: inner bounds over its block, and per requirement (a
    cell, its target, margin and direction ``up``: ``max`` when True) whether it is pending,
    missed or failed."""

    def __init__(self, block: Block, cells: np.ndarray, targets: np.ndarray,
                 margins: np.ndarray, up: np.ndarray, window: int) -> None:
        self.block, self.cells, self.targets, self.margins, self.up = (
            block, cells, targets, margins, up)
        n = len(cells)
        self.lower, self.upper = block.values.copy(), block.values.copy()
        self.missed = np.full(n, np.nan)
        self.pending = np.ones(n, dtype=bool)
        self.failed = np.zeros(n, dtype=bool)  # the solver failed on the cell's own LP
        self.hops = np.zeros(n, dtype=np.int64)  # the relaxation reach tried so far
        self.size = np.zeros(n, dtype=np.int64)  # cells of the last relaxation
        self.exhausted = np.zeros(n, dtype=bool)  # no wider relaxation is worth trying
        self.window = min(block.n_cells, window)  # cells of a region
        self.lps = self.budget = self.before = self.rounds = 0
        self.share = 1.0  # of the joint points' cost the relaxations may spend
        self.cheap = max(64, min(RELAXATION_CELLS, block.n_cells // 8))

    def reached(self) -> np.ndarray:
        """How far each requirement's cell has been moved its way."""
        return np.where(self.up, self.upper[self.cells], self.lower[self.cells])

    def plan(self) -> list[tuple[np.ndarray, np.ndarray, _Problem]]:
        """This round's joint points: (region, requirements, problem) triples. Each pending
        cell that no earlier region of the round holds seeds a region of :attr:`window`
        cells (:meth:`Block.grown`), which serves every pending requirement in it (of a cell
        with both pending, the upper one in even rounds, the lower one in odd ones: one point
        reaches at most one of them); one region, the whole block, once the window spans it.
        Priorities: draws in [0.5, 1.5] from a generator seeded by the LPs solved before
        (ties broken alike in every run)."""
        block, n = self.block, self.block.n_cells
        self.before = int(self.pending.sum())
        both = np.bincount(self.cells[self.pending], minlength=n)[self.cells] > 1
        wanted = self.pending & ~(both & (self.up != (self.rounds % 2 == 0)))
        self.rounds += 1
        if self.window >= n:
            chosen = [(np.arange(n), np.flatnonzero(wanted))]
        else:
            seeds = np.unique(self.cells[self.pending])
            free = np.ones(n, dtype=bool)  # in no region of the round yet
            chosen = []
            for seed in seeds:
                if not free[seed]:
                    continue
                region = block.grown(seeds[free[seeds]], self.window)
                free[region] = False
                inside = np.zeros(n, dtype=bool)
                inside[region] = True
                chosen.append((region, np.flatnonzero(wanted & inside[self.cells])))
        self.budget = sum(len(region) for region, _ in chosen)
        plan = []
        for region, requirements in chosen:
            draw = np.random.default_rng(self.lps).uniform(0.5, 1.5, len(requirements))
            plan.append((region, requirements, (
                block.restriction(region), np.searchsorted(region, self.cells[requirements]),
                block.values[region], self.targets[requirements], draw)))
            self.lps += 1
        return plan

    def take(self, plan: list[tuple[np.ndarray, np.ndarray, _Problem]],
             points: list[np.ndarray | None]) -> None:
        """The round's points into the inner bounds; the requirements they meet settled."""
        for (region, _, _), point in zip(plan, points, strict=True):
            if point is not None:
                self.lower[region] = np.minimum(self.lower[region], point)
                self.upper[region] = np.maximum(self.upper[region], point)
        self.pending &= _short(self.reached(), self.targets, self.margins, self.up)

    def after(self, deadline: Deadline) -> None:
        """Relaxations within the round's budget; then, when the round settled less than
        half of what was pending, regions twice as large, or when they span the block and it
        settled less than a tenth, the exact extreme of the requirement furthest behind."""
        self.relax(deadline)
        settled = self.before - int(self.pending.sum())
        if 2 * settled >= self.before or deadline.expired:
            return
        if self.window < self.block.n_cells:
            self.window = min(2 * self.window, self.block.n_cells)
        elif settled < max(1, self.before // 10) and self.pending.any():
            if not self.widen_relaxations():
                self.decide_furthest(deadline)

    def widen_relaxations(self) -> bool:
        """Let the relaxations grow fourfold (up to :data:`TAIL_RELAXATION_CELLS` and
        below the block) and reopen the pending requirements whose last relaxation was too
        large; whether any was reopened."""
        limit = min(TAIL_RELAXATION_CELLS, self.block.n_cells // 2)
        if self.cheap >= limit:
            return False
        before, self.cheap = self.cheap, min(4 * self.cheap, limit)
        reopen = self.pending & self.exhausted & (self.size > before) & (
            self.size <= self.cheap)
        self.hops[reopen] -= 1  # the relaxation that was too large is tried again
        self.exhausted[reopen] = False
        self.size[reopen] = 0
        self.share = 1.0
        return bool(reopen.any())

    def relax(self, deadline: Deadline) -> int:
        """Relaxations one hop wider for the pending requirements, the furthest behind
        first, within this round's budget (:attr:`share` of what its joint points cost: a
        relaxation of ``s`` cells counts ``RELAXATION_COST + s / RELAXATION_SPEED`` cells of
        joint point); how many they showed missed. The share shrinks after a round that
        shows nothing and grows after one that does."""
        found = spent = 0
        candidates = np.flatnonzero(self.pending & ~self.exhausted)
        for k in candidates[np.argsort(self.shares()[candidates], kind="stable")]:
            if spent >= self.share * self.budget or deadline.expired:
                break
            found += self.relax_one(k, deadline)
            spent += RELAXATION_COST + self.size[k] / RELAXATION_SPEED
        self.share = min(1.0, 2 * self.share) if found else max(1 / 64, self.share / 4)
        return found

    def shares(self) -> np.ndarray:
        """How much of its way to the target each requirement's points have gone."""
        a = self.block.values[self.cells]
        return (self.reached() - a) / (self.targets - a)

    def relax_one(self, k: int, deadline: Deadline) -> int:
        """Requirement ``k``'s relaxation one hop wider: 1 when it shows it missed."""
        self.hops[k] += 1
        bound, size = relaxed_extreme(self.block, int(self.cells[k]),
                                      "max" if self.up[k] else "min", int(self.hops[k]),
                                      max_cells=self.cheap, time_limit=deadline.solver_limit())
        self.lps += size <= self.cheap
        self.exhausted[k] = size <= self.size[k] or size > self.cheap
        self.size[k] = size
        if not _short(np.array([bound]), self.targets[k:k + 1], self.margins[k:k + 1],
                      self.up[k:k + 1])[0]:
            return 0
        self.missed[k] = bound
        self.pending[k] = False
        return 1

    def decide_furthest(self, deadline: Deadline) -> None:
        """The exact extreme of the pending requirement whose points got least of its way to
        the target (the likeliest to be missed): its joint point alone over the whole block
        either meets the target or is the extreme, which misses it."""
        k = int(np.argmin(np.where(self.pending, self.shares(), np.inf)))
        whole = np.arange(self.block.n_cells)
        point = _solve((self.block.restriction(whole), self.cells[k:k + 1], self.block.values,
                        self.targets[k:k + 1], np.ones(1), deadline.solver_limit()))
        self.lps += 1
        if point is None:
            if not deadline.expired:  # numerical trouble: left to the exact interval attack
                self.pending[k] = False
                self.failed[k] = True
            return
        self.take([(whole, None, None)], [point])
        if self.pending[k]:
            self.missed[k] = self.reached()[k]
            self.pending[k] = False
