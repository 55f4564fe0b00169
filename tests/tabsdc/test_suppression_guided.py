"""The guided method (routing steered by the bound's relaxation, the hypercube pattern as its
fallback) and the router's wider neighbourhoods.

Protection is checked by an attacker written here with ``scipy.optimize.linprog`` (min and
max of every primary over the relations, published cells at their values, hidden ones
within their a-priori bounds), not by the method's own certificates.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import tabsdc.suppression._heuristic as heuristic
from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._bounds import capacities
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._flows import Requirement
from tabsdc._progress import Deadline
from tabsdc.suppression import choose_method, suppress
from tests.conftest import examples
from tests.tabsdc.test_insider import contributions, independent_insider_failures, survey
from tests.tabsdc.test_suppression import random_tables
from tests.tabsdc.test_suppression_limits import ticking


def linprog_exposed(table: Table) -> list[int]:
    """The primaries whose interval under the table's pattern misses their levels."""
    cells = table.cells
    a, A = table.values, table.A.toarray()
    hidden = cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    free = np.flatnonzero(hidden)
    lb, ub = cells["lb"].to_numpy(float), cells["ub"].to_numpy(float)
    bounds = [(lb[k], None if np.isinf(ub[k]) else ub[k]) for k in free]
    rows = np.abs(A[:, free]).sum(axis=1) > 0
    exposed = []
    for j in np.flatnonzero((cells["status"] == "u").to_numpy()):
        ends = []
        for sign in (1.0, -1.0):
            res = linprog(np.where(free == j, sign, 0.0), A_eq=A[rows][:, free],
                          b_eq=A[rows][:, free] @ a[free], bounds=bounds, method="highs")
            assert res.status in (0, 3)
            ends.append(sign * res.fun if res.status == 0 else -sign * np.inf)  # unbounded
        slack = 1e-6 * max(1.0, abs(a[j]))
        if ends[0] > a[j] - cells["lpl"].iloc[j] + slack or \
                ends[1] < a[j] + cells["upl"].iloc[j] - slack:
            exposed.append(int(j))
    return exposed


@settings(max_examples=examples(3, 20), deadline=None)
@given(random_tables(), st.sampled_from(["value", "count"]))
def test_guided_protects_and_never_costs_more_than_the_hypercube_pattern(table, cost):
    guided = suppress(table, "guided", cost=cost)
    hypercube = suppress(table, "hypercube", cost=cost)
    optimal = suppress(table, "optimal", cost=cost)
    assert guided.audit.protected
    assert linprog_exposed(guided.table) == []
    assert guided.stats.objective <= hypercube.stats.objective + 1e-6
    assert optimal.stats.objective <= guided.stats.objective + 1e-6
    assert guided.stats.bound <= guided.stats.objective + 1e-6


def test_guided_routes_a_table_without_dimensions():
    # x0 + x1 + x2 = x3 with no hierarchies: no hypercube fallback, the routing alone
    table = Table(pd.DataFrame({"value": [4.0, 5.0, 6.0, 15.0],
                                "status": ["u", "s", "s", "s"],
                                "lpl": [1.0, 0, 0, 0], "upl": [1.0, 0, 0, 0]}),
                  [[1, 1, 1, -1]], [0])
    result = suppress(table, "guided", cost="value")
    assert result.audit.protected and linprog_exposed(result.table) == []
    assert result.suppressed.tolist() == [True, True, False, False]  # x1, the cheapest


def three_by_three() -> Table:
    """A 3 x 3 table with its totals, cell (r, c) of value 3 r + c + 1 (5 to 13)."""
    frame = pd.DataFrame([(r, c, float(3 * int(r) + int(c) + 1)) for r in "123"
                          for c in "123"], columns=["r", "c", "value"])
    return Table.from_aggregated(frame, ["r", "c"])


def test_the_router_widens_its_neighbourhood_before_the_whole_table(monkeypatch):
    # a 3 x 3 table: a primary's cheapest protection is a 4-cycle of interior cells, its
    # opposite corner two relations away; with hops = 1 the first neighbourhood (the two
    # lines through the cell) holds no flow, the next one does
    table = three_by_three()
    down, up = capacities(table)
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool),
                                  hops=1)

    def no_whole_table_lp(*args, **kwargs):
        raise AssertionError("the whole table's LP was solved")

    monkeypatch.setattr(heuristic, "flow_and_status", no_whole_table_lp)
    cell = table.cells.index.get_loc(("1", "1"))
    carries = router.route(Requirement(cell, 1, 2.0), np.abs(table.values),
                           np.zeros(table.n_cells, dtype=bool))
    assert carries is not None
    moved = np.flatnonzero(carries)
    corners = table.cells.index[moved]
    assert len(moved) == 4 and not table.total_cells[moved].any()
    assert len(set(corners.get_level_values(0))) == 2  # a rectangle: two rows, two columns
    assert len(set(corners.get_level_values(1))) == 2


def test_a_radius_that_rarely_holds_a_flow_is_skipped(monkeypatch):
    # the 3 x 3 table above: the two lines through an interior cell (hops = 1) never hold a
    # flow; after SKIP_AFTER such tries the router goes to two relations at once, and its
    # flows are the rectangles it found before
    table = three_by_three()
    down, up = capacities(table)
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    monkeypatch.setattr(heuristic, "SKIP_AFTER", 3)
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool),
                                  hops=1)
    interior = np.flatnonzero(~table.total_cells)
    routes = []
    for cell in np.tile(interior, 2):
        carries = router.route(Requirement(int(cell), 1, 1.0), np.abs(table.values),
                               np.zeros(table.n_cells, dtype=bool))
        routes.append(np.flatnonzero(carries).tolist())
    assert router.tried.tolist() == [3, 18, 0] and router.held.tolist() == [0, 18, 0]
    assert routes[:9] == routes[9:]  # the same flows before and after the skip
    assert all(len(cells) == 4 and not table.total_cells[cells].any() for cells in routes)
    # two relations too wide for a local LP: the lines are tried every time, never skipped
    # for the whole table's LP
    monkeypatch.setattr(heuristic, "WIDER_CELLS", 5)
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool),
                                  hops=1)
    for cell in interior:
        assert router.route(Requirement(int(cell), 1, 1.0), np.abs(table.values),
                            np.zeros(table.n_cells, dtype=bool)).sum() == 4
    assert router.tried.tolist() == [9, 0, 0]


def mid_size_table(seed: int = 3) -> Table:
    """A 4-D table of 4,160 cells (two two-level hierarchies and two flat
    dimensions), frequency and p % primaries from skewed random contributions."""
    rng = np.random.default_rng(seed)
    n = 3000
    frame = pd.DataFrame({
        "g": rng.choice(["A", "B", "C"], n),
        "h": rng.choice(["P", "Q"], n),
        "z": rng.choice(["z1", "z2", "z3"], n, p=[0.6, 0.3, 0.1]),
        "k": rng.choice(["k1", "k2", "k3", "k4"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })
    frame["s"] = frame["g"] + rng.integers(1, 5, n).astype(str)
    frame["r"] = frame["h"] + rng.integers(1, 6, n).astype(str)
    frame["v"] = np.round(rng.pareto(1.3, n) * 100 + 1, 2)
    hierarchies = {"s": Hierarchy.from_levels(frame[["g", "s"]].drop_duplicates()),
                   "r": Hierarchy.from_levels(frame[["h", "r"]].drop_duplicates())}
    table = Table.from_microdata(frame, ["s", "r", "z", "k"], "v", hierarchies=hierarchies)
    return apply_rules(table, [PPercentRule(15), FrequencyRule(3)]).table


@pytest.mark.slow
def test_the_guided_method_on_a_mid_size_table_returns_a_protecting_pattern_in_time():
    table = mid_size_table()
    assert table.n_cells > 2000
    assert choose_method(table)[0] == "modular"  # hierarchical, sub-tables below 2,000
    result = suppress(table, "guided", cost="value", time_limit=20)
    assert result.method == "guided"
    assert result.status != "no pattern"
    assert result.audit.protected
    hypercube = suppress(table, "hypercube", cost="value", time_limit=20)
    assert result.stats.objective <= hypercube.stats.objective + 1e-6


def test_guided_on_a_ticking_clock_keeps_a_protecting_pattern_no_costlier_than_hypercubes():
    # a clock moving one second per reading: this table's bound takes at most a fifth of the
    # limit, the hypercube pattern about 70 readings, the routing 280 (its whole table's
    # flows first read the clock more), the clean-up 50, the search the rest (measured). At
    # 250 s the routing, too slow for its share (three quarters of the time left), is
    # abandoned (the hypercube pattern is kept); at 540 s it finishes and the clean-up is
    # cut
    frame, names, table = survey(11, 2, 25)
    in_cell = contributions(frame, names, table)
    hypercube = suppress(table, "hypercube", cost="value").stats.objective
    costs = []
    for seconds, cut, why in ((250, "routing", "abandoned"),
                              (540, "clean-up", "time limit reached")):
        lines: list[str] = []
        result = suppress(table, "guided", cost="value", time_limit=ticking(seconds),
                          progress=lines.append)
        assert result.status == "feasible" and result.stats.time_limited
        assert result.passed and linprog_exposed(result.table) == []
        assert independent_insider_failures(result.table, in_cell) == set()
        assert result.stats.objective <= hypercube + 1e-6
        costs.append(result.stats.objective)
        assert any(line.startswith(f"{cut}: ") and why in line for line in lines)
    assert costs[0] == pytest.approx(hypercube)  # no routed pattern: hypercubes kept
    assert costs[1] < 0.5 * hypercube  # routed from the ruined hypercube pattern


def test_guided_gives_the_same_pattern_twice():
    _, _, table = survey(3, 2, 25)
    first = suppress(table, "guided", cost="count")
    again = suppress(table, "guided", cost="count")
    assert (first.suppressed == again.suppressed).all()


def test_a_routing_that_will_not_finish_in_its_time_is_abandoned_when_allowed(monkeypatch):
    # a clock standing at 30 s of 100 after its start: a quarter has passed and nothing is
    # routed yet, so at that rate the routing never finishes; a router taking the whole
    # table's flows first is not judged by their rate, so it is not abandoned
    from tests.tabsdc.test_suppression_neighbourhood import problem_of  # it imports this module

    _, _, table = survey(11, 2, 25)
    problem = problem_of(table, "value")
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)  # routed locally
    for abandon, whole_first in ((True, False), (False, False), (True, True)):
        clock = iter([0.0, *[30.0] * 10**6]).__next__
        deadline = Deadline(100.0, clock=clock)
        lines: list[str] = []
        router = problem.router(deadline=deadline,
                                whole_table_until=Deadline(None) if whole_first else None)
        _, certificates, complete = heuristic.heuristic_pattern(
            problem.reqs, problem.attacker(deadline), router,
            problem.cost, problem.fixed_on, problem.labels, lines.append, deadline,
            abandon=abandon)
        abandoned = abandon and not whole_first
        assert complete is not abandoned
        assert len(certificates) == (0 if abandoned else len(problem.reqs))
        assert any(line.startswith("routing: 0 of") and "abandoned: at 0/s" in line
                   for line in lines) is abandoned


def test_the_router_takes_the_whole_tables_flow_first_until_its_deadline(monkeypatch):
    # the 3 x 3 table above, routed locally (hops = 1): while ``whole_table_until`` has not
    # expired every route is the whole table's LP and no neighbourhood is tried; once it
    # has, the neighbourhoods come first again and give the same rectangle
    table = three_by_three()
    down, up = capacities(table)
    monkeypatch.setattr(heuristic.attacker_module, "LOCAL_ABOVE", 0)
    now = [0.0]
    until = Deadline(10.0, clock=lambda: now[0])
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool),
                                  hops=1, whole_table_until=until)
    local = heuristic.local_flow
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return local(*args, **kwargs)

    monkeypatch.setattr(heuristic, "local_flow", counted)
    cell = table.cells.index.get_loc(("1", "1"))
    none = np.zeros(table.n_cells, dtype=bool)
    first = router.route(Requirement(cell, 1, 2.0), np.abs(table.values), none)
    assert calls == [] and router.tried.sum() == 0
    now[0] = 100.0
    again = router.route(Requirement(cell, 1, 2.0), np.abs(table.values), none)
    assert len(calls) == 2  # one relation (no flow), then two
    assert np.flatnonzero(first).tolist() == np.flatnonzero(again).tolist()
    assert first.sum() == 4 and not table.total_cells[first].any()


def test_the_guided_method_takes_the_whole_tables_flows_first_only_where_costs_differ(
        monkeypatch):
    # cost = count: every route a neighbourhood's first (on 4d_5k the whole table's first
    # cost 5 % more there); cost = value: the whole table's first
    import tabsdc.suppression._methods as methods

    seen = []

    class Recorded(heuristic.FlowRouter):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.whole_table_until)

    monkeypatch.setattr(methods, "FlowRouter", Recorded)
    _, _, table = survey(3, 2, 25)
    for cost in ("count", "value"):
        seen.clear()
        assert suppress(table, "guided", cost=cost).audit.protected
        assert len(seen) == 1 and (seen[0] is None) is (cost == "count")


def test_a_whole_tables_flow_cut_by_its_seconds_is_not_taken(monkeypatch):
    # a flow HiGHS stopped at its time limit (feasible, not proven the cheapest) would make
    # the route depend on the machine's speed: with ``seconds`` it is not taken, without
    # (the deadline's own end) it is
    table = three_by_three()
    down, up = capacities(table)
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool))
    solved = heuristic.flow_and_status
    monkeypatch.setattr(heuristic, "flow_and_status",
                        lambda *args, **kwargs: (solved(*args, **kwargs)[0], "feasible"))
    req, none = Requirement(0, 1, 1.0), np.zeros(table.n_cells, dtype=bool)
    cost = np.abs(table.values)
    assert router.route_whole(req, cost, none, seconds=5.0) is None
    assert router.route_whole(req, cost, none).sum() == 4
