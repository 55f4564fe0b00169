"""The intruder's a-priori bounds and how far each cell may move within them.

The audit attacks a pattern within these bounds and the protection methods build their
attacks on the same room (``L = a - lb``, ``U = ub - a``): one definition for both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tabsdc._errors import InputError
from tabsdc._validation import check_choice

if TYPE_CHECKING:
    from tabsdc._table import Table


def prior_bounds(
    cells: pd.DataFrame, values: np.ndarray, prior: str, q: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The intruder's a-priori bounds: the table's ``lb``/``ub`` (``prior="table"``), or
    every value known within ``q`` percent, intersected with them (``prior="pq"``)."""
    lb = cells["lb"].to_numpy(float)
    ub = cells["ub"].to_numpy(float)
    if prior == "table":
        if q is not None:
            raise InputError("q is only used with prior='pq'")
        return lb, ub
    check_choice("prior", prior, ("table", "pq"))
    if q is None or not 0 < q:
        raise InputError("prior='pq' needs q > 0 (a percentage)")
    spread = np.abs(values) * q / 100
    return np.maximum(lb, values - spread), np.minimum(ub, values + spread)


def capacities(table: Table, prior: str = "table",
               q: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How far the intruder may move each cell down and up: ``L = a - lb`` and
    ``U = ub - a`` for the a-priori bounds of ``prior`` (:func:`prior_bounds`),
    each at most ``1.5 max |a| + max(lpl, upl)`` so that the attacker's LPs stay bounded
    (a larger move is never needed to show a protection level).

    Raises
    ------
    InputError
        A cell outside its a-priori bounds (named).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> table = Table(pd.DataFrame({"value": [10.0, 4.0, 6.0], "lb": [0.0, 3.0, 0.0]}),
    ...               [[-1, 1, 1]], [0])
    >>> down, up = capacities(table)
    >>> down.tolist(), up.tolist()
    ([10.0, 1.0, 6.0], [15.0, 15.0, 15.0])
    """
    values = table.values
    lb, ub = prior_bounds(table.cells, values, prior, q)
    levels = table.cells[["lpl", "upl"]].to_numpy(float)
    cap = 1.5 * float(np.abs(values).max(initial=0.0)) + float(levels.max(initial=0.0))
    down = np.minimum(values - lb, cap)
    up = np.minimum(ub - values, cap)
    bad = (down < 0) | (up < 0)
    if bad.any():
        label = table.cell_labels(np.flatnonzero(bad)[:1])[0]
        raise InputError(f"{label} lies outside its a-priori bounds [lb, ub]")
    return down, up
