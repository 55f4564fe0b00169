"""Perturbation studies: grids, replications, Spearman correlations, report, example."""

import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microsdc._datasets import load_tarragona
from microsdc._errors import DataError
from microsdc._studies import (
    AVAILABLE_MEASURES,
    MEASURES,
    StudyResult,
    default_grid,
    quick_grid,
    run_study,
)
from microsdc.masking import mdav
from sdcreport import Report

GRID = {"mdav": (1, 3, 10), "noise": (5.0, 50.0, 200.0), "rank_swap": (1.0, 10.0, 30.0)}


@pytest.fixture(scope="module")
def data():
    return load_tarragona().iloc[:150, 4:9]


@pytest.fixture(scope="module")
def study(data):
    return run_study(data, grid=GRID, replications=3, seed=11, name="Tarragona")


def test_grids_are_the_notes():
    grid = default_grid()
    assert grid["mdav"] == tuple(range(1, 31))
    assert grid["noise"][0] == 1.0 and grid["noise"][-1] == 300.0 and len(grid["noise"]) == 300
    assert grid["correlated_noise"] == grid["noise"]
    assert grid["rank_swap"][0] == 0.1 and grid["rank_swap"][-1] == 30.0
    assert len(grid["rank_swap"]) == 300
    assert set(quick_grid()) == set(grid)


def test_values_frame(study):
    assert isinstance(study, StudyResult) and study.measures == MEASURES
    values = study.values
    assert len(values) == 3 * 9
    assert list(values.columns) == ["method", "parameter", "replication", *MEASURES]
    mdav_rows = values[values["method"] == "mdav"]
    # MDAV is deterministic: its value-based measures agree across replications
    assert mdav_rows.groupby("parameter")["MAE"].nunique().eq(1).all()
    assert (mdav_rows[mdav_rows["parameter"] == 1][list(MEASURES)] == 0).all().all()
    noise = values[(values["method"] == "noise") & (values["parameter"] == 200.0)]
    assert noise["MAE"].nunique() == 3  # fresh noise in every replication
    assert ((values["brMAE"] >= 0) & (values["brMAE"] <= 1)).all()


def test_spearman_tables_match_scipy(study):
    values = study.values
    group = values[(values["method"] == "rank_swap") & (values["replication"] == 1)]
    rho_grid = stats.spearmanr(group["parameter"], group["IL1"]).statistic
    rho_pair = stats.spearmanr(group["brMAE"], group["MSE"]).statistic
    long = study.grid_correlations
    assert long.query("method == 'rank_swap' and replication == 1 and measure == 'IL1'")[
        "rho"].item() == pytest.approx(rho_grid)
    between = study.measure_correlations.query(
        "method == 'rank_swap' and replication == 1 and measure == 'brMAE' and other == 'MSE'")
    assert between["rho"].item() == pytest.approx(rho_pair)
    means = long.groupby(["method", "measure"])["rho"].mean()
    assert study.spearman.loc[("noise", "MAE"), "grid"] == pytest.approx(means[("noise", "MAE")])
    assert list(study.spearman.columns) == ["grid", *MEASURES]
    assert study.spearman.loc[("mdav", "brMSE"), "brMSE"] == 1.0
    assert study.grid_table().shape == (6, 3)
    assert study.pairs_table("brMAE").shape == (3, 5)
    # more perturbation, more loss (the note's finding; MSE is the noisiest under swapping)
    assert (study.grid_table().loc[["brMAE", "brMSE", "MAE", "IL1s"]] > 0.9).all().all()
    assert (study.grid_table() > 0.5).all().all()


def test_reproducible_and_order_free(data):
    a = run_study(data, grid={"noise": (10.0, 100.0)}, replications=2, seed=3)
    b = run_study(data, grid={"noise": (10.0, 100.0)}, replications=2, seed=3)
    pd.testing.assert_frame_equal(a.values, b.values)
    both = run_study(data, grid={"noise": (10.0, 100.0), "mdav": (2, 5)}, replications=2,
                     seed=3)
    pd.testing.assert_frame_equal(
        both.values[both.values["method"] == "noise"].reset_index(drop=True), a.values)


def test_other_measures_and_risk(data):
    result = run_study(data, grid={"mdav": (2, 10), "rank_swap": (5.0, 20.0)},
                       replications=1, seed=4, measures=("brMAE", "PIL", "PIL(r)", "eigen"),
                       risk=True)
    assert {"DBRL", "SDID", "RID"} <= set(result.risk_measures)
    assert set(result.values.columns) >= {"PIL", "PIL(r)", "eigen", "DBRL"}
    for k in (2, 10):  # MDAV is deterministic: the study's SDID is sdcMicro's dRisk
        row = result.values[(result.values["method"] == "mdav") & (result.values["parameter"] == k)]
        x, xm = data.to_numpy(float), mdav(data, k=k).to_numpy()
        sd = xm.std(axis=0, ddof=1)
        inside = ((x >= xm - 0.05 * sd) & (x <= xm + 0.05 * sd)).all(axis=1)
        assert row["SDID"].item() == pytest.approx(inside.mean(), abs=1e-12)
    html = Report("study").add(result.to_report()).to_html()
    assert "Risk-utility map" in html
    assert "Study on data" in result.summary() and len(result.to_frame()) == 8


def test_report(study):
    section = study.to_report()
    html = Report("study").add(section).to_html()
    assert html.count("<img") == 4  # measures vs grid, Spearman boxes, brMAE and brMSE pairs
    assert "Mean Spearman correlation with the parameter" in html
    assert len(study.to_report(figures=False).blocks) == len(section.blocks) - 4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"grid": {"pram": (1,)}}, "grid method"),
    ({"grid": {"mdav": ()}}, "empty"),
    ({"measures": ("MAE", "R2")}, "measure"),
    ({"replications": 0}, "replications"),
])
def test_errors(data, kwargs, message):
    with pytest.raises(DataError, match=message):
        run_study(data, **{"grid": {"mdav": (2, 3)}, **kwargs})
    assert "eigen" in AVAILABLE_MEASURES


def test_constant_column_is_rejected_up_front(data):
    with pytest.raises(DataError, match="'SALES'"):
        run_study(data.assign(SALES=0.0), grid={"mdav": (2, 3)}, replications=1)
    assert np.isfinite(data.to_numpy()).all()


def test_example_script_quick_mode(capsys):
    script = Path(__file__).resolve().parents[2] / "examples" / \
        "microdata_bounded_measures_study.py"
    runpy.run_path(str(script), run_name="example")["main"](["--quick"])
    printed = capsys.readouterr().out
    assert "Study on Tarragona: 50 masked data sets" in printed
    assert "Study on CASC: 50 masked data sets" in printed
