"""Suppression patterns made elsewhere, on the instances of :mod:`large_instances`.

An office audits patterns it did not make: last year's release, a pattern from tau-ARGUS,
sdcTable or GaussSuppression. ``bench_audit.py`` audits three kinds, each as a published
table with no witnesses from whoever made it:

* **GaussSuppression 1.2.3** (Statistics Norway, MIT) on the instance's table with the
  toolkit's primaries passed to it as its primaries: the recorded patterns in
  ``data/gausssuppression/`` (made by ``gauss_pattern.R`` there; see its README);
* the toolkit's own methods, their witnesses dropped (:func:`method_pattern`);
* random suppressions (:func:`random_pattern`): primaries plus a share of other cells,
  usually exposing many primaries.

Usage (making the GaussSuppression inputs and pattern; needs R with GaussSuppression)::

    python benchmarks/foreign_patterns.py 4d_20k     # writes data/gausssuppression/4d_20k.csv
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from large_instances import build_table, records  # noqa: E402

from tabsdc import Table  # noqa: E402

__all__ = ["GAUSS", "gauss_pattern", "method_pattern", "random_pattern", "write_gauss_inputs"]

#: The recorded GaussSuppression patterns (one CSV of suppressed cells per instance).
GAUSS = Path(__file__).resolve().parent / "data" / "gausssuppression"


def write_gauss_inputs(table: Table, directory: Path) -> None:
    """The inputs of ``gauss_pattern.R``: inner cells, one dimList per dimension, primaries."""
    directory.mkdir(parents=True, exist_ok=True)
    cells = table.cells.reset_index()
    dims = list(table.dims)
    inner = np.ones(len(cells), dtype=bool)
    for dim in dims:
        frame = table.hierarchies[dim].to_frame()
        leaves = set(frame["code"][frame["leaf"]])
        inner &= cells[dim].isin(leaves).to_numpy()
        pd.DataFrame({"levels": ["@" * (d + 1) for d in frame["depth"]],
                      "codes": frame["code"]}).to_csv(directory / f"dimlist_{dim}.csv",
                                                      index=False)
    cells.loc[inner, [*dims, "freq", "value"]].rename(columns={"value": "val"}).to_csv(
        directory / "cells.csv", index=False)
    cells.loc[cells["status"] == "u", dims].to_csv(directory / "primary.csv", index=False)


def gauss_pattern(name: str, table: Table | None = None) -> Table | None:
    """The instance's table with GaussSuppression's recorded pattern (primaries ``u``,
    secondaries ``m``); None when no pattern was recorded for it."""
    path = GAUSS / f"{name}.csv"
    if not path.exists():
        return None
    table = build_table(records(name)) if table is None else table
    suppressed = pd.read_csv(path, dtype=str)
    dims = list(table.dims)
    at = table.cells.index.get_indexer(pd.MultiIndex.from_frame(suppressed[dims]))
    if (at < 0).any():
        raise ValueError(f"{path.name}: {int((at < 0).sum())} cells not in the table")
    status = table.cells["status"].to_numpy().copy()
    primary = suppressed["primary"].str.upper().eq("TRUE").to_numpy()
    if not (status[at[primary]] == "u").all() or (status == "u").sum() != primary.sum():
        raise ValueError(f"{path.name}: its primaries are not the table's")
    status[at[~primary]] = "m"
    return table.with_columns(status=status)


def random_pattern(table: Table, share: float, *, seed: int) -> Table:
    """The primaries and a random ``share`` of the other non-empty cells hidden (``m``)."""
    rng = np.random.default_rng(seed)
    status = table.cells["status"].to_numpy().copy()
    others = np.flatnonzero((status != "u") & (table.values != 0))
    status[rng.choice(others, int(share * len(others)), replace=False)] = "m"
    return table.with_columns(status=status)


def method_pattern(table: Table, method: str, time_limit: float = 600) -> Table:
    """The pattern of one of the toolkit's methods, as a published table (no witnesses)."""
    from tabsdc.suppression import suppress

    return suppress(table, method, time_limit=time_limit).table


def main(names: list[str]) -> None:
    for name in names:
        with tempfile.TemporaryDirectory() as directory:
            write_gauss_inputs(build_table(records(name)), Path(directory))
            subprocess.run(["Rscript", str(GAUSS / "gauss_pattern.R"), directory,
                            str(GAUSS / f"{name}.csv")], check=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["4d_5k", "4d_20k"])
