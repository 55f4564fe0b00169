"""The clean-up against the hypercubes: publish again every secondary whose primaries all
find another hypercube among the cells still hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from tabsdc._flows import DOWN, UP
from tabsdc._hypercubes.cover import Cover
from tabsdc._hypercubes.search import Hypercube, HypercubeSearch, Pattern
from tabsdc._progress import Deadline, ProgressReporter


class _Free(NamedTuple):
    """A primary's hypercubes whose corners are all hidden and that certify at least one
    of its directions: their vectors (dimensions x hypercubes), whether each meets both
    levels, the upward one, the downward one; and how many publications it has seen."""

    vectors: np.ndarray
    both: np.ndarray
    up: np.ndarray
    down: np.ndarray
    seen: int


class _FreeStructures:
    """Each primary's hypercubes whose corners are all hidden, kept up to date while cells
    are published again (the hidden set only shrinks during the clean-up).

    A primary's free hypercubes are evaluated once (:meth:`HypercubeSearch.evaluate` with
    ``free_only``) and kept as their vectors; a cell published since then rules out the
    ones that have it as a corner (:meth:`HypercubeSearch.hits`), so the evaluation is not
    repeated for every secondary the primary's structure uses (only after :data:`STALE`
    publications, when evaluating afresh is cheaper than checking them). The corners of its
    structure that every free alternative needs (:meth:`essential`) are found at once; as
    the hidden set only shrinks they stay essential while the structure is kept, so a
    secondary essential to one of its primaries is refused without a search.
    """

    STALE = 2048

    def __init__(self, search: HypercubeSearch, pattern: Pattern,
                 levels: dict[int, tuple[float, float]], most: int):
        self.search, self.pattern, self.levels = search, pattern, levels
        self._published = np.zeros(most, dtype=np.int64)  # in order, the first ``count``
        self.count = 0
        self._free: dict[int, _Free] = {}
        self._essential: dict[int, set[int]] = {}

    def publish(self, cell: int, renewed: list[int]) -> None:
        """``cell`` is published again and the structures of ``renewed`` were replaced."""
        self.pattern.publish(np.array([cell]))
        self._published[self.count] = cell
        self.count += 1
        for primary in renewed:
            self._essential.pop(primary, None)

    def _current(self, primary: int) -> _Free:
        free = self._free.get(primary)
        if free is None or self.count - free.seen > self.STALE:
            evaluation = self.search.evaluate(primary, self.pattern, self.levels[primary],
                                              free_only=True)
            keep = (evaluation.added == 0) & (evaluation.meets_both | evaluation.meets_up
                                              | evaluation.meets_down)
            index = np.flatnonzero(keep)
            at = np.unravel_index(index, [len(r) for r in evaluation.rows])
            vectors = np.array([r[i] for r, i in zip(evaluation.rows, at, strict=True)]
                               ).reshape(len(evaluation.rows), -1)
            free = _Free(vectors, evaluation.meets_both[index], evaluation.meets_up[index],
                         evaluation.meets_down[index], self.count)
        elif free.seen < self.count:
            kept = ~self.search.hits(primary, free.vectors,
                                     self._published[free.seen:self.count]).any(axis=0)
            free = _Free(free.vectors[:, kept], free.both[kept], free.up[kept],
                         free.down[kept], self.count)
        self._free[primary] = free
        return free

    def _certified(self, primary: int, free: _Free, usable: np.ndarray) -> np.ndarray:
        """Per row of ``usable`` (cells x free hypercubes): do the usable ones certify
        every direction of ``primary`` (one meeting both, or one per direction)."""
        upl, lpl = self.levels[primary]
        return ((free.both & usable).any(axis=1)
                | (((free.up & usable).any(axis=1) | (upl <= 0))
                   & ((free.down & usable).any(axis=1) | (lpl <= 0))))

    def essential(self, primary: int, structure: list[Hypercube]) -> set[int]:
        """The corners of ``structure`` (the primary's hypercubes) without which no free
        hypercube certifies ``primary``: they cannot be published while it is kept."""
        essential = self._essential.get(primary)
        if essential is None:
            free = self._current(primary)
            corners = np.unique(np.concatenate([c.cells for c in structure]))
            usable = ~self.search.hits(primary, free.vectors, corners)
            certified = self._certified(primary, free, usable)
            self._essential[primary] = essential = set(corners[~certified].tolist())
        return essential

    def alternative(self, primary: int, without: int) -> list[Hypercube] | None:
        """Hypercubes certifying ``primary`` whose corners are all hidden and avoid
        ``without`` (a hidden cell about to be published); None if there are none (the
        first of the free ones meeting both levels, or one per direction)."""
        free = self._current(primary)
        usable = ~self.search.hits(primary, free.vectors, np.array([without]))[0]
        if not self._certified(primary, free, usable[None, :])[0]:
            return None
        if (free.both & usable).any():
            chosen = [(int(np.flatnonzero(free.both & usable)[0]), (UP, DOWN))]
        else:
            chosen = [(int(np.flatnonzero(meets & usable)[0]), (direction,))
                      for meets, level, direction in zip(
                          (free.up, free.down), self.levels[primary], (UP, DOWN), strict=True)
                      if level > 0]
        return [Hypercube(*self.search.vector_corners(primary, free.vectors[:, i].tolist()),
                          served) for i, served in chosen]


def clean_up_hypercubes(
    search: HypercubeSearch,
    cover: Cover,
    suppressed: np.ndarray,
    removable: np.ndarray,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> np.ndarray:
    """Publish again, most expensive first, every removable hidden cell whose primaries all
    find another hypercube among the cells still hidden (their certificates are replaced).

    A cell essential to one of its primaries (:class:`_FreeStructures`) is refused at
    once; otherwise each primary's free hypercubes avoiding it are looked up. Each step
    keeps every primary covered, so the pass may stop at any time (``deadline``).
    """
    pattern = search.pattern(suppressed)
    users: dict[int, set[int]] = {}
    for cell, cubes in cover.structures.items():
        for cube in cubes:
            for j in cube.cells.tolist():
                users.setdefault(j, set()).add(cell)
    candidates = np.flatnonzero(suppressed & removable)
    candidates = candidates[np.argsort(-search.cost[candidates], kind="stable")]
    reporter = ProgressReporter(progress, "clean-up", len(candidates), unit="secondaries tried")
    free = _FreeStructures(search, pattern, cover.by_hypercubes(), len(candidates))
    published = 0
    for done, j in enumerate(candidates.tolist()):
        if deadline is not None and deadline.expired:
            reporter.finish(done, f"{published:,} published again; time limit reached")
            return pattern.hidden
        reporter.update(done, f"{published:,} published again")
        primaries = sorted(users.get(j, ()))
        if any(j in free.essential(cell, cover.structures[cell]) for cell in primaries):
            continue
        renewed = {}
        for cell in primaries:
            chosen = free.alternative(cell, j)
            if chosen is None:
                break
            renewed[cell] = chosen
        else:
            free.publish(j, list(renewed))
            published += 1
            for cell, chosen in renewed.items():
                for cube in cover.structures[cell]:
                    for k in cube.cells.tolist():
                        users[k].discard(cell)
                for cube in chosen:
                    for k in cube.cells.tolist():
                        users.setdefault(k, set()).add(cell)
                cover.structures[cell] = chosen
    reporter.finish(len(candidates), f"{published:,} published again")
    return pattern.hidden
