"""Audit benchmarks: the interval attack, and the audit of patterns made elsewhere.

**Interval attack**: all bounds of the hidden cells of a 100 x 100 table (10 % hidden).

Compared in the same run: the audit (one kept HiGHS model per independent block, warm
re-solves after each objective change) and a cold loop of ``scipy.optimize.linprog`` calls
over the whole table with published cells fixed by their bounds (what a straightforward
implementation does). The cold loop bounds only the first ``COLD_CELLS`` hidden cells (same
polytope), so the two are compared by their rates: ``objective`` = bounds per second.

**Patterns made elsewhere** (``--foreign``; :mod:`foreign_patterns`): each pattern is audited
as a published table without witnesses from whoever made it, ``audit(table,
witnesses="search")`` (hypercubes of hidden cells looked for, the requirements they leave
settled by LPs: :mod:`tabsdc.audit._settle`) or with no witnesses at all (``"none"``: every
requirement settled by LPs). Patterns: ``gauss`` (GaussSuppression's recorded ones),
``hypercube``/``modular``/``heuristic`` (the toolkit's methods, witnesses dropped; a pattern
saved in ``data/patterns/`` is read instead of made, e.g. ``heuristic:3d_115k``, the
heuristic's pattern of the 114,912-cell 3-D table), ``random`` (the primaries and 10 % of the
other cells). Each row prints the sensitive cells,
how many are protected, exposed and not settled, and the LPs; the baseline row (``exact``)
is the audit by two LPs per hidden cell, run in the same process within ``--baseline``
seconds (its bounds per second give the ratio when it does not finish). ``--insider off``
audits against the outsider alone (``singletons=False``: no attack by the respondents of
single-contributor cells), which is what settles the sensitive cells' requirements.

Usage::

    python benchmarks/bench_audit.py [--quick]
    python benchmarks/bench_audit.py --foreign gauss:4d_5k gauss:4d_20k random:4d_100k \
        heuristic:3d_115k hypercube:4d_100k \
        [--n-jobs 2] [--dask] [--time-limit 900] [--baseline 120] [--witnesses none] \
        [--insider off]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linprog

sys.path.insert(0, str(Path(__file__).parent))
from harness import measure, print_table  # noqa: E402

from tabsdc import Table  # noqa: E402
from tabsdc.audit import IntervalAttack  # noqa: E402

COLD_CELLS = 25


def random_table(size: int, share: float, seed: int = 7) -> tuple[Table, np.ndarray]:
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    frame = pd.DataFrame({"r": r.ravel().astype(str), "c": c.ravel().astype(str),
                          "value": rng.integers(1, 100, size * size).astype(float)})
    table = Table.from_aggregated(frame, ["r", "c"])
    interior = ~table.total_cells
    hidden = np.zeros(table.n_cells, dtype=bool)
    hidden[rng.choice(np.flatnonzero(interior), int(share * interior.sum()), replace=False)] = True
    return table, hidden


def warm(table: Table, hidden: np.ndarray) -> int:
    attack = IntervalAttack(table.A, table.b, table.values, hidden, table.cells["lb"].to_numpy(),
                            table.cells["ub"].to_numpy())
    return attack.intervals().n_solves


def cold(table: Table, hidden: np.ndarray, k: int) -> int:
    """Bounds of the first ``k`` hidden cells, one fresh ``linprog`` call per bound."""
    bounds = [(0, None) if h else (v, v) for h, v in zip(hidden, table.values, strict=True)]
    solves = 0
    for position in np.flatnonzero(hidden)[:k]:
        for sign in (1.0, -1.0):
            c = np.zeros(table.n_cells)
            c[position] = sign
            linprog(c, A_eq=table.A, b_eq=table.b, bounds=bounds, method="highs")
            solves += 1
    return solves


def foreign(specs: list[str], *, n_jobs: int, dask: bool, time_limit: float,
            baseline: float, witnesses: str, insider: bool = True) -> None:
    """Audit each ``kind:instance`` pattern (module text); print one table."""
    import os

    import scipy.sparse as sp
    from foreign_patterns import (
        gauss_pattern,
        instance_table,
        method_pattern,
        random_pattern,
        saved_pattern,
    )

    from tabsdc.audit import audit

    client = cluster = None
    if dask:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True)
        client = Client(cluster)
    how = "search" if witnesses == "search" else "none"
    setting = (f"witnesses={how}" + (f", dask {n_jobs} workers" if dask else
                                      f", n_jobs={n_jobs}" if n_jobs > 1 else "")
               + ("" if insider else ", outsider only"))
    rows, notes = [], []
    for spec in specs:
        kind, name = spec.split(":")
        table = instance_table(name)
        if kind == "gauss":
            table = gauss_pattern(name, table)
        elif kind == "random":
            table = random_pattern(table, 0.10, seed=1)
        else:
            saved = saved_pattern(kind, name, table)
            table = saved if saved is not None else method_pattern(table, kind)
        hidden = int(table.cells["status"].isin(["u", "m"]).sum())
        label = f"{kind}:{name} ({table.n_cells:,} cells, {hidden:,} hidden)"
        found = "search" if how == "search" else sp.csc_array((table.n_cells, 0))
        row = measure(label, f"settled, {setting}", lambda t=table, w=found: audit(
            t, witnesses=w, time_limit=time_limit, n_jobs=n_jobs, client=client,
            singletons=insider),
            baseline="exact" if baseline > 0 else None)
        result = row.result
        row.objective = len(result.exposed)
        rows.append(row)
        sensitive = result.frame["status"] == "u"
        notes.append(f"{label}: {setting}: {int(sensitive.sum()):,} sensitive, "
                     f"{int((result.frame['protected'] & sensitive).sum()):,} protected, "
                     f"{len(result.exposed):,} exposed, {len(result.not_settled):,} not "
                     f"settled; {result.lps:,} LPs, "
                     f"{result.witnesses:,} witnesses; {row.seconds:.1f} s; "
                     f"load {os.getloadavg()[0]:.2f}")
        if baseline > 0:
            exact = measure(label, "exact", lambda t=table: audit(t, time_limit=baseline))
            bounded = int(np.isfinite(exact.result.frame["upper"]).sum())
            exact.objective = len(exact.result.exposed)
            rows.append(exact)
            rate = bounded / exact.seconds
            if exact.result.complete:
                differ = int((exact.result.frame["protected"]
                              != result.frame["protected"]).sum())
                notes.append(f"{label}: verdicts of the two audits differ on {differ} cells")
            pace = (f"at that rate all take {hidden / rate:,.0f} s, "
                    f"{hidden / rate / row.seconds:.1f} x the settled audit" if bounded
                    else "not one LP over the block ended")
            notes.append(f"{label}: exact: {bounded:,} of {hidden:,} hidden cells bounded in "
                         f"{exact.seconds:.1f} s (limit {baseline:g} s; {pace}); "
                         f"load {os.getloadavg()[0]:.2f}")
        print(notes[-1], flush=True)
    print_table(rows, "Audit of patterns made elsewhere (objective = sensitive cells exposed)")
    print("\n".join(notes))
    if client is not None:
        client.close()
        cluster.close()


def main(quick: bool) -> None:
    size = 30 if quick else 100
    table, hidden = random_table(size, 0.10)
    label = f"{size}x{size}, {int(hidden.sum())} hidden"
    rows = [
        measure(label, f"cold linprog loop (first {COLD_CELLS} cells)",
                lambda: cold(table, hidden, COLD_CELLS)),
        measure(label, "kept HiGHS models (all hidden cells)", lambda: warm(table, hidden)),
    ]
    for row in rows:
        row.objective = round(row.result / row.seconds, 1)  # bounds per second
    print_table(rows, "Interval attack (objective = bounds per second)")
    print(f"speed-up in bounds per second: {rows[1].objective / rows[0].objective:.0f}x")


def _option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


if __name__ == "__main__":
    if "--foreign" in sys.argv:
        values = {_option(o, "") for o in ("--n-jobs", "--time-limit", "--baseline",
                                             "--witnesses", "--insider")}
        foreign([a for a in sys.argv[1:] if ":" in a and a not in values],
                n_jobs=int(_option("--n-jobs", "1")), dask="--dask" in sys.argv,
                time_limit=float(_option("--time-limit", "900")),
                baseline=float(_option("--baseline", "0")),
                witnesses=_option("--witnesses", "search"),
                insider=_option("--insider", "on") == "on")
    else:
        main("--quick" in sys.argv)
