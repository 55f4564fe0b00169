"""Probabilistic information loss, PIL (Mateo-Sanz, Domingo-Ferrer and Sebe 2005, section 4).

The original data X (n records) is viewed as a population, the masked data X' (n' records)
as a sample from it. For a population parameter theta and its sample statistic theta-hat,
with the variance of the statistic under simple random sampling,

    pil(theta-hat) = 2 P(0 <= Z <= |theta-hat - theta| / sqrt(Var)) = erf(z / sqrt(2)),

Z standard normal (paper, eq. (1)). Population moments of X use divisor n, sample moments of
X' divisor n' (section 4.2). Statistics and variances (section 4.4):

* mean m1 of attribute j: Var = mu_2 / n';
* variance m2: Var = (mu_4 - mu_2^2) / n';
* covariance m11 of attributes j < j': Var = (mu_22 - mu_11^2) / n';
* correlation r of j < j': Var = rho^2/n' { mu_22/mu_11^2 + 1/4 (mu_40/mu_20^2 +
  mu_04/mu_02^2 + 2 mu_22/(mu_20 mu_02)) - (mu_31/(mu_11 mu_20) + mu_13/(mu_11 mu_02)) };
* q-quantile Q_q of attribute j: Var = q (1 - q) / (n' f(Q_q)^2).

Averages (eqs. (2)-(5)): PIL(m1) and PIL(m2) over the p attributes, PIL(m11) and PIL(r) over
the p(p-1)/2 pairs, PIL(Q) over the attributes and the quantiles 5 %, 10 %, ..., 95 %
(section 5); the overall ``PIL = 100 (PIL(Q) + PIL(m1) + PIL(m2) + PIL(m11) + PIL(r)) / 5``
(section 5) is in percent.

Choices the paper leaves open, made here:

* Quantiles of X and X' are order statistics (R's quantile type 1): Q_q is the value of
  rank ceil(q n), the smallest value with at least q n records at or below it.
* The density f(Q_q) is the proportion of *original* records in the open interval
  (Q_q - eps, Q_q + eps) divided by its width 2 eps, eps = (max - min) / 1000 of the
  original attribute (section 4.4). Q_q is itself an original value, so f > 0.
* The variance of r is the paper's formula with rho^2 multiplied into the braces, i.e.
  ``1/n' {mu_22/(mu_20 mu_02) + rho^2/4 (...) - (mu_11 mu_31/(mu_20^2 mu_02) +
  mu_11 mu_13/(mu_20 mu_02^2))}``: identical wherever mu_11 != 0, and continuous at
  rho = 0, where it gives mu_22 / (mu_20 mu_02 n') instead of dividing by zero.
* A statistic with zero variance (e.g. a perfectly correlated pair) has pil 0 if it is
  unchanged and 1 otherwise (the limit of erf(z / sqrt(2))). Round-off that makes a
  variance slightly negative is treated as zero.
* With p = 1 there are no pairs: PIL(m11) and PIL(r) are NaN and the overall PIL averages
  the three defined measures. A constant masked column has no correlations: PIL(r) and the
  overall PIL are NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from microsdc._data import NumericPair, numeric_pair
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus

if TYPE_CHECKING:
    from sdcreport import Section

#: Quantile levels of PIL(Q): 5 %, 10 %, ..., 95 % (paper, section 5).
PIL_QUANTILES = tuple(round(0.05 * k, 2) for k in range(1, 20))

_NAMES = ("Q", "m1", "m2", "m11", "r")


def _pil(difference: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """erf(|difference| / sqrt(2 variance)), with the zero-variance limits 0 and 1."""
    difference = np.abs(difference)
    variance = np.maximum(variance, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(variance > 0, difference / np.sqrt(variance), np.inf)
    z = np.where(difference == 0, 0.0, z)
    return special.erf(z / np.sqrt(2.0))


@dataclass(frozen=True)
class _Moments:
    """Central moments (divisor = number of records) of one data set.

    ``cov`` is the matrix mu_11(j, j'); its diagonal is mu_2(j), so that X and X' go
    through the same arithmetic (identical data give identical moments).
    """

    mean: np.ndarray
    centred: np.ndarray
    cov: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> _Moments:
        mean = values.mean(axis=0)
        centred = values - mean
        return cls(mean, centred, centred.T @ centred / values.shape[0])

    def higher(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """mu_4(j), the matrix mu_22(j, j') and the matrix mu_31(j, j')."""
        n = self.centred.shape[0]
        square = self.centred * self.centred
        mu4 = np.einsum("ij,ij->j", square, square) / n
        mu22 = square.T @ square / n
        mu31 = (square * self.centred).T @ self.centred / n
        return mu4, mu22, mu31


def _pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(p, k=1)


def _correlations(cov: np.ndarray) -> np.ndarray:
    """Correlation matrix from a covariance matrix (same arithmetic for X and X')."""
    sd = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):  # constant masked column -> NaN
        return cov / np.outer(sd, sd)


def order_statistic_index(n: int, levels: np.ndarray) -> np.ndarray:
    """0-based index of the order statistic giving the q-quantile of n values (R type 1):
    ceil(q n) - 1 within [0, n - 1], with q n within a relative 1e-9 of an integer taken
    as that integer (so that 0.55 * 400 is 220, not 220.00000000000003)."""
    position = n * np.asarray(levels, dtype=float)
    nearest = np.round(position)
    position = np.where(np.abs(position - nearest) <= 1e-9 * np.maximum(1.0, position),
                        nearest, position)
    return np.clip(np.ceil(position) - 1, 0, n - 1).astype(np.intp)


def _quantile_pil(pair: NumericPair, levels: tuple[float, ...]) -> np.ndarray:
    """pil(Q_q(j)) as an array (len(levels), p)."""
    q = np.asarray(levels, dtype=float)
    n, n_masked = pair.n, pair.xm.shape[0]
    ordered = np.sort(pair.x.T, axis=1)  # (p, n): sorted columns, for quantiles and counts
    population = ordered[:, order_statistic_index(n, q)].T
    at = order_statistic_index(n_masked, q)
    masked = np.partition(np.ascontiguousarray(pair.xm.T), np.unique(at), axis=1)
    sample = masked[:, at].T
    eps = (ordered[:, -1] - ordered[:, 0]) / 1000.0
    inside = np.empty_like(population)
    for j in range(pair.p):  # loop over columns; each searchsorted is vectorised
        above = np.searchsorted(ordered[j], population[:, j] - eps[j], side="right")
        below = np.searchsorted(ordered[j], population[:, j] + eps[j], side="left")
        inside[:, j] = below - above
    with np.errstate(divide="ignore"):
        density = inside / n / (2.0 * eps)
        variance = q[:, None] * (1.0 - q[:, None]) / (n_masked * density**2)
    return _pil(sample - population, variance)


def _moment_pil(pair: NumericPair) -> dict[str, np.ndarray]:
    """pil of mean and variance per attribute, of covariance and correlation per pair."""
    n_masked = pair.xm.shape[0]
    pop, smp = _Moments.of(pair.x), _Moments.of(pair.xm)
    mu4, mu22, mu31 = pop.higher()
    mu11, m11 = pop.cov, smp.cov
    mu2 = np.diag(mu11)
    result = {
        "m1": _pil(smp.mean - pop.mean, mu2 / n_masked),
        "m2": _pil(np.diag(m11) - mu2, (mu4 - mu2**2) / n_masked),
    }
    i, k = _pairs(pair.p)
    result["m11"] = _pil((m11 - mu11)[i, k], (mu22 - mu11**2)[i, k] / n_masked)
    a, b = mu2[i], mu2[k]  # mu_20 and mu_02 of each pair
    c11, c22 = mu11[i, k], mu22[i, k]
    rho, r = _correlations(mu11)[i, k], _correlations(m11)[i, k]
    var_r = (c22 / (a * b)
             + rho**2 / 4.0 * (mu4[i] / a**2 + mu4[k] / b**2 + 2.0 * c22 / (a * b))
             - (c11 * mu31[i, k] / (a**2 * b) + c11 * mu31[k, i] / (a * b**2))) / n_masked
    result["r"] = _pil(r - rho, var_r)
    return result


@dataclass(frozen=True)
class PILResult(ResultBase):
    """Probabilistic information loss measures of one masked data set.

    Attributes
    ----------
    Q, m1, m2, m11, r : float
        PIL(Q), PIL(m1), PIL(m2), PIL(m11), PIL(r), each in [0, 1] (NaN for pair measures
        when p = 1).
    overall : float
        ``100 * mean`` of the five measures above (of Q, m1 and m2 when p = 1), in
        percent (paper section 5); NaN when a masked column is constant (its correlations
        are undefined).
    per_variable : pandas.DataFrame
        pil of mean, variance and the mean pil over quantiles, one row per variable.
    per_pair : pandas.DataFrame
        pil of covariance and correlation, one row per pair of variables.
    per_quantile : pandas.DataFrame
        pil(Q_q(j)), one row per quantile level, one column per variable.
    seconds : float
        Time taken.
    """

    Q: float
    m1: float
    m2: float
    m11: float
    r: float
    overall: float
    per_variable: pd.DataFrame = field(repr=False)
    per_pair: pd.DataFrame = field(repr=False)
    per_quantile: pd.DataFrame = field(repr=False)
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def measures(self) -> dict[str, float]:
        """``{"Q", "m1", "m2", "m11", "r", "overall"}`` as plain floats."""
        return {name: float(getattr(self, name)) for name in (*_NAMES, "overall")}

    def _dict_fields(self) -> dict[str, Any]:
        """The :meth:`measures`."""
        return self.measures()

    def summary(self) -> str:
        values = self.measures()
        parts = ", ".join(f"PIL({k}) = {values[k]:.4f}" for k in _NAMES)
        return f"Probabilistic information loss: {parts}; overall PIL = " \
               f"{values['overall']:.2f} %"

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: its value and the statistic it compares."""
        compared = ("quantiles 5 %..95 %", "means", "variances", "covariances",
                    "correlations", "average of the five (percent)")
        return pd.DataFrame({"measure": [f"PIL({k})" for k in _NAMES] + ["PIL"],
                             "value": list(self.measures().values()),
                             "compares": list(compared)})

    def to_report(self) -> Section:
        from sdcreport import Section

        return (Section("Probabilistic information loss (PIL)")
                .add_text("Each pil is the probability that a standard normal discrepancy is "
                          "smaller in absolute value than the observed standardised change of a "
                          "statistic (Mateo-Sanz, Domingo-Ferrer and Sebe 2005). 0 = unchanged, "
                          "1 = far outside its sampling variability.")
                .add_metrics(self.measures())
                .add_table(self.per_variable, "pil per variable")
                .add_table(self.per_pair, "pil per pair of variables"))


def pil_result(pair: NumericPair, levels: tuple[float, ...] = PIL_QUANTILES) -> PILResult:
    """All PIL measures for validated data."""
    start = perf_counter()
    pair.require_variation("PIL")
    quantiles = _quantile_pil(pair, levels)
    moments = _moment_pil(pair)
    with np.errstate(invalid="ignore"):
        values = {"Q": float(quantiles.mean()),
                  **{k: float(v.mean()) if v.size else float("nan") for k, v in moments.items()}}
    averaged = [v for k, v in values.items() if pair.p > 1 or k not in ("m11", "r")]
    i, k = _pairs(pair.p)
    columns = pair.columns
    return PILResult(
        **values,
        overall=100.0 * float(np.mean(averaged)),
        per_variable=pd.DataFrame({"pil(Q)": quantiles.mean(axis=0), "pil(m1)": moments["m1"],
                                   "pil(m2)": moments["m2"]}, index=pd.Index(columns,
                                                                             name="variable")),
        per_pair=pd.DataFrame({"variable": [columns[a] for a in i],
                               "other": [columns[b] for b in k],
                               "pil(m11)": moments["m11"], "pil(r)": moments["r"]}),
        per_quantile=pd.DataFrame(quantiles, columns=columns,
                                  index=pd.Index(levels, name="q")),
        seconds=perf_counter() - start,
    )


def probabilistic_information_loss(X: Any, X_masked: Any, *,
                                   quantiles: tuple[float, ...] = PIL_QUANTILES) -> PILResult:
    """All probabilistic information loss measures of a masked data set.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like
        Original data (the population, n records) and masked data (the sample, n'
        records; n' may differ from n) with the same numeric columns.
    quantiles : tuple of float
        Quantile levels of PIL(Q); default 0.05, 0.10, ..., 0.95.

    Returns
    -------
    PILResult

    Raises
    ------
    DataError
        Invalid data, fewer than 2 records, or a constant original column.

    Notes
    -----
    Formulas and the choices the paper leaves open are listed in the module docstring
    (:mod:`microsdc.utility._probabilistic`); paper: section 4, eqs. (1)-(5) and 4.4.

    References
    ----------
    Mateo-Sanz, J.M., Domingo-Ferrer, J., Sebe, F. (2005). Probabilistic information loss
    measures in confidentiality protection of continuous microdata. *Data Mining and
    Knowledge Discovery* 11(2), 181-193.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(500, 3))
    >>> probabilistic_information_loss(x, x).overall
    0.0
    >>> result = probabilistic_information_loss(x, x + rng.normal(size=x.shape))
    >>> 0 < result.m2 <= 1
    True
    """
    return pil_result(numeric_pair(X, X_masked, same_records=False, min_records=2),
                      tuple(float(q) for q in quantiles))


def _single(name: str, X: Any, X_masked: Any) -> float:
    pair = numeric_pair(X, X_masked, same_records=False, min_records=2)
    pair.require_variation("PIL")
    if name == "Q":
        return float(_quantile_pil(pair, PIL_QUANTILES).mean())
    values = _moment_pil(pair)[name]
    return float(values.mean()) if values.size else float("nan")


def pil_quantiles(X: Any, X_masked: Any) -> float:
    """PIL(Q): mean pil of the quantiles 5 %, ..., 95 % over all attributes.

    Parameters are those of :func:`probabilistic_information_loss`.

    Notes
    -----
    ``Var(Q_q) = q (1 - q) / (n' f(Q_q)^2)`` with the density estimated on the original
    attribute over (Q_q - eps, Q_q + eps), eps = range / 1000 (paper, section 4.4).

    Examples
    --------
    >>> x = np.arange(1.0, 201.0).reshape(100, 2)
    >>> pil_quantiles(x, x)
    0.0
    """
    return _single("Q", X, X_masked)


def pil_mean(X: Any, X_masked: Any) -> float:
    """PIL(m1): mean pil of the attribute means (paper, eq. (2), Var = mu_2 / n').

    Examples
    --------
    >>> x = np.arange(1.0, 201.0).reshape(100, 2)
    >>> round(pil_mean(x, x + 1), 4)   # z = 1 / sqrt(mu_2 / 100) = 0.173 for each column
    0.1375
    """
    return _single("m1", X, X_masked)


def pil_variance(X: Any, X_masked: Any) -> float:
    """PIL(m2): mean pil of the attribute variances (eq. (3), Var = (mu_4 - mu_2^2)/n').

    Examples
    --------
    >>> x = np.arange(1.0, 201.0).reshape(100, 2)
    >>> pil_variance(x, x + 1)        # a shift leaves variances unchanged
    0.0
    """
    return _single("m2", X, X_masked)


def pil_covariance(X: Any, X_masked: Any) -> float:
    """PIL(m11): mean pil of the covariances of all pairs j < j' (eq. (4)).

    ``Var(m11) = (mu_22 - mu_11^2) / n'``.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(300, 3))
    >>> pil_covariance(x, x)
    0.0
    """
    return _single("m11", X, X_masked)


def pil_correlation(X: Any, X_masked: Any) -> float:
    """PIL(r): mean pil of Pearson's correlations of all pairs j < j' (eq. (5)).

    The variance of r is the paper's section 4.4 formula (see the module docstring for
    its form at rho = 0).

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(300, 3))
    >>> round(pil_correlation(x, 2 * x + 1), 12)  # correlations ignore scale and shift
    0.0
    """
    return _single("r", X, X_masked)
