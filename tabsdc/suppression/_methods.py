"""The suppression methods, one function each with one signature, and the table naming them.

Every method is ``method(problem, options) -> MethodOutcome``
(:mod:`tabsdc.suppression._problem`); :func:`tabsdc.suppression.suppress` looks it up in
:data:`METHOD_FUNCTIONS` by name:

* ``"optimal"``: the cut loop (:func:`tabsdc.suppression._optimal.optimal_pattern`);
* ``"guided"``: the hypercube pattern (on tables with dimensions), then, from it with its
  most expensive secondaries published again, routing at costs lowered by the lower
  bound's LP relaxation and clean-up (:func:`tabsdc.suppression._guided.guided_pattern`);
  the cheaper of the two, improved region by region
  (:func:`tabsdc.suppression._neighbourhood.improve_pattern`);
* ``"heuristic"``, ``"network"``: routing of every requirement from the given pattern,
  then clean-up, with the flow LP or the table's network as the router;
* ``"modular"``: the hypercube pattern, then the sub-tables protected wave by wave with the
  optimal method, each within its own time limit (:func:`protect_subtable`), every
  requirement checked and the failing ones routed on the whole table; the cheaper of the
  two patterns;
* ``"hypercube"``: a hypercube per primary, routing of what no hypercube meets, clean-up
  (:func:`tabsdc.suppression._hypercube.hypercube_method`).

The methods other than the optimal one compute a certified lower bound first
(:func:`~tabsdc.suppression._problem.certified_bound`); with more than one process the
routing and hypercube methods compute it beside their own steps and the modular method
beside its routing and clean-up
(:func:`~tabsdc.suppression._problem.certified_bound_alongside`); the guided method needs
its relaxation first, and the optimal method bounds its own search.
"""

from __future__ import annotations

from tabsdc._errors import InputError
from tabsdc._progress import Deadline, seconds_until
from tabsdc.suppression._checks import failing_requirements
from tabsdc.suppression._guided import RestoringRouter, Ruin, guided_pattern, ruin_within
from tabsdc.suppression._heuristic import FlowRouter, heuristic_pattern
from tabsdc.suppression._hypercube import hypercube_method, hypercube_phases
from tabsdc.suppression._modular import (
    SUBTABLE_GAP,
    SubtableOutcome,
    SubtableTask,
    modular_pattern,
    publish_unneeded,
)
from tabsdc.suppression._neighbourhood import (
    REGIONS_WITHOUT_LIMIT,
    improve_pattern,
    kept_witnesses,
)
from tabsdc.suppression._network import NetworkRouter
from tabsdc.suppression._optimal import optimal_pattern
from tabsdc.suppression._problem import (
    MethodFunction,
    MethodOptions,
    MethodOutcome,
    SuppressionProblem,
    certified_bound,
    certified_bound_alongside,
    no_pattern,
    pattern_stats,
    route_and_clean,
    suppression_problem,
)

#: Share of the time the hypercube pattern leaves that the modular method gives its
#: sub-tables (the rest: the check and the repair). At 120 s in one process (cost = value)
#: 0.3 gave 6.42 million on ``4d_5k`` and left a 9,600-cell 3-D table's routing unfinished
#: (the hypercube pattern kept: 86.0 million); 0.2 gave 6.67 and 15.4 million
#: (``docs/performance.md``).
MODULAR_SHARE = 0.2
#: Share of the time the modular method's sub-tables leave that its check of every
#: requirement over the whole pattern gets under a time limit (the requirements not checked
#: by then are routed).
CHECK_SHARE = 0.5
#: Share of a routing's time (the guided method's; the modular method's, of what its check
#: leaves) in which each requirement takes the whole table's flow first
#: (:class:`~tabsdc.suppression._heuristic.FlowRouter`'s ``whole_table_until``; all of it
#: without a time limit), the neighbourhoods' after it. On ``4d_5k`` (120 s) half the
#: guided method's routing so gave 10.1-10.2 million where the neighbourhoods' alone gave
#: 12.5 at cost = value, but 1,983-1,994 against 1,884 at cost = count: the guided method
#: takes them only where the costs differ (``docs/performance.md``).
WHOLE_TABLE_SHARE = 0.5
#: Share of the time left after the hypercube pattern the guided method gives its routing
#: and clean-up (the rest: the neighbourhood search). A routed pattern is worth far more
#: than the search's time: on ``4d_5k`` (cost = value, 120 s) the search from the
#: hypercube pattern ends near 41 million, from the routed one near 14 million.
ROUTING_SHARE = 0.75


def optimal_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """Proven optimal, or under a time limit the best protecting pattern and its gap."""
    deadline = options.deadline
    pattern, stats = optimal_pattern(
        problem.table.A, problem.reqs, problem.attacker(deadline),
        problem.router(FlowRouter, deadline), problem.cost, problem.fixed_on,
        problem.fixed_off, problem.labels, deadline=deadline, progress=options.progress,
        mip_gap=options.mip_gap)
    return MethodOutcome(pattern, stats)


def _routing(problem: SuppressionProblem, options: MethodOptions, router: type
             ) -> MethodOutcome:
    """Every requirement routed from the given pattern, then the clean-up of every cell
    not fixed; with more than one process, the lower bound beside them."""
    with certified_bound_alongside(problem, options) as bound:
        attacker = problem.attacker(options.deadline)
        routed = route_and_clean(problem, options, attacker,
                                 problem.router(router, options.deadline), problem.fixed_on,
                                 problem.reqs, ~problem.fixed_on & ~problem.fixed_off)
        if routed is None:
            return MethodOutcome(None, no_pattern(options.deadline,
                                                  attacker_solves=attacker.n_solves),
                                 bound=bound())
        return MethodOutcome(routed[0], pattern_stats(problem, routed[0], options.deadline,
                                                      attacker), bound=bound())


def guided_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """The hypercube pattern first (on tables with dimensions: a pattern whatever the time
    limit), then, from that pattern with its most expensive secondaries published again
    (as many as its witnesses say the routing has time for:
    :func:`~tabsdc.suppression._guided.ruin_within`; from nothing on a table without
    dimensions), every requirement routed at costs lowered by the lower bound's LP
    relaxation (the whole table's flows first for ``WHOLE_TABLE_SHARE`` of the routing's
    time, unless every cell costs the same) and the clean-up
    (:func:`~tabsdc.suppression._guided.guided_pattern`; the hypercubes still hidden prove
    their requirements without a flow) within
    ``ROUTING_SHARE`` of the time left; the cheaper of the two patterns, improved region by
    region (:func:`~tabsdc.suppression._neighbourhood.improve_pattern`) in the rest of the
    time (without a time limit: ``REGIONS_WITHOUT_LIMIT`` regions at most, so that the
    pattern does not depend on the machine's speed). Never more costly than the hypercube
    method's pattern."""
    deadline, progress = options.deadline, options.progress
    bound = certified_bound(problem, options)
    fallback = hypercube_phases(problem, options) if problem.table.dims else None
    kept = None if fallback is None else fallback.pattern
    witnesses = None if fallback is None else fallback.witnesses
    removable = ~problem.fixed_on & ~problem.fixed_off
    attacker = problem.attacker(deadline)
    attacker.add_witnesses(witnesses)
    routing = deadline.share(ROUTING_SHARE) if deadline.limited else deadline
    ruin = Ruin(problem.fixed_on, 1.0, None) if kept is None else ruin_within(
        kept, problem.cost, removable, attacker.witnesses, problem.reqs, routing.remaining())
    routed = None
    if ruin is None:
        if progress is not None:
            progress("guided: even the smallest share of the hypercube pattern's costliest "
                     "secondaries, published again, leaves more requirements to route than "
                     "the time allows: no routing")
    else:
        if progress is not None and kept is not None:
            progress(f"guided: routing from the hypercube pattern with its {ruin.share:.1%} "
                     "most expensive secondaries published again"
                     + (f" ({ruin.unmet:,} requirements left without a witness)"
                        if ruin.unmet is not None else ""))
        costs = problem.cost[removable]
        costs_differ = len(costs) > 0 and costs.min() < costs.max()
        router = RestoringRouter(
            problem.router(FlowRouter, routing, whole_table_until=routing.share(
                WHOLE_TABLE_SHARE) if costs_differ else None),
            attacker.witnesses, problem.fixed_on if kept is None else kept)
        routed = guided_pattern(problem.reqs, attacker, router,
                                problem.cost, bound.relaxation, ruin.start, removable,
                                problem.labels, progress, routing, abandon=kept is not None)
    if routed is None and kept is None:
        return MethodOutcome(None, no_pattern(deadline, attacker_solves=attacker.n_solves),
                             bound=bound)
    pattern, certificates = routed or (kept, None)
    if routed is None or (kept is not None and problem.cost @ pattern >= problem.cost @ kept):
        if progress is not None and ruin is not None:
            progress("guided: " + ("the routing stopped before its end"
                                   if routed is None else "the routed pattern costs more")
                     + ": the hypercube pattern is kept")
        pattern, certificates = kept, None
    improved, search = improve_pattern(
        problem, pattern, deadline, progress=progress, witnesses=witnesses,
        certificates=certificates,
        max_regions=None if deadline.limited else REGIONS_WITHOUT_LIMIT)
    return MethodOutcome(improved, pattern_stats(problem, improved, deadline, attacker,
                                                 rounds=search.regions,
                                                 time_limited=routing.hit),
                         witnesses=None if witnesses is None
                         else kept_witnesses(witnesses, improved), bound=bound)


def heuristic_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """Routing by least-cost deviation flows (LPs, any linear table), then clean-up."""
    return _routing(problem, options, FlowRouter)


def network_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """Routing by min-cost flows on the table's network (two-dimensional tables), then
    clean-up."""
    return _routing(problem, options, NetworkRouter)


def _seconds_for(task: SubtableTask) -> float | None:
    """``task.seconds``, or less where the wall-clock ``task.until`` comes first (at most
    zero: none left)."""
    left = seconds_until(task.until)
    if left is None:
        return task.seconds
    return left if task.seconds is None else min(task.seconds, left)


def protect_subtable(task: SubtableTask) -> SubtableOutcome:
    """Protect one sub-table of the modular method: the optimal method within
    ``task.seconds`` (and before ``task.until``), stopped within
    :data:`~tabsdc.suppression._modular.SUBTABLE_GAP` of its bound; without a pattern by
    then, routing and clean-up on the sub-table alone, within as long again (and before
    ``task.until``). Module level, so that it runs in worker processes and on Dask."""
    limit = _seconds_for(task)
    if limit is not None and limit <= 0:
        return SubtableOutcome(None, "not started", 0.0)
    deadline = Deadline(limit, clock=task.clock)
    seconds = 0.0
    try:
        problem = suppression_problem(task.table, task.cost, prior=task.prior, q=task.q,
                                      singletons=task.singletons)
        if not problem.reqs:
            return SubtableOutcome(problem.fixed_on, "optimal", 0.0)
        outcome = optimal_method(problem, MethodOptions(deadline, mip_gap=SUBTABLE_GAP))
        seconds = deadline.elapsed()
        if outcome.pattern is not None:
            how = ("optimal" if outcome.stats.status == "optimal" else
                   "near-optimal" if outcome.stats.gap <= SUBTABLE_GAP else "feasible")
            return SubtableOutcome(outcome.pattern, how, seconds)
        limit = _seconds_for(task)
        if limit is not None and limit <= 0:
            return SubtableOutcome(None, "none", seconds)
        again = Deadline(limit, clock=task.clock)
        routed = route_and_clean(problem, MethodOptions(again), problem.attacker(again),
                                 problem.router(FlowRouter, again), problem.fixed_on,
                                 problem.reqs, ~problem.fixed_on & ~problem.fixed_off)
    except InputError:  # no pattern within its own cells
        return SubtableOutcome(None, "infeasible", deadline.elapsed())
    if routed is None:  # its routing ran out of time too (or Ctrl-C)
        return SubtableOutcome(None, "none", seconds)
    return SubtableOutcome(routed[0], "routed", seconds)


def modular_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """The hypercube pattern first (a pattern whatever the time limit), then the sub-tables
    protected wave by wave by the optimal method within ``MODULAR_SHARE`` of the time left
    (each at most ``options.subtable_limit`` seconds, less under a time limit so that every
    sub-table starts: :func:`~tabsdc.suppression._modular.modular_pattern`), then every
    requirement checked on the whole table and the failing ones routed over the whole
    table's flows (under a time limit: ``CHECK_SHARE`` and ``WHOLE_TABLE_SHARE``); the
    clean-up publishes again the routed cells those requirements do not need
    (:func:`~tabsdc.suppression._modular.publish_unneeded`). The hypercube pattern is kept
    when the routing does not end in time or costs more: never more costly than the
    hypercube method's pattern. The sub-tables and the check use every process; the lower
    bound is computed beside the routing and the clean-up, which use one."""
    deadline, table, progress = options.deadline, problem.table, options.progress
    fallback = hypercube_phases(problem, options)
    attacker = problem.attacker(deadline)
    phase = deadline.share(MODULAR_SHARE)
    start, modular = modular_pattern(
        table, problem.cost, (table.cells["lpl"].to_numpy(float),
                              table.cells["upl"].to_numpy(float)),
        protect_subtable, subtable_limit=options.subtable_limit, prior=options.prior,
        q=options.q, singletons=problem.insiders is not None, deadline=phase,
        progress=progress, n_jobs=options.n_jobs, client=options.client,
        clock=deadline.clock)
    failing = failing_requirements(problem.attacker(deadline.share(CHECK_SHARE)),
                                   problem.reqs, start, n_jobs=options.n_jobs,
                                   client=options.client, progress=progress)
    with certified_bound_alongside(problem, options) as bound:
        router = problem.router(FlowRouter, deadline,
                                whole_table_until=deadline.share(WHOLE_TABLE_SHARE))
        routed, _, complete = heuristic_pattern(
            failing, attacker, router, problem.cost, start, problem.labels, progress,
            deadline)
        pattern = None if not complete else publish_unneeded(
            failing, attacker, problem.cost, routed, routed & ~start & ~problem.fixed_off,
            progress=progress, deadline=deadline)
        kept = fallback.pattern
        if kept is not None and (pattern is None
                                 or problem.cost @ pattern >= problem.cost @ kept):
            if progress is not None:
                progress("modular: " + ("the routing stopped before its end"
                                        if pattern is None else "the pattern costs more")
                         + ": the hypercube pattern is kept")
            return MethodOutcome(kept, pattern_stats(problem, kept, deadline, attacker,
                                                     rounds=modular.solved,
                                                     time_limited=phase.hit),
                                 witnesses=fallback.witnesses, bound=bound())
        if pattern is None:
            return MethodOutcome(None, no_pattern(deadline, rounds=modular.solved,
                                                  attacker_solves=attacker.n_solves),
                                 bound=bound())
        return MethodOutcome(pattern, pattern_stats(problem, pattern, deadline, attacker,
                                                    rounds=modular.solved,
                                                    time_limited=phase.hit), bound=bound())


#: The methods by name (``method="auto"`` chooses one of them,
#: :func:`tabsdc.suppression.choose_method`).
METHOD_FUNCTIONS: dict[str, MethodFunction] = {
    "optimal": optimal_method,
    "guided": guided_method,
    "heuristic": heuristic_method,
    "network": network_method,
    "modular": modular_method,
    "hypercube": hypercube_method,
}
