"""Figure of an audit: each sensitive cell's interval against its required protection."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from tabsdc._table import Table


def offsets_in_levels(value: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                      lpl: np.ndarray, upl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far each derivable interval reaches below and above the cell value, in units of
    the cell's protection level on that side: ``(lower - a) / lpl`` and ``(upper - a) /
    upl``. A cell is protected when the first is at most -1 and the second at least 1. A
    side without a level is measured in the other side's level (in the value's magnitude
    when neither has one); an unbounded side is infinite.

    Examples
    --------
    >>> low, high = offsets_in_levels(np.array([100.0]), np.array([50.0]),
    ...                               np.array([np.inf]), np.array([10.0]), np.array([10.0]))
    >>> low.tolist(), high.tolist()
    ([-5.0], [inf])
    """
    fallback = np.maximum(np.abs(value), 1.0)
    unit_low = np.where(lpl > 0, lpl, np.where(upl > 0, upl, fallback))
    unit_up = np.where(upl > 0, upl, np.where(lpl > 0, lpl, fallback))
    return (lower - value) / unit_low, (upper - value) / unit_up


def interval_figure(frame: pd.DataFrame, table: Table, max_cells: int = 60) -> Figure:
    """Horizontal bars, one per sensitive cell (those with the smallest protection margin
    first): the derivable interval around the cell value in units of the cell's protection
    level (:func:`offsets_in_levels`; green when protected, orange when not) against the
    required interval [-1, 1] (red), on a symmetric log scale, so that narrow and wide
    intervals show together and none is cut; an unbounded side ends in an arrow.

    ``frame`` is an audit's cells (:attr:`tabsdc.audit.AuditResult.frame`: ``value``,
    ``lower``, ``upper``, ``lpl``, ``upl``, ``status``, ``protected``), ``table`` its table.
    """
    from matplotlib.figure import Figure

    f = frame
    f = f[f["status"] == "u"] if (f["status"] == "u").any() else f
    margin = np.minimum((f["value"] - f["lower"]) - f["lpl"], (f["upper"] - f["value"]) - f["upl"])
    f = f.assign(margin=margin).sort_values("margin").head(max_cells)
    labels = table.cell_labels(table.cells.index.get_indexer(f.index))
    low, high = offsets_in_levels(*(f[c].to_numpy(dtype=float)
                                    for c in ("value", "lower", "upper", "lpl", "upl")))
    finite = np.abs(np.concatenate([low, high]))
    reach = 10 * max(float(finite[np.isfinite(finite)].max(initial=1.0)), 1.0)
    unbounded_low, unbounded_high = ~np.isfinite(low), ~np.isfinite(high)
    low, high = np.where(unbounded_low, -reach, low), np.where(unbounded_high, reach, high)
    y = np.arange(len(f))
    fig = Figure(figsize=(8, 1.2 + 0.25 * len(f)))
    ax = fig.subplots()
    colours = np.where(f["protected"].to_numpy(), "#2ca02c", "#ff7f0e")
    ax.barh(y, high - low, left=low, height=0.6, color=colours, alpha=0.6,
            label="derivable interval")
    ax.plot(high[unbounded_high], y[unbounded_high], ">", color="#555555")
    ax.plot(low[unbounded_low], y[unbounded_low], "<", color="#555555")
    ax.errorbar(np.zeros(len(f)), y, xerr=np.ones((2, len(f))), fmt="|", color="#d62728",
                capsize=3, label="required protection")
    ax.axvline(0, color="black", linewidth=0.5)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("offset from the cell value, in protection levels (symmetric log scale)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
