"""information_loss and UtilityReport: agreement with the single measures, rendering."""

import json

import numpy as np
import pandas as pd
import pytest

from microsdc._datasets import load_tarragona
from microsdc._errors import DataError
from microsdc.masking import additive_noise, mdav
from microsdc.utility import (
    UtilityReport,
    brmae,
    brmse,
    eigen_discrepancy,
    il1,
    il1s,
    information_loss,
    mae,
    matrix_discrepancy,
    mse,
    probabilistic_information_loss,
)
from sdcreport import Report


@pytest.fixture(scope="module")
def tarragona():
    return load_tarragona().iloc[:300, 4:9]


def test_agrees_with_every_single_measure(tarragona):
    masked = additive_noise(tarragona, noise=50.0, seed=1)
    report = information_loss(tarragona, masked, seed=7)
    assert isinstance(report, UtilityReport) and (report.n, report.p) == (300, 5)
    assert report.MAE == pytest.approx(mae(tarragona, masked), rel=1e-12)
    assert report.MSE == pytest.approx(mse(tarragona, masked), rel=1e-12)
    assert report.IL1 == pytest.approx(il1(tarragona, masked), rel=1e-12)
    assert report.IL1s == pytest.approx(il1s(tarragona, masked), rel=1e-12)
    assert report.brMAE == brmae(tarragona, masked, seed=7)
    assert report.brMSE == brmse(tarragona, masked, seed=7)
    assert report.eigen == pytest.approx(eigen_discrepancy(tarragona, masked), rel=1e-12)
    assert report.pil.measures() == pytest.approx(
        probabilistic_information_loss(tarragona, masked).measures(), rel=1e-12)
    pd.testing.assert_frame_equal(report.matrix, matrix_discrepancy(tarragona, masked))
    assert report.per_variable["MAE"].mean() == pytest.approx(report.MAE)
    assert report.per_variable["brMAE"].mean() == pytest.approx(report.brMAE)


def test_sum_convention_and_zero_cells(tarragona):
    masked = mdav(tarragona, k=5)
    mean, total = (information_loss(tarragona, masked, reduce=r, seed=1)
                   for r in ("mean", "sum"))
    cells = tarragona.size
    assert total.IL1s == pytest.approx(il1s(tarragona, masked, reduce="sum"))
    assert total.MAE == pytest.approx(mean.MAE * cells)
    zeros = int((tarragona.to_numpy() == 0).sum())
    assert mean.IL1_excluded == zeros > 0
    assert total.IL1 == pytest.approx(mean.IL1 * (cells - zeros))
    assert total.brMAE == mean.brMAE  # bounded measures are never sums


def test_to_dict_has_plain_values_and_is_json(tarragona):
    values = information_loss(tarragona, additive_noise(tarragona, seed=2), seed=3).to_dict()
    for key in ("n", "p", "MAE", "MSE", "IL1", "IL1s", "brMAE", "brMSE", "PIL", "eigen"):
        assert key in values
    assert set(values["PIL"]) == {"Q", "m1", "m2", "m11", "r", "overall"}
    assert type(values["n"]) is int and type(values["eigen"]) is float
    assert all(type(v) is float for v in values["PIL"].values())
    assert json.loads(json.dumps(values, allow_nan=False)) == values


def test_identical_data_lose_nothing(tarragona):
    values = information_loss(tarragona, tarragona, seed=4).to_dict()
    for key in ("MAE", "MSE", "IL1", "IL1s", "brMAE", "brMSE", "eigen"):
        assert values[key] == 0.0
    assert set(values["PIL"].values()) == {0.0}


def test_rendering(tarragona):
    report = information_loss(tarragona, mdav(tarragona, k=3), seed=5, robust_eigen=True)
    frame = report.to_frame()
    assert list(frame.columns) == ["measure", "value", "bounded", "definition"]
    assert frame.set_index("measure").loc["brMAE", "bounded"]
    assert "robust eigen" in frame["measure"].tolist() and report.robust_eigen >= 0
    assert "brMAE" in report.summary() and "IL1 leaves out" in report.summary()
    section = report.to_report()
    html = Report("utility").add(section).to_html()
    assert html.count("<img") == 2 and "Matrix discrepancies" in html
    assert len(report.to_report(figures=False).blocks) == len(section.blocks) - 2


def test_errors(tarragona):
    with pytest.raises(DataError, match="ties"):
        information_loss(tarragona, tarragona, ties="average")
    with pytest.raises(DataError, match="reduce"):
        information_loss(tarragona, tarragona, reduce="max")
    with pytest.raises(DataError, match="2 records"):
        information_loss(tarragona.iloc[:1], tarragona.iloc[:1])
    with pytest.raises(DataError, match="records"):
        information_loss(tarragona, tarragona.iloc[:10])
    flat = tarragona.assign(SALES=1.0)
    with pytest.raises(DataError, match="'SALES'"):
        information_loss(flat, tarragona)


def test_inputs_are_not_modified(tarragona):
    original, masked = tarragona.copy(), mdav(tarragona, k=4)
    kept = masked.copy()
    information_loss(original, masked, seed=0)
    pd.testing.assert_frame_equal(original, tarragona)
    pd.testing.assert_frame_equal(masked, kept)
    array = np.asarray(tarragona, dtype=float).copy()
    information_loss(array, array * 1.01, seed=0)
    assert array.flags.writeable
