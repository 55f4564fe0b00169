"""How many decimals a table's values have, so that a publishable file shows them as given.

A value read as ``801669.2`` and summed into totals comes back as ``801669.199999999`` (the
float nearest to a sum of decimal fractions is rarely the decimal fraction itself). A table
therefore remembers the decimals of its input (:attr:`tabsdc._table.Table.decimals`), and its
publishable file writes every value with them (:mod:`tabsdc._release`).

* :func:`decimals_of`: from values, the fewest decimals ``d`` with which every value ``v``
  is written exactly, up to the float error of a sum:
  ``|v - round(v, d)| <= TOLERANCE * |v|``; at most :func:`decimals_cap`.
* :func:`decimals_in_text`: from the text of a value column, the most decimals any field has
  (``1.50`` has 2, ``2.5e-3`` has 4), at most :func:`decimals_cap` as well.
* :func:`decimals_cap`: :data:`MAX_DECIMALS` decimals of the values' working unit
  (:func:`tabsdc._validation.working_unit`): 6 for tables whose largest value lies in
  [1, 1e6] or above, more for tables of small numbers (values of about 1e-9 keep theirs), so
  values with more decimals than that (measurements, weighted estimates) are published to
  six decimals of their working unit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tabsdc._errors import InputError
from tabsdc._units import working_unit

#: Decimals of the working unit a table's values are published with at most.
MAX_DECIMALS = 6

#: Relative error within which a value counts as having ``d`` decimals (sums of many values
#: with ``d`` decimals carry float errors of about 1e-16 per term).
TOLERANCE = 1e-12

#: Error, relative to the largest magnitude of the values, within which a value counts as
#: having ``d`` decimals: a total whose terms cancel (``-4.0351 + 99999.3968 - 99999.9978``)
#: carries the float error of its largest terms, about 1e-16 of them per term summed.
SUM_TOLERANCE = 1e-13

#: From this magnitude on a float64 does not hold every whole number (2**53).
EXACT_INTEGERS = 2.0**53

#: A number as text: sign, digits, decimals, exponent (matched whole).
_NUMBER = r"\s*[+-]?\d*(?:\.(?P<decimals>\d*))?(?:[eE](?P<exponent>[+-]?\d+))?\s*"


def decimals_cap(values: np.ndarray) -> int:
    """The most decimals values like these are published with: :data:`MAX_DECIMALS`
    decimals of their working unit.

    Examples
    --------
    >>> decimals_cap(np.array([12.5, 250_000.0])), decimals_cap(np.array([3e-9, 6e-9]))
    (6, 18)
    """
    unit = working_unit(np.asarray(values, dtype=float))
    return MAX_DECIMALS + max(0, -round(math.log10(unit)))


def decimals_of(values: np.ndarray, limit: int | None = None) -> int:
    """The fewest decimals with which every value is written exactly (up to the float error
    of a sum), at most ``limit`` (default :func:`decimals_cap`).

    Parameters
    ----------
    values : array of float
        Finite values (others are ignored).
    limit : int, optional
        The most decimals returned; also what is returned when no fewer represent every
        value.

    Returns
    -------
    int

    Examples
    --------
    >>> decimals_of(np.array([1.5, 0.1 + 0.2, 801669.199999999]))
    1
    >>> decimals_of(np.array([4.0, 12.0])), decimals_of(np.array([63.16852476447821]))
    (0, 6)
    >>> decimals_of(np.array([0.125, 2.0]), limit=2)
    2
    >>> terms = [-4.0351, 99999.3968, -99999.9978]
    >>> decimals_of(np.array([*terms, sum(terms)]))  # the total carries the terms' float error
    4
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    limit = decimals_cap(values) if limit is None else int(limit)
    largest = float(np.abs(values).max()) if len(values) else 0.0
    tolerance = np.maximum(TOLERANCE * np.abs(values), SUM_TOLERANCE * largest)
    for decimals in range(limit):
        if np.all(np.abs(values - np.round(values, decimals)) <= tolerance):
            return decimals
    return limit


def decimals_in_text(text: pd.Series, values: np.ndarray | None = None) -> int:
    """The most decimals a number of ``text`` is written with, at most the
    :func:`decimals_cap` of ``values`` (default: the numbers of ``text``).

    Fields that are not numbers (empty ones included) are ignored.

    Examples
    --------
    >>> decimals_in_text(pd.Series(["12", "1.50", "", "2.5e-3"]))
    4
    >>> decimals_in_text(pd.Series(["63.16852476447821"]))
    6
    """
    strings = text.astype(str)
    numbers = strings[strings.str.fullmatch(_NUMBER) & strings.str.contains(r"\d")]
    parts = numbers.str.extract(_NUMBER)
    written = parts["decimals"].fillna("").str.len()
    shift = pd.to_numeric(parts["exponent"]).fillna(0)
    most = int((written - shift).clip(lower=0).max()) if len(parts) else 0
    if values is None:
        values = pd.to_numeric(strings, errors="coerce")
    return min(most, decimals_cap(np.asarray(values, dtype=float)))


def checked_decimals(decimals: object) -> int:
    """``decimals``, checked to be a whole number >= 0.

    Raises
    ------
    InputError
        Anything else (a bool, a fraction, a negative number).

    Examples
    --------
    >>> checked_decimals(2)
    2
    >>> checked_decimals(-1)
    Traceback (most recent call last):
    ...
    tabsdc.InputError: decimals must be a whole number >= 0, not -1
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int | np.integer) or decimals < 0:
        raise InputError(f"decimals must be a whole number >= 0, not {decimals!r}")
    return int(decimals)


def format_decimals(values: np.ndarray, decimals: int, given: int | None = None) -> np.ndarray:
    """``values`` as text with ``decimals`` decimals each (no ``-0``).

    Values are first rounded to the ``given`` decimals they have (a table's own), so that
    the float error of a sum cannot tip a half: ``801669.5000001`` given with one decimal is
    ``801669.5``, which rounds to the even ``801670`` with no decimal. A value beyond
    :data:`EXACT_INTEGERS`, where a float64 no longer holds every whole number, is written
    with the digits it holds (``2.72e+142``), not with the noise of its binary expansion.

    Examples
    --------
    >>> format_decimals(np.array([801669.199999999, -1e-13, 3.0]), 1).tolist()
    ['801669.2', '0.0', '3.0']
    >>> format_decimals(np.array([2.5000000001, 3.5, 2.72e142]), 0, given=1).tolist()
    ['2', '4', '2.72e+142']
    """
    rounded = np.asarray(values, dtype=float)
    if given is not None and given > decimals:
        rounded = np.round(rounded, given)
    rounded = np.round(rounded, decimals) + 0.0
    text = np.char.mod(f"%.{decimals}f", rounded).astype(object)
    beyond = np.flatnonzero(np.abs(rounded) >= EXACT_INTEGERS)
    text[beyond] = [repr(float(v)) for v in rounded[beyond]]
    return text
