"""PIL (Mateo-Sanz, Domingo-Ferrer and Sebe 2005, section 4) against a literal computation."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from microsdc._errors import DataError
from microsdc.utility import (
    PIL_QUANTILES,
    pil_correlation,
    pil_covariance,
    pil_mean,
    pil_quantiles,
    pil_variance,
    probabilistic_information_loss,
)


def _pil(estimate, parameter, variance):
    """Paper eq. (1): 2 P(0 <= Z <= |estimate - parameter| / sd)."""
    z = abs(estimate - parameter) / np.sqrt(variance)
    return 2.0 * (stats.norm.cdf(z) - 0.5)


def _literal(x, xm):
    """Every pil by the paper's formulas, one statistic at a time (loops on purpose)."""
    n, p = x.shape
    n2 = xm.shape[0]

    def mu(j, r):
        return np.mean((x[:, j] - x[:, j].mean()) ** r)

    def mu_rs(j, k, r, s):
        return np.mean((x[:, j] - x[:, j].mean()) ** r * (x[:, k] - x[:, k].mean()) ** s)

    def m_rs(j, k):
        return np.mean((xm[:, j] - xm[:, j].mean()) * (xm[:, k] - xm[:, k].mean()))

    means = [_pil(xm[:, j].mean(), x[:, j].mean(), mu(j, 2) / n2) for j in range(p)]
    variances = [_pil(m_rs(j, j), mu(j, 2), (mu(j, 4) - mu(j, 2) ** 2) / n2) for j in range(p)]
    covs, cors = [], []
    for j in range(p):
        for k in range(j + 1, p):
            mu11, mu22 = mu_rs(j, k, 1, 1), mu_rs(j, k, 2, 2)
            covs.append(_pil(m_rs(j, k), mu11, (mu22 - mu11**2) / n2))
            rho = mu11 / np.sqrt(mu(j, 2) * mu(k, 2))
            r = m_rs(j, k) / np.sqrt(m_rs(j, j) * m_rs(k, k))
            var_r = rho**2 / n2 * (
                mu22 / mu11**2
                + 0.25 * (mu(j, 4) / mu(j, 2) ** 2 + mu(k, 4) / mu(k, 2) ** 2
                          + 2 * mu22 / (mu(j, 2) * mu(k, 2)))
                - (mu_rs(j, k, 3, 1) / (mu11 * mu(j, 2)) + mu_rs(j, k, 1, 3) / (mu11 * mu(k, 2))))
            cors.append(_pil(r, rho, var_r))
    quantiles = []
    for q in PIL_QUANTILES:
        for j in range(p):
            ordered, ordered_m = np.sort(x[:, j]), np.sort(xm[:, j])
            population = ordered[int(np.ceil(round(q * n, 6))) - 1]  # rank ceil(q n)
            sample = ordered_m[int(np.ceil(round(q * n2, 6))) - 1]
            eps = (ordered[-1] - ordered[0]) / 1000
            inside = np.sum((x[:, j] > population - eps) & (x[:, j] < population + eps))
            density = inside / n / (2 * eps)
            quantiles.append(_pil(sample, population, q * (1 - q) / (n2 * density**2)))
    return {"Q": np.mean(quantiles), "m1": np.mean(means), "m2": np.mean(variances),
            "m11": np.mean(covs), "r": np.mean(cors)}


@pytest.mark.parametrize("subsample", [False, True])
def test_matches_the_papers_formulas(subsample):
    rng = np.random.default_rng(0)
    x = rng.lognormal(size=(400, 3)) @ np.array([[1, 0.5, 0.2], [0, 1, 0.3], [0, 0, 1]])
    xm = x + rng.normal(scale=0.3, size=x.shape)
    if subsample:  # n' != n: the masked data as a sample of 250 records
        xm = xm[rng.choice(400, 250, replace=False)]
    expected = _literal(x, xm)
    result = probabilistic_information_loss(x, xm)
    for name, value in expected.items():
        assert getattr(result, name) == pytest.approx(value, rel=1e-9, abs=1e-12), name
    assert result.overall == pytest.approx(100 * np.mean(list(expected.values())), rel=1e-9)
    singles = (pil_quantiles, pil_mean, pil_variance, pil_covariance, pil_correlation)
    for name, single in zip(("Q", "m1", "m2", "m11", "r"), singles, strict=True):
        assert single(x, xm) == pytest.approx(getattr(result, name), rel=1e-12)


def test_correlation_variance_at_zero_correlation():
    # mu_11 = 0: the paper's formula divides by zero; its limit is mu_22 / (mu_20 mu_02 n')
    x = np.array([[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]] * 30)
    xm = x.copy()
    xm[0, 1] = -0.5  # a small change of the correlation
    m = xm - xm.mean(axis=0)
    r = (m[:, 0] * m[:, 1]).mean() / np.sqrt((m[:, 0] ** 2).mean() * (m[:, 1] ** 2).mean())
    expected = _pil(r, 0.0, 1.0 / len(xm))  # mu_22 = mu_20 = mu_02 = 1
    assert pil_correlation(x, xm) == pytest.approx(expected, rel=1e-12)


def test_zero_variance_statistic_gives_zero_or_one():
    # a perfectly correlated pair: Var(r) = 0, so any change of r has pil 1
    base = np.arange(1.0, 101.0)
    x = np.column_stack([base, 2 * base + 1])
    assert pil_correlation(x, x * [1.0, 1.0]) == 0.0
    assert pil_correlation(x, x + np.column_stack([np.zeros(100), np.sin(base)])) == 1.0


def test_invariances_and_single_variable():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 3))
    shifted = probabilistic_information_loss(x, x + 1.0)
    assert [shifted.m2, shifted.m11, shifted.r] == pytest.approx([0.0] * 3, abs=1e-12)
    assert shifted.m1 > 0.99
    one = probabilistic_information_loss(x[:, :1], x[:, :1] * 1.1)
    assert np.isnan(one.m11) and np.isnan(one.r)
    assert one.overall == pytest.approx(100 * np.mean([one.Q, one.m1, one.m2]))


def test_constant_masked_column_leaves_correlations_undefined():
    x = np.random.default_rng(4).normal(size=(100, 3))
    xm = x.copy()
    xm[:, 1] = 5.0
    result = probabilistic_information_loss(x, xm)
    assert np.isnan(result.r) and np.isnan(result.overall)
    assert result.m1 == pytest.approx(1 / 3) and 0 < result.m11 < 1


def test_result_rendering():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(200, 3))
    result = probabilistic_information_loss(x, x * 1.05)
    assert set(result.measures()) == {"Q", "m1", "m2", "m11", "r", "overall"}
    assert all(type(v) is float for v in result.measures().values())
    assert len(result.per_pair) == 3 and list(result.per_variable.index) == ["V1", "V2", "V3"]
    assert result.per_quantile.shape == (19, 3)
    assert "PIL(m2)" in result.summary() and len(result.to_frame()) == 6
    assert result.to_report().title.startswith("Probabilistic")


def test_constant_original_column_is_an_error():
    x = np.column_stack([np.arange(10.0), np.ones(10)])
    with pytest.raises(DataError, match="'V2'"):
        probabilistic_information_loss(x, x)


@given(arrays(np.float64, st.tuples(st.integers(5, 40), st.integers(1, 3)),
              elements=st.floats(-1e3, 1e3)),
       st.floats(0.0, 5.0), st.integers(0, 2**32 - 1))
def test_bounded_in_unit_interval_and_zero_for_identical_data(x, scale, seed):
    assume(np.all(x.std(axis=0) > 1e-3))
    identical = probabilistic_information_loss(x, x).measures()
    assert all(v == 0.0 or np.isnan(v) for v in identical.values())
    xm = x + scale * np.random.default_rng(seed).normal(size=x.shape)
    values = probabilistic_information_loss(x, xm).measures()
    overall = values.pop("overall")
    assert all(0.0 <= v <= 1.0 or np.isnan(v) for v in values.values())
    assert 0.0 <= overall <= 100.0


def test_pil_increases_on_average_with_noise():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 3)) @ np.array([[1, 0.6, 0.3], [0, 1, 0.5], [0, 0, 1]])
    levels = [0.01, 0.05, 0.2, 1.0]
    means = [np.mean([probabilistic_information_loss(
        x, x + level * rng.normal(size=x.shape)).overall for _ in range(10)])
        for level in levels]
    assert all(a < b for a, b in zip(means, means[1:], strict=False))
