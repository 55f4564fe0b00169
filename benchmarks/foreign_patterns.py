"""Suppression patterns made elsewhere, on the instances of :mod:`large_instances`.

An office audits patterns it did not make: last year's release, a pattern from tau-ARGUS,
sdcTable or GaussSuppression. ``bench_audit.py`` audits three kinds, each as a published
table with no witnesses from whoever made it:

* **GaussSuppression 1.2.3** (Statistics Norway, MIT) on the instance's table with the
  toolkit's primaries passed to it as its primaries: the recorded patterns in
  ``data/gausssuppression/`` (made by ``gauss_pattern.R`` there; see its README);
* the toolkit's own methods, their witnesses dropped (:func:`method_pattern`);
* random suppressions (:func:`random_pattern`): primaries plus a share of other cells,
  usually exposing many primaries;
* **saved patterns** of the toolkit's slower methods (:func:`saved_pattern`): the heuristic's
  pattern of the 114,912-cell 3-D table of ``bench_suppression.py`` part (iii) (``3d_115k``,
  :func:`table_3d`), made once by :func:`save_pattern` into ``data/patterns/`` (minutes of
  routing), so that its audit is benchmarked without remaking it. It is protected, and its
  protection is made of routed flows, not of hypercubes.

Usage (making the GaussSuppression inputs and pattern; needs R with GaussSuppression)::

    python benchmarks/foreign_patterns.py 4d_20k     # writes data/gausssuppression/4d_20k.csv
    python benchmarks/foreign_patterns.py heuristic:3d_115k   # writes data/patterns/...
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_table_rules import synthetic  # noqa: E402
from large_instances import INSTANCES, build_table, records  # noqa: E402

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules  # noqa: E402

__all__ = ["GAUSS", "SAVED", "gauss_pattern", "instance_table", "method_pattern",
           "random_pattern", "save_pattern", "saved_pattern", "table_3d", "write_gauss_inputs"]

#: The recorded GaussSuppression patterns (one CSV of suppressed cells per instance).
GAUSS = Path(__file__).resolve().parent / "data" / "gausssuppression"

#: The saved patterns of the toolkit's slower methods (one CSV of hidden cells each).
SAVED = Path(__file__).resolve().parent / "data" / "patterns"


def table_3d() -> Table:
    """The 114,912-cell 3-D table of ``bench_suppression.py`` part (iii): 1,000,000 records
    (activity 3 levels x region 2 levels x 15 size classes), p% (p = 10) and frequency 3."""
    data, levels = synthetic(1_000_000)
    hierarchies = {dim: Hierarchy.from_levels(data[cols]) for dim, cols in levels.items()}
    table = Table.from_microdata(data, list(hierarchies), "turnover", hierarchies=hierarchies,
                                 top=2)
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


def instance_table(name: str) -> Table:
    """The table of an instance: ``3d_115k`` (:func:`table_3d`) or one of
    :data:`large_instances.INSTANCES`."""
    if name == "3d_115k":
        return table_3d()
    if name not in INSTANCES:
        raise ValueError(f"unknown instance {name!r}; choose 3d_115k or one of "
                         f"{', '.join(INSTANCES)}")
    return build_table(records(name))


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


def _saved_path(method: str, name: str) -> Path:
    return SAVED / f"{method}_{name}.csv.gz"


def save_pattern(method: str, name: str, time_limit: float = 3600) -> Path:
    """Protect the instance's table by ``method`` and save its secondaries (the codes of
    each cell with status ``m``); refuses a pattern its own audit does not pass."""
    from tabsdc.suppression import suppress

    result = suppress(instance_table(name), method, time_limit=time_limit, progress=print)
    if not result.protected:
        raise RuntimeError(f"{method} on {name}: the pattern does not pass its audit")
    print(result.summary())
    cells = result.table.cells
    SAVED.mkdir(parents=True, exist_ok=True)
    path = _saved_path(method, name)
    cells.loc[cells["status"] == "m"].index.to_frame().to_csv(path, index=False)
    return path


def saved_pattern(method: str, name: str, table: Table | None = None) -> Table | None:
    """The instance's table with the saved secondaries of ``method`` (status ``m``); None
    when no pattern was saved for it."""
    path = _saved_path(method, name)
    if not path.exists():
        return None
    table = instance_table(name) if table is None else table
    secondary = pd.read_csv(path, dtype=str)
    at = table.cells.index.get_indexer(pd.MultiIndex.from_frame(secondary[list(table.dims)]))
    if (at < 0).any():
        raise ValueError(f"{path.name}: {int((at < 0).sum())} cells not in the table")
    status = table.cells["status"].to_numpy().copy()
    if (status[at] == "u").any():
        raise ValueError(f"{path.name}: a secondary is a primary of the table")
    status[at] = "m"
    return table.with_columns(status=status)


def main(names: list[str]) -> None:
    for name in names:
        if ":" in name:
            print(save_pattern(*name.split(":")))
            continue
        with tempfile.TemporaryDirectory() as directory:
            write_gauss_inputs(build_table(records(name)), Path(directory))
            subprocess.run(["Rscript", str(GAUSS / "gauss_pattern.R"), directory,
                            str(GAUSS / f"{name}.csv")], check=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["4d_5k", "4d_20k"])
