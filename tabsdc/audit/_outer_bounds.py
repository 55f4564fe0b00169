"""Outer bounds of a hidden cell from the relations around it: proofs that a cell is exposed.

The exact bound ``max x_j`` over the attacker's polytope is at most its maximum over any
relaxation. The relaxation here keeps the relations within a few hops of the cell
(:meth:`tabsdc.audit._block.Block.relaxation`) and drops the rest; if its maximum already
stays below the target ``a_j + upl_j`` (or its minimum above ``a_j - lpl_j``), the cell
misses that requirement whatever the rest of the table says, and the relaxation's optimum is
the outer bound that proves it. Exposures are mostly local (a hidden cell held by a few
small neighbours), so on 10^4-cell blocks most are proven within two to four hops by LPs of
tens to hundreds of cells, instead of two LPs over the whole block.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tabsdc._errors import SolverError
from tabsdc.audit._block import Block
from tabsdc.solver import HighsModel


def relaxed_extreme(block: Block, cell: int, sense: str, hops: int, *,
                    max_cells: int | None = None, time_limit: float | None = None
                    ) -> tuple[float, int]:
    """``max`` (``sense="max"``) or ``min`` of ``x_cell`` over the relaxation of ``hops``.

    Parameters
    ----------
    block : Block
        The block of hidden cells.
    cell : int
        Its position in the block.
    sense : {"max", "min"}
        Which end of the interval.
    hops : int
        The relaxation's reach (at least 1).
    max_cells : int, optional
        A relaxation of more cells is not solved (its bound is NaN): it would cost about as
        much as the cell's exact extreme.
    time_limit : float, optional
        Seconds for the solve.

    Returns
    -------
    bound, size : float, int
        The outer bound (``inf``/``-inf`` when the relaxation leaves that end open, NaN when
        the solve did not end optimal or was not tried) and the number of cells of the relaxation.

    Examples
    --------
    ``x0 + x1 = x2`` and ``x2 + x3 = 4``, all hidden with values 1, 1, 2, 2 and bounds
    [0, 9]: one hop from ``x0`` leaves ``x2`` free up to 9; two hops cap it at 4.

    >>> import scipy.sparse as sp
    >>> block = Block(sp.csr_array([[1.0, 1, -1, 0], [0, 0, 1, 1]]), np.array([0.0, 4.0]),
    ...               np.zeros(2), np.zeros(4), np.full(4, 9.0), np.array([1.0, 1, 2, 2]))
    >>> relaxed_extreme(block, 0, "max", 1), relaxed_extreme(block, 0, "max", 2)
    ((9.0, 3), (4.0, 4))
    >>> relaxed_extreme(block, 0, "max", 2, max_cells=3)
    (nan, 4)
    """
    problem, cells = block.relaxation(cell, hops)
    if max_cells is not None and len(cells) > max_cells:
        return np.nan, len(cells)
    objective = np.zeros(len(cells))
    objective[np.searchsorted(cells, cell)] = 1.0
    try:
        model = HighsModel(problem, time_limit=time_limit)
        model.set_objective(objective, sense)
        result = model.solve()
    except SolverError:
        return np.nan, len(cells)
    if result.status == "unbounded":
        return (np.inf if sense == "max" else -np.inf), len(cells)
    if result.status != "optimal":
        return np.nan, len(cells)
    return float(result.objective), len(cells)


def relaxed_intervals(block: Block, cell: int, hops: int, held: list[np.ndarray], *,
                      max_cells: int | None = None,
                      time_left: Callable[[], float | None] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """The interval of ``x_cell`` over the relaxation of ``hops``, once per set of held cells.

    Each set in ``held`` (block positions) is held at its true values while ``x_cell`` is
    minimised and maximised, then freed again: the relaxation of a respondent's polytope
    (:mod:`tabsdc.audit._insider`: a respondent knows its own cells), so each interval
    contains the exact one with those cells held. One kept model serves every set.

    Parameters
    ----------
    block : Block
    cell : int
        Its position in the block.
    hops : int
        The relaxation's reach (at least 1).
    held : list of ndarray
        Block positions held at their values, one set per interval (cells outside the
        relaxation are ignored: their rows are dropped).
    max_cells : int, optional
        A relaxation of more cells is not solved (NaN intervals).
    time_left : callable, optional
        Asked before each solve for the seconds it may take (a caller's deadline).

    Returns
    -------
    lower, upper, size : ndarray (len(held),), ndarray, int
        Outer ends (``-inf``/``inf`` when the relaxation leaves one open; NaN when a solve
        failed, the time ran out or the relaxation was too large) and the number of cells
        of the relaxation.

    Examples
    --------
    ``x0 + x1 = x2`` and ``x2 + x3 = 4``, values 1, 1, 2, 2, bounds [0, 9]: within two
    hops ``x0`` may take [0, 4]; with ``x1`` held at 1 it may take [0, 3]; with ``x1``
    and ``x3`` held it is pinned to 1.

    >>> import scipy.sparse as sp
    >>> block = Block(sp.csr_array([[1.0, 1, -1, 0], [0, 0, 1, 1]]), np.array([0.0, 4.0]),
    ...               np.zeros(2), np.zeros(4), np.full(4, 9.0), np.array([1.0, 1, 2, 2]))
    >>> lower, upper, size = relaxed_intervals(block, 0, 2, [np.array([], dtype=int),
    ...                                                      np.array([1]), np.array([1, 3])])
    >>> lower.tolist(), upper.tolist(), size
    ([0.0, 0.0, 1.0], [4.0, 3.0, 1.0], 4)
    """
    problem, cells = block.relaxation(cell, hops)
    lower, upper = np.full(len(held), np.nan), np.full(len(held), np.nan)
    if max_cells is not None and len(cells) > max_cells:
        return lower, upper, len(cells)
    model = HighsModel(problem)
    target = np.array([np.searchsorted(cells, cell)])
    for k, positions in enumerate(held):
        inside = np.intersect1d(positions, cells)
        columns = np.searchsorted(cells, inside)
        model.set_col_bounds(columns, block.values[inside], block.values[inside])
        try:
            lo, hi, _ = model.column_extremes(target, time_left=time_left)
            lower[k], upper[k] = lo[0], hi[0]
        except SolverError:  # numerically troubled: this set stays NaN
            pass
        model.set_col_bounds(columns, block.lb[inside], block.ub[inside])
    return lower, upper, len(cells)
