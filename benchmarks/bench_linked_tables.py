"""Linked tables from the business survey: joint protection against one table at a time.

Three tables from the same 9,786 companies (turnover; p% rule p = 10 and frequency rule
n = 3): activity (A10 > A21 > A88) x region (NUTS1 > NUTS2 > NUTS3), activity x size class,
region x size class. They share the activity and region margins, the size margin and the
grand total.

* joint: the set protected as one system (``suppress(TableSet)``), audited on the combined
  system (every hidden cell's interval against all three tables' relations);
* one at a time: each table protected alone with the same method, the three patterns
  published together and audited on the combined system: how many primaries the joint
  attack then discloses (interval inside the protection range).

Beside it, many small random linked sets (activity x region and activity x size of 8-15
companies, frequency rule n = 3, optimal method): in how many does protecting the tables one
at a time leave a primary disclosed through the other table, and how many primaries.

Big microdata (``--dask``): the 114,912-cell table of ``bench_table_rules.py`` built from
synthetic records written to Parquet in 16 partitions, by dask on a 2-worker ``LocalCluster``
(threads, so that the process's memory covers the workers) against the pandas build of the same
records in memory; the two tables are compared cell by cell.

Target: the joint protection audit-clean in <= 60 s. Columns as in every benchmark (time,
peak memory, objective = cost of the secondaries, gap, and the ratio of the time to
its baseline in the same run: the joint run against the heuristic on the largest table
alone, one-at-a-time against the joint run). The machine may be shared: compare times within
one run.

Usage: ``python benchmarks/bench_linked_tables.py [--quick] [--dask]`` (``--quick``: the
heuristic only, fewer random sets, 10^6 records for ``--dask`` instead of 4 x 10^6).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_table_rules import synthetic  # noqa: E402
from harness import measure, print_table  # noqa: E402

from tabsdc import (  # noqa: E402
    FrequencyRule,
    Hierarchy,
    PPercentRule,
    Table,
    TableSet,
    apply_rules,
)
from tabsdc._datasets import business_survey_hierarchies, load_business_survey  # noqa: E402
from tabsdc.audit import audit  # noqa: E402
from tabsdc.suppression import suppress  # noqa: E402

DIMS = [["A88", "NUTS3"], ["A88", "SIZE"], ["NUTS3", "SIZE"]]
RULES = [PPercentRule(p=10), FrequencyRule(n=3)]


def linked_set() -> TableSet:
    data = load_business_survey()
    linked = TableSet.from_microdata(data, DIMS, "TURNOVER",
                                     hierarchies=business_survey_hierarchies(data))
    return apply_rules(linked, RULES).table


def one_at_a_time(linked: TableSet, method: str, limit: float) -> TableSet:
    """Each table protected alone; the patterns published together."""
    protected = [suppress(table, method, cost="value", time_limit=limit).table
                 for table in linked.tables]
    return TableSet.from_tables(protected, names=linked.names)


def small_random_sets(n_sets: int) -> pd.DataFrame:
    """One-at-a-time against joint optimal protection on small random linked sets."""
    rows = []
    for seed in range(n_sets):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(8, 16))
        data = pd.DataFrame({"act": rng.choice(list("ABC"), n),
                             "reg": rng.choice(["N", "S", "E"], n),
                             "size": rng.choice(["1", "2"], n),
                             "v": np.round(rng.pareto(1.2, n) * 10 + 1)})
        tables = [apply_rules(Table.from_microdata(data, dims, "v"),
                              FrequencyRule(3, level=10)).table
                  for dims in (["act", "reg"], ["act", "size"])]
        linked = TableSet.from_tables(tables)
        separate = one_at_a_time(linked, "optimal", 60.0)
        joint = suppress(linked, "optimal", cost="value", time_limit=60.0)
        rows.append({"primaries": int((linked.combined.cells["status"] == "u").sum()),
                     "disclosed one at a time": _disclosed(audit(separate.combined)),
                     "disclosed joint": _disclosed(audit(joint.table.combined))})
    return pd.DataFrame(rows)


def _disclosed(check) -> int:
    """Primary cells the audit finds unprotected."""
    return int((check.failures["status"] == "u").sum())


def dask_build(n_records: int) -> None:
    """The pandas build in memory against the dask build from Parquet partitions."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    data, levels = synthetic(n_records)
    hierarchies = {dim: Hierarchy.from_levels(data[cols]) for dim, cols in levels.items()}
    records = data[[*levels, "turnover"]]
    instance = f"{n_records:,} records, {len(levels)} dimensions"
    with tempfile.TemporaryDirectory() as folder:
        dd.from_pandas(records, npartitions=16).to_parquet(folder)
        in_memory = measure(instance, "pandas, in memory", lambda: Table.from_microdata(
            records, list(levels), "turnover", hierarchies=hierarchies))
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                          dashboard_address=None) as cluster, Client(cluster):
            out_of_core = measure(instance, "dask, 16 Parquet partitions, 2 workers",
                                  lambda: Table.from_microdata(
                                      dd.read_parquet(folder), list(levels), "turnover",
                                      hierarchies=hierarchies, progress=print),
                                  baseline="pandas, in memory")
    print_table([in_memory, out_of_core], "Building a table from microdata: pandas and dask")
    one, other = in_memory.result.cells, out_of_core.result.cells
    sums = ["value", "cost"]  # the cost is |value|: both are float sums
    same = (one.drop(columns=sums).equals(other.drop(columns=sums))
            and np.allclose(one[sums], other[sums], rtol=1e-12, atol=0)
            and (in_memory.result.A != out_of_core.result.A).nnz == 0)
    print(f"{in_memory.result.n_cells:,} cells; identical tables (float sums to 1e-12 "
          f"relative, everything else exactly): {same}")


def main(quick: bool) -> None:
    linked = linked_set()
    primary = int((linked.combined.cells["status"] == "u").sum())
    print(f"{linked}\nprimary cells: {primary} "
          f"({', '.join(str(int((t.cells['status'] == 'u').sum())) for t in linked.tables)}"
          " per table)")
    instance = "business survey, 3 linked tables"
    rows = [measure(instance, "heuristic, A88 x NUTS3 alone",
                    lambda: suppress(linked.tables[0], "heuristic", cost="value"),
                    objective=lambda r: r.totals()["objective (cost of secondaries)"])]
    verdicts = []
    limit = 60.0
    for method in (["heuristic"] if quick else ["heuristic", "optimal"]):
        joint = measure(instance, f"{method} joint",
                        lambda m=method: suppress(linked, m, cost="value", time_limit=limit),
                        objective=lambda r: r.totals()["objective (cost of secondaries)"],
                        gap=lambda r: r.stats.gap, baseline="heuristic, A88 x NUTS3 alone")
        separate = measure(instance, f"{method} one at a time",
                           lambda m=method: one_at_a_time(linked, m, limit),
                           baseline=f"{method} joint")
        rows += [joint, separate]
        joint_check = audit(joint.result.table.combined)
        separate_check = audit(separate.result.combined)
        for name, result, check in (
                (f"{method} joint", joint.result.table, joint_check),
                (f"{method} one at a time", separate.result, separate_check)):
            status = result.combined.cells["status"]
            failures = check.failures
            verdicts.append({
                "method": name,
                "status": joint.result.stats.status if "joint" in name else "per table",
                "secondary cells": int((status == "m").sum()),
                "audit on the set": "clean" if check.protected else "NOT protected",
                "primaries disclosed": _disclosed(check),
                "exactly disclosed": int((failures["exact"]).sum()),
            })
    print_table(rows, "Linked tables: joint protection vs one table at a time")
    print("\nAudit of the three tables published together (combined system)")
    print(pd.DataFrame(verdicts).to_string(index=False))
    small = small_random_sets(10 if quick else 40)
    print(f"\n{len(small)} small random linked sets (optimal method), "
          f"{int(small['primaries'].sum())} primary cells in all:")
    print(f"  one at a time: {int((small['disclosed one at a time'] > 0).sum())} sets with a "
          f"primary disclosed, {int(small['disclosed one at a time'].sum())} primaries")
    print(f"  joint:         {int((small['disclosed joint'] > 0).sum())} sets with a primary "
          f"disclosed, {int(small['disclosed joint'].sum())} primaries")


if __name__ == "__main__":
    if "--dask" in sys.argv:
        dask_build(1_000_000 if "--quick" in sys.argv else 4_000_000)
    else:
        main("--quick" in sys.argv)
