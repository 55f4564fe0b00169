"""Sensitivity rules: which cells are primary (status ``u``) and their protection levels.

Notation (Hundepool et al., *Statistical Disclosure Control*, 2012, section 4.2; the
*Handbook on SDC*): a cell has value X and contributions x1 >= x2 >= ... >= 0. Each rule gives
an upper protection level ``upl``; the cell is sensitive when ``upl > 0``:

* minimum frequency: sensitive when 0 < freq < n; ``upl = level % of X`` (at least
  ``minimum``);
* (n, k)-dominance: ``upl = 100/k (x1 + ... + xn) - X``;
* p %: ``upl = p/100 x1 - (X - x1 - x2)``;
* p/q (prior-posterior ambiguity): ``upl = p/q x1 - (X - x1 - x2)``.

Cox (*Towards a quality assessment of disclosure-limited statistical data*, slides 11-12)
writes the last two as sensitivity functions with p and q as fractions:
``S_p(X) = x1 - (1/p) sum_{i>=3} x_i`` and ``S_{p/q}(X) = x1 - (q/p) sum_{i>=3} x_i``; a
cell is sensitive when S > 0, and ``upl = p S_p`` resp. ``upl = (p/q) S_{p/q}``.

The lower protection level equals the upper one unless ``lower_ratio`` says otherwise. A cell
flagged by several rules takes the largest level. Empty cells (no contributor) are never
sensitive; a zero cell with contributors is sensitive only under the frequency rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import RulesStatus
from tabsdc._errors import RuleError
from tabsdc._tableset import accepts_table_set
from tabsdc._units import working_unit

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc._table import Table


@runtime_checkable
class SensitivityRule(Protocol):
    """A rule maps the cells frame to (sensitive mask, upper protection level)."""

    @property
    def name(self) -> str: ...

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class FrequencyRule:
    """Minimum frequency: a cell with 0 < freq < ``n`` contributors is sensitive.

    Parameters
    ----------
    n : int
        Minimum number of contributors of a safe cell (tau-ARGUS default 3).
    level : float
        Protection level as a percentage of the cell value.
    minimum : float
        Smallest protection level (e.g. 1 for count tables, where ``level`` % of a
        count of 1 would be tiny).
    """

    n: int = 3
    level: float = 10.0
    minimum: float = 0.0

    def __post_init__(self) -> None:
        if self.n < 1 or self.level < 0 or self.minimum < 0:
            raise RuleError(f"frequency rule needs n >= 1, level >= 0, minimum >= 0: {self}")

    @property
    def name(self) -> str:
        return f"freq(n={self.n})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        freq = _column(cells, "freq", self.name)
        if np.isnan(freq).any():
            raise RuleError(f"{self.name} needs the contributor count 'freq' of every cell; "
                            f"cell {cells.index[np.isnan(freq)][0]!r} has none")
        sensitive = (freq > 0) & (freq < self.n)
        level = np.maximum(self.level / 100 * np.abs(cells["value"].to_numpy(float)),
                           self.minimum)
        return sensitive, np.where(sensitive, level, 0.0)


@dataclass(frozen=True)
class DominanceRule:
    """(n, k)-dominance: sensitive when the n largest contributions exceed k % of X.

    ``upl = 100/k (x1 + ... + xn) - X`` (Handbook on SDC, section 4.2.2).
    """

    n: int = 1
    k: float = 75.0

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 < self.k <= 100:
            raise RuleError(f"(n,k)-dominance needs n >= 1 and 0 < k <= 100: {self}")

    @property
    def name(self) -> str:
        return f"({self.n},{self.k:g})-dominance"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        top, total = largest_contributions(cells, self.n, self.name)
        upl = 100.0 / self.k * top.sum(axis=1) - total
        return _flag(upl, total)


@dataclass(frozen=True)
class PPercentRule:
    """p % rule: the second largest contributor must not learn x1 within p %.

    ``upl = p/100 x1 - (X - x1 - x2)`` (Handbook on SDC, section 4.2.2); equivalently
    ``upl = p S_p(X)`` with Cox's ``S_p`` (slide 11).
    """

    p: float = 10.0

    def __post_init__(self) -> None:
        if not 0 < self.p <= 100:
            raise RuleError(f"p % rule needs 0 < p <= 100, not {self.p}")

    @property
    def name(self) -> str:
        return f"p%(p={self.p:g})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        top, total = largest_contributions(cells, 2, self.name)
        upl = self.p / 100 * top[:, 0] - (total - top[:, 0] - top[:, 1])
        return _flag(upl, total)


@dataclass(frozen=True)
class PQRule:
    """p/q (prior-posterior ambiguity) rule: intruders know each contribution within q %.

    ``upl = p/q x1 - (X - x1 - x2)`` (Handbook on SDC, section 4.2.3); equivalently
    ``upl = (p/q) S_{p/q}(X)`` with Cox's ``S_{p/q}`` (slide 12). With q = 100 it is the
    p % rule; every p %-sensitive cell is p/q-sensitive.
    """

    p: float = 10.0
    q: float = 50.0

    def __post_init__(self) -> None:
        if not 0 < self.p < self.q <= 100:
            raise RuleError(f"p/q rule needs 0 < p < q <= 100, not p={self.p}, q={self.q}")

    @property
    def name(self) -> str:
        return f"p/q(p={self.p:g},q={self.q:g})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        top, total = largest_contributions(cells, 2, self.name)
        upl = self.p / self.q * top[:, 0] - (total - top[:, 0] - top[:, 1])
        return _flag(upl, total)


def p_percent_sensitivity(contributions: np.ndarray, p: float) -> float:
    """Cox's ``S_p(X) = x1 - (1/p) sum_{i>=3} x_i`` with p a fraction (slide 11)."""
    x = np.sort(np.asarray(contributions, dtype=float))[::-1]
    return float(x[0] - x[2:].sum() / p)


def pq_sensitivity(contributions: np.ndarray, p: float, q: float) -> float:
    """Cox's ``S_{p/q}(X) = x1 - (q/p) sum_{i>=3} x_i`` with p, q fractions (slide 12)."""
    x = np.sort(np.asarray(contributions, dtype=float))[::-1]
    return float(x[0] - q / p * x[2:].sum())


@dataclass(frozen=True)
class RulesResult(ResultBase):
    """Outcome of :func:`apply_rules`.

    Keeps the result contract of :mod:`sdcreport._contract` (``status``, ``seconds``,
    ``summary()``, ``to_frame()``, ``to_dict()``, ``to_report()``, ``original``, ``table``).

    Attributes
    ----------
    original : Table
        The table the rules were applied to.
    table : Table
        A new table: primary cells have status ``u`` and protection levels ``lpl``/``upl``;
        column ``rules`` lists the rules that flagged each cell.
    seconds : float
        Time taken.
    rules : tuple
        The rules applied.
    flags : DataFrame
        Per rule, whether it flagged each cell (columns are rule names).
    levels : DataFrame
        Per rule, the upper protection level it asks for (0 where not flagged).
    conflicts : Index
        Cells flagged but kept at status ``z`` (must be published).
    """

    original: Table
    table: Table
    seconds: float
    rules: tuple[SensitivityRule, ...]
    flags: pd.DataFrame
    levels: pd.DataFrame
    conflicts: pd.Index = field(default_factory=lambda: pd.Index([]))

    #: Rules always run to the end: the status says so (the contract's vocabulary).
    status = RulesStatus.APPLIED
    statuses = RulesStatus

    @property
    def primary(self) -> np.ndarray:
        """Boolean mask of primary cells."""
        return (self.table.cells["status"] == "u").to_numpy()

    def _dict_fields(self) -> dict[str, Any]:
        """Cell and primary counts, and how many cells each rule
        flags (the CLI's JSON)."""
        return {
            "cells": self.table.n_cells,
            "relations": self.table.n_relations, "primary_cells": int(self.primary.sum()),
            "rules": {name: int(self.flags[name].sum()) for name in self.flags.columns},
            "flagged_but_must_publish": [str(c) for c in self.conflicts],
        }

    def summary(self) -> str:
        lines = [f"Sensitivity rules on {self.table.n_cells} cells "
                 f"({self.table.n_relations} relations)"]
        for name in self.flags.columns:
            lines.append(f"  {name:<28} flags {int(self.flags[name].sum()):>7} cells")
        lines.append(f"  {'primary (any rule)':<28}       {int(self.primary.sum()):>7} cells")
        if len(self.conflicts):
            lines.append(f"  flagged but status 'z' (kept): {len(self.conflicts)}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Primary cells: value, freq, largest contributions, rules and protection levels."""
        cells = self.table.cells
        columns = [c for c in ("value", "freq", "x1", "x2", "x3") if c in cells.columns]
        frame = cells.loc[self.primary, [*columns, "rules", "lpl", "upl"]]
        return frame.join(self.levels.loc[self.primary].add_prefix("upl "))

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc._plots import status_map

        section = Section("Sensitive cells")
        section.add_text(
            "A cell is primary (sensitive) when any rule flags it; its upper protection level "
            "is the largest any flagging rule asks for, its lower level equals the upper one "
            "unless configured otherwise. Rules: " + ", ".join(r.name for r in self.rules) + "."
        )
        counts = {name: int(self.flags[name].sum()) for name in self.flags.columns}
        section.add_metrics({"cells": self.table.n_cells, **counts,
                             "primary cells": int(self.primary.sum())})
        section.add_table(self.table.in_hierarchy_order(self.to_frame()),
                          "Primary cells and their protection levels",
                          max_html_rows=500)
        if len(self.table.dims) >= 2:
            section.add_figure(status_map(self.table), "Cell status (red: primary)")
        return section


@accepts_table_set
def apply_rules(
    table: Table,
    rules: SensitivityRule | Sequence[SensitivityRule],
    *,
    lower_ratio: float = 1.0,
    sliding: float = 0.0,
) -> RulesResult:
    """Apply sensitivity rules; a cell is primary if any rule flags it.

    Parameters
    ----------
    table : Table
        Needs ``freq`` for the frequency rule and ``x1, x2, ...`` for the magnitude rules
        (build it with :meth:`Table.from_microdata`, or pass ``top=`` to
        :meth:`Table.from_aggregated`). Magnitude rules use ``contrib_total`` as X when the
        table has it (weighted or absolute-value tables), else ``value``.
    rules : rule or sequence of rules
    lower_ratio : float
        ``lpl = lower_ratio * upl`` (1: symmetric protection, the Handbook default).
    sliding : float
        Sliding protection level as a fraction of ``upl`` (0: none).

    Returns
    -------
    RulesResult

    Raises
    ------
    RuleError
        When a rule's inputs are missing, or a magnitude rule meets a cell with negative
        contributions (named in the message).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> data = pd.DataFrame({"region": ["A", "A", "A", "B", "B", "B"],
    ...                      "turnover": [100.0, 10.0, 5.0, 40.0, 35.0, 30.0]})
    >>> result = apply_rules(Table.from_microdata(data, ["region"], "turnover"), PPercentRule(10))
    >>> cell = result.table.cells.loc["A"]
    >>> cell["status"], float(cell["upl"])
    ('u', 5.0)
    """
    rules = (rules,) if isinstance(rules, SensitivityRule) else tuple(rules)
    if not rules:
        raise RuleError("no rule given")
    if lower_ratio < 0 or sliding < 0:
        raise RuleError("lower_ratio and sliding must be non-negative")
    start = perf_counter()
    cells = table.cells
    flags, levels = {}, {}
    for rule in rules:  # a rule that reads the table's structure has evaluate_table
        sensitive, upl = (rule.evaluate_table(table) if hasattr(rule, "evaluate_table")
                          else rule.evaluate(cells))
        flags[rule.name] = sensitive
        levels[rule.name] = np.where(sensitive, upl, 0.0)
    flags = pd.DataFrame(flags, index=cells.index)
    levels = pd.DataFrame(levels, index=cells.index)
    flagged = flags.any(axis=1).to_numpy()
    forced = (cells["status"] == "z").to_numpy()
    upl = np.where(flagged, levels.max(axis=1).to_numpy(), cells["upl"].to_numpy())
    rule_names = np.full(len(cells), "", dtype=object)
    for name in flags.columns:
        joined = np.where(rule_names == "", name, rule_names + ", " + name)
        rule_names = np.where(flags[name].to_numpy(), joined, rule_names)
    new = cells.copy()
    primary = flagged & ~forced
    new["status"] = np.where(primary, "u", cells["status"])
    new["upl"] = np.where(primary, upl, cells["upl"])
    new["lpl"] = np.where(primary, lower_ratio * upl, cells["lpl"])
    new["spl"] = np.where(primary, sliding * upl, cells["spl"])
    new["rules"] = rule_names
    return RulesResult(
        original=table,
        table=table.with_cells(new),
        seconds=perf_counter() - start,
        rules=rules,
        flags=flags,
        levels=levels,
        conflicts=cells.index[flagged & forced],
    )


# -- helpers ---------------------------------------------------------------------------------
def _column(cells: pd.DataFrame, name: str, rule: str) -> np.ndarray:
    if name not in cells.columns:
        raise RuleError(f"{rule} needs the cell column {name!r}, which the table does not have")
    return cells[name].to_numpy(float)


def largest_contributions(
    cells: pd.DataFrame, n: int, rule: str
) -> tuple[np.ndarray, np.ndarray]:
    """The n largest contributions (cells x n) and the total X the rule named ``rule``
    compares them with; a :class:`RuleError` when the table lacks them or has negative
    contributions."""
    names = [f"x{i}" for i in range(1, n + 1)]
    missing = [c for c in names if c not in cells.columns]
    if missing:
        raise RuleError(
            f"{rule} needs the {n} largest contributions of each cell (columns "
            f"{', '.join(names)}); {missing[0]!r} is missing: build the table from microdata "
            f"with top >= {n}, or pass top= columns to Table.from_aggregated"
        )
    top = cells[names].to_numpy(float)
    total_name = "contrib_total" if "contrib_total" in cells.columns else "value"
    total = cells[total_name].to_numpy(float)
    negative = (top < 0).any(axis=1) | (total < 0)
    if "n_negative" in cells.columns:
        negative |= cells["n_negative"].to_numpy(float) > 0
    if negative.any():
        first = cells.index[negative][0]
        raise RuleError(
            f"{int(negative.sum())} cell(s) have negative contributions, first cell {first!r}; "
            f"{rule} assumes non-negative data: "
            "build the table with negative='absolute' to apply it to absolute values"
        )
    return top, total


def _flag(upl: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sensitive where upl exceeds rounding noise relative to the cell total (and, for cells
    near 0, to the table's working unit: :func:`tabsdc._validation.working_unit`)."""
    sensitive = upl > 1e-9 * np.maximum(working_unit(total), np.abs(total))
    return sensitive, np.where(sensitive, upl, 0.0)
