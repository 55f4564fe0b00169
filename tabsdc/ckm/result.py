"""The result of the cell key method on a count table."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tabsdc.ckm.keys import key_fraction
from tabsdc.ckm.ptable import PTable
from tabsdc.ckm.quality import PerturbationStatistics, perturbation_statistics
from tabsdc.table import Table

if TYPE_CHECKING:
    from sdcreport import Section

__all__ = ["CKMResult"]


@dataclass(frozen=True, eq=False)
class CKMResult:
    """Outcome of :func:`tabsdc.ckm.perturb_counts`.

    Attributes
    ----------
    original : Table
        The count table (``value`` = the original counts).
    table : Table
        The published table: ``value`` = the perturbed counts, every other column kept
        (``freq`` still holds the original count: write it with
        :func:`tabsdc.release.write_publishable`, which keeps codes and values only).
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

    @property
    def status(self) -> str:
        """``"perturbed"``: every cell is published with its noise."""
        return "perturbed"

    @cached_property
    def statistics(self) -> PerturbationStatistics:
        """Utility and risk figures (:mod:`tabsdc.ckm.quality`)."""
        return perturbation_statistics(self.original.values, self.table.values, self.ptable)

    def _metrics(self) -> dict:
        changed = int(np.count_nonzero(self.noise))
        return {"cells": self.original.n_cells, "cells perturbed": changed,
                "mean |noise|": float(np.abs(self.noise).mean()) if len(self.noise) else 0.0,
                "largest |noise|": int(np.abs(self.noise).max(initial=0)),
                "p-table": self.ptable.summary().splitlines()[0],
                "record keys": (f"column {self.record_key!r}" if self.record_key
                                else f"drawn (seed {self.seed})"),
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

    def to_dict(self) -> dict:
        return {"status": self.status, "seconds": self.seconds,
                "cells": self.original.n_cells,
                "cells_perturbed": int(np.count_nonzero(self.noise)),
                "ptable": {k: v for k, v in self.ptable.parameters.items()
                           if isinstance(v, (int, float, str, bool)) or v is None},
                "record_key": self.record_key,
                "seed": self.seed if isinstance(self.seed, int) else None,
                "digits": self.digits, "statistics": self.statistics.to_dict()}

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc.ckm.plots import ptable_figure

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
