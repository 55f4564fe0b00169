"""Quality and disclosure risk of a perturbed count table.

Utility (as cellKey's ``ck_cnt_measures`` reports it, after the Eurostat census guidelines,
*Methods for protecting census data*, 2019):

* the noise distribution: how many cells got each noise ``v = y - x``;
* three distances per cell, with ``x`` the original and ``y`` the published count:
  ``d1 = |y - x|``, ``d2 = |y - x| / x`` and ``d3 = |sqrt(y) - sqrt(x)|``, summarised by
  their minimum, deciles 10..90, 95 and 99 %, mean, median and maximum, and their cumulative
  distributions (``d1`` by value; ``d2`` and ``d3`` on the breaks 0, 0.02, 0.05, 0.1, 0.2,
  0.3, 0.4, 0.5, inf); cells published as 0 are left out, as cellKey does by default;
* false zeros (``x > 0`` published as 0) and false non-zeros (``x = 0`` published > 0);
* deviations by cell-size class (mean and largest ``|y - x|``, mean ``y - x``, mean ``d2``).

Risk: the posterior probability of an original count given the published one, the analogue
of Cox's ``P[x | R(x)]`` for rounding (:mod:`tabsdc.rounding._statistics`). An intruder who
knows the p-table (tau-ARGUS publishes its parameters) and a prior ``pi`` on the original
counts computes, by Bayes' rule,

    P[x | y] = pi(x) P[y | x] / sum_x' pi(x') P[y | x'],

where ``P[y | x]`` is the probability of ``y - x`` in row ``min(x, max i)``. With the
default prior (the distribution of the original counts of the table itself, the intruder's
best case) ``P[x = 1 | y]`` and ``P[x = 2 | y]`` say how surely a small published count
reveals a very small original one.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus
from tabsdc.ckm._ptable import PTable

if TYPE_CHECKING:
    from sdcreport import Section

#: Lower ends of the cell-size classes of the deviation table.
SIZE_CLASSES = (0, 1, 2, 3, 4, 5, 10, 20, 50, 100, 1000)

#: cellKey's breaks of the cumulative distributions of d2 and d3.
DISTANCE_BREAKS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, np.inf)

_QUANTILES = {"Min": 0.0, "Q10": 0.1, "Q20": 0.2, "Q30": 0.3, "Q40": 0.4, "Median": 0.5,
              "Q60": 0.6, "Q70": 0.7, "Q80": 0.8, "Q90": 0.9, "Q95": 0.95, "Q99": 0.99,
              "Max": 1.0}


def distance_summary(original: np.ndarray, published: np.ndarray,
                     exclude_zeros: bool = True) -> pd.DataFrame:
    """``d1``, ``d2``, ``d3`` summarised (rows Min, Q10, ..., Mean, Median, ..., Max).

    Quantiles are R's default (type 7, numpy's ``linear``), as cellKey's.

    Examples
    --------
    >>> summary = distance_summary(np.array([1.0, 4.0, 10.0]), np.array([0.0, 6.0, 9.0]))
    >>> summary.loc["Max"].round(4).tolist()
    [2.0, 0.5, 0.4495]
    """
    d1, d2, d3 = _distances(original, published, exclude_zeros)
    rows = {}
    for name, q in _QUANTILES.items():
        rows[name] = [np.quantile(d, q) if len(d) else np.nan for d in (d1, d2, d3)]
        if name == "Q40":
            rows["Mean"] = [d.mean() if len(d) else np.nan for d in (d1, d2, d3)]
    return pd.DataFrame.from_dict(rows, orient="index", columns=["d1", "d2", "d3"])


def posterior_matrix(ptable: PTable, prior: np.ndarray) -> pd.DataFrame:
    """``P[x | y]`` for every original ``x = 0..len(prior) - 1`` and published ``y``.

    Parameters
    ----------
    ptable : PTable
        A count p-table.
    prior : ndarray
        ``pi(x)`` for ``x = 0, 1, ...`` (need not sum to 1).

    Returns
    -------
    pandas.DataFrame
        Rows: published counts ``y`` that have a positive probability; columns: originals
        ``x``; each row sums to 1.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> post = posterior_matrix(build_ptable(1, 0.5), np.array([1.0, 1.0, 1.0]))
    >>> float(post.loc[0, 1])  # P[x = 1 | y = 0] = 0.25 / (1 + 0.25)
    0.2
    """
    prior = np.asarray(prior, dtype=float)
    originals = np.arange(len(prior))
    rows = np.minimum(originals, ptable.rows.max())
    frame = ptable.frame
    likelihood = {}
    for x, row in zip(originals, rows, strict=True):
        part = frame[frame["i"] == row]
        likelihood[x] = pd.Series(part["p"].to_numpy(), index=(x + part["v"]).to_numpy())
    joint = pd.DataFrame(likelihood).fillna(0.0).sort_index() * prior
    joint = joint[joint.sum(axis=1) > 0]
    joint.index.name, joint.columns.name = "published", "original"
    return joint.div(joint.sum(axis=1), axis=0)


@dataclass(frozen=True, eq=False)
class PerturbationStatistics(ResultBase):
    """Utility and risk figures of a perturbed count table (see the module text).

    Attributes
    ----------
    noise : pandas.DataFrame
        Columns ``noise``, ``cells``, ``share``.
    distances : pandas.DataFrame
        :func:`distance_summary`.
    cumulative : dict of str to pandas.DataFrame
        Cumulative distributions of ``d1``, ``d2``, ``d3`` (columns ``upto``, ``cells``,
        ``share``).
    by_size : pandas.DataFrame
        Deviations by cell-size class.
    posterior : pandas.DataFrame
        :func:`posterior_matrix` with the table's own counts as prior, originals up to the
        largest row of the p-table plus its maximum noise.
    false_zeros, false_nonzeros : int
    seconds : float
    """

    noise: pd.DataFrame
    distances: pd.DataFrame
    cumulative: dict
    by_size: pd.DataFrame
    posterior: pd.DataFrame
    false_zeros: int
    false_nonzeros: int
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        return MeasureStatus.COMPUTED

    def disclosure(self) -> pd.DataFrame:
        """Per small published count ``y``: ``P[x = 1 | y]``, ``P[x = 2 | y]``, the most
        probable original and its probability."""
        post = self.posterior
        post = post.loc[post.index <= float(post.columns.max())]
        return pd.DataFrame({
            "P[x = 1 | y]": post.get(1, 0.0), "P[x = 2 | y]": post.get(2, 0.0),
            "most probable x": post.idxmax(axis=1), "its probability": post.max(axis=1)})

    def summary(self) -> str:
        d = self.distances
        worst = self.disclosure()["its probability"]
        return "\n".join([
            f"mean |noise| {d.at['Mean', 'd1']:.4g}, largest {d.at['Max', 'd1']:.4g}; mean "
            f"relative deviation {d.at['Mean', 'd2']:.4g}",
            f"false zeros {self.false_zeros}, false non-zeros {self.false_nonzeros}",
            f"largest posterior probability of an original given a small published count "
            f"{worst.max():.3f}"])

    def to_frame(self) -> pd.DataFrame:
        """The deviations by cell-size class."""
        return self.by_size.copy()

    def _dict_fields(self) -> dict:
        return {"noise": self.noise.to_dict("records"),
                "distances": {k: {q: float(x) for q, x in col.items()}
                              for k, col in self.distances.items()},
                "by_size": self.by_size.reset_index().to_dict("records"),
                "false_zeros": self.false_zeros, "false_nonzeros": self.false_nonzeros,
                "disclosure": self.disclosure().reset_index().to_dict("records")}

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.ckm._plots import noise_figure, posterior_figure

        section = Section("Quality and risk of the perturbed counts")
        section.add_text(
            "Distances between the published count y and the original x: d1 = |y - x|, "
            "d2 = |y - x| / x, d3 = |sqrt(y) - sqrt(x)| (cells published as 0 left out, as "
            "cellKey does). The posterior probability P[x | y] is what an intruder who knows "
            "the p-table and the distribution of the counts infers from a published count.")
        section.add_metrics({"false zeros": self.false_zeros,
                             "false non-zeros": self.false_nonzeros})
        section.add_table(self.noise, "Distribution of the noise")
        section.add_table(self.distances.rename_axis("statistic").reset_index(),
                          "Distance measures")
        section.add_table(self.by_size.reset_index(), "Deviations by cell size")
        section.add_table(self.disclosure().rename_axis("published y").reset_index(),
                          "Posterior probability of small originals given the published count")
        section.add_figure(noise_figure(self.noise), "Distribution of the noise")
        section.add_figure(posterior_figure(self.posterior),
                           "Posterior probabilities P[x | y] of the original x")
        return section


def perturbation_statistics(original: np.ndarray, published: np.ndarray,
                            ptable: PTable) -> PerturbationStatistics:
    """The figures of :class:`PerturbationStatistics` for one perturbed table.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> stats = perturbation_statistics(np.array([0, 1, 5, 9]), np.array([0, 2, 4, 9]),
    ...                                 build_ptable(1, 0.5))
    >>> stats.noise.to_dict("list")
    {'noise': [-1, 0, 1], 'cells': [1, 2, 1], 'share': [0.25, 0.5, 0.25]}
    """
    started = perf_counter()
    x = np.asarray(original, dtype=float)
    y = np.asarray(published, dtype=float)
    values, cells = np.unique((y - x).astype(np.int64), return_counts=True)
    noise = pd.DataFrame({"noise": values, "cells": cells, "share": cells / len(x)})
    d1, d2, d3 = _distances(x, y, True)
    cumulative = {"d1": _cumulative(d1, np.unique(d1)),
                  "d2": _cumulative(d2, np.array(DISTANCE_BREAKS[1:])),
                  "d3": _cumulative(d3, np.array(DISTANCE_BREAKS[1:]))}
    size_class = np.searchsorted(np.array(SIZE_CLASSES), x, side="right") - 1
    labels = [f"{a}-{b - 1}" if b - 1 > a else f"{a}"
              for a, b in zip(SIZE_CLASSES, SIZE_CLASSES[1:], strict=False)]
    labels.append(f"{SIZE_CLASSES[-1]}+")
    deviation = y - x
    relative = np.divide(np.abs(deviation), x, out=np.zeros_like(x), where=x > 0)
    by_size = pd.DataFrame({"class": np.array(labels)[size_class], "order": size_class,
                            "|dev|": np.abs(deviation), "dev": deviation, "rel": relative})
    by_size = by_size.groupby(["order", "class"]).agg(
        cells=("dev", "size"), mean_abs_deviation=("|dev|", "mean"),
        max_abs_deviation=("|dev|", "max"), mean_deviation=("dev", "mean"),
        mean_relative_deviation=("rel", "mean")).reset_index("order", drop=True)
    top = int(ptable.rows.max() + ptable.max_noise)
    prior = np.bincount(np.minimum(x, top + 1).astype(np.int64), minlength=top + 2)[:top + 1]
    return PerturbationStatistics(
        noise=noise, distances=distance_summary(x, y), cumulative=cumulative, by_size=by_size,
        posterior=posterior_matrix(ptable, prior.astype(float)),
        false_zeros=int(np.sum((y == 0) & (x != 0))),
        false_nonzeros=int(np.sum((x == 0) & (y != 0))), seconds=perf_counter() - started)


def _distances(original: np.ndarray, published: np.ndarray,
               exclude_zeros: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = published != 0 if exclude_zeros else np.ones(len(original), bool)
    x, y = np.asarray(original, float)[keep], np.asarray(published, float)[keep]
    d1 = np.abs(y - x)
    d2 = np.divide(d1, x, out=np.where(d1 == 0, 0.0, np.inf), where=x != 0)
    return d1, d2, np.abs(np.sqrt(y) - np.sqrt(x))


def _cumulative(distance: np.ndarray, upto: np.ndarray) -> pd.DataFrame:
    cells = np.searchsorted(np.sort(distance), upto, side="right")
    return pd.DataFrame({"upto": upto, "cells": cells,
                         "share": cells / max(len(distance), 1)})
