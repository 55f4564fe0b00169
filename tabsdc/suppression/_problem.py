"""What every suppression method receives and returns: one signature for all of them.

A method is a function ``method(problem, options) -> MethodOutcome`` (as networkx's
``flow_func``), looked up by name in :data:`tabsdc.suppression._methods.METHOD_FUNCTIONS`:

* :class:`SuppressionProblem`: the table in its working unit, the requirements of its
  primaries, the costs (in a unit of ordinary size), the cells fixed hidden or published,
  each cell's room down and up (``L = a - lb``, ``U = ub - a``,
  :func:`tabsdc._bounds.capacities`) and the respondents of its
  single-contributor primaries; it builds the attacker and the router a method asks for;
* :class:`MethodOptions`: how the method runs (deadline, progress, the intruder's prior,
  parallel work, the modular method's sub-table limit);
* :class:`MethodOutcome`: the pattern (None when the deadline came before any was
  complete), its statistics, the witnesses for the audit and the certified lower bound.

:func:`suppression_problem` builds the problem once, for :func:`tabsdc.suppression.suppress`
and for the modular method's sub-tables alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from tabsdc._bounds import capacities
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._flows import Requirement
from tabsdc._parallel import alongside, worker_count
from tabsdc._progress import Deadline, Progress
from tabsdc._respondents import Insiders, insider_groups
from tabsdc._table import Table
from tabsdc._units import working_unit
from tabsdc.suppression._attacker import Attacker, requirements
from tabsdc.suppression._bound import BOUND_SECONDS, BOUND_SHARE, LowerBound, lower_bound
from tabsdc.suppression._heuristic import FlowRouter, clean_up, heuristic_pattern
from tabsdc.suppression._optimal import PROVEN_GAP, CutLoopStats

#: Seconds each sub-table of the modular method may take at most.
SUBTABLE_SECONDS = 10.0


@dataclass(frozen=True)
class SuppressionProblem:
    """A table's suppression problem, as every method receives it.

    ``table`` is in its working unit and ``cost`` is the cost of each cell divided by
    ``cost_unit`` (a power of ten, :func:`tabsdc._validation.working_unit`), so that tables
    of 1e-9 and of 1e12 get the pattern the same table gets in ordinary units. ``hops`` is
    the radius of the local neighbourhoods in relations (the table's dimensions, at least
    three: they hold a k-D table's boxes).
    """

    table: Table
    reqs: list[Requirement]
    cost: np.ndarray
    cost_unit: float
    fixed_on: np.ndarray
    fixed_off: np.ndarray
    down: np.ndarray
    up: np.ndarray
    insiders: Insiders | None
    hops: int

    def labels(self, cell: int) -> str:
        """The cell's label for messages."""
        return self.table.cell_labels([cell])[0]

    def attacker(self, deadline: Deadline, *, extra_hops: int = 0) -> Attacker:
        """The attacker LPs of the pattern, against the respondents too."""
        return Attacker(self.table.A, self.down, self.up, deadline, self.hops + extra_hops,
                        insiders=self.insiders)

    def router(self, kind: type = FlowRouter, deadline: Deadline | None = None, *,
               extra_hops: int = 0, **options: Any) -> Any:
        """The least-cost flow router (``kind``: :class:`FlowRouter` or
        :class:`~tabsdc.suppression._network.NetworkRouter`, given ``options``) over the
        cells that may be suppressed."""
        return kind(self.table.A, self.down, self.up, ~self.fixed_off, deadline,
                    self.hops + extra_hops, **options)


@dataclass(frozen=True)
class MethodOptions:
    """How a method runs: ``deadline`` (the whole call's), ``progress``, the intruder's
    prior (``prior``, ``q``: as in :func:`tabsdc.audit.audit`), the processes or Dask
    cluster for independent work (``n_jobs``, ``client``), the seconds each sub-table
    of the modular method may take (``subtable_limit``) and the optimal method's relative
    gap target (``mip_gap``; the default asks for the proof)."""

    deadline: Deadline
    progress: Progress | None = None
    prior: str = "table"
    q: float | None = None
    n_jobs: int | None = 1
    client: Any = None
    subtable_limit: float = SUBTABLE_SECONDS
    mip_gap: float = PROVEN_GAP


@dataclass(frozen=True)
class MethodOutcome:
    """What a method returns: the pattern (every hidden cell; None when the deadline came
    before any protecting pattern was complete), its statistics, the deviations the audit
    checks first (the hypercube method's witnesses, else None) and the certified lower
    bound computed before the search (None: the method bounds its own search)."""

    pattern: np.ndarray | None
    stats: CutLoopStats
    witnesses: sp.csc_array | None = None
    bound: LowerBound | None = None


#: The one signature of the methods.
MethodFunction = Callable[[SuppressionProblem, MethodOptions], MethodOutcome]


def suppression_problem(table: Table, cost: np.ndarray, *, prior: str = "table",
                        q: float | None = None, singletons: bool = True,
                        suppress_totals: bool = True) -> SuppressionProblem:
    """The problem of ``table`` (in its working unit) with the costs ``cost`` (one per
    cell, in the caller's unit; see :func:`tabsdc.suppression.suppress` for the other
    parameters).

    Raises
    ------
    InputError
        A primary whose own a-priori bounds leave less room than its protection level
        (named): no pattern can protect it.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": list("ab"), "value": [10.0, 20.0]})
    >>> table = Table.from_aggregated(cells, ["r"]).with_columns(
    ...     status=["s", "u", "s"], upl=[0.0, 2.0, 0.0], lpl=[0.0, 2.0, 0.0])
    >>> problem = suppression_problem(table, np.array([30.0, 10.0, 20.0]))
    >>> [(r.cell, r.direction, r.level) for r in problem.reqs], problem.cost_unit
    ([(1, 1, 2.0), (1, -1, 2.0)], 1.0)
    """
    cells = table.cells
    status = cells["status"].to_numpy()
    primary = status == "u"
    fixed_on = np.isin(status, HIDDEN_STATUSES)
    fixed_off = (status == "z") & ~fixed_on
    if not suppress_totals:
        fixed_off |= table.total_cells & ~fixed_on
    down, up = capacities(table, prior, q)
    lpl, upl = cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float)
    for need, room, word in ((upl, up, "upper"), (lpl, down, "lower")):
        bad = primary & (need > room * (1 + 1e-9))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"no suppression pattern can protect {table.cell_labels([i])[0]}: its {word} "
                f"protection level {need[i]:g} exceeds what its a-priori bounds allow "
                f"({room[i]:g})")
    insiders = None
    if singletons and "freq" in cells.columns:
        freq = cells["freq"].to_numpy(float)
        insiders = insider_groups(table.A, freq, primary & (freq == 1))
    cost_unit = working_unit(cost)
    return SuppressionProblem(
        table, requirements(primary, lpl, upl), cost / cost_unit, cost_unit, fixed_on,
        fixed_off, down, up, insiders, max(3, len(table.dims)))


def certified_bound(problem: SuppressionProblem, options: MethodOptions, *,
                    extra_hops: int = 0) -> LowerBound:
    """A certified lower bound on the cost of every protecting pattern
    (:func:`tabsdc.suppression._bound.lower_bound`), within ``BOUND_SHARE`` of the time
    left (``BOUND_SECONDS`` without a time limit), for the methods that do not bound their
    own search."""
    return _bound_within(problem, _bound_budget(options.deadline), extra_hops,
                         options.progress)


@contextmanager
def certified_bound_alongside(problem: SuppressionProblem, options: MethodOptions, *,
                              extra_hops: int = 0) -> Iterator[Callable[[], LowerBound]]:
    """:func:`certified_bound`, computed while the method builds its pattern when it has
    more than one process (``options.n_jobs``) or a Dask cluster: in one more process, or a
    task on the cluster, with the same budget counted from now (the method's own work, in
    this process, then loses no time to it). Yields a function returning the bound. With
    one process, or no time left for it (a Ctrl-C, a spent time limit: then the bound
    without LPs), it is computed at once, as :func:`certified_bound`.

    Its progress: a line when it starts and one with its value when it is taken (the lines
    of its rounds stay in its process)."""
    budget = _bound_budget(options.deadline)
    if worker_count(options.n_jobs, options.client) <= 1 or budget.expired:
        bound = _bound_within(problem, budget, extra_hops, options.progress)
        yield lambda: bound
        return
    seconds = budget.remaining()
    report = options.progress or (lambda line: None)
    report(f"lower bound: computed alongside the search, in "
           f"{'a task on the cluster' if options.client is not None else 'another process'}"
           f" (at most {seconds:.3g} s)")
    with alongside(_bound_task, (problem, seconds, extra_hops),
                   client=options.client) as computed:

        def taken() -> LowerBound:
            bound = computed()
            report(f"lower bound: {bound.value * problem.cost_unit:.6g} from {bound.how} "
                   f"({bound.rounds} LP rounds)")
            return bound

        yield taken


def _bound_budget(deadline: Deadline) -> Deadline:
    """The lower bound's deadline: ``BOUND_SHARE`` of the time left, ``BOUND_SECONDS``
    without a time limit."""
    return deadline.share(BOUND_SHARE) if deadline.limited else Deadline(BOUND_SECONDS)


def _bound_within(problem: SuppressionProblem, budget: Deadline, extra_hops: int,
                  progress: Progress | None) -> LowerBound:
    return lower_bound(problem.table.A, problem.reqs,
                       problem.attacker(budget, extra_hops=extra_hops), problem.cost,
                       problem.fixed_on, problem.fixed_off, deadline=budget,
                       progress=progress, unit=problem.cost_unit)


def _bound_task(task: tuple[SuppressionProblem, float, int]) -> LowerBound:
    """:func:`certified_bound` in another process: the problem, the seconds it may take and
    the attacker's extra hops (module level, so that it pickles)."""
    problem, seconds, extra_hops = task
    return _bound_within(problem, Deadline(seconds), extra_hops, None)


def route_and_clean(problem: SuppressionProblem, options: MethodOptions, attacker: Attacker,
                    router: Any, start: np.ndarray, failing: list[Requirement],
                    removable: np.ndarray) -> tuple[np.ndarray, dict] | None:
    """Route the requirements ``failing`` from the pattern ``start``
    (:func:`tabsdc.suppression._heuristic.heuristic_pattern`), then publish again the
    ``removable`` cells no certificate needs (:func:`~tabsdc.suppression._heuristic.clean_up`):
    the pattern and the certificates, or None when the deadline came before the routing
    was complete."""
    pattern, certificates, complete = heuristic_pattern(
        failing, attacker, router, problem.cost, start, problem.labels, options.progress,
        options.deadline)
    if not complete:
        return None
    return clean_up(failing, attacker, problem.cost, pattern, removable, certificates,
                    options.progress, options.deadline), certificates


def no_pattern(deadline: Deadline, *, rounds: int = 0, attacker_solves: int = 0
               ) -> CutLoopStats:
    """The statistics of a search the deadline stopped before any protecting pattern was
    complete."""
    return CutLoopStats("no pattern", np.nan, np.nan, np.nan, rounds, 0, 0, attacker_solves,
                        deadline.elapsed(), time_limited=True)


def pattern_stats(problem: SuppressionProblem, pattern: np.ndarray, deadline: Deadline,
                  attacker: Attacker, *, rounds: int = 0, time_limited: bool = False
                  ) -> CutLoopStats:
    """The statistics of a protecting pattern found without a bound of its own: its cost
    (new suppressions only), ``"feasible"``."""
    total = float(problem.cost @ (pattern & ~problem.fixed_on))
    return CutLoopStats("feasible", total, np.nan, np.nan, rounds, 0, 0, attacker.n_solves,
                        deadline.elapsed(), time_limited=deadline.hit or time_limited)
