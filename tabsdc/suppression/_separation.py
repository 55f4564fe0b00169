"""Capacity cuts from attacks confined to a requirement's neighbourhood.

The lower bound (:mod:`tabsdc.suppression._bound`) strengthens its LP relaxation with the
capacity cuts its fractional pattern ``z`` violates. Attacking ``z`` over the whole table
(:meth:`tabsdc.suppression._attacker.Attacker.reach`) costs an LP over every cell ``z``
hides, which on the 10^5-cell tables takes a quarter of a second per requirement. Here the
attack is confined to the cells ``z`` hides within a few relations of the requirement's cell
(every other cell held at zero):

    max  dir * d_i   over   A_R d_S = 0,  -L_S z_S <= d_S <= U_S z_S,  d_F = 0,

with ``S`` the neighbourhood, ``R`` the relations touching it and ``F`` the requirement's
fixed cells (a respondent's knowledge). Two facts make it exact enough for the bound:

* a local attack is an attack on the whole table (the cells outside ``S`` keep deviation 0,
  which satisfies every relation outside ``R``), so a local reach that meets the level
  proves that ``z`` meets the requirement;
* the optimal multipliers ``lambda`` of the relations ``R`` (zero on the others) are row
  multipliers of the whole table's attacker LP, and **any** multipliers give a capacity cut
  ``sum_j min(k_j, level) z_j >= level``, ``k_j = max(r_j, 0) L_j + max(-r_j, 0) U_j``,
  ``r = c - A^T lambda`` (``k_j = 0`` on the fixed cells), valid for every binary pattern
  protecting the requirement (weak duality over the attacker's box: Fischetti and Salazar,
  *Management Science* 47(7), 2001, section 3; :mod:`tabsdc.suppression._attacker`). The cut
  counts the cells of ``R`` outside ``S`` too, so it may not be violated by ``z`` even
  when the local reach falls short: the caller then attacks the whole pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._flows import TOL, Requirement
from tabsdc.solver import HighsModel, LinearProgram

#: Weights of the fractional pattern below this count as zero (the cell is published).
SUPPORT = 1e-9


@dataclass(frozen=True)
class LocalAttack:
    """A local attack's outcome: ``reach`` (how far the requirement's cell moves),
    ``met`` (``reach`` meets the level: the pattern meets the requirement), the capacity
    cut ``k @ z >= 1`` of its multipliers as ``cut_cells``/``cut_values`` (scaled by the
    level, coefficients in (0, 1]) and ``moved``, the cells the attack moves."""

    reach: float
    met: bool
    cut_cells: np.ndarray
    cut_values: np.ndarray
    moved: np.ndarray


class LocalSeparator:
    """Attacks of a fractional pattern confined to each requirement's neighbourhood.

    Parameters
    ----------
    A, down_capacity, up_capacity
        The relations and the capacities, as for
        :class:`~tabsdc.suppression._attacker.Attacker`.
    hops : int
        Radius of the neighbourhoods, in relations, walked through the cells the pattern
        hides only.

    Examples
    --------
    ``x0 + x1 = x2``, the primary x0 hidden, x1 and x2 a quarter: x0 moves up by 2.5
    (the rooms 5 of x1 and x2 scaled by 1/4), short of the level 4; the cut of the
    relation's multiplier is ``min(5, 4) / 4 (z1 + z2) >= 1``, which the pattern violates.

    >>> A = sp.csr_array([[1.0, 1.0, -1.0]])
    >>> separator = LocalSeparator(A, np.full(3, 5.0), np.full(3, 5.0), hops=2)
    >>> separator.set_pattern(np.array([1.0, 0.25, 0.25]))
    >>> attack = separator.attack([Requirement(0, 1, 4.0)])[0]
    >>> attack.reach, attack.met, attack.cut_cells.tolist(), attack.cut_values.tolist()
    (2.5, False, [1, 2], [1.0, 1.0])
    """

    def __init__(self, A: sp.sparray, down_capacity: np.ndarray, up_capacity: np.ndarray,
                 hops: int):
        self.by_column = sp.csc_array(A)
        self.by_row = sp.csr_array(A)
        self.touches = sp.csr_array(self.by_column != 0, dtype=float)  # relation x cell
        self.touched_by = self.touches.T.tocsr()
        self.L = np.asarray(down_capacity, dtype=float)
        self.U = np.asarray(up_capacity, dtype=float)
        self.hops = hops
        self.n_solves = 0
        self.set_pattern(np.zeros(self.by_column.shape[1]))

    def set_pattern(self, z: np.ndarray) -> None:
        """The fractional pattern attacked next (capacities scaled by ``z``)."""
        self.z = np.asarray(z, dtype=float)
        self.hidden = self.z > SUPPORT

    def neighbourhoods(self, cells: np.ndarray) -> sp.csr_array:
        """Row k: the hidden cells within :attr:`hops` relations of ``cells[k]`` through
        hidden cells (``cells[k]`` among them), as ones in a sparse matrix of sorted rows."""
        k = len(cells)
        own = sp.csr_array((np.ones(k), (np.arange(k), cells)), shape=(k, len(self.z)))
        member = own
        for _ in range(self.hops):
            member = sp.csr_array((member @ self.touched_by) @ self.touches)
            keep = self.hidden[member.indices]
            member.data = np.where(keep, 1.0, 0.0)
            member.eliminate_zeros()
            member = sp.csr_array(((member + own) > 0), dtype=float)
        member.sort_indices()
        return member

    def attack(self, reqs: Sequence[Requirement], time_limit: float | None = None
               ) -> list[LocalAttack] | None:
        """The local attack on each requirement of ``reqs`` and the capacity cut of its
        multipliers (None: the LP did not finish within ``time_limit``).

        The attacks are independent LPs solved as one (their blocks side by side): the
        optimum and multipliers of each block are those of its own LP."""
        cell = np.array([r.cell for r in reqs], dtype=np.int64)
        direction = np.array([r.direction for r in reqs], dtype=float)
        level = np.array([r.level for r in reqs], dtype=float)
        n, m = len(self.z), self.by_column.shape[0]
        member = self.neighbourhoods(cell)
        col_req = np.repeat(np.arange(len(reqs)), np.diff(member.indptr))
        col_cell = member.indices.astype(np.int64)
        rows = sp.csr_array(member @ self.touched_by)
        rows.sort_indices()
        row_req = np.repeat(np.arange(len(reqs)), np.diff(rows.indptr))
        row_relation = rows.indices.astype(np.int64)
        # the entries of each column's cell, in the rows of its own block
        counts = np.diff(self.by_column.indptr)[col_cell]
        entry = (np.repeat(self.by_column.indptr[col_cell] - np.cumsum(counts) + counts,
                           counts) + np.arange(counts.sum()))
        entry_col = np.repeat(np.arange(len(col_cell)), counts)
        entry_row = np.searchsorted(row_req * m + row_relation,
                                    col_req[entry_col] * m + self.by_column.indices[entry])
        block = sp.csr_array((self.by_column.data[entry], (entry_row, entry_col)),
                             shape=(len(row_req), len(col_cell)))
        fixed = np.array([k * n + j for k, r in enumerate(reqs) for j in r.fixed],
                         dtype=np.int64)
        held = np.isin(col_req * n + col_cell, fixed)
        z = self.z[col_cell]
        own = col_cell == cell[col_req]
        c = np.where(own, -direction[col_req], 0.0)
        model = HighsModel(LinearProgram(
            c=c, A=block, row_lower=np.zeros(len(row_req)), row_upper=np.zeros(len(row_req)),
            col_lower=np.where(held, 0.0, -self.L[col_cell] * z),
            col_upper=np.where(held, 0.0, self.U[col_cell] * z)))
        model.set_time_limit(time_limit)
        result = model.solve()
        self.n_solves += len(reqs)
        if not result.optimal or result.row_duals is None:
            return None
        reach = np.zeros(len(reqs))
        reach[col_req[own]] = -c[own] * result.x[own]
        moving = np.abs(result.x) > TOL * np.maximum(1.0, level[col_req])
        multipliers = sp.csr_array((result.row_duals, (row_req, row_relation)),
                                   shape=(len(reqs), m))
        cuts = self.cuts(reqs, multipliers)
        return [LocalAttack(float(reach[k]), bool(reach[k] >= level[k] * (1 - TOL)),
                            cuts.indices[cuts.indptr[k]:cuts.indptr[k + 1]].astype(np.int64),
                            cuts.data[cuts.indptr[k]:cuts.indptr[k + 1]],
                            col_cell[moving & (col_req == k)])
                for k in range(len(reqs))]

    def cuts(self, reqs: Sequence[Requirement], multipliers: sp.csr_array) -> sp.csr_array:
        """Row k: the capacity cut of ``reqs[k]`` for the relations' multipliers in row k of
        ``multipliers``, scaled to ``k @ z >= 1`` (coefficients ``min(k_j, level) / level``;
        those below 1e-9 dropped, which only weakens it; none on the requirement's fixed
        cells)."""
        n, count = len(self.z), len(reqs)
        cell = np.array([r.cell for r in reqs], dtype=np.int64)
        direction = np.array([r.direction for r in reqs], dtype=float)
        level = np.array([r.level for r in reqs], dtype=float)
        # r = c - A^T lambda with c = -direction at the requirement's cell
        minus_r = sp.csr_array(multipliers @ self.by_row
                               + sp.csr_array((direction, (np.arange(count), cell)),
                                              shape=(count, n)))
        minus_r.sort_indices()
        r = -minus_r.data
        j = minus_r.indices
        k = np.where(r > 0, r * self.L[j], 0.0) + np.where(r < 0, -r * self.U[j], 0.0)
        row = np.repeat(np.arange(count), np.diff(minus_r.indptr))
        k = np.minimum(k / level[row], 1.0)
        fixed = np.array([i * n + f for i, q in enumerate(reqs) for f in q.fixed],
                         dtype=np.int64)
        k[(k < 1e-9) | np.isin(row * n + j, fixed)] = 0.0
        minus_r.data = k
        minus_r.eliminate_zeros()
        return minus_r
