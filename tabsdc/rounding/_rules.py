"""The four rounding rules, applied cell by cell.

A value is written ``x = q B + r`` with base ``B`` (an integer >= 2), ``q = floor(x / B)`` and
residue ``0 <= r < B``. Every rule is *adjacent* (``R(x)`` is ``qB`` or ``(q + 1)B``, so
``|x - R(x)| < B``) and *zero-restricted* (``r = 0`` stays: multiples of ``B`` are unchanged).
A rule is fully described by the probability of rounding up given the residue (Cox, *Towards
a quality assessment of disclosure-limited statistical data*, slides 5-7; Cox & Kim 2006):

===================  ==========================================================
rule                 P[R(x) = (q + 1) B | r],  r > 0
===================  ==========================================================
``conventional``     1 if r >= B/2 else 0 (for odd B and integer r: r >= (B+1)/2)
``modified``         1 if r > B/2, 1/2 if r = B/2, 0 if r < B/2
``fifty-fifty``      1/2 (zero-restricted 50/50 rounding)
``unbiased``         r / B (so that E[R(x)] = x)
===================  ==========================================================

and 0 for every rule when ``r = 0``. :func:`up_probability` gives this table, and
:func:`apply_rule` draws the rounding from it (random rules take ``seed``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from tabsdc._errors import InputError
from tabsdc._validation import check_choice

#: Names of the cell-by-cell rounding rules.
RULES = ("conventional", "modified", "fifty-fifty", "unbiased")

#: Rules whose outcome is random for some residues.
RANDOM_RULES = ("modified", "fifty-fifty", "unbiased")

#: Relative tolerance (in units of the base) below which a residue counts as 0 or B/2.
RESIDUE_TOL = 1e-9


def check_base(base: object) -> int:
    """Return ``base`` as an int, or raise :class:`InputError` unless it is an integer >= 2.

    Examples
    --------
    >>> check_base(5)
    5
    """
    if isinstance(base, bool) or not isinstance(base, Real) or base != int(base) or base < 2:
        raise InputError(f"the rounding base must be an integer >= 2, got {base!r}")
    return int(base)


def check_rule(rule: str) -> str:
    """Return ``rule`` or raise :class:`InputError` naming the known rules."""
    return check_choice("rule", rule, RULES)


def decompose(values: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Split values into ``x = q B + r`` with ``q = floor(x / B)`` and ``0 <= r < B``.

    A value within ``1e-9 B`` of a multiple of ``B``, or within 1024 units in the last place
    of ``x / B`` (the float noise of a value of that size), counts as that multiple
    (``r = 0``), so that float noise in real-valued tables does not make a multiple look
    rounded, while a residue of large integer values (2e11 to base 10) is kept.

    Parameters
    ----------
    values : array-like of float
        Finite values (negative values are allowed: ``q`` is then negative).
    base : int
        The rounding base.

    Returns
    -------
    q : ndarray of float
        Integer-valued quotients.
    r : ndarray of float
        Residues in ``[0, B)``.

    Examples
    --------
    >>> q, r = decompose(np.array([0.0, 7.0, 10.0, -3.0]), 5)
    >>> q.tolist(), r.tolist()
    ([0.0, 1.0, 2.0, -1.0], [0.0, 2.0, 0.0, 2.0])
    >>> decompose(np.array([215324074168.0, 30.000000000000004]), 10)[1].tolist()
    [8.0, 0.0]
    """
    x = np.asarray(values, dtype=float)
    scaled = x / base
    nearest = np.round(scaled)
    noise = RESIDUE_TOL + 1024 * np.finfo(float).eps * np.abs(scaled)
    on_multiple = np.abs(scaled - nearest) <= noise
    q = np.where(on_multiple, nearest, np.floor(scaled))
    r = np.where(on_multiple, 0.0, x - base * q)
    # x / B just below an integer can floor to q while x - Bq rounds to B: move it up
    wrapped = r >= base
    q = np.where(wrapped, q + 1.0, q)
    r = np.where(wrapped, 0.0, np.maximum(r, 0.0))
    return q, r


def up_probability(residues: np.ndarray, base: int, rule: str) -> np.ndarray:
    """``P[R(x) = (q + 1) B | r]`` for each residue under ``rule`` (module table).

    Parameters
    ----------
    residues : array-like of float
        Residues ``0 <= r < B`` (see :func:`decompose`).
    base : int
        The rounding base.
    rule : {"conventional", "modified", "fifty-fifty", "unbiased"}

    Returns
    -------
    ndarray of float
        Probabilities in ``[0, 1]``; 0 wherever ``r = 0`` (zero-restriction).

    Examples
    --------
    Zero-restricted 50/50 and unbiased rounding with base 4, r = 0..3:

    >>> up_probability(np.arange(4.0), 4, "fifty-fifty").tolist()
    [0.0, 0.5, 0.5, 0.5]
    >>> up_probability(np.arange(4.0), 4, "unbiased").tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    base = check_base(base)
    rule = check_rule(rule)
    r = np.asarray(residues, dtype=float)
    positive = r > RESIDUE_TOL * base
    half = np.abs(r - base / 2) <= RESIDUE_TOL * base
    if rule == "conventional":
        p = (half | (r > base / 2)).astype(float)
    elif rule == "modified":
        p = np.where(half, 0.5, (r > base / 2).astype(float))
    elif rule == "fifty-fifty":
        p = np.full(r.shape, 0.5)
    else:
        p = np.clip(r / base, 0.0, 1.0)
    return np.where(positive, p, 0.0)


def apply_rule(
    values: np.ndarray,
    base: int,
    rule: str,
    *,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """Round every value independently with one of the four rules.

    Parameters
    ----------
    values : array-like of float
        Finite values (not modified).
    base : int
        Rounding base, an integer >= 2.
    rule : {"conventional", "modified", "fifty-fifty", "unbiased"}
        See the module docstring.
    seed : int, numpy Generator or None
        Random source of the random rules (None: fresh entropy). One uniform number is drawn
        per value, so a seed reproduces the rounding of the same values.

    Returns
    -------
    ndarray of float
        Rounded values, multiples of ``base``.

    Raises
    ------
    InputError
        A base that is not an integer >= 2, an unknown rule, or a non-finite value (naming
        its position).

    Notes
    -----
    ``R(x) = B (q + U)`` with ``U = 1`` when a uniform draw is below
    :func:`up_probability`; for the deterministic conventional rule no draw matters.

    Examples
    --------
    >>> apply_rule(np.array([0.0, 3.0, 7.0, 10.0, 12.0]), 5, "conventional").tolist()
    [0.0, 5.0, 5.0, 10.0, 10.0]
    """
    base = check_base(base)
    x = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise InputError(f"value at position {int(bad[0])} is not finite ({x[bad[0]]})")
    q, r = decompose(x, base)
    p = up_probability(r, base, rule)
    draws = np.random.default_rng(seed).random(x.shape)
    return base * (q + (draws < p))
