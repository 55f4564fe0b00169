"""Protection requirements and their sparse proofs: least-deviation flows.

Work in deviations ``d = y - a`` from the true values. A requirement says that the intruder
must be able to move cell ``i`` by ``level`` in ``direction`` (+1 up, -1 down) over
``{ d : A d = 0, -down <= d <= up }`` (Fischetti and Salazar, "Solving the cell suppression
problem on tabular data with linear constraints", *Management Science* 47(7), 2001; Cox,
*Towards a quality assessment of disclosure-limited statistical data*, slide 14). Splitting
``d = p - q`` with ``p, q >= 0``, the least ``w``-weighted deviation meeting it,

    min  sum_j w_j (p_j + q_j)   over   A (p - q) = 0,  0 <= p <= up,  0 <= q <= down,
         p_i - q_i = direction * level,

is a flow (a cycle through ``i`` in a two-dimensional table, slides 17-21): the cells
carrying it are a sparse proof that the requirement holds (a *certificate*), and when no
such flow exists the requirement fails.

A requirement may hold cells **fixed** (``Requirement.fixed``): their deviation is zero,
i.e. the intruder knows their values. That is the insider scenario of
:mod:`tabsdc.audit._insider` (the respondent of a single-contributor cell knows its value);
the same flows then prove or refute protection against that respondent. The audit's insider
attack and the suppression methods (:mod:`tabsdc.suppression._attacker`, routing) share
these models. A fixed cell may instead be held on one **side** (``Requirement.sides``): it
may move up only, or down only. A flow meeting the requirement so, together with one that
meets it moving that cell the other way, proves it with the cell fixed: the flows' convex
combination that leaves the cell at zero is a flow, and meets the level too.

A kept model (the pattern's, solved for one requirement after another) is solved **from
the slack basis** each time, not from the last flow's basis. With ``w >= 0`` every column
at zero is dual feasible, so the dual simplex starts there and carries the requirement's
level along the cells that take it, in cheap sparse iterations. From the last flow's
basis (another flow, infeasible for this one) it takes about as many iterations, each
three to four times as costly. On the modular method's pattern of ``4d_5k`` (2,699 hidden
cells) a certificate took 16 ms from the slack basis and 51 ms from the last one; on that
of a 9,600-cell 3-D table, 81 and 216 ms (``docs/performance.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc.solver import HighsModel, LinearProgram

#: Relative tolerance on deviations and levels.
TOL = 1e-7
#: Direction codes: +1 the intruder pushes the value up, -1 down.
UP, DOWN = 1, -1
#: Tables (blocks) with more cells try every attack and route locally first: a flow within a
#: few relations of the cell, every other cell held at zero, is a flow of the whole table.
LOCAL_ABOVE = 5000


@dataclass(frozen=True)
class Requirement:
    """Sensitive ``cell`` must be movable by ``level`` in ``direction`` (+1 up, -1 down),
    with the cells ``fixed`` held at their values (an insider's knowledge; none for the
    outside intruder). ``sides``, when given, holds each fixed cell on one side instead:
    +1 it may move up only, -1 down only, 0 not at all."""

    cell: int
    direction: int
    level: float
    fixed: tuple[int, ...] = ()
    sides: tuple[int, ...] = ()

    @property
    def side_array(self) -> np.ndarray:
        """``sides`` as integers, one per fixed cell (zeros when not given).

        >>> Requirement(0, UP, 1.0, fixed=(4, 7)).side_array
        array([0, 0])
        """
        return np.asarray(self.sides or [0] * len(self.fixed), dtype=np.int64)

    def held_room(self, cells: np.ndarray, up: np.ndarray, down: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The room ``up`` and ``down`` of ``cells`` (sorted) with the fixed ones held.

        >>> Requirement(0, UP, 1.0, fixed=(1, 2), sides=(1, 0)).held_room(
        ...     np.arange(3), np.full(3, 5.0), np.full(3, 4.0))
        (array([5., 5., 0.]), array([4., 0., 0.]))
        """
        at = np.searchsorted(cells, self.fixed)
        inside = at < len(cells)
        inside[inside] = cells[at[inside]] == np.asarray(self.fixed)[inside]
        side = self.side_array
        up, down = up.copy(), down.copy()
        up[at[inside & (side <= 0)]] = 0.0
        down[at[inside & (side >= 0)]] = 0.0
        return up, down


def flow_model(A: sp.sparray, up: np.ndarray, down: np.ndarray,
               rows: tuple[np.ndarray, np.ndarray] | None = None, *,
               presolve: bool = False) -> HighsModel:
    """``A (p - q) = 0``, ``0 <= p <= up``, ``0 <= q <= down``; objective set per solve.
    ``rows``: the range ``(lower, upper)`` of ``A (p - q)`` instead (relations that hold
    within an additivity tolerance; the range must hold zero).

    Without presolve by default (a kept model, solved from the slack basis each time:
    module text); ``presolve`` for a model solved once.

    Examples
    --------
    ``x0 + x1 = x2`` with x1 and x2 held: x0 cannot move, unless the relation holds only
    within 0.5.

    >>> A, room = sp.csr_array([[1.0, 1, -1]]), np.array([5.0, 0, 0])
    >>> flow_reach(flow_model(A, room, room), 0, UP)
    0.0
    >>> flow_reach(flow_model(A, room, room, rows=(np.array([-0.5]), np.array([0.5]))), 0, UP)
    0.5
    """
    A = sp.csr_array(A)
    m, n = A.shape
    row_lower, row_upper = (np.zeros(m), np.zeros(m)) if rows is None else rows
    return HighsModel(LinearProgram(
        c=np.zeros(2 * n), A=sp.hstack([A, -A], format="csr"), row_lower=row_lower,
        row_upper=row_upper, col_lower=np.zeros(2 * n), col_upper=np.concatenate([up, down])),
        presolve=presolve)


def solve_flow(model: HighsModel, req: Requirement, i: int, w: np.ndarray,
               restore: tuple[float, float] | None = None,
               time_limit: float | None = None, *,
               fixed: tuple[np.ndarray, ...] | None = None
               ) -> np.ndarray | None:
    """The least ``w``-cost flow with column ``i`` (the requirement's cell in ``model``)
    moved by the level in the requirement's direction: the deviation of every column
    (``p - q``; zero where it is below the tolerance), or None when no such flow exists
    (or none was found within ``time_limit`` seconds). ``restore``: the kept model's
    bounds ``(up, down)`` of ``i``. ``fixed``: columns held at zero for this solve and
    their kept bounds ``(columns, up, down)``, restored after; a fourth array, each
    column's side (:attr:`Requirement.sides`), holds them on one side instead.
    """
    return flow_and_status(model, req, i, w, restore, time_limit, fixed=fixed)[0]


def flow_and_status(model: HighsModel, req: Requirement, i: int, w: np.ndarray,
                    restore: tuple[float, float] | None = None,
                    time_limit: float | None = None, *,
                    fixed: tuple[np.ndarray, ...] | None = None
                    ) -> tuple[np.ndarray | None, str]:
    """:func:`solve_flow`'s deviation and the solve's status
    (:data:`~tabsdc.solver.STATUSES`): ``"infeasible"`` proves that no flow meets ``req``
    (by convexity the cell then moves less than the level its way), a deviation of None
    with any other status proves nothing (a time limit, a numerical failure).

    Examples
    --------
    ``x0 + x1 = x2``, x1 fixed, x2 able to move 3 each way: x0 moves 3 up, not 4.

    >>> A = sp.csr_array([[1.0, 1, -1]])
    >>> room = np.array([9.0, 0, 3])
    >>> model, w = flow_model(A, room, room), np.ones(3)
    >>> flow_and_status(model, Requirement(0, UP, 3.0), 0, w, restore=(9.0, 9.0))[1]
    'optimal'
    >>> flow_and_status(model, Requirement(0, UP, 4.0), 0, w, restore=(9.0, 9.0))
    (None, 'infeasible')
    """
    n = len(w)
    model.set_time_limit(time_limit)
    model.set_objective(np.concatenate([w, w]))
    p_fixed = req.level if req.direction > 0 else 0.0
    q_fixed = req.level if req.direction < 0 else 0.0
    if fixed is None:
        fixed = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
    held, held_up, held_down = (np.asarray(f) for f in fixed[:3])
    side = np.asarray(fixed[3]) if len(fixed) > 3 else np.zeros(len(held), dtype=np.int64)
    # a held cell's upward column (p) at zero unless it may move up, its downward one (q)
    # unless it may move down
    held_up, held_down = held_up[side <= 0], held_down[side >= 0]
    held = np.concatenate([held[side <= 0], n + held[side >= 0]]).astype(np.int64)
    zeros = np.zeros(len(held))
    model.set_col_bounds(np.concatenate([[i, n + i], held]),
                         np.concatenate([[p_fixed, q_fixed], zeros]),
                         np.concatenate([[p_fixed, q_fixed], zeros]))
    model.clear_basis()  # from the slack basis, dual feasible (module text)
    try:
        result = model.solve()
    finally:  # one call: the requirement's column and the held ones back to their bounds
        kept = np.concatenate([held_up, held_down])
        if restore is not None:
            model.set_col_bounds(np.concatenate([[i, n + i], held]), 0.0,
                                 np.concatenate([restore, kept]))
        elif len(held):
            model.set_col_bounds(held, 0.0, kept)
    if not result.has_solution:
        return None, result.status
    deviation = result.x[:n] - result.x[n:]
    deviation[np.abs(deviation) <= TOL * max(1.0, req.level)] = 0.0
    return deviation, result.status


def flow_reach(model: HighsModel, i: int, direction: int) -> float | None:
    """How far column ``i`` moves in ``direction`` over the flows of ``model`` (the most
    ``p_i - q_i`` its way; ``inf`` when unbounded, None when the solve did not end
    optimal). When no flow meets a requirement, this is the cell's extreme that misses it.

    Examples
    --------
    ``x0 + x1 = x2``, each cell able to move 5 up and 5 down: x0 moves 5 up; with x1
    held (no room), still 5, against x2; with x1 and x2 held, not at all.

    >>> A = sp.csr_array([[1.0, 1, -1]])
    >>> flow_reach(flow_model(A, np.full(3, 5.0), np.full(3, 5.0)), 0, UP)
    5.0
    >>> room = np.array([5.0, 0, 5])
    >>> flow_reach(flow_model(A, room, room), 0, UP)
    5.0
    >>> flow_reach(flow_model(A, np.array([5.0, 0, 0]), np.array([5.0, 0, 0])), 0, UP)
    0.0
    """
    n = model.n_cols // 2
    objective = np.zeros(2 * n)
    objective[[i, n + i]] = -direction, direction
    model.set_objective(objective)
    result = model.solve()
    if result.status == "unbounded":
        return np.inf
    if result.status != "optimal":
        return None
    return max(0.0, -float(result.objective))


def local_deviation(by_column: sp.csc_array, cells: np.ndarray, req: Requirement,
                    up: np.ndarray, down: np.ndarray, w: np.ndarray,
                    time_limit: float | None = None, *,
                    presolve: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`solve_flow` with every cell outside ``cells`` (sorted, the requirement's cell
    among them) held at zero, and the requirement's ``fixed`` cells too: the cells carrying
    flow and their deviations, or None. Such a flow satisfies every relation of the table,
    so it is a flow (an attack, a route) of the whole table. ``presolve``: HiGHS's
    presolve first (:func:`flow_model`)."""
    block = by_column[:, cells]
    rows = np.flatnonzero(np.diff(block.tocsr().indptr) > 0)
    moved = solve_flow(flow_model(block[rows], *req.held_room(cells, up, down),
                                  presolve=presolve),
                       req, int(np.searchsorted(cells, req.cell)), w, time_limit=time_limit)
    if moved is None:
        return None
    carrying = np.flatnonzero(moved)
    return cells[carrying], moved[carrying]


def local_flow(by_column: sp.csc_array, cells: np.ndarray, req: Requirement, up: np.ndarray,
               down: np.ndarray, w: np.ndarray,
               time_limit: float | None = None) -> np.ndarray | None:
    """The cells carrying :func:`local_deviation`'s flow, or None.

    Examples
    --------
    ``x0 + x1 + x2 = x3``: x0 moves up by 2 against x1, or, when x1 is held fixed (an
    insider knows it), against x2.

    >>> A = sp.csc_array([[1.0, 1, 1, -1]])
    >>> cells, room = np.arange(4), np.full(4, 5.0)
    >>> local_flow(A, cells, Requirement(0, UP, 2.0), room, room, np.array([1, 1, 2, 3.0]))
    array([0, 1])
    >>> local_flow(A, cells, Requirement(0, UP, 2.0, fixed=(1,)), room, room,
    ...            np.array([1, 1, 2, 3.0]))
    array([0, 2])
    """
    found = local_deviation(by_column, cells, req, up, down, w, time_limit)
    return None if found is None else found[0]
