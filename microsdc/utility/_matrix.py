"""Matrix-discrepancy information loss (Mateo-Sanz, Domingo-Ferrer and Sebe 2005, Table 1).

Characteristic matrices of the original data X and of the masked data X' are compared
componentwise with three discrepancies: mean square error (MSE), mean absolute error (MAE)
and mean variation (MV, |a - a'| / |a|). The matrices (rows of Table 1, plus the two variants
of section 2):

* ``X``: the data themselves (n x p);
* ``Xbar``: the attribute means (p);
* ``V``: covariances v_ij, i < j (p(p-1)/2 cells; the variances are the ``S`` variant);
* ``S``: the variances, the diagonal of V (p);
* ``R``: correlations r_ij, i < j (p(p-1)/2);
* ``RF``: correlations rf_ij between attribute i and principal component j (p x p), the
  cells of component j weighted by w_j, divided by p^2;
* ``C``: commonalities c_i of the attributes with the first principal component (p);
* ``F``: factor score coefficients f_ij (p x p), weighted by w_j like RF, divided by p^2.

Choices the paper leaves open, made here:

* Covariances and variances are sample (divisor n - 1) moments.
* Principal components come from the correlation matrix (PCA of the standardised
  attributes), ordered by decreasing eigenvalue lambda_j. rf_ij = e_ij sqrt(lambda_j) (the
  loadings: the correlation of attribute i with component j), c_i = rf_i1^2 (the share of
  the variance of attribute i explained by the first component, a fraction) and
  f_ij = e_ij / sqrt(lambda_j) (coefficients giving unit-variance component scores from the
  standardised attributes).
* Signs: an eigenvector is defined up to sign. Each original component is oriented so that
  its largest absolute coefficient is positive; each masked component is oriented to have a
  non-negative inner product with the original component of the same rank.
* Component weights: w_j = lambda_j / p, the share of the total variance of the original
  data explained by component j (``component_weights="variance"``, default);
  ``component_weights="equal"`` gives w_j = 1; an array gives its own weights.
* Mean variation divides by |a|: cells whose original value is 0 are left out of the sum
  and of the count (as in :func:`microsdc.utility.il1`); the other discrepancies divide by
  the number of cells of the row (p^2 for the weighted RF and F rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microsdc._data import NumericPair, numeric_pair
from microsdc._errors import DataError
from microsdc.utility._distance import absolute_sums, squared_sums, variation_sums
from microsdc.utility._sums import reduce_sums

#: Rows of the matrix-discrepancy table, in order.
MATRICES = ("X", "Xbar", "V", "S", "R", "RF", "C", "F")
#: Columns: mean square error, mean absolute error, mean variation.
DISCREPANCIES = ("MSE", "MAE", "MV")


def _discrepancies(original: np.ndarray, masked: np.ndarray,
                   weights: np.ndarray | None = None) -> list[float]:
    """MSE, MAE and MV of two equally shaped arrays; ``weights`` multiply columns."""
    w = np.ones(original.shape[-1]) if weights is None else weights
    if original.size == 0:
        return [float("nan")] * 3
    diff = np.abs(original - masked)
    cells = original.size
    nonzero = original != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        variation = np.where(nonzero, diff / np.abs(original), 0.0)
        mv = float((variation * w).sum() / nonzero.sum()) if nonzero.any() else float("nan")
    return [float((diff**2 * w).sum() / cells), float((diff * w).sum() / cells), mv]


def _correlation(cov: np.ndarray) -> np.ndarray | None:
    """Correlation matrix from a covariance matrix; None if a variance is 0."""
    variances = np.diag(cov)
    if not np.all(variances > 0):
        return None
    sd = np.sqrt(variances)
    return cov / np.outer(sd, sd)


def _components(correlation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, round-off negatives set to 0) and eigenvectors."""
    eigenvalues, vectors = np.linalg.eigh(correlation)
    return np.clip(eigenvalues[::-1], 0.0, None), vectors[:, ::-1]


def _orient(vectors: np.ndarray, reference: np.ndarray | None) -> np.ndarray:
    """Flip component signs: largest |coefficient| positive, or aligned with reference."""
    if reference is None:
        largest = vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])]
        signs = np.where(largest < 0, -1.0, 1.0)
    else:
        signs = np.where(np.einsum("ij,ij->j", vectors, reference) < 0, -1.0, 1.0)
    return vectors * signs


def _factor_matrices(eigenvalues: np.ndarray, vectors: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loadings RF, commonalities C with the first component, score coefficients F."""
    loadings = vectors * np.sqrt(eigenvalues)
    with np.errstate(divide="ignore"):
        scores = vectors / np.sqrt(eigenvalues)
    return loadings, loadings[:, 0] ** 2, scores


def _component_weights(weights: Any, eigenvalues: np.ndarray) -> np.ndarray:
    p = eigenvalues.size
    if isinstance(weights, str):
        if weights == "variance":
            return eigenvalues / p
        if weights == "equal":
            return np.ones(p)
        raise DataError(f"unknown component_weights {weights!r}; choose one of variance, "
                        f"equal, or {p} numbers")
    w = np.asarray(weights, dtype=float)
    if w.shape != (p,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise DataError(f"component_weights must be {p} finite non-negative numbers, one per "
                        "component")
    return w


def discrepancy_table(pair: NumericPair, component_weights: Any = "variance",
                      x_row: Sequence[float] | None = None) -> pd.DataFrame:
    """The matrix-discrepancy table for validated data (see :func:`matrix_discrepancy`).

    ``x_row`` passes the X row (MSE, MAE, MV) when it is already known.
    """
    pair.require_variation("the matrix-discrepancy measures")
    x, xm = pair.x, pair.xm
    upper = np.triu_indices(pair.p, k=1)
    v, vm = (np.atleast_2d(np.cov(a, rowvar=False)) for a in (x, xm))
    if x_row is None:
        x_row = [reduce_sums(f(pair), "mean") for f in (squared_sums, absolute_sums,
                                                        variation_sums)]
    rows = {
        "X": list(x_row),
        "Xbar": _discrepancies(x.mean(axis=0), xm.mean(axis=0)),
        "V": _discrepancies(v[upper], vm[upper]),
        "S": _discrepancies(np.diag(v), np.diag(vm)),
    }
    r, rm = _correlation(v), _correlation(vm)
    original = _components(r)
    w = _component_weights(component_weights, original[0])
    if rm is None:
        rows.update({name: [float("nan")] * 3 for name in ("R", "RF", "C", "F")})
    else:
        masked = _components(rm)
        reference = _orient(original[1], None)
        rf, c, f = _factor_matrices(original[0], reference)
        rfm, cm, fm = _factor_matrices(masked[0], _orient(masked[1], reference))
        rows["R"] = _discrepancies(r[upper], rm[upper])
        rows["RF"] = _discrepancies(rf, rfm, w)
        rows["C"] = _discrepancies(c, cm)
        rows["F"] = _discrepancies(f, fm, w)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(DISCREPANCIES))
    table.index.name = "matrix"
    return table.loc[list(MATRICES)]


def matrix_discrepancy(X: Any, X_masked: Any, *, component_weights: Any = "variance"
                       ) -> pd.DataFrame:
    """Table 1 of Mateo-Sanz et al.: MSE, MAE and mean variation between characteristic
    matrices of the original and the masked data.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked numeric data, the same records in the same order.
    component_weights : {"variance", "equal"} or array-like of shape (p,)
        Component weights w_j of the RF and F rows (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Index ``X, Xbar, V, S, R, RF, C, F`` (named ``matrix``), columns ``MSE, MAE, MV``.
        Rows of pairs (V, R) are NaN when p = 1; the R, RF, C and F rows are NaN when a
        masked column is constant (its correlations are undefined).

    Raises
    ------
    DataError
        Invalid or misaligned data, a constant original column, bad component weights.

    Notes
    -----
    For matrices A (original) and A' (masked) with cells a, a' (Table 1):
    ``MSE = sum (a - a')^2 / cells``, ``MAE = sum |a - a'| / cells`` and
    ``MV = sum |a - a'| / |a| / cells``; the RF and F rows weight the cells of component j
    by w_j and divide by p^2. The X row's MAE, MSE and MV are :func:`mae`, :func:`mse` and
    :func:`il1`. All choices the paper leaves open (PCA on the correlation matrix, signs of
    components, w_j, zero denominators) are listed in the module docstring
    (:mod:`microsdc.utility._matrix`).

    References
    ----------
    Mateo-Sanz, J.M., Domingo-Ferrer, J., Sebe, F. (2005), Table 1 and section 2;
    Domingo-Ferrer, J., Torra, V. (2001). Disclosure protection methods and information loss
    for microdata. In *Confidentiality, Disclosure and Data Access*, 91-110.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [4.0, 3.0]])
    >>> table = matrix_discrepancy(x, x + [0.0, 1.0])
    >>> table.loc[["Xbar", "R"], "MAE"].tolist()
    [0.5, 0.0]
    """
    return discrepancy_table(numeric_pair(X, X_masked, min_records=2), component_weights)
