"""Results of controlled tabular adjustment: checked, measured, and rendered for reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._numbers import format_numbers
from sdcreport._report import jsonable
from sdcreport._statuses import AdjustmentStatus
from tabsdc.cta._constraints import resolve_groups
from tabsdc.cta._problem import QuadraticLimit
from tabsdc.cta._quality import group_statistics, quality_figures
from tabsdc.cta._verify import Verification, verify_adjustment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from sdcreport import Section
    from tabsdc._table import Table

#: What ``objective`` measures for each method.
OBJECTIVES = {
    "milp": "weighted L1 distance sum w|y|",
    "heuristic": "weighted L1 distance sum w|y|",
    "l2": "weighted sum of squares sum w y^2",
    "mdi": "MDI statistic 2 N I(Q:P)",
}


def _fmt(value: float | None, digits: int = 6) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


@dataclass(frozen=True)
class AdjustmentResult(ResultBase):
    """An adjusted table with its certificate, checks and quality figures.

    Keeps the result contract of :mod:`sdcreport._contract` (``passed`` is its
    verification's verdict).

    Attributes
    ----------
    original : Table
        The table given to the method.
    table : Table
        The same table with the published (adjusted) values.
    method : str
        ``"milp"``, ``"heuristic"``, ``"l2"`` or ``"mdi"``.
    status : str
        ``"optimal"`` when proven (the bound meets the objective), else ``"feasible"``.
    objective : float
        The method's objective (:data:`OBJECTIVES`).
    bound : float or None
        Certified lower bound on the best objective of the method's problem.
    gap : float or None
        Certified relative gap ``(objective - bound) / objective``.
    sensitive : ndarray of int
        Positions of the sensitive cells the method moved.
    up : ndarray of bool
        Their directions (True = up).
    verification : Verification
        Additivity, protection, bounds, fixed cells, preserved statistics.
    figures : dict
        Quality figures (:func:`tabsdc.cta._quality.quality_figures`).
    statistics : DataFrame
        Mean, variance and correlation per group before and after.
    message : str
        How the adjustment was found.
    seconds : float
        Wall-clock time.
    details : dict
        Method-specific figures.
    interrupted : bool
        A Ctrl-C stopped the search (:mod:`tabsdc._interrupts`): the best adjustment found
        so far (checked like any other; not optimal unless its bound proves it).
    """

    original: Table
    table: Table
    method: str
    status: str
    objective: float
    bound: float | None
    gap: float | None
    sensitive: np.ndarray
    up: np.ndarray
    verification: Verification
    figures: dict[str, float]
    statistics: pd.DataFrame
    message: str
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False

    statuses = AdjustmentStatus

    @classmethod
    def build(
        cls,
        table: Table,
        adjusted: np.ndarray,
        *,
        method: str,
        status: str,
        objective: float,
        bound: float | None,
        gap: float | None,
        sensitive: np.ndarray,
        up: np.ndarray,
        message: str,
        seconds: float,
        details: dict[str, Any],
        fixed: np.ndarray | None = None,
        rows: sp.sparray | None = None,
        row_names: Sequence[str] = (),
        quadratic: Sequence[QuadraticLimit] = (),
        cost: np.ndarray | None = None,
        groups: Sequence[tuple[str, np.ndarray]] | None = None,
        interrupted: bool = False,
    ) -> AdjustmentResult:
        """Check and measure an adjustment and wrap it (every method ends here)."""
        adjusted = np.asarray(adjusted, dtype=float)
        verification = verify_adjustment(table, adjusted, fixed=fixed, rows=rows,
                                         row_names=row_names, quadratic=quadratic)
        groups = resolve_groups(table) if groups is None else groups
        interior = np.flatnonzero(~table.total_cells)
        figures = quality_figures(table.values, adjusted, cost,
                                  interior if interior.size else np.arange(table.n_cells))
        # adjusted values keep the decimals of the input: their publishable file shows them
        published = table.with_columns(value=adjusted).with_decimals(table.decimals)
        return cls(original=table, table=published, method=method,
                   status=status, objective=float(objective), bound=bound, gap=gap,
                   sensitive=np.asarray(sensitive, dtype=int), up=np.asarray(up, dtype=bool),
                   verification=verification, figures=figures,
                   statistics=group_statistics(table.values, adjusted, groups),
                   message=message, seconds=float(seconds), details=details,
                   interrupted=interrupted)

    @property
    def values(self) -> np.ndarray:
        """The adjusted values (a copy)."""
        return self.table.values

    @property
    def passed(self) -> bool:
        """Every check of the verification passes."""
        return self.verification.passed

    @property
    def adjustment(self) -> np.ndarray:
        """``y = adjusted - original``."""
        return self.table.values - self.original.values

    @property
    def l1_distance(self) -> float:
        """``sum |y|`` over all cells."""
        return self.figures["l1_distance"]

    def _directions(self) -> np.ndarray:
        direction = np.full(self.original.n_cells, "", dtype=object)
        direction[self.sensitive] = np.where(self.up, "up", "down")
        return direction

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: original, adjusted, change, relative change, status, protection
        levels, direction and (for sensitive cells) whether the cell is protected."""
        cells = self.original.cells
        a, x = self.original.values, self.table.values
        y = x - a
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(a != 0, y / np.abs(a), np.where(y == 0, 0.0, np.nan))
        lpl = np.maximum(cells["lpl"].to_numpy(dtype=float), 0.0)
        upl = np.maximum(cells["upl"].to_numpy(dtype=float), 0.0)
        protected = np.full(self.original.n_cells, None, dtype=object)
        slack = self.verification.tolerance * np.maximum(1.0, np.abs(a))
        margin = np.maximum(a - lpl - x, x - (a + upl))
        protected[self.sensitive] = margin[self.sensitive] >= -slack[self.sensitive]
        return pd.DataFrame({
            "original": a, "adjusted": x, "change": y, "relative_change": relative,
            "status": cells["status"].to_numpy(), "lpl": lpl, "upl": upl,
            "direction": self._directions(), "protected": protected,
        }, index=cells.index)

    def _headline(self) -> str:
        line = (f"Controlled tabular adjustment ({self.method}): {self.status}, objective "
                f"{_fmt(self.objective)} ({OBJECTIVES[self.method]})")
        if self.method != "mdi":
            line += f", bound {_fmt(self.bound)}, certified gap " + (
                "n/a" if self.gap is None else f"{100 * self.gap:.3g} %")
        return line

    def summary(self) -> str:
        """A few lines: certificate, distances, checks, kept statistics."""
        f = self.figures
        forced = self.details.get("forced_directions", 0)
        lines = [
            self._headline(),
            *(["  INTERRUPTED (Ctrl-C): the best adjustment found so far"]
              if self.interrupted else []),
            f"  {self.message}; {self.seconds:.2f} s",
            f"  cells {self.original.n_cells}, sensitive {len(self.sensitive)} "
            f"(up {int(self.up.sum())}, down {int((~self.up).sum())}"
            + (f"; {forced} could move one way only" if forced else "") + ")",
            f"  L1 distance {_fmt(f['l1_distance'])}, L2 distance {_fmt(f['l2_distance'])}, "
            f"cells changed {f['cells_changed']}, relative change mean "
            f"{100 * f['mean_relative_change']:.3g} % / max {100 * f['max_relative_change']:.3g} %",
        ]
        if "mdi_statistic" in f:
            lines.append(f"  MDI: I(Q:P) = {_fmt(f['mdi_information'])}, 2NI = "
                         f"{_fmt(f['mdi_statistic'])}")
        if self.method == "mdi":
            d = self.details
            lines.append(f"  chi-square test: df {d['df']}, p-value {_fmt(d['p_value'], 4)} "
                         f"({'significant' if d['significant'] else 'insignificant'} at "
                         f"{d['alpha']:g}); stopped: {d['stop']}")
        lines += [f"  {line}" for line in self.verification.lines()]
        for name, row in self.statistics.head(5).iterrows():
            mean, variance = (format_numbers([before, after]) for before, after in (
                (row.mean_before, row.mean_after), (row.variance_before, row.variance_after)))
            lines.append(f"  {name}: mean {mean[0]} -> {mean[1]}, "
                         f"variance {variance[0]} -> {variance[1]}, "
                         f"correlation {row.correlation:.6f}")
        lines.append("  verdict: " + ("all checks passed" if self.verification.passed
                                      else "CHECKS FAILED"))
        return "\n".join(lines)

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON-ready figures: ``objective``, ``bound``, ``gap``,
        ``l1_distance``, ``additive``, ``protected`` and more (the CLI's ``--json``)."""
        frame = self.original.in_hierarchy_order(self.to_frame().iloc[self.sensitive])
        labels = self.original.cell_labels(self.sensitive)
        v = self.verification
        out = {
            "method": self.method, "objective": self.objective,
            "objective_kind": OBJECTIVES[self.method], "bound": self.bound, "gap": self.gap,
            "l1_distance": self.figures["l1_distance"],
            "l2_distance": self.figures["l2_distance"],
            "additive": v.additive, "protected": v.protected,
            "within_bounds": v.within_bounds, "nonnegative": v.nonnegative,
            "fixed_unchanged": v.fixed_unchanged, "passed": v.passed,
            "interrupted": self.interrupted, "message": self.message,
            "figures": dict(self.figures), "verification": v.to_dict(),
            "statistics": self.statistics.reset_index().to_dict(orient="records"),
            "details": dict(self.details),
            "sensitive_cells": [
                {"cell": label, "original": r.original, "adjusted": r.adjusted,
                 "lpl": r.lpl, "upl": r.upl, "direction": r.direction,
                 "protected": r.protected}
                for label, r in zip(labels, frame.itertuples(), strict=True)
            ],
        }
        return jsonable(out)

    def scatter_figure(self, max_points: int = 20_000) -> Figure:
        """Original against adjusted values, sensitive cells in red, on log axes when the
        values are non-negative (symmetric log when some are zero)."""
        from matplotlib.figure import Figure

        from tabsdc._plots import STATUS_COLOURS

        a, x = self.original.values, self.table.values
        sensitive = np.zeros(len(a), dtype=bool)
        sensitive[self.sensitive] = True
        shown = np.flatnonzero(~sensitive)
        if shown.size > max_points:
            shown = np.sort(np.random.default_rng(0).choice(shown, max_points, replace=False))
        fig = Figure(figsize=(6, 6))
        ax = fig.subplots()
        ax.scatter(a[shown], x[shown], s=6, c="#7f7f7f", alpha=0.6, label="other cells")
        ax.scatter(a[sensitive], x[sensitive], s=14, c=STATUS_COLOURS["u"],
                   label="sensitive cells")
        low, high = float(min(a.min(), x.min())), float(max(a.max(), x.max()))
        ax.plot([low, high], [low, high], color="black", lw=0.8, label="unchanged")
        if low >= 0:
            scale = "log" if low > 0 else "symlog"
            ax.set_xscale(scale)
            ax.set_yscale(scale)
        ax.set_xlabel("original value")
        ax.set_ylabel("adjusted value")
        ax.set_title(f"CTA ({self.method}): original vs adjusted")
        ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        return fig

    def to_report(self) -> Section:
        """A report section: certificate, checks, quality figures, scatter plot, kept
        statistics and the sensitive cells."""
        from sdcreport import Section

        section = Section(f"Controlled tabular adjustment ({self.method})")
        section.add_text(
            "Sensitive cells are published at safe values, outside their protection interval "
            "[a - lpl, a + upl]; other cells are adjusted so that every relation of the table "
            f"still holds. {self.message}. Objective: {OBJECTIVES[self.method]}."
        )
        v = self.verification
        metrics: dict[str, Any] = {
            "status": self.status, "objective": self.objective,
            "bound": self.bound, "certified gap": self.gap,
            "seconds": round(self.seconds, 3), "cells": self.original.n_cells,
            "sensitive cells": len(self.sensitive),
            "additive": v.additive, "protected": v.protected, "within bounds": v.within_bounds,
            "fixed cells unchanged": v.fixed_unchanged,
        }
        if self.interrupted:
            metrics["interrupted"] = "yes (Ctrl-C): the best adjustment found so far"
        if v.preserved:
            metrics["preserved statistics hold"] = v.preserved_ok
        metrics.update({k: (round(val, 6) if isinstance(val, float) else val)
                        for k, val in self.figures.items()})
        if self.method == "mdi":
            d = self.details
            metrics.update({"degrees of freedom": d["df"], "p-value": d["p_value"],
                            "stopped": d["stop"]})
        section.add_metrics({k: val for k, val in metrics.items() if val is not None})
        if self.method == "mdi":
            section.add_text(self.details["properties"])
            section.add_metrics(self._mdi_properties(), "The properties, on this table")
        section.add_figure(self.scatter_figure(), "Original against adjusted values")
        section.add_table(self.statistics.round(6), "Statistics kept (groups of cells)")
        frame = self.original.in_hierarchy_order(self.to_frame().iloc[self.sensitive])
        section.add_table(frame[["original", "adjusted", "lpl", "upl", "direction",
                                 "protected"]], "Sensitive cells", max_html_rows=1000)
        return section

    def _mdi_properties(self) -> dict[str, Any]:
        """Zeros kept and the largest local change of a non-sensitive cell."""
        a, x = self.original.values, self.table.values
        other = np.ones(len(a), dtype=bool)
        other[self.sensitive] = False
        zeros = (a == 0) & other
        moved = other & (a != 0)
        relative = np.abs(x[moved] - a[moved]) / np.abs(a[moved])
        return {"zero cells": int(zeros.sum()),
                "zero cells still zero": int((zeros & (x == 0)).sum()),
                "largest relative change of a non-sensitive cell":
                    round(float(relative.max()), 6) if relative.size else 0.0}


@dataclass(frozen=True)
class MultivariateAdjustmentResult(ResultBase):
    """Several tables of the same structure adjusted together (multivariate CTA).

    Keeps the result contract of :mod:`sdcreport._contract`: ``original`` and ``table`` are
    the input and the adjusted tables (one each per table, in order), ``passed`` the verdict
    of every table's verification.

    Attributes
    ----------
    results : tuple of AdjustmentResult
        One per table (each with its own checks; ``objective`` is that table's part).
    status, objective, bound, gap, message, seconds, details
        Of the joint problem.
    covariance : DataFrame
        Per pair of tables and group: covariance of the originals, of the adjusted tables,
        and the left-over second-order term ``Cov(y, z)``.
    """

    results: tuple[AdjustmentResult, ...]
    method: str
    status: str
    objective: float
    bound: float | None
    gap: float | None
    message: str
    seconds: float
    covariance: pd.DataFrame
    details: dict[str, Any] = field(default_factory=dict)

    statuses = AdjustmentStatus

    @property
    def original(self) -> tuple[Table, ...]:
        """The input tables, in order."""
        return tuple(r.original for r in self.results)

    @property
    def table(self) -> tuple[Table, ...]:
        """The adjusted tables, in order."""
        return tuple(r.table for r in self.results)

    @property
    def passed(self) -> bool:
        """Every table passes its checks."""
        return all(r.verification.passed for r in self.results)

    def summary(self) -> str:
        lines = [f"Multivariate CTA ({self.method}) of {len(self.results)} tables: "
                 f"{self.status}, objective {_fmt(self.objective)}, bound {_fmt(self.bound)}, "
                 "certified gap " + ("n/a" if self.gap is None else f"{100 * self.gap:.3g} %"),
                 f"  {self.message}; {self.seconds:.2f} s"]
        for row in self.covariance.itertuples():
            lines.append(f"  covariance {row.tables} ({row.group}): {row.before:.6g} -> "
                         f"{row.after:.6g} (Cov(y, z) = {row.second_order:.3g})")
        for k, result in enumerate(self.results):
            v = result.verification
            lines.append(f"  table {k}: L1 {result.l1_distance:.6g}, additive {v.additive}, "
                         f"protected {v.protected}, checks {'passed' if v.passed else 'FAILED'}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """The per-cell frames of all tables, with the table number as first index level."""
        return pd.concat({k: r.to_frame() for k, r in enumerate(self.results)},
                         names=["table"])

    def _dict_fields(self) -> dict[str, Any]:
        return jsonable({
            "method": self.method, "objective": self.objective,
            "bound": self.bound, "gap": self.gap, "passed": self.passed,
            "message": self.message,
            "covariance": self.covariance.to_dict(orient="records"),
            "tables": [r.to_dict() for r in self.results], "details": dict(self.details),
        })

    def to_report(self) -> Section:
        from sdcreport import Section

        section = Section(f"Multivariate controlled tabular adjustment ({self.method})")
        section.add_text("The tables are adjusted together; each is protected and additive, "
                         "and the linearised covariance rows keep the covariance of every "
                         "pair up to the second-order term Cov(y, z).")
        section.add_metrics({"status": self.status, "objective": self.objective,
                             "bound": self.bound, "certified gap": self.gap,
                             "all checks passed": self.passed,
                             "seconds": round(self.seconds, 3)})
        section.add_table(self.covariance, "Covariances before and after")
        for k, result in enumerate(self.results):
            section.add_figure(result.scatter_figure(), f"Table {k}: original vs adjusted")
        return section
