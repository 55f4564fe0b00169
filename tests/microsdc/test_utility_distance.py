"""MAE, MSE, IL1, IL1s: hand computations, sdcMicro reference numbers, input handling."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microsdc._errors import DataError
from microsdc.masking import mdav
from microsdc.utility import il1, il1_excluded_cells, il1s, mae, mse

X = np.array([[1.0, 10.0], [2.0, 0.0], [4.0, 30.0]])
XM = np.array([[1.5, 12.0], [2.0, 5.0], [3.0, 30.0]])


def test_mae_mse_by_hand():
    # |diff| = [[0.5, 2], [0, 5], [1, 0]]: sum 8.5 over 6 cells; squares sum 0.25+4+25+1 = 30.25
    assert mae(X, XM) == pytest.approx(8.5 / 6)
    assert mae(X, XM, reduce="sum") == pytest.approx(8.5)
    assert mse(X, XM) == pytest.approx(30.25 / 6)
    assert mse(X, XM, reduce="sum") == pytest.approx(30.25)


def test_il1_leaves_out_zero_originals():
    # cells with x != 0: 0.5/1, 2/10, 0/2, 1/4, 0/30 -> sum 0.95 over 5 cells; x = 0 cell left out
    assert il1(X, XM) == pytest.approx(0.95 / 5)
    assert il1(X, XM, reduce="sum") == pytest.approx(0.95)
    assert il1_excluded_cells(X) == 1


def test_il1s_by_hand():
    sd = X.std(axis=0, ddof=1)
    expected = sum(abs(X[i, j] - XM[i, j]) / (np.sqrt(2) * sd[j])
                   for i in range(3) for j in range(2))
    assert il1s(X, XM, reduce="sum") == pytest.approx(expected, rel=1e-12)
    assert il1s(X, XM) == pytest.approx(expected / 6, rel=1e-12)


def test_il1s_matches_sdcmicro_on_mdav_testdata(testdata_100):
    # sdcMicro: dUtility(x, mdav(x, k = 4), method = "IL1s") on testdata[1:100, ...]
    x = testdata_100
    assert il1s(x, mdav(x, k=4), reduce="sum") == pytest.approx(53.39995, abs=5e-6)


def test_il1s_matches_sdcmicro_on_mdav_microdata(micro_data):
    masked = mdav(micro_data, k=3)
    assert il1s(micro_data, masked, reduce="sum") == pytest.approx(22.84007, abs=5e-6)


def test_dataframe_columns_are_matched_by_name_and_inputs_untouched():
    frame = pd.DataFrame(X, columns=["a", "b"])
    masked = pd.DataFrame(XM, columns=["a", "b"])[["b", "a"]]
    before = frame.copy()
    assert mae(frame, masked) == pytest.approx(mae(X, XM))
    pd.testing.assert_frame_equal(frame, before)
    array = X.copy()
    il1s(array, XM)
    assert array.flags.writeable and np.array_equal(array, X)


@pytest.mark.parametrize(("original", "masked", "message"), [
    (pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), pd.DataFrame({"a": [1.0, 2.0],
                                                                    "b": [1.0, 2.0]}), "'b'"),
    (pd.DataFrame({"a": [1.0, np.nan]}, index=["r1", "r2"]), pd.DataFrame({"a": [1.0, 2.0]}),
     "'r2'"),
    (pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"c": [1.0, 2.0]}), "'a'"),
    (np.ones((3, 2)), np.ones((2, 2)), "3 records"),
    (np.ones((3, 2)), np.ones((3, 3)), "columns"),
])
def test_bad_input_names_the_problem(original, masked, message):
    with pytest.raises(DataError, match=message):
        mae(original, masked)


def test_il1s_needs_variation_and_names_the_column():
    with pytest.raises(DataError, match="'flat'"):
        il1s(pd.DataFrame({"ok": [1.0, 2.0], "flat": [3.0, 3.0]}),
             pd.DataFrame({"ok": [1.0, 2.0], "flat": [3.0, 4.0]}))


def test_unknown_reduction_is_rejected():
    with pytest.raises(DataError, match="reduce"):
        mae(X, XM, reduce="median")


@given(arrays(np.float64, st.tuples(st.integers(2, 20), st.integers(1, 4)),
              elements=st.floats(-1e6, 1e6)),
       st.floats(0.5, 3.0))
def test_sum_is_mean_times_cells_and_identity_is_zero(x, factor):
    xm = x * factor + 1.0
    cells = x.size
    assert mae(x, xm, reduce="sum") == pytest.approx(mae(x, xm) * cells, rel=1e-9, abs=1e-9)
    assert mse(x, xm, reduce="sum") == pytest.approx(mse(x, xm) * cells, rel=1e-9, abs=1e-6)
    assert mae(x, x) == mse(x, x) == 0.0
    if np.all(x.std(axis=0) > 0):
        assert il1s(x, x) == 0.0
