"""Quality figures of an adjusted table: distances, relative changes, kept statistics, MDI.

For the adjustment ``y = x - a`` over all cells: the L1 distance ``sum |y|``, the L2
distance ``sqrt(sum y**2)``, the largest change, the number of cells changed, and the mean and
largest relative change ``|y_i| / |a_i|`` over cells with ``a_i != 0``. Per group of cells
(default: the interior cells), the mean, the sample variance (``n - 1``) and the Pearson
correlation of original and adjusted values. The MDI figures compare the interior cells as
distributions (:func:`tabsdc.mdi._statistic.mdi_statistic`; only for non-negative tables).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tabsdc.mdi._statistic import mdi_statistic

#: Changes smaller than this (relative to ``max(1, |a|)``) count as none.
UNCHANGED = 1e-9


def quality_figures(
    values: np.ndarray, adjusted: np.ndarray, cost: np.ndarray | None,
    interior: np.ndarray,
) -> dict[str, float]:
    """Distances and changes of an adjustment (see the module docstring).

    Parameters
    ----------
    values, adjusted : ndarray, shape (n,)
        Original and published values.
    cost : ndarray or None
        Costs per unit of change of the cost-weighted L1 figure ``sum w |y|`` (omitted when
        None).
    interior : ndarray of int
        Positions of the interior cells (for the MDI figures).

    Returns
    -------
    dict
        ``l1_distance``, ``weighted_l1`` (with costs), ``l2_distance``, ``max_change``,
        ``cells_changed``, ``mean_relative_change``, ``max_relative_change``, and for
        non-negative tables ``mdi_information`` and ``mdi_statistic``.

    Examples
    --------
    >>> figures = quality_figures(np.array([10.0, 4.0, 6.0]), np.array([12.0, 6.0, 6.0]),
    ...                           np.ones(3), np.array([1, 2]))
    >>> figures["l1_distance"], figures["cells_changed"], figures["max_relative_change"]
    (4.0, 2, 0.5)
    """
    y = adjusted - values
    changed = np.abs(y) > UNCHANGED * np.maximum(1.0, np.abs(values))
    nonzero = values != 0
    relative = np.abs(y[nonzero]) / np.abs(values[nonzero])
    figures: dict[str, float] = {
        "l1_distance": float(np.abs(y).sum()),
        "l2_distance": float(np.sqrt(y @ y)),
        "max_change": float(np.abs(y).max()) if y.size else 0.0,
        "cells_changed": int(changed.sum()),
        "mean_relative_change": float(relative.mean()) if relative.size else 0.0,
        "max_relative_change": float(relative.max()) if relative.size else 0.0,
    }
    if cost is not None:
        figures["weighted_l1"] = float(cost @ np.abs(y))
    p, q = values[interior], adjusted[interior]
    if (p >= 0).all() and (q >= 0).all() and p.sum() > 0 and q.sum() > 0:
        figures["mdi_information"], figures["mdi_statistic"] = mdi_statistic(p, q)
    return figures


def group_statistics(
    values: np.ndarray, adjusted: np.ndarray, groups: Sequence[tuple[str, np.ndarray]]
) -> pd.DataFrame:
    """Mean, variance and correlation of each group before and after adjustment.

    Returns
    -------
    DataFrame
        One row per group: ``cells``, ``mean_before``, ``mean_after``, ``variance_before``,
        ``variance_after`` (sample, ``n - 1``), ``correlation`` (Pearson, original vs
        adjusted; NaN for constant groups).
    """
    rows = []
    for name, cells in groups:
        a, x = values[cells], adjusted[cells]
        ddof = 1 if len(cells) > 1 else 0
        with np.errstate(invalid="ignore", divide="ignore"):
            correlation = (np.corrcoef(a, x)[0, 1] if len(cells) > 1 and a.std() > 0
                           and x.std() > 0 else np.nan)
        rows.append({"group": name, "cells": len(cells), "mean_before": a.mean(),
                     "mean_after": x.mean(), "variance_before": a.var(ddof=ddof),
                     "variance_after": x.var(ddof=ddof), "correlation": correlation})
    return pd.DataFrame(rows).set_index("group")
