"""Large-neighbourhood search: a protecting pattern made cheaper one region at a time.

Start from a protecting pattern ``P``. Repeatedly choose a region ``R`` (the cells within
``hops`` relations of a secondary, the most expensive one not tried yet: ties drawn at
random), free
its secondaries and let its published cells be suppressed, while every cell outside ``R``
keeps its status (hidden stays hidden, published stays published), and solve that
sub-problem exactly: the optimal method's master MILP with capacity cuts
(:func:`~tabsdc.suppression._optimal.optimal_pattern`) over the requirements whose
certificates move a freed secondary, ``P`` its first incumbent, within its own time limit.
A requirement whose certificates (the attacks proving it, against the outside intruder and
every respondent: :meth:`~tabsdc.suppression._attacker.Attacker.proof`) move no freed cell
keeps them whatever the region becomes, so only the others can fail. The region's pattern
is kept when it costs less; its requirements are then proved again on the whole pattern
(new certificates for the next regions), and a region whose new pattern cannot be proved
so is dropped. This is the large-neighbourhood search of Shaw (*CP-98*, LNCS 1520, 1998)
with an exact MIP re-optimisation of each neighbourhood (Danna, Rothberg and Le Pape,
*Mathematical Programming* 102, 2005, "RINS": the incumbent fixes what lies outside).

The cost of the pattern never rises: a region's solve starts from ``P``, which protects
every requirement of the sub-problem, and only a cheaper protecting pattern replaces it.

Examples
--------
The region around a cell: the cells within one relation of it. On a 2 x 2 table with its
totals, one relation from an inner cell reaches its row and its column:

>>> import pandas as pd
>>> from tabsdc._table import Table
>>> cells = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"), "value": [1.0] * 4})
>>> table = Table.from_aggregated(cells, ["r", "c"])
>>> table.cell_labels([4])
['r=a x c=x']
>>> table.cell_labels(region(table.A, [4], hops=1))
['r=Total x c=x', 'r=a x c=Total', 'r=a x c=x', 'r=a x c=y', 'r=b x c=x']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._network import neighbourhood
from tabsdc._progress import Deadline, Progress
from tabsdc._respondents import Insiders
from tabsdc.audit._insider import insider_proofs
from tabsdc.suppression._attacker import Attacker, Requirement
from tabsdc.suppression._heuristic import FlowRouter
from tabsdc.suppression._optimal import optimal_pattern
from tabsdc.suppression._problem import SuppressionProblem

#: Seconds the exact solve of one region may take at most.
REGION_SECONDS = 10.0
#: Radius of a region around its secondary, in relations.
REGION_HOPS = 1
#: Regions a search without a time limit solves at most (a count, not a time, so that the
#: pattern does not depend on the machine's speed).
REGIONS_WITHOUT_LIMIT = 60


@dataclass(frozen=True)
class NeighbourhoodStats:
    """What the search did: ``regions`` solved, ``improved`` of them kept, the pattern's
    cost (new suppressions) before and after, and whether the deadline stopped it."""

    regions: int
    improved: int
    start_cost: float
    cost: float
    time_limited: bool


def region(A: sp.sparray, centres: Sequence[int], *, hops: int = REGION_HOPS) -> np.ndarray:
    """The cells within ``hops`` relations of any of ``centres`` (sorted cell numbers)."""
    by_column, by_row = sp.csc_array(A), sp.csr_array(A)
    return np.unique(np.concatenate(
        [neighbourhood(by_column, by_row, int(c), hops) for c in centres]))


def improve_pattern(
    problem: SuppressionProblem,
    pattern: np.ndarray,
    deadline: Deadline,
    *,
    progress: Progress | None = None,
    hops: int = REGION_HOPS,
    region_limit: float = REGION_SECONDS,
    max_regions: int | None = None,
    witnesses: sp.sparray | None = None,
    certificates: dict[int, list[np.ndarray]] | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, NeighbourhoodStats]:
    """A protecting pattern no more costly than ``pattern`` (which protects every
    requirement of ``problem``), improved region by region until ``deadline``, or after
    ``max_regions`` regions, or when no region improves it (see the module docstring).

    ``witnesses`` (cells x k, feasible deviations such as the hypercube method's) give the
    certificates of the requirements they prove while their cells are hidden, without a
    flow (:meth:`~tabsdc.suppression._attacker.Attacker.add_witnesses`); ``certificates``
    (by position in ``problem.reqs``, each a list of the cells of attacks proving it under
    ``pattern``, as the routing's clean-up leaves them) spare the search proving them
    again.

    Regions are centred on the most expensive secondary first (where a pattern loses most:
    the grand total and the large marginals under cost = value), ties drawn with a
    generator seeded by ``seed`` (the same seed and the same solver times give the same
    pattern); a region whose solve kept the pattern is not drawn again until another region
    changed it.
    """
    cost, reqs = problem.cost, problem.reqs
    removable = ~problem.fixed_on & ~problem.fixed_off
    pattern = pattern | problem.fixed_on
    start_cost = current = float(cost @ (pattern & ~problem.fixed_on))
    attacker = problem.attacker(deadline, extra_hops=1)
    attacker.add_witnesses(witnesses)
    if certificates is None:
        certificates = _certify(attacker, reqs, pattern, range(len(reqs)), deadline)
    else:
        certificates = dict(certificates)
    rng = np.random.default_rng(seed)
    tried = np.zeros(len(cost), dtype=bool)  # centres whose region kept the pattern
    regions = improved = 0
    while certificates is not None and not deadline.expired and (
            max_regions is None or regions < max_regions):
        candidates = np.flatnonzero(pattern & removable & ~tried & (cost > 0))
        if len(candidates) == 0:
            break
        top = candidates[cost[candidates] >= cost[candidates].max() * (1 - 1e-9)]
        centre = int(rng.choice(top))
        free = np.zeros(len(cost), dtype=bool)
        free[region(problem.table.A, [centre], hops=hops)] = True
        free &= removable
        freed = free & pattern
        affected = [k for k, family in certificates.items()
                    if any(freed[cells].any() for cells in family)]
        candidate, renewed = _solve_region(problem, pattern, free, affected, certificates,
                                           Deadline(deadline.solver_limit(region_limit)),
                                           deadline)
        regions += 1
        new_cost = float(cost @ (candidate & ~problem.fixed_on))
        if renewed is not None and new_cost < current * (1 - 1e-9):
            pattern, current = candidate, new_cost
            certificates.update(renewed)
            tried[:] = False
            improved += 1
            if progress is not None:
                progress(f"neighbourhood search: region {regions} around "
                         f"{problem.labels(centre)} ({int(free.sum())} cells free, "
                         f"{len(affected)} requirements): cost {current:.6g}")
        else:
            tried[centre] = True
    if progress is not None:
        progress(f"neighbourhood search: {regions} regions solved, {improved} kept; cost "
                 f"{start_cost:.6g} -> {current:.6g}")
    return pattern, NeighbourhoodStats(regions, improved, start_cost, current,
                                       deadline.expired)


def kept_witnesses(witnesses: sp.sparray, pattern: np.ndarray) -> sp.csc_array | None:
    """The columns of ``witnesses`` (cells x k deviations) that move hidden cells of
    ``pattern`` only: those still feasible deviations (None: none is).

    Examples
    --------
    >>> W = sp.csc_array(np.array([[1.0, 0.0], [-1.0, 1.0], [0.0, -1.0]]))
    >>> kept_witnesses(W, np.array([True, True, False])).toarray().tolist()
    [[1.0], [-1.0], [0.0]]
    """
    W = sp.csc_array(witnesses)
    moves_published = np.diff(sp.csc_array(W[~pattern]).indptr) > 0
    kept = W[:, np.flatnonzero(~moves_published)]
    return sp.csc_array(kept) if kept.shape[1] else None


def _solve_region(problem: SuppressionProblem, pattern: np.ndarray, free: np.ndarray,
                  affected: list[int], certificates: dict[int, list[np.ndarray]],
                  deadline: Deadline, whole: Deadline) -> tuple[np.ndarray, dict | None]:
    """The cheapest pattern the optimal method finds in ``deadline`` that equals
    ``pattern`` outside the ``free`` cells and protects the requirements ``affected``, and
    their new certificates (``pattern`` and None when it finds none cheaper, or when
    ``whole``, the search's deadline, expires before they are found).

    The sub-problem holds the free cells and those the certificates of ``affected`` move
    (so ``pattern`` protects it); every other cell is held at its value in the attacks,
    so an attack there is an attack on the whole table and a pattern protecting the
    sub-problem protects ``affected`` on the whole table."""
    if not affected:  # no certificate needs the region's secondaries
        return pattern & ~free | problem.fixed_on, {}
    cells = np.unique(np.concatenate([np.flatnonzero(free), *(
        c for k in affected for c in certificates[k])]))
    position = np.full(len(pattern), -1)
    position[cells] = np.arange(len(cells))
    reqs = [Requirement(int(position[r.cell]), r.direction, r.level)
            for r in (problem.reqs[k] for k in affected)]
    fixed_on = (problem.fixed_on | (pattern & ~free))[cells]
    fixed_off = (problem.fixed_off | (~pattern & ~free))[cells]
    A = sp.csc_array(problem.table.A)[:, cells]
    down, up = problem.down[cells], problem.up[cells]
    attacker = Attacker(A, down, up, deadline, problem.hops,
                        insiders=restrict_insiders(problem.insiders, cells))
    router = FlowRouter(A, down, up, ~fixed_off, deadline, problem.hops)
    found, _ = optimal_pattern(A, reqs, attacker, router, problem.cost[cells], fixed_on,
                               fixed_off, lambda i: problem.labels(int(cells[i])),
                               deadline=deadline, incumbent=pattern[cells])
    if found is None or problem.cost[cells] @ found >= problem.cost[cells] @ pattern[cells]:
        return pattern, None
    renewed = _certify(Attacker(A, down, up, whole, problem.hops,
                                insiders=attacker.insiders), reqs, found, range(len(reqs)),
                       whole)
    if renewed is None:
        return pattern, None
    out = pattern.copy()
    out[cells] = found
    return out, {k: [cells[c] for c in renewed[i]] for i, k in enumerate(affected)}


def restrict_insiders(insiders: Insiders | None, cells: np.ndarray) -> Insiders | None:
    """The respondents of ``insiders`` on the sub-table of the columns ``cells`` (sorted):
    each group's cells among them (None: no group has one).

    A total above a group's cells through cells outside ``cells`` is no longer seen as
    one the respondent contributes to, so the sub-table may ask for more scenarios than
    the whole table, never fewer.

    Examples
    --------
    >>> from tabsdc._respondents import insider_groups
    >>> A = sp.csr_array([[-1.0, 1, 1, 0, 0], [0, -1, 0, 1, 1]])  # T, x, y, x1, x2
    >>> whole = insider_groups(A, np.array([2.0, 1, 1, 1, 0]),
    ...                        np.array([False, True, True, True, False]))
    >>> part = restrict_insiders(whole, np.array([0, 2, 3]))  # T, y, x1
    >>> part.group.tolist(), part.insider.tolist(), part.parents.ravel().tolist()
    ([-1, 1, 0], [2, 1], [-1, 0, -1])
    """
    if insiders is None:
        return None
    group = insiders.group[cells]
    present = np.unique(group[group >= 0])
    if len(present) == 0:
        return None
    group = np.where(group >= 0, np.searchsorted(present, group), -1)
    order = np.flatnonzero(group >= 0)
    order = order[np.argsort(group[order], kind="stable")]
    starts = np.searchsorted(group[order], np.arange(len(present) + 1))
    position = np.full(len(insiders.group), -1)
    position[cells] = np.arange(len(cells))
    insider = position[insiders.insider[present]]
    insider = np.where(insider >= 0, insider, order[starts[:-1]])
    parents = insiders.parents[cells]
    parents = np.where(parents >= 0, position[np.maximum(parents, 0)], -1)
    return Insiders(group, order, starts, insider, parents)


def _certify(attacker: Attacker, reqs: Sequence[Requirement], pattern: np.ndarray,
             which: Sequence[int], deadline: Deadline) -> dict[int, list[np.ndarray]] | None:
    """The certificates of the requirements ``which`` under ``pattern``, by position (local
    ones first, :meth:`~tabsdc.suppression._attacker.Attacker.proof`, else over the whole
    pattern), or None when the deadline came first or the pattern fails one of them."""
    attacker.set_pattern(pattern)
    out: dict[int, list[np.ndarray]] = {}
    for k in which:
        if deadline.expired:
            return None
        family, _ = attacker.proof(reqs[k])
        if family is None:
            family, failed = insider_proofs(reqs[k], attacker.insiders, attacker.certificate,
                                            stop_at_failure=True, split=True)
            if failed:
                return None
        out[k] = family
    return out
