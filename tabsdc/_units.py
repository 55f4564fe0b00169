"""The magnitude of a table's numbers: its working unit and the largest value it may hold.

Tolerances are relative to a table's magnitude (:func:`working_unit`). Solvers such as HiGHS
use *absolute* feasibility tolerances (about 1e-7), and many checks compare a difference with
``tol * max(1, |a|)``; both misjudge a table whose values are all about 1e-9 (every interval
collapses) or 1e12. A table is therefore solved in a working unit ``s``, a power of ten, with
every value, bound, protection level, cost and right-hand side divided by ``s``: ``s = 1`` when
the table's largest absolute value ``M`` lies in [1, 1e6] (most tables: nothing changes),
otherwise ``s = 10**(floor(log10 M) - 3)``, so that the largest value lies in [1e3, 1e4).
Results are multiplied back by ``s``; since ``s`` is a power of ten, a table scaled by
``10**k`` is solved in the same working numbers and gets the same verdicts and patterns.
:func:`tabsdc._validation.in_working_units` divides a table by its unit.

Values beyond :data:`LARGEST_VALUE` are refused (:func:`too_large` says why).
"""

from __future__ import annotations

import math

import numpy as np

#: Largest values that are solved as they are (the working unit is 1 inside this range).
_NATURAL_RANGE = (1.0, 1e6)

#: Below this largest magnitude the values are zero to every solver and the working unit
#: stays 1 (a smaller unit would underflow: ``10.0 ** -327 == 0.0``).
_NEGLIGIBLE = 1e-290

#: The largest absolute value, cost or protection level a table may hold. The methods sum
#: and square values (relations, the distances and variances of adjustments): 1e150 keeps
#: the squares of 1e8 cells below float64's largest number (about 1.8e308). Tables are
#: refused above it, naming the cell (:func:`too_large`).
LARGEST_VALUE = 1e150


def too_large(value: float, what: str = "value") -> str | None:
    """Why ``value`` (named ``what``) cannot be computed with, or None when it can: it is
    finite and beyond :data:`LARGEST_VALUE`.

    Examples
    --------
    >>> too_large(1e300)  # doctest: +ELLIPSIS
    'value 1e+300 is beyond 1e+150, the largest magnitude the toolkit computes with ...'
    >>> too_large(-2e12) is None, too_large(float("inf")) is None
    (True, True)
    """
    if abs(value) <= LARGEST_VALUE or not math.isfinite(value):
        return None
    return (f"{what} {value:g} is beyond {LARGEST_VALUE:g}, the largest magnitude the toolkit "
            "computes with (sums and squares of larger values overflow); give the values in a "
            "larger unit")


def magnitude(values: np.ndarray) -> float:
    """The largest finite absolute value (0.0 for an empty or all-zero array).

    Examples
    --------
    >>> magnitude(np.array([3.0, -7.5, np.inf]))
    7.5
    """
    values = np.asarray(values, dtype=float)
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def working_unit(values: np.ndarray) -> float:
    """The power of ten in which a table with these values is solved (see the module text).

    Examples
    --------
    >>> working_unit(np.array([12.0, 250_000.0]))
    1.0
    >>> working_unit(np.array([3e-9, 6e-9]))
    1e-12
    >>> working_unit(np.array([4.2e9]))
    1000000.0
    >>> working_unit(np.array([5e-324]))
    1.0
    """
    largest = magnitude(values)
    low, high = _NATURAL_RANGE
    if largest < _NEGLIGIBLE or low <= largest <= high:
        return 1.0
    return 10.0 ** (math.floor(math.log10(largest)) - 3)
