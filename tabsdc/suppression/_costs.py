"""Suppression costs per cell: value, count, Berg entropy or a cost column."""

from __future__ import annotations

import numpy as np

from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc._validation import check_choice

#: Named cost criteria (Cox, slide 14): c = a, c = 1, c = log(1 + a).
COST_NAMES = ("value", "count", "entropy")


def cell_costs(table: Table, cost: str | np.ndarray) -> np.ndarray:
    """Cost of suppressing each cell.

    ``"value"``: ``|a|`` (total value suppressed); ``"count"``: 1 (number of cells);
    ``"entropy"``: Berg entropy ``log(1 + |a|)``; a column name of ``table.cells`` (e.g.
    ``"cost"``, the JJ weight field); or an array with one non-negative number per cell.
    """
    values = np.abs(table.values)
    if isinstance(cost, str):
        if cost == "value":
            return values
        if cost == "count":
            return np.ones(table.n_cells)
        if cost == "entropy":
            return np.log1p(values)
        if cost not in table.cells.columns:
            check_choice("cost", cost, COST_NAMES, also="a cell column or an array")
        out = table.cells[cost].to_numpy(float)
    else:
        out = np.asarray(cost, dtype=float)
        if out.shape != (table.n_cells,):
            raise InputError(f"cost has shape {out.shape}; the table has {table.n_cells} cells")
    bad = ~np.isfinite(out) | (out < 0)
    if bad.any():
        label = table.cell_labels(np.flatnonzero(bad)[:1])[0]
        raise InputError(f"cost of {label} is {out[bad][0]}: costs must be finite and >= 0")
    return out
