"""Robust location and covariance: the Minimum Covariance Determinant (FAST-MCD).

The MCD estimator (Rousseeuw 1984) takes the h records whose sample covariance matrix has the
smallest determinant; location and covariance are their mean and covariance. FAST-MCD
(Rousseeuw and Van Driessen 1999) finds that subset with concentration steps (C-steps): from a
location m and covariance S, keep the h records with the smallest Mahalanobis distances
d_i^2 = (x_i - m)' S^-1 (x_i - m) and recompute m and S; the determinant never increases.

This implementation, all in numpy/scipy:

1. h = floor((n + p + 1) / 2) by default (breakdown point about 50 %).
2. Starts: ``n_starts`` random (p + 1)-subsets of the data, or of a random subsample of
   1,500 records when n > 1,500 (FAST-MCD's large-sample device, simplified to one
   subsample; h is scaled to every subsample). Starts with a singular covariance are
   discarded.
3. Two C-steps from every start, all starts at once (batched matrix algebra); the 10 with
   the smallest determinant are iterated to convergence on that (sub)sample.
4. When n > 1,500 the 3 best are iterated to convergence on a random subsample of
   min(n, 50,000) records; when n > 50,000 one last C-step is taken on all n records
   (so the raw subset is always h records of the full data). Convergence: the log
   determinant decreases by less than 1e-10.
5. The raw covariance of the best subset (divisor h - 1) is multiplied by the asymptotic
   consistency factor at the normal, alpha / F_{chi2(p+2)}(chi2_{p, alpha}) with
   alpha = h/n (Croux and Haesbroeck 1999).
6. Reweighting: records with d_i^2 <= chi2_{p, 0.975} under the raw estimate get weight 1,
   others 0; the final location and covariance are their mean and covariance (divisor
   count - 1) times the consistency factor for 0.975.

Unlike ``robustbase::covMcd`` no finite-sample correction factors (Pison et al. 2002) are
applied, so covariances differ from R's by a scalar factor close to 1 for moderate n.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from microsdc._data import Seed, generator, numeric_matrix
from microsdc._errors import DataError
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus

if TYPE_CHECKING:
    from sdcreport import Section

_STARTS_SAMPLE = 1_500
_BEST_ON_STARTS_SAMPLE = 10
_CONCENTRATION_SAMPLE = 50_000
_BEST_ON_CONCENTRATION_SAMPLE = 3
_MAX_STEPS = 100


@dataclass(frozen=True)
class MCDEstimate(ResultBase):
    """Result of :func:`mcd`.

    Attributes
    ----------
    location, covariance : numpy.ndarray
        Reweighted robust location (p,) and covariance (p, p).
    raw_location, raw_covariance : numpy.ndarray
        Mean and consistency-corrected covariance of the best h-subset.
    support : numpy.ndarray of bool
        The best h-subset (records used by the raw estimate).
    kept : numpy.ndarray of bool
        Records kept by the reweighting step.
    h : int
        Size of the subsets.
    log_determinant : float
        log det of the best subset's (uncorrected) covariance.
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    location: np.ndarray
    covariance: np.ndarray
    raw_location: np.ndarray
    raw_covariance: np.ndarray
    support: np.ndarray
    kept: np.ndarray
    h: int
    log_determinant: float
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: an estimate, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def summary(self) -> str:
        """One line: records, subset size, records kept, log determinant, time."""
        return (f"MCD: {len(self.support)} records, h = {self.h}, {int(self.kept.sum())} kept "
                f"by the reweighting, log det {self.log_determinant:.6g}, "
                f"{self.seconds:.2f} s")

    def to_frame(self) -> pd.DataFrame:
        """One row per variable: the robust location, then the robust covariance matrix."""
        p = len(self.location)
        frame = pd.DataFrame(self.covariance, columns=[f"cov {j}" for j in range(p)])
        frame.insert(0, "location", self.location)
        return frame.rename_axis("variable")

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: location, covariance, raw estimates, h, records kept, log
        determinant."""
        from sdcreport._report import jsonable

        return jsonable({"location": self.location, "covariance": self.covariance,
                         "raw_location": self.raw_location,
                         "raw_covariance": self.raw_covariance, "h": self.h,
                         "support": int(self.support.sum()), "kept": int(self.kept.sum()),
                         "log_determinant": self.log_determinant})

    def to_report(self) -> Section:
        """A report section: the key figures and the robust location and covariance."""
        from sdcreport import Section

        return (Section("Minimum covariance determinant (reweighted)")
                .add_metrics({"records": len(self.support), "h": self.h,
                              "records kept": int(self.kept.sum()),
                              "log determinant": self.log_determinant,
                              "seconds": round(self.seconds, 3)})
                .add_table(self.to_frame(), "Robust location and covariance"))


def _mean_cov(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched mean and sample covariance of points (..., m, p)."""
    location = points.mean(axis=-2)
    centred = points - location[..., None, :]
    cov = centred.swapaxes(-1, -2) @ centred / (points.shape[-2] - 1)
    return location, cov


def _distances(data: np.ndarray, location: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distances of every record for a batch of (location, cov)."""
    inverse = np.linalg.inv(cov)
    centred = data[None, :, :] - location[:, None, :]
    return ((centred @ inverse) * centred).sum(axis=-1)


def _c_step(data: np.ndarray, location: np.ndarray, cov: np.ndarray, h: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One concentration step for a batch; returns new location, covariance, subsets."""
    d2 = _distances(data, location, cov)
    subset = np.argpartition(d2, h - 1, axis=1)[:, :h]
    location, cov = _mean_cov(data[subset])
    return location, cov, subset


def _log_det(cov: np.ndarray) -> np.ndarray:
    sign, logdet = np.linalg.slogdet(cov)
    return np.where(sign > 0, logdet, -np.inf)


def _converge(data: np.ndarray, locations: np.ndarray, covs: np.ndarray, h: int
              ) -> list[tuple[np.ndarray, np.ndarray, float, np.ndarray]]:
    """C-steps on each candidate until the determinant stops decreasing, best first.

    Returns (location, covariance, log det, subset) per candidate; a Python loop over the
    few candidates, each step vectorised over the records.
    """
    results = []
    for location, cov in zip(locations, covs, strict=True):
        location, cov = location[None], cov[None]
        log_det, subset = np.inf, None
        for _ in range(_MAX_STEPS):
            new_location, new_cov, new_subset = _c_step(data, location, cov, h)
            new_log_det = float(_log_det(new_cov)[0])
            if subset is not None and new_log_det >= log_det - 1e-10:
                break
            location, cov, log_det, subset = new_location, new_cov, new_log_det, new_subset
            if log_det == -np.inf:
                break
        results.append((location[0], cov[0], log_det, subset[0]))
    return sorted(results, key=lambda result: result[2])


def _consistency(alpha: float, p: int) -> float:
    """Asymptotic consistency factor of a covariance from the fraction alpha of a normal."""
    return alpha / stats.chi2.cdf(stats.chi2.ppf(alpha, p), p + 2)


def mcd(X: Any, *, h: int | None = None, n_starts: int = 500, seed: Seed = None
        ) -> MCDEstimate:
    """Reweighted Minimum Covariance Determinant estimate (FAST-MCD).

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Numeric data, n > p + 1.
    h : int, optional
        Subset size, p + 1 <= h <= n; default floor((n + p + 1) / 2).
    n_starts : int
        Number of random (p + 1)-subsets that start C-steps.
    seed : int, numpy.random.Generator or None
        Randomness of the starts (and of the subsample when n > 1,500).

    Returns
    -------
    MCDEstimate

    Raises
    ------
    DataError
        Too few records, a bad ``h``, or an exact fit: at least h records on a hyperplane,
        so that every candidate covariance is singular.

    Notes
    -----
    The algorithm and its choices are listed in the module docstring. The raw estimate
    minimises det(S_H) over subsets H of size h; its consistency factor is
    ``alpha / F_{chi2(p+2)}(chi2_{p,alpha})``, alpha = h/n (Croux and Haesbroeck 1999).

    References
    ----------
    Rousseeuw, P.J., Van Driessen, K. (1999). A fast algorithm for the minimum covariance
    determinant estimator. *Technometrics* 41(3), 212-223.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> data = rng.normal(size=(200, 2))
    >>> data[:20] += 50                                    # 10 % gross outliers
    >>> estimate = mcd(data, seed=0)
    >>> bool(np.all(np.abs(estimate.location) < 0.5)), bool(estimate.kept[:20].any())
    (True, False)
    """
    return fast_mcd(numeric_matrix(X)[0], h=h, n_starts=n_starts, rng=generator(seed))


def _subsample(x: np.ndarray, size: int, h: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, int]:
    """A random subsample of at most ``size`` records and h scaled to it."""
    n, p = x.shape
    if n <= size:
        return x, h
    return x[rng.choice(n, size, replace=False)], max(p + 1, int(np.ceil(h * size / n)))


def fast_mcd(x: np.ndarray, *, h: int | None, n_starts: int, rng: np.random.Generator
             ) -> MCDEstimate:
    """:func:`mcd` on a validated float array (n, p)."""
    start = perf_counter()
    n, p = x.shape
    if n <= p + 1:
        raise DataError(f"the MCD needs more than p + 1 = {p + 1} records; got {n}")
    h = (n + p + 1) // 2 if h is None else int(h)
    if not p + 1 <= h <= n:
        raise DataError(f"MCD subset size h must be between p + 1 = {p + 1} and n = {n}; "
                        f"got {h}")
    sample, h_sample = _subsample(x, _STARTS_SAMPLE, h, rng)
    starts = np.argpartition(rng.random((n_starts, len(sample))), p, axis=1)[:, : p + 1]
    location, cov = _mean_cov(sample[starts])
    for _ in range(3):  # the starts, then two C-steps from each
        usable = np.isfinite(_log_det(cov))
        if not usable.any():
            raise DataError(f"exact fit: at least {min(h_sample, p + 1)} records lie on a "
                            f"hyperplane, every candidate covariance is singular")
        location, cov = location[usable], cov[usable]
        if _ < 2:
            location, cov, _subset = _c_step(sample, location, cov, h_sample)
    best = np.argsort(_log_det(cov))[:_BEST_ON_STARTS_SAMPLE]
    candidates = _converge(sample, location[best], cov[best], h_sample)
    if sample is not x:
        sample, h_sample = _subsample(x, _CONCENTRATION_SAMPLE, h, rng)
        top = candidates[:_BEST_ON_CONCENTRATION_SAMPLE]
        candidates = _converge(sample, np.array([c[0] for c in top]),
                               np.array([c[1] for c in top]), h_sample)
    raw_location, raw_cov, log_det, subset = candidates[0]
    if sample is not x and np.isfinite(log_det):
        raw_location, raw_cov, subset = (a[0] for a in _c_step(x, raw_location[None],
                                                                raw_cov[None], h))
        log_det = float(_log_det(raw_cov[None])[0])
    if not np.isfinite(log_det):
        raise DataError(f"exact fit: at least {h_sample} records lie on a hyperplane, the "
                        f"MCD covariance is singular")
    support = np.zeros(n, dtype=bool)
    support[subset] = True
    raw_cov = raw_cov * _consistency(h / n, p)
    d2 = _distances(x, raw_location[None], raw_cov[None])[0]
    kept = d2 <= stats.chi2.ppf(0.975, p)
    location, covariance = _mean_cov(x[kept])
    return MCDEstimate(location, covariance * _consistency(0.975, p), raw_location, raw_cov,
                       support, kept, h, log_det, perf_counter() - start)
