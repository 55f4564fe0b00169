"""Numbers in reports: thousands separators and decimals by magnitude; JSON unchanged."""

import json

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from sdcreport import Report, Section, format_numbers


def report_with(frame: pd.DataFrame) -> Report:
    section = Section("Cells").add_table(frame, "values").add_metrics({"total": 4792080.0})
    return Report("numbers").add(section)


def test_values_are_shown_as_statisticians_read_them():
    frame = pd.DataFrame({"value": [4792080.0, 135.0], "share": [0.953125, 0.25]})
    report = report_with(frame)
    for text in (report.to_text(), report.to_markdown(), report.to_html()):
        assert "4,792,080" in text and "0.953" in text and "0.250" in text
        assert "e+06" not in text
    data = json.loads(report.to_json())
    rows = data["sections"][0]["blocks"][0]["rows"]
    assert rows[0]["value"] == 4792080.0 and rows[0]["share"] == 0.953125


def test_tiny_and_huge_values_keep_their_digits():
    assert format_numbers([3e-9, 6e-9]) == ["3e-09", "6e-09"]
    assert format_numbers([2.5e16]) == ["2.5e+16"]


@given(st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=20))
def test_a_column_shows_one_number_of_decimals_and_reads_back_close(values):
    shown = format_numbers(values)
    decimals = {len(s.partition(".")[2]) for s in shown if "e" not in s}
    assert len(decimals) <= 1
    largest = max(abs(v) for v in values)
    back = np.array([float(s.replace(",", "")) for s in shown])
    # three significant digits of the largest value: error at most half a unit of the last
    assert np.all(np.abs(back - np.array(values)) <= max(largest, 1e-4) * 5e-3 + 1e-12)


def test_suppression_summary_shows_values_with_separators():
    from tabsdc import Table
    from tabsdc.suppression import suppress

    rows, cols = np.divmod(np.arange(9), 3)
    cells = pd.DataFrame({"r": rows.astype(str), "c": cols.astype(str),
                          "value": 1_000_003.0 * np.arange(1, 10)})
    table = Table.from_aggregated(cells, ["r", "c"])
    status = np.full(table.n_cells, "s", dtype=object)
    status[table.cells.index.get_loc(("0", "0"))] = "u"
    levels = np.where(status == "u", 1e5, 0.0)
    summary = suppress(table.with_columns(status=status, lpl=levels, upl=levels),
                       "optimal").summary()
    assert "e+0" not in summary
    assert "suppressed value: 12,000,036" in summary
