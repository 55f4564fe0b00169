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

import numpy as np
import scipy.sparse as sp

from tabsdc.solver import HighsModel, LinearProgram

__all__ = ["Attacker", "Requirement", "requirements"]

#: Direction codes: +1 the intruder pushes the value up, -1 down.
UP, DOWN = 1, -1


@dataclass(frozen=True)
class Requirement:
    """Primary ``cell`` must be movable by ``level`` in ``direction`` (+1 up, -1 down)."""

    cell: int
    direction: int
    level: float


def requirements(primary: np.ndarray, lpl: np.ndarray, upl: np.ndarray) -> list[Requirement]:
    """The protection requirements of the primary cells (levels > 0 only)."""
    out = []
    for i in np.flatnonzero(primary):
        if upl[i] > 0:
            out.append(Requirement(int(i), UP, float(upl[i])))
        if lpl[i] > 0:
            out.append(Requirement(int(i), DOWN, float(lpl[i])))
    return out


class Attacker:
    """The attacker LP of the current pattern, kept in HiGHS between requirements.

    Only suppressed cells are variables (published cells are fixed at deviation 0) and only
    the relations touching them are rows, so each LP is as small as the pattern; multipliers
    of the other relations are zero.

    Parameters
    ----------
    A : sparse matrix
        The table's relations.
    down_capacity, up_capacity : ndarray
        ``L = a - lb`` and ``U = ub - a``, finite.
    """

    def __init__(self, A: sp.sparray, down_capacity: np.ndarray, up_capacity: np.ndarray):
        self.A = sp.csc_array(A)
        self.AT = self.A.T.tocsr()
        self.L = np.asarray(down_capacity, dtype=float)
        self.U = np.asarray(up_capacity, dtype=float)
        self.n = self.A.shape[1]
        self.n_solves = 0
        self._columns = np.zeros(0, dtype=int)
        self._rows = np.zeros(0, dtype=int)
        self._model: HighsModel | None = None
        self._flow: HighsModel | None = None

    def set_pattern(self, suppressed: np.ndarray) -> None:
        """Cells with ``suppressed`` True may move within their capacities; others are fixed.

        A fractional pattern (values in [0, 1]) scales the capacities: the LP relaxation of
        the suppression model, whose cuts are valid for every binary pattern too.
        """
        weight = np.asarray(suppressed, dtype=float)
        columns = np.flatnonzero(weight > 1e-9)
        block = self.A[:, columns].tocsr()
        rows = np.flatnonzero(np.diff(block.indptr) > 0)
        block = block[rows]
        m, k = block.shape
        self._columns, self._rows, self._weight = columns, rows, weight
        self._position = np.full(self.n, -1)
        self._position[columns] = np.arange(k)
        down, up = self.L[columns] * weight[columns], self.U[columns] * weight[columns]
        self._model = HighsModel(LinearProgram(
            c=np.zeros(k), A=block, row_lower=np.zeros(m), row_upper=np.zeros(m),
            col_lower=-down, col_upper=up))
        # the same polytope split as d = p - q, for the sparse certificates
        self._flow = HighsModel(LinearProgram(
            c=np.ones(2 * k), A=sp.hstack([block, -block], format="csr"),
            row_lower=np.zeros(m), row_upper=np.zeros(m), col_lower=np.zeros(2 * k),
            col_upper=np.concatenate([up, down])))

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
        if position < 0 or self._model is None:  # a published cell cannot move
            return 0.0, duals, attack
        c = np.zeros(len(self._columns))
        c[position] = -float(req.direction)
        self._model.set_objective(c, sense="min")
        result = self._model.solve().require_solution()
        self.n_solves += 1
        duals[self._rows] = result.row_duals
        attack[self._columns] = result.x
        return -float(result.objective), duals, attack

    def certificate(self, req: Requirement) -> np.ndarray | None:
        """The cells of a least total deviation attack meeting ``req`` under the pattern
        (a sparse proof that the requirement holds), or None when the pattern fails it."""
        position = self._position[req.cell]
        if position < 0 or self._flow is None:
            return None
        k = len(self._columns)
        fixed = [position, k + position]
        cell, weight = req.cell, self._weight[req.cell]
        p, q = (req.level, 0.0) if req.direction > 0 else (0.0, req.level)
        self._flow.set_col_bounds(fixed, [p, q], [p, q])
        try:
            result = self._flow.solve()
        finally:
            self._flow.set_col_bounds(fixed, [0.0, 0.0],
                                      [self.U[cell] * weight, self.L[cell] * weight])
        self.n_solves += 1
        if not result.has_solution:
            return None
        deviation = np.abs(result.x[:k] - result.x[k:])
        return self._columns[deviation > 1e-7 * max(1.0, req.level)]

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
