"""The result of rounding a table: rounded table, deviations, statistics and audit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import RoundingStatus
from tabsdc._table import Table
from tabsdc.rounding._audit import RoundingAudit
from tabsdc.rounding._rules import RULES
from tabsdc.rounding._statistics import (
    SMALL_COUNT,
    TableStatistics,
    posterior_table,
    rule_statistics,
)
from tabsdc.solver import SolveResult

if TYPE_CHECKING:
    from sdcreport import Section


@dataclass(frozen=True, eq=False)
class RoundingResult(ResultBase):
    """Outcome of :func:`tabsdc.rounding.round_table`.

    Attributes
    ----------
    original : Table
        The input table (unchanged).
    table : Table
        The rounded table: ``value`` replaced by the rounded values, every other column
        and the relations kept.
    base : int
    method : str
        ``conventional``, ``modified``, ``fifty-fifty``, ``unbiased``, ``controlled`` or
        ``unbiased-controlled``.
    status : str
        ``"rounded"`` for the cell-by-cell rules; for controlled rounding the status of
        :class:`~tabsdc.rounding._controlled.ControlledOutcome` (``"optimal"``,
        ``"feasible"`` (not proven optimal: see ``gap``), ``"random"``, ``"relaxed"``,
        ``"relaxed-feasible"``).
    exists : bool or None
        Controlled methods: whether a zero-restricted adjacent controlled rounding exists
        (False: ``table`` is the closest additive alternative). None for the rules.
    engine : str
        How the rounding was computed (``"rule"``, ``"network (highs)"``, ``"milp"``, ...).
    deviations : ndarray
        ``R(x) - x`` per cell.
    additive : bool
        Whether every relation holds for the rounded values.
    max_residual : float
        Largest ``|A R - b|``.
    steps : ndarray of int
        Extra multiples of the base beyond adjacency per cell (non-zero only when relaxed).
    solve : SolveResult or None
        The solver's report (objective, bound, gap, time) of controlled rounding.
    statistics : TableStatistics
        Observed quality figures beside their expectations.
    audit : RoundingAudit or None
        Ranges an intruder can infer (None when the audit was not asked for).
    seed : object
        The seed given (None: fresh entropy or a deterministic method).
    note : str
        How the method was applied.
    seconds : float
        Time taken, the audit of the release included.
    steps_bound : int or None
        Closest additive alternative: the proven lower bound on the fewest extra steps
        (``steps.sum()`` when they are proven fewest); None otherwise.
    interrupted : bool
        A Ctrl-C stopped controlled rounding (:mod:`tabsdc._interrupts`): the best rounding
        found so far (status ``"feasible"`` unless proven optimal).
    """

    original: Table
    table: Table
    base: int
    method: str
    status: str
    exists: bool | None
    engine: str
    deviations: np.ndarray
    additive: bool
    max_residual: float
    steps: np.ndarray
    solve: SolveResult | None
    statistics: TableStatistics
    audit: RoundingAudit | None
    seed: object = None
    note: str = ""
    steps_bound: int | None = None
    seconds: float = 0.0
    interrupted: bool = False

    statuses = RoundingStatus

    # -- key figures ---------------------------------------------------------------------------
    @property
    def rounded(self) -> np.ndarray:
        """The rounded values (a copy)."""
        return self.table.values

    @property
    def total_abs_deviation(self) -> float:
        return float(np.abs(self.deviations).sum())

    @property
    def max_abs_deviation(self) -> float:
        return float(np.abs(self.deviations).max(initial=0.0))

    @property
    def n_changed(self) -> int:
        """Cells whose value changed."""
        return int(np.count_nonzero(self.deviations))

    @property
    def adjacent(self) -> bool:
        """Every cell within one base of its original and multiples unchanged."""
        return bool(np.all(self.steps == 0))

    def _metrics(self) -> dict:
        metrics = {
            "method": self.method, "base": self.base, "status": self.status,
            "engine": self.engine, "cells": self.original.n_cells,
            "cells changed": self.n_changed,
            "total |deviation|": self.total_abs_deviation,
            "max |deviation|": self.max_abs_deviation, "additive": self.additive,
        }
        if self.method != SMALL_COUNT:  # small-count rounding leaves large cells alone
            metrics["adjacent and zero-restricted"] = self.adjacent
        if self.interrupted:
            metrics["interrupted"] = "yes (Ctrl-C): the best rounding found so far"
        if self.exists is not None:
            metrics["controlled rounding exists"] = self.exists
        if not self.adjacent:
            metrics["cells beyond adjacency"] = int(np.count_nonzero(self.steps))
            metrics["extra steps"] = int(self.steps.sum())
            metrics["extra steps, proven lower bound"] = self.steps_bound
        if self.solve is not None:
            metrics.update({"objective": self.solve.objective, "bound": self.solve.bound,
                            "gap": self.solve.gap, "solve time [s]": round(self.solve.seconds, 3)})
        return metrics

    # -- renderings ----------------------------------------------------------------------------
    def summary(self) -> str:
        lines = [f"Rounding to base {self.base} ({self.method}): {self.status}, "
                 f"{self.engine}"]
        if self.interrupted:
            lines.append("  INTERRUPTED (Ctrl-C): the best rounding found so far")
        for name, value in self._metrics().items():
            if name not in ("method", "base", "status", "engine") and value is not None:
                lines.append(f"  {name:<30} {value}")
        if self.note:
            lines.append(f"  {self.note}")
        lines.append(f"  U = {self.statistics.u:.4g} (E[U|x] = {self.statistics.expected_u:.4g},"
                     f" critical {self.statistics.critical:.4g} at df {self.statistics.df})")
        if self.audit is not None:
            lines.append("  " + self.audit.summary())
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: original, rounded, deviation, extra steps and audit range."""
        frame = pd.DataFrame({"value": self.original.values, "rounded": self.rounded,
                              "deviation": self.deviations, "steps": self.steps},
                             index=self.original.cells.index)
        if self.audit is not None:
            frame = frame.join(self.audit.frame[["lower", "upper", "exact", "narrow"]])
        return frame

    def _dict_fields(self) -> dict:
        """JSON-ready: ``base, method, total_abs_deviation, max_abs_deviation,
        additive`` and more (statistics, audit, solver figures, non-adjacent cells)."""
        result = {
            "base": self.base, "method": self.method,
            "total_abs_deviation": self.total_abs_deviation,
            "max_abs_deviation": self.max_abs_deviation, "additive": self.additive,
            "max_residual": self.max_residual, "exists": self.exists, "engine": self.engine,
            "cells": self.original.n_cells, "cells_changed": self.n_changed,
            "adjacent": self.adjacent, "interrupted": self.interrupted,
            "seed": self.seed if isinstance(self.seed, int) else None,
            "note": self.note, "statistics": self.statistics.to_dict(),
        }
        if self.solve is not None:
            result["solve"] = {"solver": self.solve.solver, "status": self.solve.status,
                               "objective": self.solve.objective, "bound": self.solve.bound,
                               "gap": self.solve.gap, "seconds": self.solve.seconds}
        if not self.adjacent:
            moved = np.flatnonzero(self.steps)
            result["steps_bound"] = self.steps_bound
            result["non_adjacent_cells"] = [
                {"cell": label, "value": float(self.original.values[k]),
                 "rounded": float(self.rounded[k]), "deviation": float(self.deviations[k]),
                 "steps": int(self.steps[k])}
                for label, k in zip(self.original.cell_labels(moved), moved, strict=True)]
        if self.audit is not None:
            result["audit"] = self.audit.to_dict()
        return result

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.rounding._plots import deviation_figure, posterior_figure

        section = Section(f"Rounding to base {self.base} ({self.method})")
        section.add_text(
            ("The inner cells are rounded so that no small count is published; every cell "
             "is the sum of its rounded inner cells. " if self.method == SMALL_COUNT else
             "Every cell, totals included, is replaced by a multiple of the base. ")
            + ("The rounding keeps every relation of the table. " if self.additive else
               "Cells are rounded one by one, so totals need not add up. ")
            + (self.note + "." if self.note else ""))
        section.add_metrics({k: v for k, v in self._metrics().items() if v is not None})
        if not self.adjacent:
            moved = self.original.in_hierarchy_order(self.to_frame().loc[self.steps > 0])
            section.add_table(moved, "Cells outside their adjacent multiples (no controlled "
                              "rounding exists)")
        section.blocks.extend(self.statistics.to_report().blocks)
        section.add_table(rule_statistics(self.base).set_index("rule").drop(columns="base"),
                          f"Expected effects of the four rules at base {self.base} (residue "
                          "uniform on 0..B-1)")
        posterior = posterior_table(self.base, RULES)
        section.add_table(
            posterior.pivot_table(index=["rounded", "offset"], columns="rule",
                                  values="probability")[list(RULES)]
            .rename_axis(columns=None).reset_index(),
            "Posterior probability of the original x = R(x) + offset given R(x)")
        section.add_figure(posterior_figure(self.base), "Posterior probabilities P[x | R(x)]")
        section.add_figure(deviation_figure(self.deviations, self.base),
                           "Histogram of the deviations R(x) - x")
        if self.audit is not None:
            section.blocks.extend(self.audit.to_report().blocks)
        return section
