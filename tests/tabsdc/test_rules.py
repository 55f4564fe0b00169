import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabsdc import (
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    RuleError,
    Table,
    apply_rules,
)
from tabsdc._rules import p_percent_sensitivity, pq_sensitivity


def table_of(cells: dict[str, list[float]]) -> Table:
    rows = [(name, x) for name, xs in cells.items() for x in xs]
    data = pd.DataFrame(rows, columns=["cell", "x"])
    return Table.from_microdata(data, ["cell"], "x", top=3)


def test_hand_computed_protection_levels():
    # A: X = 115, x1 = 100, x2 = 10
    table = table_of({"A": [100, 10, 5], "B": [40, 35, 30], "C": [7]})
    cells = table.cells
    _, upl = PPercentRule(10).evaluate(cells)
    assert upl[cells.index.get_loc("A")] == pytest.approx(0.10 * 100 - 5)  # 5
    assert upl[cells.index.get_loc("B")] == 0  # 0.1*40 - 30 < 0
    assert upl[cells.index.get_loc("C")] == pytest.approx(0.7)  # single contributor: p x1
    _, upl = PQRule(10, 50).evaluate(cells)
    assert upl[cells.index.get_loc("A")] == pytest.approx(0.2 * 100 - 5)  # 15
    _, upl = DominanceRule(1, 85).evaluate(cells)
    assert upl[cells.index.get_loc("A")] == pytest.approx(100 / 85 * 100 - 115)
    _, upl = DominanceRule(2, 80).evaluate(cells)
    assert upl[cells.index.get_loc("A")] == pytest.approx(100 / 80 * 110 - 115)
    assert upl[cells.index.get_loc("B")] == 0  # 75 / 105 = 71 % < 80 %
    sensitive, upl = FrequencyRule(3, level=20).evaluate(cells)
    assert sensitive.tolist() == [False, False, False, True]  # Total, A, B, C
    assert upl[3] == pytest.approx(0.2 * 7)


def test_apply_rules_takes_largest_level_and_symmetric_lower_level():
    table = table_of({"A": [100, 10, 5], "B": [40, 35, 30], "C": [7]})
    result = apply_rules(table, [PPercentRule(10), DominanceRule(1, 85), FrequencyRule(3)],
                         lower_ratio=0.5)
    cells = result.table.cells
    assert cells["status"].tolist() == ["s", "u", "s", "u"]
    assert cells.loc["A", "upl"] == pytest.approx(5.0)  # p%: 5 > dominance: 2.647
    assert cells.loc["A", "lpl"] == pytest.approx(2.5)
    assert result.levels.loc["A", "(1,85)-dominance"] == pytest.approx(100 / 85 * 100 - 115)
    assert cells.loc["A", "rules"] == "p%(p=10), (1,85)-dominance"
    assert cells.loc["C", "rules"] == "p%(p=10), (1,85)-dominance, freq(n=3)"
    assert list(result.to_frame().index) == ["A", "C"]
    assert "primary (any rule)" in result.summary()
    assert (table.cells["status"] == "s").all()  # input untouched


@given(st.lists(st.floats(0.01, 1e6), min_size=1, max_size=12), st.floats(1, 60),
       st.floats(1.5, 40))
def test_rules_agree_with_cox_sensitivity_functions(contributions, p, ratio):
    q = min(100.0, p * ratio)
    table = table_of({"A": contributions})
    cells = table.cells.loc[["A"]]
    s_p = p_percent_sensitivity(contributions, p / 100)
    s_pq = pq_sensitivity(contributions, p / 100, q / 100)
    sens_p, upl_p = PPercentRule(p).evaluate(cells)
    scale = max(contributions) * 1e-9 * (1 + len(contributions))
    # upl = p * S_p and sensitive <=> S_p > 0 (away from the rounding band)
    raw = p / 100 * s_p
    if abs(raw) > scale:
        assert bool(sens_p[0]) == (s_p > 0)
    if sens_p[0]:
        assert upl_p[0] == pytest.approx(raw, rel=1e-9, abs=scale)
    if q > p:
        sens_pq, upl_pq = PQRule(p, q).evaluate(cells)
        raw_pq = p / q * s_pq
        if abs(raw_pq) > scale:
            assert bool(sens_pq[0]) == (s_pq > 0)
        if sens_pq[0]:
            assert upl_pq[0] == pytest.approx(raw_pq, rel=1e-9, abs=scale)
        # every p%-sensitive cell is p/q-sensitive
        assert not sens_p[0] or sens_pq[0]


def test_pq_with_q_100_is_p_percent():
    table = table_of({"A": [50, 30, 10, 5], "B": [9, 8, 7, 6, 5]})
    a = PPercentRule(15).evaluate(table.cells)
    b = PQRule(15, 100).evaluate(table.cells)
    np.testing.assert_allclose(a[1], b[1])


def test_zero_and_empty_cells_are_not_sensitive_to_magnitude_rules():
    data = pd.DataFrame({"r": ["A", "A", "B", "C"], "g": ["x", "x", "x", "y"],
                         "v": [0.0, 0.0, 5.0, 4.0]})
    table = Table.from_microdata(data, ["r", "g"], "v")
    result = apply_rules(table, [PPercentRule(10)])
    cells = result.table.cells
    assert cells.loc[("A", "x"), "status"] == "s"  # zero with contributors
    assert cells.loc[("A", "y"), "status"] == "z"  # empty stays published
    assert cells.loc[("B", "x"), "status"] == "u"  # single contributor
    freq = apply_rules(table, FrequencyRule(3, minimum=1)).table.cells
    assert freq.loc[("A", "x"), "status"] == "u" and freq.loc[("A", "x"), "upl"] == 1


def test_negative_contributions_need_a_decision():
    data = pd.DataFrame({"r": ["A", "A", "B", "B"], "v": [10.0, -2.0, 5.0, 6.0]})
    with pytest.raises(RuleError, match="2 cell.*negative contributions, first cell 'Total'"):
        apply_rules(Table.from_microdata(data, ["r"], "v"), PPercentRule(10))
    result = apply_rules(Table.from_microdata(data, ["r"], "v", negative="absolute"),
                         PPercentRule(10))
    # |contributions| 10, 2: X = 12, upl = 1 - 0 = 1
    assert result.table.cells.loc["A", "upl"] == pytest.approx(1.0)


def test_missing_inputs_are_named():
    table = Table.from_aggregated(pd.DataFrame({"r": ["A"], "value": [3.0]}), ["r"])
    with pytest.raises(RuleError, match="'x1' is missing"):
        apply_rules(table, PPercentRule())
    with pytest.raises(RuleError, match="'freq'"):
        apply_rules(table, FrequencyRule())
    with pytest.raises(RuleError, match="0 < p < q"):
        PQRule(50, 20)
    shallow = Table.from_microdata(pd.DataFrame({"r": ["A"], "v": [1.0]}), ["r"], "v", top=2)
    with pytest.raises(RuleError, match="'x3' is missing"):
        apply_rules(shallow, DominanceRule(3, 80))


def test_rules_on_aggregated_table_with_given_largest_contributions():
    frame = pd.DataFrame({"r": ["A", "B"], "value": [115.0, 105.0], "n": [3, 3],
                          "max1": [100.0, 40.0], "max2": [10.0, 35.0]})
    table = Table.from_aggregated(frame, ["r"], freq="n", top=["max1", "max2"])
    assert table.cells.loc["Total", ["x1", "x2"]].tolist() == [100.0, 40.0]
    result = apply_rules(table, PPercentRule(10))
    # Total: 0.1*100 - (220 - 100 - 40) < 0; A: 10 - 5 = 5; B: 4 - 30 < 0
    assert result.table.cells["status"].tolist() == ["s", "u", "s"]
    assert result.table.cells.loc["A", "upl"] == pytest.approx(5.0)
