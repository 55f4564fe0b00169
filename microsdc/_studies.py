"""Perturbation studies: how information-loss measures rank masked data sets.

The protocol of Chaibub Neto's note on bounded information loss metrics (section 3):

1. apply each masking method over a grid of increasing perturbation parameters (the note's
   grids, eqs. (10)-(12): MDAV with k = 1, ..., 30; additive and correlated noise with
   1 %, ..., 300 % of the standard deviation; rank swapping with p = 0.1 %, ..., 30 % of the
   records), in several replications (the note uses 30);
2. compute the information-loss measures of every masked data set (by default the note's six:
   brMAE, brMSE, MAE, MSE, IL1, IL1s);
3. compute, per method and replication, Spearman's rank correlation of every measure with the
   perturbation parameter, and between the measures (brMAE and brMSE against the others);
4. summarise the correlations over replications (the note's Figures 3-10).

MDAV is deterministic: its masked data sets are computed once and reused in every
replication; the measures are still recomputed per replication because ranks of tied values
(MDAV creates many) are broken at random. Each (method, replication) draws from its own
random stream spawned from ``seed``, so results do not depend on the order of the grid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from microsdc import masking
from microsdc._data import NumericPair, Seed, generator, numeric_matrix
from microsdc._errors import DataError
from microsdc._risk import disclosure_risk
from microsdc.utility._distance import absolute_sums, scaled_sums, squared_sums, variation_sums
from microsdc.utility._eigen import eigen_pair
from microsdc.utility._probabilistic import pil_result
from microsdc.utility._rank import TIES, rank_sums
from microsdc.utility._sums import reduce_sums
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus
from tabsdc._validation import check_choice

if TYPE_CHECKING:
    from sdcreport import Section

#: Masking methods of a study and the function producing each masked data set.
METHODS: Mapping[str, str] = MappingProxyType({
    "mdav": "MDAV microaggregation, parameter k (microsdc.masking.mdav)",
    "noise": "additive noise, parameter % of sd (microsdc.masking.additive_noise)",
    "correlated_noise": "correlated noise, parameter % (microsdc.masking.correlated_noise)",
    "rank_swap": "rank swapping, parameter p % of n (microsdc.masking.rank_swap)",
})
_DETERMINISTIC = frozenset({"mdav"})

#: The note's six measures (the default).
MEASURES = ("brMAE", "brMSE", "MAE", "MSE", "IL1", "IL1s")
#: Every measure a study can compute.
AVAILABLE_MEASURES = (*MEASURES, "PIL", "PIL(Q)", "PIL(m1)", "PIL(m2)", "PIL(m11)", "PIL(r)",
                      "eigen")


def default_grid() -> dict[str, tuple[float, ...]]:
    """The note's perturbation grids (eqs. (10)-(12)); rank-swap p in percent of n."""
    return {
        "mdav": tuple(range(1, 31)),
        "noise": tuple(float(v) for v in range(1, 301)),
        "correlated_noise": tuple(float(v) for v in range(1, 301)),
        "rank_swap": tuple(round(0.1 * v, 1) for v in range(1, 301)),
    }


def quick_grid() -> dict[str, tuple[float, ...]]:
    """A small grid with the same ranges, for demonstrations and tests."""
    return {
        "mdav": (1, 2, 3, 5, 10, 20, 30),
        "noise": (1.0, 10.0, 50.0, 100.0, 200.0, 300.0),
        "correlated_noise": (1.0, 10.0, 50.0, 100.0, 200.0, 300.0),
        "rank_swap": (0.1, 1.0, 5.0, 10.0, 20.0, 30.0),
    }


def _mask(method: str, x: np.ndarray, parameter: float, rng: np.random.Generator
          ) -> np.ndarray:
    if method == "mdav":
        return masking.mdav(x, k=int(parameter))
    if method == "noise":
        return masking.additive_noise(x, noise=parameter, seed=rng)
    if method == "correlated_noise":
        return masking.correlated_noise(x, noise=parameter, seed=rng)
    return masking.rank_swap(x, p=parameter, seed=rng)


def _measure_values(pair: NumericPair, measures: Sequence[str], ties: str,
                    rng: np.random.Generator) -> dict[str, float]:
    """The requested measures of one masked data set (each computed once)."""
    distances: dict[str, Callable[[NumericPair], Any]] = {
        "MAE": absolute_sums, "MSE": squared_sums, "IL1": variation_sums, "IL1s": scaled_sums}
    values = {name: reduce_sums(distances[name](pair), "mean")
              for name in measures if name in distances}
    if "brMAE" in measures or "brMSE" in measures:
        absolute, squared = rank_sums(pair, ties, rng)
        values["brMAE"], values["brMSE"] = (reduce_sums(absolute, "mean"),
                                            reduce_sums(squared, "mean"))
    if any(name.startswith("PIL") for name in measures):
        pil = pil_result(pair).measures()
        values["PIL"] = pil["overall"]
        values.update({f"PIL({k})": v for k, v in pil.items() if k != "overall"})
    if "eigen" in measures:
        values["eigen"] = eigen_pair(pair, False, 0, rng)
    return {name: values[name] for name in measures}


def _correlations(values: pd.DataFrame, measures: Sequence[str]
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Spearman correlations per (method, replication): with the parameter, and between
    measures (long frames)."""
    with_grid, between = [], []
    for (method, replication), group in values.groupby(["method", "replication"], sort=False):
        matrix = group[["parameter", *measures]].corr(method="spearman")
        for measure in measures:
            with_grid.append((method, replication, measure, matrix.loc[measure, "parameter"]))
            between.extend((method, replication, measure, other, matrix.loc[measure, other])
                           for other in measures if other != measure)
    return (pd.DataFrame(with_grid, columns=["method", "replication", "measure", "rho"]),
            pd.DataFrame(between, columns=["method", "replication", "measure", "other", "rho"]))


@dataclass(frozen=True)
class StudyResult(ResultBase):
    """Measures of every masked data set of a study and their Spearman correlations.

    Attributes
    ----------
    name : str
        Name of the data set.
    measures : tuple of str
        Measures computed.
    grid : dict
        Method -> perturbation parameters.
    replications : int
        Replications of every method.
    values : pandas.DataFrame
        One row per masked data set: ``method``, ``parameter``, ``replication`` and one
        column per measure (and per risk measure when risk was computed).
    grid_correlations : pandas.DataFrame
        Spearman's rho of each measure with the parameter, per method and replication
        (columns ``method, replication, measure, rho``).
    measure_correlations : pandas.DataFrame
        Spearman's rho between pairs of measures, per method and replication (columns
        ``method, replication, measure, other, rho``).
    spearman : pandas.DataFrame
        Mean over replications: index (method, measure), columns ``grid`` (rho with the
        parameter) and one column per measure (rho with that measure).
    risk_measures : tuple of str
        Risk columns of ``values`` (empty unless ``risk=True``).
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    name: str
    measures: tuple[str, ...]
    grid: dict[str, tuple[float, ...]]
    replications: int
    values: pd.DataFrame = field(repr=False)
    grid_correlations: pd.DataFrame = field(repr=False)
    measure_correlations: pd.DataFrame = field(repr=False)
    spearman: pd.DataFrame = field(repr=False)
    risk_measures: tuple[str, ...] = ()
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: the study's design, the mean Spearman table (one record per
        method and measure)."""
        from sdcreport._report import jsonable

        return jsonable({"name": self.name, "measures": self.measures,
                         "grid": {m: list(p) for m, p in self.grid.items()},
                         "replications": self.replications,
                         "masked_data_sets": len(self.values),
                         "risk_measures": self.risk_measures,
                         "spearman": self.to_frame().to_dict(orient="records")})

    def grid_table(self) -> pd.DataFrame:
        """Mean Spearman rho of each measure (rows) with the parameter, per method (columns)."""
        table = self.spearman["grid"].unstack("method")
        return table.loc[list(self.measures), list(self.grid)]

    def pairs_table(self, reference: str) -> pd.DataFrame:
        """Mean Spearman rho of ``reference`` with every other measure (columns), per
        method (rows)."""
        if reference not in self.measures:
            raise DataError(f"{reference!r} is not a measure of this study")
        table = self.spearman.xs(reference, level="measure")
        return table[[m for m in self.measures if m != reference]].loc[list(self.grid)]

    def summary(self) -> str:
        """The Spearman table (measures x methods) and the study's size."""
        sets = len(self.values)
        text = [f"Study on {self.name}: {sets} masked data sets, {self.replications} "
                f"replication(s); mean Spearman correlation of each measure with the "
                f"perturbation parameter:", self.grid_table().round(4).to_string()]
        for reference in ("brMAE", "brMSE"):
            if reference in self.measures and len(self.measures) > 1:
                text += [f"Mean Spearman correlation of {reference} with the other measures:",
                         self.pairs_table(reference).round(4).to_string()]
        return "\n".join(text)

    def to_frame(self) -> pd.DataFrame:
        """The mean Spearman table with (method, measure) as columns."""
        return self.spearman.reset_index()

    def to_report(self, *, figures: bool = True, ru_risk: str | None = None,
                  ru_loss: str | None = None) -> Section:
        """An ``sdcreport`` section: tables of Spearman correlations and the note's figures
        (and an R-U map when risk was computed: ``ru_risk`` against ``ru_loss``, by default
        the first risk measure and the first information-loss measure)."""
        from microsdc._plots import measure_pairs, measures_by_parameter, ru_map, spearman_boxplot
        from sdcreport import Section

        section = Section(f"Information-loss study: {self.name}")
        grids = "; ".join(f"{m}: {len(p)} values from {min(p):g} to {max(p):g}"
                          for m, p in self.grid.items())
        section.add_text(
            f"Masked data sets over perturbation grids ({grids}); {self.replications} "
            f"replication(s). For every method and replication, Spearman's rank correlation of "
            f"each measure with the perturbation parameter and between measures; tables give "
            f"means over replications.")
        section.add_metrics({"masked data sets": len(self.values),
                             "replications": self.replications})
        section.add_table(self.grid_table(), "Mean Spearman correlation with the parameter "
                          "(rows: measures, columns: methods)")
        others = [m for m in self.measures if m not in ("brMAE", "brMSE")]
        for reference in ("brMAE", "brMSE"):
            if reference in self.measures and others:
                section.add_table(self.pairs_table(reference)[others],
                                  f"Mean Spearman correlation of {reference} with the others")
        if figures:
            section.add_figure(measures_by_parameter(self.values, list(self.measures)),
                               "Measures against the perturbation parameter (replication 0)")
            section.add_figure(spearman_boxplot(self.grid_correlations),
                               "Spearman correlations with the parameter over replications")
            for reference in ("brMAE", "brMSE"):
                if reference in self.measures and others:
                    section.add_figure(measure_pairs(self.values, reference, others),
                                       f"{reference} against the other measures")
            if self.risk_measures:
                risk = ru_risk or self.risk_measures[0]
                loss = ru_loss or self.measures[0]
                frame = self.values[self.values["replication"] == 0]
                section.add_figure(ru_map(frame, risk=risk, loss=loss),
                                   f"Risk-utility map: {risk} against {loss} (replication 0)")
        return section


def _checked_grid(grid: Mapping[str, Sequence[float]] | None) -> dict[str, tuple[float, ...]]:
    chosen = default_grid() if grid is None else dict(grid)
    if not chosen:
        raise DataError("the grid names no masking method")
    checked = {}
    for method, parameters in chosen.items():
        check_choice("grid method", method, tuple(METHODS), error=DataError)
        values = tuple(parameters)
        if not values:
            raise DataError(f"the grid of {method!r} is empty")
        checked[method] = values
    return checked


def run_study(X: Any, *, grid: Mapping[str, Sequence[float]] | None = None,
              replications: int = 30, seed: Seed = None,
              measures: Sequence[str] = MEASURES, ties: str = "random", risk: bool = False,
              name: str = "data") -> StudyResult:
    """Run the note's perturbation study on one data set.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Original numeric data (no constant column).
    grid : mapping of method -> sequence of parameters, optional
        Methods among ``"mdav"`` (k), ``"noise"`` (% of sd, sdcMicro's additive noise),
        ``"correlated_noise"`` (%) and ``"rank_swap"`` (p, % of n). Default:
        :func:`default_grid`, the note's grids; :func:`quick_grid` is a small one.
    replications : int
        Replications of every method (the note: 30).
    seed : int, numpy.random.Generator or None
        Randomness of masking and rank tie breaking.
    measures : sequence of str
        Measures among :data:`AVAILABLE_MEASURES` (default: the note's six). Distance
        measures are means over cells.
    ties : {"random", "first"}
        Tie breaking of ranks for brMAE and brMSE.
    risk : bool
        Also compute disclosure risk (``microsdc._risk.disclosure_risk``) of every masked
        data set, for the R-U map.
    name : str
        Name of the data set in the report.

    Returns
    -------
    StudyResult
        With ``values`` (one row per masked data set), Spearman correlations per
        replication, and ``spearman``, their means.

    Raises
    ------
    DataError
        Invalid data, an unknown method or measure, an empty grid, or replications < 1.

    Notes
    -----
    Spearman correlations use average ranks for ties (a constant measure gives NaN). The
    protocol follows Chaibub Neto's note, section 3 (see :mod:`microsdc._studies`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> data = rng.lognormal(size=(120, 3))
    >>> result = run_study(data, grid={"noise": (10.0, 50.0, 100.0, 200.0)},
    ...                    replications=2, seed=1)
    >>> result.values.shape
    (8, 9)
    >>> bool(result.spearman.loc[("noise", "brMAE"), "grid"] > 0.5)
    True
    """
    start = perf_counter()
    x, columns, index = numeric_matrix(X)
    grid = _checked_grid(grid)
    measures = tuple(measures)
    for measure in measures:
        check_choice("measure", measure, AVAILABLE_MEASURES, error=DataError)
    if not measures:
        raise DataError("no measure requested")
    check_choice("ties", ties, TIES, error=DataError)
    if int(replications) < 1:
        raise DataError(f"replications must be at least 1; got {replications}")
    NumericPair(x, x, columns, index).require_variation("the study's measures")
    streams = iter(generator(seed).spawn(len(grid) * int(replications)))
    rows = []
    for method, parameters in grid.items():
        cached: dict[float, np.ndarray] = {}
        for replication in range(int(replications)):
            rng = next(streams)
            for parameter in parameters:
                if method in _DETERMINISTIC:
                    masked = cached.setdefault(parameter, _mask(method, x, parameter, rng))
                else:
                    masked = _mask(method, x, parameter, rng)
                pair = NumericPair(x, np.asarray(masked, dtype=float), columns, index)
                row = {"method": method, "parameter": parameter, "replication": replication,
                       **_measure_values(pair, measures, ties, rng)}
                if risk:
                    row.update(disclosure_risk(x, masked, seed=rng).measures())
                rows.append(row)
    values = pd.DataFrame(rows)
    risk_measures = tuple(c for c in values.columns
                          if c not in ("method", "parameter", "replication", *measures))
    with_grid, between = _correlations(values, measures)
    mean_grid = with_grid.groupby(["method", "measure"], sort=False)["rho"].mean()
    mean_between = between.groupby(["method", "measure", "other"], sort=False)["rho"].mean()
    spearman = mean_between.unstack("other").reindex(columns=list(measures))
    spearman.insert(0, "grid", mean_grid)
    for measure in measures:  # a measure correlates perfectly with itself
        spearman.loc[spearman.index.get_level_values("measure") == measure, measure] = 1.0
    spearman = spearman.reindex(pd.MultiIndex.from_product([list(grid), list(measures)],
                                                           names=["method", "measure"]))
    return StudyResult(name, measures, grid, int(replications), values, with_grid, between,
                       spearman, risk_measures, perf_counter() - start)
