"""One validation for every entry point, and tolerances relative to the table's magnitude."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import AdditivityError, InputError, Table
from tabsdc._units import working_unit
from tabsdc._validation import in_working_units, validate_table
from tabsdc.audit import audit
from tabsdc.cli import main
from tabsdc.io._jj import parse_jj
from tabsdc.suppression import suppress
from tests.conftest import examples

#: The tau-ARGUS manual's audit example (12 cells, 4 primaries); its intervals are known:
#: cells 4, 5, 7, 8 lie in [3, 6], [1, 4], [0, 3], [0, 3].
TAU_MANUAL_EXAMPLE = """0
12
0 16 1 s 0 100 0 0 0
1 9 1 s 0 100 0 0 0
2 7 1 s 0 100 0 0 0
3 7 1 s 0 100 0 0 0
4 4 1 u 0 100 1 1 0
5 3 1 u 0 100 1 1 0
6 3 1 s 0 100 0 0 0
7 2 1 u 0 100 1 1 0
8 1 1 u 0 100 1 1 0
9 6 1 s 0 100 0 0 0
10 3 1 s 0 100 0 0 0
11 3 1 s 0 100 0 0 0
7
0 4 : 0 (-1) 3 (1) 6 (1) 9 (1)
0 4 : 1 (-1) 4 (1) 7 (1) 10 (1)
0 4 : 2 (-1) 5 (1) 8 (1) 11 (1)
0 3 : 0 (-1) 1 (1) 2 (1)
0 3 : 3 (-1) 4 (1) 5 (1)
0 3 : 6 (-1) 7 (1) 8 (1)
0 3 : 9 (-1) 10 (1) 11 (1)
"""
KNOWN_LOWER, KNOWN_UPPER = [3.0, 1.0, 0.0, 0.0], [6.0, 4.0, 3.0, 3.0]


def scaled(table: Table, factor: float) -> Table:
    """Every value, bound, protection level and right-hand side times ``factor``."""
    cells = table.cells.copy()
    for column in ("value", "cost", "lb", "ub", "lpl", "upl", "spl"):
        cells[column] = cells[column] * factor
    return Table(cells, table.A, table.b * factor, table.hierarchies)


def with_hidden(table: Table, status: list[str]) -> Table:
    return table.with_columns(status=status)


@pytest.mark.parametrize("k", [-9, -7, -6, -3, 0, 4, 7, 9, 12])
def test_audit_intervals_scale_with_the_table(k):
    table = scaled(parse_jj(TAU_MANUAL_EXAMPLE), 10.0**k)
    result = audit(table)
    assert result.protected
    assert not result.frame["exact"].any()
    np.testing.assert_allclose(result.frame["lower"] / 10.0**k, KNOWN_LOWER, atol=1e-9)
    np.testing.assert_allclose(result.frame["upper"] / 10.0**k, KNOWN_UPPER, atol=1e-9)


def test_working_unit_leaves_ordinary_tables_alone():
    assert working_unit(np.array([0.0, 1.0, 1e6])) == 1.0
    assert working_unit(np.zeros(3)) == 1.0
    assert working_unit(np.array([7e-9])) == 1e-12
    assert working_unit(np.array([-2.5e10])) == 1e7
    table = parse_jj(TAU_MANUAL_EXAMPLE)
    assert in_working_units(table) == (table, 1.0)
    tiny, unit = in_working_units(scaled(table, 1e-7))
    np.testing.assert_allclose(tiny.values * unit, table.values * 1e-7)
    assert 1e3 <= tiny.values.max() < 1e4


def test_additivity_is_relative_to_the_table_magnitude():
    frame = pd.DataFrame({"r": ["Total", "a", "b"], "value": [3e-9, 1e-9, 1e-9]})
    with pytest.raises(AdditivityError, match="Total"):
        Table.from_frame(frame, ["r"])
    frame["value"] = [2e-9, 1e-9, 1e-9]
    assert Table.from_frame(frame, ["r"]).n_cells == 3
    frame["value"] = [2e12 + 1e4, 1e12, 1e12]  # 5e-9 relative: far above float noise
    with pytest.raises(AdditivityError):
        Table.from_frame(frame, ["r"])


def test_non_additive_table_is_rejected_even_where_nothing_is_hidden(tmp_path, capsys):
    # 17 = 9 + 7 and 17 = 7 + 3 + 6 fail: relations of published cells only
    broken = TAU_MANUAL_EXAMPLE.replace("0 16 1 s", "0 17 1 s")
    with pytest.raises(AdditivityError, match=r"relation 0: cell 0 \(17\) ="):
        audit(parse_jj(broken))
    path = tmp_path / "broken.jj"
    path.write_text(broken)
    assert main(["audit", str(path)]) == 2
    assert main(["protect", str(path)]) == 2
    assert "relation 0: cell 0 (17)" in capsys.readouterr().err


def test_infinite_values_and_negative_levels_are_rejected_naming_the_cell():
    table = parse_jj(TAU_MANUAL_EXAMPLE)
    values = table.values
    values[3] = np.inf
    with pytest.raises(InputError, match="cell 3: value inf is not finite"):
        table.with_columns(value=values)
    with pytest.raises(InputError, match="cell 5: upl -1 is negative"):
        table.with_columns(upl=np.where(np.arange(12) == 5, -1.0, table.cells["upl"]))
    frame = pd.DataFrame({"r": ["Total", "a"], "value": [np.inf, 1.0]})
    with pytest.raises(InputError, match="infinite value at row 0"):
        Table.from_frame(frame, ["r"])
    records = pd.DataFrame({"r": ["a", "b"], "v": [1.0, -np.inf]})
    with pytest.raises(InputError, match="infinite value at row 1"):
        Table.from_microdata(records, ["r"], "v")
    with pytest.raises(InputError, match="no records"):
        Table.from_microdata(records.iloc[:0], ["r"], "v")


def test_a_value_outside_its_bounds_is_an_input_error_everywhere():
    table = parse_jj(TAU_MANUAL_EXAMPLE)
    table = table.with_columns(ub=np.where(np.arange(12) == 4, 3.5, table.cells["ub"]))
    with pytest.raises(InputError, match="cell 4 has value 4 outside its a-priori bounds"):
        validate_table(table)
    with pytest.raises(InputError, match="cell 4 has value 4 outside"):
        audit(table)


def grid_with_sensitive_cells(values: list[int], sensitive: set[int]) -> Table:
    """A 3x3 table (with totals) of ``values``, the interior cells ``sensitive`` (positions
    0..8) primary with protection levels of 10 % of their value."""
    rows, cols = np.divmod(np.arange(9), 3)
    cells = pd.DataFrame({"r": rows.astype(str), "c": cols.astype(str),
                          "value": np.array(values, float)})
    base = Table.from_aggregated(cells, ["r", "c"])
    interior = np.flatnonzero(~base.total_cells)
    status = np.full(base.n_cells, "s", dtype=object)
    status[interior[sorted(sensitive)]] = "u"
    levels = np.where(status == "u", 0.1 * base.values, 0.0)
    return base.with_columns(status=status, lpl=levels, upl=levels)


@given(
    values=st.lists(st.integers(1, 60), min_size=9, max_size=9),
    hidden=st.sets(st.integers(0, 8), min_size=2, max_size=5),
    k=st.integers(-6, 9),
)
def test_audit_verdicts_do_not_change_when_a_table_is_scaled(values, hidden, k):
    """A random 3x3 table (with totals) with some interior cells hidden, its sensitive cells
    needing 10 % protection: scaled by 10**k, every interval scales and no verdict changes."""
    base = grid_with_sensitive_cells(values, hidden)
    plain, big = audit(base), audit(scaled(base, 10.0**k))
    pd.testing.assert_series_equal(plain.frame["protected"], big.frame["protected"])
    pd.testing.assert_series_equal(plain.frame["exact"], big.frame["exact"])
    np.testing.assert_allclose(big.frame["lower"] / 10.0**k, plain.frame["lower"],
                               rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(big.frame["upper"] / 10.0**k, plain.frame["upper"],
                               rtol=1e-7, atol=1e-7)


@settings(max_examples=examples(8, 100), deadline=None)
@given(
    values=st.lists(st.integers(1, 60), min_size=9, max_size=9),
    primary=st.sets(st.integers(0, 8), min_size=1, max_size=3),
    k=st.integers(-6, 9),
    method=st.sampled_from(["optimal", "heuristic"]),
)
def test_suppression_pattern_does_not_change_when_a_table_is_scaled(values, primary, k, method):
    """A random 3x3 table (with totals), some interior cells primary with 10 % levels:
    scaled by 10**k, the same cells are suppressed, the audit gives the same verdicts and
    the reported cost scales by 10**k."""
    base = grid_with_sensitive_cells(values, primary)
    plain, big = (suppress(t, method) for t in (base, scaled(base, 10.0**k)))
    pd.testing.assert_series_equal(plain.table.cells["status"], big.table.cells["status"])
    assert plain.audit.passed and big.audit.passed
    pd.testing.assert_series_equal(plain.audit.frame["protected"], big.audit.frame["protected"])
    np.testing.assert_allclose(big.totals()["suppressed value"] / 10.0**k,
                               plain.totals()["suppressed value"], rtol=1e-9)
