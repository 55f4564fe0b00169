"""The choices made on the page, as the toolkit's objects.

The page sends its choices as plain JSON (see :class:`tabsdc.ui.session.Session`); these
functions turn them into rules and hierarchies, and list the methods the page offers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tabsdc.errors import InputError
from tabsdc.hierarchy import Hierarchy
from tabsdc.rules import DominanceRule, FrequencyRule, PPercentRule, PQRule
from tabsdc.ui.inputs import Dataset

__all__ = ["TOP_CONTRIBUTIONS", "options", "rules_from_spec", "hierarchy_from_spec"]

#: Largest contributions kept per cell; the largest n of an (n,k) rule.
TOP_CONTRIBUTIONS = 5


def options() -> dict[str, list[str]]:
    """The methods the page offers, from the toolkit itself (so new methods appear)."""
    from tabsdc.cta import METHODS as CTA_METHODS
    from tabsdc.rounding import METHODS as ROUNDING_METHODS
    from tabsdc.suppression import METHODS as SUPPRESSION_METHODS

    return {"suppression": list(SUPPRESSION_METHODS), "rounding": list(ROUNDING_METHODS),
            "cta": list(CTA_METHODS), "cost": ["value", "count", "entropy"]}


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
        rules.append(PPercentRule(float(spec["p"])))
    if spec.get("pq") is not None:
        rules.append(PQRule(*map(float, spec["pq"])))
    if spec.get("nk") is not None:
        n, k = spec["nk"]
        if int(n) > TOP_CONTRIBUTIONS:
            raise InputError(f"(n,k) rule: n = {n} is larger than {TOP_CONTRIBUTIONS}, the "
                             "number of largest contributions the app keeps per cell")
        rules.append(DominanceRule(int(n), float(k)))
    if spec.get("freq") is not None:
        level = spec.get("freq_level")
        rules.append(FrequencyRule(int(spec["freq"]), level=10.0 if level is None else
                                   float(level)))
    if not rules:
        raise InputError("choose at least one rule")
    return rules


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
        lengths = [int(n) for n in spec.get("lengths", [])]
        if not lengths:
            raise InputError(f"hierarchy of {dim!r}: give the code lengths, e.g. 1, 2, 3")
        return Hierarchy.from_prefixes(data.codes(dim).unique(), lengths)
    if kind == "file":
        if dim not in files:
            raise InputError(f"hierarchy of {dim!r}: upload a parent/child file first")
        return files[dim]
    raise InputError(f"hierarchy of {dim!r}: unknown kind {kind!r}")
