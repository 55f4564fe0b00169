"""An independent check of the hypercubes' certificates on the relations themselves."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import DOWN, UP, Requirement
from tabsdc._hypercubes.cover import Cover


def uncertified(A: sp.sparray, cover: Cover, pattern: np.ndarray, down: np.ndarray,
                up: np.ndarray) -> list[Requirement]:
    """The requirements of ``cover`` whose hypercubes do not prove them on ``pattern``.

    An independent check of the certificates, on the relations themselves: a hypercube
    with signs ``s`` proves its primary's upward requirement when ``A s = 0`` (it is a
    deviation the relations allow), every corner is hidden in ``pattern``, and every corner
    has room ``upl`` in its sign's direction (``U`` where ``s = +1``, ``L`` where
    ``s = -1``); downward likewise with ``lpl`` and the directions swapped. All hypercubes
    are checked at once (one sparse product). Requirements the cover left unmet or routed in
    a box (proven by flows, their own certificates) are not checked here.

    Examples
    --------
    >>> from tabsdc._hypercubes.search import Hypercube
    >>> A = sp.csr_array([[1.0, 1.0, -1.0]])          # x0 + x1 = x2
    >>> cube = Hypercube(np.array([0, 1]), np.array([1, -1]), (UP,))
    >>> cover = Cover(np.ones(3, bool), [], True, {0: [cube]}, {0: (2.0, 0.0)})
    >>> uncertified(A, cover, np.ones(3, bool), np.full(3, 5.0), np.full(3, 5.0))
    []
    >>> uncertified(A, cover, np.ones(3, bool), np.array([5.0, 1, 5]), np.full(3, 5.0))
    [Requirement(cell=0, direction=1, level=2.0, fixed=(), sides=())]
    """
    owners, cubes, deviations = cover.deviations(A.shape[1])
    unmet = {(r.cell, r.direction) for r in cover.unmet} | set(cover.routes)
    wanted = [(cell, direction) for cell, (upl, lpl) in cover.levels.items()
              for direction, level in ((UP, upl), (DOWN, lpl))
              if level > 0 and (cell, direction) not in unmet]
    if not cubes:
        return [Requirement(c, d, cover.levels[c][0 if d == UP else 1]) for c, d in wanted]
    # the corners as the audit reads them: the nonzeros of each column
    cells, signs = deviations.indices, deviations.data
    which = np.repeat(np.arange(len(cubes)), np.diff(deviations.indptr))
    residual = abs(sp.csr_array(A) @ deviations).max(axis=0).toarray().ravel()
    published_corners = np.bincount(which, weights=~pattern[cells], minlength=len(cubes))
    good = (residual == 0) & (published_corners == 0)
    proven = set()
    for direction in (UP, DOWN):
        level = np.array([cover.levels[o][0 if direction == UP else 1] for o in owners])
        serves = np.array([direction in c.directions for c in cubes])
        room = np.where((signs > 0) == (direction == UP), up[cells], down[cells])
        short = np.bincount(which, weights=room < level[which] * (1 - 1e-9),
                            minlength=len(cubes)) > 0
        for k in np.flatnonzero(good & serves & ~short).tolist():
            proven.add((owners[k], direction))
    return [Requirement(c, d, cover.levels[c][0 if d == UP else 1])
            for c, d in wanted if (c, d) not in proven]
