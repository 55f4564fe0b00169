"""The relation-mass relaxation of L1 CTA: a lower bound that pays for compensation.

The LP relaxation of the CTA MILP (:mod:`tabsdc.cta._lp`) is weak because it may move a
sensitive cell half up and half down (``p_i = upl_i / 2``, ``q_i = lpl_i / 2``): it pays the
cell's own cost and nothing else, since the net move ``p_i - q_i`` is zero and no relation has
anything to compensate. Every real adjustment must compensate each move inside every
relation of the moved cell, then compensate the compensating cells in their other relations,
and so on. This module bounds that cost.

For an adjustment ``y`` with ``A y = 0``, each relation ``r`` and each of its cells ``j``
(triangle inequality on ``a_rj y_j = -sum_{l != j} a_rl y_l``):

    |a_rj| |y_j| <= sum_{l != j} |a_rl| |y_l|,    i.e.   sum_l |a_rl| m_l - 2 |a_rj| m_j >= 0

for the masses ``m = |y|``: no cell carries more than half the weighted mass of a relation.
Besides, a sensitive cell has ``m_i >= min(lpl_i, upl_i)`` (the level of its only possible
direction where it has one), every cell ``m_j <= max(up_j, down_j)`` (its room), and a
solution at least as good as an incumbent of cost ``U`` has ``w_j m_j <= U``. Hence the
*mass LP*

    minimise  w' m   subject to   T m >= 0,   lo <= m <= hi           (one row of T per
                                                                       non-zero of A)

is a relaxation of L1 CTA: its optimum is a lower bound. The extra rows ``E y = 0`` of
preserved statistics and the signs of the moves are dropped (that only lowers the bound).

**Certificate.** The bound reported is not the LP's optimum as the solver states it but the
Lagrangian ``L(lam) = sum_j min(c_j lo_j, c_j hi_j)`` with ``c = w - T' lam`` at the solver's
row duals ``lam`` (clipped to ``lam >= 0``): by weak duality ``L(lam) <= MASS <= OPT`` for
*every* ``lam >= 0``, so the bound is valid whatever the solver's tolerances (an interior
point solve without crossover is enough), and ``hi`` includes the incumbent's reach
``U / w_j``, which keeps it finite.

**Cuts for the MILP.** The same rows over ``m = p + q`` (``y = p - q``) are valid for every
solution of the MILP of :mod:`tabsdc.cta._milp` whose ``p`` and ``q`` are not both positive
in a cell, and among the optimal solutions there always is one such (lowering ``p_j`` and
``q_j`` together keeps ``y`` and costs less; a sensitive cell's binary already forbids both).
Adding them therefore keeps the MILP's optimum and tightens its relaxation: the rows whose
multipliers are positive at the mass LP's optimum (:meth:`MassRelaxation.cuts`) give HiGHS's
branch and bound the mass LP's root bound.

On Castro's CSPLIB instances the mass LP's bound is up to 1.85 times the LP relaxation's
(HIER13: 12.12 against 6.77; NINE12: 106.7 against 77.2), see ``docs/performance.md``. It
is not always the stronger: the LP relaxation keeps the signs of the moves, which matter
where sensitive cells can move one way only (on TABLE7 all 17 can: 28.46 against 26.21), so
the methods report the best of both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tabsdc._errors import SolverError
from tabsdc.cta._problem import CTAProblem
from tabsdc.solver import LinearProgram, SolveOptions, SolveResult
from tabsdc.solver._highs import solve_highs
from tabsdc.solver._isolated import submit_isolated

#: Rows whose multiplier is below this share of the largest are not made MILP cuts (the
#: interior point method leaves tiny positive multipliers on rows that do not bind). With all
#: binding rows HiGHS's bound after 40 s is the best or close to it: TOYSARAH 16.23 (16.09
#: with only the rows above 1 %), TABLE3 58.23 (57.74), HIER13 12.34
#: (12.33 to 12.37 with fewer).
CUT_SHARE = 1e-6

#: Longest relation whose rows go into the mass LP as they are (``len`` non-zeros each);
#: the rows of a longer one use an auxiliary column holding the relation's mass (3 non-zeros
#: each), so that a total over thousands of cells does not give millions of non-zeros.
DENSE_RELATION_MAX = 32


@dataclass(frozen=True)
class MassRelaxation:
    """The mass LP of a CTA problem (see the module docstring).

    Cells tied by a relation of two cells with coefficients of equal size (a total with a
    single part, a cell repeated in two hierarchies: ``|y_u| = |y_v|``) share one mass
    variable; the relation's own rows are then void and left out. On hierarchical tables
    this removes a third of the rows (NINE5D: 7,172 of 17,295 relations).

    Attributes
    ----------
    problem : CTAProblem
    group : ndarray of int, shape (n,)
        The mass variable of each cell.
    lower, upper, cost : ndarray, shape (g,)
        ``lo``, ``hi`` (without the incumbent's reach) and cost of each mass variable.
    rows, cells, coefficients : ndarray, shape (t,)
        One triangle row per non-zero of ``A`` outside the merged relations: its relation,
        its cell and ``|a_rj|``.

    Examples
    --------
    One relation ``y_0 = y_1 + y_2`` (cell 0 the total), cell 1 sensitive with levels 2, unit
    costs. The LP relaxation's bound is 2 (the cell's own move, split both ways); the mass
    LP's is 4 = the optimum, since the move has to be compensated by the total or by cell 2:

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2.0, 0], "upl": [0, 2.0, 0]})
    >>> mass = MassRelaxation.of(build_problem(Table(cells, [[-1, 1, 1]], [0]), "count"))
    >>> from tabsdc.solver import solve
    >>> result = solve(mass.program())
    >>> round(result.objective, 9), mass.bound(result.row_duals, incumbent=4.0)
    (4.0, 4.0)
    """

    problem: CTAProblem
    group: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    cost: np.ndarray
    rows: np.ndarray
    cells: np.ndarray
    coefficients: np.ndarray

    @classmethod
    def of(cls, problem: CTAProblem) -> MassRelaxation:
        """The mass LP's data for ``problem`` (relations ``A`` only)."""
        n = problem.n
        lower = np.zeros(n)
        k = problem.sensitive
        lower[k] = np.where(problem.free_direction, np.minimum(problem.upl, problem.lpl),
                            np.where(problem.can_up, problem.upl, problem.lpl))
        upper = np.maximum(problem.up, problem.down)
        upper[k] = np.maximum(np.where(problem.can_up, problem.up[k], 0.0),
                              np.where(problem.can_down, problem.down[k], 0.0))
        matrix = sp.csr_array(abs(problem.A))
        matrix.eliminate_zeros()
        first = matrix.indptr[:-1]
        pair = (np.diff(matrix.indptr) == 2)
        pair[pair] = matrix.data[first[pair]] == matrix.data[first[pair] + 1]
        u, v = matrix.indices[first[pair]], matrix.indices[first[pair] + 1]
        _, group = connected_components(
            sp.coo_array((np.ones(len(u)), (u, v)), shape=(n, n)), directed=False)
        count = int(group.max()) + 1 if n else 0
        low = np.zeros(count)
        np.maximum.at(low, group, lower)
        high = np.full(count, np.inf)
        np.minimum.at(high, group, upper)
        entries = matrix.tocoo()
        keep = ~pair[entries.row]
        return cls(problem=problem, group=group, lower=low, upper=high,
                   cost=np.bincount(group, weights=problem.cost, minlength=count),
                   rows=entries.row[keep], cells=entries.col[keep],
                   coefficients=entries.data[keep])

    @property
    def size(self) -> int:
        """Number of triangle rows."""
        return len(self.rows)

    @property
    def variables(self) -> int:
        """Number of mass variables."""
        return len(self.cost)

    def _spread(self) -> sp.csr_array:
        """``|A| G``: relations over mass variables (``G`` maps cells to their variable)."""
        n = self.problem.n
        to_group = sp.csr_array((np.ones(n), (np.arange(n), self.group)),
                                shape=(n, self.variables))
        return sp.csr_array(sp.csr_array(abs(self.problem.A)) @ to_group)

    def program(self) -> LinearProgram:
        """The mass LP as a :class:`~tabsdc.solver.LinearProgram` over the mass variables:
        the triangle rows first (in the order of :attr:`rows`), then one row per relation
        longer than :data:`DENSE_RELATION_MAX` defining its auxiliary mass column
        ``M_r = sum_l |a_rl| m_l`` (its triangle rows read ``M_r - 2 |a_rj| m_j >= 0``)."""
        g, relations = self.variables, self.problem.A.shape[0]
        spread = self._spread()
        lengths = np.bincount(self.rows, minlength=relations)
        long = np.flatnonzero(lengths > DENSE_RELATION_MAX)
        column = np.full(relations, -1)
        column[long] = g + np.arange(len(long))
        width = g + len(long)
        dense = np.flatnonzero(column[self.rows] < 0)
        aux = np.flatnonzero(column[self.rows] >= 0)
        written = spread[self.rows[dense]].tocoo()
        row = np.concatenate([dense[written.row], np.arange(self.size), aux])
        col = np.concatenate([written.col, self.group[self.cells], column[self.rows[aux]]])
        value = np.concatenate([written.data, -2 * self.coefficients, np.ones(len(aux))])
        triangle = sp.csr_array((value, (row, col)), shape=(self.size, width))
        definitions = sp.hstack([spread[long], -sp.eye_array(len(long), format="csr")],
                                format="csr")
        matrix = sp.vstack([triangle, definitions], format="csr")
        return LinearProgram(
            c=np.concatenate([self.cost, np.zeros(len(long))]), A=matrix,
            row_lower=np.zeros(matrix.shape[0]),
            row_upper=np.concatenate([np.full(self.size, np.inf), np.zeros(len(long))]),
            col_lower=np.concatenate([self.lower, np.zeros(len(long))]),
            col_upper=np.concatenate([self.upper, np.full(len(long), np.inf)]),
        )

    def multipliers(self, row_duals: np.ndarray | None) -> np.ndarray | None:
        """The triangle rows' multipliers ``lam >= 0`` from the row duals of :meth:`program`
        (None when there are none)."""
        if row_duals is None:
            return None
        return np.maximum(np.asarray(row_duals, dtype=float)[: self.size], 0.0)

    def bound(self, row_duals: np.ndarray | None, incumbent: float | None) -> float | None:
        """The certified lower bound ``max(0, L(lam))`` at the duals of :meth:`program` (see
        the module docstring); None without duals or when it is ``-inf`` (a cell of zero
        cost and unlimited room that the multipliers make attractive).

        Parameters
        ----------
        row_duals : ndarray or None
            Row duals of :meth:`program` (HiGHS's convention, ``>= 0`` on the triangle rows at
            an optimum); any values give a valid bound.
        incumbent : float or None
            Objective of a known adjustment (its reach ``U / cost`` caps every mass); None:
            no cap.
        """
        lam = self.multipliers(row_duals)
        if lam is None:
            return None
        weighted = lam * self.coefficients
        per_relation = np.bincount(self.rows, weights=weighted,
                                   minlength=self.problem.A.shape[0])
        c = self.cost - self._spread().T @ per_relation + 2 * np.bincount(
            self.group[self.cells], weights=weighted, minlength=self.variables)
        upper = self.upper
        if incumbent is not None:
            positive = self.cost > 0
            reach = np.where(positive, incumbent / np.where(positive, self.cost, 1.0), np.inf)
            upper = np.minimum(upper, reach)
        if np.any(self.lower > upper):
            return None  # no mass vector at all (then neither an adjustment that good)
        with np.errstate(invalid="ignore"):
            terms = np.where(c >= 0, c * self.lower, c * upper)
        terms = np.where((c < 0) & np.isinf(upper), -np.inf, terms)
        total = float(np.sum(terms))
        if not np.isfinite(total):
            return None
        return max(0.0, total)

    def cuts(self, row_duals: np.ndarray | None, *, share: float = CUT_SHARE) -> sp.csr_array:
        """Triangle rows over ``[p, q]`` (``2 n`` columns; each row ``>= 0``) whose multiplier
        exceeds ``share`` times the largest: the cuts for the MILP (module docstring)."""
        n = self.problem.n
        lam = self.multipliers(row_duals)
        if lam is None or not np.any(lam > 0):
            return sp.csr_array((0, 2 * n))
        active = np.flatnonzero(lam > share * lam.max())
        absolute = sp.csr_array(abs(self.problem.A))
        own = sp.csr_array((2 * self.coefficients[active],
                            (np.arange(len(active)), self.cells[active])),
                           shape=(len(active), n))
        rows = sp.csr_array(sp.csr_array(absolute[self.rows[active]]) - own)
        return sp.csr_array(sp.hstack([rows, rows], format="csr"))


#: Largest mass LP (non-zeros of its matrix) that is built and solved; above it the bound is
#: left out (a table of a million cells would need tens of millions).
MASS_MAX_NONZEROS = 5_000_000


def mass_nonzeros(problem: CTAProblem) -> int:
    """Non-zeros of the mass LP's matrix of ``problem``, at most (computed without building
    it)."""
    lengths = np.diff(sp.csr_array(problem.A).indptr)
    dense = lengths <= DENSE_RELATION_MAX
    return int(np.sum(lengths[dense] ** 2) + np.sum(4 * lengths[~dense]))


class MassJob:
    """The mass LP of a problem, being solved.

    With ``within`` (seconds) it is solved at once in the solver's worker process
    (:func:`tabsdc.solver._isolated.submit_isolated`: on another core, while the caller goes on)
    by the interior point method without crossover, and is over within ``within`` seconds;
    without, in this process when :meth:`result` is first asked for.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2.0, 0], "upl": [0, 2.0, 0]})
    >>> job = MassJob(build_problem(Table(cells, [[-1, 1, 1]], [0]), "count"), within=None)
    >>> round(job.bound(incumbent=4.0), 9)
    4.0
    """

    def __init__(self, problem: CTAProblem, within: float | None) -> None:
        self.relaxation = MassRelaxation.of(problem)
        self._program = self.relaxation.program()
        self._result: SolveResult | None = None
        self._future = None
        self.seconds: float | None = None
        if within is not None:
            self._future = submit_isolated(self._program, SolveOptions(time_limit=within),
                                           interior=True, crossover=False, within=within)

    def result(self) -> SolveResult | None:
        """The mass LP's solve (waiting for it); None when it failed."""
        if self._result is None:
            try:
                if self._future is not None:
                    self._result = self._future.result()
                else:
                    self._result = solve_highs(self._program, SolveOptions(), interior=True,
                                               crossover=False)
            except SolverError:
                return None
            self.seconds = round(self._result.seconds, 3)
        return self._result

    def duals(self) -> np.ndarray | None:
        """Its row duals (None when it did not end optimal)."""
        result = self.result()
        return None if result is None or not result.optimal else result.row_duals

    def bound(self, incumbent: float | None) -> float | None:
        """:meth:`MassRelaxation.bound` at its duals."""
        return self.relaxation.bound(self.duals(), incumbent)

    def cuts(self) -> sp.csr_array | None:
        """:meth:`MassRelaxation.cuts` at its duals (None without)."""
        duals = self.duals()
        return None if duals is None else self.relaxation.cuts(duals)
