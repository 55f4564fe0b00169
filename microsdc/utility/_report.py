"""All information-loss measures of one masked data set at once: :func:`information_loss`.

The result, :class:`UtilityReport`, gathers the distance measures (MAE, MSE, IL1, IL1s), the
bounded rank measures (brMAE, brMSE), the probabilistic measures (PIL), the eigenvalue
comparison and the matrix-discrepancy table, per data set and per variable, and renders them
as text, a DataFrame, a plain dict (for JSON) or an ``sdcreport`` section with figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from microsdc._data import Seed, generator, numeric_pair
from microsdc._errors import DataError
from microsdc.utility._distance import absolute_sums, scaled_sums, squared_sums, variation_sums
from microsdc.utility._eigen import eigen_pair
from microsdc.utility._matrix import discrepancy_table
from microsdc.utility._probabilistic import PILResult, pil_result
from microsdc.utility._rank import TIES, rank_sums
from microsdc.utility._sums import REDUCTIONS, reduce_sums
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus
from tabsdc._validation import check_choice

if TYPE_CHECKING:
    from sdcreport import Section

#: Measure name, whether it is bounded in [0, 1], and where it is defined.
_MEASURES = (
    ("MAE", False, "mean absolute error (Mateo-Sanz et al. 2005, Table 1)"),
    ("MSE", False, "mean squared error (Table 1)"),
    ("IL1", False, "mean variation |x - x'| / |x| over x != 0 (Table 1)"),
    ("IL1s", False, "|x - x'| / (sqrt(2) S_j) (Yancey, Winkler and Creecy 2002)"),
    ("brMAE", True, "bounded rank MAE (Chaibub Neto, eq. 8)"),
    ("brMSE", True, "bounded rank MSE (Chaibub Neto, eq. 9)"),
)


@dataclass(frozen=True)
class UtilityReport(ResultBase):
    """Information loss of a masked data set with respect to the original.

    Attributes
    ----------
    n, p : int
        Records and numeric variables.
    columns : list of str
        Variable names.
    MAE, MSE, IL1, IL1s : float
        Distance measures, reduced as ``reduce`` says (mean over cells, or sum).
    brMAE, brMSE : float
        Bounded rank measures in [0, 1].
    pil : PILResult
        Probabilistic information loss.
    eigen : float
        sdcMicro's eigenvalue comparison (a sum over eigenvalues).
    robust_eigen : float or None
        Its robust (MCD) variant, when requested.
    IL1_excluded : int
        Cells left out of IL1 because the original value is 0.
    reduce, ties : str
        Conventions used.
    per_variable : pandas.DataFrame
        Each measure per variable (means over the variable's records).
    matrix : pandas.DataFrame
        The matrix-discrepancy table (:func:`microsdc.utility.matrix_discrepancy`).
    original, masked : numpy.ndarray
        The compared values, read-only (kept for the figures of :meth:`to_report`).
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    n: int
    p: int
    columns: list[str]
    MAE: float
    MSE: float
    IL1: float
    IL1s: float
    brMAE: float
    brMSE: float
    pil: PILResult
    eigen: float
    robust_eigen: float | None
    IL1_excluded: int
    reduce: str
    ties: str
    per_variable: pd.DataFrame = field(repr=False)
    matrix: pd.DataFrame = field(repr=False)
    original: np.ndarray = field(repr=False, compare=False)
    masked: np.ndarray = field(repr=False, compare=False)
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def _dict_fields(self) -> dict[str, Any]:
        """Plain numbers: n, p, MAE, MSE, IL1, IL1s, brMAE, brMSE, PIL{Q, m1, m2, m11, r,
        overall}, eigen (and robust_eigen when computed), plus the conventions used.
        Undefined values are NaN."""
        values: dict[str, Any] = {"n": int(self.n), "p": int(self.p)}
        values.update({name: float(getattr(self, name)) for name, _, _ in _MEASURES})
        values["PIL"] = self.pil.measures()
        values["eigen"] = float(self.eigen)
        if self.robust_eigen is not None:
            values["robust_eigen"] = float(self.robust_eigen)
        values.update({"IL1_excluded_cells": int(self.IL1_excluded), "reduce": self.reduce,
                       "ties": self.ties})
        return values

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``value``, ``bounded`` (in [0, 1]) and ``definition``."""
        rows = [(name, float(getattr(self, name)), bounded, text)
                for name, bounded, text in _MEASURES]
        rows += [(f"PIL({k})", v, True, "probabilistic information loss (Mateo-Sanz et al.)")
                 for k, v in self.pil.measures().items() if k != "overall"]
        rows.append(("PIL", self.pil.overall, False, "100 x mean of the five PIL (percent)"))
        rows.append(("eigen", self.eigen, False, "sum |e - e'| / e of correlation eigenvalues"))
        if self.robust_eigen is not None:
            rows.append(("robust eigen", self.robust_eigen, False,
                         "the same with reweighted MCD covariances"))
        return pd.DataFrame(rows, columns=["measure", "value", "bounded", "definition"])

    def summary(self) -> str:
        """A few lines for the terminal."""
        scale = "sums over cells" if self.reduce == "sum" else "means over cells"
        lines = [f"Information loss: n = {self.n} records, p = {self.p} variables "
                 f"(distance measures are {scale})"]
        lines += [f"  {row.measure:<13} {row.value:12.6g}" for row in self.to_frame().itertuples()]
        if self.IL1_excluded:
            lines.append(f"  IL1 leaves out {self.IL1_excluded} cells with original value 0")
        return "\n".join(lines)

    def to_report(self, *, figures: bool = True, max_columns: int = 12) -> Section:
        """An ``sdcreport`` section: key figures, tables and (optionally) box plots and
        histograms of the variables before and after masking."""
        from microsdc._plots import boxplot_comparison, histogram_comparison
        from sdcreport import Section

        section = Section("Information loss")
        section.add_text(
            f"{self.n} records, {self.p} numeric variables. Distance measures are "
            f"{'sums' if self.reduce == 'sum' else 'means'} over cells; bounded measures lie "
            f"in [0, 1] (0 = no loss); rank ties broken {self.ties!r}. IL1 leaves out "
            f"{self.IL1_excluded} cells whose original value is 0.")
        section.add_metrics({row.measure: row.value for row in self.to_frame().itertuples()})
        section.add_table(self.per_variable, "Measures per variable")
        section.add_table(self.matrix, "Matrix discrepancies (Mateo-Sanz et al. 2005, Table 1): "
                          "mean square error, mean absolute error, mean variation")
        section.add_table(self.pil.per_pair, "PIL of covariances and correlations per pair")
        if figures:
            original, masked = (pd.DataFrame(values, columns=self.columns, copy=False)
                                for values in (self.original, self.masked))
            section.add_figure(boxplot_comparison(original, masked, max_columns=max_columns),
                               "Box plots before and after masking")
            section.add_figure(histogram_comparison(original, masked, max_columns=max_columns),
                               "Histograms before and after masking")
        return section


def information_loss(X: Any, X_masked: Any, *, ties: str = "random", seed: Seed = None,
                     reduce: str = "mean", robust_eigen: bool = False,
                     component_weights: Any = "variance") -> UtilityReport:
    """Every numeric information-loss measure of a masked data set.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked numeric data: the same records in the same order, the same
        columns (matched by name for DataFrames), n >= 2.
    ties : {"random", "first"}
        Tie breaking of the ranks for brMAE and brMSE (see :func:`ranks`).
    seed : int, numpy.random.Generator or None
        Randomness of the tie breaking (and of the MCD when ``robust_eigen``).
    reduce : {"mean", "sum"}
        MAE, MSE, IL1 and IL1s as means over cells (default) or sums over cells
        (sdcMicro's ``dUtility`` convention).
    robust_eigen : bool
        Also compute the robust eigenvalue comparison (reweighted MCD; slower).
    component_weights : {"variance", "equal"} or array-like
        Component weights of the RF and F rows of the matrix-discrepancy table
        (:func:`~microsdc.utility.matrix_discrepancy`).

    Returns
    -------
    UtilityReport

    Raises
    ------
    DataError
        Invalid or misaligned data, fewer than 2 records, or a constant original column.

    See Also
    --------
    mae, mse, il1, il1s, brmae, brmse, probabilistic_information_loss, eigen_discrepancy,
    matrix_discrepancy : the measures one by one, with their formulas and sources.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.lognormal(size=(300, 3))
    >>> report = information_loss(x, x + rng.normal(scale=0.1, size=x.shape), seed=1)
    >>> sorted(report.to_dict()["PIL"])
    ['Q', 'm1', 'm11', 'm2', 'overall', 'r']
    >>> information_loss(x, x, seed=1).to_dict()["brMAE"]
    0.0
    """
    start = perf_counter()
    check_choice("ties", ties, TIES, error=DataError)
    check_choice("reduce", reduce, REDUCTIONS, error=DataError)
    pair = numeric_pair(X, X_masked, min_records=2)
    pair.require_variation("information_loss")
    rng = generator(seed)
    sums = {"MAE": absolute_sums(pair), "MSE": squared_sums(pair),
            "IL1": variation_sums(pair), "IL1s": scaled_sums(pair)}
    sums["brMAE"], sums["brMSE"] = rank_sums(pair, ties, rng)
    values = {name: reduce_sums(s, reduce if name in ("MAE", "MSE", "IL1", "IL1s") else "mean")
              for name, s in sums.items()}
    pil = pil_result(pair)
    per_variable = pd.DataFrame({name: s.per_column() for name, s in sums.items()},
                                index=pd.Index(pair.columns, name="variable"))
    per_variable = per_variable.join(pil.per_variable)
    return UtilityReport(
        n=pair.n, p=pair.p, columns=list(pair.columns), **values, pil=pil,
        eigen=eigen_pair(pair, False, 0, rng),
        robust_eigen=eigen_pair(pair, True, 500, rng) if robust_eigen else None,
        IL1_excluded=int(pair.n * pair.p - sums["IL1"].counts.sum()), reduce=reduce, ties=ties,
        per_variable=per_variable,
        matrix=discrepancy_table(pair, component_weights, x_row=[reduce_sums(sums[name], "mean")
                                                      for name in ("MSE", "MAE", "IL1")]),
        original=pair.x, masked=pair.xm, seconds=perf_counter() - start)
