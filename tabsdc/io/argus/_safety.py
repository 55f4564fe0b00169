"""tau-ARGUS safety rules (``<SAFETYRULE>``) as the toolkit's sensitivity rules.

A rule line is a list separated by ``|`` (manual 5.7)::

    P(p[,n])  or  P(p,q,n)   p% rule (n intruders in the coalition; with q: the p/q rule)
    NK(n,k)                  (n,k)-dominance
    FREQ(n,range)            minimum frequency n, protection level range % of the value
    ZERO(range)              cells whose contributions are all zero are unsafe (level = range)
    REQ(p1,p2,n,margin)      request rule: a contributor that asked for protection (request
                             code 1 resp. 2) holding more than p1 resp. p2 % of the cell, or a
                             cell with a request and fewer than n contributors
    MIS(0|1)                 1: cells with a missing code are always safe
    WGT(0|1)                 1: the table is computed with the sampling weights
    MAN(margin)              protection level (%) of cells made unsafe by hand (status file,
                             a-priori file); default 20

Position matters: the first two ``P`` and ``NK`` rules apply to individual contributors, the
third and fourth to holdings; the first ``FREQ`` and ``REQ`` to individuals, the second to
holdings. ``P(0,...)``, ``NK(0,0)``, ``FREQ(0,0)`` are placeholders tau-ARGUS writes for an
unused slot. The p% rule with a coalition of ``n`` intruders (Hundepool et al. 2012, 4.2.2;
manual 4.4.4) gives ``upl = p/100 x1 - (X - x1 - x2 - ... - x_{n+1})``; for n = 1 it is
:class:`~tabsdc._rules.PPercentRule`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tabsdc._errors import RuleError
from tabsdc._rules import (
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    SensitivityRule,
    largest_contributions,
)

_RULE = re.compile(r"\s*([A-Za-z]+)\s*\(([^)]*)\)\s*")


@dataclass(frozen=True)
class CoalitionPPercentRule:
    """p% rule against a coalition of ``n`` intruders: ``upl = p/100 x1 - (X - sum x1..x_{n+1})``.

    Examples
    --------
    >>> cells = pd.DataFrame({"value": [100.0], "x1": [60.0], "x2": [30.0], "x3": [6.0]})
    >>> CoalitionPPercentRule(10, 2).evaluate(cells)
    (array([ True]), array([2.]))
    """

    p: float
    n: int = 1

    def __post_init__(self) -> None:
        if not 0 < self.p <= 100 or self.n < 1:
            raise RuleError(f"p% rule needs 0 < p <= 100 and n >= 1 intruders: {self}")

    @property
    def name(self) -> str:
        return f"p%(p={self.p:g}, n={self.n})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        top, total = largest_contributions(cells, self.n + 1, self.name)
        upl = self.p / 100 * top[:, 0] - (total - top.sum(axis=1))
        sensitive = upl > 1e-9 * np.maximum(1.0, np.abs(total))
        return sensitive, np.where(sensitive, upl, 0.0)


@dataclass(frozen=True)
class ZeroRule:
    """Zero cells with contributors are unsafe with protection level ``range`` (absolute)."""

    range: float

    def __post_init__(self) -> None:
        if self.range < 0:
            raise RuleError(f"ZERO needs a non-negative safety range: {self.range}")

    @property
    def name(self) -> str:
        return f"zero(range={self.range:g})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        freq = cells["freq"].to_numpy(float)
        sensitive = (cells["value"].to_numpy(float) == 0) & (np.nan_to_num(freq) > 0)
        return sensitive, np.where(sensitive, self.range, 0.0)


@dataclass(frozen=True)
class RequestRule:
    """Request rule: reads the cell columns ``request_top_1``, ``request_top_2`` (largest
    contribution of a contributor with request code 1 resp. 2) and ``requests`` (number of
    requesting contributors), which the table builder adds."""

    percent1: float
    percent2: float
    min_freq: int
    margin: float

    def __post_init__(self) -> None:
        if not (0 <= self.percent1 <= 100 and 0 <= self.percent2 <= 100
                and self.min_freq >= 0 and self.margin >= 0):
            raise RuleError(f"REQ needs percentages in [0, 100], n >= 0, margin >= 0: {self}")

    @property
    def name(self) -> str:
        return f"request({self.percent1:g},{self.percent2:g},{self.min_freq},{self.margin:g})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        value = np.abs(cells["value"].to_numpy(float))
        # the contributions are unweighted: compare them with the unweighted total
        total = np.abs(cells["contrib_total"].to_numpy(float)) \
            if "contrib_total" in cells.columns else value
        sensitive = np.zeros(len(cells), dtype=bool)
        for code, percent in ((1, self.percent1), (2, self.percent2)):
            top = cells[f"request_top_{code}"].to_numpy(float)
            sensitive |= (percent > 0) & (top > percent / 100 * total) & (top > 0)
        requests = cells["requests"].to_numpy(float)
        sensitive |= (requests > 0) & (cells["freq"].to_numpy(float) < self.min_freq)
        return sensitive, np.where(sensitive, self.margin / 100 * value, 0.0)


@dataclass(frozen=True)
class SafetySpec:
    """A parsed ``<SAFETYRULE>`` line.

    Attributes
    ----------
    individual, holding : tuple of rules
        Sensitivity rules for individual contributors and for holdings.
    missing_safe, weighted : bool
        ``MIS(1)``, ``WGT(1)``.
    manual_margin : float
        ``MAN``: protection level (%) of cells made unsafe by hand.
    text : str
        The line as written.
    """

    individual: tuple[SensitivityRule, ...] = ()
    holding: tuple[SensitivityRule, ...] = ()
    missing_safe: bool = False
    weighted: bool = False
    manual_margin: float = 20.0
    text: str = ""

    @property
    def top(self) -> int:
        """How many largest contributions the rules need."""
        needed = [1]
        for rule in (*self.individual, *self.holding):
            if isinstance(rule, DominanceRule):
                needed.append(rule.n)
            elif isinstance(rule, CoalitionPPercentRule):
                needed.append(rule.n + 1)
            elif isinstance(rule, (PPercentRule, PQRule)):
                needed.append(2)
        return max(needed)


def parse_safety_rule(text: str) -> SafetySpec:
    """Parse a ``<SAFETYRULE>`` argument.

    Raises
    ------
    RuleError
        For an unknown rule, a wrong number of parameters, too many rules of one kind,
        or impossible parameters (k outside (0, 100], a negative range, p/q with p >= q ...).

    Examples
    --------
    >>> spec = parse_safety_rule("NK(3,75)|NK(0,0)|FREQ(3,20)|ZERO(10)|MIS(1)")
    >>> [rule.name for rule in spec.individual], spec.missing_safe
    (['(3,75)-dominance', 'freq(n=3)', 'zero(range=10)'], True)
    """
    slots: dict[str, list[tuple[float, ...]]] = {}
    spec: dict = {"text": text.strip()}
    rest = text.strip().rstrip("|")
    for part in filter(None, (p.strip() for p in rest.split("|"))):
        match = _RULE.fullmatch(part)
        if match is None:
            raise RuleError(f"safety rule {part!r}: expected NAME(parameters), e.g. NK(3,75)")
        name = match.group(1).upper()
        try:
            numbers = tuple(float(x) for x in match.group(2).split(",") if x.strip())
        except ValueError:
            raise RuleError(f"safety rule {part!r}: parameters must be numbers") from None
        _check_arity(part, name, numbers)
        if name in ("WGT", "MIS"):
            if numbers[0] not in (0, 1):
                raise RuleError(f"safety rule {part!r}: {name} takes 0 or 1")
            spec["weighted" if name == "WGT" else "missing_safe"] = numbers[0] == 1
        elif name == "MAN":
            if not 0 <= numbers[0] <= 100:
                raise RuleError(f"safety rule {part!r}: the manual margin is a percentage "
                                "in [0, 100]")
            spec["manual_margin"] = numbers[0]
        else:
            slots.setdefault(name, []).append(numbers)
    individual, holding = [], []
    limits = {"P": 2, "NK": 2, "FREQ": 1, "REQ": 1, "ZERO": 1}
    for name, entries in slots.items():
        per_level = limits[name]
        if len(entries) > 2 * per_level or (name == "ZERO" and len(entries) > 1):
            raise RuleError(f"safety rule: too many {name} rules ({len(entries)})")
        for position, numbers in enumerate(entries):
            rule = _rule(name, numbers)
            if rule is not None:
                (individual if position < per_level else holding).append(rule)
    return SafetySpec(tuple(individual), tuple(holding), **spec)


def _check_arity(part: str, name: str, numbers: tuple[float, ...]) -> None:
    arity = {"P": (1, 2, 3), "NK": (2,), "FREQ": (2,), "ZERO": (1,), "REQ": (4,),
             "WGT": (1,), "MIS": (1,), "MAN": (1,)}
    if name not in arity:
        raise RuleError(f"safety rule {part!r}: unknown rule {name}; known: "
                        + ", ".join(arity))
    if len(numbers) not in arity[name]:
        raise RuleError(f"safety rule {part!r}: {name} takes "
                        + " or ".join(map(str, arity[name])) + " parameters")


def _rule(name: str, numbers: tuple[float, ...]) -> SensitivityRule | None:
    """The rule, or None for tau-ARGUS's empty placeholders (a zero first parameter)."""
    if name == "NK":
        n, k = numbers
        if n == 0 and k == 0:
            return None
        if n < 1 or n != int(n) or not 0 < k <= 100:
            raise RuleError(f"NK({n:g},{k:g}): needs a whole n >= 1 and 0 < k <= 100")
        return DominanceRule(int(n), k)
    if name == "P":
        p = numbers[0]
        if p == 0:
            return None
        if len(numbers) == 3:
            p, q, n = numbers
            if not 0 < p < q <= 100 or n != 1:
                raise RuleError(f"P({p:g},{q:g},{n:g}): the p/q rule needs 0 < p < q <= 100 "
                                "and n = 1")
            return PQRule(p, q)
        n = int(numbers[1]) if len(numbers) == 2 else 1
        if not 0 < p <= 100 or n < 1:
            raise RuleError(f"P({p:g},{n}): needs 0 < p <= 100 and n >= 1")
        return PPercentRule(p) if n == 1 else CoalitionPPercentRule(p, n)
    if name == "FREQ":
        n, level = numbers
        if n == 0:
            return None
        if n < 1 or n != int(n) or not 0 <= level <= 100:
            raise RuleError(f"FREQ({n:g},{level:g}): needs a whole n >= 1 and a range in "
                            "[0, 100] %")
        return FrequencyRule(int(n), level)
    if name == "ZERO":
        return ZeroRule(numbers[0])
    percent1, percent2, min_freq, margin = numbers
    if percent1 == 0 and percent2 == 0 and min_freq == 0:
        return None
    return RequestRule(percent1, percent2, int(min_freq), margin)


def format_safety_rule(spec: SafetySpec) -> str:
    """The ``<SAFETYRULE>`` text of ``spec`` (holding rules after padded individual slots).

    Examples
    --------
    >>> format_safety_rule(parse_safety_rule("P(10)|FREQ(3,30)|MIS(1)"))
    'P(10,1)|FREQ(3,30)|MIS(1)|MAN(20)'
    """
    parts = [_rule_text(rule)[1] for rule in spec.individual]
    if spec.holding:
        parts += _padding(spec.individual)
        parts += [_rule_text(rule)[1] for rule in spec.holding]
    if spec.weighted:
        parts.append("WGT(1)")
    if spec.missing_safe:
        parts.append("MIS(1)")
    parts.append(f"MAN({spec.manual_margin:g})")
    return "|".join(parts)


def _padding(individual: Sequence[SensitivityRule]) -> list[str]:
    """Empty slots so that holding rules land in the holding positions."""
    counts = {"P": 0, "NK": 0, "FREQ": 0, "REQ": 0}
    for rule in individual:
        kind = _rule_text(rule)[0]
        if kind in counts:
            counts[kind] += 1
    empty = {"P": "P(0,1)", "NK": "NK(0,0)", "FREQ": "FREQ(0,0)", "REQ": "REQ(0,0,0,0)"}
    slots = {"P": 2, "NK": 2, "FREQ": 1, "REQ": 1}
    return [empty[k] for k in counts for _ in range(slots[k] - counts[k])]


def _rule_text(rule: SensitivityRule) -> tuple[str, str]:
    if isinstance(rule, DominanceRule):
        return "NK", f"NK({rule.n},{rule.k:g})"
    if isinstance(rule, PQRule):
        return "P", f"P({rule.p:g},{rule.q:g},1)"
    if isinstance(rule, PPercentRule):
        return "P", f"P({rule.p:g},1)"
    if isinstance(rule, CoalitionPPercentRule):
        return "P", f"P({rule.p:g},{rule.n})"
    if isinstance(rule, FrequencyRule):
        return "FREQ", f"FREQ({rule.n},{rule.level:g})"
    if isinstance(rule, ZeroRule):
        return "ZERO", f"ZERO({rule.range:g})"
    if isinstance(rule, RequestRule):
        return "REQ", (f"REQ({rule.percent1:g},{rule.percent2:g},{rule.min_freq},"
                       f"{rule.margin:g})")
    raise RuleError(f"rule {rule.name} has no tau-ARGUS form")
