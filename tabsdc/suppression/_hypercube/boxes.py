"""Routing within a box around the primary, for the requirements no hypercube meets."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import Requirement, local_flow
from tabsdc._hypercubes.cover import Cover
from tabsdc._hypercubes.search import HypercubeSearch
from tabsdc._progress import Deadline
from tabsdc._respondents import Insiders
from tabsdc.audit._insider import insider_proofs

#: The largest box of cells :func:`route_in_boxes` routes a requirement in.
BOX_CELLS = 50_000


def route_in_boxes(search: HypercubeSearch, A: sp.sparray, cover: Cover, cost: np.ndarray,
                   deadline: Deadline | None = None, max_cells: int = BOX_CELLS,
                   insiders: Insiders | None = None) -> Cover:
    """Route the requirements ``cover`` left unmet (no hypercube meets them) by the
    least-cost deviation flow within a box of the table around the primary, every cell
    outside it held at zero (:func:`tabsdc.suppression._attacker.local_flow`; such a flow
    satisfies every relation of the table, so it is an attack proving the requirement).

    A hypercube moves each code by the whole deviation; a flow may split it, e.g. a total
    whose every chain down to a leaf ends in a cell too small for the level. The box is
    first the product, over the dimensions, of the codes of the primary's vertical paths
    (``search`` with every chain: its ancestors and every code below it), then, when no
    flow lies in it and it has at most ``max_cells`` cells, the product of the codes of all
    its candidate vectors. With ``insiders`` each requirement is proved in its boxes against
    every respondent too (:func:`tabsdc.audit.insider_proofs`: a flow holding the cells of
    each respondent the first flow moves). Returns the cover with the routed requirements
    moved from ``unmet`` to ``routes`` (the cells of all their flows) and those cells
    hidden; the others stay unmet (for routing on the whole table). A flow lies in a box
    of a few thousand cells where a neighbourhood of the same reach in relations holds
    most of a 10^6-cell table.
    """
    by_column = sp.csc_array(A)
    pattern = cover.pattern.copy()
    routes = dict(cover.routes)
    unmet = []
    scale = max(float(np.max(cost, initial=0.0)), 1.0)

    def route(req: Requirement) -> np.ndarray | None:
        options = [search.lines[d][code] for d, code in enumerate(search.coords[req.cell])]
        vertical = [np.unique(o.codes[(o.signs >= 0).all(axis=1) & (o.codes >= 0).any(axis=1)]
                              ) for o in options]
        for codes in ([v[v >= 0] for v in vertical], [o.union for o in options]):
            if math.prod(len(c) for c in codes) > max_cells:
                continue
            if deadline is not None and deadline.expired:
                return None
            keys = np.zeros(1, dtype=np.int64)
            for d, c in enumerate(codes):
                keys = np.add.outer(keys, c * search.strides[d]).ravel()
            cells = np.sort(search.cells(keys))
            cells = cells[cells >= 0]
            movable = search.allowed[cells] | pattern[cells]
            w = np.where(pattern[cells], 1e-6 * scale, cost[cells]) / req.level
            carrying = local_flow(by_column, cells, req, np.where(movable, search.up[cells], 0.0),
                                  np.where(movable, search.down[cells], 0.0), w,
                                  None if deadline is None else deadline.solver_limit())
            if carrying is not None:
                pattern[carrying] = True
                return carrying
        return None

    for req in cover.unmet:
        proofs, failed = insider_proofs(req, insiders, route, stop_at_failure=True)
        if failed:
            unmet.append(req)
        else:
            routes[(req.cell, req.direction)] = np.unique(np.concatenate(proofs))
    return Cover(pattern, unmet, cover.complete, cover.structures, cover.levels, routes)
