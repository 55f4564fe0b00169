"""The boundary every masking method shares: validate once, mask a float matrix, give back
the caller's type (a DataFrame keeps its columns and index, an array stays an array)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from microsdc._data import numeric_matrix, shown
from microsdc._errors import DataError


def input_values(X: Any, *, min_records: int, what: str) -> np.ndarray:
    """The (n, p) float values of ``X`` after validation.

    Raises
    ------
    DataError
        A non-numeric column, a missing or infinite value (naming column and record), or
        fewer than ``min_records`` records.
    """
    values, _, _ = numeric_matrix(X, "input")
    if values.shape[0] < min_records:
        raise DataError(f"{what} needs at least {min_records} records; got {values.shape[0]}")
    return values


def same_type(X: Any, out: np.ndarray) -> Any:
    """``out`` as ``X``'s type: a DataFrame (or Series) keeps its columns and index."""
    if isinstance(X, pd.DataFrame):
        return pd.DataFrame(out, index=X.index.copy(), columns=X.columns.copy())
    if isinstance(X, pd.Series):
        return pd.Series(out[:, 0], index=X.index.copy(), name=X.name)
    return out


def check_number(name: str, value: Any, *, low: float, high: float = np.inf,
                 integer: bool = False) -> float:
    """Return ``value`` if it is a (whole, when ``integer``) number in [low, high]."""
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or not (low <= value <= high):
        kind = "a whole number" if integer else "a number"
        bounds = f">= {low:g}" if high == np.inf else f"in [{low:g}, {high:g}]"
        raise DataError(f"{name} must be {kind} {bounds}; got {shown(value)}")
    return int(value) if integer else float(value)
