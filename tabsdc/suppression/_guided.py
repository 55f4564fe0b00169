"""Routing guided by the lower bound's LP relaxation.

The certified lower bound (:mod:`tabsdc.suppression._bound`) solves the LP relaxation of the
suppression model, ``min c @ z`` over the seed rows and the Fischetti-Salazar capacity cuts
with ``0 <= z <= 1`` (Fischetti and Salazar, *Management Science* 47(7), 2001). Its
fractional pattern ``z*`` says which cells a cheap protecting pattern hides. The routing
heuristic (:func:`~tabsdc.suppression._heuristic.heuristic_pattern`) is run with the cost of
each cell lowered by the share of it the relaxation already hides,

    w_j = c_j (1 - z*_j) + FLOOR c_j,

so the flows go through the cells the relaxation picks (a cell it hides entirely costs only
a hundredth of its cost: still more than one already suppressed), then the clean-up
(:func:`~tabsdc.suppression._heuristic.clean_up`) publishes again, most expensive first at
their true cost, every secondary no requirement needs. This is the LP-rounding idea of
Fischetti and Salazar's heuristic (section 5: the relaxation's values steer which cells a
repair picks) with the routing as the repair.

Examples
--------
A cell the relaxation hides costs a hundredth of its cost; one it leaves published its
whole cost:

>>> import numpy as np
>>> guided_costs(np.array([10.0, 10.0, 4.0]), np.array([1.0, 0.0, 0.5])).tolist()
[0.1, 10.1, 2.04]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tabsdc._flows import Requirement
from tabsdc._progress import Deadline
from tabsdc.suppression._attacker import Attacker
from tabsdc.suppression._heuristic import FlowRouter, clean_up, heuristic_pattern

#: Share of a cell's cost a route pays for it however much the relaxation hides it (so that
#: cells already suppressed stay the cheapest and ties go to the cheaper cell).
FLOOR = 0.01


def guided_costs(cost: np.ndarray, relaxation: np.ndarray | None) -> np.ndarray:
    """The routing costs ``w_j = c_j (1 - z*_j) + FLOOR c_j`` (the costs themselves without a
    relaxation)."""
    if relaxation is None:
        return np.asarray(cost, dtype=float)
    return cost * (1.0 - np.clip(relaxation, 0.0, 1.0) + FLOOR)


def guided_pattern(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    router: FlowRouter,
    cost: np.ndarray,
    relaxation: np.ndarray | None,
    start: np.ndarray,
    removable: np.ndarray,
    labels: Callable[[int], str],
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> np.ndarray | None:
    """A protecting pattern containing ``start``: every requirement routed at the guided
    costs, then the ``removable`` cells no requirement needs published again, most
    expensive first. None when ``deadline`` expires before every requirement is routed
    (the clean-up is cut short instead: each of its steps keeps the pattern protecting)."""
    pattern, certificates, complete = heuristic_pattern(
        reqs, attacker, router, guided_costs(cost, relaxation), start, labels, progress,
        deadline)
    if not complete:
        return None
    return clean_up(reqs, attacker, cost, pattern, removable, certificates, progress, deadline)
