"""The choices made on the page, as the toolkit's objects.

The page sends its choices as plain JSON (see :class:`tabsdc.ui._session.Session`); these
functions turn them into rules and hierarchies, and list the methods the page offers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tabsdc._errors import InputError, TabSDCError
from tabsdc._hierarchy import Hierarchy
from tabsdc._rules import DominanceRule, FrequencyRule, PPercentRule, PQRule
from tabsdc.ui._inputs import Dataset

#: Largest contributions kept per cell; the largest n of an (n,k) rule.
TOP_CONTRIBUTIONS = 5
#: The costs of hiding a cell the page offers.
COSTS = ("value", "count", "entropy")


def options() -> dict[str, list[str]]:
    """The methods the page offers, from the toolkit itself (so new methods appear)."""
    from tabsdc.cta import METHODS as CTA_METHODS
    from tabsdc.rounding import METHODS as ROUNDING_METHODS
    from tabsdc.suppression import METHODS as SUPPRESSION_METHODS

    return {"suppression": list(SUPPRESSION_METHODS), "rounding": list(ROUNDING_METHODS),
            "cta": list(CTA_METHODS), "cost": list(COSTS)}


def number(value: Any, what: str, *, integer: bool = False, minimum: float | None = None,
           above: float | None = None, optional: bool = False) -> Any:
    """A number typed on the page (a JSON number or the text of a box), checked: finite,
    whole when ``integer``, at least ``minimum``, more than ``above``; an empty box is None
    when ``optional``. The error names the box (``what``) in the page's words.

    Examples
    --------
    >>> number("12.5", "p"), number(3, "n", integer=True), number("", "seed", optional=True)
    (12.5, 3, None)
    >>> number("", "rounding base", integer=True, minimum=2)
    Traceback (most recent call last):
    ...
    tabsdc.InputError: rounding base: the box is empty; type a whole number of at least 2
    """
    def wanted() -> str:
        kind = "a whole number" if integer else "a number"
        if minimum is not None:
            kind += f" of at least {minimum:g}"
        elif above is not None:
            kind += f" above {above:g}"
        return kind + (", or leave the box empty" if optional else "")

    if value is None or (isinstance(value, str) and not value.strip()):
        if optional:
            return None
        raise InputError(f"{what}: the box is empty; type {wanted()}")
    try:
        parsed = float(value.strip().replace(",", ".")) if isinstance(value, str) else (
            float(value) if not isinstance(value, bool) else float("nan"))
    except (TypeError, ValueError):
        raise InputError(f"{what}: {value!r} is not a number; type {wanted()}") from None
    if not np.isfinite(parsed) or (integer and parsed != int(parsed)) or (
            minimum is not None and parsed < minimum) or (above is not None and
                                                          not parsed > above):
        raise InputError(f"{what}: {value!r} cannot be used; type {wanted()}")
    return int(parsed) if integer else parsed


def rules_from_spec(spec: dict[str, Any]) -> list:
    """The rules chosen on the page: ``p``, ``pq`` ([p, q]), ``nk`` ([n, k]), ``freq`` and
    ``freq_level`` (absent or None: not used).

    Examples
    --------
    >>> [r.name for r in rules_from_spec({"p": 10, "freq": 3})]
    ['p%(p=10)', 'freq(n=3)']
    """
    rules: list = []
    if spec.get("p") is not None:
        rules.append(_rule(PPercentRule, p=number(spec["p"], "p% rule: p")))
    if spec.get("pq") is not None:
        p, q = _pair(spec["pq"], "p/q rule")
        rules.append(_rule(PQRule, p=number(p, "p/q rule: p"),
                           q=number(q, "p/q rule: q")))
    if spec.get("nk") is not None:
        n, k = _pair(spec["nk"], "(n,k) rule")
        n = number(n, "(n,k) rule: n", integer=True, minimum=1)
        if n > TOP_CONTRIBUTIONS:
            raise InputError(f"(n,k) rule: n = {n} is larger than {TOP_CONTRIBUTIONS}, the "
                             "number of largest contributions the app keeps per cell")
        rules.append(_rule(DominanceRule, n=n, k=number(k, "(n,k) rule: k")))
    if spec.get("freq") is not None:
        level = spec.get("freq_level")
        rules.append(_rule(FrequencyRule,
                           n=number(spec["freq"], "minimum frequency: n", integer=True,
                                    minimum=1),
                           level=10.0 if level in (None, "") else number(
                               level, "minimum frequency: protection level", minimum=0)))
    if not rules:
        raise InputError("choose at least one rule")
    return rules


def _pair(value: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise InputError(f"{what}: give two numbers, not {value!r}")
    return value[0], value[1]


def _rule(kind: type, **parameters: Any) -> Any:
    """The rule, or its own refusal of the parameters (which names the rule)."""
    try:
        return kind(**parameters)
    except (TabSDCError, ValueError) as error:
        raise InputError(str(error)) from None


def hierarchy_from_spec(dim: str, spec: dict[str, Any], data: Dataset,
                        files: dict[str, Hierarchy]) -> Hierarchy | None:
    """The hierarchy of dimension ``dim``: ``{"kind": "flat"}`` (None: a flat total),
    ``{"kind": "levels", "columns": [...]}`` (coarsest first; ``dim`` itself is added as the
    finest level when missing), ``{"kind": "prefixes", "lengths": [...]}`` or
    ``{"kind": "file"}`` (the parent/child file uploaded for ``dim``)."""
    kind = spec.get("kind", "flat")
    if kind == "flat":
        return None
    if kind == "levels":
        columns = [c for c in spec.get("columns", []) if c != dim] + [dim]
        return Hierarchy.from_levels(pd.DataFrame({c: data.codes(c) for c in columns}))
    if kind == "prefixes":
        lengths = [number(n, f"hierarchy of {dim!r}: code length", integer=True, minimum=1)
                   for n in spec.get("lengths", [])]
        if not lengths:
            raise InputError(f"hierarchy of {dim!r}: give the code lengths, e.g. 1, 2, 3")
        return Hierarchy.from_prefixes(data.codes(dim).unique(), lengths)
    if kind == "file":
        if dim not in files:
            raise InputError(f"hierarchy of {dim!r}: upload a parent/child file first")
        return files[dim]
    raise InputError(f"hierarchy of {dim!r}: unknown kind {kind!r}")
