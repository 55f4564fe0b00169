"""Gini coefficient, bootstrap intervals, regression comparison, interval overlap."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from microsdc._errors import DataError
from microsdc.utility import ci_overlap, gini, gini_comparison, regression_comparison


def _mean_difference_gini(x, w):
    """Independent definition: sum_ij w_i w_j |x_i - x_j| / (2 W^2 mean_w)."""
    x, w = np.asarray(x, float), np.asarray(w, float)
    mean = (w * x).sum() / w.sum()
    return (w[:, None] * w[None, :] * np.abs(x[:, None] - x[None, :])).sum() / (
        2 * w.sum() ** 2 * mean)


def test_gini_known_values():
    assert gini([1, 1, 1, 1]) == 0.0
    assert gini([0, 0, 0, 1]) == pytest.approx(0.75)
    assert gini([1, 2, 3], weights=[1, 2, 1]) == pytest.approx(gini([1, 2, 2, 3]))


@given(st.lists(st.floats(0.01, 1e6), min_size=2, max_size=40),
       st.lists(st.floats(0.1, 10.0), min_size=40, max_size=40))
def test_gini_equals_the_mean_difference_definition(values, weights):
    w = weights[: len(values)]
    # the sorted cumulative-weight formula equals the pairwise mean-difference Gini
    expected = _mean_difference_gini(values, w)
    assert gini(values, weights=w) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert gini(values) == pytest.approx(_mean_difference_gini(values, np.ones(len(values))),
                                         rel=1e-9, abs=1e-12)


def test_gini_comparison():
    rng = np.random.default_rng(0)
    income = rng.lognormal(mean=10, sigma=0.8, size=800)
    same = gini_comparison(income, income, seed=1)
    assert same.ci_original == same.ci_masked and same.overlap == 1.0
    assert same.ci_original[0] < same.original < same.ci_original[1]
    noisy = gini_comparison(income, income * rng.lognormal(sigma=0.8, size=800), seed=1)
    assert noisy.masked > noisy.original and noisy.overlap < 0.5
    assert not noisy.masked_in_original_ci
    again = gini_comparison(income, income * 1.0, seed=1)
    assert again.ci_original == same.ci_original  # reproducible with the seed
    assert "Gini" in noisy.summary() and noisy.to_frame().shape == (2, 3)
    assert noisy.to_report().title.endswith("Gini coefficient")


def test_gini_errors():
    with pytest.raises(DataError, match="positive"):
        gini([0.0, 0.0])
    with pytest.raises(DataError, match="position 1"):
        gini([1.0, np.nan])
    with pytest.raises(DataError, match="level"):
        gini_comparison([1.0, 2.0], [1.0, 2.0], level=1.5)


@pytest.mark.parametrize(("a", "b", "expected"), [
    ((0, 2), (1, 2), 0.75), ((0, 2), (0, 2), 1.0), ((0, 1), (2, 3), 0.0),
    ((0, 4), (1, 2), 0.5 * (1 / 4 + 1)), ((0, 1), (0.5, 0.5), 0.5), ((1, 1), (1, 1), 1.0),
])
def test_ci_overlap(a, b, expected):
    assert ci_overlap(a, b) == pytest.approx(expected)
    assert ci_overlap(b, a) == pytest.approx(expected)


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"education": rng.integers(8, 20, n).astype(float),
                          "sex": rng.choice(["f", "m"], n),
                          "region": rng.choice(["north", "south", "east"], n)})
    frame["wage"] = (1.0 + 0.08 * frame["education"] - 0.2 * (frame["sex"] == "f")
                     + rng.normal(scale=0.3, size=n))
    return frame


def test_regression_matches_an_independent_ols():
    data = _data()
    masked = data.assign(education=data["education"] + np.random.default_rng(1).normal(
        scale=2.0, size=len(data)))
    result = regression_comparison(data, masked, "wage", ["education", "sex", "region"])
    table = result.coefficients
    assert list(table.index) == ["(Intercept)", "education", "sex=m", "region=north",
                                 "region=south"]
    for frame, suffix in ((data, ""), (masked, "_masked")):
        design = np.column_stack([np.ones(len(frame)), frame["education"],
                                  frame["sex"] == "m", frame["region"] == "north",
                                  frame["region"] == "south"]).astype(float)
        y = frame["wage"].to_numpy()
        beta = np.linalg.solve(design.T @ design, design.T @ y)
        residual = y - design @ beta
        se = np.sqrt(residual @ residual / (len(y) - 5)
                     * np.diag(np.linalg.inv(design.T @ design)))
        t = stats.t.ppf(0.975, len(y) - 5)
        assert table[f"estimate{suffix}"].to_numpy() == pytest.approx(beta, rel=1e-9)
        assert table[f"se{suffix}"].to_numpy() == pytest.approx(se, rel=1e-9)
        assert table[f"ci_lower{suffix}"].to_numpy() == pytest.approx(beta - t * se, rel=1e-9)
    assert table.loc["education", "overlap"] < table.loc["sex=m", "overlap"]
    same = regression_comparison(data, data, "wage", ["education", "sex"])
    assert (same.coefficients["overlap"] == 1.0).all() and same.mean_overlap == 1.0
    assert "Regression of wage" in result.summary()
    assert result.to_report().title.endswith("wage")


def test_regression_missing_values():
    data = _data(2)
    masked = data.copy()
    masked.loc[3, "education"] = np.nan
    with pytest.raises(DataError, match="'education'"):
        regression_comparison(data, masked, "wage", ["education"])
    result = regression_comparison(data, masked, "wage", ["education"], missing="drop")
    assert (result.n_original, result.n_masked) == (300, 299)


def test_regression_unknown_category():
    data = _data(3)
    masked = data.assign(region=data["region"].replace("east", "west"))
    with pytest.raises(DataError, match="'west'"):
        regression_comparison(data, masked, "wage", ["region"])
