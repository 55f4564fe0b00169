"""The modular method: HiTaS sub-tables in waves, their own time limits, identical sub-tables
solved once, the same pattern in one process or several, and patterns that an attacker
written here (``scipy.optimize.linprog``) cannot narrow below the protection levels."""

import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._progress import Deadline
from tabsdc.suppression import suppress
from tabsdc.suppression._methods import optimal_method, protect_subtable
from tabsdc.suppression._modular import (
    SUBTABLE_GAP,
    SubtableOutcome,
    SubtableTask,
    home_subtables,
    modular_pattern,
    publish_unneeded,
    subtables,
)
from tabsdc.suppression._problem import MethodOptions, suppression_problem
from tests.tabsdc.test_insider import linprog_interval

REGIONS = Hierarchy.from_parent_child({"N": "Total", "S": "Total", "N1": "N", "N2": "N",
                                       "S1": "S", "S2": "S"})


def twin_table() -> Table:
    """Regions N and S with the same children's values and the same primaries: the
    sub-tables of N and of S are the same problem."""
    values = [40.0, 3.0, 50.0, 60.0]  # N1 x a (primary), N1 x b, N2 x a, N2 x b
    data = pd.DataFrame({"reg": ["N1", "N1", "N2", "N2", "S1", "S1", "S2", "S2"],
                         "act": ["a", "b"] * 4, "value": values * 2})
    table = Table.from_aggregated(data, ["reg", "act"], hierarchies={"reg": REGIONS})
    primary = np.isin(table.cell_labels(range(table.n_cells)),
                      ["reg=N1 x act=b", "reg=S1 x act=b"])
    return table.with_columns(status=np.where(primary, "u", "s"),
                              lpl=np.where(primary, 2.0, 0.0), upl=np.where(primary, 2.0, 0.0))


def levels(table: Table) -> tuple[np.ndarray, np.ndarray]:
    return table.cells["lpl"].to_numpy(float), table.cells["upl"].to_numpy(float)


def test_identical_subtables_are_solved_once():
    table = twin_table()
    lines = []
    hidden, stats = modular_pattern(table, table.values, levels(table), protect_subtable,
                                    progress=lines.append)
    # the top sub-table has no primary; N's and S's are the same problem, solved once
    assert stats.subtables == 3 and stats.solved == 1 and stats.reused == 1
    assert "1 solved, 1 reused from identical sub-tables" in lines[-1]
    assert lines[-1].startswith("sub-tables: 3 of 3 sub-tables done")
    # the same pattern in both: the 2 x 2 cycle through the primary in each region
    names = set(table.cell_labels(np.flatnonzero(hidden).tolist()))
    assert names == {f"reg={r}{k} x act={a}" for r in "NS" for k in "12" for a in "ab"}
    result = suppress(table, "modular", "value")
    assert result.passed and result.stats.rounds == 1


def test_each_cell_is_hidden_only_by_its_home_subtable():
    """The home of a cell is the coarsest sub-table holding it; each sub-table's free cells
    (its homes) are disjoint, and a sub-table of the same depth never shares them."""
    table = twin_table()
    parts = subtables(table)
    home = home_subtables(table)
    for j in range(table.n_cells):
        holders = [key for key, cells in parts.items() if j in cells]
        assert tuple(home[j]) == min(holders, key=lambda key: sum(
            h.depth(h.codes[p]) for h, p in zip(table.hierarchies.values(), key,
                                                strict=True)))


def hierarchical_survey(seed: int, records: int = 300) -> Table:
    """Three dimensions, hierarchical in two (groups of two or three codes), p % and
    frequency primaries."""
    rng = np.random.default_rng(seed)
    frame = {}
    for name, letter in (("a", "A"), ("b", "B")):
        upper = rng.integers(0, 2, records)
        lower = rng.integers(0, 2 + (name == "b"), records)
        frame[f"{name}1"] = [f"{letter}{u}" for u in upper]
        frame[f"{name}2"] = [f"{letter}{u}{w}" for u, w in zip(upper, lower, strict=True)]
    frame["c"] = [f"C{k}" for k in rng.integers(0, 2, records)]
    data = pd.DataFrame(frame)
    data["v"] = np.round(rng.pareto(1.2, records) * 100 + 1, 1)
    hierarchies = {f"{n}2": Hierarchy.from_levels(data[[f"{n}1", f"{n}2"]].drop_duplicates())
                   for n in "ab"}
    table = Table.from_microdata(data, ["a2", "b2", "c"], "v", hierarchies=hierarchies)
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


def test_each_subtable_keeps_its_own_time_limit_on_a_deterministic_clock():
    """A clock that moves 0.1 s at every reading: every sub-table's optimisation stops at
    its 2 s (plus the few readings on its way out), and keeps its best pattern or routes its
    own cells; the whole table is then checked and repaired."""
    table = hierarchical_survey(3)
    ticks = iter(range(10**9))
    clock = lambda: 0.1 * next(ticks)  # noqa: E731
    lines = []
    hidden, stats = modular_pattern(table, table.values, levels(table), protect_subtable,
                                    subtable_limit=2.0, clock=clock, progress=lines.append)
    assert stats.solved > 3 and stats.time_limited >= 3
    assert max(stats.seconds) <= 2.0 + 1.0
    assert f"{stats.time_limited:,} stopped at their time limit" in lines[-1]
    result = suppress(table, "modular", subtable_limit=2.0,
                      time_limit=Deadline(None, clock=clock))
    assert result.passed


def test_a_subtable_whose_wall_clock_end_has_passed_is_not_started():
    """A task that waited in a pool's queue past the sub-tables' share (``until``) returns
    at once without a pattern; the wave leaves it unsolved, as a sequential run would."""
    table = hierarchical_survey(3)
    tasks = []
    modular_pattern(table, table.values, levels(table),
                    lambda task: tasks.append(task) or protect_subtable(task))
    late = protect_subtable(replace(tasks[0], until=time.time() - 1.0))
    assert (late.pattern, late.how, late.seconds) == (None, "not started", 0.0)
    assert protect_subtable(replace(tasks[0], until=time.time() + 600.0)).how in (
        "optimal", "near-optimal")


def test_under_a_time_limit_each_subtable_gets_its_share_of_the_time_left():
    """A clock that moves only by what each solve is given: the first sub-table gets at least
    the limit over the number of sub-tables, none more than its own limit, and every
    sub-table is solved before the limit (with each its whole ``subtable_limit`` of 10 s,
    the 30 s would end after three)."""
    table = hierarchical_survey(3)
    now = [0.0]
    given = []

    def solve(task: SubtableTask) -> SubtableOutcome:
        given.append(task.seconds)
        now[0] += task.seconds
        return protect_subtable(replace(task, seconds=None, clock=time.perf_counter))

    lines = []
    deadline = Deadline(30.0, clock=lambda: now[0])
    hidden, stats = modular_pattern(table, table.values, levels(table), solve,
                                    subtable_limit=10.0, deadline=deadline,
                                    progress=lines.append)
    # at least the limit over all sub-tables (those without a primary cost nothing)
    assert 30.0 / stats.subtables <= given[0] < 10.0
    assert max(given) <= 10.0 and len(given) > 3
    assert lines[-1].startswith(f"sub-tables: {stats.subtables} of {stats.subtables} "
                                "sub-tables done")
    # without a time limit each gets its own limit
    given.clear()
    modular_pattern(table, table.values, levels(table), solve, subtable_limit=10.0)
    assert set(given) == {10.0}


def test_the_modular_method_keeps_the_hypercube_pattern_when_it_has_none_or_a_dearer_one(
        monkeypatch):
    """A routing that does not end in time, or a repaired pattern dearer than the hypercube
    method's: the result is the hypercube method's pattern (audited), never "no pattern"."""
    import tabsdc.suppression._methods as methods

    table = hierarchical_survey(1, records=150)
    hypercube = suppress(table, "hypercube", "value")
    ended = methods.heuristic_pattern

    def unfinished(*args, **kwargs):
        pattern, certificates, _ = ended(*args, **kwargs)
        return pattern, certificates, False

    monkeypatch.setattr(methods, "heuristic_pattern", unfinished)
    lines = []
    result = suppress(table, "modular", "value", progress=lines.append)
    assert result.status == "feasible" and result.passed
    assert (result.suppressed == hypercube.suppressed).all()
    assert "modular: the routing stopped before its end: the hypercube pattern is kept" in lines
    monkeypatch.setattr(methods, "heuristic_pattern", ended)
    cleaned = methods.publish_unneeded
    monkeypatch.setattr(methods, "publish_unneeded", lambda *args, **kwargs: cleaned(
        *args, **kwargs) | hypercube.suppressed)  # a protecting superset: dearer
    result = suppress(table, "modular", "value", progress=lines.append)
    assert (result.suppressed == hypercube.suppressed).all()
    assert "modular: the pattern costs more: the hypercube pattern is kept" in lines


@pytest.mark.slow
def test_the_default_on_a_mid_size_hierarchical_table_is_the_modular_method_in_time():
    """``auto`` on a 4-D table of 4,160 cells with two hierarchies: the modular
    method, and says why; under a 20 s limit its pattern protects and costs no more than
    the hypercube method's."""
    from tabsdc.suppression import choose_method
    from tests.tabsdc.test_suppression_guided import mid_size_table

    table = mid_size_table()
    method, reason = choose_method(table)
    assert method == "modular" and "in sub-tables of at most" in reason
    result = suppress(table, cost="value", time_limit=20)
    assert result.method == "modular" and result.status != "no pattern"
    assert result.audit.protected
    hypercube = suppress(table, "hypercube", cost="value", time_limit=20)
    assert result.stats.objective <= hypercube.stats.objective + 1e-6


def test_subtables_stop_within_their_gap_target_of_their_proven_optimum():
    """A sub-table stopped near its optimum costs at most ``1 / (1 - SUBTABLE_GAP)``
    times the optimum its own optimal method proves, and is counted as such."""
    table = hierarchical_survey(8)
    solved = []

    def solve(task: SubtableTask) -> SubtableOutcome:
        solved.append((task, protect_subtable(task)))
        return solved[-1][1]

    _, stats = modular_pattern(table, table.values, levels(table), solve)
    near = [(task, outcome) for task, outcome in solved if outcome.how == "near-optimal"]
    assert len(near) == stats.near_optimal >= 2
    assert f"{stats.near_optimal} stopped within 5% of their bound" in stats.summary()
    for task, outcome in near:
        problem = suppression_problem(task.table, task.cost, singletons=task.singletons)
        proven = optimal_method(problem, MethodOptions(Deadline(None)))
        assert proven.stats.status == "optimal"
        free = ~problem.fixed_on
        cost = task.cost[outcome.pattern & free].sum()
        optimum = task.cost[proven.pattern & free].sum()
        assert optimum - 1e-6 <= cost <= optimum / (1 - SUBTABLE_GAP) + 1e-6


def test_the_pattern_does_not_depend_on_n_jobs():
    table = hierarchical_survey(5)
    one, stats_one = modular_pattern(table, table.values, levels(table), protect_subtable, n_jobs=1)
    two, stats_two = modular_pattern(table, table.values, levels(table), protect_subtable, n_jobs=2)
    assert stats_one.waves >= 2 and stats_one.solved >= 3
    assert (one == two).all()
    assert (stats_one.solved, stats_one.reused, stats_one.margins_freed) == \
        (stats_two.solved, stats_two.reused, stats_two.margins_freed)


def narrowest_intervals(table: Table) -> dict[int, tuple[float, float]]:
    """For every primary: the lowest and highest value ``linprog`` finds over ``A x = b``,
    published cells at their values, hidden cells within their bounds."""
    cells = table.cells
    a = table.values
    hidden = cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    bounds = [(lo, hi) if h else (v, v) for lo, hi, h, v in zip(
        cells["lb"].to_numpy(float), cells["ub"].to_numpy(float), hidden, a, strict=True)]
    bounds = [(lo, None if np.isinf(hi) else hi) for lo, hi in bounds]
    A = table.A.toarray()
    out = {}
    for j in np.flatnonzero(cells["status"].to_numpy() == "u"):
        c = np.zeros(table.n_cells)
        c[j] = 1.0
        low = linprog(c, A_eq=A, b_eq=table.b, bounds=bounds, method="highs")
        high = linprog(-c, A_eq=A, b_eq=table.b, bounds=bounds, method="highs")
        out[int(j)] = (low.fun, np.inf if high.status == 3 else -high.fun)
    return out


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_modular_patterns_pass_an_independent_attacker(seed):
    table = hierarchical_survey(seed, records=120)
    result = suppress(table, "modular", "value", singletons=False)
    protected = result.table
    a = table.values
    lpl, upl = levels(table)
    for j, (low, high) in narrowest_intervals(protected).items():
        assert low <= a[j] - lpl[j] + 1e-6 * max(1.0, abs(a[j])), table.cell_labels([j])
        assert high >= a[j] + upl[j] - 1e-6 * max(1.0, abs(a[j])), table.cell_labels([j])


@pytest.mark.parametrize("seed", [1, 2])
def test_modular_patterns_protect_against_respondents(seed):
    table = hierarchical_survey(seed, records=150)
    result = suppress(table, "modular", "value")
    assert result.passed and result.audit.protected
    assert result.to_dict()["insider_pairs_failing"] == 0
    # the attacker written here: each single-contributor primary's respondent knows it
    cells = table.cells
    primary = np.flatnonzero(cells["status"].to_numpy() == "u")
    single = [int(i) for i in primary if cells["freq"].iloc[i] == 1]
    assert single
    a = table.values
    lpl, upl = levels(table)
    freq = cells["freq"].to_numpy()
    for known in single:
        # the respondent's own cells (one contributor, the same value: a code whose one
        # child holds the data) are not another's
        own = (freq == 1) & (a == a[known])
        for j in primary[~own[primary]]:
            low, high = linprog_interval(result.table, [known], j)
            assert low <= a[j] - lpl[j] + 1e-6 * max(1.0, abs(a[j])), (known, j)
            assert high >= a[j] + upl[j] - 1e-6 * max(1.0, abs(a[j])), (known, j)


def protected_against_linprog(table: Table, hidden: np.ndarray) -> bool:
    """Every primary of ``table`` keeps its levels when ``hidden`` cells are withheld, by
    the attacker written here."""
    withheld = table.with_columns(status=np.where(hidden, "m", "s"))
    a = table.values
    lpl, upl = levels(table)
    primary = table.cells["status"].to_numpy() == "u"
    return all(low <= a[j] - lpl[j] + 1e-6 * max(1.0, abs(a[j]))
               and high >= a[j] + upl[j] - 1e-6 * max(1.0, abs(a[j]))
               for j, (low, high) in narrowest_intervals(
                   withheld.with_columns(status=np.where(
                       primary, "u", withheld.cells["status"]))).items())


@pytest.mark.parametrize("seed", [4, 7])
def test_publish_unneeded_keeps_every_primary_protected_and_publishes_cells(seed):
    """From a pattern hiding every cell that may be hidden: what the clean-up, one cell at a
    time, publishes again leaves every primary protected by the linprog attacker, and it
    publishes at least a third of the cells."""
    table = hierarchical_survey(seed, records=120)
    problem = suppression_problem(table, table.values, singletons=False)
    everything = ~problem.fixed_off
    removable = everything & ~problem.fixed_on
    pattern = publish_unneeded(problem.reqs, problem.attacker(Deadline(None)), problem.cost,
                               everything, removable)
    assert pattern[problem.fixed_on].all()
    assert (removable & ~pattern).sum() >= removable.sum() / 3
    assert protected_against_linprog(table, pattern)


def test_the_check_proves_a_requirement_over_the_whole_pattern_when_no_local_attack_does(
        monkeypatch):
    """Large-table mode on a 3 x 3 table with neighbourhoods of one relation: the primary's
    protecting rectangle lies two relations away, so no local attack proves it; the check
    proves it over the whole pattern (it was reported failing, and routed again, when only
    local attacks were tried), and fails it once a corner is published."""
    import tabsdc.suppression._attacker as attacker_module
    from tabsdc.suppression._attacker import Attacker, Requirement
    from tabsdc.suppression._checks import check_chunk, failing_requirements
    from tests.tabsdc.test_suppression_guided import three_by_three

    table = three_by_three()
    monkeypatch.setattr(attacker_module, "LOCAL_ABOVE", 0)
    down, up = table.values.copy(), table.values.copy()
    attacker = Attacker(table.A, down, up, hops=1)
    corners = [table.cells.index.get_loc(key)
               for key in [("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")]]
    pattern = np.zeros(table.n_cells, dtype=bool)
    pattern[corners] = True
    req = Requirement(corners[0], 1, 2.0)
    assert attacker.proof(req)[0] is None  # no local certificate
    assert failing_requirements(attacker, [req], pattern) == []
    pattern[corners[3]] = False
    assert failing_requirements(attacker, [req], pattern) == [req]
    # a parallel task started after the check's wall-clock end checks nothing
    pattern[corners[3]] = True
    task = (table.A, down, up, None, pattern, [req], time.time() - 1.0)
    assert check_chunk(task) == [False]
    assert check_chunk(task[:-1] + (None,)) == [True]
