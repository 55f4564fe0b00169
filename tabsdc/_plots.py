"""Figures of tables: a 2-D map of cell status and protection, for reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tabsdc._table import Table

#: Colours of cell statuses in every figure: safe, primary, secondary, published-as-is.
STATUS_COLOURS = {"s": "#e8eef4", "u": "#d62728", "m": "#ff7f0e", "z": "#9e9e9e",
                  "x": "#ff7f0e", "w": "#ffffff"}


def status_map(
    table: Table,
    rows: str | None = None,
    columns: str | None = None,
    fixed: Mapping[str, str] | None = None,
    max_codes: int = 60,
) -> Figure:
    """Colour each cell of a 2-D slice of ``table`` by its status.

    Rows and columns are two dimensions (the first two by default), other dimensions are
    fixed at their totals (or at ``fixed``). At most ``max_codes`` codes per axis are drawn,
    totals first.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    status = table.pivot(rows, columns, values="status", fixed=fixed)
    status = status.iloc[:max_codes, :max_codes]
    letters = list(STATUS_COLOURS)
    grid = np.vectorize(letters.index)(status.fillna("s").to_numpy())
    fig = Figure(figsize=(min(14, 2 + 0.22 * status.shape[1]),
                          min(14, 1.5 + 0.22 * status.shape[0])), layout="constrained")
    ax = fig.subplots()
    ax.imshow(grid, cmap=ListedColormap(list(STATUS_COLOURS.values())), vmin=0,
              vmax=len(letters) - 1, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(status.shape[1]), [str(c) for c in status.columns], rotation=90,
                  fontsize=7)
    ax.set_yticks(range(status.shape[0]), [str(c) for c in status.index], fontsize=7)
    ax.set_xlabel(status.columns.name or "")
    ax.set_ylabel(status.index.name or "")
    shown = sorted(set(np.unique(grid)))
    names = {"s": "safe", "u": "primary", "m": "secondary", "z": "published as is",
             "x": "secondary", "w": "dummy"}
    ax.legend(handles=[Patch(color=STATUS_COLOURS[letters[i]], label=names[letters[i]])
                       for i in shown], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return fig
