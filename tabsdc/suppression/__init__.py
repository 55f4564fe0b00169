"""Complementary cell suppression.

:func:`suppress` chooses the secondary (complementary) cells of least cost so that every
primary cell (status ``u``) is protected in the sense of ``docs/architecture.md`` (lower,
upper protection against the interval attack: "Contracts", protection). Methods:

* ``"optimal"``: master MILP over the binaries with Fischetti-Salazar capacity cuts generated
  from the attacker LPs (:mod:`tabsdc.suppression.optimal`); proven optimal or, under a time
  limit, the best audit-clean pattern with its gap;
* ``"heuristic"``: least-cost deviation flows per failing requirement, then a clean-up pass
  (:mod:`tabsdc.suppression.heuristic`); any linear table;
* ``"network"``: the same with the flows solved as min-cost flows on the table's network
  (:mod:`tabsdc.suppression.network`); two-dimensional tables;
* ``"modular"``: hierarchical tables split into sub-tables protected top-down in waves of
  independent sub-tables (in parallel) with the optimal method, each with its own time
  limit, and backtracking (:mod:`tabsdc.suppression.modular`), then every
  requirement checked (in parallel, :mod:`tabsdc.suppression.checks`) and repaired as a
  whole;
* ``"hypercube"``: for large hierarchical tables, a least-cost hypercube per primary found
  on arrays without an LP (:mod:`tabsdc.suppression.hypercube`), then routing of the few
  requirements no hypercube meets (within a box around the primary first);
* ``"auto"`` (the default): one of these chosen by the table's size and dimensions
  (:func:`choose_method`).

Every method honours ``time_limit`` (total seconds, :class:`tabsdc.progress.Deadline`) and
reports progress in time (:class:`tabsdc.progress.ProgressReporter`).

Every result is checked by :func:`tabsdc.audit.audit` and carries that audit.

A Ctrl-C during the search (:mod:`tabsdc.interrupts`) stops it as the time limit does: the
result is the best protecting pattern found so far, audited, with ``interrupted`` set (or,
with none complete yet, :class:`KeyboardInterrupt` saying so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from tabsdc import interrupts
from tabsdc.audit import audit, insider_groups
from tabsdc.errors import InputError, SolverError
from tabsdc.progress import Deadline, heartbeat, validate_time_limit
from tabsdc.solver import require_highs
from tabsdc.suppression.attacker import UP, Attacker, Requirement, capacities, requirements
from tabsdc.suppression.checks import failing_requirements
from tabsdc.suppression.costs import cell_costs
from tabsdc.suppression.heuristic import FlowRouter, clean_up, heuristic_pattern
from tabsdc.suppression.hypercube import (
    WIDE_COMBINATIONS,
    HypercubeSearch,
    avoid_insiders,
    clean_up_hypercubes,
    hypercube_pattern,
    route_in_boxes,
    uncertified,
    widen_cover,
)
from tabsdc.suppression.modular import (
    SubtableOutcome,
    SubtableTask,
    modular_pattern,
)
from tabsdc.suppression.network import NetworkRouter
from tabsdc.suppression.optimal import CutLoopStats, optimal_pattern
from tabsdc.suppression.result import SuppressionResult
from tabsdc.table import HIDDEN_STATUSES, Table
from tabsdc.tableset import accepts_table_set
from tabsdc.validation import check_choice, in_working_units, validate_table, working_unit

__all__ = ["suppress", "choose_method", "SuppressionResult", "METHODS"]

METHODS = ("auto", "optimal", "heuristic", "network", "modular", "hypercube")

#: ``method="auto"`` runs the optimal method on tables up to this many cells (its incumbent
#: and gap are kept under a time limit), the hypercube method on tables with dimensions above
#: ``AUTO_HYPERCUBE_CELLS`` and the heuristic otherwise (see :func:`choose_method`).
AUTO_OPTIMAL_CELLS = 2000
AUTO_HYPERCUBE_CELLS = 20_000
#: Seconds each sub-table of the modular method may take at most.
SUBTABLE_SECONDS = 10.0
#: Share of the time limit the modular method gives its sub-tables (the rest: the repair).
MODULAR_SHARE = 0.6


def choose_method(table: Table) -> tuple[str, str]:
    """The method ``method="auto"`` runs on ``table``, and why.

    Up to 2,000 cells the optimal method (proves optimality in seconds to minutes there).
    Tables of four or more dimensions (a cross product of hierarchies) above 20,000 cells:
    the hypercube method, which needs no LP per requirement (on the 126,000-cell 4-D
    benchmark the heuristic routes fewer than 10 % of its requirements in 40 minutes, while
    the hypercube method protects it in under a minute; ``docs/large-tables.md``). Otherwise the
    heuristic (any linear table, fewer secondaries than hypercubes; 9 minutes on the
    114,912-cell 3-D benchmark).

    Examples
    --------
    >>> from tabsdc.datasets import load_business_survey
    >>> choose_method(Table.from_aggregated(
    ...     pd.DataFrame({"r": ["a", "b"], "value": [1.0, 2.0]}), ["r"]))[0]
    'optimal'
    """
    n = table.n_cells
    if n <= AUTO_OPTIMAL_CELLS:
        return "optimal", (f"{n:,} cells <= {AUTO_OPTIMAL_CELLS:,}: the optimal method (proven "
                           "optimal, or the best pattern and its gap under a time limit)")
    if len(table.dims) >= 4 and n > AUTO_HYPERCUBE_CELLS:
        return "hypercube", (f"{n:,} cells > {AUTO_HYPERCUBE_CELLS:,} in {len(table.dims)} "
                             "dimensions: the hypercube method (no LP per requirement)")
    return "heuristic", (f"{n:,} cells > {AUTO_OPTIMAL_CELLS:,}: the routing heuristic (local "
                         "flows per requirement, then clean-up)")


@accepts_table_set
def suppress(
    table: Table,
    method: Literal["auto", "optimal", "heuristic", "network", "modular", "hypercube"] = "auto",
    cost: str | np.ndarray = "value",
    *,
    time_limit: float | Deadline | None = None,
    suppress_totals: bool = True,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    singletons: bool = True,
    progress: Callable[[str], None] | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    solver: str = "highs",
    subtable_limit: float | None = None,
) -> SuppressionResult:
    """Choose complementary suppressions protecting every primary cell.

    Parameters
    ----------
    table : Table
        Primary cells have status ``u`` and protection levels ``lpl``/``upl``; cells with
        status ``z`` are never suppressed; cells already ``m`` stay suppressed.
    method : {"auto", "optimal", "heuristic", "network", "modular", "hypercube"}
        ``"auto"`` picks one by the table's size (:func:`choose_method`); the result says
        which and why.
    cost : {"value", "count", "entropy"}, column name or array
        Cost of suppressing a cell: its value (``c = a``), 1, Berg entropy ``log(1 + a)``,
        a column of ``table.cells`` or one number per cell.
    time_limit : float, optional
        Total seconds for the whole search, every method (the modular method gives its
        sub-tables, each at most 10 s, 60 % of it and the repair the rest). On expiry the
        best protecting pattern found so far (status ``"feasible"``, with its gap when a
        bound is known) or, when none is complete yet, status ``"no pattern"`` (not
        audited; every cell of ``result.table`` is withheld, so that writing it out
        publishes nothing). The final audit of a pattern is not counted. A
        :class:`~tabsdc.progress.Deadline` may be passed instead (one deadline shared by
        several calls, or a test's clock). A Ctrl-C during the search ends it the same way
        (:mod:`tabsdc.interrupts`): the best protecting pattern so far, audited, with
        ``result.interrupted`` set; :class:`KeyboardInterrupt` when none is complete.
    suppress_totals : bool
        Allow totals as secondaries.
    prior : {"table", "pq"}, q : float
        The intruder's a-priori knowledge, as in :func:`tabsdc.audit.audit`. Infinite
        bounds are replaced, for the protection model only, by
        ``a +- (1.5 max|a| + max level)`` (the audit of the result uses the true bounds, and
        protection under the narrower bounds implies protection under the wider ones).
    singletons : bool
        Protect against the respondents of single-contributor primaries (``freq == 1``),
        who know their own values: every other primary keeps its protection levels when
        such a value is known (the insider attack, :mod:`tabsdc.audit.insider`; on where
        the table has frequencies). Every method takes these requirements into its own
        search and the result's audit runs the attack.
    progress : callable, optional
        Receives progress lines (one str each): at once, then at least every 10 s during
        routing, clean-up and sub-tables (with done/total, rate and time left), and one per
        round of the optimal method.
    n_jobs : int, optional
        Processes for independent work (the modular method's sub-tables of a wave and its
        check of every requirement after them); ``-1``: one per core. The pattern does not
        depend on it.
    client : dask.distributed.Client, optional
        Run that work on a Dask cluster instead (see :mod:`tabsdc.parallel`).
    solver : {"highs"}
        The methods keep HiGHS models between solves (:func:`tabsdc.solver.require_highs`).
    subtable_limit : float, optional
        Seconds each sub-table of the modular method may take (default 10 s); the sub-tables
        together still take at most 60 % of ``time_limit``.

    Returns
    -------
    SuppressionResult

    Raises
    ------
    InputError
        An unknown method or cost, or a primary that no pattern can protect (named).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table, FrequencyRule, apply_rules
    >>> data = pd.DataFrame({"r": list("AABBBCCC"), "c": list("xyxyyxyy"),
    ...                      "v": [5.0, 6, 7, 8, 9, 10, 11, 12]})
    >>> ruled = apply_rules(Table.from_microdata(data, ["r", "c"], "v"),
    ...                     FrequencyRule(2, level=20)).table
    >>> result = suppress(ruled, cost="count")
    >>> result.method, result.stats.status, int(result.secondary.sum())
    ('optimal', 'optimal', 4)
    """
    check_choice("method", method, METHODS)
    validate_table(table)
    require_highs(solver, "suppression")
    deadline = time_limit if isinstance(time_limit, Deadline) else Deadline(time_limit)
    subtable_limit = validate_time_limit(subtable_limit, "subtable_limit") or SUBTABLE_SECONDS
    # solved in the table's working unit and with costs of ordinary size, so that tables of
    # 1e-9 and of 1e12 get the pattern the same table gets in ordinary units
    original, (table, _) = table, in_working_units(table)
    reported_cost = cell_costs(original, cost)
    cost_unit = working_unit(reported_cost)
    reason = ""
    if method == "auto":
        method, reason = choose_method(table)
        if progress is not None:
            progress(f"method auto: {reason}")
    cells = table.cells
    status = cells["status"].to_numpy()
    primary = status == "u"
    fixed_on = np.isin(status, HIDDEN_STATUSES)
    fixed_off = (status == "z") & ~fixed_on
    if not suppress_totals:
        fixed_off |= table.total_cells & ~fixed_on
    c = reported_cost / cost_unit
    down, up = capacities(table, prior, q)
    lpl, upl = cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float)
    reqs = requirements(primary, lpl, upl)
    labels = _labeller(table)
    _check_own_bounds(primary, lpl, upl, down, up, labels)
    # local neighbourhoods hold a k-D table's boxes; the requirements the hypercube method
    # leaves to routing need one relation more
    hops = max(3, len(table.dims)) + (method == "hypercube")
    insiders = None
    if singletons and "freq" in cells.columns:
        freq = cells["freq"].to_numpy(float)
        insiders = insider_groups(table.A, freq, primary & (freq == 1))
    attacker = Attacker(table.A, down, up, deadline, hops, insiders=insiders)
    router_class = NetworkRouter if method == "network" else FlowRouter
    router = router_class(table.A, down, up, ~fixed_off, deadline, hops)
    pattern: np.ndarray | None
    witnesses = None
    with interrupts.stoppable() as search:
        if not reqs:  # nothing to protect: the given pattern is optimal
            pattern = fixed_on
            stats = CutLoopStats("optimal", 0.0, 0.0, 0.0, 0, 0, 0, 0, deadline.elapsed())
        elif method == "optimal":
            pattern, stats = optimal_pattern(
                table.A, reqs, attacker, router, c, fixed_on, fixed_off, labels,
                deadline=deadline, progress=progress)
        else:
            pattern, stats, witnesses = _routed_pattern(
                table, method, reqs, attacker, router, c, fixed_on, fixed_off, labels,
                deadline, progress, (prior, q), (n_jobs, client), (down, up), subtable_limit)
    if search.interrupted and pattern is None:
        raise KeyboardInterrupt("no protecting pattern was complete")
    stats = replace(stats, objective=stats.objective * cost_unit,
                    bound=stats.bound * cost_unit,
                    time_limited=stats.time_limited or (search.interrupted
                                                        and stats.status != "optimal"))
    if pattern is None:  # fail safe: withhold every cell, so that nothing is published
        return SuppressionResult(
            table=original.with_columns(status=np.where(fixed_on, status, "m")),
            method=method, cost=reported_cost, secondary=pd.Series(False, index=cells.index),
            stats=stats, audit=None, seconds=deadline.elapsed(), reason=reason,
            original=original)
    new_status = np.where(pattern & ~fixed_on, "m", status)
    protected = original.with_columns(status=new_status)
    if search.interrupted and progress is not None:
        progress("interrupted (Ctrl-C): auditing the best pattern found so far")
    with interrupts.unstoppable():
        verdict = audit(protected, prior=prior, q=q, witnesses=witnesses,
                        singletons=singletons, progress=progress, n_jobs=n_jobs,
                        client=client)
    return SuppressionResult(
        table=protected, method=method, cost=reported_cost, secondary=pd.Series(
            pattern & ~fixed_on, index=cells.index), stats=stats, audit=verdict,
        seconds=deadline.elapsed(), reason=reason, original=original, witnesses=witnesses,
        interrupted=search.interrupted)


def _routed_pattern(table, method, reqs, attacker, router, c, fixed_on, fixed_off, labels,
                    deadline, progress, prior_q, parallel, room, subtable_limit):
    """The heuristic, network, modular and hypercube methods: a start pattern (the given
    one, the modular sub-tables' or the hypercubes'), routing of the requirements it fails,
    clean-up (for hypercubes: of the cells no route uses, against the hypercubes). Returns
    the pattern, its statistics and the hypercubes as witnesses for the audit (None for
    the other methods)."""
    subtable_solves = 0
    phase = None
    if method == "hypercube":
        search = HypercubeSearch(table, *room, c, ~fixed_off)
        cover = hypercube_pattern(search, reqs, fixed_on, progress, deadline)
        if not cover.complete:
            return None, CutLoopStats("no pattern", np.nan, np.nan, np.nan, 0, 0, 0, 0,
                                      deadline.elapsed(), time_limited=True), None
        if cover.unmet:  # a wider search, then flows within boxes around the primaries
            wide = HypercubeSearch(table, *room, c, ~fixed_off, every_chain=True,
                                   max_combinations=WIDE_COMBINATIONS)
            with heartbeat(progress, f"routing in boxes: {len(cover.unmet):,} requirements "
                           "no hypercube meets", quiet=True):
                cover = route_in_boxes(wide, table.A, widen_cover(wide, cover), c, deadline)
        # the requirements routed in boxes are proved against the respondents with the rest
        start_pattern, failing = cover.pattern, cover.unmet + [
            Requirement(cell, direction, cover.levels[cell][0 if direction == UP else 1])
            for cell, direction in cover.routes]
        removable = np.zeros(table.n_cells, dtype=bool)
    elif method == "modular":
        phase = deadline.share(MODULAR_SHARE)
        prior, q = prior_q
        start_pattern, modular = modular_pattern(
            table, c, (table.cells["lpl"].to_numpy(float), table.cells["upl"].to_numpy(float)),
            protect_subtable, subtable_limit=subtable_limit, prior=prior, q=q,
            singletons=attacker.insiders is not None, deadline=phase,
            progress=progress, n_jobs=parallel[0], client=parallel[1],
            clock=deadline.clock)
        subtable_solves = modular.solved
        n_jobs, client = parallel
        failing = failing_requirements(attacker, reqs, start_pattern, n_jobs=n_jobs,
                                       client=client, progress=progress)
        removable = ~start_pattern & ~fixed_off
    else:
        start_pattern, failing, removable = fixed_on, reqs, ~fixed_on & ~fixed_off
    pattern, certificates, complete = heuristic_pattern(
        failing, attacker, router, c, start_pattern, labels, progress, deadline)
    if not complete:
        return None, CutLoopStats("no pattern", np.nan, np.nan, np.nan, subtable_solves, 0, 0,
                                  attacker.n_solves, deadline.elapsed(),
                                  time_limited=True), None
    pattern = clean_up(failing, attacker, c, pattern, removable, certificates, progress,
                       deadline)
    witnesses = None
    if method == "hypercube":  # the routes' certificates keep their cells
        keep = np.zeros(table.n_cells, dtype=bool)
        for cells in [*(c for family in certificates.values() for c in family),
                      *cover.routes.values()]:
            keep[cells] = True
        pattern = clean_up_hypercubes(search, cover, pattern, ~fixed_on & ~keep, progress,
                                      deadline)
        witnesses = cover.deviations(table.n_cells)[2]
        # a secondary in no final hypercube and no route protects nothing (a clean-up cut
        # short by the time limit leaves such cells): publish them all at once
        orphans = pattern & ~fixed_on & ~keep & (witnesses.count_nonzero(axis=1) == 0)
        pattern = pattern & ~orphans
        if progress is not None and orphans.any():
            progress(f"clean-up: {int(orphans.sum()):,} secondaries no hypercube or route "
                     "uses published again")
        if attacker.insiders is not None:  # hypercubes clear of the respondents they rely on
            pattern, left = avoid_insiders(search, cover, attacker.insiders, pattern,
                                           progress, deadline)
            pattern, _, complete = heuristic_pattern(left, attacker, router, c, pattern,
                                                     labels, progress, deadline)
            if not complete:
                return None, CutLoopStats("no pattern", np.nan, np.nan, np.nan, 0, 0, 0,
                                          attacker.n_solves, deadline.elapsed(),
                                          time_limited=True), None
            witnesses = cover.deviations(table.n_cells)[2]
        with heartbeat(progress, "certificates: checking the hypercubes", quiet=True):
            unproven = uncertified(table.A, cover, pattern, *room)
        if unproven:  # never expected: the audit would report it too
            raise SolverError(f"{len(unproven)} hypercube certificates do not hold, e.g. "
                              f"{labels(unproven[0].cell)}")
        if progress is not None:
            progress(f"certificates: all {sum(len(c) for c in cover.structures.values()):,} "
                     "hypercubes checked against the relations")
    total = float(c @ (pattern & ~fixed_on))
    return pattern, CutLoopStats("feasible", total, np.nan, np.nan, subtable_solves, 0, 0,
                                 attacker.n_solves, deadline.elapsed(),
                                 time_limited=deadline.hit or (phase is not None and phase.hit)
                                 ), witnesses


def protect_subtable(task: SubtableTask) -> SubtableOutcome:
    """Protect one sub-table of the modular method: the optimal method within
    ``task.seconds``; without a pattern by then, the routing heuristic on the sub-table
    alone, within as long again (module level, so that it runs in worker processes and on
    Dask)."""
    deadline = Deadline(task.seconds, clock=task.clock)
    options = {"prior": task.prior, "q": task.q, "singletons": task.singletons}
    try:
        result = suppress(task.table, "optimal", task.cost, time_limit=deadline, **options)
        seconds = deadline.elapsed()
        how = "optimal" if result.stats.status == "optimal" else "feasible"
        if result.stats.status == "no pattern":
            result = suppress(task.table, "heuristic", task.cost, **options,
                              time_limit=Deadline(task.seconds, clock=task.clock))
            how = "routed"
    except InputError:  # no pattern within its own cells
        return SubtableOutcome(None, "infeasible", deadline.elapsed())
    if result.stats.status == "no pattern":  # its routing ran out of time too (or Ctrl-C)
        return SubtableOutcome(None, "none", seconds)
    return SubtableOutcome(np.asarray(result.suppressed, dtype=bool), how, seconds)


def _check_own_bounds(primary, lpl, upl, down, up, labels) -> None:
    for need, room, word in ((upl, up, "upper"), (lpl, down, "lower")):
        bad = primary & (need > room * (1 + 1e-9))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"no suppression pattern can protect {labels(i)}: its {word} protection level "
                f"{need[i]:g} exceeds what its a-priori bounds allow ({room[i]:g})"
            )


def _labeller(table: Table) -> Callable[[int], str]:
    return lambda i: table.cell_labels([i])[0]
