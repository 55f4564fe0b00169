"""Settling every sensitive cell's requirements with few LPs: the audit of any pattern at scale.

The interval attack (:mod:`tabsdc.audit._intervals`) solves two LPs over a whole block per
hidden cell; on a pattern of 10^4 hidden cells in one block that is 2 x 10^4 LPs of 10^4
columns, hours. A verdict needs less: for each sensitive cell ``j`` and each of its
requirements, either **a point** of the attacker's polytope that reaches the target (the
requirement is met: ``max x_j >= a_j + upl_j`` when some table the intruder cannot rule out
has ``x_j >= a_j + upl_j``) or **an outer bound** that misses it (the cell is exposed). This
module settles each requirement one way or the other, per block of hidden cells and per
direction (the upper requirements, then the lower ones), by rounds of:

1. **one joint point** (:func:`tabsdc.audit._joint_points.joint_point`): one LP that moves
   every pending cell toward its target at once. Every target it reaches is met; in a round
   most are. The first rounds are solved on the hidden cells within ``reach`` hops of the
   pending cells (a restriction, :meth:`tabsdc.audit._block.Block.restriction`: every other
   hidden cell at its true value), which on a large block with a few pending cells is a
   small LP; once that settles less than a tenth of them, or holds more than half the
   block, on windows of :data:`REGION_CELLS` cells consecutive in one of ``orders`` (the
   next order each round), doubled after a pass through the orders that settles less than
   a tenth, up to the whole block.
2. **relaxations** (:func:`tabsdc.audit._outer_bounds.relaxed_extreme`), one hop wider each
   round: a pending cell whose relaxed extreme already misses its target is exposed. Exposed
   cells leave the rounds, so they do not hold the joint point back. They only show
   exposure, so their share of a round shrinks while they show nothing.
3. when neither settles anything, **one cell's exact extreme**: the joint point of that cell
   alone over the whole block, which either reaches the target or is the exact maximum (or
   minimum) of the cell: the attack's own LP, capped at the target.

Each round settles at least one requirement, so the rounds end; in practice a 10^4-cell
block takes a dozen joint points and a few hundred small relaxations. Points also move other
cells, non-sensitive ones included: :class:`Settlement` keeps every cell's widest inner
bounds. Tolerances: a target ``T`` counts as reached within ``margin`` (the verdict's
tolerance), an outer bound misses it when it falls short by more than ``margin``.

Blocks are grouped (small blocks together, so that one LP serves many) and each group and
direction is one task of :func:`tabsdc._parallel.parallel_map`: the tasks do not depend on the
number of workers, so ``n_jobs=1``, ``n_jobs=k`` and a Dask cluster give the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tabsdc._parallel import parallel_map, resolve_jobs
from tabsdc._progress import Deadline, Progress, ProgressReporter
from tabsdc.audit._block import Block
from tabsdc.audit._intervals import IntervalAttack
from tabsdc.audit._joint_points import joint_point
from tabsdc.audit._outer_bounds import relaxed_extreme

#: Blocks are gathered into groups of at least this many hidden cells (one LP per round for
#: all of them); a larger block is a group of its own.
GROUP_CELLS = 4096

#: The relaxations of a round cost at most a share of what its joint points did, counting a
#: relaxation of ``s`` cells as ``RELAXATION_COST + s / RELAXATION_SPEED`` cells of joint
#: point (the dual simplex on a small relaxation against the interior point method on a
#: block, measured on 4-D tables: about 1 ms per LP plus 25 times the cells per second). The
#: share starts at 1, is divided by 4 after a round whose relaxations showed nothing (down to
#: ``1 / 64``: on a protected pattern they only cost) and doubled after one that did.
RELAXATION_COST, RELAXATION_SPEED = 5, 25

#: Joint points are first solved on windows of at most this many hidden cells. The interior
#: point method's time grows faster than the cells: on the 4-D hypercube pattern of 27,005
#: hidden cells (load average 6), about 1 s for 4,096 cells, 6 s for 8,192, 30 to 70 s for
#: 16,384; one on 8 x 10^4 did not end in five minutes. Small windows in several orders
#: (``orders`` of :func:`settle_requirements`) settle more per second than large ones.
REGION_CELLS = 4096


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
    reach: int,
    orders: Sequence[np.ndarray] = (),
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
    reach : int
        Hops of the restriction the first joint points are solved on.
    orders : sequence of ndarray, optional
        Orders of the hidden cells (each a permutation of the attack's positions) along
        which the windows of joint points are taken, one order per round in turn: cells close
        in one of them should be close in the table (e.g. the cells sorted by each dimension
        first, :func:`tabsdc.audit._verify.audit` passes one per dimension). Default: the
        attack's order alone.
    window : int
        Hidden cells of a window (:data:`REGION_CELLS`).
    deadline : Deadline, optional
        When it expires, what is pending stays open.
    progress : callable, optional
        Receives progress lines: requirements settled, how, and the time left.
    n_jobs, client
        Run the tasks (a group of blocks, one direction) in processes or on a Dask cluster.

    Returns
    -------
    Settlement

    Examples
    --------
    Cox's 2 x 2 cycle (slides 17-20): the four inner cells hidden, ``x`` = 10 sensitive with
    levels 2; the cycle moves it down to 2 and up to 15, so one joint point per side meets
    both targets.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> t = Table.from_aggregated(pd.DataFrame({"r": list("1122"), "c": list("1212"),
    ...                           "value": [10.0, 5, 7, 8]}), ["r", "c"])
    >>> hidden = np.zeros(9, bool); hidden[[4, 5, 7, 8]] = True
    >>> attack = IntervalAttack(t.A, t.b, t.values, hidden, np.zeros(9), np.full(9, np.inf))
    >>> a = t.values[attack.hidden_cells]
    >>> nan = np.full(4, np.nan)
    >>> low, high = nan.copy(), nan.copy(); low[0], high[0] = 8.0, 12.0
    >>> s = settle_requirements(attack, a, a, a, (low, high), np.full(4, 1e-6), reach=4)
    >>> bool(s.upper[0] >= 12 and s.lower[0] <= 8), bool(s.open.any() or
    ...                                                  np.isfinite(s.missed_upper).any())
    (True, False)
    """
    deadline = deadline or Deadline(None)
    lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
    missed = {"min": np.full(len(values), np.nan), "max": np.full(len(values), np.nan)}
    opened = np.zeros(len(values), dtype=bool)
    tasks, where = [], []
    requested = _pending(lower, upper, targets, margins)
    known = np.zeros(len(values), dtype=bool) if known is None else known
    ranks = [np.argsort(order) for order in orders] or [np.arange(len(values))]
    for members in _groups(attack, requested):
        block = _block(attack, values, known, members)
        # each order restricted to the group: its block positions, in that order
        in_block = tuple(np.argsort(rank[members], kind="stable") for rank in ranks)
        for sense, target, reached in (("max", targets[1], upper), ("min", targets[0], lower)):
            pending = np.flatnonzero(_short(reached[members], target[members], margins[members],
                                            sense))
            if len(pending):
                tasks.append(_Side(block, pending, target[members][pending],
                                   margins[members][pending], sense, reach, in_block, window))
                where.append(members)
    total = sum(len(task.cells) for task in tasks)
    reporter = ProgressReporter(progress, "settling requirements", total, unit="requirements")
    if client is None and resolve_jobs(n_jobs) <= 1:
        outcomes, done = [], 0
        for task in tasks:
            outcomes.append(task.settle(deadline, lambda n, base=done: reporter.update(
                base + n, _time_left(deadline))))
            done += len(task.cells)
    else:
        if progress is not None:
            progress(f"settling requirements: {total:,} in {len(tasks)} parallel tasks "
                     f"({len(where)} block groups and directions)")
        outcomes = parallel_map(_run_side, [(task, deadline.solver_limit()) for task in tasks],
                                n_jobs=n_jobs, client=client)
    lps = 0
    for task, members, outcome in zip(tasks, where, outcomes, strict=True):
        lower[members] = np.minimum(lower[members], outcome.lower)
        upper[members] = np.maximum(upper[members], outcome.upper)
        missed[task.sense][members[task.cells]] = outcome.missed
        opened[members[task.cells]] |= outcome.open
        lps += outcome.lps
    missed_count = int((~np.isnan(missed["min"]) | ~np.isnan(missed["max"])).sum())
    reporter.finish(total - int(sum(o.open.sum() for o in outcomes)),
                    f"{lps:,} LPs; {missed_count:,} cells miss a requirement"
                    + (f" ({deadline.why})" if opened.any() else ""))
    return Settlement(lower, upper, missed["min"], missed["max"], requested, opened, lps)


def _pending(lower: np.ndarray, upper: np.ndarray, targets: tuple[np.ndarray, np.ndarray],
             margins: np.ndarray) -> np.ndarray:
    """Hidden cells with a requirement the bounds do not meet yet."""
    return (_short(lower, targets[0], margins, "min")
            | _short(upper, targets[1], margins, "max"))


def _short(reached: np.ndarray, target: np.ndarray, margin: np.ndarray, sense: str
           ) -> np.ndarray:
    """Where ``reached`` does not meet ``target`` within ``margin`` (False where NaN)."""
    with np.errstate(invalid="ignore"):
        if sense == "max":
            return reached < target - margin
        return reached > target + margin


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


@dataclass(frozen=True)
class _Outcome:
    """One task's result: inner bounds over its block, and per requirement the outer bound
    that misses it (NaN: not missed) and whether it was left open."""

    lower: np.ndarray
    upper: np.ndarray
    missed: np.ndarray
    open: np.ndarray
    lps: int


@dataclass(frozen=True)
class _Side:
    """The requirements of one direction in one group of blocks (picklable); ``orders``:
    the block positions in each order windows are taken along; ``window``: their size."""

    block: Block
    cells: np.ndarray
    targets: np.ndarray
    margins: np.ndarray
    sense: str
    reach: int
    orders: tuple[np.ndarray, ...]
    window: int

    def settle(self, deadline: Deadline, report: Callable[[int], None] | None) -> _Outcome:
        """The rounds of the module text, until every requirement is settled or the
        deadline comes; ``report`` receives the number settled after each round."""
        rounds = _Rounds(self)
        poor = 0  # rounds in a row that settled less than a tenth of what was pending
        while rounds.pending.any() and not deadline.expired:
            before = int(rounds.pending.sum())
            settled = rounds.joint(deadline) + rounds.relax(deadline)
            poor = poor + 1 if settled < max(1, before // 10) else 0
            if poor and (rounds.local or poor >= len(self.orders)):  # every order tried
                poor = 0
                if not rounds.whole:
                    rounds.widen()
                elif rounds.pending.any():
                    rounds.decide_furthest(deadline)
            if report is not None:
                report(len(self.cells) - int(rounds.pending.sum()))
        return _Outcome(rounds.lower, rounds.upper, rounds.missed,
                        rounds.pending | rounds.failed, rounds.lps)


def _run_side(task: tuple[_Side, float | None]) -> _Outcome:
    """One parallel task: a side settled within ``seconds``."""
    side, seconds = task
    return side.settle(Deadline(seconds), None)


class _Rounds:
    """The state of one side's rounds: inner bounds, pending and missed requirements, and
    where the joint points are solved."""

    def __init__(self, side: _Side) -> None:
        self.side = side
        block, n = side.block, len(side.cells)
        self.lower, self.upper = block.values.copy(), block.values.copy()
        self.missed = np.full(n, np.nan)
        self.pending = np.ones(n, dtype=bool)
        self.failed = np.zeros(n, dtype=bool)  # the solver failed on the cell's own LP
        self.hops = np.zeros(n, dtype=np.int64)  # the relaxation reach tried so far
        self.size = np.zeros(n, dtype=np.int64)  # cells of the last relaxation
        self.exhausted = np.zeros(n, dtype=bool)  # no wider relaxation is worth trying
        self.local = True  # joint points on the neighbourhood of the pending cells
        self.window = min(block.n_cells, side.window)  # else on windows this long
        self.rounds = self.lps = self.budget = 0
        self.share = 1.0  # of the joint points' cost the relaxations may spend
        #: relaxations are widened while they hold at most this many cells (an eighth of the
        #: block or of a region: wider ones cost about as much as the exact extreme and
        #: rarely succeed)
        self.cheap = max(64, self.window // 8)

    @property
    def whole(self) -> bool:
        """The joint points span the whole block."""
        return not self.local and self.window >= self.side.block.n_cells

    def widen(self) -> None:
        """From the neighbourhood to windows, then to windows twice as long."""
        if self.local:
            self.local = False
        else:
            self.window = min(2 * self.window, self.side.block.n_cells)

    def regions(self, chosen: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Where this round's joint points are solved: (region, requirements) pairs. The
        neighbourhood of the pending cells within ``reach`` hops while it holds at most half
        the block and one window; otherwise windows of :attr:`window` consecutive cells of
        one of the side's orders, the next order each round, shifted by half a window every
        other pass through the orders (a cell near the edge of one window is inside the
        next)."""
        side, n = self.side, self.side.block.n_cells
        if self.local:
            near = side.block.neighbourhood(side.cells[chosen], side.reach)
            if len(near) <= min(self.window, n // 2):
                return [(near, chosen)]
            self.local = False
        if self.window >= n:
            return [(np.arange(n), chosen)]
        order = side.orders[self.rounds % len(side.orders)]
        rank = np.argsort(order)
        shift = self.window // 2 if (self.rounds // len(side.orders)) % 2 else 0
        edges = np.unique(np.clip(np.arange(-shift, n + self.window, self.window), 0, n))
        where = np.searchsorted(edges, rank[side.cells[chosen]], side="right") - 1
        return [(np.sort(order[edges[w]:edges[w + 1]]), chosen[where == w])
                for w in np.unique(where)]

    def joint(self, deadline: Deadline) -> int:
        """Joint points for every pending requirement on this round's regions; how many
        they settled.

        Priorities: draws in [0.5, 1.5] from a generator seeded by the LPs solved so far (ties
        broken alike in every run).
        """
        chosen = np.flatnonzero(self.pending)
        met = self.budget = 0
        for region, targets in self.regions(chosen):
            if deadline.expired:
                break
            met += self.point(region, targets, deadline) or 0
            self.budget += len(region)
        self.rounds += 1
        return met

    def point(self, region: np.ndarray, targets: np.ndarray, deadline: Deadline
              ) -> int | None:
        """The joint point of ``targets`` (requirement numbers) on ``region`` (block
        positions, sorted), taken into the inner bounds; how many requirements it met
        (None when the solve failed)."""
        side, block = self.side, self.side.block
        draw = np.random.default_rng(self.lps).uniform(0.5, 1.5, len(targets))
        point = joint_point(block.restriction(region),
                            np.searchsorted(region, side.cells[targets]), block.values[region],
                            side.targets[targets], draw, time_limit=deadline.solver_limit())
        self.lps += 1
        if point is None:
            return None
        x = block.values.copy()
        x[region] = point
        self.lower, self.upper = np.minimum(self.lower, x), np.maximum(self.upper, x)
        reached = (self.upper if side.sense == "max" else self.lower)[side.cells]
        met = self.pending & ~_short(reached, side.targets, side.margins, side.sense)
        self.pending &= ~met
        return int(met.sum())

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
        side = self.side
        a = side.block.values[side.cells]
        reached = (self.upper if side.sense == "max" else self.lower)[side.cells]
        return (reached - a) / (side.targets - a)

    def relax_one(self, k: int, deadline: Deadline) -> int:
        """Requirement ``k``'s relaxation one hop wider: 1 when it shows it missed."""
        side = self.side
        self.hops[k] += 1
        bound, size = relaxed_extreme(side.block, int(side.cells[k]), side.sense,
                                      int(self.hops[k]), max_cells=self.cheap,
                                      time_limit=deadline.solver_limit())
        self.lps += size <= self.cheap
        self.exhausted[k] = size <= self.size[k] or size > self.cheap
        self.size[k] = size
        if not _short(np.array([bound]), side.targets[k:k + 1], side.margins[k:k + 1],
                      side.sense)[0]:
            return 0
        self.missed[k] = bound
        self.pending[k] = False
        return 1

    def decide_furthest(self, deadline: Deadline) -> None:
        """The exact extreme of the pending requirement whose points got least of its way to
        the target (the likeliest to be missed): its joint point alone over the whole block
        either meets the target or is the extreme, which misses it."""
        side = self.side
        k = int(np.argmin(np.where(self.pending, self.shares(), np.inf)))
        if self.point(np.arange(side.block.n_cells), np.array([k]), deadline) is None:
            if not deadline.expired:  # numerical trouble: left to the exact interval attack
                self.pending[k] = False
                self.failed[k] = True
        elif self.pending[k]:
            self.missed[k] = (self.upper if side.sense == "max" else self.lower)[side.cells[k]]
            self.pending[k] = False
