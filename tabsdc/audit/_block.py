"""One independent block of hidden cells with its true values: the attacker's polytope in parts.

The interval attack (:mod:`tabsdc.audit._intervals`) bounds each hidden cell over the whole
polytope of its block,

    P = { x : rhs - slack <= A x <= rhs + slack,  lb <= x <= ub },

``A`` the block's relations restricted to its hidden cells (the published cells moved to the
right-hand side). Settling one requirement often needs only a part of ``P``, in two ways:

* a **restriction** frees some of the hidden cells and holds every other one at its true
  value ``a`` (the relations they are in keep their rows, with those values on the right-hand
  side). Its feasible points are points of ``P``, so its optima are **inner bounds**: the
  exact interval contains them.
* a **relaxation** keeps only the relations around a cell (every row whose hidden cells all
  lie in a neighbourhood of it) and drops the others. ``P`` projected on the neighbourhood
  lies inside it, so its optima are **outer bounds**: the exact interval lies within them.

Neighbourhoods are taken through hidden cells only: one **hop** from a set of cells is the
rows holding one of them, and the hidden cells of those rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from tabsdc.solver import LinearProgram


@dataclass(frozen=True)
class Block:
    """The rows and hidden cells of one independent block (picklable, for parallel tasks).

    Attributes
    ----------
    A : csr_array (rows, cells)
        The block's relations on its hidden cells.
    rhs, slack : ndarray (rows,)
        Right-hand sides (published cells moved there) and the tolerance of each row.
    lb, ub, values : ndarray (cells,)
        The intruder's a-priori bounds and the true values.
    """

    A: sp.csr_array
    rhs: np.ndarray
    slack: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    values: np.ndarray

    @property
    def n_cells(self) -> int:
        return self.A.shape[1]

    @cached_property
    def by_column(self) -> sp.csc_array:
        """:attr:`A` compressed by columns (for the rows of a set of cells)."""
        return self.A.tocsc()

    def hop(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding one of ``cells`` and the hidden cells of those rows (both
        sorted; the second contains ``cells``)."""
        rows = np.unique(self.by_column[:, cells].indices)
        return rows, np.unique(self.A[rows].indices)

    def neighbourhood(self, cells: np.ndarray, hops: int) -> np.ndarray:
        """The hidden cells within ``hops`` hops of ``cells`` (sorted)."""
        near = np.unique(cells)
        for _ in range(hops):
            _, wider = self.hop(near)
            if len(wider) == len(near):
                break
            near = wider
        return near

    def around(self, cell: int, hops: int, largest: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The rows within ``hops - 1`` hops of ``cell`` and the cells they hold (both
        sorted: the cells within ``hops`` hops), with fewer hops where more would hold more
        than ``largest`` cells (the rows holding ``cell`` at least)."""
        rows, cells = self.hop(np.array([cell]))
        for _ in range(hops - 1):
            wider_rows, wider = self.hop(cells)
            if largest is not None and len(wider) > largest:
                break
            rows, cells = wider_rows, wider
        return rows, cells

    def grown(self, seeds: np.ndarray, size: int) -> np.ndarray:
        """A region of at most ``size`` hidden cells grown hop by hop from ``seeds[0]``.

        Whole hops are taken while they fit. Of the hop that does not, the cells best tied to
        the region come first: the largest share of their rows already holding a region
        cell, then the most such rows (a cell all of whose rows hold region cells can move
        along cycles through the region; one with a single such row is pinned by its other
        rows, whose cells stay at their values). When the region holds all it can reach
        (its block, in a group of several) and is still smaller, it grows on from the next
        seed not in it.

        Parameters
        ----------
        seeds : ndarray of int
            Block positions to grow from, in order.
        size : int
            The most cells of the region.

        Returns
        -------
        ndarray
            The region's block positions, sorted.

        Examples
        --------
        The chain ``x0 + x1 = x2``, ``x2 + x3 = x4``, ``x4 + x5 = 9``: from ``x0``, one hop
        reaches ``x1, x2``; of the next hop ``{x3, x4}`` only one fits and ``x3``, whose only
        row holds a region cell, comes before ``x4`` (one of its two rows does).

        >>> block = Block(sp.csr_array([[1.0, 1, -1, 0, 0, 0], [0, 0, 1, 1, -1, 0],
        ...                             [0, 0, 0, 0, 1, 1]]), np.array([0.0, 0, 9]),
        ...               np.zeros(3), np.zeros(6), np.full(6, 9.0), np.ones(6))
        >>> block.grown(np.array([0]), 4).tolist(), block.grown(np.array([0]), 9).tolist()
        ([0, 1, 2, 3], [0, 1, 2, 3, 4, 5])
        """
        inside = np.zeros(self.n_cells, dtype=bool)
        region = seeds[:1]
        inside[region] = True
        next_seed = 1
        while len(region) < size:
            rows, wider = self.hop(region)
            new = wider[~inside[wider]]
            if not len(new):  # all it reaches: on from the next seed outside
                while next_seed < len(seeds) and inside[seeds[next_seed]]:
                    next_seed += 1
                if next_seed == len(seeds):
                    break
                new = seeds[next_seed:next_seed + 1]
            elif len(region) + len(new) > size:
                touching = np.bincount(self.A[rows].indices, minlength=self.n_cells)[new]
                tied = np.lexsort((-touching, -touching / self.degree[new]))
                new = new[tied[:size - len(region)]]
            inside[new] = True
            region = np.flatnonzero(inside)
        return region

    @cached_property
    def degree(self) -> np.ndarray:
        """The number of rows holding each cell."""
        return np.diff(self.by_column.indptr)

    def restriction(self, cells: np.ndarray) -> LinearProgram:
        """The polytope over ``cells`` (sorted) with every other hidden cell at its value.

        Every row holding one of ``cells`` is kept; the other cells of the row move to its
        right-hand side with their true values. The objective is zero.

        Examples
        --------
        ``x0 + x1 = x2`` hidden, values 2, 3, 5: holding ``x2`` at 5 leaves ``x0 + x1 = 5``.

        >>> block = Block(sp.csr_array([[1.0, 1, -1]]), np.zeros(1), np.zeros(1),
        ...               np.zeros(3), np.full(3, 9.0), np.array([2.0, 3, 5]))
        >>> lp = block.restriction(np.array([0, 1]))
        >>> lp.A.toarray().tolist(), lp.row_lower.tolist(), lp.row_upper.tolist()
        ([[1.0, 1.0]], [5.0], [5.0])
        """
        rows, _ = self.hop(cells)
        held = self.values.copy()
        held[cells] = 0.0
        by_row = self.A[rows]
        rhs = self.rhs[rows] - by_row @ held
        return LinearProgram(c=np.zeros(len(cells)), A=by_row[:, cells],
                             row_lower=rhs - self.slack[rows], row_upper=rhs + self.slack[rows],
                             col_lower=self.lb[cells], col_upper=self.ub[cells])

    def relaxation(self, cell: int, hops: int) -> tuple[LinearProgram, np.ndarray]:
        """The rows within ``hops - 1`` hops of ``cell`` over the cells they hold.

        The cells are those within ``hops`` hops (every cell of a kept row is among them), the
        rows those holding a cell within ``hops - 1`` hops; every other row is dropped.

        Returns
        -------
        LinearProgram, ndarray
            The relaxation (objective zero) and its cells (sorted block positions).

        Examples
        --------
        ``x0 + x1 = x2`` and ``x2 + x3 = 4``, all hidden with values 1, 1, 2, 2: one hop
        from ``x0`` keeps the first row only, so ``x2`` may grow up to its bound 9 there.

        >>> block = Block(sp.csr_array([[1.0, 1, -1, 0], [0, 0, 1, 1]]),
        ...               np.array([0.0, 4.0]), np.zeros(2), np.zeros(4), np.full(4, 9.0),
        ...               np.array([1.0, 1, 2, 2]))
        >>> lp, cells = block.relaxation(0, 1)
        >>> cells.tolist(), lp.A.toarray().tolist()
        ([0, 1, 2], [[1.0, 1.0, -1.0]])
        """
        rows, cells = self.around(cell, hops)
        by_row = self.A[rows]
        return LinearProgram(c=np.zeros(len(cells)), A=by_row[:, cells],
                             row_lower=self.rhs[rows] - self.slack[rows],
                             row_upper=self.rhs[rows] + self.slack[rows],
                             col_lower=self.lb[cells], col_upper=self.ub[cells]), cells
