"""Per-column sums and counts, and the two ways of reducing them to one number (shared by
the distance, rank and matrix measures, the utility report and the studies).

Examples
--------
>>> import numpy as np
>>> sums = ColumnSums(np.array([2.0, 6.0]), np.array([2, 3]))
>>> sums.per_column().tolist(), reduce_sums(sums, "mean"), reduce_sums(sums, "sum")
([1.0, 2.0], 1.6, 8.0)
"""

from __future__ import annotations

import numpy as np

from microsdc._errors import DataError
from tabsdc._validation import check_choice

#: ``"mean"``: divide the sum over cells by the number of cells (the project's convention);
#: ``"sum"``: the plain sum over cells (sdcMicro's ``dUtility`` convention).
REDUCTIONS = ("mean", "sum")


class ColumnSums:
    """Sum of a cellwise loss per column and the number of cells that entered each sum."""

    __slots__ = ("sums", "counts")

    def __init__(self, sums: np.ndarray, counts: np.ndarray):
        self.sums, self.counts = sums, counts

    def per_column(self) -> np.ndarray:
        """Mean loss of each column over its counted cells (NaN where none counted)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)


def reduce_sums(column_sums: ColumnSums, reduce: str) -> float:
    """Reduce per-column sums to the overall mean (over counted cells) or the overall sum."""
    check_choice("reduce", reduce, REDUCTIONS, error=DataError)
    total = float(column_sums.sums.sum())
    if reduce == "sum":
        return total
    count = int(column_sums.counts.sum())
    return total / count if count else float("nan")
