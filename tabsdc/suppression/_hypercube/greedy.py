"""A least-cost hypercube per primary, largest protection level first.

:func:`hypercube_pattern` takes the primaries a batch at a time, evaluated together on the
pattern the batch found, and corrects each choice for the cells hidden since in its batch,
so that every primary gets the cheapest hypercube on the pattern all primaries before it
left. :func:`widen_cover` tries the requirements no hypercube met again with a wider search.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tabsdc._flows import DOWN, UP, Requirement
from tabsdc._hypercubes.cover import Cover, choose_hypercubes
from tabsdc._hypercubes.search import Evaluation, Hypercube, HypercubeSearch, Proposal
from tabsdc._progress import Deadline, ProgressReporter


def hypercube_pattern(
    search: HypercubeSearch,
    reqs: list[Requirement],
    suppressed: np.ndarray,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    batch: int = 128,
) -> Cover:
    """Add a least-cost hypercube per primary (largest level first).

    The primaries are taken in that order, ``batch`` at a time: every candidate of each is
    evaluated on the pattern as the batch found it (:meth:`HypercubeSearch.batch_cheapest`),
    then they are taken in order. For a primary whose grid received cells hidden for a
    primary before it in the batch, the candidates with such a cell as a corner add its
    cost less (:meth:`HypercubeSearch.corner_sums`), and the cheapest is chosen again
    (:func:`_now`). So every primary gets the cheapest hypercube on the pattern all
    primaries before it left, as one at a time would. Primaries with none meeting both
    levels, and those whose candidates were pruned by their lines (which such a cell may
    change), are evaluated again one at a time (:meth:`HypercubeSearch.evaluate`)."""
    pattern = search.pattern(suppressed)
    hidden = int(suppressed.sum())
    levels: dict[int, list[float]] = {}
    for req in reqs:
        levels.setdefault(req.cell, [0.0, 0.0])[0 if req.direction == UP else 1] = req.level
    order = np.array(sorted(levels, key=lambda i: (-max(levels[i]), i)), dtype=np.int64)
    level_rows = np.array([levels[int(i)] for i in order]).reshape(-1, 2)
    reporter = ProgressReporter(progress, "hypercubes", len(order), unit="primaries")
    unmet: list[Requirement] = []
    structures: dict[int, list[Hypercube]] = {}
    as_tuples = {cell: (up, down) for cell, (up, down) in levels.items()}
    touched = np.zeros(search.n_slots, dtype=bool)  # hidden during the current batch
    for start in range(0, len(order), batch):
        reporter.update(start, f"{hidden:,} cells suppressed")
        cells = order[start:start + batch]
        proposals = search.batch_cheapest(cells, pattern, level_rows[start:start + batch])
        new: list[np.ndarray] = []
        for done, (cell, proposal) in enumerate(zip(cells.tolist(), proposals, strict=True),
                                                start=start):
            if deadline is not None and deadline.expired:
                reporter.finish(done, deadline.why)
                return Cover(pattern.hidden, unmet, False, structures, as_tuples)
            changed = bool(new) and touched[proposal.grid].any() if proposal else False
            if proposal is None or (changed and proposal.pruned):
                # (a pruned primary's vectors are those of its cheapest lines: chosen again)
                chosen, missing = choose_hypercubes(search, cell, pattern, as_tuples[cell])
                unmet += [Requirement(cell, d, as_tuples[cell][0 if d == UP else 1])
                          for d in missing]
            elif changed and proposal.added > 0:
                chosen = [_now(search, cell, proposal, np.concatenate(new))]
            else:
                chosen = [proposal.cube]
            structures[cell] = chosen
            for cube in chosen:
                added = cube.cells[~pattern.hidden[cube.cells]]
                if len(added):
                    pattern.hide(added)
                    touched[search.cell_slots[added]] = True
                    new.append(added)
                    hidden += len(added)
        for added in new:
            touched[search.cell_slots[added]] = False
    reporter.finish(len(order), f"{hidden:,} cells suppressed, "
                                f"{len(unmet):,} requirements left to routing")
    return Cover(pattern.hidden, unmet, True, structures, as_tuples)


def _now(search: HypercubeSearch, cell: int, proposal: Proposal, new: np.ndarray
         ) -> Hypercube:
    """``proposal``'s choice with the cells ``new`` hidden since it was made: a candidate
    adds the cost of the new cells among its corners less (they could be corners before,
    so whether a candidate meets the levels does not change), and the cheapest (the first
    of equal ones, as :func:`~tabsdc._hypercubes.cover.choose_hypercubes`) may
    now be another one."""
    meets = proposal.every_meets
    evaluation = Evaluation(cell, proposal.rows, proposal.every_added, meets, meets, meets)
    now = np.maximum(proposal.every_added
                     - search.corner_sums(evaluation, new, search.cost[new]), 0.0)
    best = int(np.flatnonzero(meets)[np.argmin(now[meets])])
    return Hypercube(*search.corners(evaluation, best), (UP, DOWN))


def widen_cover(search: HypercubeSearch, cover: Cover) -> Cover:
    """Try the requirements ``cover`` left unmet again with a wider ``search`` (every chain,
    more candidates); the ones met get their hypercube added, the others stay unmet."""
    pattern = search.pattern(cover.pattern)
    structures = dict(cover.structures)
    unmet = []
    for req in cover.unmet:
        levels = (req.level, 0.0) if req.direction == UP else (0.0, req.level)
        chosen, missing = choose_hypercubes(search, req.cell, pattern, levels)
        if missing:
            unmet.append(req)
            continue
        structures[req.cell] = structures.get(req.cell, []) + chosen
        for cube in chosen:
            pattern.hide(cube.cells)
    return Cover(pattern.hidden, unmet, cover.complete, structures, cover.levels,
                 cover.routes)
