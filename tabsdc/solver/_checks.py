"""Input checks shared by :class:`LinearProgram` and :class:`HighsModel` updates."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError


def as_vector(
    name: str, value: object, length: int, what: str, *, broadcast: bool = False
) -> np.ndarray:
    """A read-only float64 copy of ``value`` with shape ``(length,)`` and no NaN.

    ``what`` explains the expected length in the error message (e.g. "A has 4 columns").
    With ``broadcast``, a scalar is repeated ``length`` times.
    """
    array = np.array(value, dtype=np.float64)
    if broadcast and array.ndim == 0:
        array = np.full(length, float(array))
    if array.shape != (length,):
        raise InputError(f"{name} has shape {array.shape}, expected ({length},) ({what})")
    nan = np.flatnonzero(np.isnan(array))
    if nan.size:
        raise InputError(f"{name} is NaN at index {int(nan[0])}")
    array.flags.writeable = False
    return array


def check_finite(name: str, array: np.ndarray) -> None:
    """Raise when ``array`` holds an infinity, naming the first index."""
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InputError(f"{name}[{int(bad[0])}] = {array[bad[0]]} is not finite")


def check_bounds(lower_name: str, lower: np.ndarray, upper_name: str, upper: np.ndarray) -> None:
    """Raise on a lower bound of +inf, an upper bound of -inf, or lower > upper.

    The message names the array and the first offending index.
    """
    for name, array, wrong in ((lower_name, lower, np.inf), (upper_name, upper, -np.inf)):
        bad = np.flatnonzero(array == wrong)
        if bad.size:
            raise InputError(f"{name}[{int(bad[0])}] = {wrong} is not a valid bound")
    bad = np.flatnonzero(lower > upper)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"{lower_name}[{i}] = {lower[i]} exceeds {upper_name}[{i}] = {upper[i]}"
            + (f" ({bad.size} indices in all)" if bad.size > 1 else "")
        )


def as_csr(name: str, value: object) -> sp.csr_array:
    """A canonical float64 CSR copy of a sparse or dense 2-D matrix with finite entries.

    Canonical: duplicates summed, explicit zeros removed, column indices sorted.
    """
    if not sp.issparse(value):
        dense = np.asarray(value, dtype=np.float64)
        if dense.ndim != 2:
            raise InputError(f"{name} has shape {dense.shape}, expected a 2-D matrix")
        value = dense
    matrix = sp.csr_array(value, dtype=np.float64, copy=True)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    matrix.sort_indices()
    bad = np.flatnonzero(~np.isfinite(matrix.data))
    if bad.size:
        k = int(bad[0])
        row = int(np.searchsorted(matrix.indptr, k, side="right") - 1)
        raise InputError(
            f"{name}[{row}, {int(matrix.indices[k])}] = {matrix.data[k]} is not finite"
        )
    return matrix
