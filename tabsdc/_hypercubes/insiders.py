"""Hypercubes clear of the respondents of single-contributor cells (:func:`avoid_insiders`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tabsdc._flows import DOWN, UP, Requirement
from tabsdc._hypercubes.cover import Cover, choose_hypercubes
from tabsdc._hypercubes.search import Hypercube, HypercubeSearch
from tabsdc._progress import Deadline, ProgressReporter
from tabsdc._respondents import Insiders


def avoid_insiders(search: HypercubeSearch, cover: Cover, insiders: Insiders,
                   suppressed: np.ndarray, progress: Callable[[str], None] | None = None,
                   deadline: Deadline | None = None) -> tuple[np.ndarray, list[Requirement]]:
    """Make each primary's hypercubes clear of every respondent they rely on.

    The respondent of a single-contributor cell knows its value (:mod:`tabsdc.audit._insider`):
    a hypercube with one of its cells as a corner does not move in that scenario. A
    primary's direction is proven against a respondent when one of its hypercubes serving
    that direction has none of the respondent's cells as a corner. For every primary whose
    hypercubes all have some respondent's cell as a corner (in a direction), the cheapest
    hypercube with none of those respondents' cells as a corner is added (those cells
    excluded as corners, :meth:`Pattern.excluding`); so its first hypercube serves every
    other respondent and the new one these. The primaries are taken in the cover's order.

    Returns the pattern with the new hypercubes' corners hidden (they are added to
    ``cover.structures``, so they travel to the audit as witnesses) and the requirements
    no such hypercube meets (or that the deadline left), for routing with the respondent
    fixed (:meth:`tabsdc.suppression._attacker.Attacker.proof`).
    """
    pattern = search.pattern(suppressed)
    other = {(r.cell, r.direction) for r in cover.unmet} | set(cover.routes)
    left: list[Requirement] = []
    reporter = ProgressReporter(progress, "hypercubes clear of respondents", len(cover.levels),
                                unit="primaries")
    added = 0
    for done, cell in enumerate(list(cover.structures)):
        reporter.update(done, f"{added:,} hypercubes added")
        levels = cover.levels[cell]
        open_groups: dict[int, np.ndarray] = {}
        for direction, level in ((UP, levels[0]), (DOWN, levels[1])):
            serving = [c for c in cover.structures[cell] if direction in c.directions]
            if level <= 0 or (cell, direction) in other or not serving:
                continue
            groups = insiders.groups_in(serving[0].cells, cell)
            for cube in serving[1:]:
                groups = np.intersect1d(groups, insiders.groups_in(cube.cells, cell))
            if len(groups):
                open_groups[direction] = groups
        if not open_groups:
            continue
        if deadline is not None and deadline.expired:
            left += [Requirement(cell, d, levels[0 if d == UP else 1]) for d in open_groups]
            continue
        avoided = np.concatenate([insiders.members(int(g)) for groups in open_groups.values()
                                  for g in groups])
        wanted = tuple(levels[k] if d in open_groups else 0.0
                       for k, d in enumerate((UP, DOWN)))
        with pattern.excluding(avoided):
            chosen, missing = choose_hypercubes(search, cell, pattern, wanted)
        for cube in chosen:
            served = tuple(d for d in cube.directions if d in open_groups)
            cover.structures[cell].append(Hypercube(cube.cells, cube.signs, served))
            pattern.hide(cube.cells)
            added += 1
        left += [Requirement(cell, d, levels[0 if d == UP else 1]) for d in missing]
    reporter.finish(len(cover.structures), f"{added:,} hypercubes added, {len(left):,} "
                                           "requirements left to routing")
    return pattern.hidden, left
