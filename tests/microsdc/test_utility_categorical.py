"""Missing values, changed records and CTBIL on hand-made categorical data."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microsdc._errors import DataError
from microsdc.utility import ctbil, missing_values, records_changed

ORIGINAL = pd.DataFrame({"sex": ["m", "f", "f", "m", "f"],
                         "region": ["n", "n", "s", "s", None],
                         "age": [20, 30, 30, 40, 50]})
MASKED = pd.DataFrame({"sex": ["m", "f", None, "m", "f"],
                       "region": ["n", "s", "s", "s", None],
                       "age": [20, 30, 30, 40, 50]})


def test_missing_values():
    table = missing_values(ORIGINAL, MASKED)
    assert table.loc["sex"].tolist() == [0, 1, 1, 0.2]
    assert table.loc["region"].tolist() == [1, 1, 0, 0.0]  # missing before and after
    assert table["added"].sum() == 1


def test_records_changed_counts_new_missing_values_but_not_old_ones():
    table = records_changed(ORIGINAL, MASKED)
    assert table["changed"].to_dict() == {"sex": 1, "region": 1, "age": 0}
    assert table.loc["sex", "share"] == pytest.approx(0.2)


def test_ctbil_by_hand():
    # univariate: sex {m:2,f:3} vs {m:2,f:2,NA:1} -> 2; region {n:2,s:2,NA:1} vs {n:1,s:3,NA:1}
    # -> 2; sex x region: (f,s) 1 -> 0, (NA,s) 0 -> 1, (f,n) 1 -> 0, (f,s) ... cell by cell:
    # original (m,n)1 (f,n)1 (f,s)1 (m,s)1 (f,NA)1; masked (m,n)1 (f,s)1 (NA,s)1 (m,s)1 (f,NA)1
    # -> |(f,n)| 1 + |(NA,s)| 1 = 2
    result = ctbil(ORIGINAL, MASKED, variables=["sex", "region"])
    assert result.tables["difference"].tolist() == [2, 2, 2]
    assert result.total == 6 and result.n == 5
    assert result.normalised == pytest.approx(6 / (2 * 5 * 3))
    assert ctbil(ORIGINAL, MASKED, variables=["sex", "region"], order=1).total == 4


def test_ctbil_counts_every_table_up_to_the_order():
    result = ctbil(ORIGINAL, MASKED, order=3)
    assert result.tables["dimension"].tolist() == [1, 1, 1, 2, 2, 2, 3]
    assert "sex x region x age" in result.tables["variables"].tolist()
    assert "CTBIL" in result.summary() and result.to_report().title.startswith("Contingency")
    assert result.to_frame().equals(result.tables)


def test_errors_name_the_problem():
    with pytest.raises(DataError, match="'income'"):
        ctbil(ORIGINAL, MASKED, variables=["income"])
    with pytest.raises(DataError, match="order"):
        ctbil(ORIGINAL, MASKED, order=4)
    with pytest.raises(DataError, match="records"):
        records_changed(ORIGINAL, MASKED.iloc[:3])


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy")), min_size=1,
                max_size=30), st.integers(0, 2**32 - 1))
def test_ctbil_properties(rows, seed):
    original = pd.DataFrame(rows, columns=["u", "v"])
    assert ctbil(original, original).total == 0
    masked = original.apply(lambda c: np.random.default_rng(seed).permutation(c.to_numpy()))
    result = ctbil(original, masked)
    assert result.tables["difference"].iloc[:2].tolist() == [0, 0]  # margins kept by a swap
    assert 0.0 <= result.normalised <= 1.0
    assert result.total % 2 == 0  # every moved record leaves one cell and enters another
