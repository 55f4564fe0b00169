"""Block coordinate descent on the protection directions, shared by L1 and L2 CTA.

Once every sensitive cell's direction is fixed, CTA is an LP (L1) or a convex QP (L2). The
directions are improved block by block (in the spirit of González and Castro 2011): a block -
one group of sensitive cells tied by two-cell relations (:func:`direction_groups`), or all
sensitive cells of one relation with their groups - has its directions flipped, the
kept HiGHS model is re-solved from its current state (only column bounds change), and the
flip is kept when the objective falls. For an LP the re-solve is a warm-started dual simplex
with an objective cutoff at the incumbent, so a losing flip stops early.

References
----------
González, J. A. and Castro, J. "A heuristic block coordinate descent approach for controlled
tabular adjustment", *Computers & Operations Research* 38(12), 1826-1835, 2011.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tabsdc._progress import Deadline
from tabsdc.cta._problem import CTAProblem
from tabsdc.solver import SolveResult


class DirectionModel(Protocol):
    """A kept model whose sensitive directions can be fixed and re-solved."""

    def fix(self, up: np.ndarray) -> None: ...

    def solve(self, cutoff: float | None = None) -> SolveResult: ...

    def adjustment(self, result: SolveResult) -> np.ndarray: ...

    def duals(self, result: SolveResult) -> np.ndarray | None: ...

    def set_time_limit(self, seconds: float | None) -> None: ...


#: Seconds a time-limited CTA method keeps at its end for the last LP, the polishing and the
#: bounds, so that the whole call ends within its time limit.
FINISH_SECONDS = 2.0


@dataclass
class Search:
    """The state of the direction search."""

    model: DirectionModel
    up: np.ndarray
    objective: float
    y: np.ndarray
    duals: np.ndarray | None
    trials: int = 0
    accepted: int = 0
    passes: int = 0


def _ties(problem: CTAProblem) -> tuple[np.ndarray, np.ndarray]:
    """Group label and sign of every cell under the ties of :func:`direction_groups`."""
    n = problem.n
    matrix = sp.csr_array(problem.A)
    pairs = np.flatnonzero(np.diff(matrix.indptr) == 2)
    first = matrix.indptr[pairs]
    u, v = matrix.indices[first], matrix.indices[first + 1]
    same = np.sign(matrix.data[first]) != np.sign(matrix.data[first + 1])
    heads = np.concatenate([u, u + n])
    tails = np.concatenate([np.where(same, v, v + n), np.where(same, v + n, v)])
    graph = sp.coo_array((np.ones(len(heads)), (heads, tails)), shape=(2 * n, 2 * n))
    _, label = connected_components(graph, directed=False)
    plus, minus = label[:n], label[n:]
    return np.minimum(plus, minus), np.where(plus <= minus, 1, -1)


def direction_groups(problem: CTAProblem) -> tuple[np.ndarray, np.ndarray]:
    """Sensitive cells whose directions are tied by relations of two cells.

    A relation ``a_1 y_1 + a_2 y_2 = 0`` (a total with a single part, a cell repeated in two
    hierarchies) makes ``y_1`` and ``y_2`` move together, the same way when ``a_1`` and
    ``a_2`` have opposite signs, opposite ways otherwise; chains of such relations tie
    whole groups, through non-sensitive cells too. Directions that break a tie admit no
    adjustment. The signs are found as the components of the doubled graph whose nodes are
    ``+y_j`` and ``-y_j``: a relation of the first kind joins ``+y_1`` with ``+y_2`` and
    ``-y_1`` with ``-y_2``, one of the second kind ``+y_1`` with ``-y_2`` and vice versa.

    Returns
    -------
    group : ndarray of int, shape (s,)
        A label per sensitive cell; cells with one label are tied.
    sign : ndarray of int, shape (s,)
        +1 or -1: tied cells ``i``, ``k`` move the same way when ``sign[i] == sign[k]``.

    Examples
    --------
    Cells 0 = 1 (a total with one part) and 1 = -2 (coefficients of one sign), all three
    sensitive: 0 and 1 move together, 2 the other way.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [5.0, 5.0, -5.0], "status": ["u"] * 3, "lpl": 1.0,
    ...                       "upl": 1.0, "lb": -10.0})
    >>> group, sign = direction_groups(build_problem(
    ...     Table(cells, [[1, -1, 0], [0, 1, 1]], [0, 0]), "count"))
    >>> bool(group[0] == group[1] == group[2]), sign.tolist()
    (True, [1, 1, -1])
    """
    group, sign = _ties(problem)
    return group[problem.sensitive], sign[problem.sensitive]


#: Passes of the sign repair of :func:`consistent_directions`.
SIGN_REPAIR_PASSES = 20


def consistent_directions(problem: CTAProblem, score: np.ndarray) -> np.ndarray:
    """Directions (True = up) from a score per sensitive cell (positive: rather up) that
    respect the ties of :func:`direction_groups` and the signs of closed relations.

    Each group goes the way of the sum of its signed scores (upward where they sum to 0: the
    LP relaxation splits most cells evenly, and a random way for those costs far more on
    Castro's tables - on TABLE1 7,722 against 10.4), a cell with one possible direction
    deciding its group. The directions then fix the sign of the move of
    every cell tied to a sensitive one; a relation all of whose cells that can move have a
    fixed sign needs terms ``a_j y_j`` of both signs (a sensitive total cannot move up while
    all its parts, sensitive too, move down). Where all have one sign, the group in the
    relation with the weakest summed score (not decided by a one-way cell, not spanning the
    whole relation) is turned round; up to :data:`SIGN_REPAIR_PASSES` passes. Directions
    that pass these checks can still admit no adjustment (the heuristic then repairs them by
    other means).

    Examples
    --------
    A total and its two parts, all sensitive (``y_0 = y_1 + y_2``): scores that send the
    total up and both parts down are repaired by turning the least sure part up.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["u"] * 3, "lpl": 1.0,
    ...                       "upl": 1.0})
    >>> p = build_problem(Table(cells, [[-1, 1, 1]], [0]), "count")
    >>> consistent_directions(p, np.array([0.9, -0.2, -0.8])).tolist()
    [True, True, False]
    """
    group, sign = _ties(problem)
    k = problem.sensitive
    labels, index = np.unique(group, return_inverse=True)
    forced = np.where(problem.free_direction, 0.0, np.where(problem.can_up, 1.0, -1.0))
    votes = np.bincount(index[k], weights=sign[k] * forced, minlength=len(labels))
    total = np.bincount(index[k], weights=sign[k] * np.asarray(score, dtype=float),
                        minlength=len(labels))
    holds = np.bincount(index[k], minlength=len(labels)) > 0
    way = np.where(votes != 0, np.sign(votes), np.where(total != 0, np.sign(total), 1.0))
    way = np.where(holds, way, 0.0)
    matrix = sp.csr_array(problem.A)
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    cells = matrix.indices
    movable = (problem.up + problem.down)[cells] > 0
    confidence = np.where(votes != 0, np.inf, np.abs(total))
    for _ in range(SIGN_REPAIR_PASSES):
        term = np.sign(matrix.data) * sign[cells] * way[index[cells]]
        count = np.bincount(rows, minlength=matrix.shape[0])
        positive = np.bincount(rows, weights=(term > 0) & movable, minlength=count.size)
        negative = np.bincount(rows, weights=(term < 0) & movable, minlength=count.size)
        open_ = np.bincount(rows, weights=(term == 0) & movable, minlength=count.size)
        closed = np.flatnonzero((open_ == 0) & (positive + negative > 0)
                                & ((positive == 0) | (negative == 0)))
        if closed.size == 0:
            break
        turned = set()
        for r in closed:
            members = index[cells[matrix.indptr[r]:matrix.indptr[r + 1]]]
            candidates, counts = np.unique(members, return_counts=True)
            candidates = candidates[holds[candidates] & (counts < members.size)]
            if candidates.size == 0:
                continue
            weakest = int(candidates[np.argmin(confidence[candidates])])
            if np.isfinite(confidence[weakest]) and weakest not in turned:
                turned.add(weakest)
        if not turned:
            break
        chosen = np.fromiter(turned, dtype=int)
        way[chosen] = -way[chosen]
        confidence[chosen] = np.inf  # not turned back
    up = sign[k] * way[index[k]] > 0
    return np.where(problem.free_direction, up, problem.can_up)


def blocks(problem: CTAProblem, rng: np.random.Generator) -> list[np.ndarray]:
    """The tied groups of :func:`direction_groups` and the sensitive cells of each relation
    with their groups (both in random order); only cells that can move either way."""
    free = np.flatnonzero(problem.free_direction)
    group, _ = direction_groups(problem)
    _, index = np.unique(group[free], return_inverse=True)
    order = np.argsort(index, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(index[order]) != 0])
    members = np.split(free[order], starts[1:]) if free.size else []
    found = list(members)
    if len(members) > 1:
        in_group = sp.csr_array((np.ones(free.size), (np.arange(free.size), index)),
                                shape=(free.size, len(members)))
        incidence = abs(sp.csr_array(problem.A[:, problem.sensitive[free]]))
        touched = sp.csr_array(((incidence @ in_group) > 0).astype(float))
        spans = sp.csr_array(touched[np.flatnonzero(np.diff(touched.indptr) >= 2)] @ in_group.T)
        spans.sort_indices()
        groups = {tuple(free[spans.indices[spans.indptr[r]:spans.indptr[r + 1]]])
                  for r in range(spans.shape[0])}
        found += [np.array(g) for g in sorted(groups)]
    order = rng.permutation(len(found))
    return [found[i] for i in order]


def improve(search: Search, order: list[np.ndarray], deadline: Deadline, share: float,
            max_passes: int) -> None:
    """Flip block after block (keeping improvements) until a pass brings nothing, the pass
    limit, or ``share`` of the deadline's limit is used (or a Ctrl-C stops the search)."""
    model = search.model
    for _ in range(max_passes):
        improved = False
        search.passes += 1
        for block in order:
            if deadline.remaining(share) <= 0:
                return
            trial = search.up.copy()
            trial[block] = ~trial[block]
            model.set_time_limit(deadline.solver_limit(share=share))
            model.fix(trial)
            tolerance = 1e-9 * max(1.0, abs(search.objective))
            result = model.solve(cutoff=search.objective - tolerance)
            search.trials += 1
            if result.optimal and result.objective < search.objective - tolerance:
                search.up, search.objective = trial, result.objective
                search.y, search.duals = model.adjustment(result), model.duals(result)
                search.accepted += 1
                improved = True
        if not improved:
            return


