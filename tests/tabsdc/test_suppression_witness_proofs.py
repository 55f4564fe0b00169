"""Certificates read off the hypercube method's witnesses.

A requirement the witnesses "prove" is checked by an attacker written here with
``scipy.optimize.linprog`` (:func:`linprog_reach`): how far the outside intruder can move
the cell, and every respondent a witness of the family does not move, its
single-contributor cells read from the records and held at their values.
"""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import tabsdc.suppression._guided as guided
import tabsdc.suppression._heuristic as heuristic
from tabsdc._progress import Deadline
from tabsdc.suppression import suppress
from tabsdc.suppression._guided import ruined
from tabsdc.suppression._hypercube import hypercube_phases
from tabsdc.suppression._neighbourhood import improve_pattern
from tabsdc.suppression._problem import MethodOptions
from tabsdc.suppression._witness_proofs import Witnesses
from tests.conftest import examples
from tests.tabsdc.test_insider import contributions, independent_insider_failures, survey
from tests.tabsdc.test_suppression_guided import linprog_exposed
from tests.tabsdc.test_suppression_neighbourhood import check_search, problem_of, published


def linprog_reach(problem, pattern: np.ndarray, fixed: list[int], cell: int,
                  direction: int) -> float:
    """How far cell ``cell`` moves in ``direction`` over ``A d = 0``, the published cells
    and ``fixed`` at their values, every other hidden cell within its a-priori room
    (``inf``: without end)."""
    free = pattern.copy()
    free[fixed] = False
    columns = np.flatnonzero(free)
    if cell not in columns:
        return 0.0
    A = problem.table.A.toarray()[:, columns]
    res = linprog(-direction * (columns == cell).astype(float), A_eq=A,
                  b_eq=np.zeros(A.shape[0]), method="highs",
                  bounds=np.column_stack([-problem.down[columns], problem.up[columns]]))
    assert res.status in (0, 3)
    return np.inf if res.status == 3 else -res.fun


def hypercube_start(table, cost):
    """The problem, the hypercube pattern and its witnesses."""
    problem = problem_of(table, cost)
    outcome = hypercube_phases(problem, MethodOptions(Deadline(None)))
    return problem, outcome.pattern, outcome.witnesses


@settings(max_examples=examples(3, 10), deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from(["value", "count"]),
       published_share=st.sampled_from([0.0, 0.3]))
def test_what_the_witnesses_prove_an_independent_attacker_confirms(seed, cost,
                                                                  published_share):
    # on the hypercube pattern, and on it with a share of its secondaries published again
    # (witnesses through them prove nothing; some requirements then fail); each requirement
    # also at two and four times its level (only a witness with that much room proves it)
    frame, names, table = survey(seed, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, cost)
    published = np.random.default_rng(seed).random(table.n_cells) < published_share
    pattern = pattern & ~(published & ~problem.fixed_on)
    known = Witnesses(problem.table.A, witnesses, problem.down, problem.up)
    in_cell = contributions(frame, names, table)
    count = in_cell.sum(axis=0)
    sole = np.where(count == 1, np.argmax(in_cell, axis=0), -1)
    a = problem.table.values
    claims = 0
    for req in (replace(r, level=r.level * factor) for r in problem.reqs
                for factor in (1, 2, 4)):
        family = known.family(req, pattern, problem.insiders)
        if not family:
            continue
        slack = 1e-6 * max(1.0, abs(a[req.cell]))
        scenarios = [[]]  # the outsider, then each respondent some witness leaves alone
        for record in np.unique(sole[(sole >= 0) & pattern]).tolist():
            cells = np.flatnonzero(pattern & (sole == record))
            if not in_cell[record, req.cell] and any(
                    not np.isin(cells, moved).any() for moved in family):
                scenarios.append(cells.tolist())
        for fixed in scenarios:
            reach = linprog_reach(problem, pattern, fixed, req.cell, req.direction)
            assert reach >= req.level - slack, (req, fixed)
            claims += 1
    assert claims > 0  # the witnesses prove something: the test is not vacuous


def test_a_deviation_off_the_relations_or_through_a_published_cell_proves_nothing():
    _, _, table = survey(0, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, "value")
    W = sp.csc_array(witnesses)
    known = Witnesses(problem.table.A, W, problem.down, problem.up)
    assert known.count == W.shape[1]
    # a witness with one sign flipped no longer satisfies the relations: dropped
    broken = W[:, [0]].toarray()
    broken[np.flatnonzero(broken)[0]] *= -1
    assert Witnesses(problem.table.A, sp.hstack([W, sp.csc_array(broken)]), problem.down,
                     problem.up).count == W.shape[1]
    # a requirement one witness proves is no longer proved by it once a cell it moves is
    # published
    req = next(r for r in problem.reqs if known.family(r, pattern, None))
    (moved,) = known.family(req, pattern, None)
    other = moved[moved != req.cell][0]
    without = pattern.copy()
    without[other] = False
    assert all(other not in cells for cells in known.family(req, without, None))


def test_the_search_from_the_hypercube_pattern_with_its_witnesses_stays_protected():
    frame, names, table = survey(5, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, "value")
    improved, stats = improve_pattern(problem, pattern, Deadline(None), witnesses=witnesses)
    check_search(frame, names, table, problem, pattern, improved, stats)
    attacker = problem.attacker(Deadline(None))
    attacker.add_witnesses(witnesses)
    attacker.set_pattern(pattern)
    solved = attacker.n_solves
    proofs = [attacker.proof(req)[0] for req in problem.reqs]
    assert all(p is not None for p in proofs)
    assert attacker.n_solves - solved < len(problem.reqs)  # witnesses spared flows


@pytest.mark.parametrize("cost", ["value", "count"])
def test_the_search_is_the_same_with_and_without_the_witnesses_certificates(cost):
    # the witnesses change which certificates prove the start, not whether it is protected:
    # both searches return protecting patterns no costlier than the start
    frame, names, table = survey(2, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, cost)
    for given_witnesses in (None, witnesses):
        improved, stats = improve_pattern(problem, pattern, Deadline(None),
                                          witnesses=given_witnesses)
        check_search(frame, names, table, problem, pattern, improved, stats)


def test_the_restoring_router_hides_again_the_cheapest_witness_where_no_neighbourhood_routes(
        monkeypatch):
    # every table routed locally, in neighbourhoods of the cell alone (no local flow), and
    # the whole table's LP counted as slow at once: the router falls back on the witnesses
    # of the pattern before the ruin (under a time limit; without one, the whole table's)
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    monkeypatch.setattr(heuristic, "WIDER_HOPS", 0)
    monkeypatch.setattr(guided, "WHOLE_TABLE_SECONDS", -1.0)
    frame, names, table = survey(5, 2, 25)
    problem, before, witnesses = hypercube_start(table, "value")
    known = Witnesses(problem.table.A, witnesses, problem.down, problem.up)
    removable = ~problem.fixed_on & ~problem.fixed_off
    start = ruined(before, problem.cost, removable, share=1.0)  # every secondary published
    flows = heuristic.FlowRouter(problem.table.A, problem.down, problem.up,
                                 ~problem.fixed_off, Deadline(10**6), hops=0)
    unlimited = guided.RestoringRouter(heuristic.FlowRouter(
        problem.table.A, problem.down, problem.up, ~problem.fixed_off, hops=0), known, before)
    restored = 0
    for req in problem.reqs:
        router = guided.RestoringRouter(flows, known, before)
        for routed in (router.route(req, problem.cost, start),  # the whole table's, timed
                       unlimited.route(req, problem.cost, start)):
            assert linprog_reach(problem, start | routed, [], req.cell,
                                 req.direction) >= req.level * (1 - 1e-9)
        assert router.slowest >= 0 > guided.WHOLE_TABLE_SECONDS
        carries = router.route(req, problem.cost, start)  # now counted as slow
        meeting = known.meeting(req, before)
        if len(meeting) == 0:  # the whole table's flow again
            assert linprog_reach(problem, start | carries, [], req.cell,
                                 req.direction) >= req.level * (1 - 1e-9)
            continue
        added = [problem.cost[known.cells(k)] @ ~start[known.cells(k)] for k in meeting]
        assert np.flatnonzero(carries).tolist() == known.cells(
            meeting[int(np.argmin(added))]).tolist()
        assert linprog_reach(problem, start | carries, [], req.cell,
                             req.direction) >= req.level * (1 - 1e-9)
        restored += 1
    assert restored > 0
    # the guided method routed so stays protected against the independent attackers
    result = suppress(table, "guided", cost="value", time_limit=600)
    assert linprog_exposed(result.table) == []
    assert independent_insider_failures(result.table, contributions(frame, names, table)) \
        == set()


@settings(max_examples=examples(3, 10), deadline=None)
@given(seed=st.integers(0, 10_000), published_share=st.sampled_from([0.0, 0.3, 0.7]))
def test_the_requirements_no_witness_meets_are_those_meeting_finds_none_for(
        seed, published_share):
    # the vectorised count against the witness-by-witness look-up, on the hypercube
    # pattern with a share of its secondaries published again, the respondents' scenarios
    # (requirements with fixed cells) and requirements at multiples of their levels
    frame, names, table = survey(seed, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, "value")
    published = np.random.default_rng(seed).random(table.n_cells) < published_share
    pattern = pattern & ~(published & ~problem.fixed_on)
    known = Witnesses(problem.table.A, witnesses, problem.down, problem.up)
    in_cell = contributions(frame, names, table)
    sole = np.where(in_cell.sum(axis=0) == 1, np.argmax(in_cell, axis=0), -1)
    reqs = [replace(r, level=r.level * factor) for r in problem.reqs
            for factor in (1, 2, 4, 1e9)]  # (at 1e9 times its level, no witness meets it)
    reqs += [replace(r, fixed=tuple(np.flatnonzero(sole == record).tolist()))
             for r in problem.reqs[:5] for record in np.unique(sole[sole >= 0])[:3].tolist()]
    unmet = known.unmet(reqs, pattern)
    assert unmet.tolist() == [len(known.meeting(r, pattern)) == 0 for r in reqs]
    assert unmet.any() and (published_share > 0 or not unmet.all())  # not vacuous


def test_the_ruin_is_the_largest_share_whose_unwitnessed_requirements_fit_the_time(
        monkeypatch):
    # (shares for a small table: a tenth of its secondaries is one or two cells)
    monkeypatch.setattr(guided, "RUIN_SHARES", (1.0, 0.6, 0.3, 0.1))
    _, _, table = survey(5, 2, 25)
    problem, pattern, witnesses = hypercube_start(table, "value")
    known = Witnesses(problem.table.A, witnesses, problem.down, problem.up)
    removable = ~problem.fixed_on & ~problem.fixed_off
    left = {share: sum(len(known.meeting(r, ruined(pattern, problem.cost, removable, share)))
                       == 0 for r in problem.reqs) for share in guided.RUIN_SHARES}
    assert left[guided.RUIN_SHARES[0]] > left[guided.RUIN_SHARES[-1]]  # the shares differ
    for count in left.values():
        chosen = guided.ruin_within(pattern, problem.cost, removable, known, problem.reqs,
                                    count / guided.ROUTED_PER_SECOND)
        largest = next(s for s in guided.RUIN_SHARES if left[s] <= count)
        assert chosen is not None and (chosen.share, chosen.unmet) == (largest, left[largest])
        assert chosen.start.tolist() == ruined(pattern, problem.cost, removable,
                                               largest).tolist()
    fewest = min(left.values())
    if fewest > 0:  # not even the smallest share fits: no ruin
        assert guided.ruin_within(pattern, problem.cost, removable, known, problem.reqs,
                                  (fewest - 1) / guided.ROUTED_PER_SECOND) is None
    assert guided.ruin_within(pattern, problem.cost, removable, known, problem.reqs,
                              np.inf).share == guided.RUIN_SHARE  # no limit: the default


def test_a_whole_table_flow_slower_than_its_seconds_gives_way_to_the_witness(monkeypatch):
    # the whole table's flow of a requirement a witness meets gets WHOLE_TABLE_SECONDS
    # (none without a time limit); when it does not end within them, the witness is hidden
    # again and later requirements go to the witnesses at once
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    monkeypatch.setattr(heuristic, "WIDER_HOPS", 0)
    _, _, table = survey(5, 2, 25)
    problem, before, witnesses = hypercube_start(table, "value")
    known = Witnesses(problem.table.A, witnesses, problem.down, problem.up)
    start = ruined(before, problem.cost, ~problem.fixed_on & ~problem.fixed_off, share=1.0)
    reqs = [r for r in problem.reqs if len(known.meeting(r, before))][:2]
    asked = []

    def too_slow(req, cost, suppressed, w=None, *, seconds=None):
        asked.append(seconds)
        return None

    for deadline, expected in ((Deadline(10**6), guided.WHOLE_TABLE_SECONDS),
                               (Deadline(None), None)):
        flows = heuristic.FlowRouter(problem.table.A, problem.down, problem.up,
                                     ~problem.fixed_off, deadline, hops=0)
        monkeypatch.setattr(flows, "route_whole", too_slow)
        router = guided.RestoringRouter(flows, known, before)
        asked.clear()
        carries = [router.route(req, problem.cost, start) for req in reqs]
        assert asked == [expected] * (1 if expected else 2)
        if expected:  # the witnesses, met in the pattern before the ruin, hidden again
            assert router.slowest == np.inf
            for req, hidden in zip(reqs, carries, strict=True):
                assert linprog_reach(problem, start | hidden, [], req.cell,
                                     req.direction) >= req.level * (1 - 1e-9)
        else:
            assert carries == [None, None]


@pytest.mark.parametrize("per_second", [0.0, 1e9])
def test_the_guided_pattern_from_any_ruin_its_time_allows_resists_the_independent_attacks(
        monkeypatch, per_second):
    # no share fits (no routing: the hypercube pattern and the search), or the largest
    # (every secondary published again): either way the outside intruder (linprog) and
    # every respondent (the independent insider attack) learn nothing within the levels
    monkeypatch.setattr(guided, "RUIN_SHARES", (1.0, 0.6, 0.3))
    monkeypatch.setattr(guided, "ROUTED_PER_SECOND", per_second)
    frame, names, table = survey(5, 2, 25)
    lines = []
    result = suppress(table, "guided", cost="value", time_limit=600, progress=lines.append)
    said = [line for line in lines if line.startswith("guided: ")]
    assert said[0].startswith("guided: even the smallest share" if per_second == 0
                              else "guided: routing from the hypercube pattern with its "
                              "100.0%")
    assert linprog_exposed(result.table) == []
    assert independent_insider_failures(result.table, contributions(frame, names, table)) \
        == set()


def test_a_pattern_routed_with_radii_skipped_resists_the_independent_attacks(monkeypatch):
    # routed locally from one relation on (hops = 1), every radius that fails once skipped
    # from then on (SKIP_AFTER = 1): fewer local LPs, and still the outside intruder
    # (linprog) and every respondent (the independent insider attack) learn nothing
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    frame, names, table = survey(5, 2, 25)
    problem = problem_of(table, "value")
    solved = []  # local LPs, without and with the skips
    for skip_after in (10**9, 1):
        monkeypatch.setattr(heuristic, "SKIP_AFTER", skip_after)
        router = heuristic.FlowRouter(problem.table.A, problem.down, problem.up,
                                      ~problem.fixed_off, hops=1)
        pattern, _, complete = heuristic.heuristic_pattern(
            problem.reqs, problem.attacker(Deadline(None)), router, problem.cost,
            problem.fixed_on, problem.labels)
        assert complete
        solved.append(int(router.tried.sum()))
        hidden = published(table, pattern)
        assert linprog_exposed(hidden) == []
        assert independent_insider_failures(hidden, contributions(frame, names, table)) \
            == set()
    assert solved[1] < solved[0], solved
