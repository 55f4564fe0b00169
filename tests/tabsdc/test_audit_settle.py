"""The settling audit (joint points, relaxations, exact extremes) against the exact audit and an
independent attacker: the same verdicts, sound bounds, honest partial verdicts, the same
result in one process, two, or on a Dask cluster."""

from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import tabsdc.audit._settle
import tabsdc.audit._verify
from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._progress import Deadline
from tabsdc.audit import IntervalAttack, audit
from tabsdc.audit._block import Block
from tabsdc.audit._joint_points import joint_point
from tabsdc.audit._outer_bounds import relaxed_extreme
from tabsdc.audit._settle import settle_requirements
from tabsdc.solver import LinearProgram
from tests.tabsdc.test_parallel import small_hierarchical_table


@lru_cache
def ruled_table(seed: int) -> Table:
    return small_hierarchical_table(seed)


def random_pattern(seed: int, share: float, pattern_seed: int, table: Table | None = None
                   ) -> Table:
    """The primaries of a small 3-D table (or ``table``) and a random ``share`` of its other
    non-empty cells hidden: most such patterns expose some primaries, some protect them all."""
    table = ruled_table(seed) if table is None else table
    rng = np.random.default_rng(pattern_seed)
    status = table.cells["status"].to_numpy().copy()
    others = (status != "u") & (table.values != 0)
    status[others & (rng.random(table.n_cells) < share)] = "m"
    return table.with_columns(status=status)


def four_dimensional_table(seed: int) -> Table:
    """A 4-D table of 1,404 cells (two two-level hierarchies, two flat dimensions) from
    skewed records, with p% and frequency primaries."""
    rng = np.random.default_rng(seed)
    n = 3000
    a1, b1 = rng.choice(3, n, p=[0.6, 0.3, 0.1]), rng.integers(0, 2, n)
    data = pd.DataFrame({
        "a1": np.char.add("A", a1.astype(str)),
        "a2": np.char.add(np.char.add("A", a1.astype(str)), rng.integers(0, 3, n).astype(str)),
        "b1": np.char.add("B", b1.astype(str)),
        "b2": np.char.add(np.char.add("B", b1.astype(str)),
                          rng.choice(3, n, p=[0.5, 0.3, 0.2]).astype(str)),
        "c": np.char.add("C", rng.choice(3, n, p=[0.6, 0.3, 0.1]).astype(str)),
        "d": np.char.add("D", rng.integers(0, 2, n).astype(str)),
        "v": np.round(rng.pareto(1.3, n) * 100 + 1, 2),
    })
    hierarchies = {"a2": Hierarchy.from_levels(data[["a1", "a2"]].drop_duplicates()),
                   "b2": Hierarchy.from_levels(data[["b1", "b2"]].drop_duplicates())}
    table = Table.from_microdata(data, ["a2", "b2", "c", "d"], "v", hierarchies=hierarchies,
                                 top=2)
    return apply_rules(table, [PPercentRule(15), FrequencyRule(3)]).table


def relations_only(table: Table) -> Table:
    """The same table without dimensions (as read from a JJ file): no hypercube witnesses."""
    return Table(table.cells.reset_index(drop=True), table.A, table.b)


def slack(frame):
    return 1e-6 * np.maximum(1.0, np.abs(frame["value"].to_numpy(float)))


def assert_agrees_with(settled, exact):
    """Same verdict per cell; inner bounds inside, outer bounds around, the exact intervals;
    every sensitive cell settled."""
    f, e = settled.frame, exact.frame.loc[settled.frame.index]
    sensitive = (f["status"] == "u").to_numpy()
    assert settled.complete and len(settled.not_settled) == 0
    assert (f["protected"].to_numpy() == e["protected"].to_numpy())[sensitive].all()
    assert settled.protected == exact.protected
    assert set(settled.exposed.index) == set(exact.failures.index)
    how = f["solver_status"].to_numpy()
    eps = slack(f)
    inner = how == "witness"
    assert (e["lower"].to_numpy() <= f["lower"].to_numpy() + eps)[inner].all()
    assert (e["upper"].to_numpy() >= f["upper"].to_numpy() - eps)[inner].all()
    exposed = how == "exposed"
    missed_low, missed_high = ~f["lower_ok"].to_numpy(), ~f["upper_ok"].to_numpy()
    assert (e["lower"].to_numpy() >= f["lower"].to_numpy() - eps)[exposed & missed_low].all()
    assert (e["upper"].to_numpy() <= f["upper"].to_numpy() + eps)[exposed & missed_high].all()
    bounded = how == "optimal"
    assert np.allclose(f[["lower", "upper"]].to_numpy()[bounded],
                       e[["lower", "upper"]].to_numpy()[bounded], rtol=1e-6, atol=1e-6)
    assert (f["exact"].to_numpy() == e["exact"].to_numpy())[sensitive].all()


def assert_settles_like_the_exact_audit(table: Table, prior: tuple[str, float | None]):
    settled = audit(table, witnesses="search", prior=prior[0], q=prior[1])
    assert_agrees_with(settled, audit(table, prior=prior[0], q=prior[1]))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(1, 9), share=st.floats(0.0, 0.7), pattern_seed=st.integers(0, 99))
def test_settled_verdicts_agree_with_the_exact_audit_on_small_tables(seed, share, pattern_seed):
    assert_settles_like_the_exact_audit(random_pattern(seed, share, pattern_seed),
                                        ("table", None))


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(1, 9), share=st.floats(0.0, 0.7), pattern_seed=st.integers(0, 99),
       prior=st.sampled_from([("table", None), ("pq", 40.0)]))
def test_settled_verdicts_agree_with_the_exact_audit(seed, share, pattern_seed, prior):
    assert_settles_like_the_exact_audit(random_pattern(seed, share, pattern_seed), prior)


@pytest.mark.slow
def test_a_four_dimensional_pattern_needs_rounds_and_gets_the_exact_verdicts():
    table = random_pattern(1, 0.8, 1, four_dimensional_table(1))
    lines = []
    settled = audit(table, witnesses="search", progress=lines.append)
    how = settled.frame["solver_status"][settled.frame["status"] == "u"].value_counts()
    assert how["witness"] > 50 and how["exposed"] > 10 and settled.lps > 50
    assert_agrees_with(settled, audit(table))
    done = [line for line in lines if line.startswith("settling requirements:")][-1]
    assert "done in" in done and f"{settled.lps:,} LPs" in done
    assert f"{how['exposed']:,} cells miss a requirement" in done


@pytest.mark.parametrize("seed, share", [(2, 0.1), (5, 0.4)])
def test_a_table_of_relations_only_gets_the_exact_verdicts(seed, share):
    table = relations_only(random_pattern(seed, share, seed))
    settled = audit(table, witnesses="search")
    assert settled.witnesses == 0 and settled.lps > 0  # no hypercubes: LPs settled it all
    assert_agrees_with(settled, audit(table))


def attacker_intervals(table: Table, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min and max of each cell over the published table, by ``scipy.optimize.linprog`` on
    the whole table (published cells fixed by their bounds): no code of the audit."""
    hidden = table.cells["status"].isin(["u", "m"]).to_numpy()
    lb, ub = table.cells["lb"].to_numpy(float), table.cells["ub"].to_numpy(float)
    bounds = [(lo, hi if np.isfinite(hi) else None) if h else (v, v)
              for h, v, lo, hi in zip(hidden, table.values, lb, ub, strict=True)]
    ends = []
    for sign in (1.0, -1.0):
        found = []
        for j in cells:
            c = np.zeros(table.n_cells)
            c[j] = sign
            result = linprog(c, A_eq=table.A, b_eq=table.b, bounds=bounds, method="highs")
            found.append(sign * result.fun if result.status == 0 else -sign * np.inf)
        ends.append(np.array(found))
    return ends[0], ends[1]


@pytest.mark.parametrize("seed, share", [(3, 0.15), (8, 0.5)])
def test_bounds_are_sound_against_an_independent_attacker(seed, share):
    table = random_pattern(seed, share, 7)
    # the outsider's bounds against the outsider's attacker (respondents: test_insider.py)
    settled = audit(table, witnesses="search", singletons=False).frame
    sensitive = np.flatnonzero((table.cells["status"] == "u").to_numpy())
    lower, upper = attacker_intervals(table, sensitive)
    f = settled.loc[table.cells.index[sensitive]]
    a, eps = f["value"].to_numpy(), slack(f)
    # the verdict the attacker's intervals give
    protected = ((lower <= a - f["lpl"].to_numpy() + eps) & (upper >= a + f["upl"].to_numpy() - eps)
                 & (upper - lower > eps))
    assert (f["protected"].to_numpy() == protected).all()
    assert not protected.all() and protected.any()  # some exposed, some protected
    how = f["solver_status"].to_numpy()
    inner = how == "witness"
    assert (lower <= f["lower"].to_numpy() + eps)[inner].all()
    assert (upper >= f["upper"].to_numpy() - eps)[inner].all()
    exposed = how == "exposed"
    assert (lower >= f["lower"].to_numpy() - eps)[exposed & ~f["lower_ok"].to_numpy()].all()
    assert (upper <= f["upper"].to_numpy() + eps)[exposed & ~f["upper_ok"].to_numpy()].all()


class FakeClock:
    """A deadline clock that moves one second per reading: the limit ends the audit after a
    fixed number of checks, the same on any machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_limit_mid_way_leaves_exactly_the_unsettled_cells_open(monkeypatch):
    table = relations_only(random_pattern(5, 0.3, 5))
    exact = audit(table, singletons=False)  # the outsider's verdicts, cell by cell
    complete = audit(table, witnesses="search", singletons=False)
    monkeypatch.setattr(tabsdc.audit._verify, "Deadline",
                        lambda seconds: Deadline(seconds, clock=FakeClock()))
    partial = audit(table, witnesses="search", time_limit=60, singletons=False)
    f, e = partial.frame, exact.frame
    assert partial.status == "time-limited" and not partial.protected
    open_cells = f.index[(f["status"] == "u") & (f["solver_status"] == "not computed")]
    assert set(partial.not_settled.index) == set(open_cells)
    assert 0 < len(open_cells) < len(complete.frame[complete.frame["status"] == "u"])
    decided = f.index[(f["status"] == "u") & ~f.index.isin(open_cells)]
    assert len(decided) > 0  # the limit came after some LPs
    assert (f.loc[decided, "protected"] == e.loc[decided, "protected"]).all()
    assert set(partial.exposed.index) <= set(exact.failures.index)
    assert f.loc[open_cells, ["lower", "upper"]].isna().any(axis=1).all()
    assert not f.loc[open_cells, "protected"].any()
    assert f"not settled: {len(open_cells)}" in partial.summary()
    assert f"{len(open_cells)} sensitive cells not settled" in partial.summary()
    assert f"{len(open_cells)} not settled in time" in partial.why_not_protected()


def test_a_tiny_limit_keeps_what_the_witnesses_settle_and_opens_the_rest():
    table = random_pattern(4, 0.3, 4)
    exact = audit(table).frame
    partial = audit(table, witnesses="search", time_limit=1e-9)
    f = partial.frame
    sensitive = f["status"] == "u"
    assert partial.status == "time-limited" and len(partial.not_settled) > 0
    settled = sensitive & (f["solver_status"] != "not computed")
    assert (f["protected"][settled] == exact.loc[f.index[settled], "protected"]).all()
    assert (f["solver_status"][~sensitive] != "not computed").all()


def test_one_process_two_and_a_dask_cluster_settle_alike():
    distributed = pytest.importorskip("distributed")
    table = random_pattern(6, 0.25, 6)
    one = audit(table, witnesses="search")
    two = audit(table, witnesses="search", n_jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask = audit(table, witnesses="search", client=client)
    assert one.lps > 0 and not one.protected
    for other in (two, dask):
        assert other.frame.equals(one.frame)
        assert other.lps == one.lps


def test_a_joint_point_is_feasible_and_reaches_what_it_can():
    # x0 + x1 + x2 = 9 (values 3, 3, 3; bounds [0, 9]): the targets 6, 6 and 1 are reached
    # together (6 + 2 + 1 would need x1 at 2: only two of the three upward)
    lp = LinearProgram(c=np.zeros(3), A=sp.csr_array([[1.0, 1, 1]]), row_lower=[9.0],
                       row_upper=[9.0], col_lower=np.zeros(3), col_upper=np.full(3, 9.0))
    a = np.array([3.0, 3, 3])
    point = joint_point(lp, np.array([0, 2]), a, np.array([6.0, 1.0]), np.ones(2))
    assert point.sum() == pytest.approx(9.0)
    assert point[0] >= 6 - 1e-7 and point[2] <= 1 + 1e-7
    both_up = joint_point(lp, np.array([0, 1]), a, np.array([7.0, 7.0]), np.ones(2))
    assert both_up.sum() == pytest.approx(9.0) and both_up[0] + both_up[1] <= 9 + 1e-7
    alone = joint_point(lp, np.array([0]), a, np.array([12.0]), np.ones(1))
    assert alone[0] == pytest.approx(9.0)  # out of reach: the point is the exact maximum


@settings(max_examples=25, deadline=None)
@given(hops=st.integers(1, 4), cell=st.integers(0, 5),
       values=st.lists(st.integers(1, 20), min_size=4, max_size=4))
def test_relaxations_contain_the_exact_interval(hops, cell, values):
    # a 2 x 2 table with its margins, all nine cells hidden but the grand total
    a = np.array(values, dtype=float).reshape(2, 2)
    cells = np.concatenate([a.ravel(), a.sum(axis=1), a.sum(axis=0)])  # 4 inner, 2 rows, 2 cols
    A = sp.csr_array(np.array([
        [1, 1, 0, 0, -1, 0, 0, 0], [0, 0, 1, 1, 0, -1, 0, 0],
        [1, 0, 1, 0, 0, 0, -1, 0], [0, 1, 0, 1, 0, 0, 0, -1],
        [0, 0, 0, 0, 1, 1, 0, 0]], dtype=float))
    rhs = np.array([0, 0, 0, 0, a.sum()])
    block = Block(A, rhs, np.zeros(5), np.zeros(8), np.full(8, 100.0), cells)
    cell = cell % 8
    for sense, sign in (("max", -1.0), ("min", 1.0)):
        exact = linprog(sign * np.eye(8)[cell], A_eq=A.toarray(), b_eq=rhs,
                        bounds=[(0, 100)] * 8, method="highs")
        bound, size = relaxed_extreme(block, cell, sense, hops)
        assert size <= 8
        if sense == "max":
            assert bound >= -exact.fun - 1e-7
        else:
            assert bound <= exact.fun + 1e-7


def settled_against_exact(table: Table, window: int):
    """Every sensitive hidden cell's requirements settled with no witness on regions of
    ``window`` cells at first, and the exact intervals of the same polytope by two LPs per
    hidden cell."""
    hidden = table.cells["status"].isin(["u", "m"]).to_numpy()
    values = table.values
    lb, ub = tabsdc.audit._verify.prior_bounds(table.cells, values, "table", None)
    attack = IntervalAttack(table.A, table.b, values, hidden, lb, ub)
    cells = table.cells.iloc[attack.hidden_cells]
    a = values[attack.hidden_cells]
    sensitive = (cells["status"] == "u").to_numpy()
    low = np.where(sensitive, a - cells["lpl"].to_numpy(float), np.nan)
    high = np.where(sensitive, a + cells["upl"].to_numpy(float), np.nan)
    margins = 1e-6 * np.maximum(1.0, np.abs(a))
    settled = settle_requirements(attack, a, a, a, (low, high), margins, window=window)
    exact = attack.intervals()
    return settled, exact, (low, high), margins


def assert_requirements_settled_as_exact(settled, exact, targets, margins):
    """A requirement shown met has its exact extreme beyond the target; one shown missed has
    it short of the target, inside the outer bound; every other is open only where the solver
    failed on the cell's own LP (left to the exact attack: a few at most)."""
    low, high = targets
    assert settled.open.sum() <= max(1, settled.requested.sum() // 100)
    eps = margins
    assert (exact.lower <= settled.lower + eps).all() and (exact.upper >= settled.upper - eps).all()
    with np.errstate(invalid="ignore"):
        shown_high = settled.upper >= high - margins
        shown_low = settled.lower <= low + margins
        assert (exact.upper >= high - margins)[shown_high].all()
        assert (exact.lower <= low + margins)[shown_low].all()
    missed_high, missed_low = ~np.isnan(settled.missed_upper), ~np.isnan(settled.missed_lower)
    assert (exact.upper < high - margins)[missed_high].all()
    assert (exact.upper <= settled.missed_upper + eps)[missed_high].all()
    assert (exact.lower > low + margins)[missed_low].all()
    assert (exact.lower >= settled.missed_lower - eps)[missed_low].all()
    requested = ~np.isnan(high) & ~settled.open
    assert (shown_high | missed_high)[requested].all()
    assert (shown_low | missed_low)[requested].all()


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(1, 9), share=st.floats(0.2, 0.8), pattern_seed=st.integers(0, 99),
       window=st.sampled_from([8, 24, 64]))
def test_small_regions_settle_as_the_exact_intervals(seed, share, pattern_seed, window):
    table = random_pattern(seed, share, pattern_seed)
    assert_requirements_settled_as_exact(*settled_against_exact(table, window))


@pytest.mark.parametrize("seed, share, pattern_seed", [(7, 0.5, 3), (4, 0.6, 3)])
def test_relaxations_widened_in_the_tail_settle_as_the_exact_intervals(
        monkeypatch, seed, share, pattern_seed):
    # relaxations of at most 8 cells at first and regions of 8, so the rounds reach the
    # whole block with requirements left; the relaxations then widen before any exact
    # extreme, and what they show must be what the exact intervals say
    monkeypatch.setattr(tabsdc.audit._settle, "RELAXATION_CELLS", 8)
    widened = []
    real = tabsdc.audit._settle._Rounds.widen_relaxations
    monkeypatch.setattr(tabsdc.audit._settle._Rounds, "widen_relaxations",
                        lambda self: widened.append(real(self)) or widened[-1])
    table = random_pattern(seed, share, pattern_seed)
    settled, exact, targets, margins = settled_against_exact(table, 8)
    assert True in widened
    assert_requirements_settled_as_exact(settled, exact, targets, margins)


@pytest.mark.slow
def test_regions_of_a_four_dimensional_pattern_settle_as_the_exact_intervals():
    # 1,404 cells, most hidden: one block of 1,121 hidden cells, regions of 128 at first
    table = random_pattern(1, 0.8, 1, four_dimensional_table(1))
    settled, exact, targets, margins = settled_against_exact(table, 128)
    assert_requirements_settled_as_exact(settled, exact, targets, margins)
    assert settled.exposed.sum() > 10 and (~settled.exposed & settled.requested).sum() > 50


def block_of(table: Table) -> Block:
    """The largest block of a pattern's hidden cells (the attack's rows and values)."""
    hidden = table.cells["status"].isin(["u", "m"]).to_numpy()
    attack = IntervalAttack(table.A, table.b, table.values, hidden,
                            table.cells["lb"].to_numpy(float), table.cells["ub"].to_numpy(float))
    members = np.flatnonzero(attack.component == np.bincount(attack.component).argmax())
    sub = attack.A_hidden[:, members].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    return Block(sub[rows], attack.rhs[rows], attack.slack[rows], attack.lb[members],
                 attack.ub[members], table.values[attack.hidden_cells][members])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(1, 9), share=st.floats(0.2, 0.8), start=st.integers(0, 10**6),
       size=st.integers(1, 300))
def test_a_grown_region_takes_whole_hops_then_the_cells_best_tied_to_it(seed, share, start,
                                                                        size):
    block = block_of(random_pattern(seed, share, seed))
    seeds = np.random.default_rng(start).permutation(block.n_cells)
    region = block.grown(seeds, size)
    assert len(region) == min(size, block.n_cells)  # a block is connected: it fills up
    assert seeds[0] in region and (np.diff(region) > 0).all()
    # the whole hops that fit are in it: by breadth-first search written here
    near, inside = {int(seeds[0])}, np.zeros(block.n_cells, dtype=bool)
    dense = block.A.toarray() != 0
    while True:
        wider = near | set(np.flatnonzero(dense[dense[:, sorted(near)].any(axis=1)].any(axis=0))
                           .tolist())
        if len(wider) > size or wider == near:
            break
        near = wider
    inside[region] = True
    assert inside[sorted(near)].all()
    # of the hop that did not fit, no cell left out is better tied than one taken
    rows = dense[:, sorted(near)].any(axis=1)
    hop = np.zeros(block.n_cells, dtype=bool)
    hop[sorted(near)] = True
    reached = dense[rows].any(axis=0) & ~hop
    tie = dense[rows].sum(axis=0) / dense.sum(axis=0).clip(1)
    if inside[reached].any() and (reached & ~inside).any():
        assert tie[reached & inside].min() >= tie[reached & ~inside].max() - 1e-12


def test_one_process_two_and_a_dask_cluster_solve_the_same_regions():
    # regions of 16 cells: several joint points per round, the parallel tasks
    distributed = pytest.importorskip("distributed")
    table = random_pattern(3, 0.6, 3)
    hidden = table.cells["status"].isin(["u", "m"]).to_numpy()
    attack = IntervalAttack(table.A, table.b, table.values, hidden,
                            table.cells["lb"].to_numpy(float), table.cells["ub"].to_numpy(float))
    cells = table.cells.iloc[attack.hidden_cells]
    a = table.values[attack.hidden_cells]
    sensitive = (cells["status"] == "u").to_numpy()
    targets = (np.where(sensitive, a - cells["lpl"].to_numpy(float), np.nan),
               np.where(sensitive, a + cells["upl"].to_numpy(float), np.nan))
    margins = 1e-6 * np.maximum(1.0, np.abs(a))

    def settle(**parallel):
        lines = []
        s = settle_requirements(attack, a, a, a, targets, margins, window=16,
                                progress=lines.append, **parallel)
        return s, lines

    one, lines = settle()
    assert one.n_lps > 20 and not one.open.any()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask, _ = settle(client=client)
    two, parallel_lines = settle(n_jobs=2)
    assert any("in parallel" in line for line in parallel_lines)
    for other in (two, dask):
        for field in ("lower", "upper", "missed_lower", "missed_upper", "open", "requested"):
            np.testing.assert_array_equal(getattr(other, field), getattr(one, field))
        assert other.n_lps == one.n_lps
