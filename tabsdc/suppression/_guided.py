"""Routing guided by the lower bound's LP relaxation.

The certified lower bound (:mod:`tabsdc.suppression._bound`) solves the LP relaxation of the
suppression model, ``min c @ z`` over the seed rows, the relation cuts and the
Fischetti-Salazar capacity cuts with ``0 <= z <= 1`` (Fischetti and Salazar, *Management
Science* 47(7), 2001). Its fractional pattern ``z*`` says which cells a cheap protecting
pattern hides. The routing heuristic (:func:`~tabsdc.suppression._heuristic.heuristic_pattern`)
is run with the cost of each cell lowered by the share of it the relaxation already hides,

    w_j = c_j (1 - z*_j) + FLOOR c_j,

so the flows go through the cells the relaxation picks (a cell it hides entirely costs only
a hundredth of its cost: still more than one already suppressed), then the clean-up
(:func:`~tabsdc.suppression._heuristic.clean_up`) publishes again, most expensive first at
their true cost, every secondary no requirement needs. This is the LP-rounding idea of
Fischetti and Salazar's heuristic (section 5: the relaxation's values steer which cells a
repair picks) with the routing as the repair.

The routing starts from a pattern: the hypercube pattern with its most expensive
secondaries published again (:func:`ruined`, the share ``RUIN_SHARE`` of them), so that
only the requirements those cells served are routed afresh, through the cells still hidden
(they cost almost nothing to a route): the *ruin and recreate* of Schrimpf, Schneider,
Stamm-Wilbrandt and Dueck (*Journal of Computational Physics* 159, 2000). On ``4d_5k``,
cost = value, publishing the tenth most expensive of its 2,271 secondaries (78 % of its
cost) and routing again takes about 50 s and leaves a quarter of the hypercube pattern's
cost; routing every requirement from nothing takes five times as long for 13 % less
(``docs/performance.md``). Under a time limit the share is the largest one whose
requirements left without a witness the routing has time for (:func:`ruin_within`): on
``4d_20k`` a tenth leaves 5,732 of its 11,720, a hundredth 2,203.

Examples
--------
A cell the relaxation hides costs a hundredth of its cost; one it leaves published its
whole cost:

>>> import numpy as np
>>> guided_costs(np.array([10.0, 10.0, 4.0]), np.array([1.0, 0.0, 0.5])).tolist()
[0.1, 10.1, 2.04]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from tabsdc._flows import Requirement
from tabsdc._progress import Deadline
from tabsdc.suppression._attacker import Attacker
from tabsdc.suppression._heuristic import (
    WHOLE_TABLE_SECONDS,
    FlowRouter,
    clean_up,
    heuristic_pattern,
)
from tabsdc.suppression._witness_proofs import Witnesses

#: Share of a cell's cost a route pays for it however much the relaxation hides it (so that
#: cells already suppressed stay the cheapest and ties go to the cheaper cell).
FLOOR = 0.01
#: Share of a starting pattern's secondaries, the most expensive, published again before
#: the routing (:func:`ruined`): the largest of ``RUIN_SHARES``, the shares
#: :func:`ruin_within` tries, largest first, for one whose routing fits the time left.
RUIN_SHARES = (0.1, 0.05, 0.02, 0.01, 0.005)
RUIN_SHARE = RUIN_SHARES[0]
#: Requirements a second the routing re-proves that the ruin left without a witness (seen:
#: 567 in 65 s on ``4d_5k``, 2,203 in 105-124 s on ``4d_20k``: the whole routing's time,
#: the requirements with a witness included; ``docs/performance.md``).
ROUTED_PER_SECOND = 15.0


def ruined(pattern: np.ndarray, cost: np.ndarray, removable: np.ndarray,
           share: float = RUIN_SHARE) -> np.ndarray:
    """``pattern`` with the most expensive ``share`` of its ``removable`` cells published
    (ties: the first cell first; at least one when it has any).

    Examples
    --------
    >>> ruined(np.ones(5, dtype=bool), np.array([1.0, 5.0, 3.0, 5.0, 2.0]),
    ...        np.array([True, True, True, False, True]), share=0.5).tolist()
    [True, False, False, True, True]
    """
    cells = np.flatnonzero(pattern & removable)
    cells = cells[np.argsort(-cost[cells], kind="stable")]
    out = pattern.copy()
    out[cells[:max(1, round(share * len(cells)))]] = False
    return out


class Ruin(NamedTuple):
    """A starting pattern for the routing: ``start``, the ``share`` of the pattern's
    secondaries published again for it, and how many requirements no witness meets in it
    (``unmet``; None when not counted)."""

    start: np.ndarray
    share: float
    unmet: int | None


def ruin_within(pattern: np.ndarray, cost: np.ndarray, removable: np.ndarray,
                witnesses: Witnesses | None, reqs: Sequence[Requirement], seconds: float
                ) -> Ruin | None:
    """``pattern`` ruined by the largest of ``RUIN_SHARES`` that leaves at most ``seconds``
    times ``ROUTED_PER_SECOND`` requirements no witness meets (they need a flow each);
    ``RUIN_SHARE``, not counted, without witnesses or time limit; None when not even the
    smallest share fits."""
    if witnesses is None or not np.isfinite(seconds):
        return Ruin(ruined(pattern, cost, removable), RUIN_SHARE, None)
    for share in RUIN_SHARES:
        start = ruined(pattern, cost, removable, share)
        unmet = int(witnesses.unmet(reqs, start).sum())
        if unmet <= seconds * ROUTED_PER_SECOND:
            return Ruin(start, share, unmet)
    return None


def guided_costs(cost: np.ndarray, relaxation: np.ndarray | None) -> np.ndarray:
    """The routing costs ``w_j = c_j (1 - z*_j) + FLOOR c_j`` (the costs themselves without a
    relaxation)."""
    if relaxation is None:
        return np.asarray(cost, dtype=float)
    return cost * (1.0 - np.clip(relaxation, 0.0, 1.0) + FLOOR)


class RestoringRouter:
    """Routes from a ruined pattern: a flow within the requirement's neighbourhoods
    (:meth:`FlowRouter.route` without the whole table), else the whole table's flow; under
    a time limit, for a requirement some witness met in the pattern ``before`` the ruin,
    that flow gets ``WHOLE_TABLE_SECONDS`` while none has taken longer, and the cells of
    the cheapest such witness are hidden again instead once one has (or this one does).

    Parameters
    ----------
    router : FlowRouter
    witnesses : Witnesses or None
        Feasible deviations (None: the router's own routes only).
    before : ndarray of bool
        The pattern the witnesses were hidden in.
    """

    def __init__(self, router: FlowRouter, witnesses: Witnesses | None, before: np.ndarray):
        self.router, self.witnesses, self.before = router, witnesses, before
        self.slowest = 0.0  # seconds of the slowest whole table's flow so far

    @property
    def whole_first(self) -> bool:
        """Whether the next route takes the whole table's flow first
        (:attr:`FlowRouter.whole_first`)."""
        return self.router.whole_first

    def route(self, req: Requirement, cost: np.ndarray, suppressed: np.ndarray
              ) -> np.ndarray | None:
        """The cells to hide for ``req`` (None: no flow, or the deadline expired)."""
        if self.witnesses is None or not self.router.local:
            return self.router.route(req, cost, suppressed)
        carries = self.router.route(req, cost, suppressed, whole_table=False)
        deadline = self.router.deadline
        if carries is not None or deadline.expired:
            return carries
        found = [self.witnesses.cells(k) for k in self.witnesses.meeting(req, self.before)]
        if not found or not deadline.limited:
            return self.router.route_whole(req, cost, suppressed)
        if self.slowest <= WHOLE_TABLE_SECONDS:  # a witness if it takes longer
            started = deadline.clock()
            carries = self.router.route_whole(req, cost, suppressed,
                                              seconds=WHOLE_TABLE_SECONDS)
            self.slowest = max(self.slowest, deadline.clock() - started)
            if carries is not None or deadline.expired:
                return carries
            self.slowest = math.inf  # (not solved within its seconds)
        added = [float(cost[cells] @ ~suppressed[cells]) for cells in found]
        carries = np.zeros(len(cost), dtype=bool)
        carries[found[int(np.argmin(added))]] = True
        return carries


def guided_pattern(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    router: FlowRouter | RestoringRouter,
    cost: np.ndarray,
    relaxation: np.ndarray | None,
    start: np.ndarray,
    removable: np.ndarray,
    labels: Callable[[int], str],
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    abandon: bool = False,
) -> tuple[np.ndarray, dict[int, list[np.ndarray]]] | None:
    """A protecting pattern containing ``start``: every requirement routed at the guided
    costs, then the ``removable`` cells no requirement needs published again, most
    expensive first; and the certificates of every requirement under it (by position in
    ``reqs``, as :func:`~tabsdc.suppression._heuristic.heuristic_pattern` gives them). None
    when ``deadline`` expires before every requirement is routed, or, with ``abandon``
    (for a caller that holds a pattern already and has better uses for the time), when the
    routing's rate says it will not be (:func:`~tabsdc.suppression._heuristic.hopeless`);
    the clean-up is cut short instead (each of its steps keeps the pattern protecting)."""
    pattern, certificates, complete = heuristic_pattern(
        reqs, attacker, router, guided_costs(cost, relaxation), start, labels, progress,
        deadline, abandon=abandon)
    if not complete:
        return None
    return clean_up(reqs, attacker, cost, pattern, removable, certificates, progress,
                    deadline), certificates
