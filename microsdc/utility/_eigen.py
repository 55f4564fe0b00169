"""Eigenvalue comparison of original and masked data (sdcMicro's ``eigen`` and ``robeigen``).

Both data sets are standardised column by column (mean 0, sample standard deviation 1, as
R's ``scale``); the eigenvalues e_1 >= ... >= e_p of the covariance matrix of the
standardised original data (its correlation matrix) and e'_1 >= ... >= e'_p of the
standardised masked data are compared by

    eigen = sum_k |e_k - e'_k| / e_k,

the definition of sdcMicro's ``dUtility(method = "eigen")`` (a sum over the p eigenvalues,
not a mean). The robust variant replaces the covariance matrices by the reweighted Minimum
Covariance Determinant estimate of the standardised data (:func:`microsdc.utility.mcd`,
FAST-MCD with h = floor((n + p + 1)/2)), as sdcMicro's ``robeigen`` does with
``robustbase::covMcd``; see :mod:`microsdc.utility._robust` for the exact algorithm and how it
differs from R's (no finite-sample correction factors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc._data import NumericPair, Seed, generator, numeric_matrix, numeric_pair
from microsdc.utility._robust import fast_mcd


def _standardise(values: np.ndarray) -> np.ndarray | None:
    """R's ``scale``: centre and divide by the sample sd; None if a column is constant."""
    sd = values.std(axis=0, ddof=1)
    if not np.all(sd > 0):
        return None
    return (values - values.mean(axis=0)) / sd


def _eigenvalues(values: np.ndarray, robust: bool, n_starts: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Descending eigenvalues of the (robust) covariance of standardised data (NaN if
    a column is constant)."""
    z = _standardise(values)
    if z is None:
        return np.full(values.shape[1], np.nan)
    if robust:
        cov = fast_mcd(z, h=None, n_starts=n_starts, rng=rng).covariance
    else:
        cov = np.atleast_2d(np.cov(z, rowvar=False))
    return np.linalg.eigvalsh(cov)[::-1]


def eigenvalues(X: Any, *, robust: bool = False, n_starts: int = 500,
                seed: Seed = None) -> np.ndarray:
    """Eigenvalues (descending) of the covariance matrix of the standardised data.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Numeric data.
    robust : bool
        Use the reweighted MCD covariance of the standardised data instead of the sample
        covariance (which is the correlation matrix).
    n_starts, seed
        FAST-MCD starts and their randomness (robust only); see :func:`mcd`.

    Returns
    -------
    numpy.ndarray of shape (p,)
        NaN everywhere when a column is constant (it cannot be standardised).

    Examples
    --------
    >>> eigenvalues([[1.0, 2.0], [2.0, 4.0], [3.0, 7.0]]).round(4).tolist()
    [1.9934, 0.0066]
    """
    return _eigenvalues(numeric_matrix(X)[0], robust, n_starts, generator(seed))


def eigen_pair(pair: NumericPair, robust: bool, n_starts: int, rng: np.random.Generator
               ) -> float:
    """``sum_k |e_k - e'_k| / e_k`` for validated data (NaN when undefined)."""
    pair.require_variation("the eigenvalue comparison")
    state = int(rng.integers(2**63))  # the same FAST-MCD starts for both data sets
    original = _eigenvalues(pair.x, robust, n_starts, generator(state))
    masked = _eigenvalues(pair.xm, robust, n_starts, generator(state))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.abs(original - masked) / original))


def eigen_discrepancy(X: Any, X_masked: Any, *, robust: bool = False, n_starts: int = 500,
                      seed: Seed = None) -> float:
    """Relative change of the eigenvalues of the standardised data, summed (sdcMicro).

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked numeric data with the same columns (the numbers of records may
        differ).
    robust : bool
        False: sdcMicro's ``eigen`` (correlation matrices). True: ``robeigen`` with the
        reweighted MCD covariance of the standardised data.
    n_starts, seed
        FAST-MCD starts and their randomness (``robust=True`` only); both data sets get the
        same random starts, so identical data give 0.

    Returns
    -------
    float
        ``sum_k |e_k - e'_k| / e_k``; NaN when a masked column is constant (sdcMicro
        returns NA then).

    Raises
    ------
    DataError
        Invalid data, a constant original column, or (robust) an exact MCD fit.

    Notes
    -----
    e_k and e'_k are the k-th largest eigenvalues of ``cov(scale(X))`` and
    ``cov(scale(X'))`` (sdcMicro ``dUtility``, methods ``eigen`` and ``robeigen``; Templ
    and Meindl 2008). The value is a sum over the p eigenvalues.

    References
    ----------
    Templ, M., Meindl, B. (2008). Robust statistics meets SDC: new disclosure risk measures
    for continuous microdata masking. LNCS 5262, 113-126.

    Examples
    --------
    >>> x = [[1.0, 2.0], [2.0, 4.0], [3.0, 7.0], [4.0, 7.5]]
    >>> eigen_discrepancy(x, x)
    0.0
    """
    pair = numeric_pair(X, X_masked, same_records=False, min_records=2)
    return eigen_pair(pair, robust, n_starts, generator(seed))
