"""Independent checks of an adjusted table: what every CTA result must satisfy.

Given the original table and the adjusted values ``x`` (no solver data is used):

* **additivity**: ``|A x - b| <= tol * max(a_min, |A| |x|)`` for every relation, with
  ``a_min`` the smallest non-zero ``|a|`` of the table
  (:func:`~tabsdc.cta._problem.smallest_magnitude`): every tolerance is relative, in the
  table's own units, so a table in euros and the same table in millions are judged alike;
* **protection**: every sensitive cell (status ``u``) is published outside its protection
  interval, ``x_i <= a_i - lpl_i`` or ``x_i >= a_i + upl_i`` (each side within
  ``tol * max(a_min, |a_i|)``): the published value differs from the true one by at least the
  protection level the rule asked for (Cox, slide 25: "safe values = values outside the
  protection interval");
* **bounds**: ``lb <= x <= ub`` (non-negativity for the usual ``lb = 0``);
* **fixed cells**: cells with status ``z`` and any cells the user fixed are unchanged;
* **preserved statistics**: each row of ``E y = 0`` within ``tol`` (relative to
  ``max(a_min, |E| |y|)``) and each quadratic limit within its cut tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._statuses import CheckStatus
from tabsdc._table import DEFAULT_TOLERANCE
from tabsdc.cta._constraints import CUT_TOLERANCE
from tabsdc.cta._problem import QuadraticLimit, sensitive_mask, smallest_magnitude

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc._table import Table


#: Cell labels listed in messages at most.
_SHOWN = 5


@dataclass(frozen=True)
class Verification(ResultBase):
    """Outcome of :func:`verify_adjustment`; ``passed`` is the conjunction of all checks.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"passed"`` or
    ``"failed"``; ``seconds`` the time the checks took). The ``*_cells`` tuples name (at most
    five of) the cells that fail a check.
    """

    additive: bool
    max_relation_residual: float
    protected: bool
    unprotected_cells: tuple[str, ...]
    n_unprotected: int
    within_bounds: bool
    out_of_bounds_cells: tuple[str, ...]
    nonnegative: bool
    fixed_unchanged: bool
    changed_fixed_cells: tuple[str, ...]
    preserved: dict[str, float] = field(default_factory=dict)
    limits: dict[str, tuple[float, float]] = field(default_factory=dict)
    tolerance: float = DEFAULT_TOLERANCE
    seconds: float = 0.0

    @property
    def preserved_ok(self) -> bool:
        """Every preserved-statistic row holds."""
        return all(r <= self.tolerance for r in self.preserved.values())

    @property
    def limits_ok(self) -> bool:
        """Every quadratic limit holds (within the cut tolerance)."""
        return all(v <= lim * (1 + 10 * CUT_TOLERANCE) + 1e-12
                   for v, lim in self.limits.values())

    @property
    def passed(self) -> bool:
        """All checks hold."""
        return (self.additive and self.protected and self.within_bounds
                and self.fixed_unchanged and self.preserved_ok and self.limits_ok)

    statuses = CheckStatus

    @property
    def status(self) -> CheckStatus:
        """``"passed"`` when every check holds, else ``"failed"``."""
        return CheckStatus.PASSED if self.passed else CheckStatus.FAILED

    def lines(self) -> list[str]:
        """One line per check, for summaries."""
        def mark(ok: bool) -> str:
            return "ok" if ok else "FAILED"

        out = [
            f"additivity: {mark(self.additive)} (largest relative residual "
            f"{self.max_relation_residual:.2e})",
            f"protection: {mark(self.protected)}"
            + (f" ({self.n_unprotected} cells, e.g. {', '.join(self.unprotected_cells)})"
               if not self.protected else ""),
            f"bounds: {mark(self.within_bounds)}"
            + ("" if self.within_bounds else f" ({', '.join(self.out_of_bounds_cells)})"),
            f"fixed cells unchanged: {mark(self.fixed_unchanged)}"
            + ("" if self.fixed_unchanged else f" ({', '.join(self.changed_fixed_cells)})"),
        ]
        if self.preserved:
            out.append(f"preserved statistics: {mark(self.preserved_ok)} (largest relative "
                       f"residual {max(self.preserved.values()):.2e})")
        if self.limits:
            out.append(f"correlation limits: {mark(self.limits_ok)}")
        return out

    def summary(self) -> str:
        """The verdict, then one line per check."""
        verdict = "every check passed" if self.passed else "CHECKS FAILED"
        return "\n".join([f"Verification of the adjustment: {verdict}",
                          *(f"  {line}" for line in self.lines())])

    def to_frame(self) -> pd.DataFrame:
        """One row per check: ``passed`` and the cells that fail it (at most five named)."""
        rows = [("additivity", self.additive, ""),
                ("protection", self.protected, ", ".join(self.unprotected_cells)),
                ("bounds", self.within_bounds, ", ".join(self.out_of_bounds_cells)),
                ("fixed cells unchanged", self.fixed_unchanged,
                 ", ".join(self.changed_fixed_cells))]
        if self.preserved:
            rows.append(("preserved statistics", self.preserved_ok, ""))
        if self.limits:
            rows.append(("correlation limits", self.limits_ok, ""))
        return pd.DataFrame(rows, columns=["check", "passed", "failing cells"]).set_index(
            "check")

    def _dict_fields(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "passed": self.passed, "additive": self.additive,
            "max_relation_residual": self.max_relation_residual,
            "protected": self.protected, "unprotected_cells": list(self.unprotected_cells),
            "n_unprotected": self.n_unprotected, "within_bounds": self.within_bounds,
            "nonnegative": self.nonnegative, "fixed_unchanged": self.fixed_unchanged,
            "preserved": dict(self.preserved),
            "limits": {k: {"sum_of_squares": v, "limit": lim}
                       for k, (v, lim) in self.limits.items()},
        }

    def to_report(self) -> Section:
        """A report section: the verdict and one row per check."""
        from sdcreport import Section

        return (Section("Verification of the adjustment")
                .add_text("Checked from the original table and the published values alone "
                          "(no solver data): additivity, protection of every sensitive cell, "
                          "bounds, fixed cells and the preserved statistics.")
                .add_metrics({"verdict": "passed" if self.passed else "FAILED",
                              "largest relative residual": self.max_relation_residual,
                              "unprotected sensitive cells": self.n_unprotected})
                .add_table(self.to_frame(), "Checks"))


def protection_margin(
    values: np.ndarray, adjusted: np.ndarray, lpl: np.ndarray, upl: np.ndarray
) -> np.ndarray:
    """How far each cell is outside its protection interval (negative: inside).

    ``max(a - lpl - x, x - (a + upl))``: at least 0 exactly when the cell is protected.
    """
    return np.maximum(values - lpl - adjusted, adjusted - (values + upl))


def verify_adjustment(
    table: Table,
    adjusted: np.ndarray,
    *,
    fixed: np.ndarray | None = None,
    rows: sp.sparray | None = None,
    row_names: Sequence[str] = (),
    quadratic: Sequence[QuadraticLimit] = (),
    tol: float = DEFAULT_TOLERANCE,
) -> Verification:
    """Check an adjusted table (see the module docstring).

    Parameters
    ----------
    table : Table
        The original table (values, relations, status, bounds, protection levels).
    adjusted : ndarray, shape (n,)
        Published values.
    fixed : ndarray of bool, optional
        Cells that must be unchanged besides those with status ``z``.
    rows, row_names, quadratic
        Preserved-statistic rows ``E y = 0`` (with names) and quadratic limits.
    tol : float
        Relative tolerance.

    Returns
    -------
    Verification

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"value": [10.0, 4.0, 6.0], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2.0, 0], "upl": [0, 2.0, 0]})
    >>> table = Table(cells, [[-1, 1, 1]], [0])
    >>> verify_adjustment(table, np.array([10.0, 6.0, 4.0])).passed
    True
    >>> verify_adjustment(table, np.array([11.0, 5.0, 6.0])).protected
    False
    """
    start = perf_counter()
    cells = table.cells
    a = table.values
    x = np.asarray(adjusted, dtype=float)
    y = x - a
    unit = smallest_magnitude(a)
    slack = tol * np.maximum(unit, np.abs(a))
    residual = np.abs(table.A @ x - table.b) / np.maximum(unit, abs(table.A) @ np.abs(x))
    max_residual = float(residual.max()) if residual.size else 0.0
    lpl = np.maximum(cells["lpl"].to_numpy(dtype=float), 0.0)
    upl = np.maximum(cells["upl"].to_numpy(dtype=float), 0.0)
    sensitive = sensitive_mask(table)
    unprotected = np.flatnonzero(sensitive & (protection_margin(a, x, lpl, upl) < -slack))
    lb = cells["lb"].to_numpy(dtype=float)
    ub = cells["ub"].to_numpy(dtype=float)
    outside = np.flatnonzero((x < lb - slack) | (x > ub + slack))
    must_keep = cells["status"].to_numpy() == "z"
    if fixed is not None:
        must_keep = must_keep | np.asarray(fixed, dtype=bool)
    changed = np.flatnonzero(must_keep & (np.abs(y) > slack))
    preserved = {}
    if rows is not None and rows.shape[0]:
        matrix = sp.csr_array(rows)
        scaled = np.abs(matrix @ y) / np.maximum(unit, abs(matrix) @ np.abs(y))
        preserved = {name: float(r) for name, r in zip(row_names, scaled, strict=True)}
    limits = {q.name: (float(y[q.cells] @ y[q.cells]), q.limit) for q in quadratic}

    def names(positions: np.ndarray) -> tuple[str, ...]:
        return tuple(table.cell_labels(positions[:_SHOWN]))

    return Verification(
        additive=max_residual <= tol, max_relation_residual=max_residual,
        protected=unprotected.size == 0, unprotected_cells=names(unprotected),
        n_unprotected=int(unprotected.size), within_bounds=outside.size == 0,
        out_of_bounds_cells=names(outside), nonnegative=bool(np.all(x >= -slack)),
        fixed_unchanged=changed.size == 0, changed_fixed_cells=names(changed),
        preserved=preserved, limits=limits, tolerance=tol, seconds=perf_counter() - start,
    )
