"""Benchmark indicators: a statistic computed before and after protection, with its
confidence intervals (sdcMicro guide, "Utility measures based on the end user's needs").

* Gini coefficient of an income-like variable, with percentile bootstrap confidence
  intervals on the original and on the masked data.
* Linear regression coefficients (OLS) on the original and on the masked data, with their
  t confidence intervals.

Original and masked intervals are compared by the interval overlap of Karr, Kohnen, Oganian,
Reiter and Sanil (2006): with [L, U] the original and [L', U'] the masked interval and
[a, b] = [max(L, L'), min(U, U')] their intersection,

    J = 1/2 ((b - a) / (U - L) + (b - a) / (U' - L')),

J = 1 for identical intervals and J = 0 when they are disjoint (the authors' convention).
Each comparison also tells whether the masked point estimate lies in the original interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from microsdc._data import Seed, frame_pair, generator, shown
from microsdc._errors import DataError
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus
from tabsdc._validation import check_choice

if TYPE_CHECKING:
    from sdcreport import Section

_BOOTSTRAP_CELLS = 4_000_000  # bootstrap replicates are processed in blocks of this size


def ci_overlap(interval: Sequence[float], other: Sequence[float]) -> float:
    """Interval overlap J of Karr et al. (2006), in [0, 1].

    Parameters
    ----------
    interval, other : pair of float
        (lower, upper) of the original and of the masked confidence interval.

    Returns
    -------
    float
        1/2 of the intersection length relative to each interval's length, summed; 0 when
        the intervals are disjoint.

    Examples
    --------
    >>> ci_overlap((0.0, 2.0), (1.0, 2.0))
    0.75
    >>> ci_overlap((0.0, 1.0), (2.0, 3.0))
    0.0
    """
    (low, high), (low2, high2) = map(tuple, (interval, other))
    if not (low <= high and low2 <= high2):
        raise DataError(f"intervals must be (lower, upper); got {shown((low, high))} and "
                        f"{shown((low2, high2))}")
    start, end = max(low, low2), min(high, high2)
    if start > end:
        return 0.0

    def share(lower: float, upper: float) -> float:  # a point interval inside counts fully
        return 1.0 if upper == lower else (end - start) / (upper - lower)

    return 0.5 * (share(low, high) + share(low2, high2))


def _vector(values: Any, role: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise DataError(f"{role} is empty")
    bad = ~np.isfinite(array)
    if bad.any():
        raise DataError(f"{role} has a missing or infinite value at position {int(np.argmax(bad))}")
    return array


def _weighted_gini(sorted_x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gini of ascending values with weights (..., n): vectorised over leading axes."""
    cumulative = np.cumsum(weights, axis=-1)
    total_weight = weights.sum(axis=-1)
    total = (weights * sorted_x).sum(axis=-1)
    numerator = 2.0 * (cumulative * weights * sorted_x).sum(axis=-1) \
        - (weights**2 * sorted_x).sum(axis=-1)
    return numerator / (total_weight * total) - 1.0


def _prepared(x: Any, weights: Any, role: str
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = _vector(x, role)
    w = np.ones_like(values) if weights is None else _vector(weights, f"weights of {role}")
    if w.shape != values.shape or np.any(w < 0):
        raise DataError(f"weights of {role} must be {values.size} non-negative numbers")
    if (w * values).sum() <= 0:
        raise DataError(f"the Gini coefficient of {role} needs a positive weighted total")
    order = np.argsort(values, kind="stable")
    return values[order], w[order], order


def gini(x: Any, weights: Any = None) -> float:
    """Gini coefficient (a fraction; multiply by 100 for the usual percentage).

    Parameters
    ----------
    x : array-like of shape (n,)
        Values (e.g. income), with a positive (weighted) total.
    weights : array-like of shape (n,), optional
        Non-negative sampling weights.

    Returns
    -------
    float

    Raises
    ------
    DataError
        Missing values, bad weights, or a non-positive total.

    Notes
    -----
    With values sorted ascending, weights w_i and cumulative weights W_i:
    ``G = (2 sum_i W_i w_i x_i - sum_i w_i^2 x_i) / (sum_i w_i sum_i w_i x_i) - 1``; with
    unit weights ``G = 2 sum_i i x_(i) / (n sum_i x_i) - (n + 1)/n``. This is the weighted
    Gini of the R package laeken (used in sdcMicro's case studies) divided by 100.

    References
    ----------
    Alfons, A., Templ, M. (2013). Estimation of social exclusion indicators from complex
    surveys: the R package laeken. *Journal of Statistical Software* 54(15).

    Examples
    --------
    >>> gini([1, 1, 1, 1])
    0.0
    >>> gini([0, 0, 0, 1])
    0.75
    """
    sorted_x, w, _order = _prepared(x, weights, "x")
    return float(_weighted_gini(sorted_x, w))


def _bootstrap(samples: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_boot: int,
               rng: np.random.Generator) -> list[np.ndarray]:
    """Gini of n_boot bootstrap resamples of each (sorted values, weights, order) sample.

    Records are drawn with replacement (multinomial counts per record) and keep their
    weights. Samples of equal size share the draws record by record (a paired bootstrap:
    record i of the original and of the masked data are drawn together).
    """
    sizes = {values.size for values, _, _ in samples}
    results: list[list[np.ndarray]] = [[] for _ in samples]
    for n in sizes:
        block = max(1, _BOOTSTRAP_CELLS // n)
        for start in range(0, n_boot, block):  # blocks of replicates, each vectorised
            counts = rng.multinomial(n, np.full(n, 1.0 / n), size=min(block, n_boot - start))
            for k, (values, w, order) in enumerate(samples):
                if values.size == n:
                    results[k].append(_weighted_gini(values, w * counts[:, order]))
    return [np.concatenate(parts) for parts in results]


@dataclass(frozen=True)
class GiniComparison(ResultBase):
    """Gini coefficient before and after protection with bootstrap confidence intervals.

    Attributes
    ----------
    original, masked : float
        Point estimates.
    ci_original, ci_masked : tuple of float
        Percentile bootstrap intervals at ``level``.
    overlap : float
        Interval overlap J (Karr et al. 2006).
    masked_in_original_ci : bool
        Whether the masked estimate lies in the original interval.
    level : float
        Confidence level.
    n_boot : int
        Bootstrap replicates.
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    original: float
    masked: float
    ci_original: tuple[float, float]
    ci_masked: tuple[float, float]
    overlap: float
    masked_in_original_ci: bool
    level: float
    n_boot: int
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: the estimates, intervals and overlap."""
        from sdcreport._report import jsonable

        return jsonable({"original": self.original, "masked": self.masked,
                         "ci_original": self.ci_original, "ci_masked": self.ci_masked,
                         "overlap": self.overlap,
                         "masked_in_original_ci": self.masked_in_original_ci,
                         "level": self.level, "n_boot": self.n_boot})

    def summary(self) -> str:
        pct = f"{100 * self.level:g} %"
        return (f"Gini: original {self.original:.4f} [{pct} CI {self.ci_original[0]:.4f}, "
                f"{self.ci_original[1]:.4f}], masked {self.masked:.4f} "
                f"[{self.ci_masked[0]:.4f}, {self.ci_masked[1]:.4f}]; CI overlap "
                f"{self.overlap:.3f}; masked estimate "
                f"{'inside' if self.masked_in_original_ci else 'outside'} the original CI")

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"estimate": [self.original, self.masked],
                             "ci_lower": [self.ci_original[0], self.ci_masked[0]],
                             "ci_upper": [self.ci_original[1], self.ci_masked[1]]},
                            index=pd.Index(["original", "masked"], name="data"))

    def to_report(self) -> Section:
        from sdcreport import Section

        return (Section("Benchmark indicator: Gini coefficient")
                .add_text(f"Percentile bootstrap intervals ({self.n_boot} replicates, level "
                          f"{self.level:g}); overlap J of Karr et al. (2006).")
                .add_metrics({"CI overlap": self.overlap,
                              "masked estimate in original CI": self.masked_in_original_ci})
                .add_table(self.to_frame(), "Gini coefficient before and after protection"))


def gini_comparison(x: Any, x_masked: Any, *, weights: Any = None, weights_masked: Any = None,
                    n_boot: int = 200, level: float = 0.95, seed: Seed = None
                    ) -> GiniComparison:
    """Gini coefficient of original and masked values with bootstrap confidence intervals.

    Parameters
    ----------
    x, x_masked : array-like of shape (n,) and (n',)
        Original and masked values of one variable.
    weights, weights_masked : array-like, optional
        Sampling weights of the original and masked records (``weights_masked`` defaults to
        ``weights`` when both data sets have the same length).
    n_boot : int
        Bootstrap replicates per data set.
    level : float
        Confidence level of the percentile intervals, in (0, 1).
    seed : int, numpy.random.Generator or None
        Randomness of the bootstrap.

    Returns
    -------
    GiniComparison

    Notes
    -----
    Bootstrap: records are drawn with replacement (multinomial counts), keeping their
    weights; when n' = n the same draws are used for record i of both data sets (paired
    bootstrap, so identical data give identical intervals); the interval is the
    (1 - level)/2 and (1 + level)/2 quantiles of the replicate Gini coefficients. Gini as
    in :func:`gini`; overlap as in :func:`ci_overlap`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> income = rng.lognormal(size=500)
    >>> result = gini_comparison(income, income, seed=1)
    >>> result.overlap, result.masked_in_original_ci
    (1.0, True)
    """
    start = perf_counter()
    if not 0 < level < 1 or int(n_boot) < 2:
        raise DataError(f"need 0 < level < 1 and n_boot >= 2; got level={level}, "
                        f"n_boot={n_boot}")
    if weights_masked is None and weights is not None and np.size(x) == np.size(x_masked):
        weights_masked = weights
    samples = [_prepared(x, weights, "x"), _prepared(x_masked, weights_masked, "x_masked")]
    estimates = [float(_weighted_gini(values, w)) for values, w, _ in samples]
    intervals = []
    for replicates in _bootstrap(samples, int(n_boot), generator(seed)):
        low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
        intervals.append((float(low), float(high)))
    return GiniComparison(estimates[0], estimates[1], intervals[0], intervals[1],
                          ci_overlap(intervals[0], intervals[1]),
                          bool(intervals[0][0] <= estimates[1] <= intervals[0][1]),
                          float(level), int(n_boot), perf_counter() - start)


def _design(frame: pd.DataFrame, predictors: list[str], intercept: bool,
            reference: pd.DataFrame, role: str) -> pd.DataFrame:
    """Numeric design matrix; non-numeric predictors become dummies of the original's
    categories (first category dropped)."""
    parts = [pd.DataFrame({"(Intercept)": np.ones(len(frame))}, index=frame.index)] \
        if intercept else []
    for name in predictors:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            parts.append(column.astype(float).to_frame(name))
            continue
        categories = pd.Index(sorted(reference[name].dropna().unique(), key=str))
        unknown = ~column.isin(categories) & column.notna()
        if unknown.any():
            raise DataError(f"{role} column {name!r} has category "
                            f"{column[unknown].iloc[0]!r} not found in the original data")
        coded = pd.Categorical(column, categories=categories)
        dummies = pd.get_dummies(coded, prefix=name, prefix_sep="=", drop_first=True,
                                 dtype=float)
        dummies.index = frame.index
        parts.append(dummies)
    return pd.concat(parts, axis=1)


def _ols(y: np.ndarray, design: np.ndarray, level: float, names: list[str], role: str
         ) -> pd.DataFrame:
    n, k = design.shape
    if n <= k:
        raise DataError(f"the regression on the {role} data has {n} records for {k} "
                        f"coefficients")
    coefficients, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    if rank < k:
        raise DataError(f"the design matrix of the {role} data is rank deficient "
                        f"(rank {rank} < {k} coefficients)")
    residuals = y - design @ coefficients
    sigma2 = residuals @ residuals / (n - k)
    se = np.sqrt(sigma2 * np.diag(np.linalg.inv(design.T @ design)))
    t = stats.t.ppf((1 + level) / 2, n - k)
    return pd.DataFrame({"estimate": coefficients, "se": se, "ci_lower": coefficients - t * se,
                         "ci_upper": coefficients + t * se}, index=pd.Index(names,
                                                                           name="coefficient"))


@dataclass(frozen=True)
class RegressionComparison(ResultBase):
    """OLS coefficients on original and masked data with their confidence intervals.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row per coefficient: ``estimate``, ``se``, ``ci_lower``, ``ci_upper`` for the
        original data, the same with suffix ``_masked``, the interval ``overlap`` and
        ``masked_in_original_ci``.
    response : str
        The response variable.
    level : float
        Confidence level.
    n_original, n_masked : int
        Records used in each fit.
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    coefficients: pd.DataFrame
    response: str
    level: float
    n_original: int
    n_masked: int
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: the response, level, records, mean overlap, one record per
        coefficient."""
        from sdcreport._report import jsonable

        return jsonable({"response": self.response, "level": self.level,
                         "n_original": self.n_original, "n_masked": self.n_masked,
                         "mean_overlap": self.mean_overlap,
                         "coefficients": self.coefficients.reset_index().to_dict(
                             orient="records")})

    @property
    def mean_overlap(self) -> float:
        """Average interval overlap over the coefficients."""
        return float(self.coefficients["overlap"].mean())

    def summary(self) -> str:
        inside = int(self.coefficients["masked_in_original_ci"].sum())
        return (f"Regression of {self.response}: {len(self.coefficients)} coefficients, mean "
                f"CI overlap {self.mean_overlap:.3f}, {inside} masked estimates inside the "
                f"original {100 * self.level:g} % CI")

    def to_frame(self) -> pd.DataFrame:
        return self.coefficients.copy()

    def to_report(self) -> Section:
        from sdcreport import Section

        return (Section(f"Benchmark indicator: regression of {self.response}")
                .add_text("Ordinary least squares on the original and on the masked data; t "
                          f"confidence intervals at level {self.level:g}; overlap J of Karr et "
                          "al. (2006).")
                .add_metrics({"mean CI overlap": self.mean_overlap,
                              "records (original)": self.n_original,
                              "records (masked)": self.n_masked})
                .add_table(self.to_frame(), "Coefficients before and after protection"))


def regression_comparison(X: Any, X_masked: Any, response: str, predictors: Sequence[str], *,
                          intercept: bool = True, level: float = 0.95, missing: str = "raise"
                          ) -> RegressionComparison:
    """Compare OLS coefficients and confidence intervals on original and masked data.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame
        Original and masked data, the same records in the same order.
    response : str
        Numeric response column.
    predictors : sequence of str
        Predictor columns; non-numeric ones are coded as dummies of the original data's
        categories (the first, in sorted order, is the reference).
    intercept : bool
        Add a constant.
    level : float
        Confidence level of the t intervals.
    missing : {"raise", "drop"}
        What to do with records with a missing value in the model's variables: raise a
        :class:`DataError` naming the column, or drop them (listwise, separately in each
        data set; the numbers of records used are reported).

    Returns
    -------
    RegressionComparison

    Notes
    -----
    ``beta = (D'D)^-1 D'y``, ``se_k = sqrt(s^2 [(D'D)^-1]_kk)`` with
    ``s^2 = RSS / (n - k)``; interval ``beta_k +- t_{n-k, (1+level)/2} se_k``. The sdcMicro
    guide's example is the Mincer wage equation and its gender coefficient.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> data = pd.DataFrame({"x": rng.normal(size=200)})
    >>> data["y"] = 1 + 2 * data["x"] + rng.normal(size=200)
    >>> result = regression_comparison(data, data, "y", ["x"])
    >>> result.coefficients["overlap"].tolist()
    [1.0, 1.0]
    """
    start = perf_counter()
    check_choice("missing", missing, ("raise", "drop"), error=DataError)
    if not 0 < level < 1:
        raise DataError(f"level must be in (0, 1); got {level}")
    predictors = list(predictors)
    original, masked = frame_pair(X, X_masked, [response, *predictors])
    fits = []
    for frame, role in ((original, "original"), (masked, "masked")):
        if missing == "drop":
            frame = frame.dropna()
        else:
            absent = frame.isna().any()
            if absent.any():
                raise DataError(f"{role} column {absent.index[absent.argmax()]!r} has missing "
                                f"values; pass missing='drop' for listwise deletion")
        if not pd.api.types.is_numeric_dtype(frame[response]):
            raise DataError(f"{role} response column {response!r} is not numeric")
        design = _design(frame, predictors, intercept, original, role)
        fits.append((_ols(frame[response].to_numpy(float), design.to_numpy(float), level,
                          list(design.columns), role), len(frame)))
    (before, n_before), (after, n_after) = fits
    if list(before.index) != list(after.index):
        raise DataError("original and masked designs differ: a category is absent after "
                        "masking")
    table = before.join(after.add_suffix("_masked"))
    table["overlap"] = [ci_overlap(a, b) for a, b in zip(
        table[["ci_lower", "ci_upper"]].to_numpy(), table[["ci_lower_masked",
                                                            "ci_upper_masked"]].to_numpy(),
        strict=True)]
    table["masked_in_original_ci"] = (table["estimate_masked"] >= table["ci_lower"]) & \
        (table["estimate_masked"] <= table["ci_upper"])
    return RegressionComparison(table, response, float(level), n_before, n_after,
                                perf_counter() - start)
