"""The publishable file holds codes and published values only: nothing an intruder could use."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules
from tabsdc._release import publishable_frame, write_publishable
from tabsdc.suppression import suppress

INTERNAL_COLUMNS = ("status", "freq", "x1", "x2", "lb", "ub", "lpl", "upl", "spl", "cost")


def survey_table() -> Table:
    rng = np.random.default_rng(7)
    n = 60
    data = pd.DataFrame({
        "region": rng.choice(["North", "South", "East"], n),
        "sector": rng.choice(["A", "B", "C", "D"], n),
        "turnover": rng.integers(1, 500, n).astype(float),
    })
    return Table.from_microdata(data, ["region", "sector"], "turnover")


def protected(table: Table, p: float, freq: int) -> Table:
    rules = apply_rules(table, [PPercentRule(p), FrequencyRule(freq)])
    return suppress(rules.table, "optimal", "value").table


def test_long_file_has_codes_and_values_and_one_symbol_for_every_hidden_cell(tmp_path):
    table = protected(survey_table(), 15, 3)
    status = table.cells["status"].to_numpy()
    assert {"u", "m"} <= set(status)
    path = write_publishable(table, tmp_path / "publish.csv", symbol="x")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")  # Excel reads it as UTF-8
    published = pd.read_csv(path, dtype=str, encoding="utf-8-sig")
    assert list(published.columns) == ["region", "sector", "value"]
    # cells in hierarchy order: the file's rows are the table's cells in that order
    order = table.hierarchy_order()
    assert published[["region", "sector"]].apply(tuple, axis=1).tolist() == \
        table.cells.index[order].tolist()
    status, values = status[order], table.values[order]
    hidden = np.isin(status, ["u", "m"])
    assert (published["value"][hidden] == "x").all()
    np.testing.assert_array_equal(published["value"][~hidden].astype(float), values[~hidden])
    text = path.read_text(encoding="utf-8-sig")
    for word in INTERNAL_COLUMNS:
        assert word not in text


def test_file_does_not_depend_on_rules_levels_or_roles(tmp_path):
    """Same values and hidden cells, different rule parameters, levels, bounds and primary/
    secondary roles: byte-identical files. So none of them can be read from the file."""
    table = protected(survey_table(), 15, 3)
    status = table.cells["status"].to_numpy()
    hidden = np.isin(status, ["u", "m"])
    rng = np.random.default_rng(1)
    other = table.with_columns(
        status=np.where(hidden, np.where(status == "u", "m", "u"), status),
        lpl=rng.uniform(0, 100, table.n_cells), upl=rng.uniform(0, 100, table.n_cells),
        lb=-rng.uniform(0, 5, table.n_cells), ub=rng.uniform(1e3, 1e4, table.n_cells),
        freq=rng.integers(1, 9, table.n_cells),
        value=np.where(hidden, rng.uniform(0, 1e6, table.n_cells), table.values))
    a = write_publishable(table, tmp_path / "a.csv").read_bytes()
    b = write_publishable(other, tmp_path / "b.csv").read_bytes()
    assert a == b


@given(st.integers(2, 6), st.integers(2, 6), st.integers(0, 2**32 - 1),
       st.sampled_from(["long", "wide"]))
def test_publishable_frame_is_a_function_of_published_values_and_hidden_cells(
        rows, cols, seed, layout):
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    frame = pd.DataFrame({"r": r.ravel().astype(str), "c": c.ravel().astype(str),
                          "value": rng.integers(0, 50, rows * cols).astype(float)})
    table = Table.from_aggregated(frame, ["r", "c"])
    status = rng.choice(["s", "u", "m", "z"], table.n_cells)
    hidden = np.isin(status, ["u", "m"])
    first = table.with_columns(status=status, lpl=rng.uniform(0, 9, table.n_cells))
    stripped = table.with_columns(status=np.where(hidden, "m", "s"),
                                  value=np.where(hidden, -1.0, table.values))
    one = publishable_frame(first, layout=layout, symbol="..")
    two = publishable_frame(stripped, layout=layout, symbol="..")
    pd.testing.assert_frame_equal(one, two)
    if layout == "long":
        assert (one["value"] == "..").sum() == hidden.sum()


def test_wide_layout_is_the_printed_table_and_decimals_are_fixed():
    frame = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
                          "value": [1.25, 2.5, 3.0, 4.0]})
    table = Table.from_aggregated(frame, ["r", "c"])
    status = np.where(table.cells.index.isin([("a", "x")]), "u", "s")
    wide = publishable_frame(table.with_columns(status=status), layout="wide", decimals=1)
    assert wide.columns.tolist() == ["r", "Total", "x", "y"]
    assert wide.to_numpy().tolist() == [["Total", "10.8", "4.2", "6.5"],
                                        ["a", "3.8", "x", "2.5"],
                                        ["b", "7.0", "3.0", "4.0"]]
