"""A fast heuristic for complementary suppression on any linear table.

For every protection requirement that the current pattern fails, solve one LP that routes the
required deviation through the table at least cost: ``min sum_j w_j (p_j + q_j)`` over
``A (p - q) = 0``, ``0 <= p <= U``, ``0 <= q <= L`` with the primary's deviation fixed at its
protection level; ``w_j = c_j / level`` for published cells (the LP relaxation of "suppress j
when it carries deviation") and almost nothing for cells already suppressed. Every cell that
carries deviation is suppressed; the requirement then holds because the flow itself is an
attack of that size. Requirements are taken largest level first.

A clean-up pass then tries to publish secondaries again, most expensive first: a secondary
is dropped when every requirement whose certificate (the attack that proved it) uses it can
still be met without it. This is sdcTable's SIMPLEHEURISTIC idea (iterated attacker LPs),
with cost-weighted flows instead of single cells and the clean-up on certificates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from tabsdc.errors import InputError
from tabsdc.solver import HighsModel, LinearProgram
from tabsdc.suppression.attacker import Attacker, Requirement

__all__ = ["FlowRouter", "heuristic_pattern", "clean_up"]

#: Relative tolerance on deviations and levels.
TOL = 1e-7
#: Tables with more cells route each requirement locally first (see :class:`FlowRouter`).
LOCAL_ABOVE = 5000


class FlowRouter:
    """The least-cost deviation flow LP, kept in HiGHS and re-solved per requirement.

    On tables with more than ``local_above`` cells a requirement is first routed within the
    cell's neighbourhood (cells within two relations of it; every other cell held at zero,
    so a local flow is a flow of the whole table); only when no local flow exists is the
    LP over the whole table solved. A protecting cycle of a hierarchical table almost always
    lies within two relations, and the local LP has thousands of columns, not 1e5.
    """

    def __init__(self, A: sp.sparray, down: np.ndarray, up: np.ndarray, movable: np.ndarray,
                 local_above: int | None = None):
        A = sp.csr_array(A)
        n = A.shape[1]
        self.n = n
        self.A = A
        self.down = np.where(movable, down, 0.0)
        self.up = np.where(movable, up, 0.0)
        self.local = n > (LOCAL_ABOVE if local_above is None else local_above)
        self.model = _flow_model(A, self.up, self.down)

    def route(
        self, req: Requirement, cost: np.ndarray, suppressed: np.ndarray
    ) -> np.ndarray | None:
        """Cells carrying the cheapest deviation of ``req.level`` through ``req.cell``
        (None when no such flow exists)."""
        scale = max(float(np.max(cost, initial=0.0)), 1.0)
        w = np.where(suppressed, 1e-6 * scale, cost) / req.level
        if self.local:
            cells = self._neighbourhood(req.cell)
            block = self.A[:, cells]
            rows = np.flatnonzero(np.diff(block.tocsr().indptr) > 0)
            model = _flow_model(block[rows], self.up[cells], self.down[cells])
            local = _route_on(model, req, int(np.searchsorted(cells, req.cell)), w[cells])
            if local is not None:
                carries = np.zeros(self.n, dtype=bool)
                carries[cells[local]] = True
                return carries
        return _route_on(self.model, req, req.cell, w, restore=(self.up, self.down))

    def _neighbourhood(self, cell: int, hops: int = 2) -> np.ndarray:
        """Cells reachable from ``cell`` through at most ``hops`` relations (sorted)."""
        cells = np.array([cell])
        for _ in range(hops):
            rows = np.unique(self.A[:, cells].tocoo().row)
            cells = np.unique(self.A[rows].tocoo().col)
        return cells


def _flow_model(A: sp.csr_array, up: np.ndarray, down: np.ndarray) -> HighsModel:
    """``A (p - q) = 0``, ``0 <= p <= up``, ``0 <= q <= down``; objective set per route."""
    m, n = A.shape
    return HighsModel(LinearProgram(
        c=np.zeros(2 * n), A=sp.hstack([A, -A], format="csr"), row_lower=np.zeros(m),
        row_upper=np.zeros(m), col_lower=np.zeros(2 * n), col_upper=np.concatenate([up, down])))


def _route_on(model: HighsModel, req: Requirement, i: int, w: np.ndarray,
              restore: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
    """Solve the flow LP with cell ``i`` (the requirement's cell in this model) fixed at
    the level; cells carrying flow, or None. ``restore``: the kept model's bounds."""
    n = len(w)
    model.set_objective(np.concatenate([w, w]))
    p_fixed = req.level if req.direction > 0 else 0.0
    q_fixed = req.level if req.direction < 0 else 0.0
    model.set_col_bounds([i, n + i], [p_fixed, q_fixed], [p_fixed, q_fixed])
    try:
        result = model.solve()
    finally:
        if restore is not None:
            up, down = restore
            model.set_col_bounds([i, n + i], [0.0, 0.0], [up[i], down[i]])
    if not result.has_solution:
        return None
    flow = np.abs(result.x[:n] - result.x[n:])
    return flow > TOL * max(1.0, req.level)


def heuristic_pattern(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    router: FlowRouter,
    cost: np.ndarray,
    suppressed: np.ndarray,
    labels: Callable[[int], str],
    progress: Callable[[str], None] | None = None,
) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Extend ``suppressed`` until every requirement holds.

    Returns the pattern and, per requirement (by position in ``reqs``), the cells of a
    least-deviation attack that certifies it.
    """
    suppressed = suppressed.copy()
    certificates: dict[int, np.ndarray] = {}
    order = sorted(range(len(reqs)), key=lambda k: -reqs[k].level)
    attacker.set_pattern(suppressed)
    step = max(1, len(order) // 10)
    for done, k in enumerate(order, start=1):
        if progress is not None and done % step == 0:
            progress(f"routing: {done} of {len(order)} requirements, "
                     f"{int(suppressed.sum())} cells suppressed")
        req = reqs[k]
        proof = attacker.certificate(req)
        if proof is None:
            carries = router.route(req, cost, suppressed)
            if carries is None:
                raise InputError(
                    f"no suppression pattern can protect {labels(req.cell)}: its "
                    f"{'upper' if req.direction > 0 else 'lower'} protection level "
                    f"{req.level:g} exceeds what the table's relations and a-priori bounds "
                    "allow"
                )
            suppressed |= carries
            attacker.set_pattern(suppressed)
            proof = np.flatnonzero(carries)
        certificates[k] = proof
    return suppressed, certificates


def clean_up(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    cost: np.ndarray,
    suppressed: np.ndarray,
    removable: np.ndarray,
    certificates: dict[int, np.ndarray],
    progress: Callable[[str], None] | None = None,
) -> np.ndarray:
    """Publish again every removable suppressed cell that no requirement needs.

    A cell no certificate uses is dropped at once; otherwise the requirements whose
    certificates use it are re-proved without it, and it stays when one of them fails.
    """
    suppressed = suppressed.copy()
    users: dict[int, set[int]] = {}
    for k, cells in certificates.items():
        for j in cells.tolist():
            users.setdefault(j, set()).add(k)
    unused = removable & suppressed
    unused[list(users)] = False
    suppressed[unused] = False
    candidates = np.flatnonzero(suppressed & removable)
    step = max(1, len(candidates) // 10)
    for done, j in enumerate(candidates[np.argsort(-cost[candidates], kind="stable")], 1):
        if progress is not None and done % step == 0:
            progress(f"clean-up: {done} of {len(candidates)} secondaries tried")
        suppressed[j] = False
        attacker.set_pattern(suppressed)
        renewed = {}
        for k in sorted(users.get(int(j), ())):
            proof = attacker.certificate(reqs[k])
            if proof is None:
                break
            renewed[k] = proof
        else:
            for k, proof in renewed.items():
                for cell in certificates[k].tolist():
                    users[cell].discard(k)
                for cell in proof.tolist():
                    users.setdefault(cell, set()).add(k)
                certificates[k] = proof
            continue
        suppressed[j] = True
    attacker.set_pattern(suppressed)
    return suppressed
