"""What the page draws from a table: hierarchy trees, the status map, tables of text.

Codes are listed in hierarchy order with the codes under each parent sorted (``01`` before
``02`` before ``10``, whatever the order of the data), totals before their parts. Values go
to the page as numbers (the page writes them to the unit, with thousands separators); the
status map is a grid of status letters the page draws as an HTML table, so its labels are
text of the page's size, and no figure (and no lock around one) is drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tabsdc._hierarchy import Hierarchy
from tabsdc._table import Table

#: Codes per axis drawn in the status map (the first ones in hierarchy order).
MAX_MAP_CODES = 250
#: What each status letter means, in the page's words.
STATUS_NAMES = {"s": "published", "u": "primary (sensitive)", "m": "secondary (hidden)",
                "x": "secondary (hidden)", "z": "empty, published as is",
                "w": "dummy", "-": "no such cell"}


def ordered_codes(hierarchy: Hierarchy) -> list[tuple[str, int]]:
    """Every code of ``hierarchy`` with its depth, in the hierarchy's order
    (:attr:`Hierarchy.sorted_codes <tabsdc._hierarchy.Hierarchy.sorted_codes>`: depth first,
    the codes under each parent sorted).

    Examples
    --------
    >>> h = Hierarchy.from_levels(pd.DataFrame({"l1": ["B", "A", "A"],
    ...                                         "l2": ["B2", "A10", "A02"]}))
    >>> ordered_codes(h)
    [('Total', 0), ('A', 1), ('A02', 2), ('A10', 2), ('B', 1), ('B2', 2)]
    """
    depth = dict(zip(hierarchy.codes, hierarchy.to_frame()["depth"], strict=True))
    return [(code, int(depth[code])) for code in hierarchy.sorted_codes]


def tree(table: Table, dim: str) -> dict[str, Any]:
    """The hierarchy of ``dim`` as nested codes, each with its value and count (records) in
    the cells where the other dimensions are at their totals; children sorted by code."""
    hierarchy = table.hierarchies[dim]
    cells = table.cells
    at_totals = np.ones(table.n_cells, dtype=bool)
    for other in table.dims:
        if other != dim:
            at_totals &= (cells.index.get_level_values(other) == table.hierarchies[other].root)
    margin = cells[at_totals]
    margin.index = margin.index.get_level_values(dim)
    counts = margin["freq"] if "freq" in margin.columns else pd.Series(np.nan, margin.index)
    nodes = {code: {"code": code, "value": _finite(margin["value"].get(code)),
                    "count": _finite(counts.get(code)), "children": []}
             for code in hierarchy.sorted_codes}
    for code in hierarchy.sorted_codes[1:]:  # in hierarchy order: children come sorted
        nodes[hierarchy.parents[code]]["children"].append(nodes[code])
    return nodes[hierarchy.root]


def status_grid(table: Table, rows: str, columns: str) -> dict[str, Any]:
    """A 2-D view of the statuses for the page: ``rows`` x ``columns`` (other dimensions
    at their totals), codes in hierarchy order with their depth, one string of status
    letters per row, the values, and the number of codes left out past
    :data:`MAX_MAP_CODES`.

    Examples
    --------
    >>> cells = pd.DataFrame({"r": ["b", "a"], "c": ["1", "1"], "value": [2.0, 3.0]})
    >>> grid = status_grid(Table.from_aggregated(cells, ["r", "c"]), "r", "c")
    >>> [code for code, _ in grid["rows"]], grid["status"]
    (['Total', 'a', 'b'], ['ss', 'ss', 'ss'])
    """
    order = {dim: ordered_codes(table.hierarchies[dim]) for dim in (rows, columns)}
    shown = {dim: codes[:MAX_MAP_CODES] for dim, codes in order.items()}
    row_codes = [c for c, _ in shown[rows]]
    column_codes = [c for c, _ in shown[columns]]
    status = table.pivot(rows, columns, "status").reindex(index=row_codes,
                                                          columns=column_codes)
    values = table.pivot(rows, columns, "value").reindex(index=row_codes,
                                                         columns=column_codes)
    letters = status.fillna("-").to_numpy(dtype=str)
    return {"row_dim": rows, "column_dim": columns,
            "rows": shown[rows], "columns": shown[columns],
            "status": ["".join(row) for row in letters],
            "values": np.where(values.isna(), None, values.to_numpy(dtype=object)).tolist(),
            "left_out": {dim: len(order[dim]) - len(shown[dim]) for dim in (rows, columns)},
            "names": STATUS_NAMES}


def records(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame for the page: header and rows of text (a named index becomes columns;
    numbers to 12 significant digits, so totals can be checked to the unit)."""
    frame = frame.reset_index(drop=not any(frame.index.names))
    return {"header": [str(c) for c in frame.columns],
            "rows": frame.map(_cell_text).to_numpy().tolist()}


def _cell_text(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{value:.12g}"
    return str(value)


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None
