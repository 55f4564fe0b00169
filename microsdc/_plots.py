"""Figures of original versus masked microdata, and of information-loss studies.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (nothing is
shown, no global figure state is kept); add it to a report with
``sdcreport.Section.add_figure``. The figures follow the sdcMicro guide's section "Assessing
data utility with the help of data visualizations" (histograms, density plots, box plots,
mosaic plots, the risk-utility map) and the figures of Chaibub Neto's note on bounded
information loss measures (measures against perturbation parameters, Spearman correlations
over replications, bounded against unbounded measures).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats

from microsdc._data import Seed, frame_pair, generator, numeric_pair
from microsdc._errors import DataError

_ORIGINAL, _MASKED = "#1f77b4", "#d62728"


def _panels(count: int, columns: int = 4, size: tuple[float, float] = (3.2, 2.6),
            sharex: bool | str = False) -> tuple[Figure, list[Any]]:
    """A figure with ``count`` axes in a grid (unused cells removed)."""
    ncols = max(1, min(columns, count))
    nrows = -(-count // ncols)
    fig = Figure(figsize=(size[0] * ncols, size[1] * nrows), layout="constrained")
    grid = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharex=sharex)).ravel()
    for ax in grid[count:]:
        fig.delaxes(ax)
    for ax in grid[:count]:
        ax.locator_params(nbins=4)  # few ticks: readable small panels, fast rendering
    return fig, list(grid[:count])


def _numeric(X: Any, X_masked: Any, columns: Sequence[str] | None, max_columns: int
             ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    pair = numeric_pair(X, X_masked, same_records=False)
    chosen = list(pair.columns) if columns is None else [str(c) for c in columns]
    unknown = [c for c in chosen if c not in pair.columns]
    if unknown:
        raise DataError(f"no numeric column {unknown[0]!r} to plot")
    chosen = chosen[:max_columns]
    index = [pair.columns.index(c) for c in chosen]
    return pair.x[:, index], pair.xm[:, index], chosen


def _legend(fig: Figure, ax: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)


def histogram_comparison(X: Any, X_masked: Any, *, columns: Sequence[str] | None = None,
                         bins: int = 30, max_columns: int = 12) -> Figure:
    """Histograms of each variable before and after masking, on common bins.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like
        Original and masked numeric data with the same columns.
    columns : sequence of str, optional
        Variables to draw (default: all, at most ``max_columns``).
    bins : int
        Number of equal-width bins spanning both data sets' range.
    max_columns : int
        Largest number of panels.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per variable.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(200, 2))
    >>> len(histogram_comparison(x, x + 0.5).axes)
    2
    """
    x, xm, names = _numeric(X, X_masked, columns, max_columns)
    fig, axes = _panels(len(names))
    for j, (ax, name) in enumerate(zip(axes, names, strict=True)):
        edges = np.histogram_bin_edges(np.concatenate([x[:, j], xm[:, j]]), bins=bins)
        ax.hist(x[:, j], bins=edges, histtype="stepfilled", alpha=0.35, color=_ORIGINAL,
                label="original")
        ax.hist(xm[:, j], bins=edges, histtype="step", linewidth=1.5, color=_MASKED,
                label="masked")
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
    _legend(fig, axes[0])
    return fig


def density_comparison(X: Any, X_masked: Any, *, columns: Sequence[str] | None = None,
                       max_columns: int = 12, max_records: int = 20_000, points: int = 256,
                       seed: Seed = 0) -> Figure:
    """Kernel density estimates of each variable before and after masking.

    Parameters
    ----------
    X, X_masked, columns, max_columns
        As in :func:`histogram_comparison`.
    max_records : int
        Densities are estimated from at most this many records of each data set (a simple
        random subsample drawn with ``seed`` when there are more).
    points : int
        Evaluation points spanning both data sets' range.
    seed : int, numpy.random.Generator or None
        Randomness of the subsample.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    Gaussian kernels with Scott's bandwidth (``scipy.stats.gaussian_kde``); a variable with
    a single value in a data set is drawn as a vertical line.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(200, 3))
    >>> len(density_comparison(x, x * 1.5).axes)
    3
    """
    x, xm, names = _numeric(X, X_masked, columns, max_columns)
    rng = generator(seed)
    samples = [v if len(v) <= max_records else v[rng.choice(len(v), max_records, replace=False)]
               for v in (x, xm)]
    fig, axes = _panels(len(names))
    for j, (ax, name) in enumerate(zip(axes, names, strict=True)):
        low = min(x[:, j].min(), xm[:, j].min())
        high = max(x[:, j].max(), xm[:, j].max())
        grid = np.linspace(low, high, points) if high > low else np.array([low])
        for values, colour, label in zip(samples, (_ORIGINAL, _MASKED), ("original", "masked"),
                                         strict=True):
            column = values[:, j]
            if np.ptp(column) == 0:
                ax.axvline(column[0], color=colour, label=label)
            else:
                ax.plot(grid, stats.gaussian_kde(column)(grid), color=colour, label=label)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
    _legend(fig, axes[0])
    return fig


def boxplot_comparison(X: Any, X_masked: Any, *, columns: Sequence[str] | None = None,
                       max_columns: int = 12) -> Figure:
    """Box plots of each variable before and after masking, side by side.

    Parameters are those of :func:`histogram_comparison`. Whiskers reach 1.5 times the
    interquartile range; points beyond are drawn individually.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=(100, 2))
    >>> len(boxplot_comparison(x, x).axes)
    2
    """
    x, xm, names = _numeric(X, X_masked, columns, max_columns)
    fig, axes = _panels(len(names), columns=6, size=(2.0, 2.8))
    for j, (ax, name) in enumerate(zip(axes, names, strict=True)):
        parts = ax.boxplot([x[:, j], xm[:, j]], tick_labels=["original", "masked"],
                           patch_artist=True, widths=0.6,
                           flierprops={"markersize": 2, "alpha": 0.5})
        for patch, colour in zip(parts["boxes"], (_ORIGINAL, _MASKED), strict=True):
            patch.set_facecolor(colour)
            patch.set_alpha(0.35)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
    return fig


def _mosaic(ax: Any, frame: pd.DataFrame, first: str, second: str | None,
            levels: tuple[list[Any], list[Any]], title: str) -> None:
    """Draw one mosaic: widths by the first variable, heights by the second given it."""
    labelled = frame.astype(object).where(frame.notna(), "NA")
    if second is None:
        counts = labelled[first].value_counts().reindex(levels[0], fill_value=0)
        table = counts.to_frame("all")
    else:
        table = pd.crosstab(labelled[first], labelled[second]).reindex(
            index=levels[0], columns=levels[1], fill_value=0)
    totals = table.sum(axis=1).to_numpy(float)
    widths = totals / max(totals.sum(), 1)
    gap = 0.01
    colours = [f"C{k % 10}" for k in range(table.shape[1])]
    left = 0.0
    for i, row in enumerate(table.to_numpy(float)):
        shares = row / row.sum() if row.sum() else np.zeros_like(row)
        bottom = 0.0
        for k, share in enumerate(shares):
            if share > 0:
                ax.bar(left, share - gap / 2, width=max(widths[i] - gap, 0), bottom=bottom,
                       align="edge", color=colours[k], edgecolor="white",
                       label=str(table.columns[k]))
            bottom += share
        if widths[i] > 0.04:
            ax.text(left + widths[i] / 2, -0.02, str(table.index[i]), ha="center", va="top",
                    fontsize=7, rotation=90 if widths[i] < 0.12 else 0)
        left += widths[i]
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xticks([])
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(first, labelpad=18, fontsize=8)
    ax.set_ylabel(second or "", fontsize=8)


def mosaic_plot(X: Any, X_masked: Any, variables: str | Sequence[str]) -> Figure:
    """Mosaic plots of one or two categorical variables before and after masking.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame
        Original and masked data (any dtypes), the same records.
    variables : str or pair of str
        One variable (widths = its frequencies) or two (widths = frequencies of the first,
        heights = conditional frequencies of the second). Missing values form a category
        ``NA``.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: original and masked, on the same categories.

    Examples
    --------
    >>> x = pd.DataFrame({"a": list("uuvw"), "b": list("pqqp")})
    >>> len(mosaic_plot(x, x.assign(a=list("uvvw")), ["a", "b"]).axes)
    2
    """
    names = [variables] if isinstance(variables, str) else list(variables)
    if not 1 <= len(names) <= 2:
        raise DataError(f"a mosaic plot shows one or two variables; got {names!r}")
    original, masked = frame_pair(X, X_masked, names)

    def levels(name: str) -> list[Any]:
        both = pd.concat([original[name], masked[name]]).astype(object)
        return sorted(both.where(both.notna(), "NA").unique(), key=str)

    first, second = names[0], names[1] if len(names) == 2 else None
    level_pair = (levels(first), levels(second) if second else ["all"])
    fig = Figure(figsize=(9, 4), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, frame, title in zip(axes, (original, masked), ("original", "masked"), strict=True):
        _mosaic(ax, frame, first, second, level_pair, title)
    if second:
        handles, labels = axes[0].get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))
        fig.legend(unique.values(), unique.keys(), title=second, loc="outside right upper",
                   fontsize=7)
    return fig


def ru_map(results: pd.DataFrame, *, risk: str = "risk", loss: str = "loss",
           method: str = "method", parameter: str | None = "parameter",
           annotate: int = 6) -> Figure:
    """Risk-utility (R-U) map: disclosure risk against information loss.

    Parameters
    ----------
    results : pandas.DataFrame
        One row per masked data set with a risk column, a loss column, the method and
        (optionally) its parameter.
    risk, loss, method, parameter : str
        Column names (``parameter=None``: no annotation).
    annotate : int
        Parameters annotated per method (evenly spread along its curve).

    Returns
    -------
    matplotlib.figure.Figure
        One line per method, points ordered by parameter; the ideal corner is low risk and
        low loss (sdcMicro guide, figure "trade-off between risk and utility").

    Examples
    --------
    >>> frame = pd.DataFrame({"method": ["a", "a", "b"], "parameter": [1, 2, 1],
    ...                       "risk": [0.9, 0.5, 0.7], "loss": [0.1, 0.3, 0.2]})
    >>> ru_map(frame).axes[0].get_xlabel()
    'loss'
    """
    needed = [risk, loss, method] + ([parameter] if parameter else [])
    absent = [c for c in needed if c not in results.columns]
    if absent:
        raise DataError(f"R-U map needs column {absent[0]!r}")
    fig = Figure(figsize=(6.5, 4.8), layout="constrained")
    ax = fig.subplots()
    for k, (name, group) in enumerate(results.groupby(method, sort=False)):
        if parameter:
            group = group.sort_values(parameter)
        ax.plot(group[loss], group[risk], marker="o", markersize=3, linewidth=1,
                color=f"C{k % 10}", label=str(name))
        if parameter and annotate > 0:
            step = max(1, len(group) // annotate)
            for _, row in group.iloc[::step].iterrows():
                ax.annotate(f"{row[parameter]:g}" if isinstance(row[parameter], float | int)
                            else str(row[parameter]), (row[loss], row[risk]), fontsize=6,
                            xytext=(2, 2), textcoords="offset points")
    ax.set_xlabel(loss)
    ax.set_ylabel(risk)
    ax.set_title("Risk-utility map", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise DataError(f"{what} needs column {absent[0]!r}")


def _spearman(a: pd.Series, b: pd.Series) -> float:
    if a.nunique() < 2 or b.nunique() < 2:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def measures_by_parameter(values: pd.DataFrame, measures: Sequence[str], *,
                          method: str = "method", parameter: str = "parameter",
                          replication: int | None = 0) -> Figure:
    """Each measure against the perturbation parameter, per method, with Spearman's r.

    The layout of the note's Figures 3 and 4: one row per measure, one column per method.

    Parameters
    ----------
    values : pandas.DataFrame
        One row per masked data set: ``method``, ``parameter``, ``replication`` (optional)
        and one column per measure (:attr:`microsdc._studies.StudyResult.values`).
    measures : sequence of str
        Measure columns to draw.
    method, parameter : str
        Column names.
    replication : int or None
        Draw this replication only (None: all).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> frame = pd.DataFrame({"method": ["m"] * 3, "parameter": [1, 2, 3],
    ...                       "MAE": [0.1, 0.2, 0.4]})
    >>> measures_by_parameter(frame, ["MAE"]).axes[0].get_title()
    'm: MAE (r = 1.00)'
    """
    _check_columns(values, [method, parameter, *measures], "measures_by_parameter")
    if replication is not None and "replication" in values.columns:
        values = values[values["replication"] == replication]
    methods = list(dict.fromkeys(values[method]))
    fig, axes = _panels(len(measures) * len(methods), columns=len(methods), size=(2.6, 2.0),
                        sharex="col")
    for i, name in enumerate(measures):
        for k, group_name in enumerate(methods):
            ax = axes[i * len(methods) + k]
            group = values[values[method] == group_name]
            ax.scatter(group[parameter], group[name], s=4, color=f"C{k % 10}")
            ax.set_title(f"{group_name}: {name} (r = "
                         f"{_spearman(group[parameter], group[name]):.2f})", fontsize=8)
            ax.tick_params(labelsize=6)
    return fig


def spearman_boxplot(correlations: pd.DataFrame, *, method: str = "method",
                     measure: str = "measure", value: str = "rho") -> Figure:
    """Distributions of Spearman correlations over replications (the note's Figures 5, 6).

    Parameters
    ----------
    correlations : pandas.DataFrame
        One row per method, replication and measure with the correlation of that measure
        with the perturbation parameter (``StudyResult.grid_correlations``).
    method, measure, value : str
        Column names.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per method, one box per measure.

    Examples
    --------
    >>> frame = pd.DataFrame({"method": ["m"] * 4, "measure": ["A", "A", "B", "B"],
    ...                       "rho": [0.9, 0.95, 0.8, 0.85]})
    >>> len(spearman_boxplot(frame).axes)
    1
    """
    _check_columns(correlations, [method, measure, value], "spearman_boxplot")
    methods = list(dict.fromkeys(correlations[method]))
    fig, axes = _panels(len(methods), columns=4, size=(3.4, 2.8))
    for ax, name in zip(axes, methods, strict=True):
        group = correlations[correlations[method] == name]
        labels = list(dict.fromkeys(group[measure]))
        data = [group.loc[group[measure] == m, value].dropna().to_numpy() for m in labels]
        ax.boxplot(data, tick_labels=labels, widths=0.6, flierprops={"markersize": 2})
        ax.set_title(str(name), fontsize=9)
        ax.tick_params(axis="x", labelrotation=60, labelsize=7)
        ax.tick_params(axis="y", labelsize=7)
    return fig


def measure_pairs(values: pd.DataFrame, reference: str, others: Sequence[str], *,
                  method: str = "method", replication: int | None = 0) -> Figure:
    """A bounded measure against other measures, per method (the note's Figures 7-10).

    Parameters
    ----------
    values : pandas.DataFrame
        As in :func:`measures_by_parameter`.
    reference : str
        Measure on the vertical axis (e.g. ``"brMAE"``).
    others : sequence of str
        Measures on the horizontal axes, one row of panels each.
    method : str
        Column naming the masking method.
    replication : int or None
        Draw this replication only (None: all).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> frame = pd.DataFrame({"method": ["m"] * 3, "brMAE": [0.1, 0.2, 0.3],
    ...                       "MAE": [1.0, 2.0, 4.0]})
    >>> len(measure_pairs(frame, "brMAE", ["MAE"]).axes)
    1
    """
    _check_columns(values, [method, reference, *others], "measure_pairs")
    if replication is not None and "replication" in values.columns:
        values = values[values["replication"] == replication]
    methods = list(dict.fromkeys(values[method]))
    fig, axes = _panels(len(others) * len(methods), columns=len(methods), size=(2.6, 2.0))
    for i, other in enumerate(others):
        for k, name in enumerate(methods):
            ax = axes[i * len(methods) + k]
            group = values[values[method] == name]
            ax.scatter(group[other], group[reference], s=4, color=f"C{k % 10}")
            ax.set_title(f"{name} (r = {_spearman(group[other], group[reference]):.2f})",
                         fontsize=8)
            ax.set_xlabel(other, fontsize=7)
            ax.set_ylabel(reference, fontsize=7)
            ax.tick_params(labelsize=6)
    return fig
