"""Time limits of tau-ARGUS batch jobs: how long each SUPPRESS takes against its limit.

The business survey (9,786 companies) as a tau-ARGUS job (A88 x NUTS3 turnover, 2,420
cells, P(10)|FREQ(3,10): 567 primary cells), protected by one SUPPRESS command per run with
a time limit far below what the method needs. For each: the limit as tau-ARGUS means it
(OPT: the whole search; MOD: each sub-table; RND: the rounding), the wall time of the
SUPPRESS step as the log's progress lines see it (search, audit and log lines included), the
method's own search (or rounding) time, and the status (never ``optimal`` when the limit
stopped it).

Usage: ``python benchmarks/bench_argus_limits.py [--quick]`` (``--quick``: OPT and GH only).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tabsdc.io.argus._batch import run_batch  # noqa: E402
from tests.tabsdc.argus.conftest import write_survey_job  # noqa: E402

#: (SUPPRESS command, job time limit in seconds or None)
RUNS = [("OPT(1,0.5)", None), ("OPT(1,3)", None), ("MOD(1,0.05,1,1,1)", None),
        ("RND(1,5,0,0.5)", None), ("GH(1,100)", 10.0)]


def run(command: str, job_limit: float | None, folder: Path) -> dict:
    """Run the survey job with ``command``; the SUPPRESS step's wall time from the progress
    lines around it."""
    stamps: list[tuple[float, str]] = []
    arb = write_survey_job(folder, f"<SUPPRESS> {command}")
    result = run_batch(arb, time_limit=job_limit,
                       progress=lambda line: stamps.append((time.perf_counter(), line)))
    start = next(t for t, line in stamps if line.startswith("<SUPPRESS>"))
    end = next(t for t, line in stamps if t > start and line.startswith("End of batch"))
    meaning = next(line for _, line in stamps if line.startswith("time limit:"))
    ended = next(line for _, line in stamps if line.startswith("End of ") and
                 not line.startswith("End of batch"))
    search = re.search(r", (?:search|rounding) ([\d.]+) s\)", ended)
    details = result.tables[0].outcome.details
    return {"command": command, "job limit [s]": job_limit, "limit": meaning,
            "step [s]": round(end - start, 1),
            "search [s]": float(search.group(1)) if search else None,
            "status": details.get("status"), "passed": result.tables[0].outcome.passed}


def main() -> None:
    runs = RUNS[:2] + RUNS[-1:] if "--quick" in sys.argv else RUNS
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, (command, job_limit) in enumerate(runs):
            rows.append(run(command, job_limit, Path(tmp) / str(number)))
            print(rows[-1], flush=True)
    with pd.option_context("display.width", 200, "display.max_colwidth", 120):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
