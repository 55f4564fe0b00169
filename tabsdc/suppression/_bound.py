"""A certified lower bound on the cost of any protecting suppression pattern.

Every pattern that protects every requirement (:mod:`tabsdc.suppression._attacker`) is a
binary z with ``z_j = 1`` on the cells already hidden and ``z_j = 0`` on the cells that may
not be hidden, satisfying

* the **seed rows** (:func:`seed_rows`): a protected primary needs another hidden cell in every
  relation holding it (with respondents: in every relation that would otherwise give it to a
  respondent);
* every **capacity cut** ``k @ z >= 1`` of Fischetti and Salazar (attacker LP duals, valid for
  any multipliers by weak duality; Fischetti and Salazar, *Management Science* 47(7), 2001,
  section 3; Cox, *Towards a quality assessment of disclosure-limited statistical data*,
  slide 14); among them the **relation cuts** (:func:`relation_cuts`), those of the
  multiplier of one relation holding the primary, written down for every requirement and
  relation at once without an LP.

Relaxing ``z`` to ``[0, 1]`` and keeping any subset of these rows gives a linear program
``min c @ z  s.t.  R z >= 1,  l <= z <= u`` whose optimum is at most the cost of every
protecting pattern. Its value is certified through **weak duality** rather than read from the
solver's primal objective: for any row multipliers ``y >= 0`` and reduced costs
``r = c - R^T y``,

    c @ z  >=  sum_i y_i + sum_j min(r_j l_j, r_j u_j)      for every z with R z >= 1, l <= z <= u,

so the bound is computed from HiGHS's row duals (clipped at 0) by this formula: a dual that
misses a tolerance only weakens the bound, it never makes it invalid. The LP is strengthened
by rounds of capacity cuts separated in blocks of requirements (the fractional pattern
attacked, the cuts it violates added) within a time budget; the bound is valid after any
number of rounds.

A fallback needs no LP solve (the 10^6-cell tables, or a budget too small for the LP): the
multipliers ``y_i = min_{j in row i} c_j / n_j``, ``n_j`` the sum of cell j's coefficients
over the starting rows (:func:`starting_rows`), are feasible for the dual of their LP
(``R^T y <= c``), and a few passes raise each row's multiplier by the least slack of its
cells shared among their rows.

Costs of whole numbers (``cost="count"``) give a bound rounded up to a whole number: every
pattern costs a whole number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import SolverError
from tabsdc._flows import TOL, Requirement
from tabsdc._progress import Deadline
from tabsdc._respondents import Insiders
from tabsdc._sparse import row_entries
from tabsdc.solver import HighsModel, LinearProgram
from tabsdc.suppression._attacker import Attacker

#: Share of a time limit the lower bound of a non-optimal method may take.
BOUND_SHARE = 0.2
#: Seconds the lower bound may take when there is no time limit (a time limit gives it a fifth
#: of the limit: pass one for a tighter bound on a large table).
BOUND_SECONDS = 10.0
#: Requirements attacked between two solves of the relaxation.
BLOCK = 400
#: Passes of the fallback's multiplier raising.
FALLBACK_PASSES = 4
#: Relative safety margin taken off every bound (floating point in the cut coefficients).
MARGIN = 1e-9


@dataclass(frozen=True)
class LowerBound:
    """A certified lower bound on the cost of the secondaries of any protecting pattern.

    ``value``: the bound; ``how``: which relaxation gave it (a sentence); ``cuts``: capacity
    cuts in the relaxation; ``rounds``: LP solves; ``converged``: the fractional pattern of
    the last solve meets every requirement (the relaxation's own optimum over every capacity
    cut); ``relaxation``: that pattern (None when no LP was solved).
    """

    value: float
    how: str
    cuts: int = 0
    rounds: int = 0
    converged: bool = False
    relaxation: np.ndarray | None = None


def seed_rows(A: sp.csr_array, reqs: Sequence[Requirement], n: int,
              insiders: Insiders | None = None) -> sp.csr_array:
    """For each primary and each relation holding it: the other cells sum to >= 1 (else the
    relation gives it away).

    One 0/1 row per (primary, relation) pair, primaries in increasing order and each one's
    relations in the order of ``A``'s columns, built at once from the rows of ``A``. With
    respondents (``insiders``), then, for each relation whose primaries other than a
    primary j are all one respondent's cells (a respondent attacking j): the cells other
    than j and that respondent's sum to >= 1 (else the respondent computes j from the
    relation).

    Examples
    --------
    >>> A = sp.csr_array([[-1.0, 1.0, 1.0, 0.0], [0.0, -1.0, 0.0, 1.0]])
    >>> reqs = [Requirement(cell=1, direction=1, level=1.0)]
    >>> seed_rows(A, reqs, 4).toarray().tolist()
    [[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """
    primaries = np.unique([r.cell for r in reqs]).astype(np.int64)
    A = sp.csr_array(A)
    AT = A.T.tocsr()
    entries, holder = row_entries(AT, primaries)  # (AT: the relations by cell)
    owner = primaries[holder]  # the primary each row is for
    rows = sp.csr_array(A[AT.indices[entries]] != 0, dtype=float)
    entry_row = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
    rows.data[rows.indices == owner[entry_row]] = 0.0
    rows.eliminate_zeros()
    if insiders is None:
        return rows
    return sp.vstack([rows, _insider_seed_rows(A, primaries, insiders, n)], format="csr")


def relation_cuts(A: sp.csr_array, reqs: Sequence[Requirement], down: np.ndarray,
                  up: np.ndarray) -> sp.csr_array:
    """For each requirement of the outside intruder and each relation holding its cell: the
    capacity cut of that relation alone.

    To move cell i by ``level`` in ``direction`` the intruder must move the other cells of
    every relation ``a @ x = 0`` holding i by as much against it: cell j can give
    ``down_j`` where ``direction * a_j * a_i > 0`` and ``up_j`` otherwise (its capacity
    when hidden, nothing when published). So every protecting pattern z meets
    ``sum_j cap_j z_j >= level`` and, z being binary, ``sum_j min(cap_j / level, 1) z_j
    >= 1``: the capacity cut of Fischetti and Salazar (2001) for the multiplier
    ``-direction / a_i`` on that relation and 0 on the others
    (:meth:`~tabsdc.suppression._attacker.Attacker.cut`). Where the cells that would move
    the wrong way are small (their ``down`` below the level), it needs several of them or
    a cell that can carry the level, where the seed row (:func:`seed_rows`) is met by any
    one. Rows without a cell (a relation that cannot carry the level at all) are left
    out: the methods' own checks name such a primary.

    Examples
    --------
    A total of 10 over the parts 4 and 6 (values, ``down`` = value, ``up`` large); the
    part 4 must move up by 5: the total moving up (coefficient 1) or the part 6 moving down
    (6 >= 5: coefficient 1); by 8: the part 6 alone no longer suffices.

    >>> A = sp.csr_array([[-1.0, 1.0, 1.0]])
    >>> down, up = np.array([10.0, 4.0, 6.0]), np.full(3, 100.0)
    >>> relation_cuts(A, [Requirement(1, 1, 5.0)], down, up).toarray().tolist()
    [[1.0, 0.0, 1.0]]
    >>> relation_cuts(A, [Requirement(1, 1, 8.0)], down, up).toarray().tolist()
    [[1.0, 0.0, 0.75]]
    """
    outsider = [r for r in reqs if not r.fixed]
    n = A.shape[1]
    if not outsider:
        return sp.csr_array((0, n))
    cells = np.array([r.cell for r in outsider], dtype=np.int64)
    direction = np.array([r.direction for r in outsider], dtype=float)
    level = np.array([r.level for r in outsider], dtype=float)
    A = sp.csr_array(A)
    AT = A.T.tocsr()
    entries, owner = row_entries(AT, cells)  # owner: the requirement of each row
    rows = sp.csr_array(A[AT.indices[entries]])
    entry_row = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
    req = owner[entry_row]
    against = direction[req] * rows.data * AT.data[entries][entry_row] > 0
    k = np.minimum(np.where(against, down[rows.indices], up[rows.indices]) / level[req], 1.0)
    k[(rows.indices == cells[req]) | (k < 1e-9)] = 0.0
    cuts = sp.csr_array((k, rows.indices, rows.indptr), shape=rows.shape)
    cuts.eliminate_zeros()
    return cuts[np.diff(cuts.indptr) > 0]


def starting_rows(A: sp.csr_array, reqs: Sequence[Requirement], attacker: Attacker
                  ) -> sp.csr_array:
    """The rows every relaxation starts from: the seed rows (:func:`seed_rows`, the
    respondents' among them when ``attacker`` has respondents), then the relation cuts
    (:func:`relation_cuts`) at the attacker's capacities."""
    return sp.vstack([seed_rows(A, reqs, A.shape[1], attacker.insiders),
                      relation_cuts(A, reqs, attacker.L, attacker.U)], format="csr")


def _insider_seed_rows(A: sp.csr_array, primaries: np.ndarray, insiders: Insiders,
                       n: int) -> sp.csr_array:
    """The respondents' rows of :func:`seed_rows` (only relations with two or more
    primaries, one of them a respondent's, are looked at)."""
    primary = np.zeros(n, dtype=bool)
    primary[primaries] = True
    pattern = sp.csr_array(A != 0, dtype=float)
    grouped = primary & (insiders.group >= 0)
    candidates = np.flatnonzero((pattern @ primary >= 2) & (pattern @ grouped >= 1))
    cells_of_rows = []
    for r in candidates.tolist():
        cells = A.indices[A.indptr[r]:A.indptr[r + 1]]
        held = cells[primary[cells]]
        for g in np.unique(insiders.group[held][insiders.group[held] >= 0]).tolist():
            others = held[insiders.group[held] != g]
            if len(others) == 1 and len(insiders.attacking(np.array([g]), int(others[0]))):
                cells_of_rows.append(cells[(insiders.group[cells] != g) & (cells != others[0])])
    if not cells_of_rows:
        return sp.csr_array((0, n))
    indptr = np.concatenate([[0], np.cumsum([len(c) for c in cells_of_rows])])
    return sp.csr_array((np.ones(indptr[-1]), np.concatenate(cells_of_rows), indptr),
                        shape=(len(cells_of_rows), n))


def dual_bound(rows: sp.csr_array, multipliers: np.ndarray, cost: np.ndarray,
               lower: np.ndarray, upper: np.ndarray) -> float:
    """The weak-duality bound of ``min cost @ z  s.t.  rows @ z >= 1,  lower <= z <= upper``
    for the row multipliers (negative ones count as 0):
    ``sum y + sum_j min(r_j lower_j, r_j upper_j)``, ``r = cost - rows^T y``.

    Examples
    --------
    >>> rows = sp.csr_array(np.array([[1.0, 1.0]]))
    >>> dual_bound(rows, np.array([2.0]), np.array([3.0, 2.0]), np.zeros(2), np.ones(2))
    2.0
    >>> dual_bound(rows, np.array([5.0]), np.array([3.0, 2.0]), np.zeros(2), np.ones(2))
    0.0
    """
    y = np.maximum(np.asarray(multipliers, dtype=float), 0.0)
    reduced = cost - rows.T @ y
    return float(y.sum() + np.minimum(reduced * lower, reduced * upper).sum())


def _fallback_multipliers(rows: sp.csr_array, cost: np.ndarray) -> np.ndarray:
    """Multipliers feasible for the dual of the LP over ``rows`` (``rows^T y <= cost``, the
    coefficients in [0, 1]): each row gets the least share ``c_j / n_j`` of its cells
    (``n_j`` the sum of cell j's coefficients), then a few passes hand out the slack left
    the same way (an infinite cost: a cell that takes no share)."""
    y = np.zeros(rows.shape[0])
    slack = cost.astype(float).copy()
    counts = np.asarray(rows.sum(axis=0)).ravel()
    nonempty = np.diff(rows.indptr) > 0
    for _ in range(FALLBACK_PASSES):
        share = slack / np.maximum(counts, 1)
        step = np.zeros(rows.shape[0])
        step[nonempty] = np.minimum.reduceat(share[rows.indices],
                                             rows.indptr[:-1][nonempty])
        step = np.where(np.isfinite(step), np.maximum(step, 0.0), 0.0)
        if not step.any():
            break
        y += step
        slack = np.maximum(cost - rows.T @ y, 0.0)
    return y


def lower_bound(
    A: sp.csr_array,
    reqs: Sequence[Requirement],
    attacker: Attacker,
    cost: np.ndarray,
    fixed_on: np.ndarray,
    fixed_off: np.ndarray,
    *,
    deadline: Deadline | None = None,
    progress: Callable[[str], None] | None = None,
    unit: float = 1.0,
) -> LowerBound:
    """A certified lower bound on ``cost`` summed over the cells any protecting pattern
    hides beyond ``fixed_on`` (see the module docstring).

    The fallback first; then, while ``deadline`` allows, the LP relaxation over the seed
    rows (the respondents' among them when ``attacker`` has respondents), strengthened by
    the outsider's capacity cuts of the requirements its fractional pattern fails, attacked
    ``BLOCK`` at a time in turn, and once it meets them all, by the cuts of the respondents'
    scenarios it fails (each costs a search of certificates; a relaxation with fewer rows
    is still a bound, so a deadline between the two is safe). The
    bound is the largest of the certified values. Progress lines show it times ``unit``
    (the costs' unit when they were scaled for the solver).

    Examples
    --------
    A 2 x 2 table with its totals, cell (a, x) primary with levels 1: the cheapest pattern
    hides the other three inner cells (cost 2 + 3 + 4 = 9).

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc._bounds import capacities
    >>> from tabsdc.suppression._attacker import requirements
    >>> frame = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"),
    ...                       "value": [1.0, 2.0, 3.0, 4.0]})
    >>> table = Table.from_aggregated(frame, ["r", "c"])
    >>> primary = np.arange(9) == 4          # cells in the order of table.cells: (a, x)
    >>> down, up = capacities(table)
    >>> levels = np.where(primary, 1.0, 0.0)
    >>> reqs = requirements(primary, levels, levels)
    >>> bound = lower_bound(table.A, reqs, Attacker(table.A, down, up),
    ...                     table.values * ~primary, primary, np.zeros(9, dtype=bool))
    >>> round(bound.value, 6), bound.converged
    (9.0, True)
    """
    deadline = deadline or Deadline(BOUND_SECONDS)
    cost = np.where(fixed_on | fixed_off, 0.0, np.asarray(cost, dtype=float))
    lower, upper = fixed_on.astype(float), (~fixed_off).astype(float)
    whole = bool(np.all(cost == np.round(cost)))

    def certified(value: float) -> float:
        value -= MARGIN * max(abs(value), 1.0)
        return float(np.ceil(value - 1e-6)) if whole else value

    if not reqs:
        return LowerBound(0.0, "nothing to protect", converged=True)
    seeds = starting_rows(A, reqs, attacker)
    # cells that may not be hidden take no share (their cost is never paid)
    shares = _fallback_multipliers(seeds, np.where(fixed_off, np.inf, cost))
    best = certified(dual_bound(seeds, shares, cost, lower, upper))
    how = (f"shares of the cell costs among the {seeds.shape[0]:,} starting rows (seed rows "
           "and relation cuts; no LP)")
    if progress is not None:
        progress(f"lower bound: {best * unit:.6g} from {how}; then the LP relaxation with "
                 "capacity cuts")
    rows, cuts, rounds, converged, relaxation = seeds, 0, 0, False, None
    model = HighsModel(LinearProgram(c=cost, A=seeds, row_lower=np.ones(seeds.shape[0]),
                                     row_upper=np.full(seeds.shape[0], np.inf),
                                     col_lower=lower, col_upper=upper))
    start = 0  # the next requirement to attack, in turn
    respondents = False  # the outsider's cuts first (the scenarios cost a search each)
    while not deadline.expired:
        model.set_time_limit(deadline.solver_limit())
        result = model.solve()
        if not result.optimal or result.row_duals is None:
            break
        rounds += 1
        value = certified(dual_bound(rows, result.row_duals, cost, lower, upper))
        if value > best:
            best = value
            how = (f"the LP relaxation with {rows.shape[0] - cuts:,} starting rows (seed "
                   f"rows and relation cuts) and {cuts:,} capacity cuts")
        relaxation = np.clip(result.x, 0.0, 1.0)
        found, start = _separate(reqs, attacker, relaxation, start, deadline, respondents)
        if found == [] and not respondents and attacker.insiders is not None:
            respondents = True  # every outsider's cut is in: the respondents' scenarios now
            found, start = _separate(reqs, attacker, relaxation, 0, deadline, respondents)
        if found is None:
            break
        if progress is not None:
            progress(f"lower bound round {rounds}: {best * unit:.6g}, {len(found)} new cuts")
        if not found:
            converged = True
            break
        block = sp.csr_array(np.vstack(found))
        model.add_rows(block, 1.0, np.inf)
        rows = sp.vstack([rows, block], format="csr")
        cuts += block.shape[0]
    return LowerBound(best, how, cuts, rounds, converged, relaxation)


def _separate(reqs: Sequence[Requirement], attacker: Attacker, z: np.ndarray, start: int,
              deadline: Deadline, respondents: bool) -> tuple[list[np.ndarray] | None, int]:
    """Attack the requirements in turn from ``start`` on under the fractional pattern ``z``
    until ``BLOCK`` have been attacked and some failed, or all have: the capacity cuts ``z``
    violates (none: ``z`` meets every requirement; None: the deadline came first) and
    where to start next. With ``respondents``, a requirement ``z`` meets is attacked in
    the scenarios of the attacker's respondents too."""
    attacker.set_pattern(z)
    found: list[np.ndarray] = []
    for step in range(len(reqs)):
        if deadline.expired:
            return None, start
        req = reqs[(start + step) % len(reqs)]
        try:
            reach, duals, _ = attacker.reach(req)
            failing = [(req, duals)] if reach < req.level * (1 - TOL) else []
            if not failing and respondents:
                failing = [(scenario, attacker.reach(scenario)[1])
                           for scenario in attacker.failing_scenarios(req)]
        except SolverError:
            if deadline.expired:
                return None, start
            raise
        for scenario, multipliers in failing:
            cut = attacker.cut(scenario, multipliers)
            if cut @ z < 1 - TOL:
                found.append(cut)
        if found and step + 1 >= BLOCK:
            return found, (start + step + 1) % len(reqs)
    return found, start
