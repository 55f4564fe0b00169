"""Suppression of large hierarchical tables (10^5-10^6 cells), next to GaussSuppression.

Instances from :mod:`large_instances` (``4d_100k``, ``4d_1m`` are the records of
``../shared/data/scale/``, ``5d_130k`` a 5-D one); rules p% (p = 15) and frequency 3; cost
= value. For each instance and method the table gives the time to build the table, the
time of the method, the time of the independent audit of its pattern (every hidden cell's
interval, :func:`tabsdc.audit.audit`, with the method's witnesses checked on the table;
the last column says how each hidden cell's interval was settled), the peak resident
memory of the process (``ru_maxrss``: numpy, pandas and HiGHS together), the secondary
cells and the audit's verdict; GaussSuppression's recorded figures on the same records
(``../shared/data/scale/README.md``) follow.

Usage::

    python benchmarks/bench_large_tables.py [INSTANCE ...] [--methods=hypercube,heuristic]
        [--time-limit=SECONDS] [--n-jobs=N] [--no-audit=1] [--audit-alone=1]

Each (instance, method) runs in a fresh process, so every peak memory is that run's own.
``--no-audit=1`` times the method alone: the final audit :func:`tabsdc.suppression.suppress`
runs is left out of that process (the ``audit`` column then says ``not run``); the method's
own checks (for the hypercube method every certificate against the relations) still run.
``--audit-alone=1`` also audits the pattern as a published table with no witnesses from
the method: the audit searches hypercubes of hidden cells itself (``witnesses="search"``),
what an office auditing a table protected elsewhere would run (``alone`` columns).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from harness import markdown_table  # noqa: E402
from large_instances import INSTANCES, build_table, records  # noqa: E402

#: GaussSuppression 1.2.3 on the same records (../shared/data/scale/README.md).
GAUSS = {
    "4d_100k": "did not finish in 75 min (a third of its elimination loop), 11.8 GiB peak",
    "4d_1m": "not run (4d_100k already did not finish)",
    "5d_130k": "not run",
}


def run_one(name: str, method: str, time_limit: float | None, n_jobs: int,
            audited: bool = True, alone: bool = False) -> dict:
    """Build, suppress and audit one instance in this process; the figures as a dict."""
    import tabsdc.suppression
    from tabsdc.audit import audit
    from tabsdc.suppression import suppress

    if not audited:  # this process only: the method without the final audit
        tabsdc.suppression.audit = lambda *args, **kwargs: None

    start = time.perf_counter()
    table = build_table(records(name))
    build = time.perf_counter() - start
    primaries = int((table.cells["status"] == "u").sum())
    lines: list[str] = []
    result = suppress(table, method, time_limit=time_limit, n_jobs=n_jobs,
                      progress=lambda line: (lines.append(line), print("   ", line,
                                                                       file=sys.stderr)))
    audit_seconds = result.audit.seconds if result.audit is not None else np.nan
    figures = {
        "instance": name, "cells": table.n_cells, "primaries": primaries,
        "method": result.method, "status": result.status,
        "build s": round(build, 1),
        "method s": round(result.seconds - (0 if np.isnan(audit_seconds) else audit_seconds),
                          1),
        "audit s": round(audit_seconds, 1),
        "peak MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "secondaries": int(result.secondary.sum()),
        "hidden": int(result.suppressed.sum()),
        "audit": ("clean" if result.protected else "not run" if not audited else
                  "none" if result.audit is None else "FAILED"),
        "audit bounds": "" if result.audit is None else _settled_by(result.audit),
    }
    if alone:
        verdict = audit(result.table, witnesses="search", n_jobs=n_jobs,
                        progress=lambda line: print("   ", line, file=sys.stderr))
        figures.update({
            "alone s": round(verdict.seconds, 1),
            "alone": "clean" if verdict.protected else "FAILED",
            "alone bounds": _settled_by(verdict),
            "peak MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})
    return figures


def _settled_by(verdict) -> str:
    """How the audit ``verdict`` settled the hidden cells, e.g. ``"9 witness, 1 derived"``."""
    return ", ".join(f"{n:,} {how}" for how, n in
                     verdict.frame["solver_status"].value_counts().items())


def main(argv: list[str]) -> None:
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
    names = [a for a in argv if not a.startswith("--")] or ["4d_100k"]
    methods = options.get("methods", "hypercube").split(",")
    if "child" in options:  # one run, figures as JSON on stdout
        name, method = names[0], methods[0]
        limit = float(options["time-limit"]) if "time-limit" in options else None
        print(json.dumps(run_one(name, method, limit, int(options.get("n-jobs", "1")),
                                 audited="no-audit" not in options,
                                 alone="audit-alone" in options)))
        return
    rows = []
    for name in names:
        if name not in INSTANCES:
            raise SystemExit(f"unknown instance {name!r}: {', '.join(INSTANCES)}")
        for method in methods:
            child = [sys.executable, __file__, name, f"--methods={method}", "--child=1",
                     *[f"--{k}={v}" for k, v in options.items()
                       if k in ("time-limit", "n-jobs", "no-audit", "audit-alone")]]
            out = subprocess.run(child, capture_output=False, stdout=subprocess.PIPE,
                                 text=True, check=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["GaussSuppression 1.2.3"] = frame["instance"].map(GAUSS)
    print(markdown_table(frame))


if __name__ == "__main__":
    main(sys.argv[1:])
