"""The attacker's LP for a suppression pattern, its certificates and its capacity cuts.

Work in deviations ``d = y - a`` from the true values: a pattern ``z`` (1 = suppressed) lets an
intruder move cell j within ``[-L_j z_j, U_j z_j]`` where ``L_j = a_j - lb_j`` and
``U_j = ub_j - a_j``, subject to ``A d = 0``. Primary cell i is protected upward when
``max d_i >= upl_i`` and downward when ``max -d_i >= lpl_i`` (Fischetti and Salazar, "Solving
the cell suppression problem on tabular data with linear constraints", *Management Science*
47(7), 2001; Cox, *Towards a quality assessment ...*, slide 14).

Capacity cut. Write the attack as ``min c^T d`` with ``c = -e_i`` (upward) or ``c = e_i``
(downward). For any row multipliers ``lambda`` the reduced costs ``r = c - A^T lambda`` give,
by weak duality over the box, ``-min c^T d <= sum_j (max(r_j, 0) L_j + max(-r_j, 0) U_j) z_j``
for every pattern z. Protection therefore needs

    sum_j k_j z_j >= level,   k_j = max(r_j, 0) L_j + max(-r_j, 0) U_j,

for every lambda, and with the optimal lambda of the current pattern the inequality is violated
exactly when the pattern fails (strong duality). Coefficients above ``level`` are lowered to
``level``, which keeps the cut valid for binary z.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from tabsdc.audit.verify import prior_bounds
from tabsdc.errors import InputError
from tabsdc.network import neighbourhood
from tabsdc.progress import Deadline
from tabsdc.solver import HighsModel, LinearProgram

if TYPE_CHECKING:
    from tabsdc.table import Table

__all__ = [
    "Attacker", "Requirement", "capacities", "flow_model", "local_flow", "requirements",
    "solve_flow",
]

#: Relative tolerance on deviations and levels.
TOL = 1e-7
#: Direction codes: +1 the intruder pushes the value up, -1 down.
UP, DOWN = 1, -1


@dataclass(frozen=True)
class Requirement:
    """Primary ``cell`` must be movable by ``level`` in ``direction`` (+1 up, -1 down)."""

    cell: int
    direction: int
    level: float


def capacities(table: Table, prior: str = "table",
               q: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How far the intruder may move each cell down and up: ``L = a - lb`` and
    ``U = ub - a`` for the a-priori bounds of ``prior`` (:func:`tabsdc.audit.verify.prior_bounds`),
    each at most ``1.5 max |a| + max(lpl, upl)`` so that the attacker's LPs stay bounded
    (a larger move is never needed to show a protection level).

    Raises
    ------
    InputError
        A cell outside its a-priori bounds (named).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> table = Table(pd.DataFrame({"value": [10.0, 4.0, 6.0], "lb": [0.0, 3.0, 0.0]}),
    ...               [[-1, 1, 1]], [0])
    >>> down, up = capacities(table)
    >>> down.tolist(), up.tolist()
    ([10.0, 1.0, 6.0], [15.0, 15.0, 15.0])
    """
    values = table.values
    lb, ub = prior_bounds(table.cells, values, prior, q)
    levels = table.cells[["lpl", "upl"]].to_numpy(float)
    cap = 1.5 * float(np.abs(values).max(initial=0.0)) + float(levels.max(initial=0.0))
    down = np.minimum(values - lb, cap)
    up = np.minimum(ub - values, cap)
    bad = (down < 0) | (up < 0)
    if bad.any():
        label = table.cell_labels(np.flatnonzero(bad)[:1])[0]
        raise InputError(f"{label} lies outside its a-priori bounds [lb, ub]")
    return down, up


def requirements(primary: np.ndarray, lpl: np.ndarray, upl: np.ndarray) -> list[Requirement]:
    """The protection requirements of the primary cells (levels > 0 only)."""
    out = []
    for i in np.flatnonzero(primary):
        if upl[i] > 0:
            out.append(Requirement(int(i), UP, float(upl[i])))
        if lpl[i] > 0:
            out.append(Requirement(int(i), DOWN, float(lpl[i])))
    return out


#: Tables with more cells try every attack and route locally first (see :class:`Attacker`).
LOCAL_ABOVE = 5000


class Attacker:
    """The attacker LP of the current pattern, kept in HiGHS between requirements.

    Only suppressed cells are variables (published cells are fixed at deviation 0) and only
    the relations touching them are rows, so each LP is as small as the pattern; multipliers
    of the other relations are zero. The models are built when first needed after a pattern
    change. On tables with more than ``LOCAL_ABOVE`` cells a certificate is first sought
    among the suppressed cells within three relations of the primary cell (every other cell
    held at zero, so a local attack is an attack on the whole table); the whole pattern's LP
    is solved only when that fails.

    Parameters
    ----------
    A : sparse matrix
        The table's relations.
    down_capacity, up_capacity : ndarray
        ``L = a - lb`` and ``U = ub - a``, finite.
    deadline : Deadline, optional
        Every LP gets at most the time it leaves; an LP it stops counts as failed (no
        certificate) and :meth:`reach` raises :class:`~tabsdc.errors.SolverError`.
    hops : int
        Radius of the local neighbourhoods, in relations (see :func:`neighbourhood`).
    """

    def __init__(self, A: sp.sparray, down_capacity: np.ndarray, up_capacity: np.ndarray,
                 deadline: Deadline | None = None, hops: int = 3):
        self.A = sp.csc_array(A)
        self.AT = self.A.T.tocsr()
        self.by_row = sp.csr_array(A)
        self.L = np.asarray(down_capacity, dtype=float)
        self.U = np.asarray(up_capacity, dtype=float)
        self.n = self.A.shape[1]
        self.local = self.n > LOCAL_ABOVE
        self.n_solves = 0
        self.deadline = deadline or Deadline(None)
        self.hops = hops
        self.set_pattern(np.zeros(self.n, dtype=bool))

    def set_pattern(self, suppressed: np.ndarray) -> None:
        """Cells with ``suppressed`` True may move within their capacities; others are fixed.

        A fractional pattern (values in [0, 1]) scales the capacities: the LP relaxation of
        the suppression model, whose cuts are valid for every binary pattern too.
        """
        weight = np.asarray(suppressed, dtype=float)
        self._weight = weight
        self._columns = np.flatnonzero(weight > 1e-9)
        self._position = np.full(self.n, -1)
        self._position[self._columns] = np.arange(len(self._columns))
        self._model: HighsModel | None = None
        self._flow: HighsModel | None = None

    def _build(self) -> None:
        """The pattern's attack LP and, split as ``d = p - q``, its certificate LP."""
        columns, weight = self._columns, self._weight
        block = self.A[:, columns].tocsr()
        self._rows = np.flatnonzero(np.diff(block.indptr) > 0)
        block = block[self._rows]
        m, k = block.shape
        down, up = self.L[columns] * weight[columns], self.U[columns] * weight[columns]
        self._model = HighsModel(LinearProgram(
            c=np.zeros(k), A=block, row_lower=np.zeros(m), row_upper=np.zeros(m),
            col_lower=-down, col_upper=up))
        self._flow = flow_model(block, up, down)

    def reach(self, req: Requirement) -> tuple[float, np.ndarray, np.ndarray]:
        """How far the intruder can move ``req.cell`` in ``req.direction`` under the pattern.

        Capacities must be finite (see :func:`tabsdc.suppression.suppress`), so the LP is
        bounded.

        Returns
        -------
        reach : float
        row_duals : ndarray
            The optimal multipliers of every relation of the table.
        deviation : ndarray
            An optimal attack ``d`` over every cell (the certificate).
        """
        duals = np.zeros(self.A.shape[0])
        attack = np.zeros(self.n)
        position = self._position[req.cell]
        if position < 0:  # a published cell cannot move
            return 0.0, duals, attack
        if self._model is None:
            self._build()
        c = np.zeros(len(self._columns))
        c[position] = -float(req.direction)
        self._model.set_objective(c, sense="min")
        self._model.set_time_limit(self.deadline.solver_limit())
        result = self._model.solve().require_solution()
        self.n_solves += 1
        duals[self._rows] = result.row_duals
        attack[self._columns] = result.x
        return -float(result.objective), duals, attack

    def certificate(self, req: Requirement, local_only: bool = False) -> np.ndarray | None:
        """The cells of a least total deviation attack meeting ``req`` under the pattern
        (a sparse proof that the requirement holds), or None when the pattern fails it
        (with ``local_only`` on a large table: when no local attack meets it)."""
        position = self._position[req.cell]
        if position < 0:
            return None
        self.n_solves += 1
        if self.local:
            near = neighbourhood(self.A, self.by_row, req.cell, self.hops)
            cells = near[self._weight[near] > 1e-9]
            w = self._weight[cells]
            proof = local_flow(self.A, cells, req, self.U[cells] * w, self.L[cells] * w,
                               np.ones(len(cells)), self.deadline.solver_limit())
            if proof is not None:
                return proof
            if local_only:
                return None
        if self._flow is None:
            self._build()
        cell, weight = req.cell, self._weight[req.cell]
        moved = solve_flow(self._flow, req, position, np.ones(len(self._columns)),
                           restore=(self.U[cell] * weight, self.L[cell] * weight),
                           time_limit=self.deadline.solver_limit())
        return None if moved is None else self._columns[moved]

    def cut(self, req: Requirement, row_duals: np.ndarray) -> np.ndarray:
        """The capacity cut scaled to ``k @ z >= 1`` (``k = min(k, level) / level``; dense).

        Scaling by the level keeps every coefficient in [0, 1]; coefficients below 1e-9
        are dropped, which only weakens the cut (z >= 0)."""
        c = np.zeros(self.n)
        c[req.cell] = -float(req.direction)
        r = c - self.AT @ row_duals
        k = np.where(r > 0, r * self.L, 0.0) + np.where(r < 0, -r * self.U, 0.0)
        k = np.minimum(k / req.level, 1.0)
        k[k < 1e-9] = 0.0
        return k


def local_flow(by_column: sp.csc_array, cells: np.ndarray, req: Requirement, up: np.ndarray,
               down: np.ndarray, w: np.ndarray,
               time_limit: float | None = None) -> np.ndarray | None:
    """:func:`solve_flow` with every cell outside ``cells`` (sorted, the requirement's cell
    among them) held at zero: the cells carrying flow, or None. Such a flow satisfies every
    relation of the table, so it is a flow (an attack, a route) of the whole table."""
    block = by_column[:, cells]
    rows = np.flatnonzero(np.diff(block.tocsr().indptr) > 0)
    moved = solve_flow(flow_model(block[rows], up, down), req,
                       int(np.searchsorted(cells, req.cell)), w, time_limit=time_limit)
    return None if moved is None else cells[moved]


def flow_model(A: sp.sparray, up: np.ndarray, down: np.ndarray) -> HighsModel:
    """``A (p - q) = 0``, ``0 <= p <= up``, ``0 <= q <= down``; objective set per solve."""
    A = sp.csr_array(A)
    m, n = A.shape
    return HighsModel(LinearProgram(
        c=np.zeros(2 * n), A=sp.hstack([A, -A], format="csr"), row_lower=np.zeros(m),
        row_upper=np.zeros(m), col_lower=np.zeros(2 * n), col_upper=np.concatenate([up, down])))


def solve_flow(model: HighsModel, req: Requirement, i: int, w: np.ndarray,
               restore: tuple[float, float] | None = None,
               time_limit: float | None = None) -> np.ndarray | None:
    """The least ``w``-cost flow with column ``i`` (the requirement's cell in ``model``)
    moved by the level in the requirement's direction: which columns carry flow, or None
    when no such flow exists (or none was found within ``time_limit`` seconds).
    ``restore``: the kept model's bounds ``(up, down)`` of ``i``."""
    n = len(w)
    model.set_time_limit(time_limit)
    model.set_objective(np.concatenate([w, w]))
    p_fixed = req.level if req.direction > 0 else 0.0
    q_fixed = req.level if req.direction < 0 else 0.0
    model.set_col_bounds([i, n + i], [p_fixed, q_fixed], [p_fixed, q_fixed])
    try:
        result = model.solve()
    finally:
        if restore is not None:
            model.set_col_bounds([i, n + i], [0.0, 0.0], list(restore))
    if not result.has_solution:
        return None
    flow = np.abs(result.x[:n] - result.x[n:])
    return flow > TOL * max(1.0, req.level)
