"""Figure of an audit: each sensitive cell's interval against its required protection."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tabsdc.audit.verify import AuditResult

__all__ = ["interval_figure"]


def interval_figure(result: AuditResult, max_cells: int = 60) -> Figure:
    """Horizontal bars: the derivable interval minus the cell value (grey/green when
    protected, orange when not) and the required interval [-lpl, +upl] (red), for the
    sensitive cells with the smallest protection margin first."""
    from matplotlib.figure import Figure

    f = result.frame
    f = f[f["status"] == "u"] if (f["status"] == "u").any() else f
    margin = np.minimum((f["value"] - f["lower"]) - f["lpl"], (f["upper"] - f["value"]) - f["upl"])
    f = f.assign(margin=margin).sort_values("margin").head(max_cells)
    labels = result.table.cell_labels(result.table.cells.index.get_indexer(f.index))
    y = np.arange(len(f))
    span = np.maximum(f["upl"].to_numpy(), f["lpl"].to_numpy()).max() if len(f) else 1.0
    cap = 4 * max(span, 1e-9)
    low = np.maximum(f["lower"].to_numpy() - f["value"].to_numpy(), -cap)
    high = np.minimum(f["upper"].to_numpy() - f["value"].to_numpy(), cap)
    fig = Figure(figsize=(8, 1.2 + 0.25 * len(f)))
    ax = fig.subplots()
    colours = np.where(f["protected"].to_numpy(), "#2ca02c", "#ff7f0e")
    ax.barh(y, high - low, left=low, height=0.6, color=colours, alpha=0.6,
            label="derivable interval - value")
    ax.errorbar(np.zeros(len(f)), y, xerr=[f["lpl"].to_numpy(), f["upl"].to_numpy()], fmt="|",
                color="#d62728", capsize=3, label="required protection")
    ax.axvline(0, color="black", linewidth=0.5)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"offset from the cell value (clipped at +-{cap:.3g})")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
