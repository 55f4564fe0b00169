"""The hypercubes chosen for the primaries (:class:`Cover`) and the choice for one primary.

:func:`choose_hypercubes` takes the cheapest candidate meeting both levels of a primary, or
one per direction when none meets both; :func:`deviation_columns` writes hypercubes as the
columns of signs the audit checks as witnesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import DOWN, UP, Requirement
from tabsdc._hypercubes.search import Evaluation, Hypercube, HypercubeSearch, Pattern


@dataclass


class Cover:
    """The hypercubes chosen for the primaries.

    ``pattern``: the cells hidden; ``unmet``: requirements no hypercube meets (to be
    routed); ``complete``: every primary treated before the deadline; ``structures``: the
    corner cells of each primary's hypercubes (its certificates); ``levels``: each
    primary's ``(upl, lpl)``; ``routes``: the requirements no hypercube meets that a flow
    within a box proves (:func:`route_in_boxes`), by ``(cell, direction)``, with the cells
    carrying it.
    """

    pattern: np.ndarray
    unmet: list[Requirement]
    complete: bool
    structures: dict[int, list[Hypercube]]
    levels: dict[int, tuple[float, float]]
    routes: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    def by_hypercubes(self) -> dict[int, tuple[float, float]]:
        """Each primary's levels, 0 for the directions its hypercubes do not certify (left
        unmet or routed)."""
        other = {(r.cell, r.direction) for r in self.unmet} | set(self.routes)
        return {cell: (0.0 if (cell, UP) in other else upl,
                       0.0 if (cell, DOWN) in other else lpl)
                for cell, (upl, lpl) in self.levels.items()}

    def deviations(self, n_cells: int) -> tuple[list[int], list[Hypercube], sp.csc_array]:
        """Every chosen hypercube as a column of signs (a deviation over ``n_cells``
        cells), with the primary it serves: the witnesses the audit checks
        (:func:`tabsdc.audit._witnesses.witness_bounds`)."""
        owners, cubes = [], []
        for cell, chosen in self.structures.items():
            owners += [cell] * len(chosen)
            cubes += chosen
        return owners, cubes, deviation_columns(cubes, n_cells)


def deviation_columns(cubes: list[Hypercube], n_cells: int) -> sp.csc_array:
    """The hypercubes ``cubes`` as columns of signs over ``n_cells`` cells (cells x cubes).

    >>> cube = Hypercube(np.array([0, 2]), np.array([1, -1]), (UP,))
    >>> deviation_columns([cube], 3).toarray().ravel().tolist()
    [1.0, 0.0, -1.0]
    """
    if not cubes:
        return sp.csc_array((n_cells, 0))
    which = np.repeat(np.arange(len(cubes)), [len(c.cells) for c in cubes])
    cells = np.concatenate([c.cells for c in cubes])
    signs = np.concatenate([c.signs for c in cubes]).astype(float)
    return sp.csc_array((signs, (cells, which)), shape=(n_cells, len(cubes)))


def choose_hypercubes(search: HypercubeSearch, cell: int, pattern: Pattern,
            levels: tuple[float, float]) -> tuple[list[Hypercube], list[int]]:
    """The cheapest hypercube meeting both levels of ``cell`` (or one per direction when
    none meets both): their corners, and the directions no hypercube meets."""
    return _pick(search, search.evaluate(cell, pattern, levels), levels)


def _pick(search: HypercubeSearch, evaluation: Evaluation, levels: tuple[float, float],
          usable: np.ndarray | None = None) -> tuple[list[Hypercube], list[int]]:
    """Among the candidates of ``evaluation`` (those ``usable`` only), the cheapest meeting
    both levels, or one per direction; and the directions none meets."""
    added = evaluation.added
    meets = [evaluation.meets_both, evaluation.meets_up, evaluation.meets_down]
    if usable is not None:
        meets = [m & usable for m in meets]
    both, meets_up, meets_down = meets
    if both.any():
        chosen = [(np.flatnonzero(both)[np.argmin(added[both])], (UP, DOWN))]
        missing = []
    else:
        chosen, missing = [], []
        for meets_one, level, direction in ((meets_up, levels[0], UP),
                                            (meets_down, levels[1], DOWN)):
            if level <= 0:
                continue
            if meets_one.any():
                chosen.append((np.flatnonzero(meets_one)[np.argmin(added[meets_one])],
                               (direction,)))
            else:
                missing.append(direction)
    return [Hypercube(*search.corners(evaluation, int(c)), served)
            for c, served in chosen], missing
