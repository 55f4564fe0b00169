"""Information loss of every suppression method against the certified lower bound.

For each instance, cost (``value``, ``count``) and method: the method's time (the final
audit and the bound included: :func:`tabsdc.suppression.suppress` as a user calls it),
status, secondary cells, their value, the cost of the pattern, the certified lower bound
of that run (:mod:`tabsdc.suppression._bound`), and the ratio of the cost to the **best**
bound of the instance and cost (every run's bound is valid for all patterns, so the largest
one is used for every row), and the audit's verdict. GaussSuppression's recorded patterns
(``data/gausssuppression/<instance>.csv``, made by ``foreign_patterns.py``) are added where
present, their cost measured on the same table and set against the same bound (they are
not audited here: ``bench_audit.py --foreign`` does that).

Instances: those of :mod:`large_instances` plus ``4d_5k`` (5,184 cells, 1,059 primaries)
and ``4d_20k`` (21,840 cells, 5,860 primaries), the smaller 4-D tables GaussSuppression's
patterns were made for, and ``3d_8k`` (9,600 cells, 2,988 primaries) and ``2d_7k`` (6,875
cells, 2,411 primaries), mid-size tables of three and two dimensions.

Usage::

    python benchmarks/bench_quality.py [--instances=4d_5k,4d_20k]
        [--methods=hypercube,heuristic,auto] [--costs=value,count] [--time-limit=SECONDS]
        [--n-jobs=N]
    python benchmarks/bench_quality.py --small [--time-limit=SECONDS]

``--small``: how far below the optimum the bound itself sits, on the 260-cell 3-D tables
of the tests (``small_hierarchical_table``, seeds 4, 5 and 9), where it converges: the
bound every non-optimal method reports (the LP relaxation with capacity cuts, run until it
converges or for two minutes), the optimal method's pattern within the time limit (default
300 s) and its master MILP's bound, and the ratio of the optimum to the LP bound (a range
when the optimal method did not prove its pattern). No pattern can be nearer its LP bound
than the optimum is.

Each (instance, cost, method) runs in a fresh process, one after another; ``--n-jobs`` is
passed to ``suppress`` (processes for the method's parallel steps and the final audit).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests, for --small
sys.path.insert(0, str(Path(__file__).parent))
from harness import markdown_table  # noqa: E402
from large_instances import INSTANCES, Instance, build_table, records  # noqa: E402

INSTANCES.setdefault("4d_5k", Instance(8_000, 5, (2, 3, 3), (3, 4), (3, 2)))
INSTANCES.setdefault("4d_20k", Instance(30_000, 21, (3, 4, 3), (4, 4), (4, 3)))
#: Mid-size tables of fewer dimensions, where ``auto`` runs the modular method: 9,600 cells
#: (2,988 primaries) in three dimensions, 6,875 (2,411) in two.
INSTANCES.setdefault("3d_8k", Instance(20_000, 7, (3, 4, 4), (4, 5), (5,)))
INSTANCES.setdefault("2d_7k", Instance(20_000, 9, (4, 5, 5), (6, 8), ()))

ORDER = ("2d_7k", "3d_8k", "4d_5k", "4d_20k", "4d_40k", "4d_100k", "5d_130k", "4d_1m")
METHODS = ("auto", "optimal", "heuristic", "modular", "hypercube")
GAUSS = Path(__file__).parent / "data" / "gausssuppression"
#: ``--small``: the seeds of ``small_hierarchical_table``, the seconds the LP bound may take
#: to converge (a few on these tables), and the optimal method's default time limit.
SMALL_SEEDS = (4, 5, 9)
SMALL_BOUND_SECONDS = 120.0
SMALL_TIME_LIMIT = 300.0


def run_one(name: str, method: str, cost: str, time_limit: float | None,
            n_jobs: int = 1) -> dict:
    """Build and protect one instance in this process; the figures as a dict."""
    from tabsdc.suppression import suppress

    table = build_table(records(name))
    start = time.perf_counter()
    result = suppress(table, method, cost=cost, time_limit=time_limit, n_jobs=n_jobs,
                      progress=lambda line: print("   ", line, file=sys.stderr))
    seconds = time.perf_counter() - start
    totals = result.totals()
    if result.status == "no pattern":  # nothing to count: the time limit came first
        totals = dict.fromkeys(totals, np.nan)
    return {
        "instance": name, "cells": table.n_cells,
        "primaries": int((table.cells["status"] == "u").sum()), "cost": cost,
        "method": result.method if method != "auto" else f"auto ({result.method})",
        "status": result.status, "seconds": round(seconds, 1),
        "secondaries": totals["secondary cells"],
        "secondary value": totals["secondary value"],
        "objective": totals["objective (cost of secondaries)"],
        "bound": result.stats.bound, "bound from": result.stats.bound_how,
        "audit": ("clean" if result.protected else
                  "none" if result.audit is None else "FAILED"),
    }


def gauss_rows(name: str) -> list[dict]:
    """GaussSuppression's recorded pattern of ``name`` (none when not in benchmarks/)."""
    path = GAUSS / f"{name}.csv"
    if not path.exists():
        return []
    table = build_table(records(name))
    hidden = pd.read_csv(path, dtype=str, keep_default_na=False)
    dims = list(table.cells.index.names)
    keys = pd.MultiIndex.from_frame(hidden[dims])
    position = table.cells.index.get_indexer(keys)
    secondary = np.zeros(table.n_cells, dtype=bool)
    secondary[position[(position >= 0) & (hidden["primary"] != "TRUE").to_numpy()]] = True
    secondary &= table.cells["status"].to_numpy() != "u"
    values = np.abs(table.values)
    return [{"instance": name, "cells": table.n_cells,
             "primaries": int((table.cells["status"] == "u").sum()), "cost": cost,
             "method": "GaussSuppression 1.2.3 (recorded)", "status": "recorded",
             "seconds": np.nan, "secondaries": int(secondary.sum()),
             "secondary value": round(float(values[secondary].sum())),
             "objective": float(values[secondary].sum() if cost == "value"
                                else secondary.sum()),
             "bound": np.nan, "bound from": "", "audit": "see bench_audit.py --foreign"}
            for cost in ("value", "count")]


def small_rows(time_limit: float) -> list[dict]:
    """The ``--small`` table (module text): one row per seed and cost."""
    from tabsdc._progress import Deadline
    from tabsdc.suppression import suppress
    from tabsdc.suppression._bound import lower_bound
    from tabsdc.suppression._costs import cell_costs
    from tabsdc.suppression._problem import suppression_problem
    from tests.tabsdc.test_parallel import small_hierarchical_table

    rows = []
    for seed in SMALL_SEEDS:
        table = small_hierarchical_table(seed)
        for cost in ("value", "count"):
            problem = suppression_problem(table, cell_costs(table, cost))
            budget = Deadline(SMALL_BOUND_SECONDS)
            bound = lower_bound(problem.table.A, problem.reqs, problem.attacker(budget),
                                problem.cost, problem.fixed_on, problem.fixed_off,
                                deadline=budget, unit=problem.cost_unit)
            lp = bound.value * problem.cost_unit
            start = time.perf_counter()
            result = suppress(table, "optimal", cost=cost, time_limit=time_limit)
            seconds = time.perf_counter() - start
            best = result.totals()["objective (cost of secondaries)"]
            proven = result.status == "optimal"
            low = best if proven else result.stats.bound
            rows.append({
                "table": f"seed {seed}", "cells": table.n_cells, "cost": cost,
                "LP bound": round(lp, 1), "converged": bound.converged,
                "optimal method": f"{result.status}, {seconds:.0f} s",
                "pattern": round(best, 1), "MILP bound": round(result.stats.bound, 1),
                "optimum / LP bound": (f"{best / lp:.2f}" if proven
                                       else f"{low / lp:.2f}-{best / lp:.2f}"),
            })
            print(rows[-1], file=sys.stderr)
    return rows


def main(argv: list[str]) -> None:
    options = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "")
                   for a in argv if a.startswith("--"))
    if "small" in options:
        limit = float(options.get("time-limit", SMALL_TIME_LIMIT))
        print(markdown_table(pd.DataFrame(small_rows(limit))))
        return
    names = options.get("instances", "4d_5k,4d_20k").split(",")
    methods = options.get("methods", ",".join(METHODS)).split(",")
    costs = options.get("costs", "value,count").split(",")
    limit = float(options["time-limit"]) if "time-limit" in options else None
    n_jobs = int(options.get("n-jobs", 1))
    if "child" in options:  # one run, figures as JSON on stdout
        print(json.dumps(run_one(names[0], methods[0], costs[0], limit, n_jobs)))
        return
    rows = []
    for name in names:
        if name not in INSTANCES:
            raise SystemExit(f"unknown instance {name!r}: {', '.join(INSTANCES)}")
        for cost in costs:
            for method in methods:
                child = [sys.executable, __file__, f"--instances={name}",
                         f"--methods={method}", f"--costs={cost}", "--child=1",
                         f"--n-jobs={n_jobs}",
                         *([f"--time-limit={limit:g}"] if limit is not None else [])]
                out = subprocess.run(child, stdout=subprocess.PIPE, text=True,
                                     check=True).stdout
                rows.append(json.loads(out.strip().splitlines()[-1]))
                print(rows[-1], file=sys.stderr)
        rows += [row for row in gauss_rows(name) if row["cost"] in costs]
    frame = pd.DataFrame(rows)
    best = frame.groupby(["instance", "cost"])["bound"].transform("max")
    frame["best bound"] = best
    frame["ratio"] = (frame["objective"] / best).round(2)
    frame["objective"] = frame["objective"].round()
    frame["secondary value"] = frame["secondary value"].round()
    frame["bound"] = frame["bound"].round()
    frame["best bound"] = frame["best bound"].round()
    print(markdown_table(frame.drop(columns=["bound from"])))
    print()
    print(markdown_table(frame[["instance", "cost", "method", "bound from"]]))


if __name__ == "__main__":
    main(sys.argv[1:])
