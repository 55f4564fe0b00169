"""Eigenvalue comparison (sdcMicro's eigen / robeigen) and the FAST-MCD estimate."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from microsdc._errors import DataError
from microsdc.masking import mdav
from microsdc.utility import eigen_discrepancy, eigenvalues, mcd


def test_eigen_matches_sdcmicro_on_mdav_testdata(testdata_100):
    # sdcMicro: dUtility(x, mdav(x, k = 4), method = "eigen") on testdata[1:100, ...]
    x = testdata_100
    assert eigen_discrepancy(x, mdav(x, k=4)) == pytest.approx(0.0596172, abs=5e-8)


def test_eigen_matches_sdcmicro_on_mdav_microdata(micro_data):
    assert eigen_discrepancy(micro_data, mdav(micro_data, k=3)) == pytest.approx(3.11481, abs=5e-6)


def test_eigen_by_hand():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 3))
    xm = x + rng.normal(scale=0.4, size=x.shape)
    e = np.sort(np.linalg.eigvals(np.corrcoef(x.T)).real)[::-1]
    em = np.sort(np.linalg.eigvals(np.corrcoef(xm.T)).real)[::-1]
    assert eigen_discrepancy(x, xm) == pytest.approx(np.sum(np.abs(e - em) / e), rel=1e-10)
    assert eigenvalues(x) == pytest.approx(e, rel=1e-10)
    assert eigen_discrepancy(x, x) == 0.0


def test_constant_columns():
    x = np.column_stack([np.arange(10.0), np.arange(10.0) ** 2])
    flat = x.copy()
    flat[:, 1] = 4.0
    assert np.isnan(eigen_discrepancy(x, flat))  # sdcMicro gives NA
    with pytest.raises(DataError, match="'V2'"):
        eigen_discrepancy(flat, x)


def test_mcd_finds_the_exact_minimum_determinant_subset():
    rng = np.random.default_rng(1)
    x = rng.standard_t(df=2, size=(12, 2))
    h = (12 + 2 + 1) // 2
    best = min(np.linalg.det(np.cov(x[list(s)].T)) for s in combinations(range(12), h))
    estimate = mcd(x, seed=0)
    assert estimate.h == h and estimate.support.sum() == h
    assert np.linalg.det(np.cov(x[estimate.support].T)) == pytest.approx(best, rel=1e-9)
    assert estimate.log_determinant == pytest.approx(np.log(best), rel=1e-9)


def test_mcd_ignores_outliers_and_is_consistent_at_the_normal():
    rng = np.random.default_rng(2)
    cov = np.array([[2.0, 0.8], [0.8, 1.0]])
    x = rng.multivariate_normal([1.0, -1.0], cov, size=2000)
    contaminated = x.copy()
    contaminated[:200] = rng.normal(loc=[30.0, 30.0], size=(200, 2))
    estimate = mcd(contaminated, seed=3)
    assert not estimate.kept[:200].any()
    assert estimate.location == pytest.approx([1.0, -1.0], abs=0.1)
    assert estimate.covariance == pytest.approx(cov, abs=0.15)
    # raw estimate: consistency factor alpha / F_{chi2(p+2)}(chi2_{p,alpha}), alpha = h/n
    alpha = estimate.h / len(x)
    factor = alpha / stats.chi2.cdf(stats.chi2.ppf(alpha, 2), 4)
    assert estimate.raw_covariance == pytest.approx(
        np.cov(contaminated[estimate.support].T) * factor, rel=1e-10)


def test_mcd_large_sample_path_and_reproducibility():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(60_000, 3))
    a, b = mcd(x, seed=5), mcd(x, seed=5)
    assert np.array_equal(a.covariance, b.covariance) and np.array_equal(a.support, b.support)
    assert a.support.sum() == a.h and a.covariance == pytest.approx(np.eye(3), abs=0.05)


def test_mcd_errors():
    with pytest.raises(DataError, match="more than p"):
        mcd(np.ones((3, 2)))
    with pytest.raises(DataError, match="between"):
        mcd(np.random.default_rng(0).normal(size=(20, 2)), h=2)
    line = np.column_stack([np.arange(30.0), 2 * np.arange(30.0)])
    with pytest.raises(DataError, match="exact fit"):
        mcd(line, seed=0)


def test_robust_eigen_is_the_mcd_of_the_standardised_data():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(400, 3)) @ np.array([[1, 0.5, 0.2], [0, 1, 0.4], [0, 0, 1]])
    xm = x + rng.normal(scale=0.3, size=x.shape)
    xm[:20] *= 25  # gross errors in 5 % of the records

    def robust_values(values, state):  # R: eigen(covMcd(scale(x))$cov)$values
        z = (values - values.mean(axis=0)) / values.std(axis=0, ddof=1)
        return np.sort(np.linalg.eigvalsh(mcd(z, seed=state).covariance))[::-1]

    state = int(np.random.default_rng(1).integers(2**63))  # the state eigen draws first
    e, em = robust_values(x, state), robust_values(xm, state)
    assert eigen_discrepancy(x, xm, robust=True, seed=1) == pytest.approx(
        np.sum(np.abs(e - em) / e), rel=1e-10)
    assert eigenvalues(x, robust=True, seed=state) == pytest.approx(e, rel=1e-12)
    assert eigen_discrepancy(x, x, robust=True, seed=1) == 0.0
