"""Information loss for categorical variables: missing values, changed records, CTBIL.

The measures of the sdcMicro guide, section "General utility measures for categorical
variables": the number of missing values added by the protection (local suppression turns
values into missing ones), the number of records changed per variable, and the
contingency-table-based information loss (CTBIL) of Domingo-Ferrer and Torra (2001): the sum,
over all contingency tables of the chosen variables of dimension 1 up to ``order``, of the
absolute differences between original and masked cell frequencies,

    CTBIL = sum_{T subset of variables, 1 <= |T| <= order} sum_{cells c of T} |t_c - t'_c|.

Missing values are a category of their own in every table (a suppressed value moves a record
from its cell to the "missing" cell). Values are compared as they are: ``1`` and ``"1"``
differ. The normalised value divides by 2 n per table (each table's sum of absolute
differences is at most 2 n), so it lies in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from microsdc._data import frame_pair
from microsdc._errors import DataError
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus

if TYPE_CHECKING:
    from sdcreport import Section


def missing_values(X: Any, X_masked: Any, *, variables: Sequence[str] | None = None
                   ) -> pd.DataFrame:
    """Missing values per variable before and after protection.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like
        Original and masked data (any dtypes), the same records in the same order.
    variables : sequence of str, optional
        Columns to compare (default: all original columns).

    Returns
    -------
    pandas.DataFrame
        One row per variable: ``original`` and ``masked`` missing counts, ``added`` (cells
        missing after but not before protection) and ``added_share`` (added / n).

    Raises
    ------
    DataError
        A variable absent from either data set, or different numbers of records.

    Examples
    --------
    >>> x = pd.DataFrame({"a": ["u", "v", "w"], "b": [1, 2, None]})
    >>> xm = pd.DataFrame({"a": ["u", None, "w"], "b": [1, 2, None]})
    >>> missing_values(x, xm)["added"].tolist()
    [1, 0]
    """
    original, masked = frame_pair(X, X_masked, variables)
    before, after = original.isna().to_numpy(), masked.isna().to_numpy()
    added = (after & ~before).sum(axis=0)
    return pd.DataFrame({"original": before.sum(axis=0), "masked": after.sum(axis=0),
                         "added": added, "added_share": added / max(len(original), 1)},
                        index=pd.Index(original.columns, name="variable"))


def _changed(original: pd.DataFrame, masked: pd.DataFrame) -> np.ndarray:
    """Boolean (n, p): value differs, or exactly one of the two is missing."""
    before, after = original.isna().to_numpy(), masked.isna().to_numpy()
    equal = (original.to_numpy(object) == masked.to_numpy(object))
    return np.where(before | after, before != after, ~equal)


def records_changed(X: Any, X_masked: Any, *, variables: Sequence[str] | None = None
                    ) -> pd.DataFrame:
    """Number and share of records whose value of a variable was changed.

    Parameters are those of :func:`missing_values`. A value that became missing counts as
    changed; missing before and after counts as unchanged.

    Returns
    -------
    pandas.DataFrame
        One row per variable: ``changed`` and ``share`` (changed / n).

    Examples
    --------
    >>> x = pd.DataFrame({"a": ["u", "v", "w"], "b": [1, 2, 3]})
    >>> xm = pd.DataFrame({"a": ["u", None, "w"], "b": [1, 2, 4]})
    >>> records_changed(x, xm)["changed"].tolist()
    [1, 1]
    """
    original, masked = frame_pair(X, X_masked, variables)
    changed = _changed(original, masked).sum(axis=0)
    return pd.DataFrame({"changed": changed, "share": changed / max(len(original), 1)},
                        index=pd.Index(original.columns, name="variable"))


def _table_difference(original: pd.DataFrame, masked: pd.DataFrame, columns: list[str]
                      ) -> tuple[int, int]:
    """Sum of |t_c - t'_c| over the cells of one table, and its number of cells."""
    before = original.groupby(columns, dropna=False, observed=True).size()
    after = masked.groupby(columns, dropna=False, observed=True).size()
    both = pd.concat([before, after], axis=1, join="outer").fillna(0)
    return int(np.abs(both.iloc[:, 0] - both.iloc[:, 1]).sum()), len(both)


@dataclass(frozen=True)
class CTBILResult(ResultBase):
    """Contingency-table-based information loss.

    Attributes
    ----------
    total : int
        CTBIL: the sum of absolute cell-frequency differences over all tables.
    normalised : float
        total / (2 n T) for T tables, in [0, 1].
    order : int
        Largest table dimension.
    n : int
        Number of records.
    tables : pandas.DataFrame
        One row per table: ``variables``, ``dimension``, ``cells`` (in the union of both
        tables), ``difference`` (its sum of absolute differences).
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    total: int
    normalised: float
    order: int
    n: int
    tables: pd.DataFrame = field(repr=False)
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: ``total``, ``normalised``, ``order``, ``n``, the per-table
        differences."""
        from sdcreport._report import jsonable

        return jsonable({"total": self.total, "normalised": self.normalised,
                         "order": self.order, "n": self.n,
                         "tables": self.tables.to_dict(orient="records")})

    def summary(self) -> str:
        return (f"CTBIL = {self.total} over {len(self.tables)} contingency tables of dimension "
                f"<= {self.order} (n = {self.n}); normalised {self.normalised:.4f}")

    def to_frame(self) -> pd.DataFrame:
        """The per-table differences."""
        return self.tables.copy()

    def to_report(self) -> Section:
        from sdcreport import Section

        worst = self.tables.sort_values("difference", ascending=False)
        return (Section("Contingency tables (CTBIL)")
                .add_text("Sum over all contingency tables up to the given dimension of the "
                          "absolute differences between original and masked cell frequencies "
                          "(Domingo-Ferrer and Torra 2001); missing values form their own "
                          "category.")
                .add_metrics({"CTBIL": self.total, "normalised": self.normalised,
                              "tables": len(self.tables), "order": self.order})
                .add_table(worst, "Tables, largest difference first", max_html_rows=200))


def ctbil(X: Any, X_masked: Any, *, variables: Sequence[str] | None = None, order: int = 2
          ) -> CTBILResult:
    """Contingency-table-based information loss over all tables up to ``order`` variables.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like
        Original and masked data with categorical (or any hashable) values, the same
        records in the same order.
    variables : sequence of str, optional
        Variables spanning the tables (default: all original columns).
    order : int
        Largest number of variables in a table (1 = the univariate frequencies only).

    Returns
    -------
    CTBILResult

    Raises
    ------
    DataError
        Bad ``order``, absent variables, or different numbers of records.

    Notes
    -----
    ``CTBIL = sum_T sum_c |t_c - t'_c|`` over every subset T of the variables with
    1 <= |T| <= order (Domingo-Ferrer and Torra 2001, section 4; sdcMicro guide, "Comparing
    contingency tables").

    References
    ----------
    Domingo-Ferrer, J., Torra, V. (2001). Disclosure protection methods and information
    loss for microdata. In *Confidentiality, Disclosure and Data Access*, 91-110.

    Examples
    --------
    >>> x = pd.DataFrame({"a": ["u", "u", "v"], "b": ["p", "q", "q"]})
    >>> xm = pd.DataFrame({"a": ["u", "v", "v"], "b": ["p", "q", "q"]})
    >>> ctbil(x, xm).total        # table a: 2, table b: 0, table a x b: 2
    4
    """
    start = perf_counter()
    original, masked = frame_pair(X, X_masked, variables)
    p = original.shape[1]
    if not 1 <= int(order) <= p:
        raise DataError(f"order must be between 1 and the number of variables ({p}); "
                        f"got {order}")
    rows = []
    for dimension in range(1, int(order) + 1):
        for columns in combinations(list(original.columns), dimension):
            difference, cells = _table_difference(original, masked, list(columns))
            rows.append({"variables": " x ".join(map(str, columns)), "dimension": dimension,
                         "cells": cells, "difference": difference})
    tables = pd.DataFrame(rows)
    total = int(tables["difference"].sum())
    n = len(original)
    return CTBILResult(total, total / (2.0 * n * len(tables)) if n else 0.0, int(order), n,
                       tables, perf_counter() - start)
