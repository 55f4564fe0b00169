"""The insider attack: what the respondent of a single-contributor cell learns.

The respondent of a cell with one contributor (``freq == 1``; with holdings the holding is
the contributor, and ``freq`` counts holdings) knows that cell's value. Its attack is the
interval attack (:mod:`tabsdc.audit._intervals`) on the polytope narrowed by what it knows:
the a-priori bounds of its cell become ``[a_c, a_c]``, and so do those of every other cell
with the same sole contributor (a total whose one contributor is that of its part; such
cells form one **group** per respondent, :func:`tabsdc._respondents.insider_groups`). Every
*other* sensitive cell j must keep its protection levels over that polytope ``P_c``:

    min { x_j : x in P_c } <= a_j - lpl_j,   max { x_j : x in P_c } >= a_j + upl_j,
    max - min >= spl_j,

and must not be pinned to one value. This is tau-ARGUS's singleton problem (two
single-contributor cells alone in a relation; tau-ARGUS manual, section 4.2, "singletons")
taken from one relation to the whole pattern: the extra suppression that rule adds can
itself be derivable through another relation. Coalitions of respondents of cells with
more contributors are what the p % and p/q rules' levels already assume away.

The attack stays exact (LPs on ``P_c``) and is fast because only pairs that can fail get
an LP. In deviations ``d = x - a`` (:mod:`tabsdc._flows`), a requirement of j holds in
``P_c`` exactly when some feasible deviation meets it with ``d = 0`` on the respondent's
cells. So:

* a pair (c, j) can fail only when c and j lie in one block of hidden cells;
* a deviation known to be feasible that meets j's level and does not move c proves the pair:
  the checked witnesses of a large-table audit (:mod:`tabsdc.audit._witnesses`), then
  flows (certificates) that move the fewest respondents' cells (the others move at no
  cost: a certificate need not be small), within a few relations of j first on large
  blocks, then in regions grown around j (:data:`GROWN_CELLS`, doubling) and the region of
  the flows already known through j (their cells, one hop wider) in its place by size,
  before the whole block (first for a block whose flows cost less than the regions,
  unless j's own whole-block flows do not);
* the respondents still open for j are those every certificate found so far moves; each
  gets its own flow with its cells fixed (:func:`insider_proofs`), which proves the pair or,
  solved over the whole block, refutes it exactly: the flow is asked for the level less
  the verdicts' tolerance, so a solve the solver proves infeasible shows that the exact
  interval misses the level (convexity: the cell cannot move that far);
* the pairs refuted get an interval and verdicts: on a block of more than
  :data:`GROWN_CELLS` cells, the level a proven-infeasible flow missed decides the pair
  (status ``"no flow"``); otherwise first an outer interval on relaxations around the
  exposed cell (:func:`~tabsdc.audit._outer_bounds.relaxed_intervals`, :data:`OUTER_HOPS`),
  which decides the pair when it already misses a level (the exact interval lies within
  it); otherwise the exact interval (the block's polytope in deviations, a kept flow model
  with the respondent's cells held at zero, two furthest flows per exposed cell), and
  where the time limit leaves that open, the missed level when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from time import perf_counter, time
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tabsdc._errors import SolverError
from tabsdc._flows import (
    DOWN,
    LOCAL_ABOVE,
    TOL,
    UP,
    Requirement,
    flow_and_status,
    flow_model,
    flow_reach,
    local_deviation,
)
from tabsdc._network import neighbourhood
from tabsdc._parallel import parallel_map, worker_count
from tabsdc._progress import Deadline, Progress, ProgressReporter, heartbeat
from tabsdc._respondents import Insiders
from tabsdc.audit._block import Block
from tabsdc.audit._intervals import IntervalAttack
from tabsdc.audit._outer_bounds import relaxed_intervals
from tabsdc.solver import HighsModel

#: Cells of the first region grown around a cell (:meth:`~tabsdc.audit._block.Block.grown`)
#: when its neighbourhood holds no certificate; each next region is twice as large, up to
#: :data:`GROWN_LARGEST` and below the cell's block (then the block's kept model, which
#: also refutes). Flows through a hierarchy's subtotals run six or seven relations from
#: their cell, where a neighbourhood holds thousands of cells; a grown region holds such a
#: flow in a few thousand.
GROWN_CELLS = 1024
#: The largest grown region; beyond it the block's kept model.
GROWN_LARGEST = 8 * GROWN_CELLS
#: Whole-block flows solved before their mean time is trusted, and local flows one of them
#: must cost more than for the local regions to be tried first.
MEASURED_SOLVES = 3
LOCAL_TRIES = 4
#: Local flows of each region size (by powers of two) solved with HiGHS's presolve and as
#: many without before the faster way is kept for that size. Presolve pays where a
#: region's flow is long to find (GaussSuppression's pattern of a 21,840-cell table:
#: regions of 4,096 to 8,192 cells in an eighth of the time) and costs where the flow is
#: found at once (the hypercube pattern of the same table: the audit twice as long).
PRESOLVE_TRIALS = 4
#: Radius of the relaxation that refutes a respondent's scenario before any region is
#: grown (in a pattern that exposes cells, most scenarios fail near their cell). Four:
#: on a 4-D table the rows within three hops of the cell, about 900 cells. A set of
#: respondents that fails there is split at the cost of that small LP instead of local
#: and whole-block flows; with two hops (about 90 cells) the requirements of GaussSuppression's
#: pattern of a 21,840-cell table took a fifth longer (docs/performance.md). Fewer hops
#: where more would hold more than :data:`GROWN_LARGEST` cells (the relaxation is solved
#: without a time limit).
RELAXED_HOPS = 4
#: Reaches of the relaxations that bound a failing pair from outside before its exact
#: interval (on a 38,000-cell block the exact one's first solve takes minutes), and the
#: largest relaxation tried.
OUTER_HOPS = (2, 3)
OUTER_CELLS = 1024
#: Requirements below which the attack stays in one process, and the shares of them each
#: worker gets (several, so that a share of costly cells does not hold the others up).
PARALLEL_REQUIREMENTS = 200
CHUNKS_PER_WORKER = 4


def insider_proofs(
    req: Requirement,
    insiders: Insiders | None,
    prove: Callable[[Requirement], np.ndarray | None],
    *,
    suspects: np.ndarray | None = None,
    stop_at_failure: bool = False,
    split: bool = False,
    sides: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[list[np.ndarray], list[Requirement]]:
    """Certificates that ``req`` holds against the outside intruder and every respondent.

    ``prove(r)`` returns the cells a certificate of ``r`` moves (a feasible deviation
    meeting it with ``r.fixed`` held at zero), or None when it finds none. A certificate
    that moves no cell of a group proves ``req`` against that respondent as well, so only
    the groups *every* certificate found so far moves stay open; each open group is proved
    in its own scenario (``fixed`` = its cells), and the certificate found there closes the
    groups it does not move either. Several open groups are first tried at once (one
    certificate moving none of their cells proves them all); so usually one or two flows in
    all, at most one per open group more. With ``split``, a set of groups without a
    certificate is tried in halves, down to single groups: when few of many open groups
    fail (a cell whose every flow runs through hundreds of cells), a few flows close the
    rest instead of one each. With ``sides``, a group of one cell that a known certificate
    of ``req`` moves one way is held in its scenario on the other side only, not at zero:
    a certificate found there closes it too (with the known one, a convex combination
    meets ``req`` with the cell at zero), and when none exists, none exists with the cell
    fixed either.

    Parameters
    ----------
    req : Requirement
        The outsider's requirement (no cells fixed).
    insiders : Insiders or None
        The respondents (None: the outsider only).
    prove : callable
    suspects : ndarray, optional
        The groups every known proof of ``req`` moves (e.g. the checked witnesses meeting
        its level); then ``req`` itself is not proved again.
    stop_at_failure : bool
        Return at the first scenario without a certificate.
    split : bool
        Try the groups a set's scenario fails for in halves (for proofs that only search:
        a router's scenario for many groups at once adds the suppressions that avoid them
        all).
    sides : callable, optional
        ``sides(groups)``: per group, the side (+1 up, -1 down) its one cell may still move
        in a certificate of ``req`` (the other side than a known certificate moves it), 0
        for a group held at zero (:meth:`KnownDeviations.sides`). Only for proofs that are
        flows (``prove`` reads the scenario's ``sides``).

    Returns
    -------
    proofs : list of ndarray
        The certificates found (their cells).
    failed : list of Requirement
        The scenarios ``prove`` found no certificate for (``req`` itself when the outsider's
        requirement fails: then no respondent is examined).

    Examples
    --------
    ``T = x + y + z`` (x, y single-contributor primaries, z another cell; all hidden):
    x moves against y first, which respondent y knows; with y fixed it moves against z.

    >>> from tabsdc._flows import local_flow
    >>> from tabsdc._respondents import insider_groups
    >>> A = sp.csc_array([[-1.0, 1, 1, 1]])  # T, x, y, z
    >>> groups = insider_groups(A, np.array([3.0, 1, 1, 1]), np.array([False, True, True,
    ...                                                                  False]))
    >>> room, w = np.full(4, 9.0), np.array([5.0, 1, 1, 2])
    >>> prove = lambda r: local_flow(A, np.arange(4), r, room, room, w)
    >>> proofs, failed = insider_proofs(Requirement(1, UP, 2.0), groups, prove)
    >>> [p.tolist() for p in proofs], failed
    ([[1, 2], [1, 3]], [])
    """
    proofs: list[np.ndarray] = []
    failed: list[Requirement] = []
    if suspects is None:
        proof = prove(req)
        if proof is None:
            return proofs, [req]
        proofs.append(proof)
        suspects = (insiders.groups_in(proof, req.cell) if insiders is not None
                    else np.zeros(0, dtype=np.int64))
    open_ = np.asarray(suspects)
    sets = [open_] if len(open_) else []
    while sets:
        groups = np.intersect1d(sets.pop(), open_)
        if len(groups) == 0:
            continue
        scenario = _scenario(req, insiders, groups, sides)
        proof = prove(scenario)
        if proof is not None:  # it keeps these groups' cells as asked: they are all closed
            proofs.append(proof)
            open_ = np.setdiff1d(np.intersect1d(open_, insiders.groups_in(proof, req.cell)),
                                 groups)
        elif len(groups) == 1:
            failed.append(scenario)
            if stop_at_failure:
                break
        else:  # in halves, or one group at a time
            parts = np.array_split(groups, 2) if split else np.array_split(groups, len(groups))
            sets.extend(reversed(parts))
    return proofs, failed


def _scenario(req: Requirement, insiders: Insiders, groups: np.ndarray,
              sides: Callable[[np.ndarray], np.ndarray] | None) -> Requirement:
    """``req`` with the cells of ``groups`` fixed (sorted), each held on its group's side
    (``sides``; none: at zero)."""
    members = [insiders.members(int(g)) for g in groups]
    every = np.concatenate(members)
    order = np.argsort(every)
    if sides is None:
        return replace(req, fixed=tuple(every[order].tolist()))
    side = np.repeat(sides(groups), [len(m) for m in members])
    return replace(req, fixed=tuple(every[order].tolist()), sides=tuple(side[order].tolist()))


class KnownDeviations:
    """Deviations known to be feasible, each stretched as far as the bounds allow.

    A flow ``d`` found for one requirement (a certificate) is a direction along which the
    published cells stay as they are: ``a + t d`` is feasible for ``-t_down <= t <= t_up``,
    the steps the bounds allow (as a witness's, :func:`tabsdc.audit._witnesses.witness_bounds`).
    Both ends prove other requirements: any that one of them meets, against every
    respondent whose cells it does not move. :meth:`suspects` reads them, so a flow is
    solved only for what no known deviation proves.

    Parameters
    ----------
    insiders : Insiders
    up, down : ndarray
        Room of every cell up and down (``ub - a``, ``a - lb``; ``inf`` allowed).
    """

    def __init__(self, insiders: Insiders, up: np.ndarray, down: np.ndarray):
        self.insiders, self.up, self.down = insiders, up, down
        self._known: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._through: dict[int, list[int]] = {}
        self._single = np.diff(insiders.starts) == 1  # groups of one cell

    def add(self, cells: np.ndarray, deviation: np.ndarray) -> None:
        """Keep the flow moving ``cells`` (sorted) by ``deviation``, stretched both ways."""
        up, down = self.up[cells], self.down[cells]
        with np.errstate(divide="ignore", invalid="ignore"):
            # at least 1: the flow itself is feasible (a cell it takes to its bound
            # gives a step a rounding error below 1, and the flow would miss its own level)
            t_up = max(1.0, np.min(np.where(deviation > 0, up, down) / np.abs(deviation)))
            t_down = np.min(np.where(deviation > 0, down, up) / np.abs(deviation))
        groups = self.insiders.group[cells]
        groups = np.unique(groups[groups >= 0])
        for step in (t_up, -t_down):
            if step != 0 and not np.isnan(step):
                self._known.append((cells, deviation * step, groups))
                for cell in cells.tolist():
                    self._through.setdefault(cell, []).append(len(self._known) - 1)

    def through(self, cell: int) -> list[np.ndarray]:
        """The cells of each known deviation that moves ``cell``."""
        return [self._known[k][0] for k in self._through.get(cell, ())]

    def clear(self) -> None:
        self._known.clear()
        self._through.clear()

    def suspects(self, req: Requirement, slack: float, usable: np.ndarray | None = None
                 ) -> tuple[np.ndarray | None, list[np.ndarray]]:
        """The groups attacking ``req.cell`` that the known deviations meeting ``req``
        (within ``slack``) all move (None when none meets it), and the cells of those that
        narrow them down (each one taken that leaves fewer groups: the proof's cells).
        ``usable``: a mask of the cells that may move now (a deviation moving another one
        is skipped)."""
        common: np.ndarray | None = None
        used: list[np.ndarray] = []
        for k in self._through.get(req.cell, ()):
            cells, deviation, groups = self._known[k]
            if usable is not None and not usable[cells].all():
                continue
            if req.direction * deviation[np.searchsorted(cells, req.cell)] < req.level - slack:
                continue
            groups = self.insiders.attacking(groups, req.cell)
            if common is None or len(narrower := np.intersect1d(common, groups)) < len(common):
                common = groups if common is None else narrower
                used.append(cells)
                if len(common) == 0:
                    break
        return common, used

    def signs(self, req: Requirement, slack: float) -> tuple[np.ndarray, np.ndarray]:
        """The groups of one cell that known deviations meeting ``req`` (within ``slack``)
        move up, and those they move down (sorted). A group in both is proven against:
        the two deviations' convex combination that leaves its cell at zero is feasible
        and meets ``req``."""
        rising, falling = [], []
        for k in self._through.get(req.cell, ()):
            cells, deviation, _ = self._known[k]
            if req.direction * deviation[np.searchsorted(cells, req.cell)] < req.level - slack:
                continue
            groups = self.insiders.group[cells]
            single = groups >= 0
            single[single] = self._single[groups[single]]
            rising.append(groups[single & (deviation > 0)])
            falling.append(groups[single & (deviation < 0)])
        if not rising:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(rising)), np.unique(np.concatenate(falling))

    def sides(self, req: Requirement, slack: float, groups: np.ndarray) -> np.ndarray:
        """Per group of ``groups``, the side its one cell must keep in a certificate of
        ``req`` for that certificate to prove ``req`` against it together with a known one
        (:meth:`signs`): -1 when known ones move it up, +1 when they move it down, 0 (held
        at zero) when neither or both, or for a group of several cells."""
        rising, falling = self.signs(req, slack)
        up, down = np.isin(groups, rising), np.isin(groups, falling)
        return np.where(up & ~down, -1, np.where(down & ~up, 1, 0))


@dataclass(frozen=True)
class InsiderAttack:
    """The insider attack on a published table (:func:`insider_attack`).

    Attributes
    ----------
    pairs : DataFrame
        One row per failing (respondent, sensitive cell) pair: ``insider`` and ``exposed``
        (cell positions: the respondent's single-contributor primary, the cell it narrows),
        the exposed cell's ``value``, its interval ``lower``/``upper`` over the polytope
        with the respondent's cells fixed, ``lpl``/``upl``/``spl``, ``lower_ok``,
        ``upper_ok``, ``sliding_ok``, ``exact`` and ``status``: ``"optimal"`` (the exact
        interval), ``"outer bound"`` (an interval around the exact one from a relaxation:
        its False verdicts are proven, its True ones are not), ``"no flow"`` (no deviation
        with the respondent's cells fixed moves the cell by its level on a side: that side's
        bound is the level, not reached, and its verdict False; the other side is the
        a-priori bound) or ``"not computed"`` (NaN bounds) when the time limit came first
        or, on a block of more than :data:`GROWN_CELLS` cells, when another pair already
        shows the cell exposed (there an exact interval can take minutes).
    respondents : int
        Respondents (groups of single-contributor cells) with a hidden primary.
    pairs_in_blocks : int
        (respondent, sensitive cell) pairs in one block of hidden cells: the pairs that can
        fail at all.
    requirements : int
        Protection requirements of the sensitive cells examined.
    by_known : int
        Of them, proven against every respondent without a flow of their own: by the
        checked witnesses or by flows found for other requirements.
    certificates : int
        Flows solved (local ones and over whole blocks).
    bounds : int
        LP bounds of the failing pairs' intervals.
    unchecked : int
        Requirements the time limit left unexamined (the attack is then incomplete).
    unexamined : ndarray
        The cells of those requirements (table positions, sorted): their verdict against
        the respondents is open.
    seconds : float
    """

    pairs: pd.DataFrame
    respondents: int
    pairs_in_blocks: int
    requirements: int
    by_known: int
    certificates: int
    bounds: int
    unchecked: int
    seconds: float
    unexamined: np.ndarray

    @property
    def complete(self) -> bool:
        """Every requirement was examined, and every cell with a failing pair left
        unbounded has another pair that shows it exposed (its verdict is settled)."""
        open_ = (self.pairs["status"] == "not computed").to_numpy()
        cells = self.pairs["exposed"].to_numpy()
        return self.unchecked == 0 and bool(np.isin(cells[open_], cells[~open_]).all())

    @property
    def passed(self) -> bool:
        """No respondent narrows another sensitive cell below its levels (and the attack
        is complete)."""
        return self.complete and len(self.pairs) == 0

    def headline(self) -> str:
        """One line for summaries."""
        line = (f"insider attack: {self.respondents:,} single-contributor respondents, "
                f"{self.pairs_in_blocks:,} (respondent, sensitive cell) pairs in one block, "
                f"{len(self.pairs):,} narrowed below their levels")
        if self.unchecked:
            line += f"; time limit: {self.unchecked:,} requirements not examined"
        return line


#: Columns of :attr:`InsiderAttack.pairs`.
PAIR_COLUMNS = ["insider", "exposed", "value", "lower", "upper", "lpl", "upl", "spl",
                "lower_ok", "upper_ok", "sliding_ok", "exact", "status"]


def insider_attack(
    attack: IntervalAttack,
    values: np.ndarray,
    levels: tuple[np.ndarray, np.ndarray, np.ndarray],
    checked: np.ndarray,
    insiders: Insiders,
    *,
    witnesses: sp.sparray | None = None,
    hops: int = 4,
    tol: float = 1e-6,
    unit: float = 1.0,
    deadline: Deadline | None = None,
    progress: Progress | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
) -> InsiderAttack:
    """Attack every sensitive cell in ``checked`` as each respondent of ``insiders``.

    Parameters
    ----------
    attack : IntervalAttack
        The outsider's polytope (its blocks of hidden cells and their LPs).
    values : ndarray
        True values of every cell (the polytope's units).
    levels : (lpl, upl, spl)
        Protection levels of every cell.
    checked : ndarray of bool
        The sensitive hidden cells to examine (those the outsider does not already break).
    insiders : Insiders
    witnesses : sparse matrix (cells x k), optional
        Deviations known to be feasible (checked witnesses times their steps,
        :meth:`tabsdc.audit._witnesses.WitnessBounds.deviations`); certificates are then
        sought within ``hops`` relations of the cell first.
    hops : int
        Radius of those local certificates.
    tol : float
        Relative tolerance of the verdicts (as :func:`tabsdc.audit.audit`'s).
    unit : float
        The table's working unit: ``values`` times ``unit`` are the table's values; the
        pairs are reported in the table's units.
    deadline, progress
        The audit's deadline and progress lines.
    n_jobs, client
        Examine the requirements in processes or on a Dask cluster
        (:func:`tabsdc._parallel.parallel_map`), :data:`CHUNKS_PER_WORKER` shares per
        worker, each with certificates of its own, when there are at least
        :data:`PARALLEL_REQUIREMENTS`. Every pair is proven by a flow or refuted exactly
        either way, so the failing pairs are the same; the flows solved differ.

    Returns
    -------
    InsiderAttack
    """
    start = perf_counter()
    deadline = deadline or Deadline(None)
    values = np.asarray(values, dtype=float)
    lpl, upl, spl = (np.asarray(x, dtype=float) for x in levels)
    slack = tol * np.maximum(1.0, np.abs(values))
    certificates = _Certificates(attack, values, insiders, hops, witnesses is not None,
                                 slack, deadline)
    reqs = _requirements(np.asarray(checked, dtype=bool) & certificates.exposed, lpl, upl,
                         spl, slack)
    suspects = (_witness_suspects(reqs, witnesses, insiders, slack) if witnesses is not None
                else [None] * len(reqs))
    reporter = ProgressReporter(progress, "audit (insider attack)", len(reqs),
                                 unit="requirements")
    if worker_count(n_jobs, client) > 1 and len(reqs) >= PARALLEL_REQUIREMENTS:
        chunks = np.array_split(np.arange(len(reqs)),
                                CHUNKS_PER_WORKER * worker_count(n_jobs, client))
        done = [0]

        def finished(index: int) -> None:
            done[0] += len(chunks[index])
            reporter.update(done[0])

        with heartbeat(progress, f"audit (insider attack): {len(chunks)} shares in parallel",
                       deadline.remaining() if deadline.limited else None, quiet=True):
            outcomes = parallel_map(_examine_chunk, [
                (attack, values, insiders, hops, witnesses is not None,
                 [reqs[k] for k in chunk], [suspects[k] for k in chunk], slack,
                 time() + deadline.remaining() if deadline.limited else None)
                for chunk in chunks],
                n_jobs=n_jobs, client=client, on_result=finished)
    else:
        outcomes = [_examine(certificates, reqs, suspects, slack, deadline, reporter)]
    failed = set().union(*(o.failed for o in outcomes))
    outer: dict[tuple[int, int], tuple[float, float]] = {}
    for o in outcomes:  # a cell's two requirements may lie in two shares
        for pair, (lower, upper) in o.outer.items():
            if not np.isnan(lower):
                outer[pair] = _with_bound(outer.get(pair), DOWN, lower)
            if not np.isnan(upper):
                outer[pair] = _with_bound(outer.get(pair), UP, upper)
    by_known = sum(o.by_known for o in outcomes)
    unexamined = np.unique(np.concatenate([o.unexamined for o in outcomes]))
    unchecked = sum(o.unchecked for o in outcomes)
    reporter.finish(len(reqs) - unchecked, f"{len(failed):,} pairs to bound")
    no_flow = set().union(*(o.no_flow for o in outcomes))
    pairs, bounds = _pair_intervals(attack, certificates.region, values, (lpl, upl, spl),
                                    slack, insiders, sorted(failed), outer, no_flow,
                                    deadline, progress)
    pairs[["value", "lower", "upper", "lpl", "upl", "spl"]] *= unit
    failing = pairs[~(pairs["lower_ok"] & pairs["upper_ok"] & pairs["sliding_ok"]
                      & ~pairs["exact"]) | (pairs["status"] == "not computed")]
    return InsiderAttack(failing.reset_index(drop=True), certificates.respondents,
                         certificates.pairs_in_blocks(checked), len(reqs), by_known,
                         sum(o.flows for o in outcomes), bounds, unchecked,
                         perf_counter() - start, unexamined)


@dataclass(frozen=True)
class _Examined:
    """What examining some requirements found: the failing (group, cell) pairs, the
    outer ``(lower, upper)`` bounds that refuted some of them on a relaxation (NaN on a
    side not refuted there), the (group, cell, direction) scenarios no flow over the whole
    block meets, the requirements proven by known deviations, the flows solved, and the
    requirements (and their cells) the deadline left unexamined."""

    failed: set[tuple[int, int]]
    outer: dict[tuple[int, int], tuple[float, float]]
    no_flow: set[tuple[int, int, int]]
    by_known: int
    flows: int
    unchecked: int
    unexamined: np.ndarray


def _examine(certificates: _Certificates, reqs: list[Requirement],
             suspects: list[np.ndarray | None], slack: np.ndarray, deadline: Deadline,
             reporter: ProgressReporter | None = None) -> _Examined:
    """Each requirement against the respondents the witnesses and the known deviations
    leave open: a certificate per scenario (:func:`insider_proofs`); a scenario without
    one fails its pair."""
    failed: set[tuple[int, int]] = set()
    outer: dict[tuple[int, int], tuple[float, float]] = {}
    no_flow: set[tuple[int, int, int]] = set()
    by_known = unchecked = 0
    known = certificates.known
    for k, req in enumerate(reqs):
        if deadline.expired:
            unchecked = len(reqs) - k
            break
        if reporter is not None:
            reporter.update(k, f"{len(failed):,} pairs fail")
        open_groups = _common(suspects[k], known.suspects(req, slack[req.cell])[0])
        if open_groups is not None and len(open_groups):
            open_groups = np.setdiff1d(open_groups,
                                       np.intersect1d(*known.signs(req, slack[req.cell])))
        if open_groups is not None and len(open_groups) == 0:
            by_known += 1
            continue
        _, scenarios = insider_proofs(
            req, certificates.insiders, certificates.prove, suspects=open_groups, split=True,
            sides=lambda groups, r=req: known.sides(r, slack[r.cell], groups))
        if deadline.expired:  # a flow stopped by the time limit proves nothing
            unchecked = len(reqs) - k
            break
        for scenario in scenarios:
            if scenario.fixed:
                pair = (int(certificates.insiders.group[scenario.fixed[0]]), req.cell)
                failed.add(pair)
                if scenario in certificates.outer:
                    outer[pair] = _with_bound(outer.get(pair), scenario.direction,
                                              certificates.outer[scenario])
                if scenario in certificates.no_flow:
                    no_flow.add((*pair, scenario.direction))
            else:  # its level was raised for the sliding level: every respondent near it
                failed.update((int(g), req.cell) for g in certificates.groups_near(req.cell))
    unexamined = np.unique(np.array([r.cell for r in reqs[len(reqs) - unchecked:]],
                                    dtype=np.int64))
    return _Examined(failed, outer, no_flow, by_known, certificates.n_solves, unchecked,
                     unexamined)


def _with_bound(bounds: tuple[float, float] | None, direction: int, bound: float
                ) -> tuple[float, float]:
    """A pair's outer ``(lower, upper)`` (NaN: not known) with ``bound`` on the side of
    ``direction``."""
    lower, upper = (np.nan, np.nan) if bounds is None else bounds
    return (lower, bound) if direction > 0 else (bound, upper)


def _examine_chunk(task: tuple) -> _Examined:
    """:func:`_examine` on a share of the requirements (a parallel task): its own
    certificates over the attack, and the audit's deadline as a wall-clock time (a share
    that waited for a worker has only what is left of it)."""
    attack, values, insiders, hops, local, reqs, suspects, slack, end = task
    deadline = Deadline(None if end is None else max(0.01, end - time()))  # 0.01: expired
    return _examine(_Certificates(attack, values, insiders, hops, local, slack, deadline), reqs,
                    suspects, slack, deadline)


def _common(first: np.ndarray | None, second: np.ndarray | None) -> np.ndarray | None:
    """The groups both sources of proofs leave open (None: neither has a proof)."""
    if first is None or second is None:
        return second if first is None else first
    return np.intersect1d(first, second)


def _proof_level(level: float, slack: float) -> float:
    """The level a certificate must meet: ``level`` less the verdicts' tolerance
    ``slack`` (the exact interval passes within it), unless that leaves less than
    ``slack``."""
    return level - slack if level > 2 * slack else level


def _requirements(cells: np.ndarray, lpl: np.ndarray, upl: np.ndarray, spl: np.ndarray,
                  slack: np.ndarray) -> list[Requirement]:
    """The requirements whose certificates prove a cell's verdict: upward by
    ``max(upl, spl - lpl)`` (the two together then span ``spl``) and downward by ``lpl``;
    a cell with no level at all must move, upward by ten times its tolerance."""
    out = []
    for j in np.flatnonzero(cells).tolist():
        up = max(upl[j], spl[j] - lpl[j])
        if up <= 0 and lpl[j] <= 0:
            up = 10 * slack[j]
        if up > 0:
            out.append(Requirement(j, UP, float(up)))
        if lpl[j] > 0:
            out.append(Requirement(j, DOWN, float(lpl[j])))
    return out


def _witness_suspects(reqs: list[Requirement], witnesses: sp.sparray, insiders: Insiders,
                      slack: np.ndarray) -> list[np.ndarray | None]:
    """Per requirement, the groups that every witness meeting it moves (None: no witness
    meets it), in sparse products for all requirements at once."""
    if not reqs:
        return []
    D = sp.csr_array(witnesses)
    cells = np.array([r.cell for r in reqs], dtype=np.int64)
    reach = D[cells] * np.array([r.direction for r in reqs], dtype=float)[:, None]
    need = np.array([r.level for r in reqs]) - slack[cells]
    reach = sp.csr_array(reach)
    row = np.repeat(np.arange(len(reqs)), np.diff(reach.indptr))
    meets = sp.csr_array(((reach.data >= need[row]).astype(float), reach.indices,
                          reach.indptr), shape=reach.shape)
    meets.eliminate_zeros()
    count = np.diff(meets.indptr)
    grouped = insiders.order
    membership = sp.csr_array((np.ones(len(grouped)), (insiders.group[grouped], grouped)),
                              shape=(insiders.n_groups, D.shape[0]))
    moves = sp.csr_array((membership @ sp.csr_array(D != 0, dtype=float)) > 0, dtype=float)
    shared = sp.csr_array(meets @ moves.T)
    out: list[np.ndarray | None] = []
    for k in range(len(reqs)):
        if count[k] == 0:
            out.append(None)
            continue
        at = slice(shared.indptr[k], shared.indptr[k + 1])
        groups = shared.indices[at][shared.data[at] >= count[k] - 0.5]
        out.append(insiders.attacking(np.sort(groups), int(cells[k])))
    return out


class _Certificates:
    """Flows moving the fewest respondents' cells on the blocks of an
    :class:`IntervalAttack` (one kept HiGHS model per block), within ``hops`` relations of
    the cell first when ``local`` or on a block of more than
    :data:`~tabsdc._flows.LOCAL_ABOVE` cells."""

    def __init__(self, attack: IntervalAttack, values: np.ndarray, insiders: Insiders,
                 hops: int, local: bool, slack: np.ndarray, deadline: Deadline):
        self.attack, self.insiders, self.hops, self.local = attack, insiders, hops, local
        self.slack = slack
        #: Outer bounds of refuted scenarios: the furthest their cell moves their way
        self.outer: dict[Requirement, float] = {}
        #: Scenarios no flow over the whole block meets within the verdicts' tolerance
        #: (the solver proved it infeasible): their cell misses that level
        self.no_flow: set[Requirement] = set()
        self.deadline = deadline
        hidden = attack.hidden_cells
        n = len(values)
        self.position = np.full(n, -1, dtype=np.int64)
        self.position[hidden] = np.arange(len(hidden))
        self.component = np.full(n, -1, dtype=np.int64)
        self.component[hidden] = attack.component
        a = values[hidden]
        self.up, self.down = attack.ub - a, a - attack.lb
        self.by_column = sp.csc_array(attack.A_hidden)
        self.by_row = sp.csr_array(attack.A_hidden)
        self.sizes = np.bincount(attack.component, minlength=attack.n_components)
        self._grown_at: tuple[int, dict[int, np.ndarray]] = (-1, {})
        # the time flows take, to choose between local regions and the whole block
        self._local_seconds, self._local_solves = 0.0, 0
        # per region size (bit length): seconds and solves without and with presolve
        self._by_size: dict[int, np.ndarray] = {}
        self._whole_seconds: dict[int, float] = {}
        self._whole_solves: dict[int, int] = {}
        #: per cell, its slowest whole-block flow
        self._slowest_whole: dict[int, float] = {}
        self.region = Block(self.by_row, attack.rhs, attack.slack, attack.lb, attack.ub, a)
        # the blocks each respondent's hidden cells lie in
        known = hidden[insiders.group[hidden] >= 0]
        pairs = np.unique(np.column_stack([insiders.group[known], self.component[known]]),
                          axis=0)
        self.group_blocks = pairs
        self.respondents = len(np.unique(pairs[:, 0]))
        per_block = np.bincount(pairs[:, 1], minlength=attack.n_components)
        own = np.zeros(n, dtype=np.int64)
        own[known] = 1
        # a cell is exposed when its block holds a respondent other than its own
        self.exposed = np.zeros(n, dtype=bool)
        self.exposed[hidden] = per_block[attack.component] - own[hidden] > 0
        self._models: dict[int, tuple[np.ndarray, HighsModel]] = {}
        self.n_solves = 0
        room = np.zeros(n), np.zeros(n)
        room[0][hidden], room[1][hidden] = self.up, self.down
        self.known = KnownDeviations(insiders, *room)

    def groups_near(self, cell: int) -> np.ndarray:
        """The respondents with a hidden cell in ``cell``'s block that attack it."""
        groups = self.group_blocks[self.group_blocks[:, 1] == self.component[cell], 0]
        return self.insiders.attacking(groups, cell)

    def pairs_in_blocks(self, checked: np.ndarray) -> int:
        """(respondent, checked cell) pairs in one block, the cell not the respondent's."""
        hidden = self.attack.hidden_cells
        counts = np.bincount(self.component[hidden[checked[hidden]]],
                             minlength=self.attack.n_components)
        own = int((checked & (self.insiders.group >= 0)).sum())
        return int(counts[self.group_blocks[:, 1]].sum()) - own

    def prove(self, req: Requirement) -> np.ndarray | None:
        """The cells of a flow meeting ``req`` (table positions; :meth:`_weights`), or None
        when there is none (over the whole block: exactly) or the deadline came first."""
        if self.deadline.expired:
            return None
        p = int(self.position[req.cell])
        fixed = self.position[np.asarray(req.fixed, dtype=np.int64)]
        sides = req.side_array
        fixed, sides = fixed[fixed >= 0], sides[fixed >= 0]
        # every flow is asked for the level less the verdicts' tolerance (as the witnesses
        # and known deviations meet it): a flow proves the exact verdict, no flow (or a
        # relaxation short of it) refutes it; the flows keep the relations exact, and a
        # float table's residuals, within the additivity tolerance, move a cell's reach far
        # less than that tolerance
        in_block = replace(req, cell=p, fixed=tuple(fixed.tolist()), sides=tuple(sides.tolist()),
                           level=_proof_level(req.level, self.slack[req.cell]))
        block = int(self.component[req.cell])
        if len(fixed) and self.sizes[block] > GROWN_CELLS:
            reach = self._relaxed_reach(in_block)
            if reach is not None:
                self.outer[req] = float(self.region.values[p] + req.direction * reach)
                return None
        found = None
        local = self.local or self.sizes[block] > LOCAL_ABOVE
        if local and not self._whole_is_cheaper(block, req.cell):
            for region in self._regions(req.cell, p, block):
                found = self._local(in_block, region)
                if found is not None or self.deadline.expired:
                    break
        if found is None:
            members, model = self._model(block)
            i = int(np.searchsorted(members, p))
            held = np.searchsorted(members, fixed)
            self.n_solves += 1
            start = perf_counter()
            model.clear_basis()  # the last basis is another scenario's: it can stall for minutes
            moved, status = flow_and_status(
                model, in_block, i, self._weights(members),
                restore=(self.up[p], self.down[p]),
                time_limit=self.deadline.solver_limit(),
                fixed=(held, self.up[fixed], self.down[fixed], sides))
            seconds = perf_counter() - start
            self._whole_seconds[block] = self._whole_seconds.get(block, 0.0) + seconds
            self._whole_solves[block] = self._whole_solves.get(block, 0) + 1
            self._slowest_whole[req.cell] = max(self._slowest_whole.get(req.cell, 0.0),
                                                seconds)
            if moved is None:
                if status == "infeasible" and in_block.level < req.level:
                    self.no_flow.add(req)
                return None
            carrying = np.flatnonzero(moved)
            found = members[carrying], moved[carrying]
        cells = self.attack.hidden_cells[found[0]]
        self.known.add(cells, found[1])
        return cells

    def _regions(self, cell: int, p: int, block: int) -> Iterator[np.ndarray]:
        """The regions a scenario of ``cell`` (block position ``p``) is tried on: the
        cell's neighbourhood within ``hops`` relations, then, each larger than the last and
        smaller than the block, the regions grown around it (:data:`GROWN_CELLS`, doubling
        up to :data:`GROWN_LARGEST`) with the region of the known flows through it
        (:meth:`_carried`) in its place by size. The certificates move many cells (they
        avoid only the respondents'), so that region often holds thousands: on
        GaussSuppression's pattern of a 21,840-cell table, tried before the grown regions
        it took 209 ms a solve where those of 1,024 to 4,096 cells hold most flows in 10
        to 50 ms."""
        near = neighbourhood(self.by_column, self.by_row, p, self.hops)
        yield near
        tried, carried = len(near), self._carried(cell)
        carried_due = tried < len(carried) < self.sizes[block]
        size = GROWN_CELLS
        while size <= GROWN_LARGEST and size < self.sizes[block]:
            if carried_due and len(carried) <= size:
                carried_due, tried = False, len(carried)
                yield carried
            if size > tried:
                yield self._grown(p, size)
            size *= 2
        if carried_due:
            yield carried

    def _grown(self, cell: int, size: int) -> np.ndarray:
        """:meth:`~tabsdc.audit._block.Block.grown` from ``cell``, kept while the scenarios
        of one cell follow each other."""
        if self._grown_at[0] != cell:
            self._grown_at = (cell, {})
        regions = self._grown_at[1]
        if size not in regions:
            regions[size] = self.region.grown(np.array([cell]), size)
        return regions[size]

    def _carried(self, cell: int) -> np.ndarray:
        """The hidden positions of the cells the known flows through ``cell`` move, one
        hop wider (the rows holding them, every hidden cell of those rows): a region that
        holds detours around a respondent's cells. On a cell whose flows spread over
        thousands of cells it holds a scenario's flow where the neighbourhood does not, in
        less time than the grown regions and the block (on a 4-D table's 11,230-cell
        block, 166 s instead of 269 s for one cell's two requirements)."""
        through = self.known.through(cell)
        if not through:
            return np.zeros(0, dtype=np.int64)
        return self.region.hop(np.unique(self.position[np.concatenate(through)]))[1]

    def _relaxed_reach(self, req: Requirement) -> float | None:
        """How far ``req``'s cell moves its way on the relaxation around it when that is
        short of the level (then no flow meets ``req`` in the block either, and the cell
        moves at most that far there: an outer bound), else None. The relaxation: the rows
        within :data:`RELAXED_HOPS` ``- 1`` hops of the cell over every cell they hold, the
        other rows dropped (:meth:`~tabsdc.audit._block.Block.relaxation`), with fewer hops
        where more would hold more than :data:`GROWN_LARGEST` cells
        (:meth:`~tabsdc.audit._block.Block.around`). Solved without a time limit (about a
        thousand cells); a solve that fails only sends the scenario on to the grown regions
        and the block."""
        self.n_solves += 1
        rows, cells = self.region.around(req.cell, RELAXED_HOPS, GROWN_LARGEST)
        model = flow_model(self.by_row[rows][:, cells],
                           *req.held_room(cells, self.up[cells], self.down[cells]))
        reach = flow_reach(model, int(np.searchsorted(cells, req.cell)), req.direction)
        short = reach is not None and reach < req.level - TOL * max(1.0, req.level)
        return reach if short else None

    def _whole_is_cheaper(self, block: int, cell: int) -> bool:
        """Whether the block's kept model has solved a flow (mean of at least
        :data:`MEASURED_SOLVES`) in less time than :data:`LOCAL_TRIES` local flows take,
        and so has every flow of ``cell`` over it: then the local regions are skipped for
        ``cell`` (a re-solve over a block made of many small cycles costs about one local
        flow, and a scenario that fails tries them all). A cell whose flows spread over
        thousands of cells is the exception: on a 4-D table's 11,230-cell block its
        whole-block flows took 15 to 20 s where a grown region of 8,192 cells held one in
        3 s."""
        solves = self._whole_solves.get(block, 0)
        if solves < MEASURED_SOLVES or self._local_solves == 0:
            return False
        tries = LOCAL_TRIES * self._local_seconds / self._local_solves
        return (self._whole_seconds[block] / solves < tries
                and self._slowest_whole.get(cell, 0.0) < tries)

    def _local(self, req: Requirement, cells: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray] | None:
        """:func:`~tabsdc._flows.local_deviation` on the hidden positions ``cells``,
        presolved or not as :meth:`_presolves` chooses (a model solved once)."""
        self.n_solves += 1
        presolve = self._presolves(len(cells))
        start = perf_counter()
        found = local_deviation(self.by_column, cells, req, self.up[cells], self.down[cells],
                                self._weights(cells), self.deadline.solver_limit(),
                                presolve=presolve)
        seconds = perf_counter() - start
        self._local_seconds += seconds
        self._local_solves += 1
        self._by_size[len(cells).bit_length()][:, int(presolve)] += (seconds, 1)
        return found

    def _presolves(self, size: int) -> bool:
        """Whether a local flow over ``size`` cells is presolved: in turn for the first
        :data:`PRESOLVE_TRIALS` flows of that size each way, then the way whose flows of
        that size took less time on average."""
        seconds, solves = self._by_size.setdefault(size.bit_length(), np.zeros((2, 2)))
        if solves.min() < PRESOLVE_TRIALS:
            return bool(solves[1] < solves[0])
        return bool(seconds[1] / solves[1] < seconds[0] / solves[0])

    def _model(self, block: int) -> tuple[np.ndarray, HighsModel]:
        if block not in self._models:
            members = np.flatnonzero(self.attack.component == block)
            sub = self.by_column[:, members].tocsr()
            rows = np.flatnonzero(np.diff(sub.indptr) > 0)
            self._models[block] = (members, flow_model(sub[rows], self.up[members],
                                                       self.down[members]))
        return self._models[block]

    def _weights(self, cells: np.ndarray) -> np.ndarray:
        """The weights of the hidden positions ``cells`` in a certificate's flow: the
        respondents' cells only (:meth:`~tabsdc._respondents.Insiders.weights`). A
        certificate need not be small, only avoid them; with no cost elsewhere HiGHS's
        presolve removes much of a region's model (where :meth:`_presolves` chooses it)
        and the dual simplex
        stops at the first flow moving the fewest of them (on GaussSuppression's pattern
        of a 21,840-cell table, regions of 4,096 to 8,192 cells: a third of the time of
        unit weights). The block's kept model is not presolved: presolving its 38,000
        cells took 0.28 s a solve on a random pattern of a 126,000-cell table, where the
        flows (refutations, mostly) took 0.04 s."""
        return self.insiders.weights(self.attack.hidden_cells[cells], other=0.0)


def _pair_intervals(
    attack: IntervalAttack, region: Block, values: np.ndarray, levels: tuple[np.ndarray, ...],
    slack: np.ndarray, insiders: Insiders, pairs: list[tuple[int, int]],
    outer: dict[tuple[int, int], tuple[float, float]],
    no_flow: set[tuple[int, int, int]], deadline: Deadline,
    progress: Progress | None = None
) -> tuple[pd.DataFrame, int]:
    """The interval of each exposed cell with its respondent's cells fixed, and the
    verdicts: the ``outer`` bounds that refuted the pair (the other side at the a-priori
    bound); on a block of more than :data:`GROWN_CELLS` cells, a level ``no_flow`` proves
    missed (:func:`_no_flow_sides`); else an outer interval on relaxations
    (:func:`_outer_pairs`) where it already misses a level, else the exact one
    (:class:`_DeviationExtremes`, one per block), a pair whose exact interval the time limit
    leaves open decided by its ``no_flow`` side when it has one. On a large block a pair
    whose cell another pair already shows exposed gets no exact interval
    (``"not computed"``)."""
    lpl, upl, spl = levels
    n_pairs = len(pairs)
    group = np.array([g for g, _ in pairs], dtype=np.int64)
    exposed = np.array([j for _, j in pairs], dtype=np.int64)
    position = np.full(len(values), -1, dtype=np.int64)
    position[attack.hidden_cells] = np.arange(len(attack.hidden_cells))
    refuted = np.array([outer.get(pair, (np.nan, np.nan)) for pair in pairs],
                       dtype=float).reshape(n_pairs, 2)
    decided = ~np.isnan(refuted).all(axis=1)
    at = position[exposed]
    a_priori = attack.lb[at], attack.ub[at]
    lower = np.where(np.isnan(refuted[:, 0]), a_priori[0], refuted[:, 0])
    upper = np.where(np.isnan(refuted[:, 1]), a_priori[1], refuted[:, 1])
    lower[~decided] = upper[~decided] = np.nan
    status = np.where(decided, "outer bound", "not computed").astype(object)
    block = attack.component[at] if n_pairs else np.zeros(0, dtype=np.int64)
    missed = _no_flow_sides(pairs, no_flow, values[exposed], lpl[exposed], upl[exposed],
                            spl[exposed], slack[exposed])
    sizes = np.bincount(attack.component, minlength=attack.n_components)
    on_proof = ~decided & ~np.isnan(missed).all(axis=1) & (sizes[block] > GROWN_CELLS)
    _decide_by_no_flow(on_proof, missed, a_priori, lower, upper, status)
    relaxed = status == "not computed"
    lower[relaxed], upper[relaxed], decided[relaxed] = _outer_pairs(
        region, position, levels, slack, insiders, group[relaxed], exposed[relaxed],
        deadline, progress)
    status[relaxed & decided] = "outer bound"
    decided = status != "not computed"
    # on a large block, no exact interval for a pair whose cell another pair shows exposed
    needless = ~decided & np.isin(exposed, exposed[decided]) & (sizes[block] > GROWN_CELLS)
    decided |= needless
    bounds = 0
    reporter = ProgressReporter(progress, "audit (insider pairs, exact intervals)",
                                int((~decided).sum()), unit="pairs")
    for b in np.unique(block[~decided]).tolist():
        if deadline.expired:
            break
        members = np.flatnonzero(attack.component == b)
        polytope = _DeviationExtremes(attack, members, values)
        for g in np.unique(group[(block == b) & ~decided]).tolist():
            if deadline.expired:
                break
            held = _held(insiders, position, g)
            held = np.searchsorted(members, held[attack.component[held] == b])
            at = np.flatnonzero((block == b) & (group == g) & ~decided)
            lo, hi, st = polytope.extremes(
                np.searchsorted(members, position[exposed[at]]), held, deadline)
            lower[at], upper[at], status[at] = lo, hi, st
            bounds += 2 * int(np.sum(st != "not computed"))
            reporter.update(bounds // 2)
    reporter.finish(bounds // 2)
    _decide_by_no_flow((status == "not computed") & ~np.isnan(missed).all(axis=1), missed,
                       a_priori, lower, upper, status)
    a = values[exposed]
    tolerance = slack[exposed]
    computed = status != "not computed"
    lower_ok, upper_ok, sliding_ok, exact = _verdicts(lower, upper, a, lpl[exposed],
                                                      upl[exposed], spl[exposed], tolerance)
    by_proof = status == "no flow"
    lower_ok[by_proof & ~np.isnan(missed[:, 0])] = False
    upper_ok[by_proof & ~np.isnan(missed[:, 1])] = False
    frame = pd.DataFrame({
        "insider": insiders.insider[group] if n_pairs else np.zeros(0, dtype=np.int64),
        "exposed": exposed, "value": a, "lower": lower, "upper": upper,
        "lpl": lpl[exposed], "upl": upl[exposed], "spl": spl[exposed],
        "lower_ok": ~computed | lower_ok, "upper_ok": ~computed | upper_ok,
        "sliding_ok": ~computed | sliding_ok, "exact": computed & exact,
        "status": status,
    }, columns=PAIR_COLUMNS)
    return frame, bounds


class _DeviationExtremes:
    """A block's polytope in deviations ``d = x - a`` from the true values, as a kept flow
    model (:func:`~tabsdc._flows.flow_model`, the relations' additivity slack kept): the
    extremes of some of its cells with a respondent's cells held at their values, a
    furthest flow (:func:`~tabsdc._flows.flow_reach`) per cell and side. Every solve
    starts feasible, at ``d = 0`` whatever cells are held. (The same polytope in values,
    re-solved from the basis of another respondent's scenario, starts infeasible: on a
    block of 38,000 cells that took minutes per solve.)"""

    def __init__(self, attack: IntervalAttack, members: np.ndarray, values: np.ndarray):
        self.a = values[attack.hidden_cells[members]]
        self.up, self.down = attack.ub[members] - self.a, self.a - attack.lb[members]
        sub = attack.A_hidden[:, members].tocsr()
        rows = np.flatnonzero(np.diff(sub.indptr) > 0)
        residual = sub[rows] @ self.a - attack.rhs[rows]
        self.model = flow_model(sub[rows], self.up, self.down,
                                rows=(-attack.slack[rows] - residual,
                                      attack.slack[rows] - residual))

    def extremes(self, columns: np.ndarray, held: np.ndarray, deadline: Deadline
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lower, upper, status)`` of ``columns`` with ``held`` at their values
        (``"not computed"`` where the deadline or a numerically troubled solve left them)."""
        n = len(self.a)
        both = np.concatenate([held, n + held])
        self.model.set_col_bounds(both, 0.0, 0.0)
        reach = np.full((len(columns), 2), np.nan)
        try:
            for k, i in enumerate(columns.tolist()):
                for side, direction in enumerate((DOWN, UP)):
                    if deadline.expired:
                        break
                    self.model.set_time_limit(deadline.solver_limit())
                    furthest = flow_reach(self.model, i, direction)
                    reach[k, side] = np.nan if furthest is None else furthest
        except SolverError:  # numerically troubled: leave the rest uncomputed
            pass
        finally:
            self.model.set_col_bounds(both, 0.0, np.concatenate([self.up[held],
                                                                  self.down[held]]))
        open_ = np.isnan(reach).any(axis=1)
        lower, upper = self.a[columns] - reach[:, 0], self.a[columns] + reach[:, 1]
        lower[open_] = upper[open_] = np.nan
        return lower, upper, np.where(open_, "not computed", "optimal").astype(object)


def _no_flow_sides(pairs: list[tuple[int, int]], no_flow: set[tuple[int, int, int]],
                   a: np.ndarray, lpl: np.ndarray, upl: np.ndarray, spl: np.ndarray,
                   slack: np.ndarray) -> np.ndarray:
    """Per pair, the ``(lower, upper)`` ends its cell cannot reach with the respondent's
    cells fixed (NaN: not proven): ``a - lpl + slack`` when no flow over the block meets
    its downward requirement, ``a + upl - slack`` when none meets its upward one and that
    requirement is ``upl`` (not the sliding level's ``spl - lpl``, which alone proves
    nothing). The exact interval lies strictly within: the verdict on that side fails."""
    missed = np.full((len(pairs), 2), np.nan)
    if not pairs:
        return missed
    down = np.array([(g, j, DOWN) in no_flow for g, j in pairs])
    up = np.array([(g, j, UP) in no_flow for g, j in pairs])
    down &= lpl > 2 * slack
    up &= (upl >= spl - lpl) & (upl > 2 * slack)
    missed[down, 0] = (a - lpl + slack)[down]
    missed[up, 1] = (a + upl - slack)[up]
    return missed


def _decide_by_no_flow(chosen: np.ndarray, missed: np.ndarray,
                       a_priori: tuple[np.ndarray, np.ndarray], lower: np.ndarray,
                       upper: np.ndarray, status: np.ndarray) -> None:
    """Give the ``chosen`` pairs their outer interval from :func:`_no_flow_sides`
    (the a-priori bound on a side not proven) and status ``"no flow"``, in place."""
    lower[chosen] = np.where(np.isnan(missed[:, 0]), a_priori[0], missed[:, 0])[chosen]
    upper[chosen] = np.where(np.isnan(missed[:, 1]), a_priori[1], missed[:, 1])[chosen]
    status[chosen] = "no flow"


def _outer_pairs(
    region: Block, position: np.ndarray, levels: tuple[np.ndarray, ...], slack: np.ndarray,
    insiders: Insiders, group: np.ndarray, exposed: np.ndarray, deadline: Deadline,
    progress: Progress | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outer intervals that decide failing pairs: per exposed cell, relaxations of the
    reaches :data:`OUTER_HOPS` (up to :data:`OUTER_CELLS` cells) with each open
    respondent's cells held. A pair is decided when its outer interval misses a level or
    pins the cell (the exact interval, within it, does too).

    Returns
    -------
    lower, upper, decided : ndarray (pairs,)
        The outer intervals of the decided pairs (NaN elsewhere) and which they are.
    """
    lpl, upl, spl = levels
    lower, upper = np.full(len(group), np.nan), np.full(len(group), np.nan)
    decided = np.zeros(len(group), dtype=bool)
    cells = np.unique(exposed)
    reporter = ProgressReporter(progress, "audit (insider pairs, relaxations)", len(cells),
                                unit="cells")
    for n, j in enumerate(cells.tolist()):
        reporter.update(n, f"{int(decided.sum()):,} of {len(group):,} pairs decided")
        at = np.flatnonzero(exposed == j)
        for hops in OUTER_HOPS:
            if deadline.expired or decided[at].all():
                break
            open_ = at[~decided[at]]
            held = [_held(insiders, position, g) for g in group[open_].tolist()]
            lo, hi, size = relaxed_intervals(region, int(position[j]), hops, held,
                                             max_cells=OUTER_CELLS,
                                             time_left=deadline.solver_limit)
            if size > OUTER_CELLS:
                break
            checks = _verdicts(lo, hi, region.values[position[j]], lpl[j], upl[j], spl[j],
                               slack[j])
            missed = ~np.isnan(lo) & ~np.isnan(hi) & ~(checks[0] & checks[1] & checks[2]
                                                       & ~checks[3])
            lower[open_[missed]], upper[open_[missed]] = lo[missed], hi[missed]
            decided[open_[missed]] = True
    reporter.finish(len(cells), f"{int(decided.sum()):,} of {len(group):,} pairs decided")
    return lower, upper, decided


def _held(insiders: Insiders, position: np.ndarray, group: int) -> np.ndarray:
    """The hidden positions of a respondent's cells (those it holds at their values)."""
    held = position[insiders.members(group)]
    return held[held >= 0]


def _verdicts(lower: np.ndarray, upper: np.ndarray, a: np.ndarray, lpl: np.ndarray,
              upl: np.ndarray, spl: np.ndarray, tolerance: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``lower_ok``, ``upper_ok``, ``sliding_ok`` and ``exact`` of intervals (False where
    a bound is NaN, ``exact`` too)."""
    with np.errstate(invalid="ignore"):
        return (lower <= a - lpl + tolerance, upper >= a + upl - tolerance,
                upper - lower >= spl - tolerance, upper - lower <= tolerance)
