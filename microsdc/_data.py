"""Input checks shared by every measure: numeric matrices, aligned records, named errors.

Each public measure validates its inputs once, here, and then works on float arrays of shape
(n, p). Nothing in this module modifies its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microsdc._errors import DataError

Seed = int | np.random.Generator | None


class NumericPair:
    """Original and masked values as float arrays with the column names they came from.

    Attributes
    ----------
    x, xm : numpy.ndarray
        Original (n, p) and masked (n', p) values, float64.
    columns : list of str
        Column names (``V1``, ``V2``, ... for arrays).
    index : pandas.Index
        Record labels of the original data (positions for arrays), used in messages.
    """

    __slots__ = ("x", "xm", "columns", "index", "_varied")

    def __init__(self, x: np.ndarray, xm: np.ndarray, columns: list[str], index: pd.Index):
        self.x, self.xm, self.columns, self.index = x, xm, columns, index
        self._varied = False  # set once every original column is known to vary

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def p(self) -> int:
        return self.x.shape[1]

    def require_variation(self, what: str) -> None:
        """Raise :class:`DataError` naming the first original column whose standard deviation
        is zero (constant, or so small that it underflows)."""
        if self._varied:
            return
        constant = ~(self.x.std(axis=0) > 0)
        if constant.any():
            column = self.columns[int(np.argmax(constant))]
            raise DataError(f"{what} needs variation in every column; original column "
                            f"{column!r} has zero variance")
        self._varied = True


def generator(seed: Seed) -> np.random.Generator:
    """A numpy Generator from an int, a Generator (used as is) or None (fresh entropy)."""
    return np.random.default_rng(seed)


def shown(value: Any) -> str:
    """``repr`` of a value for an error message, numpy scalars shown as plain Python values
    (also inside a list or tuple), so that a message says ``nan``, not ``np.float64(nan)``.

    Examples
    --------
    >>> shown(np.float64("nan")), shown([np.int64(3), 0.5]), shown("a")
    ('nan', '[3, 0.5]', "'a'")
    """
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, list | tuple):
        inner = ", ".join(shown(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' * (len(value) == 1)})"
    return repr(value)


def _frame(data: Any, role: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pd.Series):
        return data.to_frame()
    array = np.asarray(data)
    if array.ndim != 2:
        raise DataError(f"{role} data must be a DataFrame or a 2-D array; got {array.ndim} "
                        f"dimension(s)")
    return pd.DataFrame(array, columns=[f"V{j + 1}" for j in range(array.shape[1])])


def _checked(values: np.ndarray, role: str, columns: list[str], index: pd.Index) -> np.ndarray:
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"{role} column {columns[j]!r} has a missing or infinite value in "
                        f"record {shown(index[i])}")
    return values


def _matrix(data: Any, role: str) -> tuple[np.ndarray, list[str], pd.Index]:
    """Float values (a view when possible; never written to), column names, record labels."""
    if isinstance(data, pd.DataFrame | pd.Series):
        frame = _frame(data, role)
        for column in frame.columns:
            dtype = frame[column].dtype
            if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
                raise DataError(f"{role} column {column!r} is not numeric (dtype {dtype})")
        columns, index = [str(c) for c in frame.columns], frame.index
        values = frame.to_numpy(dtype=float, na_value=np.nan)
    else:
        array = np.asarray(data)
        if array.ndim != 2:
            raise DataError(f"{role} data must be a DataFrame or a 2-D array; got "
                            f"{array.ndim} dimension(s)")
        columns = [f"V{j + 1}" for j in range(array.shape[1])]
        index = pd.RangeIndex(array.shape[0])
        if array.dtype.kind not in "iuf":
            raise DataError(f"{role} data is not numeric (dtype {array.dtype})")
        values = array.astype(float, copy=False)
    if values.shape[0] == 0 or values.shape[1] == 0:
        raise DataError(f"{role} data is empty ({values.shape[0]} records x "
                        f"{values.shape[1]} columns)")
    values = values.view()
    values.flags.writeable = False  # a view of the caller's data must never be written to
    return _checked(values, role, columns, index), columns, index


def numeric_matrix(X: Any, role: str = "original") -> tuple[np.ndarray, list[str], pd.Index]:
    """Validate one data set: numeric, finite, at least one record and one column.

    Returns the float values (a read-only view of the input when no conversion is needed:
    callers never write to it), the column names and the record labels.
    """
    return _matrix(X, role)


def numeric_pair(X: Any, X_masked: Any, *, same_records: bool = True,
                 min_records: int = 1) -> NumericPair:
    """Validate original and masked data and align their columns.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked numeric data. When both are DataFrames the masked columns are
        matched to the original ones by name (order may differ); otherwise by position.
    same_records : bool
        Require the same number of records (record-level measures pair record i of X with
        record i of X_masked). Statistic-level measures (PIL) allow n' != n.
    min_records : int
        Smallest acceptable number of records.

    Raises
    ------
    DataError
        Non-numeric, missing or infinite values (naming column and record), different
        columns (naming them), different record counts, or too few records.
    """
    if isinstance(X, pd.DataFrame) and isinstance(X_masked, pd.DataFrame):
        missing = [c for c in X.columns if c not in X_masked.columns]
        extra = [c for c in X_masked.columns if c not in X.columns]
        if missing or extra:
            raise DataError(f"original and masked data have different columns: missing in "
                            f"masked {missing!r}, not in original {extra!r}")
        if list(X_masked.columns) != list(X.columns):
            X_masked = X_masked[list(X.columns)]
    x, columns, index = _matrix(X, "original")
    xm = _matrix(X_masked, "masked")[0]
    if x.shape[1] != xm.shape[1]:
        raise DataError(f"original data has {x.shape[1]} columns, masked data "
                        f"{xm.shape[1]}")
    if same_records and x.shape[0] != xm.shape[0]:
        raise DataError(f"original data has {x.shape[0]} records, masked data {xm.shape[0]}; "
                        f"record-level measures need the same records in the same order")
    if min(x.shape[0], xm.shape[0]) < min_records:
        raise DataError(f"at least {min_records} records are needed; got {x.shape[0]} "
                        f"original and {xm.shape[0]} masked")
    return NumericPair(x, xm, columns, index)


def frame_pair(X: Any, X_masked: Any, variables: Sequence[str] | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Original and masked data of any dtype as DataFrames with the same records and columns.

    ``variables`` selects columns (all original columns by default); each must be in both.
    The frames returned are the inputs' own columns (not copies); callers must not modify
    them.
    """
    original, masked = _frame(X, "original"), _frame(X_masked, "masked")
    chosen = list(original.columns) if variables is None else list(variables)
    for role, frame in (("original", original), ("masked", masked)):
        absent = [c for c in chosen if c not in frame.columns]
        if absent:
            raise DataError(f"{role} data has no column {absent[0]!r}")
    if len(original) != len(masked):
        raise DataError(f"original data has {len(original)} records, masked data "
                        f"{len(masked)}; the comparison needs the same records in the same "
                        f"order")
    if not chosen:
        raise DataError("no variables to compare")
    return original[chosen], masked[chosen]
