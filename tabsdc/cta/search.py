"""Block coordinate descent on the protection directions, shared by L1 and L2 CTA.

Once every sensitive cell's direction is fixed, CTA is an LP (L1) or a convex QP (L2). The
directions are improved block by block (in the spirit of González and Castro 2011): a block -
one sensitive cell, or all sensitive cells of one relation - has its directions flipped, the
kept HiGHS model is re-solved from its current state (only column bounds change), and the
flip is kept when the objective falls. For an LP the re-solve is a warm-started dual simplex
with an objective cutoff at the incumbent, so a losing flip stops early.

References
----------
González, J. A. and Castro, J. "A heuristic block coordinate descent approach for controlled
tabular adjustment", *Computers & Operations Research* 38(12), 1826-1835, 2011.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tabsdc import interrupts
from tabsdc.cta.problem import CTAProblem
from tabsdc.solver import SolveResult

__all__ = ["Clock", "DirectionModel", "Search", "blocks", "improve"]


class DirectionModel(Protocol):
    """A kept model whose sensitive directions can be fixed and re-solved."""

    def fix(self, up: np.ndarray) -> None: ...

    def solve(self, cutoff: float | None = None) -> SolveResult: ...

    def adjustment(self, result: SolveResult) -> np.ndarray: ...

    def duals(self, result: SolveResult) -> np.ndarray | None: ...

    def set_time_limit(self, seconds: float | None) -> None: ...


class Clock:
    """Wall-clock budget: ``left(share)`` is the time left of ``share * limit``; none is
    left once a Ctrl-C has stopped the search (:func:`tabsdc.interrupts.stopping`), so an
    interrupt ends the search as its time limit would."""

    def __init__(self, limit: float | None) -> None:
        self.start = time.perf_counter()
        self.limit = limit

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def left(self, share: float = 1.0) -> float | None:
        """Seconds left of ``share * limit`` (negative when over or interrupted; None without
        a limit)."""
        if interrupts.stopping():
            return -1.0
        if self.limit is None:
            return None
        return self.limit * share - self.elapsed()

    def budget(self, share: float = 1.0) -> float | None:
        """:meth:`left` as a solver time limit: at least a millisecond."""
        left = self.left(share)
        return None if left is None else max(left, 1e-3)


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


def blocks(problem: CTAProblem, rng: np.random.Generator) -> list[np.ndarray]:
    """Singletons and the sensitive cells of each relation (both in random order)."""
    free = np.flatnonzero(problem.free_direction)
    found = [np.array([i]) for i in free]
    if free.size > 1:
        incidence = problem.A[:, problem.sensitive[free]].tocsr()
        incidence.data[:] = 1.0
        keep = np.flatnonzero(np.diff(incidence.indptr) >= 2)
        groups = {tuple(free[incidence.indices[incidence.indptr[r]:incidence.indptr[r + 1]]])
                  for r in keep}
        found += [np.array(g) for g in sorted(groups)]
    order = rng.permutation(len(found))
    return [found[i] for i in order]


def improve(search: Search, order: list[np.ndarray], clock: Clock, share: float,
            max_passes: int) -> None:
    """Flip block after block (keeping improvements) until a pass brings nothing, the pass
    limit, or ``share`` of the clock's budget is used."""
    model = search.model
    for _ in range(max_passes):
        improved = False
        search.passes += 1
        for block in order:
            left = clock.left(share)
            if left is not None and left <= 0:
                return
            trial = search.up.copy()
            trial[block] = ~trial[block]
            model.set_time_limit(clock.budget(share))
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


