"""A fast heuristic for complementary suppression on any linear table.

For every protection requirement that the current pattern fails, solve one LP that routes the
required deviation through the table at least cost: ``min sum_j w_j (p_j + q_j)`` over
``A (p - q) = 0``, ``0 <= p <= U``, ``0 <= q <= L`` with the primary's deviation fixed at its
protection level; ``w_j = c_j / level`` for published cells (the LP relaxation of "suppress j
when it carries deviation") and almost nothing for cells already suppressed. Every cell that
carries deviation is suppressed; the requirement then holds because the flow itself is an
attack of that size. Requirements are taken largest level first.

A clean-up pass then tries to publish secondaries again, most expensive first: a secondary
is dropped when every requirement whose certificate (the attack that proved it) uses it can
still be met without it. This is sdcTable's SIMPLEHEURISTIC idea (iterated attacker LPs),
with cost-weighted flows instead of single cells and the clean-up on certificates.

Insider respondents. When the attacker knows the respondents of single-contributor
primaries (:class:`~tabsdc.suppression._attacker.Attacker`'s ``insiders``), a requirement is
met when certificates prove it against the outside intruder and against every respondent:
a certificate that moves none of a respondent's cells proves it against that respondent
too, and each respondent every certificate moves gets its own scenario, its cells held
fixed (:func:`tabsdc.audit.insider_proofs`). A scenario without a certificate is routed
like a requirement, with those cells fixed; the clean-up keeps a cell when any of the
certificates cannot be renewed without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

import tabsdc.suppression._attacker as attacker_module
from tabsdc._errors import InputError
from tabsdc._flows import Requirement, flow_and_status, flow_model, local_flow
from tabsdc._network import neighbourhood
from tabsdc._progress import Deadline, ProgressReporter, format_seconds
from tabsdc._respondents import Insiders
from tabsdc.suppression._attacker import Attacker

#: Relations beyond ``hops`` a route is sought within before the whole table's LP, while
#: the wider neighbourhood has at most ``WIDER_CELLS`` cells (on a 10^6-cell 4-D table six
#: relations hold 213,484 cells, whose LP takes minutes).
WIDER_HOPS = 2
WIDER_CELLS = 50_000
#: A radius below the widest is skipped once it has been tried ``SKIP_AFTER`` times and
#: held a flow in fewer than ``SKIP_BELOW`` of them, and the next radius has been tried as
#: often (it is not too wide for a local LP on this table): the wider neighbourhood holds
#: every flow the narrower one does, at no more cost (its LP has more columns), so skipping
#: saves the narrow LPs that fail. On ``4d_20k`` (cost = value) four relations held 18 of
#: 601 flows, each failure as long as a flow found within five relations; skipped, the
#: routing took 0.83 times as long (``docs/performance.md``).
SKIP_AFTER = 20
SKIP_BELOW = 0.5
#: A routing that may be abandoned (``heuristic_pattern(abandon=True)``: the guided method,
#: which holds a pattern already) stops once ``ABANDON_AFTER`` of its time has passed if,
#: at its rate so far, the requirements left would take more than ``ABANDON_FACTOR`` times
#: the time left. Routing speeds up as the pattern fills (on ``4d_5k``, cost = value, from
#: 7 to 55 requirements per second: 58 s in all, where 12 s into it the rate foresaw 3
#: minutes), so the factor is generous; on ``4d_20k`` it ran at 7-12 per second throughout,
#: 11,720 requirements for two minutes (``docs/performance.md``).
ABANDON_AFTER = 0.25
ABANDON_FACTOR = 6.0
#: Seconds a whole table's flow may take where a faster way exists: the router's
#: ``whole_table_until`` stops taking the whole table's flow first once one has taken
#: longer, and the guided method's :class:`~tabsdc.suppression._guided.RestoringRouter`
#: hides a witness again instead (on ``4d_5k`` they take 0.2-0.5 s, on ``4d_20k`` 1.6-25 s:
#: ``docs/performance.md``).
WHOLE_TABLE_SECONDS = 2.0


class FlowRouter:
    """The least-cost deviation flow LP, kept in HiGHS and re-solved per requirement.

    On tables with more than :data:`~tabsdc.suppression._attacker.LOCAL_ABOVE` cells a
    requirement is first routed within the cell's neighbourhood (cells within ``hops``
    relations of it, the table's number of dimensions and at least three; every other cell
    held at zero, so a local flow is a flow of the whole table), then within up to
    :data:`WIDER_HOPS` relations more; only when no local flow exists is the LP over the
    whole table solved. A protecting structure of a hierarchical table almost always lies
    that close, and the local LP has thousands of columns, not 1e5. (On the 21,840-cell
    4-D benchmark table a flow needs a fifth relation for about a third of the
    requirements and a sixth for the rest: within those, a route takes 0.02-0.2 s, the
    whole table's LP 1.4 s.) A radius that rarely holds a flow is skipped (see
    :data:`SKIP_BELOW`).

    ``whole_table_until``: on a table routed locally, until that deadline expires, every
    requirement is routed over the whole table's LP at once (each within
    :data:`WHOLE_TABLE_SECONDS`, a flow not proven the cheapest by then not taken; once one
    takes longer, locally first again for good), then locally first as above. A local flow is
    the cheapest within its neighbourhood, not through the cells hidden anywhere in the
    table: from a pattern that already holds most of the structure (the modular method's
    sub-tables), routing the 99 requirements they leave failing on ``4d_5k`` locally added
    7.8 million (cost = value), over the whole table 1.4 million, in 37 s instead of 5 s
    (``docs/performance.md``).
    """

    def __init__(self, A: sp.sparray, down: np.ndarray, up: np.ndarray, movable: np.ndarray,
                 deadline: Deadline | None = None, hops: int = 3, *,
                 whole_table_until: Deadline | None = None):
        self.deadline = deadline or Deadline(None)
        self.whole_table_until = whole_table_until
        self.hops = hops
        self.by_row = sp.csr_array(A)
        self.by_column = sp.csc_array(A)
        self.n = self.by_row.shape[1]
        self.down = np.where(movable, down, 0.0)
        self.up = np.where(movable, up, 0.0)
        self.local = self.n > attacker_module.LOCAL_ABOVE
        self.model = flow_model(self.by_row, self.up, self.down)
        #: Per radius (relations beyond ``hops``): local LPs solved, and those holding a flow.
        self.tried = np.zeros(WIDER_HOPS + 1, dtype=np.int64)
        self.held = np.zeros(WIDER_HOPS + 1, dtype=np.int64)

    def route(
        self, req: Requirement, cost: np.ndarray, suppressed: np.ndarray, *,
        whole_table: bool = True,
    ) -> np.ndarray | None:
        """Cells carrying the cheapest deviation of ``req.level`` through ``req.cell``,
        the requirement's ``fixed`` cells held at zero (None when no such flow exists, or
        when the deadline has expired: building a neighbourhood's model alone can take
        seconds on a large table). ``whole_table=False``: on a table routed locally, None
        when no neighbourhood holds a flow (the whole table's LP is not solved)."""
        if self.deadline.expired:
            return None
        w = _route_weights(req, cost, suppressed)
        if self.whole_first:
            clock = self.deadline.clock
            started = clock()
            carries = self.route_whole(req, cost, suppressed, w, seconds=min(
                self.whole_table_until.remaining(), WHOLE_TABLE_SECONDS))
            if carries is None or clock() - started > WHOLE_TABLE_SECONDS:
                self.whole_table_until = None  # too slow here: the neighbourhoods first
            if carries is not None or self.deadline.expired:
                return carries
        if self.local:
            cells = np.zeros(0, dtype=np.int64)
            for extra in range(WIDER_HOPS + 1):
                if extra < WIDER_HOPS and self._rarely_holds(extra):
                    continue
                hops = self.hops + extra
                wider = neighbourhood(self.by_column, self.by_row, req.cell, hops)
                if len(wider) == len(cells) or (extra and len(wider) > WIDER_CELLS):
                    break  # its whole component already, or too wide for a local LP
                cells = wider
                carrying = local_flow(self.by_column, cells, req, self.up[cells],
                                      self.down[cells], w[cells], self.deadline.solver_limit())
                self.tried[extra] += 1
                if carrying is not None:
                    self.held[extra] += 1
                    carries = np.zeros(self.n, dtype=bool)
                    carries[carrying] = True
                    return carries
                if self.deadline.expired:  # HiGHS sets up the whole table's LP for a second
                    return None
            if not whole_table:
                return None
        return self.route_whole(req, cost, suppressed, w)

    @property
    def whole_first(self) -> bool:
        """Whether the next route takes the whole table's flow first: a table routed
        locally, ``whole_table_until`` not expired, and no such flow too slow yet."""
        return (self.local and self.whole_table_until is not None
                and not self.whole_table_until.expired)

    def _rarely_holds(self, extra: int) -> bool:
        """The radius ``hops + extra`` has held a flow in fewer than :data:`SKIP_BELOW` of
        at least :data:`SKIP_AFTER` tries, and the next one has been tried as often."""
        return bool(min(self.tried[extra], self.tried[extra + 1]) >= SKIP_AFTER
                    and self.held[extra] < SKIP_BELOW * self.tried[extra])

    def route_whole(self, req: Requirement, cost: np.ndarray, suppressed: np.ndarray,
                    w: np.ndarray | None = None, *, seconds: float | None = None
                    ) -> np.ndarray | None:
        """:meth:`route` over the whole table's LP alone (``w``: the route's weights when
        the caller has them; ``seconds``: at most that long, None when not solved to
        optimality by then, so that the route does not depend on the machine's speed)."""
        w = _route_weights(req, cost, suppressed) if w is None else w
        i = req.cell
        fixed = np.asarray(req.fixed, dtype=np.int64)
        moved, status = flow_and_status(
            self.model, req, i, w, restore=(self.up[i], self.down[i]),
            time_limit=self.deadline.solver_limit(seconds),
            fixed=(fixed, self.up[fixed], self.down[fixed]))
        if moved is None or (seconds is not None and status != "optimal"):
            return None
        return moved != 0


def _route_weights(req: Requirement, cost: np.ndarray, suppressed: np.ndarray) -> np.ndarray:
    """Each cell's cost per unit of the requirement's level in a route: its cost, or next
    to nothing (a millionth of the largest cost) when it is suppressed already."""
    scale = max(float(np.max(cost, initial=0.0)), 1.0)
    return np.where(suppressed, 1e-6 * scale, cost) / req.level


def heuristic_pattern(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    router: FlowRouter,
    cost: np.ndarray,
    suppressed: np.ndarray,
    labels: Callable[[int], str],
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    abandon: bool = False,
) -> tuple[np.ndarray, dict[int, list[np.ndarray]], bool]:
    """Extend ``suppressed`` until every requirement holds.

    Returns the pattern, per requirement (by position in ``reqs``) the cells of the
    least-deviation attacks that certify it (one array each: against the outside intruder
    and, with respondents, those that prove it against each of them,
    :meth:`~tabsdc.suppression._attacker.Attacker.proof`), and whether every requirement was
    routed (False: ``deadline`` expired first, or with ``abandon`` its rate said it would
    not finish in time (:func:`hopeless`), and the pattern protects only the requirements
    with certificates).
    """
    suppressed = suppressed.copy()
    certificates: dict[int, list[np.ndarray]] = {}
    order = sorted(range(len(reqs)), key=lambda k: -reqs[k].level)
    attacker.set_pattern(suppressed)
    reporter = ProgressReporter(progress, "routing", len(order), unit="requirements")

    def route(scenario: Requirement) -> np.ndarray | None:
        carries = router.route(scenario, cost, suppressed)
        if carries is None:
            return None
        suppressed[carries] = True
        attacker.set_pattern(suppressed)
        return np.flatnonzero(carries)

    judged_from = (0, 0.0)  # the rate is judged from the end of the whole table's flows
    for done, k in enumerate(order):
        if deadline is not None and deadline.expired:
            reporter.finish(done, deadline.why)
            return suppressed, certificates, False
        if abandon and deadline is not None:
            if router.whole_first:
                judged_from = (done, deadline.elapsed())
            elif why := hopeless(done, len(order), deadline, since=judged_from):
                reporter.finish(done, why)
                return suppressed, certificates, False
        reporter.update(done, f"{int(suppressed.sum()):,} cells suppressed")
        # (on large tables certificates are sought locally: routing makes sure)
        proof, failed = attacker.proof(reqs[k], route)
        if failed is not None and deadline is not None and deadline.expired:
            reporter.finish(done, deadline.why)
            return suppressed, certificates, False
        if failed is not None:
            raise InputError(_unprotectable(failed, labels, attacker.insiders))
        certificates[k] = proof
    reporter.finish(len(order), f"{int(suppressed.sum()):,} cells suppressed")
    return suppressed, certificates, True


def hopeless(done: int, total: int, deadline: Deadline,
             since: tuple[int, float] = (0, 0.0)) -> str | None:
    """Why a routing that has routed ``done`` of ``total`` requirements within
    ``deadline`` will not finish in it (see :data:`ABANDON_FACTOR`), or None. ``since``:
    the requirements done and the seconds elapsed when the rate began to count (the end of
    the whole table's flows first, which are slower: :class:`FlowRouter`), and
    :data:`ABANDON_AFTER` counts from then too.

    Examples
    --------
    >>> from tabsdc._progress import Deadline
    >>> clock = iter([0.0, 30.0, 30.0, 30.0]).__next__
    >>> hopeless(250, 11_720, Deadline(120.0, clock=clock))
    'abandoned: at 8.33/s, 11,470 requirements left would take 22 min 56 s (1 min 30 s left)'
    >>> clock = iter([0.0, 30.0, 30.0, 30.0]).__next__
    >>> hopeless(250, 11_720, Deadline(120.0, clock=clock), since=(100, 20.0)) is None
    True
    """
    if not deadline.limited:
        return None
    elapsed, left = deadline.elapsed() - since[1], deadline.remaining()
    if elapsed < ABANDON_AFTER * deadline.seconds:
        return None
    rate = (done - since[0]) / elapsed if elapsed > 0 else 0.0
    need = (total - done) / rate if rate > 0 else math.inf
    if need <= ABANDON_FACTOR * left:
        return None
    return (f"abandoned: at {rate:.3g}/s, {total - done:,} requirements left would take "
            f"{format_seconds(need)} ({format_seconds(left)} left)")


def _unprotectable(req: Requirement, labels: Callable[[int], str],
                   insiders: Insiders | None) -> str:
    """Why no pattern protects ``req`` (a scenario: against the respondent it names)."""
    against = ""
    if req.fixed and insiders is not None:
        against = (" against the respondent of "
                   f"{labels(int(insiders.insider[insiders.group[req.fixed[0]]]))}, who knows "
                   "its own value")
    return (f"no suppression pattern can protect {labels(req.cell)}{against}: its "
            f"{'upper' if req.direction > 0 else 'lower'} protection level {req.level:g} "
            "exceeds what the table's relations and a-priori bounds allow")


def clean_up(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    cost: np.ndarray,
    suppressed: np.ndarray,
    removable: np.ndarray,
    certificates: dict[int, list[np.ndarray]],
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> np.ndarray:
    """Publish again every removable suppressed cell that no requirement needs.

    Every step keeps the pattern protecting, so when ``deadline`` expires the pass stops
    and the pattern so far is returned. ``certificates`` is updated in place: afterwards it
    holds certificates of every requirement under the returned pattern.

    On large tables only local attacks are tried (a cell stays unless a local attack still
    proves every requirement), which keeps each step small and is always safe.
    A cell no certificate uses is dropped at once; otherwise the requirements whose
    certificates use it are re-proved without it (keeping their certificates that do not
    use it: against the respondents, only those every remaining certificate moves need a
    new one), and it stays when one of them fails.
    """
    suppressed = suppressed.copy()
    users: dict[int, set[int]] = {}
    for k, family in certificates.items():
        for j in np.unique(np.concatenate(family)).tolist():
            users.setdefault(j, set()).add(k)
    unused = removable & suppressed
    unused[list(users)] = False
    suppressed[unused] = False
    candidates = np.flatnonzero(suppressed & removable)
    reporter = ProgressReporter(progress, "clean-up", len(candidates), unit="secondaries tried")
    done = 0
    for done, j in enumerate(candidates[np.argsort(-cost[candidates], kind="stable")]):
        if deadline is not None and deadline.expired:
            break
        reporter.update(done)
        suppressed[j] = False
        attacker.set_pattern(suppressed)
        renewed = {}
        for k in sorted(users.get(int(j), ())):
            family, _ = attacker.proof(reqs[k], known=[cells for cells in certificates[k]
                                                        if j not in cells])
            if family is None:
                break
            renewed[k] = family
        else:
            for k, family in renewed.items():
                for cell in np.unique(np.concatenate(certificates[k])).tolist():
                    users[cell].discard(k)
                for cell in np.unique(np.concatenate(family)).tolist():
                    users.setdefault(cell, set()).add(k)
                certificates[k] = family
            continue
        suppressed[j] = True
    else:
        done = len(candidates)
    reporter.finish(done, deadline.why if done < len(candidates) and deadline is not None
                    else "")
    attacker.set_pattern(suppressed)
    return suppressed
