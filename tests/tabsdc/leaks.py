"""An outsider reading a publishable file: every number in it, in any way it may be written.

:func:`numbers_in` reads each field of a file (split at ``,`` and at ``;``, quotes removed)
and each run of digits inside a field, and interprets it in every convention a writer or a
spreadsheet could have used: ``.`` or ``,`` as decimal point, ``,``, ``.``, ``'`` or blanks
between thousands, scientific notation. Each reading is a value with its resolution (half a
unit of its last digit). :func:`leaked` then says which secret values a file gives: a secret
``s`` is given by a reading ``(v, r)`` when ``|v - s| <= r`` and ``r`` is fine enough.

This is written independently of :mod:`tabsdc._release`: it knows nothing of codes, symbols or
layouts, only of numbers in text.
"""

from __future__ import annotations

import re

import numpy as np

_RUN = re.compile(r"[-+]?\d[\d,.'\u00a0\u202f ]*(?:[eE][-+]?\d+)?")
_THOUSANDS = ",.'\u00a0\u202f "


def readings(token: str) -> list[tuple[float, float]]:
    """(value, resolution) of every way ``token`` can be read as a number.

    >>> readings("987,654.321"), readings("1,5"), readings("9.9e+05")
    ([(987654.321, 0.0005)], [(1.5, 0.05)], [(990000.0, 5000.0)])
    >>> readings("987.654")  # a decimal point, or a thousands separator
    [(987.654, 0.0005), (987654.0, 0.5)]
    """
    token = token.strip()
    scientific = re.fullmatch(r"[-+]?\d+(?:\.(\d*))?[eE]([-+]?\d+)", token)
    if scientific:
        decimals = len(scientific.group(1) or "")
        return [(float(token), 0.5 * 10.0 ** (int(scientific.group(2)) - decimals))]
    sign = -1.0 if token.startswith("-") else 1.0
    body = token.lstrip("+-")
    found = []
    for point in (".", ",", None):
        if point is None:
            whole, fraction = body, ""
        elif point in body:
            whole, _, fraction = body.rpartition(point)
            if not fraction.isdigit():
                continue
        else:
            continue
        if not (whole.isdigit() or _grouped(whole, exclude=point)):
            continue
        value = float(re.sub(r"\D", "", whole) + "." + (fraction or "0"))
        found.append((sign * value, 0.5 * 10.0 ** -len(fraction)))
    return found


def _grouped(whole: str, exclude: str | None) -> bool:
    """``whole`` is digits in groups of three after the first, one separator between."""
    return any(sep != exclude and re.fullmatch(r"\d{1,3}(?:" + re.escape(sep) + r"\d{3})+",
                                                 whole) for sep in _THOUSANDS)


def numbers_in(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Every reading of every field and digit run of ``text``: (values, resolutions)."""
    tokens = set()
    for line in text.splitlines():
        for sep in (",", ";", "\t"):
            for field in line.split(sep):
                field = field.strip().strip('"').strip()
                tokens.add(field)
                tokens.update(match.strip() for match in _RUN.findall(field))
    pairs = [pair for token in tokens if token for pair in readings(token)]
    if not pairs:
        return np.zeros(0), np.zeros(0)
    values, resolutions = np.array(pairs).T
    return values, resolutions


def leaked(text: str, secrets: np.ndarray, *, finest: float = 0.5) -> np.ndarray:
    """The secrets ``text`` gives: those within the resolution of one of its numbers, among
    the numbers written with a resolution of ``finest`` or finer (0.5: to whole units)."""
    values, resolutions = numbers_in(text)
    keep = resolutions <= finest + 1e-12
    values, resolutions = values[keep], resolutions[keep]
    secrets = np.asarray(secrets, dtype=float)
    if not values.size or not secrets.size:
        return secrets[:0]
    close = np.abs(secrets[:, None] - values[None, :]) <= resolutions[None, :] * (1 + 1e-9)
    return secrets[close.any(axis=1)]
