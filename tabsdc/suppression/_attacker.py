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

Scenarios. A requirement with ``fixed`` cells (:class:`~tabsdc._flows.Requirement`: the
respondent of a single-contributor cell knows its value, :mod:`tabsdc.audit._insider`) is the
same attack with those cells' deviations held at zero: their bounds in the kept models are
set to ``[0, 0]`` for the solve and restored after. Its capacity cut is the one above with
``k_j = 0`` for the fixed cells (they cannot move whatever the pattern), valid for every
pattern that protects the cell against that respondent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import (
    DOWN,
    LOCAL_ABOVE,
    TOL,
    UP,
    Requirement,
    flow_model,
    local_deviation,
    solve_flow,
)
from tabsdc._network import neighbourhood
from tabsdc._progress import Deadline
from tabsdc._respondents import Insiders
from tabsdc.audit._insider import KnownDeviations, insider_proofs
from tabsdc.solver import HighsModel, LinearProgram
from tabsdc.suppression._witness_proofs import Witnesses


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
        certificate) and :meth:`reach` raises :class:`~tabsdc.SolverError`.
    hops : int
        Radius of the local neighbourhoods, in relations (see :func:`neighbourhood`).
    insiders : Insiders, optional
        The respondents of single-contributor primaries
        (:func:`tabsdc._respondents.insider_groups`): :meth:`proof` then proves each
        requirement against every one of them too.
    """

    def __init__(self, A: sp.sparray, down_capacity: np.ndarray, up_capacity: np.ndarray,
                 deadline: Deadline | None = None, hops: int = 3,
                 insiders: Insiders | None = None):
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
        self.insiders = insiders
        # the certificates found, stretched: they prove other requirements while every
        # cell they move stays hidden (binary patterns only)
        self.known = None if insiders is None else KnownDeviations(insiders, self.U, self.L)
        self.witnesses: Witnesses | None = None
        self.set_pattern(np.zeros(self.n, dtype=bool))

    def add_witnesses(self, deviations: sp.sparray | None) -> None:
        """Deviations known to be feasible (cells x k, e.g. the hypercube method's
        witnesses): :meth:`proof` reads a requirement's certificates off those whose cells
        are all hidden before it solves a flow (:class:`~tabsdc.suppression._witness_proofs.
        Witnesses`; binary patterns only)."""
        self.witnesses = (None if deviations is None
                          else Witnesses(self.A, deviations, self.L, self.U))

    def set_pattern(self, suppressed: np.ndarray) -> None:
        """Cells with ``suppressed`` True may move within their capacities; others are fixed.

        A fractional pattern (values in [0, 1]) scales the capacities: the LP relaxation of
        the suppression model, whose cuts are valid for every binary pattern too.
        """
        weight = np.asarray(suppressed, dtype=float)
        self._weight = weight
        self._binary = bool(np.all((weight == 0) | (weight == 1)))
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
        held = self._held(req)
        if len(held):
            self._model.set_col_bounds(held, 0.0, 0.0)
        try:
            result = self._model.solve().require_solution()
        finally:
            if len(held):
                columns = self._columns[held]
                weight = self._weight[columns]
                self._model.set_col_bounds(held, -self.L[columns] * weight,
                                           self.U[columns] * weight)
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
        found = None
        if self.local:
            near = neighbourhood(self.A, self.by_row, req.cell, self.hops)
            cells = near[self._weight[near] > 1e-9]
            w = self._weight[cells]
            found = local_deviation(self.A, cells, req, self.U[cells] * w, self.L[cells] * w,
                                    self._weights(cells), self.deadline.solver_limit())
            if found is None and local_only:
                return None
        if found is None:
            if self._flow is None:
                self._build()
            cell, weight = req.cell, self._weight[req.cell]
            held = self._held(req)
            kept = self._weight[self._columns[held]]
            moved = solve_flow(self._flow, req, position, self._weights(self._columns),
                               restore=(self.U[cell] * weight, self.L[cell] * weight),
                               time_limit=self.deadline.solver_limit(),
                               fixed=(held, self.U[self._columns[held]] * kept,
                                      self.L[self._columns[held]] * kept))
            if moved is None:
                return None
            carrying = np.flatnonzero(moved)
            found = self._columns[carrying], moved[carrying]
        if self.known is not None and self._binary:
            self.known.add(*found)
        return found[0]

    def proof(
        self, req: Requirement,
        route: Callable[[Requirement], np.ndarray | None] | None = None,
        known: list[np.ndarray] | None = None,
        *,
        whole_pattern: bool = False,
    ) -> tuple[list[np.ndarray] | None, Requirement | None]:
        """Certificates proving ``req`` against the outside intruder and every respondent
        of :attr:`insiders` (:func:`tabsdc.audit.insider_proofs`; on large tables local
        ones only, unless ``whole_pattern``): their cells, one array each, or None and the
        scenario that has none.

        ``known``: certificates of ``req`` still valid (every cell they move hidden); without
        them, the witnesses of :meth:`add_witnesses` that meet ``req``. Only the respondents
        all of them, and every stretched certificate found before that meets ``req``
        (:class:`~tabsdc.audit._insider.KnownDeviations`), move get new ones.
        ``route(r)``, when given, is asked for a scenario without a certificate: it extends
        the pattern (and this attacker's, :meth:`set_pattern`) and returns the cells of
        the flow it routed, or None."""
        def prove(scenario: Requirement) -> np.ndarray | None:
            found = self.certificate(scenario, local_only=not whole_pattern)
            return found if found is not None or route is None else route(scenario)

        known = list(known or [])
        if not known and self.witnesses is not None and self._binary:
            known = self.witnesses.family(req, self._weight > 0.5, self.insiders)
        suspects = self._suspects(req, known)
        proofs, failed = insider_proofs(req, self.insiders, prove, suspects=suspects,
                                        stop_at_failure=True, split=route is None)
        if failed:
            return None, failed[0]
        return known + proofs, None

    def failing_scenarios(self, req: Requirement) -> list[Requirement]:
        """The respondents' scenarios of ``req`` (a requirement the pattern meets) without a
        certificate over the whole pattern: those the pattern fails."""
        return insider_proofs(req, self.insiders, self.certificate,
                              suspects=self._suspects(req, []))[1]

    def _suspects(self, req: Requirement, known: list[np.ndarray]) -> np.ndarray | None:
        """The respondents attacking ``req.cell`` that the certificates ``known`` and the
        stretched ones that meet ``req`` all move (None: none is known). The stretched
        ones used are added to ``known``: they are part of the proof."""
        if self.insiders is None:
            return np.zeros(0, dtype=np.int64) if known else None
        suspects = None
        for cells in known:
            groups = self.insiders.groups_in(cells, req.cell)
            suspects = groups if suspects is None else np.intersect1d(suspects, groups)
        if self._binary and (suspects is None or len(suspects)):
            pool, used = self.known.suspects(req, TOL * max(1.0, req.level),
                                             self._weight > 0.5)
            if pool is not None:
                suspects = pool if suspects is None else np.intersect1d(suspects, pool)
                known += used
        return suspects

    def _weights(self, cells: np.ndarray) -> np.ndarray:
        """Weights of ``cells`` in a certificate's flow (respondents' cells avoided where
        possible, :meth:`tabsdc.audit.Insiders.weights`)."""
        return np.ones(len(cells)) if self.insiders is None else self.insiders.weights(cells)

    def _held(self, req: Requirement) -> np.ndarray:
        """Positions in the pattern's models of the requirement's fixed cells (those hidden:
        published cells cannot move anyway)."""
        if not req.fixed:
            return np.zeros(0, dtype=np.int64)
        position = self._position[np.asarray(req.fixed, dtype=np.int64)]
        return position[position >= 0]

    def cut(self, req: Requirement, row_duals: np.ndarray) -> np.ndarray:
        """The capacity cut scaled to ``k @ z >= 1`` (``k = min(k, level) / level``; dense;
        zero on the requirement's fixed cells).

        Scaling by the level keeps every coefficient in [0, 1]; coefficients below 1e-9
        are dropped, which only weakens the cut (z >= 0)."""
        c = np.zeros(self.n)
        c[req.cell] = -float(req.direction)
        r = c - self.AT @ row_duals
        k = np.where(r > 0, r * self.L, 0.0) + np.where(r < 0, -r * self.U, 0.0)
        k[list(req.fixed)] = 0.0  # held at their values: no pattern lets them move
        k = np.minimum(k / req.level, 1.0)
        k[k < 1e-9] = 0.0
        return k
