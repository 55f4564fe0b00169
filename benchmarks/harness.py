"""Shared timing harness: every benchmark prints one table with the same columns.

Columns: instance, method, time [s], peak memory [MiB] (the process's resident memory at its
peak during the run, above what it held before), objective, gap, and the ratio of this row's
time to its baseline's time measured in the same run (``baseline`` names the row of the same
instance to compare with).

The memory is sampled by a thread reading ``/proc/self/statm`` (NaN where that is missing),
not traced: ``tracemalloc`` slows every Python allocation, most where the code makes many
small arrays, and so distorts both the times and their ratios (the insider attack on a
126,000-cell random pattern took 239 s alone and about 650 s traced). The resident memory
also holds what the solvers allocate, which tracing does not see; processes started by the
run (``n_jobs``) are not counted.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["Measurement", "measure", "print_table", "SHARED_DATA", "shared_data"]

#: The shared data folder beside the repository (``../shared/data``): peers' outputs and the
#: larger benchmark instances. Only benchmarks read it; tests and examples never do.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: Seconds between two samples of the resident memory.
SAMPLE_SECONDS = 0.02


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
    """Run ``fn`` once, timing it and recording its peak resident memory (module text)."""
    before = _resident_bytes()
    peak = [before or 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            peak[0] = max(peak[0], _resident_bytes() or 0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    try:
        result = fn()
    finally:
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
    peak[0] = max(peak[0], _resident_bytes() or 0)
    return Measurement(
        instance,
        method,
        seconds,
        float("nan") if before is None else (peak[0] - before) / 2**20,
        objective(result) if objective else None,
        gap(result) if gap else None,
        baseline,
        result,
    )


def _resident_bytes() -> int | None:
    """The process's resident memory in bytes (None without ``/proc``)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


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
