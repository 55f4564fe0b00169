"""The hypercube method: the phases of :mod:`tabsdc.suppression._hypercube` in order."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tabsdc._errors import SolverError
from tabsdc._hypercubes.insiders import avoid_insiders
from tabsdc._hypercubes.search import WIDE_COMBINATIONS, HypercubeSearch
from tabsdc._progress import heartbeat
from tabsdc.suppression._heuristic import FlowRouter, heuristic_pattern
from tabsdc.suppression._hypercube.boxes import route_in_boxes
from tabsdc.suppression._hypercube.certify import uncertified
from tabsdc.suppression._hypercube.cleanup import clean_up_hypercubes
from tabsdc.suppression._hypercube.greedy import hypercube_pattern, widen_cover
from tabsdc.suppression._problem import (
    MethodOptions,
    MethodOutcome,
    SuppressionProblem,
    certified_bound_alongside,
    no_pattern,
    pattern_stats,
    route_and_clean,
)


def hypercube_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """The hypercube method: a least-cost hypercube per primary (:func:`hypercube_pattern`),
    a wider search and routing within boxes for the requirements no hypercube meets
    (:func:`widen_cover`, :func:`route_in_boxes`, each route proved in its box against
    every respondent it moves), routing on the whole table of what no box holds, clean-up
    of the cells no route uses against the hypercubes (:func:`clean_up_hypercubes`),
    hypercubes clear of the respondents (:func:`avoid_insiders`; in boxes, then on the
    whole table, what none meets) and the check of every certificate
    (:func:`uncertified`). The hypercubes are the witnesses of the audit.

    Local neighbourhoods are one relation wider than the other methods': the requirements
    left to routing are those no box around the primary meets.
    """
    with certified_bound_alongside(problem, options, extra_hops=1) as bound:
        return replace(hypercube_phases(problem, options), bound=bound())


def hypercube_phases(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """The phases of :func:`hypercube_method` without its lower bound (the outcome's
    ``bound`` is None: the caller adds its own)."""
    deadline, progress, labels = options.deadline, options.progress, problem.labels
    table, c, fixed_on, fixed_off = problem.table, problem.cost, problem.fixed_on, \
        problem.fixed_off
    room = (problem.down, problem.up)
    attacker = problem.attacker(deadline, extra_hops=1)
    search = HypercubeSearch(table, *room, c, ~fixed_off)
    cover = hypercube_pattern(search, problem.reqs, fixed_on, progress, deadline)
    if not cover.complete:
        return MethodOutcome(None, no_pattern(deadline))
    wide = HypercubeSearch(table, *room, c, ~fixed_off, every_chain=True,
                           max_combinations=WIDE_COMBINATIONS)
    if cover.unmet:  # a wider search, then flows within boxes around the primaries
        with heartbeat(progress, f"routing in boxes: {len(cover.unmet):,} requirements "
                       "no hypercube meets", quiet=True):
            cover = route_in_boxes(wide, table.A, widen_cover(wide, cover), c, deadline,
                                   insiders=attacker.insiders)
    # the box routes are proved against the respondents in their boxes: what is left
    # (no box holds a flow) is routed on the whole table
    failing = cover.unmet
    router = problem.router(FlowRouter, deadline, extra_hops=1)
    routed = route_and_clean(problem, options, attacker, router, cover.pattern, failing,
                             np.zeros(table.n_cells, dtype=bool))
    if routed is None:
        return MethodOutcome(None, no_pattern(deadline, attacker_solves=attacker.n_solves))
    pattern, certificates = routed
    keep = np.zeros(table.n_cells, dtype=bool)  # the routes' certificates keep their cells
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
        if left:  # flows within boxes first: the whole table's LP is the last resort
            with heartbeat(progress, f"routing in boxes: {len(left):,} requirements no "
                           "hypercube clear of their respondents meets", quiet=True):
                boxed = route_in_boxes(wide, table.A, replace(cover, pattern=pattern,
                                                              unmet=left),
                                       c, deadline, insiders=attacker.insiders)
            pattern, left = boxed.pattern, boxed.unmet
        pattern, _, complete = heuristic_pattern(left, attacker, router, c, pattern,
                                                 labels, progress, deadline)
        if not complete:
            return MethodOutcome(None, no_pattern(deadline,
                                                  attacker_solves=attacker.n_solves))
        witnesses = cover.deviations(table.n_cells)[2]
    with heartbeat(progress, "certificates: checking the hypercubes", quiet=True):
        unproven = uncertified(table.A, cover, pattern, *room)
    if unproven:  # never expected: the audit would report it too
        raise SolverError(f"{len(unproven)} hypercube certificates do not hold, e.g. "
                          f"{labels(unproven[0].cell)}")
    if progress is not None:
        progress(f"certificates: all {sum(len(c) for c in cover.structures.values()):,} "
                 "hypercubes checked against the relations")
    return MethodOutcome(pattern, pattern_stats(problem, pattern, deadline, attacker),
                         witnesses)
