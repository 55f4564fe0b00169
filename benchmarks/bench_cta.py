"""Controlled tabular adjustment: the heuristic against HiGHS's MILP alone, the Castro
instances, and MDI-CTA against L1 CTA.

(i) 2-D tables n x n (n = 50, 100, 200, 500, 1000; values 1..99, 5 % of the interior cells
    sensitive with levels 15 % of the value, weights 1 / value): ``adjust(method=
    "heuristic")`` against ``adjust(method="milp")`` (the MILP of slide 26 in HiGHS alone),
    both with the same time limit, in the same run. Goal: <= 0.5 % certified gap on
    100 x 100 within 30 s, <= 2 % on 1000 x 1000 within 10 minutes.
(ii) the 28 Castro instances (``shared/data/jj/castro``): per instance and method its cells,
    sensitive cells, time, objective, certified bound and gap, which bound it is (the LP
    relaxation's, the mass LP's, the MILP's dual bound or the Lagrangian at the final LP),
    and the independent verification (additivity, protection, bounds) of the adjustment.
(iii) MDI-CTA against L1 CTA (heuristic, mean and variance kept) on the same tables: MDI
    statistic, L1 distance, variance and correlation of the interior cells, zeros kept.

Usage::

    python benchmarks/bench_cta.py --max-size 200            # (i) up to 200 x 200, (ii), (iii)
    python benchmarks/bench_cta.py                            # everything (about 40 minutes)
    python benchmarks/bench_cta.py --parts grid --max-size 1000 --min-size 1000
    python benchmarks/bench_cta.py --parts castro --castro-methods heuristic,fixed-directions
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_suppression import grid_table  # noqa: E402
from harness import measure, print_table, shared_data  # noqa: E402

from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._datasets import load_business_survey  # noqa: E402
from tabsdc._errors import InputError, SolverError  # noqa: E402
from tabsdc.cta import adjust  # noqa: E402

SIZES = (50, 100, 200, 500, 1000)
#: Time limit (s) per grid size: the issue's goals for 100 and 1000, proportionate between.
LIMITS = {50: 10.0, 100: 30.0, 200: 60.0, 500: 180.0, 1000: 600.0}


def grids(sizes: list[int], methods: list[str]) -> None:
    rows = []
    for size in sizes:
        table = grid_table(size)
        name = f"{size}x{size} ({int((table.cells.status == 'u').sum())} sensitive)"
        limit = LIMITS[size]
        for method in methods:
            try:
                m = measure(name, method,
                            lambda table=table, method=method, limit=limit: adjust(
                                table, method, "inverse", time_limit=limit, seed=0),
                            baseline=None if method == "milp" or "milp" not in methods
                            else "milp",
                            objective=lambda r: round(r.objective, 6),
                            gap=lambda r: None if r.gap is None else round(r.gap, 6))
            except SolverError as error:
                print(f"{name} {method}: no adjustment within {limit:g} s ({error})",
                      flush=True)
                continue
            rows.append(m)
            r = m.result
            print(f"{name} {method}: limit {limit:g} s, status {r.status}, bound "
                  f"{r.bound:.6g}, certified gap "
                  f"{'n/a' if r.gap is None else f'{100 * r.gap:.3f} %'}, checks "
                  f"{'passed' if r.verification.passed else 'FAILED'}", flush=True)
    print_table(rows, "(i) 2-D tables, 5 % sensitive: heuristic vs HiGHS MILP alone "
                      "(same time limit)")


def castro_table(title: str, names: list[str], runs: dict[str, Callable]) -> None:
    """Each of ``runs`` (``{method: run(table) -> figures}``) on every Castro instance (or
    those in ``names``): one line per run as it ends, then the whole table. A run that
    raises the toolkit's ``InputError`` or ``SolverError`` is listed with the error."""
    records = []
    folder = shared_data("jj", "castro")
    if folder is None:
        return
    for path in sorted(folder.glob("*.jj")):
        if names and path.stem not in names:
            continue
        table = Table.from_jj(path)
        for method, run in runs.items():
            record = {"instance": path.stem, "cells": table.n_cells,
                      "sensitive": int((table.cells["status"] == "u").sum()), "method": method}
            start = time.perf_counter()
            try:
                figures = run(table)
            except (InputError, SolverError) as error:
                figures = {"status": type(error).__name__, "verification": str(error)[:90]}
            record.update(seconds=round(time.perf_counter() - start, 1), **figures)
            records.append(record)
            print(" ".join(f"{k}={v}" for k, v in record.items()), flush=True)
    print(f"\n{title}\n" + pd.DataFrame(records).to_string(index=False))


#: The bounds a CTA result may take its certified bound from (``details`` keys).
BOUND_SOURCES = {"lp_relaxation_bound": "LP", "mass_bound": "mass", "milp_bound": "MILP",
                 "lagrangian_bound": "final LP"}


def bound_source(result) -> str | None:
    """Which of the method's bounds the certified one is (the largest; None without)."""
    if result.bound is None:
        return None
    known = {name: result.details.get(key) for key, name in BOUND_SOURCES.items()}
    known = {name: value for name, value in known.items() if value is not None}
    return max(known, key=known.get) if known else None


def adjustment_figures(result) -> dict:
    """Status, objective, certified bound and gap, the bound's source, verification of an
    AdjustmentResult."""
    return {"status": result.status, "objective": round(result.objective, 4),
            "bound": None if result.bound is None else round(result.bound, 4),
            "gap": None if result.gap is None else f"{100 * result.gap:.2f} %",
            "bound from": bound_source(result),
            "verification": "passed" if result.verification.passed else "FAILED"}


def castro(limit: float, methods: list[str], names: list[str]) -> None:
    """Every Castro instance with each method: a verified adjustment, its bound and gap."""
    runs = {method: lambda table, method=method: adjustment_figures(
        adjust(table, method, "inverse", time_limit=limit, seed=0)) for method in methods}
    castro_table(f"(ii) Castro instances: L1 CTA, weights 1/value, time limit {limit:g} s "
                 "each", names, runs)


def mdi_vs_l1(limit: float) -> None:
    data = load_business_survey()
    survey = apply_rules(Table.from_microdata(data, ["A21", "NUTS3"], "TURNOVER"),
                         [PPercentRule(10), FrequencyRule(3)]).table
    tables = {"business survey A21 x NUTS3": survey, "grid 20x20": grid_table(20),
              "grid 50x50": grid_table(50)}
    records = []
    for name, table in tables.items():
        for label, kwargs in (("L1 CTA (mean, variance)", {"method": "heuristic",
                                                           "preserve": "mean,variance",
                                                           "time_limit": limit}),
                              ("MDI-CTA", {"method": "mdi", "time_limit": limit})):
            try:
                r = adjust(table, seed=0, **kwargs)
            except InputError as error:
                records.append({"table": name, "method": label, "error": str(error)})
                continue
            s = r.statistics.iloc[0]
            zeros = table.values == 0
            records.append({
                "table": name, "method": label, "seconds": round(r.seconds, 2),
                "MDI 2NI": round(r.figures.get("mdi_statistic", np.inf), 3),
                "L1": round(r.l1_distance, 3),
                "max rel. change": round(r.figures["max_relative_change"], 4),
                "variance ratio": round(s.variance_after / s.variance_before, 6),
                "correlation": round(s.correlation, 6),
                "zeros kept": f"{int((zeros & (r.values == 0)).sum())}/{int(zeros.sum())}",
                "passed": r.verification.passed})
    print("\n(iii) MDI-CTA vs L1 CTA on the same tables\n"
          + pd.DataFrame(records).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-size", type=int, default=1000, help="largest grid side")
    parser.add_argument("--min-size", type=int, default=50, help="smallest grid side")
    parser.add_argument("--castro-limit", type=float, default=60.0,
                        help="seconds per Castro instance")
    parser.add_argument("--castro-methods", default="heuristic",
                        help="comma-separated methods of part (ii)")
    parser.add_argument("--instances", default="",
                        help="comma-separated Castro instances (default: all 28)")
    parser.add_argument("--grid-methods", default="milp,heuristic",
                        help="comma-separated methods of part (i)")
    parser.add_argument("--parts", default="grid,castro,mdi",
                        help="comma-separated: grid, castro, mdi")
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "grid" in parts:
        grids([s for s in SIZES if args.min_size <= s <= args.max_size],
              args.grid_methods.split(","))
    if "castro" in parts:
        castro(args.castro_limit, args.castro_methods.split(","),
               [name for name in args.instances.split(",") if name])
    if "mdi" in parts:
        mdi_vs_l1(10.0)


if __name__ == "__main__":
    main()
