"""Publishable values show the input's decimals, never float noise.

The expected text of every published cell is computed independently, with exact decimal
arithmetic (:class:`decimal.Decimal` sums of the input's text), and compared with the file
byte for byte."""

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tabsdc import Table
from tabsdc._decimals import decimals_in_text, decimals_of
from tabsdc._release import publishable_frame, write_publishable
from tabsdc.cta import adjust
from tabsdc.rounding import round_table
from tests.tabsdc.command_line import run_tabsdc


def records(n: int = 2000, decimals: int = 1, seed: int = 0) -> pd.DataFrame:
    """Records whose values have ``decimals`` decimals, written as text."""
    rng = np.random.default_rng(seed)
    units = rng.integers(1, 10**7, n)
    return pd.DataFrame({
        "sector": rng.choice(["S1", "S2", "S3", "S4"], n),
        "region": rng.choice(["R1", "R2", "R3"], n),
        "turnover": [f"{u / 10**decimals:.{decimals}f}" for u in units],
    })


def exact_sums(data: pd.DataFrame, decimals: int) -> dict[tuple[str, str], str]:
    """Every cell's total, summed as decimals and written with ``decimals`` decimals."""
    out = {}
    values = data["turnover"].map(Decimal)
    for sector in ["Total", *data["sector"].unique()]:
        for region in ["Total", *data["region"].unique()]:
            keep = ((data["sector"] == sector) | (sector == "Total")) & \
                ((data["region"] == region) | (region == "Total"))
            out[sector, region] = f"{sum(values[keep], Decimal(0)):.{decimals}f}"
    return out


def published(path) -> dict[tuple[str, str], str]:
    frame = pd.read_csv(path, dtype=str, encoding="utf-8-sig")
    return {(s, r): v for s, r, v in frame.to_numpy()}


def test_the_command_line_publishes_the_decimals_of_the_input_text(tmp_path):
    data = records()
    data.to_csv(tmp_path / "survey.csv", index=False)
    expected = exact_sums(data, 1)
    done = run_tabsdc("protect", "survey.csv", "--dims", "sector", "region", "--value",
                      "turnover", "--freq", "1", "--publish", "publish.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert published(tmp_path / "publish.csv") == expected  # e.g. never 801669.199999999

    done = run_tabsdc("protect", "survey.csv", "--dims", "sector", "region", "--value",
                      "turnover", "--freq", "1", "--publish", "whole.csv", "--decimals", "0",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert published(tmp_path / "whole.csv") == {
        cell: f"{Decimal(text):.0f}" for cell, text in expected.items()}


def test_weighted_estimates_are_published_with_the_decimals_of_the_values(tmp_path):
    data = records(n=300, decimals=1, seed=2)
    data["w"] = np.random.default_rng(2).choice(["1.37", "2.113", "0.5"], len(data))
    data.to_csv(tmp_path / "survey.csv", index=False)
    done = run_tabsdc("protect", "survey.csv", "--dims", "sector", "region", "--value",
                      "turnover", "--weight", "w", "--freq", "1", "--publish", "publish.csv",
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    estimates = data["turnover"].map(Decimal) * data["w"].map(Decimal)
    weighted = data.assign(turnover=estimates.map(str))
    assert published(tmp_path / "publish.csv") == exact_sums(weighted, 1)


def test_the_decimals_of_hidden_values_do_not_show(tmp_path):
    cells = pd.DataFrame({"r": ["a", "b", "c", "d"], "v": [10.0, 20.0, 30.0, 40.0]})
    whole = Table.from_aggregated(cells, ["r"], "v")
    hidden = np.array([False, True, True, False, False])
    status = np.where(hidden, "u", "s")
    fractional = whole.with_columns(value=np.where(hidden, [0, 12.25, 17.75, 0, 0],
                                                   whole.values), status=status)
    assert fractional.decimals == 2 and whole.decimals == 0
    files = [write_publishable(t, tmp_path / f"{k}.csv").read_bytes()
             for k, t in enumerate([whole.with_columns(status=status), fractional])]
    assert files[0] == files[1]
    assert published_values(tmp_path / "1.csv") == ["100", "x", "x", "30", "40"]


def published_values(path) -> list[str]:
    return pd.read_csv(path, dtype=str, encoding="utf-8-sig")["value"].tolist()


def test_a_table_built_in_python_keeps_its_decimals_through_derived_tables(tmp_path):
    data = records(decimals=2, seed=3)
    numbers = data.assign(turnover=data["turnover"].astype(float))
    table = Table.from_microdata(numbers, ["sector", "region"], "turnover")
    assert table.decimals == 2
    derived = table.with_columns(status="s").with_cells(table.cells)
    assert derived.decimals == 2
    write_publishable(derived, tmp_path / "p.csv")
    assert published(tmp_path / "p.csv") == exact_sums(data, 2)
    # a rounded table publishes whole multiples of its base, without decimals
    counts = table.with_columns(value=table.cells["freq"].to_numpy(float))
    assert counts.decimals == 0
    rounded = round_table(counts, 5, "conventional").table
    values = publishable_frame(rounded.with_columns(status="s"))["value"]
    assert values.map(lambda v: v.isdigit() and int(v) % 5 == 0).all()
    # adjusted values are published with the decimals of the input
    primary = table.with_columns(status=np.where(np.arange(table.n_cells) == 5, "u", "s"),
                                 upl=np.where(np.arange(table.n_cells) == 5, 100.0, 0.0))
    adjusted = adjust(primary, "l2").table
    assert adjusted.decimals == 2
    shown = publishable_frame(adjusted.with_columns(status="s"))["value"]
    assert shown.str.fullmatch(r"-?\d+\.\d\d").all()


@settings(max_examples=40, deadline=None)
@given(decimals=st.integers(0, 4),
       units=st.lists(st.integers(-10**9, 10**9), min_size=2, max_size=12))
@example(decimals=4, units=[-40351, 999993968, -999999978])  # a total whose terms cancel
def test_a_table_has_the_fewest_decimals_that_write_its_values(decimals, units):
    text = [f"{u / 10**decimals:.{decimals}f}" for u in units]
    fewest = max(len(t.split(".")[1].rstrip("0")) if "." in t else 0 for t in text)
    cells = pd.DataFrame({"r": [f"c{i:02d}" for i in range(len(units))],  # sorted as given
                          "v": [float(t) for t in text]})
    table = Table.from_aggregated(cells, ["r"], "v")
    assert table.decimals == fewest == decimals_of(cells["v"].to_numpy())
    frame = publishable_frame(table)
    total = sum((Decimal(t) for t in text), Decimal(0))
    assert frame["value"].iloc[0] == f"{total:.{fewest}f}"
    assert frame["value"].iloc[1:].tolist() == [f"{Decimal(t):.{fewest}f}" for t in text]


def test_decimals_in_text_and_their_cap():
    assert decimals_in_text(pd.Series(["1", "2.50", "", "3e-2"])) == 2
    # more decimals than six of the working unit: published with six
    assert decimals_in_text(pd.Series(["63.16852476447821"])) == 6
    # a table of small numbers keeps its own
    assert decimals_of(np.array([3.25e-9, 6.5e-9])) == 11


def test_decimals_must_be_a_whole_number(tmp_path):
    table = Table.from_aggregated(pd.DataFrame({"r": ["a"], "v": [1.5]}), ["r"], "v")
    for bad in (-1, 1.5, True):
        with pytest.raises(Exception, match="decimals must be a whole number >= 0"):
            table.with_decimals(bad)
        with pytest.raises(Exception, match="decimals must be a whole number >= 0"):
            write_publishable(table, tmp_path / "p.csv", decimals=bad)
    done = run_tabsdc("round", "t.jj", "--base", "5", "--method", "conventional",
                      "--decimals", "-1", cwd=tmp_path)
    assert done.returncode == 2 and "must be a whole number >= 0" in done.stderr
