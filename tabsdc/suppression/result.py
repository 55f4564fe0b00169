"""The result of a suppression: the protected table, its cost, solver statistics and audit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tabsdc.audit.verify import HIDDEN_STATUSES

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc.audit import AuditResult
    from tabsdc.suppression.optimal import CutLoopStats
    from tabsdc.table import Table

__all__ = ["SuppressionResult"]


@dataclass(frozen=True)
class SuppressionResult:
    """Outcome of :func:`tabsdc.suppression.suppress`.

    Attributes
    ----------
    table : Table
        The protected table: secondaries have status ``m``.
    method : str
    cost : ndarray
        Cost of each cell under the chosen criterion.
    secondary : Series of bool
        New complementary suppressions.
    stats : CutLoopStats
        Status (``"optimal"`` only when proven), objective, bound, gap, rounds, cuts.
    audit : AuditResult
        The interval attack on the result.
    seconds : float
    """

    table: Table
    method: str
    cost: np.ndarray
    secondary: pd.Series
    stats: CutLoopStats
    audit: AuditResult
    seconds: float

    @property
    def suppressed(self) -> np.ndarray:
        """Mask of every hidden cell (primary and secondary)."""
        return self.table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()

    def totals(self) -> dict[str, float]:
        """Count and value of secondary and of all suppressed cells, and the objective."""
        values = np.abs(self.table.values)
        secondary = self.secondary.to_numpy()
        return {
            "secondary cells": int(secondary.sum()),
            "secondary value": float(values[secondary].sum()),
            "suppressed cells": int(self.suppressed.sum()),
            "suppressed value": float(values[self.suppressed].sum()),
            "objective (cost of secondaries)": float(self.cost[secondary].sum()),
        }

    def summary(self) -> str:
        s = self.stats
        totals = self.totals()
        lines = [f"Suppression ({self.method}): status {s.status}, {self.seconds:.2f} s"]
        lines += [f"  {k}: {v:.6g}" for k, v in totals.items()]
        if self.method == "optimal":
            lines.append(f"  bound {s.bound:.6g}, gap {100 * s.gap:.4g} %, rounds {s.rounds}, "
                         f"cuts {s.cuts} (+{s.seed_rows} seed rows), "
                         f"attacker LPs {s.attacker_solves}")
        lines.append("  audit: " + ("every primary cell protected" if self.audit.protected
                                    else f"{len(self.audit.failures)} primary cells NOT "
                                    "protected"))
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Suppressed cells with value, status, cost and their audit intervals."""
        frame = self.audit.frame[["value", "status", "lower", "upper", "lpl", "upl",
                                  "protected"]].copy()
        position = self.table.cells.index.get_indexer(frame.index)
        frame.insert(2, "cost", self.cost[position])
        return frame

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON: status, objective, bound, gap, suppressed and secondary cells
        (positions, as cell indices of a JJ file)."""
        s = self.stats
        def number(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "status": s.status,
            "method": self.method,
            "objective": number(s.objective),
            "bound": number(s.bound),
            "gap": number(s.gap),
            "rounds": s.rounds,
            "cuts": s.cuts,
            "seconds": self.seconds,
            "suppressed": np.flatnonzero(self.suppressed).tolist(),
            "secondary": np.flatnonzero(self.secondary.to_numpy()).tolist(),
            "audit_protected": self.audit.protected,
            **{k.split(" (")[0].replace(" ", "_"): v for k, v in self.totals().items()},
        }

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.plots import status_map

        s = self.stats
        section = Section(f"Complementary suppression ({self.method})")
        section.add_text(
            "Secondary cells are chosen at least cost so that every primary cell keeps its "
            "protection interval against the interval attack. "
            + ("The pattern is proven optimal." if s.status == "optimal" else
               "The pattern is not proven optimal; the gap to the best bound is shown.")
        )
        metrics: dict[str, Any] = {"status": s.status, **self.totals()}
        if self.method == "optimal":
            metrics.update({"bound": s.bound, "gap %": 100 * s.gap, "rounds": s.rounds,
                            "cuts": s.cuts})
        metrics.update({"seconds": round(self.seconds, 3),
                        "audit": "clean" if self.audit.protected else "FAILED"})
        section.add_metrics(metrics)
        if len(self.table.dims) >= 2:
            section.add_figure(status_map(self.table),
                               "Cell status after suppression (red primary, orange secondary)")
        section.add_table(self.to_frame(), "Suppressed cells", max_html_rows=1000)
        return section
