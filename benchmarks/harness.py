"""Shared timing harness: every benchmark prints one table with the same columns.

Columns: instance, method, time [s], peak memory [MiB] (tracemalloc: Python and numpy
allocations), objective, gap, and the ratio of this row's time to its baseline's time
measured in the same run (``baseline`` names the row of the same instance to compare with).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Measurement", "measure", "print_table", "SHARED_DATA", "shared_data"]

#: The shared data folder beside the repository (``../shared/data``): peers' outputs and the
#: larger benchmark instances. Only benchmarks read it; tests and examples never do.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data(*parts: str) -> Path | None:
    """``SHARED_DATA / parts`` if it exists; otherwise print one line saying what is missing
    and return None, so that the benchmark leaves that part out."""
    path = SHARED_DATA.joinpath(*parts)
    if path.exists():
        return path
    print(f"skipped: {path} not found (benchmark inputs from the shared data folder beside "
          f"the repository)", flush=True)
    return None


@dataclass
class Measurement:
    instance: str
    method: str
    seconds: float
    peak_mib: float
    objective: float | None = None
    gap: float | None = None
    baseline: str | None = None
    result: Any = None


def measure(
    instance: str,
    method: str,
    fn: Callable[[], Any],
    *,
    baseline: str | None = None,
    objective: Callable[[Any], float | None] | None = None,
    gap: Callable[[Any], float | None] | None = None,
) -> Measurement:
    """Run ``fn`` once, timing it and recording its peak traced memory."""
    tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Measurement(
        instance,
        method,
        seconds,
        peak / 2**20,
        objective(result) if objective else None,
        gap(result) if gap else None,
        baseline,
        result,
    )


def print_table(rows: list[Measurement], title: str) -> pd.DataFrame:
    """Print the benchmark table (with ratio to baseline) and return it."""
    times = {(r.instance, r.method): r.seconds for r in rows}
    frame = pd.DataFrame(
        {
            "instance": [r.instance for r in rows],
            "method": [r.method for r in rows],
            "time_s": [round(r.seconds, 4) for r in rows],
            "peak_MiB": [round(r.peak_mib, 1) for r in rows],
            "objective": [r.objective for r in rows],
            "gap": [r.gap for r in rows],
            "ratio_vs_baseline": [
                round(r.seconds / times[(r.instance, r.baseline)], 3)
                if r.baseline and times.get((r.instance, r.baseline))
                else None
                for r in rows
            ],
            "baseline": [r.baseline for r in rows],
        }
    )
    print(f"\n{title}\n" + frame.to_string(index=False))
    return frame


def markdown_table(frame: pd.DataFrame) -> str:
    """The frame as a Markdown table (what ``docs/performance.md`` shows), without pandas'
    optional ``tabulate``."""
    # str of each value: pandas' astype(str) keeps a missing value as a float NaN
    cells = [[str(v) for v in row] for row in frame.to_numpy().tolist()]
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "---|" * len(frame.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])
