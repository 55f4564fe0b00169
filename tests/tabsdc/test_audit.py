import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc import Table
from tabsdc.audit import audit, cycle_pq_attack, pq_interval_attack

from ..conftest import DATA


def two_way(values: list[list[float]], hidden: dict[tuple[int, int], str],
            levels: dict[tuple[int, int], float] | None = None) -> Table:
    """A table of interior ``values`` (rows x columns) with some interior cells hidden."""
    rows = [(str(i + 1), str(j + 1), float(v)) for i, row in enumerate(values)
            for j, v in enumerate(row)]
    table = Table.from_aggregated(pd.DataFrame(rows, columns=["r", "c", "value"]), ["r", "c"])
    status = pd.Series("s", index=table.cells.index)
    level = pd.Series(0.0, index=table.cells.index)
    for (i, j), letter in hidden.items():
        status[(str(i), str(j))] = letter
    for (i, j), r in (levels or {}).items():
        level[(str(i), str(j))] = r
    return table.with_columns(status=status.to_numpy(), lpl=level.to_numpy(),
                              upl=level.to_numpy())


def intervals(result) -> dict:
    f = result.frame
    return {key: (row.lower, row.upper) for key, row in zip(f.index, f.itertuples(), strict=True)}


CYCLE = {(1, 1): "u", (1, 2): "m", (2, 1): "m", (2, 2): "m"}


def test_tau_argus_manual_example():
    table = Table.from_jj(DATA / "jj" / "examples" / "taumanual_audit_example.jj")
    result = audit(table)
    assert intervals(result) == {4: (3, 6), 5: (1, 4), 7: (0, 3), 8: (0, 3)}
    assert result.protected


def test_slides_cycle_protected():
    # slides 18-20: x = 10, b = 5 | 15; c = 7, a = 8 | 15; r = 2
    result = audit(two_way([[10, 5], [7, 8]], CYCLE, {(1, 1): 2}))
    assert intervals(result) == {("1", "1"): (2, 15), ("1", "2"): (0, 13),
                                 ("2", "1"): (2, 15), ("2", "2"): (0, 13)}
    assert result.protected
    # slide 21: width (b + a) / 2 = 6.5 and midpoint x + (b - a) / 2 = 8.5
    lo, hi = intervals(result)[("1", "1")]
    assert ((hi - lo) / 2, (hi + lo) / 2) == (6.5, 8.5)


def test_slides_cycle_with_a_1_fails_downward():
    result = audit(two_way([[10, 5], [7, 1]], CYCLE, {(1, 1): 2}))
    assert intervals(result)[("1", "1")] == (9, 15)
    row = result.frame.loc[("1", "1")]
    assert not row["lower_ok"] and row["upper_ok"]
    assert row["lower_shortfall"] == pytest.approx(1.0)  # needs <= 8, gets 9
    assert not result.protected
    assert "NOT PROTECTED" in result.summary()


def test_slides_four_by_four_reveals_d11():
    values = [[1, 6, 4, 9], [6, 5, 3, 6], [3, 5, 5, 2], [8, 5, 6, 6]]
    hidden = {(1, 1): "u", (1, 2): "m", (1, 3): "m", (2, 2): "m", (2, 3): "m",
              (3, 1): "m", (3, 4): "m", (4, 1): "m", (4, 4): "m"}
    table = two_way(values, hidden, {(1, 1): 1})
    assert table.cells.loc[("Total", "Total"), "value"] == 80
    assert table.pivot("r", "c").loc["Total"].tolist() == [80, 18, 21, 18, 23]
    result = audit(table)
    assert intervals(result)[("1", "1")] == (1, 1)
    assert result.frame.loc[("1", "1"), "exact"]
    assert not result.protected
    assert result.frame["exact"].sum() == 1


def test_slides_three_way_table_is_fully_disclosed():
    layers = [[[1, 5, 5], [5, 0, 0], [5, 0, 0]], [[0, 5, 0], [5, 1, 5], [0, 5, 0]],
              [[0, 0, 5], [0, 0, 5], [5, 5, 1]]]
    rows = [(str(i), str(j), str(k), float(layers[i][j][k]))
            for i, j, k in itertools.product(range(3), repeat=3)]
    table = Table.from_aggregated(pd.DataFrame(rows, columns=["a", "b", "c", "value"]),
                                  ["a", "b", "c"])
    interior = np.array([all(code != "Total" for code in key) for key in table.cells.index])
    ones = interior & (table.values == 1)
    status = np.where(ones, "u", np.where(interior, "m", "s"))
    table = table.with_columns(status=status, lpl=np.where(ones, 1.0, 0.0),
                               upl=np.where(ones, 1.0, 0.0))
    result = audit(table)
    assert len(result.frame) == 27
    assert result.frame["exact"].all()
    np.testing.assert_allclose(result.frame["lower"], result.frame["value"], atol=1e-9)
    assert (~result.frame.loc[result.frame["status"] == "u", "protected"]).all()


def odd_cycle_table() -> Table:
    """x1 + x2 <= 1, x2 + x3 <= 1, x1 + x3 <= 1 (slack cells), z = x1 + x2 + x3 hidden:
    LP max z = 1.5, integer max z = 1."""
    names = ["T12", "T23", "T13", "x1", "x2", "x3", "s12", "s23", "s13", "z"]
    values = [1, 1, 1, 1, 0, 0, 0, 1, 0, 1]
    A = sp.csr_array(np.array([
        [-1, 0, 0, 1, 1, 0, 1, 0, 0, 0],
        [0, -1, 0, 0, 1, 1, 0, 1, 0, 0],
        [0, 0, -1, 1, 0, 1, 0, 0, 1, 0],
        [0, 0, 0, 1, 1, 1, 0, 0, 0, -1],
    ], dtype=float))
    status = ["s"] * 3 + ["m"] * 6 + ["u"]
    cells = pd.DataFrame({"value": values, "status": status, "upl": [0] * 9 + [0.5],
                          "lpl": [0] * 9 + [0.5]}, index=pd.Index(names, name="cell"))
    return Table(cells, A, np.zeros(4))


def test_integer_bounds_tighter_than_lp_bounds():
    table = odd_cycle_table()
    table.check_additivity(tol=0)
    lp = audit(table)
    assert lp.frame.loc["z", "upper"] == pytest.approx(1.5)
    assert lp.protected  # LP: max z = 1.5 reaches z + upl = 1.5

    exact = audit(table, integer=True)
    row = exact.frame.loc["z"]
    assert (row["lower"], row["upper"]) == (0, 1)
    assert row["upper_lp"] == pytest.approx(1.5)
    assert row["integer_tighter"]
    assert not row["upper_ok"] and not exact.protected  # integer: max z = 1
    assert "integer bounds tighter than LP bounds: 1 cells" in exact.summary()


@pytest.mark.parametrize("q", [5, 10, 20, 35, 50, 80])
def test_pq_interval_attack_on_the_slides_cycle(q):
    table = two_way([[10, 5], [7, 8]], CYCLE, {(1, 1): 2})
    result = audit(table, prior="pq", q=q, release_intervals=True)
    f = result.frame
    qf = q / 100
    # slide 23: l_B = (1 - q) b, u_B = (1 + q) b, l_X = x - q b, u_X = x + q b
    assert f.loc[("1", "2"), "lower"] == pytest.approx((1 - qf) * 5)
    assert f.loc[("1", "2"), "upper"] == pytest.approx((1 + qf) * 5)
    assert f.loc[("1", "1"), "lower"] == pytest.approx(10 - qf * 5)
    attack = result.pq_attack
    assert attack.q == pytest.approx(qf)
    assert attack.revealed.all()
    np.testing.assert_allclose(attack.estimates.to_numpy(), [10, 5, 7, 8])
    assert not result.protected
    assert f"q = {q:g} %" in attack.headline()
    # the slides' closed form gives the same
    closed = cycle_pq_attack(
        {"x": f.loc[("1", "1"), "lower"], "b": f.loc[("1", "2"), "lower"],
         "c": f.loc[("2", "1"), "lower"], "a": f.loc[("2", "2"), "lower"]},
        {"x": f.loc[("1", "1"), "upper"], "b": f.loc[("1", "2"), "upper"],
         "c": f.loc[("2", "1"), "upper"], "a": f.loc[("2", "2"), "upper"]})
    assert closed == pytest.approx({"q": qf, "x": 10, "b": 5, "c": 7, "a": 8})


def test_pq_attack_does_not_apply_to_intervals_from_default_bounds():
    table = two_way([[10, 5], [7, 8]], CYCLE, {(1, 1): 2})
    result = audit(table, release_intervals=True)
    assert result.pq_attack.q is None
    assert not result.pq_attack.revealed.any()  # midpoints 8.5, 6.5, 8.5, 6.5
    assert result.protected


def test_pq_attack_general_pattern():
    # a 3x3 table with a 6-cell hidden pattern (not a single 4-cycle)
    values = [[12, 7, 9], [4, 15, 6], [8, 5, 11]]
    hidden = {(1, 1): "u", (1, 2): "m", (2, 2): "m", (2, 3): "m", (3, 1): "m", (3, 3): "m"}
    table = two_way(values, hidden, {(1, 1): 1})
    result = audit(table, prior="pq", q=15, release_intervals=True)
    assert result.pq_attack.q == pytest.approx(0.15)
    assert result.pq_attack.revealed.all()
    lower, upper = result.intervals.lower, result.intervals.upper
    direct = pq_interval_attack(table, lower, upper)
    np.testing.assert_allclose(direct.estimates.to_numpy(), [12, 7, 15, 6, 8, 11])


@st.composite
def random_patterns(draw):
    n_rows, n_cols = draw(st.integers(2, 5)), draw(st.integers(2, 5))
    values = draw(st.lists(st.lists(st.integers(0, 30), min_size=n_cols, max_size=n_cols),
                           min_size=n_rows, max_size=n_rows))
    cells = list(itertools.product(range(1, n_rows + 1), range(1, n_cols + 1)))
    chosen = draw(st.lists(st.sampled_from(cells), min_size=1, max_size=len(cells), unique=True))
    return values, {cell: "m" for cell in chosen}


@given(random_patterns())
def test_intervals_contain_truth_and_agree_with_linprog(case):
    values, hidden = case
    table = two_way(values, hidden)
    result = audit(table)
    f = result.frame
    assert (f["lower"] <= f["value"] + 1e-9).all() and (f["value"] <= f["upper"] + 1e-9).all()
    # independent computation: scipy linprog over all cells with published ones fixed
    hidden_mask = table.cells["status"].eq("m").to_numpy()
    bounds = [(0, None) if h else (v, v) for h, v in zip(hidden_mask, table.values, strict=True)]
    A = table.A.toarray()
    for position in np.flatnonzero(hidden_mask):
        c = np.zeros(table.n_cells)
        c[position] = 1
        low = linprog(c, A_eq=A, b_eq=table.b, bounds=bounds, method="highs")
        high = linprog(-c, A_eq=A, b_eq=table.b, bounds=bounds, method="highs")
        key = table.cells.index[position]
        assert f.loc[[key], "lower"].iloc[0] == pytest.approx(low.fun, abs=1e-7)
        if high.status == 3:
            assert np.isposinf(f.loc[[key], "upper"].iloc[0])
        else:
            assert f.loc[[key], "upper"].iloc[0] == pytest.approx(-high.fun, abs=1e-7)


def test_audit_json_shape():
    result = audit(two_way([[10, 5], [7, 8]], CYCLE, {(1, 1): 2}))
    data = result.to_dict()
    assert data["protected"] is True
    assert data["cells"][0] == {"cell": "r=1 x c=1", "value": 10.0, "status": "u",
                                "lower": 2.0, "upper": 15.0, "lpl": 2.0, "upl": 2.0,
                                "protected": True, "exact": False}


def test_float_tables_additive_only_within_tolerance_are_audited():
    """Totals of large float values carry rounding error; the attack must still fit them."""
    values = np.array([[123456789.123, 987654321.987], [555555555.555, 111111111.111]])
    frame = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
                          "value": values.ravel()})
    table = Table.from_aggregated(frame, ["r", "c"])
    grand = table.cells.index.get_loc(("Total", "Total"))
    shifted = table.values.copy()
    shifted[grand] += 1e-7  # within the 1e-9 relative additivity tolerance, not exact
    table.with_columns(value=shifted).check_additivity()
    hidden = table.cells.index.isin([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
    status = np.where(hidden, "u", "s")
    result = audit(table.with_columns(value=shifted, status=status))
    frame = result.frame
    assert len(frame) == 4
    assert (frame["lower"] <= frame["value"] + 1e-6).all()
    assert (frame["upper"] >= frame["value"] - 1e-6).all()
    assert frame.loc[("a", "x"), "upper"] == pytest.approx(123456789.123 + 555555555.555)
