"""The result of a suppression: the protected table, its cost, solver statistics and audit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._numbers import format_number
from sdcreport._statuses import SuppressionStatus
from tabsdc._cellstatus import HIDDEN_STATUSES

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc._table import Table
    from tabsdc.audit import AuditResult
    from tabsdc.suppression._optimal import CutLoopStats


@dataclass(frozen=True)
class SuppressionResult(ResultBase):
    """Outcome of :func:`tabsdc.suppression.suppress`.

    Attributes
    ----------
    table : Table
        The protected table: secondaries have status ``m`` (with status ``"no pattern"``
        every cell is withheld, status ``m`` where it was not hidden already, so that
        nothing is published by mistake).
    method : str
        The method that ran (``method="auto"`` names the one it chose).
    cost : ndarray
        Cost of each cell under the chosen criterion.
    secondary : Series of bool
        New complementary suppressions.
    stats : CutLoopStats
        Status (``"optimal"`` only when proven; ``"feasible"``; ``"no pattern"`` when the
        time limit came first), objective, bound, gap, rounds, cuts, ``time_limited``.
    audit : AuditResult or None
        The interval attack on the result (None when there is no pattern).
    seconds : float
    reason : str
        Why ``method="auto"`` chose the method ("" when the method was given).
    original : Table
        The table given to :func:`~tabsdc.suppression.suppress`.
    witnesses : sparse matrix (cells x k) or None
        The hypercube method's structures, one deviation per column: the audit checks them
        on the table and uses them as proofs (:func:`tabsdc.audit.audit`'s ``witnesses``).
    interrupted : bool
        A Ctrl-C stopped the search (:mod:`tabsdc._interrupts`): the pattern is the best
        found so far (``stats.time_limited`` is set too; not optimal unless proven).
    """

    table: Table
    method: str
    cost: np.ndarray
    secondary: pd.Series
    stats: CutLoopStats
    audit: AuditResult | None
    seconds: float
    reason: str = ""
    original: Table | None = None
    witnesses: sp.sparray | None = None
    interrupted: bool = False

    statuses = SuppressionStatus

    @property
    def status(self) -> SuppressionStatus:
        """``"optimal"``, ``"feasible"`` or ``"no pattern"`` (see ``stats``)."""
        return SuppressionStatus(self.stats.status)

    @property
    def protected(self) -> bool:
        """True when there is a pattern and the audit finds every primary protected."""
        return self.audit is not None and self.audit.protected

    @property
    def passed(self) -> bool:
        """The verdict of the audit of the pattern (the contract's name for
        :attr:`protected`)."""
        return self.protected

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
        if self.reason:
            lines.append(f"  method chosen by auto: {self.reason}")
        if self.interrupted:
            lines.append("  INTERRUPTED (Ctrl-C): the best protecting pattern found so far")
        elif s.time_limited:
            lines.append("  stopped by the time limit: " + (
                "no protecting pattern was complete yet: every cell is withheld"
                if s.status == "no pattern" else "the best protecting pattern found so far"))
        if s.status == "no pattern":
            return "\n".join(lines)
        lines += [f"  {k}: {format_number(v)}" for k, v in totals.items()]
        lines.append("  " + self.quality())
        if self.method == "optimal":
            lines.append(f"  rounds {s.rounds}, cuts {s.cuts} (+{s.seed_rows} starting rows), "
                         f"attacker LPs {s.attacker_solves}")
        if self.audit.insider is not None:
            lines.append("  " + self.audit.insider.headline())
        lines.append("  audit: " + ("every primary cell protected" if self.protected
                                    else f"NOT protected: {self.audit.why_not_protected()}"))
        return "\n".join(lines)

    def ratio(self) -> float:
        """The pattern's cost over the certified lower bound (``inf`` when the bound is 0
        and the cost is not, ``nan`` without a pattern or a bound)."""
        objective, bound = self.stats.objective, self.stats.bound
        if not (np.isfinite(objective) and np.isfinite(bound)):
            return np.nan
        if bound <= 0:
            return 1.0 if objective <= 0 else np.inf
        return objective / bound

    def quality(self) -> str:
        """How far the pattern may be from the optimum, in one sentence: its cost against
        the certified lower bound on the cost of every protecting pattern
        (:mod:`tabsdc.suppression._bound`)."""
        s = self.stats
        if not np.isfinite(s.bound):
            return "certified lower bound: none (no relaxation was solved)"
        how = f", from {s.bound_how}" if s.bound_how else ""
        if s.status == "optimal":
            return (f"proven optimal: cost {format_number(s.objective)} = the certified "
                    f"lower bound{how}")
        ratio = self.ratio()
        within = f"{ratio:.3g}x" if np.isfinite(ratio) else "an unknown multiple"
        return (f"within {within} of the certified lower bound {format_number(s.bound)}{how} "
                f"(gap {100 * s.gap:.3g} %; not proven optimal)")

    def to_frame(self) -> pd.DataFrame:
        """Suppressed cells with value, status, cost and their audit intervals (empty when
        there is no pattern)."""
        if self.audit is None:
            return pd.DataFrame(columns=["value", "status", "cost", "lower", "upper", "lpl",
                                         "upl", "protected"])
        frame = self.audit.frame[["value", "status", "lower", "upper", "lpl", "upl",
                                  "protected"]].copy()
        position = self.table.cells.index.get_indexer(frame.index)
        frame.insert(2, "cost", self.cost[position])
        return frame

    def _dict_fields(self) -> dict[str, Any]:
        """The CLI's JSON: objective, bound, gap, suppressed and secondary cells
        (positions, as cell indices of a JJ file)."""
        s = self.stats
        def number(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "method": self.method,
            "method_reason": self.reason,
            "time_limited": s.time_limited,
            "interrupted": self.interrupted,
            "objective": number(s.objective),
            "bound": number(s.bound),
            "bound_how": s.bound_how,
            "gap": number(s.gap),
            "ratio_to_bound": number(self.ratio()),
            "rounds": s.rounds,
            "cuts": s.cuts,
            "suppressed": np.flatnonzero(self.suppressed).tolist(),
            "secondary": np.flatnonzero(self.secondary.to_numpy()).tolist(),
            "audit_protected": self.protected,
            **self._insider_figures(),
            **{k.split(" (")[0].replace(" ", "_"): v for k, v in self.totals().items()},
        }

    def _insider_figures(self) -> dict[str, Any]:
        """The insider attack of the audit in numbers (none when it did not run)."""
        insider = None if self.audit is None else self.audit.insider
        if insider is None:
            return {}
        return {"insider_respondents": insider.respondents,
                "insider_pairs_failing": len(insider.pairs),
                "insider_attack_complete": insider.complete}

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc._plots import status_map

        s = self.stats
        section = Section(f"Complementary suppression ({self.method})")
        section.add_text(
            "Secondary cells are chosen at least cost so that every primary cell keeps its "
            "protection interval against the interval attack. "
            + {"optimal": "The pattern is proven optimal.",
               "no pattern": "The time limit came before any protecting pattern was "
                             "complete: every cell is withheld."}.get(
                s.status, "The pattern is not proven optimal: its cost is shown against a "
                          "certified lower bound on the cost of every protecting pattern.")
        )
        metrics: dict[str, Any] = {"status": s.status, "time limited": s.time_limited,
                                   **self.totals()}
        if self.interrupted:
            metrics["interrupted"] = ("yes (Ctrl-C): the best protecting pattern found "
                                      "so far")
        if self.reason:
            metrics["method chosen by auto"] = self.reason
        metrics.update({"certified lower bound": s.bound, "how the bound was found":
                        s.bound_how, "cost / bound": self.ratio(), "gap %": 100 * s.gap})
        if self.method == "optimal":
            metrics.update({"rounds": s.rounds, "cuts": s.cuts})
        figures = self._insider_figures()
        if figures:
            metrics["single-contributor respondents"] = figures["insider_respondents"]
            metrics["pairs the insider attack breaks"] = figures["insider_pairs_failing"]
        metrics.update({"seconds": round(self.seconds, 3),
                        "audit": "clean" if self.protected else (
                            "none (no pattern)" if self.audit is None else "FAILED")})
        section.add_metrics(metrics)
        if len(self.table.dims) >= 2:
            section.add_figure(status_map(self.table),
                               "Cell status after suppression (red primary, orange secondary)")
        section.add_table(self.table.in_hierarchy_order(self.to_frame()), "Suppressed cells",
                          max_html_rows=1000)
        return section
