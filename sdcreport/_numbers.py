"""Numbers as statisticians read them: ``4,792,080`` rather than ``4.79208e+06``.

One rule for every text, Markdown and HTML rendering (JSON keeps full precision):

* whole numbers (any float that is an integer) get thousands separators and no decimals;
* other numbers get as many decimals as three significant digits of the largest number they
  are shown with need (a column of a table, or the one number), at most six:
  ``d = min(6, max(0, 2 - floor(log10 M)))``, so ``1,234.57``-like values show 0 decimals
  beside millions, and ratios ``0.953``;
* numbers too large or too small for that (``M >= 1e15``, or every value below ``1e-4``)
  keep four significant digits in scientific notation; NaN shows as an empty field,
  infinities as ``inf`` / ``-inf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

_MAX_DECIMALS = 6
_SCIENTIFIC_ABOVE = 1e15
_SCIENTIFIC_BELOW = 1e-4


def format_numbers(values: Any) -> list[str]:
    """Format numbers shown together (one column) with one number of decimals.

    Examples
    --------
    >>> format_numbers([4792080.0, 12.0, 0.0])
    ['4,792,080', '12', '0']
    >>> format_numbers([0.95312, 0.5])
    ['0.953', '0.500']
    >>> format_numbers([1234.5678, 3.25])
    ['1,235', '3']
    >>> format_numbers([3e-9, float("nan"), float("inf")])
    ['3e-09', '', 'inf']
    """
    array = np.asarray(values, dtype=float).reshape(-1)
    finite = array[np.isfinite(array)]
    largest = float(np.abs(finite).max()) if finite.size else 0.0
    if largest >= _SCIENTIFIC_ABOVE or 0.0 < largest < _SCIENTIFIC_BELOW:
        return [_either(_special(v), f"{v:.4g}") for v in array]
    whole = bool(np.all(finite == np.round(finite)))
    decimals = 0 if whole or largest == 0.0 else \
        min(_MAX_DECIMALS, max(0, 2 - math.floor(math.log10(largest))))
    return [_either(_special(v), f"{v:,.{decimals}f}") for v in array]


def format_number(value: Any) -> str:
    """Format one number (see the module text); other values as ``str``.

    Examples
    --------
    >>> format_number(4792080.0), format_number(0.0425), format_number(True), format_number(7)
    ('4,792,080', '0.0425', 'yes', '7')
    """
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    if isinstance(value, float | np.floating):
        return format_numbers([value])[0]
    return str(value)


def format_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every numeric column formatted by :func:`format_numbers`
    (booleans as yes/no); the index is kept as it is.

    Examples
    --------
    >>> format_frame(pd.DataFrame({"value": [4792080.0, 12.5], "ok": [True, False]}))
           value   ok
    0  4,792,080  yes
    1         12   no
    """
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if pd.api.types.is_bool_dtype(column):
            out.isetitem(position, column.map(format_number))
        elif pd.api.types.is_numeric_dtype(column):
            out.isetitem(position, pd.Series(format_numbers(column.to_numpy(float)),
                                             index=out.index, dtype=object))
    return out


def _either(special: str | None, formatted: str) -> str:
    return formatted if special is None else special


def _special(value: float) -> str | None:
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return None
