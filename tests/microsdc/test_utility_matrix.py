"""Matrix-discrepancy table (Mateo-Sanz et al. 2005, Table 1) against independent numpy."""

import numpy as np
import pandas as pd
import pytest

from microsdc._errors import DataError
from microsdc.utility import MATRICES, il1, mae, matrix_discrepancy, mse


def _data(seed=0, n=200, p=4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p)) + 10.0
    return x, x + rng.normal(scale=0.5, size=(n, p))


def _three(a, b, weights=None):
    """MSE, MAE, mean variation computed cell by cell (independent reference)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    w = np.ones(a.shape[-1]) if weights is None else weights
    cells = a.size
    mse_ = sum(((a - b) ** 2 * w).ravel()) / cells
    mae_ = sum((abs(a - b) * w).ravel()) / cells
    keep = a != 0
    mv = sum((abs(a - b) / np.where(keep, abs(a), 1) * w)[keep]) / keep.sum()
    return [mse_, mae_, mv]


def _pca_by_svd(values):
    """Loadings, commonalities and score coefficients from an SVD of standardised data."""
    z = (values - values.mean(axis=0)) / values.std(axis=0, ddof=1)
    _, singular, vt = np.linalg.svd(z, full_matrices=False)
    eigenvalues = singular**2 / (len(values) - 1)
    vectors = vt.T
    scores = z @ vectors / np.sqrt(eigenvalues)  # unit-variance component scores
    loadings = np.array([[np.corrcoef(z[:, i], scores[:, j])[0, 1]
                          for j in range(z.shape[1])] for i in range(z.shape[1])])
    coefficients = np.linalg.lstsq(z, scores, rcond=None)[0]
    return eigenvalues, loadings, coefficients


def _aligned(reference, other):
    """Flip the columns of ``other`` to agree in sign with ``reference``."""
    return other * np.where((reference * other).sum(axis=0) < 0, -1.0, 1.0)


def test_moment_rows_match_numpy():
    x, xm = _data()
    table = matrix_discrepancy(x, xm)
    upper = np.triu_indices(4, k=1)
    v, vm = np.cov(x.T), np.cov(xm.T)
    r, rm = np.corrcoef(x.T), np.corrcoef(xm.T)
    assert table.loc["X"].tolist() == pytest.approx([mse(x, xm), mae(x, xm), il1(x, xm)])
    assert table.loc["Xbar"].tolist() == pytest.approx(_three(x.mean(0), xm.mean(0)))
    assert table.loc["V"].tolist() == pytest.approx(_three(v[upper], vm[upper]))
    assert table.loc["S"].tolist() == pytest.approx(_three(x.var(0, ddof=1), xm.var(0, ddof=1)))
    assert table.loc["R"].tolist() == pytest.approx(_three(r[upper], rm[upper]))


@pytest.mark.parametrize("weights", ["variance", "equal"])
def test_principal_component_rows_match_an_svd(weights):
    x, xm = _data(1)
    eigenvalues, loadings, coefficients = _pca_by_svd(x)
    _, loadings_m, coefficients_m = _pca_by_svd(xm)
    # orient as documented: original by its largest coefficient, masked along the original
    signs = np.sign(loadings[np.abs(loadings).argmax(axis=0), np.arange(4)])
    loadings, coefficients = loadings * signs, coefficients * signs
    flip = np.where((coefficients * coefficients_m).sum(axis=0) < 0, -1.0, 1.0)
    loadings_m, coefficients_m = loadings_m * flip, coefficients_m * flip
    w = eigenvalues / 4 if weights == "variance" else np.ones(4)
    table = matrix_discrepancy(x, xm, component_weights=weights)
    assert table.loc["RF"].tolist() == pytest.approx(_three(loadings, loadings_m, w), rel=1e-8)
    assert table.loc["F"].tolist() == pytest.approx(_three(coefficients, coefficients_m, w),
                                                    rel=1e-8)
    assert table.loc["C"].tolist() == pytest.approx(_three(loadings[:, 0] ** 2,
                                                           loadings_m[:, 0] ** 2), rel=1e-8)


def test_identical_data_give_zero_everywhere_and_shape():
    x, _ = _data(2)
    table = matrix_discrepancy(pd.DataFrame(x), pd.DataFrame(x))
    assert list(table.index) == list(MATRICES) and list(table.columns) == ["MSE", "MAE", "MV"]
    assert (table.to_numpy() == 0).all()


def test_correlation_based_rows_do_not_depend_on_units():
    x, xm = _data(3)
    base = matrix_discrepancy(x, xm)
    scaled = matrix_discrepancy(x * 2.0 - 5.0, xm * 2.0 - 5.0)
    for row in ("R", "RF", "C", "F"):
        assert scaled.loc[row].tolist() == pytest.approx(base.loc[row].tolist(), rel=1e-9)


def test_explicit_weights_and_bad_weights():
    x, xm = _data(4)
    assert matrix_discrepancy(x, xm, component_weights=np.ones(4)).equals(
        matrix_discrepancy(x, xm, component_weights="equal"))
    for bad in ("heavy", [1.0, 2.0], [-1.0, 1.0, 1.0, 1.0]):
        with pytest.raises(DataError, match="component_weights"):
            matrix_discrepancy(x, xm, component_weights=bad)


def test_single_variable_and_constant_masked_column():
    x, xm = _data(5)
    one = matrix_discrepancy(x[:, :1], xm[:, :1])
    assert one.loc[["V", "R"]].isna().all().all() and one.loc["S"].notna().all()
    flat = xm.copy()
    flat[:, 2] = 7.0
    table = matrix_discrepancy(x, flat)
    assert table.loc[["R", "RF", "C", "F"]].isna().all().all()
    assert table.loc[["X", "V", "S"]].notna().all().all()


def test_constant_original_column_is_an_error():
    x, xm = _data(6)
    x[:, 1] = 3.0
    with pytest.raises(DataError, match="'V2'"):
        matrix_discrepancy(x, xm)
