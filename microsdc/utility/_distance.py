"""Distance-based information loss: MAE, MSE, IL1 (mean variation) and IL1s.

For original values x_ij and masked values x'_ij of n records and p numeric variables
(Mateo-Sanz, Domingo-Ferrer and Sebe 2005, Table 1, row X - X'; Yancey, Winkler and Creecy
2002 for IL1s):

* MAE  = 1/(np) sum_ij |x_ij - x'_ij|
* MSE  = 1/(np) sum_ij (x_ij - x'_ij)^2
* IL1  = 1/N0 sum_{ij: x_ij != 0} |x_ij - x'_ij| / |x_ij|        (mean variation)
* IL1s = 1/(np) sum_ij |x_ij - x'_ij| / (sqrt(2) S_j)

where S_j is the sample (n - 1) standard deviation of original variable j. Every measure is
a mean over cells by default; ``reduce="sum"`` returns the sum over cells instead, which is
the convention of sdcMicro's ``dUtility`` (its ``IL1s`` is exactly ``il1s(..., reduce="sum")``;
its ``IL1`` is ``100 * il1(..., reduce="sum")``, a sum of percentages).

Zero original values in IL1: the mean variation divides by |x_ij|, which is undefined at
x_ij = 0. Such cells are left out of the sum and out of the count N0 (the number of cells
with x_ij != 0), exactly as sdcMicro drops them (its division yields Inf or NaN, removed with
``na.rm``). :func:`il1_excluded_cells` tells how many cells were left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc._data import NumericPair, numeric_matrix, numeric_pair
from microsdc.utility._sums import ColumnSums, reduce_sums


def absolute_sums(pair: NumericPair) -> ColumnSums:
    """Per-column sums of |x - x'|."""
    return ColumnSums(np.abs(pair.x - pair.xm).sum(axis=0), np.full(pair.p, pair.n))


def squared_sums(pair: NumericPair) -> ColumnSums:
    """Per-column sums of (x - x')^2."""
    diff = pair.x - pair.xm
    return ColumnSums(np.einsum("ij,ij->j", diff, diff), np.full(pair.p, pair.n))


def variation_sums(pair: NumericPair) -> ColumnSums:
    """Per-column sums of |x - x'| / |x| over cells with x != 0, and their counts."""
    nonzero = pair.x != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(pair.x - pair.xm) / np.abs(pair.x)
    return ColumnSums(np.where(nonzero, ratio, 0.0).sum(axis=0), nonzero.sum(axis=0))


def scaled_sums(pair: NumericPair) -> ColumnSums:
    """Per-column sums of |x - x'| / (sqrt(2) S_j), S_j the sample sd of original column j."""
    pair.require_variation("IL1s")
    scale = np.sqrt(2.0) * pair.x.std(axis=0, ddof=1)
    return ColumnSums(np.abs(pair.x - pair.xm).sum(axis=0) / scale, np.full(pair.p, pair.n))


def mae(X: Any, X_masked: Any, *, reduce: str = "mean") -> float:
    """Mean absolute error between original and masked values.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked numeric data: the same records in the same order. DataFrame
        columns are matched by name, arrays by position. This is the input of every
        record-level measure of :mod:`microsdc.utility`.
    reduce : {"mean", "sum"}
        ``"mean"`` divides the sum over the n*p cells by n*p; ``"sum"`` returns the sum.

    Returns
    -------
    float

    Raises
    ------
    DataError
        Non-numeric, missing or infinite values, or misaligned records or columns.

    Notes
    -----
    ``MAE = 1/(np) sum_j sum_i |x_ij - x'_ij|`` (Mateo-Sanz et al. 2005, Table 1, X - X').

    References
    ----------
    Mateo-Sanz, J.M., Domingo-Ferrer, J., Sebe, F. (2005). Probabilistic information loss
    measures in confidentiality protection of continuous microdata. *Data Mining and
    Knowledge Discovery* 11(2), 181-193.

    Examples
    --------
    >>> mae([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.5], [2.0, 4.0]])
    0.375
    >>> mae([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.5], [2.0, 4.0]], reduce="sum")
    1.5
    """
    return reduce_sums(absolute_sums(numeric_pair(X, X_masked)), reduce)


def mse(X: Any, X_masked: Any, *, reduce: str = "mean") -> float:
    """Mean squared error between original and masked values.

    Parameters are those of :func:`mae`.

    Notes
    -----
    ``MSE = 1/(np) sum_j sum_i (x_ij - x'_ij)^2`` (Mateo-Sanz et al. 2005, Table 1, X - X').

    Examples
    --------
    >>> mse([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.5], [2.0, 4.0]])
    0.3125
    """
    return reduce_sums(squared_sums(numeric_pair(X, X_masked)), reduce)


def il1(X: Any, X_masked: Any, *, reduce: str = "mean") -> float:
    """IL1, the mean variation ``|x_ij - x'_ij| / |x_ij|`` over cells with ``x_ij != 0``.

    Parameters are those of :func:`mae`; with ``reduce="mean"`` the sum is divided by the
    number of cells with a non-zero original value.

    Notes
    -----
    ``IL1 = 1/N0 sum_{ij: x_ij != 0} |x_ij - x'_ij| / |x_ij|`` (Mateo-Sanz et al. 2005,
    Table 1, mean variation of X - X', with N0 = np when no original value is zero). Cells
    with x_ij = 0 are excluded, as sdcMicro does; sdcMicro's ``dUtility(method="IL1")``
    equals ``100 * il1(X, X_masked, reduce="sum")``. The value is a fraction, not a
    percentage.

    Examples
    --------
    >>> il1([[0.0, 2.0], [4.0, 4.0]], [[5.0, 2.5], [2.0, 4.0]])
    0.25
    >>> il1_excluded_cells([[0.0, 2.0], [4.0, 4.0]])
    1
    """
    return reduce_sums(variation_sums(numeric_pair(X, X_masked)), reduce)


def il1_excluded_cells(X: Any) -> int:
    """Number of cells left out of :func:`il1`: original values equal to zero.

    Examples
    --------
    >>> il1_excluded_cells([[0.0, 1.0], [0.0, 2.0]])
    2
    """
    return int(np.count_nonzero(numeric_matrix(X)[0] == 0))


def il1s(X: Any, X_masked: Any, *, reduce: str = "mean") -> float:
    """IL1s, absolute errors scaled by sqrt(2) times the original sample standard deviation.

    Parameters are those of :func:`mae`.

    Raises
    ------
    DataError
        Also when an original column is constant (S_j = 0).

    Notes
    -----
    ``IL1s = 1/(np) sum_j sum_i |x_ij - x'_ij| / (sqrt(2) S_j)`` with S_j the sample
    (n - 1) standard deviation of original variable j (Yancey, Winkler and Creecy 2002;
    Mateo-Sanz et al. 2005, section 2). ``reduce="sum"`` gives sdcMicro's
    ``dUtility(method="IL1s")``, which is a sum over the cells.

    References
    ----------
    Yancey, W.E., Winkler, W.E., Creecy, R.H. (2002). Disclosure risk assessment in
    perturbative microdata protection. LNCS 2316, 135-152.

    Examples
    --------
    >>> round(il1s([[1.0], [3.0]], [[2.0], [3.0]]), 6)  # S = sqrt(2): 1 / (2 * 2)
    0.25
    """
    return reduce_sums(scaled_sums(numeric_pair(X, X_masked, min_records=2)), reduce)
