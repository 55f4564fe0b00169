"""Controlled tabular adjustment: L1 MILP against enumeration, the heuristic, L2, QP-CTA,
multivariate CTA, verification and the result object."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdcreport import Report
from tabsdc import Hierarchy, InputError, Table
from tabsdc.cta import adjust, adjust_multivariate, verify_adjustment
from tabsdc.cta._problem import build_problem

from ..conftest import DATA

# -- tables -----------------------------------------------------------------------------------


def grid(values: np.ndarray) -> Table:
    frame = pd.DataFrame([(f"r{i}", f"c{j}", v) for (i, j), v in np.ndenumerate(values)],
                         columns=["r", "c", "value"])
    return Table.from_aggregated(frame, ["r", "c"])


def cube(values: np.ndarray) -> Table:
    frame = pd.DataFrame([(f"a{i}", f"b{j}", f"c{k}", v)
                          for (i, j, k), v in np.ndenumerate(values)],
                         columns=["a", "b", "c", "value"])
    return Table.from_aggregated(frame, ["a", "b", "c"])


def hierarchical(values: np.ndarray, groups: list[int]) -> Table:
    """Rows: Total -> g0, g1, ... -> leaves (``groups`` leaves each); flat columns."""
    parents, leaves = {}, []
    for g, size in enumerate(groups):
        parents[f"g{g}"] = "Total"
        for k in range(size):
            parents[f"l{g}{k}"] = f"g{g}"
            leaves.append(f"l{g}{k}")
    frame = pd.DataFrame([(leaves[i], f"c{j}", v) for (i, j), v in np.ndenumerate(values)],
                         columns=["r", "c", "value"])
    return Table.from_aggregated(frame, ["r", "c"],
                                 hierarchies={"r": Hierarchy.from_parent_child(parents)})


def mark(table: Table, cells: np.ndarray, share: float = 0.25) -> Table:
    """Status ``u`` on ``cells`` with levels ``max(1, round(share * value))``."""
    status = np.full(table.n_cells, "s", dtype=object)
    status[cells] = "u"
    level = np.zeros(table.n_cells)
    level[cells] = np.maximum(1.0, np.round(share * table.values[cells]))
    return table.with_columns(status=status, lpl=level, upl=level)


#: Cox's 4 x 9 magnitude table (slide 27), its 7 sensitive cells with their protection
#: limits, and the table the slide publishes after CTA.
SLIDE_VALUES = np.array([[167, 317, 1284, 587, 4490, 3981, 2442, 1150, 70],
                         [57, 1487, 172, 667, 1006, 327, 1683, 1138, 46],
                         [616, 202, 1899, 1098, 2172, 3825, 4372, 300, 787],
                         [0, 36, 0, 16, 0, 0, 65, 0, 140]], dtype=float)
SLIDE_LEVELS = {(0, 8): 21, (1, 0): 1, (1, 8): 7, (2, 7): 40, (3, 1): 10, (3, 3): 4,
                (3, 8): 40}
SLIDE_ADJUSTED = np.array([[167, 317, 1276, 587, 4490, 3981, 2442, 1150, 91],
                           [56, 1487, 172, 667, 1006, 327, 1683, 1138, 39],
                           [617, 196, 1899, 1095, 2172, 3825, 4372, 260, 797],
                           [0, 26, 0, 12, 0, 0, 65, 0, 180]], dtype=float)


def slide_table(scale: float = 1.0) -> tuple[Table, np.ndarray]:
    """The slide's table (values / ``scale`` rounded, levels rounded up) and the slide's
    published values (meaningful for ``scale = 1``)."""
    table = grid(np.round(SLIDE_VALUES / scale))
    positions = [table.cells.index.get_loc((f"r{i}", f"c{j}")) for i, j in SLIDE_LEVELS]
    level = np.zeros(table.n_cells)
    level[positions] = np.ceil(np.array(list(SLIDE_LEVELS.values())) / scale)
    status = np.where(level > 0, "u", "s").astype(object)
    table = table.with_columns(status=status, lpl=level, upl=level)
    published = grid(SLIDE_ADJUSTED).cells["value"].reindex(table.cells.index).to_numpy()
    return table, published


@st.composite
def sensitive_tables(draw, max_sensitive: int = 3):
    """Random 2-D, 3-D and hierarchical tables of values 1..40 with 1-3 sensitive cells."""
    kind = draw(st.sampled_from(["2d", "3d", "hierarchical"]))
    if kind == "2d":
        shape = (draw(st.integers(2, 4)), draw(st.integers(2, 4)))
    elif kind == "3d":
        shape = (2, draw(st.integers(2, 3)), draw(st.integers(2, 3)))
    else:
        groups = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
        shape = (sum(groups), draw(st.integers(2, 3)))
    size = int(np.prod(shape))
    values = np.reshape(draw(st.lists(st.integers(1, 40), min_size=size, max_size=size)),
                        shape).astype(float)
    table = {"2d": grid, "3d": cube}[kind](values) if kind != "hierarchical" \
        else hierarchical(values, groups)
    interior = np.flatnonzero(~table.total_cells)
    count = draw(st.integers(1, min(max_sensitive, len(interior) - 1)))
    chosen = draw(st.lists(st.sampled_from(list(interior)), min_size=count, max_size=count,
                           unique=True))
    return mark(table, np.array(chosen))


# -- an independent solver: every direction enumerated, each an LP ------------------------------


def enumerate_l1(table: Table, weights: np.ndarray, fixed: np.ndarray | None = None,
                 candidates: list[tuple[bool, ...]] | None = None
                 ) -> tuple[float, tuple[bool, ...]]:
    """min over all directions (or over ``candidates``) of the L1 LP in ``(p, q)``, built
    here from the table alone (default bounds: 0 <= a + y; sensitive moves at most the sum
    of all levels)."""
    a = table.values
    n = table.n_cells
    cells = table.cells
    status = cells["status"].to_numpy()
    sensitive = np.flatnonzero(status == "u")
    lpl = cells["lpl"].to_numpy()[sensitive]
    upl = cells["upl"].to_numpy()[sensitive]
    cap = float(np.sum(np.maximum(lpl, upl)))
    keep = (status == "z") | (np.zeros(n, bool) if fixed is None else fixed)
    A = table.A.toarray()
    best = (np.inf, ())
    if candidates is None:
        candidates = itertools.product([True, False], repeat=len(sensitive))
    for directions in candidates:
        p_bounds = [(0.0, 0.0 if keep[j] else None) for j in range(n)]
        q_bounds = [(0.0, 0.0 if keep[j] else a[j]) for j in range(n)]
        for k, (i, up) in enumerate(zip(sensitive, directions, strict=True)):
            if up:
                p_bounds[i], q_bounds[i] = (upl[k], cap), (0.0, 0.0)
            elif a[i] - lpl[k] >= 0:
                p_bounds[i], q_bounds[i] = (0.0, 0.0), (lpl[k], min(cap, a[i]))
            else:
                break
        else:
            result = linprog(np.concatenate([weights, weights]), A_eq=np.hstack([A, -A]),
                             b_eq=np.zeros(len(A)), bounds=p_bounds + q_bounds,
                             method="highs")
            if result.status == 0 and result.fun < best[0]:
                best = (result.fun, directions)
    return best


# -- L1 CTA ------------------------------------------------------------------------------------


def random_marked_grid(seed: int, weights: str) -> tuple[Table, np.ndarray]:
    """A 3 x 4 grid of values 1..29 with 4 sensitive interior cells (levels 40 %) and its
    weights (values >= 1: inverse weights are ``1 / value``)."""
    rng = np.random.default_rng(seed)
    table = grid(rng.integers(1, 30, (3, 4)).astype(float))
    interior = np.flatnonzero(~table.total_cells)
    table = mark(table, rng.choice(interior, 4, replace=False), share=0.4)
    return table, np.ones(table.n_cells) if weights == "count" else 1 / table.values


def test_slide_27_solution_verifies_and_milp_beats_it():
    table, published = slide_table()
    check = verify_adjustment(table, published)
    assert check.passed and check.additive and check.protected
    slide_l1 = float(np.abs(published - table.values).sum())
    assert slide_l1 == 378.0
    result = adjust(table, "milp", "count")
    assert result.status == "optimal" and result.verification.passed
    assert result.objective == pytest.approx(224.0, abs=1e-6)
    assert result.objective < slide_l1
    assert result.objective == pytest.approx(enumerate_l1(table, np.ones(table.n_cells))[0],
                                             abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["count", "inverse"])
def test_fixed_directions_is_the_lp_of_its_directions_with_a_valid_bound(seed, weights):
    table, w = random_marked_grid(seed, weights)
    best, _ = enumerate_l1(table, w)
    result = adjust(table, "fixed-directions", weights, seed=0)
    assert result.verification.passed
    own, _ = enumerate_l1(table, w, candidates=[tuple(result.up)])
    assert result.objective == pytest.approx(own, rel=1e-7)
    assert result.objective >= best * (1 - 1e-9)
    assert result.bound is not None and result.bound <= best * (1 + 1e-9)
    assert result.details["trials"] == 0 and "milp_bound" not in result.details


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["count", "inverse"])
def test_milp_equals_enumeration_of_directions(seed, weights):
    table, w = random_marked_grid(seed, weights)
    best, directions = enumerate_l1(table, w)
    result = adjust(table, "milp", weights)
    assert result.status == "optimal" and result.verification.passed
    assert result.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
    heuristic = adjust(table, "heuristic", weights, seed=seed)
    assert heuristic.verification.passed
    assert heuristic.objective >= best - 1e-7
    assert heuristic.bound <= best + 1e-7
    assert heuristic.gap == pytest.approx((heuristic.objective - heuristic.bound)
                                          / heuristic.objective)


def test_fixed_cells_totals_and_capacities_are_kept():
    rng = np.random.default_rng(11)
    table = grid(rng.integers(5, 30, (3, 3)).astype(float))
    interior = np.flatnonzero(~table.total_cells)
    table = mark(table, interior[[0, 4]], share=0.3)
    fixed = np.zeros(table.n_cells, dtype=bool)
    fixed[interior[1]] = True
    result = adjust(table, "milp", "count", fixed=fixed, fix_totals=True)
    assert result.verification.passed
    y = result.adjustment
    assert y[interior[1]] == 0 and np.all(y[table.total_cells] == 0)
    sensitive_total = mark(table, np.flatnonzero(table.total_cells)[1:2])
    with pytest.raises(InputError, match="infeasible"):
        adjust(sensitive_total, "milp", "count", fix_totals=True)
    best, _ = enumerate_l1(table, np.ones(table.n_cells), fixed | table.total_cells)
    assert result.objective == pytest.approx(best, abs=1e-7)
    capped = adjust(table, "milp", "count", capacity=3.0)
    plain = np.setdiff1d(np.arange(table.n_cells), capped.sensitive)
    assert np.all(np.abs(capped.adjustment[plain]) <= 3.0 + 1e-9)
    relative = adjust(table, "milp", "count", relative_capacity=0.5)
    assert np.all(np.abs(relative.adjustment[plain]) <= 0.5 * table.values[plain] + 1e-9)


def test_cost_column_user_costs_and_errors():
    table = mark(grid(np.array([[10.0, 20.0], [30.0, 40.0]])), np.array([4]))
    user = np.linspace(1, 2, table.n_cells)
    result = adjust(table, "milp", user)
    assert result.objective == pytest.approx(enumerate_l1(table, user)[0], abs=1e-7)
    column = adjust(table.with_columns(cost=user), "milp", "cost")
    assert column.objective == pytest.approx(result.objective)
    with pytest.raises(InputError, match="unknown cost 'bogus'; choose one of count"):
        adjust(table, "milp", "bogus")
    with pytest.raises(InputError, match="cost -1"):
        adjust(table, "milp", -user)
    with pytest.raises(InputError, match="unknown method 'simplex'; choose one of milp"):
        adjust(table, "simplex")
    with pytest.raises(InputError, match="sensitive and cannot be fixed"):
        adjust(table, "milp", fixed=np.arange(table.n_cells) == 4)
    stuck = table.with_columns(lpl=np.where(np.arange(9) == 4, 50.0, 0.0),
                               ub=table.values)
    upl = stuck.cells["upl"].to_numpy()[4]
    closest = "upl to 0" if upl <= 50.0 - table.values[4] else f"lpl to {table.values[4]:g}"
    with pytest.raises(InputError, match=f"cannot be protected.*closest protectable levels: "
                                         f"lower {closest} "):
        adjust(stuck, "milp")


def test_one_way_cells_are_protected_upward():
    """lpl above the value with lb = 0: only the upward move is possible (Castro's TABLE7)."""
    table = grid(np.array([[3.0, 20.0], [30.0, 40.0]]))
    level = np.where(np.arange(9) == 4, 5.0, 0.0)
    table = table.with_columns(status=np.where(level > 0, "u", "s"), lpl=level, upl=level)
    for method in ("milp", "heuristic", "l2"):
        result = adjust(table, method, "count")
        assert result.verification.passed
        assert result.up.tolist() == [True]
        assert result.details["forced_directions"] == 1


# -- the heuristic on the Castro instances ---------------------------------------------------


def test_heuristic_on_castro_targus_certifies_its_gap():
    table = Table.from_jj(DATA / "jj" / "castro" / "TARGUS.jj")
    result = adjust(table, "heuristic", "inverse", time_limit=5, seed=0)
    exact = adjust(table, "milp", "inverse", time_limit=20)
    assert result.verification.passed and exact.verification.passed
    assert exact.status == "optimal"
    assert result.bound <= exact.objective + 1e-6 <= result.objective + 2e-6
    assert result.gap <= 0.05


# -- L2 CTA ------------------------------------------------------------------------------------


def assert_l2_optimal(table: Table, result, up: np.ndarray, tol: float = 1e-6) -> None:
    """KKT certificate of ``min sum w y^2, A y = 0, lower <= y <= upper``: multipliers
    ``lam`` with ``2 w y + A' lam = 0`` on the cells strictly inside their bounds, and the
    remaining gradient pushing against the active bounds (computed here from the table)."""
    problem = build_problem(table, "inverse")
    lower, upper = problem.bounds(up)
    y = result.adjustment
    A = table.A.toarray()
    gradient = 2 * problem.cost * y
    scale = tol * max(1.0, np.abs(y).max())
    assert np.all(y >= lower - scale) and np.all(y <= upper + scale)
    free = (y > lower + scale) & (y < upper - scale)
    lam = np.linalg.lstsq(A[:, free].T, -gradient[free], rcond=None)[0]
    reduced = gradient + A.T @ lam
    assert np.abs(reduced[free]).max(initial=0) <= tol
    assert np.all(reduced[~free & (y <= lower + scale)] >= -tol)
    assert np.all(reduced[~free & (y >= upper - scale)] <= tol)


@pytest.mark.parametrize("seed", range(4))
def test_l2_fixed_directions_and_enumeration(seed):
    rng = np.random.default_rng(seed)
    table = mark(grid(rng.integers(5, 30, (3, 3)).astype(float)),
                 rng.choice(np.flatnonzero(~grid(np.ones((3, 3))).total_cells), 3,
                            replace=False), share=0.3)
    optima = {}
    for directions in itertools.product([True, False], repeat=3):
        up = np.array(directions)
        result = adjust(table, "l2", "inverse", directions=up)
        assert result.verification.passed
        optima[directions] = result.objective
        assert_l2_optimal(table, result, up)
    best = min(optima.values())
    free = adjust(table, "l2", "inverse", seed=seed)
    assert free.verification.passed
    assert free.objective >= best - 1e-9
    assert free.bound <= best + 1e-9
    up_only = adjust(table, "l2", "inverse", directions="up")
    assert up_only.objective == pytest.approx(optima[(True, True, True)])


# -- QP-CTA and multivariate CTA ---------------------------------------------------------------


def preserved_residuals(result) -> dict[str, float]:
    """Mean and variance rows recomputed from the tables (not from the solver's rows)."""
    cells = np.flatnonzero(~result.table.total_cells)
    a, y = result.original.values[cells], result.adjustment[cells]
    scale = max(1.0, float(np.abs(y).sum()))
    return {"mean": abs(y.sum()) / scale,
            "variance": abs((a - a.mean()) @ y) / (scale * np.abs(a - a.mean()).max())}


@given(table=sensitive_tables(), method=st.sampled_from(["milp", "heuristic", "l2"]))
def test_qp_cta_keeps_mean_and_variance_to_1e_9(table, method):
    interior = ~table.total_cells
    if np.ptp(table.values[interior]) == 0:
        return
    try:
        result = adjust(table, method, "inverse", preserve="mean,variance", seed=0)
    except InputError as error:  # e.g. a single free interior cell: no room for both rows
        assert "no adjustment satisfies" in str(error)
        with pytest.raises(InputError, match="MILP is infeasible"):  # the exact method agrees
            adjust(table, "milp", "inverse", preserve="mean,variance")
        return
    assert result.verification.passed
    residuals = preserved_residuals(result)
    assert residuals["mean"] <= 1e-9 and residuals["variance"] <= 1e-9
    stats = result.statistics.loc["interior"]
    assert stats.mean_after == pytest.approx(stats.mean_before, rel=1e-9, abs=1e-9)
    assert stats.variance_after >= stats.variance_before - 1e-6 * stats.variance_before


def test_correlation_limit_holds():
    rng = np.random.default_rng(5)
    table = mark(grid(rng.integers(5, 60, (5, 5)).astype(float)),
                 np.flatnonzero(~grid(np.ones((5, 5))).total_cells)[[0, 7, 13]], share=0.3)
    for rho in (0.9, 0.95):
        result = adjust(table, "milp", "inverse", preserve="correlation",
                        min_correlation=rho)
        assert result.verification.passed
        assert result.statistics.loc["interior"].correlation >= rho - 1e-9


def test_multivariate_keeps_covariance_cross_terms():
    rng = np.random.default_rng(2)
    base = rng.integers(5, 40, (3, 4)).astype(float)
    interior = np.flatnonzero(~grid(base).total_cells)
    tables = [mark(grid(base + k * rng.integers(0, 5, base.shape)),
                   rng.choice(interior, 2, replace=False)) for k in range(3)]
    result = adjust_multivariate(tables, "milp")
    assert result.passed and result.status == "optimal"
    for row in result.covariance.itertuples():
        assert row.after - row.second_order == pytest.approx(row.before, rel=1e-9, abs=1e-9)
    for r in result.results:
        assert preserved_residuals(r)["mean"] <= 1e-9
    assert "covariance" in result.summary() and len(result.to_frame()) == 3 * 20
    json.dumps(result.to_dict())
    with pytest.raises(InputError, match="unknown option"):
        adjust_multivariate(tables, capacities=1)
    with pytest.raises(InputError, match="at least two"):
        adjust_multivariate(tables[:1])


# -- every method on random tables -------------------------------------------------------------


@given(table=sensitive_tables(), method=st.sampled_from(["milp", "heuristic", "l2"]),
       cost=st.sampled_from(["count", "inverse"]))
def test_every_result_is_additive_protected_and_certified(table, method, cost):
    result = adjust(table, method, cost, seed=1)
    v = result.verification
    assert v.passed and v.additive and v.protected and v.within_bounds
    assert np.abs(table.A @ result.values - table.b).max() <= 1e-9 * max(
        1.0, np.abs(result.values).max())
    assert result.bound is not None and result.bound <= result.objective + 1e-9
    if method == "milp":
        assert result.status == "optimal"
    if result.status == "optimal":
        assert result.gap <= 1e-6


# -- verification and the result object --------------------------------------------------------


def test_verification_catches_each_failure():
    table, published = slide_table()
    broken = published.copy()
    broken[table.cells.index.get_loc(("r0", "c8"))] = 80.0  # inside [49, 91], not additive
    check = verify_adjustment(table, broken)
    assert not check.additive and not check.protected and check.n_unprotected == 1
    negative = published.copy()
    negative[[table.cells.index.get_loc(("r0", "c0")), table.cells.index.get_loc(("r1", "c0"))]] \
        += [-200.0, 200.0]
    assert not verify_adjustment(table, negative).within_bounds
    fixed = np.zeros(table.n_cells, dtype=bool)
    fixed[table.cells.index.get_loc(("r0", "c2"))] = True
    assert not verify_adjustment(table, published, fixed=fixed).fixed_unchanged


def test_result_renders_summary_frame_report_and_json(tmp_path):
    table, _ = slide_table()
    result = adjust(table, "milp", "inverse", preserve="mean,variance")
    text = result.summary()
    assert "optimal" in text and "all checks passed" in text
    frame = result.to_frame()
    assert frame.loc[("r0", "c8"), "protected"] and frame["direction"].ne("").sum() == 7
    data = result.to_dict()
    for key in ("status", "objective", "bound", "gap", "l1_distance", "additive", "protected"):
        assert key in data
    assert data["additive"] is True and data["protected"] is True
    json.dumps(data)
    path = Report("CTA").add(result.to_report()).save(tmp_path / "r.html")
    html = path.read_text()
    assert "data:image/png;base64" in html and "Sensitive cells" in html


def test_no_sensitive_cell_is_a_zero_adjustment():
    table = grid(np.array([[1.0, 2.0], [3.0, 4.0]]))
    result = adjust(table, "heuristic")
    assert result.status == "optimal" and result.objective == 0
    assert np.array_equal(result.values, table.values)


def test_sparse_relations_of_a_large_grid_stay_sparse():
    """Models are built from arrays: a 60 x 60 grid solves in one heuristic call."""
    rng = np.random.default_rng(0)
    table = grid(rng.integers(1, 100, (60, 60)).astype(float))
    interior = np.flatnonzero(~table.total_cells)
    table = mark(table, rng.choice(interior, 180, replace=False), share=0.15)
    result = adjust(table, "heuristic", "inverse", time_limit=3, seed=0)
    assert result.verification.passed
    assert 0 <= result.gap < 0.05
    assert sp.issparse(table.A)


def test_conflicting_rounded_directions_are_repaired_in_the_rounding():
    """Total 15 = sensitive part 10 + fixed part 5: the cheaper own moves (total up by 1,
    part down by 1) contradict each other in a relation whose other cell cannot move; the
    rounding turns the less sure of the two round, which is optimal here."""
    cells = pd.DataFrame({"value": [15.0, 10.0, 5.0], "status": ["u", "u", "z"],
                          "lpl": [4.0, 1.0, 0.0], "upl": [1.0, 4.0, 0.0]})
    table = Table(cells, [[-1, 1, 1]], [0])
    result = adjust(table, "fixed-directions", "count", seed=0)
    assert "repaired" not in result.message
    assert result.objective == pytest.approx(enumerate_l1(table, np.ones(3))[0]) == 8.0
    # total and part both up by 4 or both down by 4: the consistent choices, both optimal
    assert result.verification.passed and result.up[0] == result.up[1]
