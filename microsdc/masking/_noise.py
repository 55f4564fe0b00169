"""Noise addition: uncorrelated (sdcMicro's ``additive`` or the variance-multiplier form) and
correlated (sdcMicro's ``correlated``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc._data import Seed, generator
from microsdc._errors import DataError
from microsdc.masking._frame import check_number, input_values, same_type
from tabsdc._validation import check_choice


def additive_noise(X: Any, noise: float = 150.0, *, method: str = "sdcmicro",
                   seed: Seed = None) -> Any:
    """Add independent Gaussian noise to every column.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Numeric data without missing values, n >= 2.
    noise : float, default 150
        Amount of noise in percent (see Notes for what it scales).
    method : {"sdcmicro", "variance"}
        ``"sdcmicro"``: the noise standard deviation is ``noise`` % of the column's standard
        deviation. ``"variance"``: the noise variance is ``noise`` % of the column's variance.
    seed : int, numpy.random.Generator or None
        Random source; the same int gives the same result, None draws fresh entropy.

    Returns
    -------
    pandas.DataFrame or numpy.ndarray
        Same type, columns, index and row order as ``X``.

    Raises
    ------
    DataError
        A non-numeric column or missing value (naming column and record), fewer than two
        records, a negative ``noise`` or an unknown ``method``.

    Notes
    -----
    With :math:`s_j` the sample standard deviation (n - 1) of column j and
    :math:`\\alpha` = ``noise`` / 100, the masked value is
    :math:`z_{ij} = x_{ij} + e_{ij}`, the :math:`e_{ij}` independent, with

    * ``"sdcmicro"``: :math:`e_{ij} \\sim N(0, (\\alpha s_j)^2)`, sdcMicro's
      ``addNoise(method = "additive")`` (Templ, Meindl and Kowarik 2015, Sect. 5.1);
    * ``"variance"``: :math:`e_{ij} \\sim N(0, \\alpha s_j^2)`, uncorrelated noise whose
      variance is proportional to the variable's, :math:`\\Sigma_e = \\alpha
      \\operatorname{diag}(\\Sigma)` (Brand 2002, Sect. 2, "uncorrelated noise"; Hundepool
      et al. 2012, Sect. 3.4.4). ``noise = 100`` doubles the variances.

    The normal draws fill an (n, p) matrix row by row from ``seed``.

    References
    ----------
    Brand, R. (2002). Microdata protection through noise addition. In Domingo-Ferrer (ed.),
    Inference Control in Statistical Databases, LNCS 2316, 97-116. Springer.

    Hundepool, A. et al. (2012). Statistical Disclosure Control. Wiley.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> Z = additive_noise(X, 10, seed=1)
    >>> Z.shape, bool(np.array_equal(Z, additive_noise(X, 10, seed=1)))
    ((10, 2), True)
    """
    alpha = check_number("noise", noise, low=0) / 100.0
    check_choice("method", method, ("sdcmicro", "variance"), error=DataError)
    values = input_values(X, min_records=2, what="noise addition")
    sd = values.std(axis=0, ddof=1)
    scale = alpha * sd if method == "sdcmicro" else np.sqrt(alpha) * sd
    return same_type(X, values + generator(seed).standard_normal(values.shape) * scale)


def correlated_noise(X: Any, noise: float = 150.0, *, seed: Seed = None) -> Any:
    """Add multivariate Gaussian noise whose covariance is ``noise`` % of the data's.

    Parameters
    ----------
    X, seed
        As in :func:`additive_noise`.
    noise : float, default 150
        Noise covariance in percent of the sample covariance of ``X``.

    Returns
    -------
    pandas.DataFrame or numpy.ndarray
        Same type, columns, index and row order as ``X``.

    Raises
    ------
    DataError
        As :func:`additive_noise`.

    Notes
    -----
    sdcMicro's ``addNoise(method = "correlated")`` (Brand 2002, Sect. 3, "correlated
    noise"): :math:`z_i = x_i + e_i`, :math:`e_i \\sim N_p(0, \\alpha \\Sigma)` independent,
    :math:`\\Sigma` the sample covariance matrix (n - 1) of X and :math:`\\alpha` =
    ``noise`` / 100. Note that ``noise`` scales the *covariance* here (as in sdcMicro),
    whereas in ``additive_noise(method="sdcmicro")`` it scales the standard deviation. The
    masked data have expected covariance :math:`(1 + \\alpha) \\Sigma`: correlations are
    preserved in expectation. (sdcMicro's ``"correlated2"`` is a different method, Brand's
    noise with linear transformation, and is not this one.)

    The draws are :math:`e_i = V \\operatorname{diag}(\\sqrt{\\max(\\lambda, 0)}) u_i`,
    :math:`u_i` standard normal, from the eigendecomposition :math:`\\alpha\\Sigma = V
    \\operatorname{diag}(\\lambda) V^T` (as ``MASS::mvrnorm``), so a singular covariance
    (collinear columns, such as a column that is the sum of others) is handled.

    References
    ----------
    Brand, R. (2002), see :func:`additive_noise`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.multivariate_normal([0, 0], [[1, 0.9], [0.9, 1]], size=20000)
    >>> Z = correlated_noise(X, 100, seed=1)
    >>> round(float(np.corrcoef(Z.T)[0, 1]), 1)
    0.9
    """
    alpha = check_number("noise", noise, low=0) / 100.0
    values = input_values(X, min_records=2, what="noise addition")
    covariance = alpha * np.atleast_2d(np.cov(values, rowvar=False, ddof=1))
    eigenvalues, vectors = np.linalg.eigh(covariance)
    root = vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
    draws = generator(seed).standard_normal(values.shape)
    return same_type(X, values + draws @ root.T)
