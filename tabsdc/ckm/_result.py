"""The results of the cell key method: on a count table and on a magnitude table."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import PerturbationStatus
from tabsdc._table import Table
from tabsdc.ckm._keys import key_fraction
from tabsdc.ckm._ptable import PTable
from tabsdc.ckm._quality import PerturbationStatistics, distance_summary, perturbation_statistics

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc.ckm._flex import FlexFunction, MagnitudeNoise


def key_source(record_key: str | None, *, seed: object) -> str:
    """Where a result's record keys came from, for its summary."""
    return f"column {record_key!r}" if record_key else f"drawn (seed {seed})"


def key_fields(record_key: str | None, *, seed: object) -> dict:
    """``record_key`` and ``seed`` (an int, else None) for a result's ``to_dict()``."""
    return {"record_key": record_key, "seed": seed if isinstance(seed, int) else None}


class _Perturbed:
    """The status of a perturbation: one, since every cell is published with its noise."""

    statuses = PerturbationStatus

    @property
    def status(self) -> PerturbationStatus:
        """``"perturbed"``: every cell is published with its noise."""
        return PerturbationStatus.PERTURBED


@dataclass(frozen=True, eq=False)
class CKMResult(_Perturbed, ResultBase):
    """Outcome of :func:`tabsdc.ckm.perturb_counts`.

    Attributes
    ----------
    original : Table
        The count table (``value`` = the original counts).
    table : Table
        The published table: ``value`` = the perturbed counts, every other column kept
        (``freq`` still holds the original count: write it with
        :func:`tabsdc._release.write_publishable`, which keeps codes and values only).
    ptable : PTable
    cell_keys : ndarray of int64
        Cell keys in units of ``10**-digits``.
    noise : ndarray of int64
        Published minus original, per cell.
    transition : ndarray of int
        The row of ``ptable.frame`` each cell took.
    digits : int
    record_keys : ndarray of int64 or None
        The drawn record keys (units of ``10**-digits``) when none were given: store them.
    record_key : str or None
        The column the record keys came from.
    seed : object
    seconds : float
    """

    original: Table
    table: Table
    ptable: PTable
    cell_keys: np.ndarray
    noise: np.ndarray
    transition: np.ndarray
    digits: int = 8
    record_keys: np.ndarray | None = None
    record_key: str | None = None
    seed: object = None
    seconds: float = 0.0

    @cached_property
    def statistics(self) -> PerturbationStatistics:
        """Utility and risk figures (:mod:`tabsdc.ckm._quality`)."""
        return perturbation_statistics(self.original.values, self.table.values, self.ptable)

    def _metrics(self) -> dict:
        changed = int(np.count_nonzero(self.noise))
        return {"cells": self.original.n_cells, "cells perturbed": changed,
                "mean |noise|": float(np.abs(self.noise).mean()) if len(self.noise) else 0.0,
                "largest |noise|": int(np.abs(self.noise).max(initial=0)),
                "p-table": self.ptable.summary().splitlines()[0],
                "record keys": key_source(self.record_key, seed=self.seed),
                "key digits": self.digits, "seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        lines = ["Cell key method on a frequency table: every cell perturbed"]
        lines += [f"  {name:<18} {value}" for name, value in self._metrics().items()]
        lines += ["  " + line for line in self.statistics.summary().splitlines()]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: original, cell key, p-table row, noise, published."""
        row = self.ptable.frame["i"].to_numpy()[self.transition]
        return pd.DataFrame({
            "original": np.round(self.original.values).astype(np.int64),
            "cell_key": key_fraction(self.cell_keys, self.digits), "row": row,
            "noise": self.noise,
            "published": np.round(self.table.values).astype(np.int64)},
            index=self.original.cells.index)

    def _dict_fields(self) -> dict:
        return {"cells": self.original.n_cells,
                "cells_perturbed": int(np.count_nonzero(self.noise)),
                "ptable": {k: v for k, v in self.ptable.parameters.items()
                           if isinstance(v, (int, float, str, bool)) or v is None},
                **key_fields(self.record_key, seed=self.seed),
                "digits": self.digits, "statistics": self.statistics.to_dict()}

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.ckm._plots import ptable_figure

        section = Section("Cell key method (frequency table)")
        section.add_text(
            "Every cell, totals included, is published as its count plus a noise looked up "
            "in the p-table with the cell key (the fractional part of the sum of its "
            "records' keys): the same records give the same noise in every table. Totals "
            "are perturbed on their own, so they need not equal the sum of their parts.")
        section.add_metrics(self._metrics())
        section.add_figure(ptable_figure(self.ptable), "The p-table (transition probabilities)")
        section.blocks.extend(self.statistics.to_report().blocks)
        return section


@dataclass(frozen=True, eq=False)
class MagnitudeResult(_Perturbed, ResultBase):
    """Outcome of :func:`tabsdc.ckm.perturb_magnitudes`.

    Attributes
    ----------
    original : Table
        The magnitude table (``value`` = the original sums).
    table : Table
        The published table: ``value`` = the perturbed sums, every other column kept
        (write it with :func:`tabsdc._release.write_publishable`, which keeps codes and
        values only).
    ptable : PTable
        The magnitude p-table.
    flex : FlexFunction
    noise : MagnitudeNoise
        Every step's unit and noise (:func:`tabsdc.ckm._magnitude.magnitude_noise`).
    cell_keys : ndarray of int64
        Cell keys (before scrambling) in units of ``10**-digits``.
    digits : int
    base : str
        What scaled the noise (``top``, ``mean``, ``range``, ``value``).
    small_ptable : PTable or None
        The small-value p-table (separation).
    parity, include_zeros : bool
    mu_c : float
    sensitive : ndarray of bool
        Cells flagged by the rules (they got ``mu_c``).
    record_keys : ndarray of int64 or None
        The drawn record keys when none were given: store them.
    record_key : str or None
    seed : object
    seconds : float
    """

    original: Table
    table: Table
    ptable: PTable
    flex: FlexFunction
    noise: MagnitudeNoise
    cell_keys: np.ndarray
    digits: int
    base: str
    small_ptable: PTable | None
    parity: bool
    include_zeros: bool
    mu_c: float
    sensitive: np.ndarray
    record_keys: np.ndarray | None = None
    record_key: str | None = None
    seed: object = None
    seconds: float = 0.0

    @property
    def deviations(self) -> np.ndarray:
        """Published minus original, per cell."""
        return self.table.values - self.original.values

    @cached_property
    def distances(self) -> pd.DataFrame:
        """``d1 = |y - x|`` and ``d2 = |y - x| / |x|`` summarised (cells published as 0 left
        out), as :func:`tabsdc.ckm._quality.distance_summary`."""
        x, y = self.original.values, self.table.values
        summary = distance_summary(np.abs(x), np.abs(x) + np.abs(y - x))
        return summary[["d1", "d2"]]

    def _metrics(self) -> dict:
        deviation = self.deviations
        flex = self.flex
        return {"cells": self.original.n_cells,
                "cells perturbed": int(np.count_nonzero(deviation)),
                "mean |relative deviation|": float(self.distances.at["Mean", "d2"]),
                "largest |relative deviation|": float(self.distances.at["Max", "d2"]),
                "noise scaled by": (f"top {flex.top_k} contributions" if self.base == "top"
                                    else self.base),
                "flex function": (f"sigma_1 {flex.small:g}" + (
                    f", sigma_0 {flex.large:g}, z_f {flex.flex_point:g}, q {flex.q:g}"
                    if flex.large is not None else "")),
                "epsilon": ", ".join(f"{e:g}" for e in flex.epsilon),
                "separation point z_s": round(self.noise.separation, 6),
                "cells from the small-value p-table": int(self.noise.small.sum()),
                "sensitive cells (mu_c)": f"{int(self.sensitive.sum())} (mu_c {self.mu_c:g})",
                "parity": self.parity, "zeros in the cell keys": self.include_zeros,
                "record keys": key_source(self.record_key, seed=self.seed),
                "key digits": self.digits, "seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        lines = ["Cell key method on a magnitude table: every cell perturbed"]
        lines += [f"  {name:<34} {value}" for name, value in self._metrics().items()]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: original, cell key, each step's unit and noise, published."""
        frame = pd.DataFrame({"original": self.original.values,
                              "cell_key": key_fraction(self.cell_keys, self.digits)},
                             index=self.original.cells.index)
        for j in range(self.noise.delta.shape[1]):
            frame[f"delta{j + 1}"] = self.noise.delta[:, j]
            frame[f"v{j + 1}"] = self.noise.v[:, j]
        frame["small_ptable"] = self.noise.small
        frame["sensitive"] = self.sensitive
        frame["published"] = self.table.values
        return frame

    def _dict_fields(self) -> dict:
        metrics = self._metrics()
        return {"cells": metrics["cells"], "cells_perturbed": metrics["cells perturbed"],
                "base": self.base, "top_k": self.flex.top_k,
                "flex": {"small": self.flex.small, "large": self.flex.large,
                         "flex_point": self.flex.flex_point, "q": self.flex.q,
                         "epsilon": list(self.flex.epsilon)},
                "separation_point": self.noise.separation, "parity": self.parity,
                "include_zeros": self.include_zeros, "mu_c": self.mu_c,
                "sensitive_cells": int(self.sensitive.sum()),
                **key_fields(self.record_key, seed=self.seed),
                "digits": self.digits,
                "distances": {k: {q: float(x) for q, x in col.items()}
                              for k, col in self.distances.items()}}

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.ckm._plots import ptable_figure

        section = Section("Cell key method (magnitude table)")
        section.add_text(
            "Every cell, totals included, is published as its sum plus a noise: a p-table "
            "value read with the (scrambled) cell key, times a unit made from the cell's "
            "largest contributions and the flex function. The same records give the same "
            "noise in every table; totals are perturbed on their own.")
        section.add_metrics(self._metrics())
        section.add_table(self.distances.rename_axis("statistic").reset_index(),
                          "Absolute (d1) and relative (d2) deviations")
        section.add_figure(ptable_figure(self.ptable), "The p-table (transition probabilities)")
        return section
