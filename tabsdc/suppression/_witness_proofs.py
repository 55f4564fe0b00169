"""Certificates read off deviations known to be feasible (the hypercube method's witnesses).

A witness is a deviation ``d`` with ``A d = 0`` (a hypercube: signs on its corners,
:mod:`tabsdc.suppression._hypercube`). While every cell it moves is hidden, ``t d`` is an
attack for every step ``-t_back <= t <= t_forth`` the cells' room allows,

    t_forth = min_j (U_j if d_j > 0 else L_j) / |d_j|,
    t_back  = min_j (L_j if d_j > 0 else U_j) / |d_j|,

(``U = ub - a``, ``L = a - lb``), so it proves every requirement one of its two ends meets:
cell i upward by ``upl_i`` when ``|d_i| t_forth >= upl_i`` (``d_i > 0``) or
``|d_i| t_back >= upl_i`` (``d_i < 0``), downward with the ends swapped. It proves it
against a respondent too when it moves none of the respondent's cells (the respondent knows
their values; :func:`tabsdc.audit.insider_proofs`, the audit's witness suspects read the
same way). :meth:`Witnesses.family` picks such witnesses for a requirement, each one that
leaves fewer respondents open, so that only the respondents none of them clears need a flow
(:meth:`tabsdc.suppression._attacker.Attacker.proof`).

Examples
--------
``T = x + y`` with a witness moving x and T up, y not: it proves x upward by up to the
room of x and T (3), and not downward past what their room allows (1):

>>> import scipy.sparse as sp
>>> from tabsdc._flows import DOWN, UP, Requirement
>>> A = sp.csr_array([[-1.0, 1.0, 1.0]])                 # T, x, y
>>> W = sp.csc_array(np.array([[1.0], [1.0], [0.0]]))
>>> known = Witnesses(A, W, down=np.array([1.0, 5.0, 5.0]), up=np.array([3.0, 4.0, 5.0]))
>>> hidden = np.ones(3, dtype=bool)
>>> [len(known.family(Requirement(1, UP, 3.0), hidden, None)),
...  len(known.family(Requirement(1, DOWN, 2.0), hidden, None)),
...  len(known.family(Requirement(1, UP, 3.0), np.array([False, True, True]), None))]
[1, 0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import TOL, Requirement
from tabsdc._respondents import Insiders
from tabsdc._sparse import row_entries


class Witnesses:
    """Feasible deviations of the table (cells x k), stretched within the cells' room.

    Columns that do not satisfy the relations (``|A d| > TOL`` relative to ``d``) are
    dropped: a witness is checked here, not trusted.

    Parameters
    ----------
    A : sparse matrix
        The table's relations.
    deviations : sparse matrix (cells x k)
        The deviations.
    down, up : ndarray
        Each cell's room down and up (``L``, ``U``).
    """

    def __init__(self, A: sp.sparray, deviations: sp.sparray, down: np.ndarray,
                 up: np.ndarray):
        W = sp.csc_array(deviations, dtype=float)
        residual = abs(sp.csr_array(A) @ W).max(axis=0).toarray().ravel()
        scale = abs(W).max(axis=0).toarray().ravel()
        W = sp.csc_array(W[:, np.flatnonzero(residual <= TOL * np.maximum(scale, 1.0))])
        W.sort_indices()
        self.by_column = W
        self.by_row = sp.csr_array(W)
        column = np.repeat(np.arange(W.shape[1]), np.diff(W.indptr))
        cells, d = W.indices, W.data
        self.forth = np.full(W.shape[1], np.inf)
        self.back = np.full(W.shape[1], np.inf)
        np.minimum.at(self.forth, column, np.where(d > 0, up[cells], down[cells]) / abs(d))
        np.minimum.at(self.back, column, np.where(d > 0, down[cells], up[cells]) / abs(d))

    @property
    def count(self) -> int:
        """How many deviations were kept."""
        return self.by_column.shape[1]

    def cells(self, k: int) -> np.ndarray:
        """The cells deviation ``k`` moves (sorted)."""
        return self.by_column.indices[self.by_column.indptr[k]:self.by_column.indptr[k + 1]]

    def meeting(self, req: Requirement, hidden: np.ndarray) -> np.ndarray:
        """The deviations whose cells are all ``hidden``, that move none of ``req.fixed``
        and whose stretched ends meet ``req`` (within ``TOL`` relative to its level)."""
        at = slice(self.by_row.indptr[req.cell], self.by_row.indptr[req.cell + 1])
        columns, d = self.by_row.indices[at], self.by_row.data[at]
        reach = abs(d) * np.where(req.direction * d > 0, self.forth[columns],
                                  self.back[columns])
        columns = columns[reach >= req.level - TOL * max(1.0, req.level)]
        fixed = np.asarray(req.fixed, dtype=np.int64)
        return np.array([k for k in columns.tolist()
                         if hidden[self.cells(k)].all()
                         and not np.isin(fixed, self.cells(k)).any()], dtype=np.int64)

    def unmet(self, reqs: Sequence[Requirement], hidden: np.ndarray) -> np.ndarray:
        """Per requirement, whether no deviation meets it in ``hidden``
        (:meth:`meeting` is empty), at once for those that hold no cell fixed.

        Examples
        --------
        >>> from tabsdc._flows import UP
        >>> A = sp.csr_array([[-1.0, 1.0, 1.0]])
        >>> W = sp.csc_array(np.array([[1.0], [1.0], [0.0]]))
        >>> known = Witnesses(A, W, down=np.full(3, 5.0), up=np.full(3, 5.0))
        >>> known.unmet([Requirement(1, UP, 3.0), Requirement(1, UP, 6.0),
        ...              Requirement(2, UP, 1.0)], np.ones(3, dtype=bool)).tolist()
        [False, True, True]
        """
        W = self.by_column
        column = np.repeat(np.arange(W.shape[1]), np.diff(W.indptr))
        alive = np.bincount(column[~hidden[W.indices]], minlength=W.shape[1]) == 0
        outsider = np.array([not r.fixed for r in reqs], dtype=bool)
        unmet = np.ones(len(reqs), dtype=bool)
        for k in np.flatnonzero(~outsider).tolist():
            unmet[k] = len(self.meeting(reqs[k], hidden)) == 0
        at = np.flatnonzero(outsider)
        if not len(at):
            return unmet
        cell = np.array([reqs[k].cell for k in at], dtype=np.int64)
        direction = np.array([reqs[k].direction for k in at], dtype=float)
        level = np.array([reqs[k].level for k in at], dtype=float)
        entries, owner = row_entries(self.by_row, cell)  # the witnesses through each cell
        columns, d = self.by_row.indices[entries], self.by_row.data[entries]
        reach = abs(d) * np.where(direction[owner] * d > 0, self.forth[columns],
                                  self.back[columns])
        meets = alive[columns] & (reach >= level[owner] - TOL * np.maximum(1.0, level[owner]))
        unmet[at] = np.bincount(owner[meets], minlength=len(at)) == 0
        return unmet

    def family(self, req: Requirement, hidden: np.ndarray, insiders: Insiders | None
               ) -> list[np.ndarray]:
        """The cells of witnesses that together prove ``req`` against the outside intruder
        and as many respondents of ``insiders`` as they can: the first one meeting it, then
        each one that leaves fewer respondents open (empty: none meets it)."""
        family: list[np.ndarray] = []
        open_groups: np.ndarray | None = None
        for k in self.meeting(req, hidden).tolist():
            cells = self.cells(k)
            if insiders is None:
                return [cells]
            groups = insiders.groups_in(cells, req.cell)
            if open_groups is not None:
                groups = np.intersect1d(open_groups, groups)
                if len(groups) == len(open_groups):
                    continue
            open_groups = groups
            family.append(cells)
            if len(open_groups) == 0:
                break
        return family
