"""The cell key method at census scale: record keys, cell keys and noise for an 8-dimension
count table.

Synthetic census records: 8 dimensions with 2, 10, 6, 5, 4, 3, 8 and 3 codes (a flat total
each: 997,920 cells with every total, 172,800 interior), codes drawn with skewed
probabilities so that many cells are small or empty; record keys drawn with 8 digits. Timed
phases: drawing the keys, and :func:`tabsdc.ckm.perturb_counts` (the count table with every
total, the cell keys by exact integer sums, the noise lookup). Every published cell is
checked: zero stays zero, no count in 1..js, ``|noise| <= D``. Peak memory is the process's
peak resident set (``ru_maxrss``), which includes the synthetic data.

With ``--dask N`` the records are a ``dask.dataframe`` of ``N`` partitions, each drawn
when dask computes it (its own seed; its keys stored in the partition as a column), so the
records are never all in memory: the count table and the cell keys are computed partition
by partition (:mod:`tabsdc._microdata_dask`).

Usage::

    python benchmarks/bench_ckm.py --quick            # 10^6 records
    python benchmarks/bench_ckm.py --records 10000000 # 10^7 records
    python benchmarks/bench_ckm.py --records 100000000 --dask 100   # 10^8, out of core
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from tabsdc.ckm import build_ptable, draw_record_keys, key_fraction, perturb_counts

#: Codes per dimension.
SIZES = (2, 10, 6, 5, 4, 3, 8, 3)


def census(records: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {}
    for d, size in enumerate(SIZES):
        weights = rng.pareto(1.0, size) + 0.05
        codes = np.array([f"d{d}c{c}" for c in range(size)])
        drawn = rng.choice(size, records, p=weights / weights.sum())
        columns[f"d{d}"] = pd.Categorical(codes[drawn])
    return pd.DataFrame(columns)


def census_partition(records: int, seed: int) -> pd.DataFrame:
    """One partition of census records with its record keys (8 digits)."""
    data = census(records, seed)
    data["rkey"] = key_fraction(draw_record_keys(records, seed=seed + 10**6))
    return data


def lazy_census(records: int, partitions: int):
    """A dask frame of ``partitions`` partitions drawn when computed (never all in memory)."""
    import dask.dataframe as dd

    sizes = np.full(partitions, records // partitions)
    sizes[: records % partitions] += 1
    return dd.from_map(census_partition, sizes.tolist(), list(range(partitions)),
                       meta=census_partition(0, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="10^6 records")
    parser.add_argument("--dask", type=int, metavar="N",
                        help="records as a dask frame of N lazily drawn partitions")
    args = parser.parse_args()
    records = 1_000_000 if args.quick else args.records
    ptable = build_ptable(5, 3, js=2, pstay=0.5)

    start = time.perf_counter()
    if args.dask:
        data = lazy_census(records, args.dask)
    else:
        data = census(records)
        data["rkey"] = key_fraction(draw_record_keys(records, seed=2))
    key_seconds = time.perf_counter() - start

    start = time.perf_counter()
    result = perturb_counts(data, list(data.columns[:-1]), ptable, record_key="rkey")
    ckm_seconds = time.perf_counter() - start

    x, y = result.original.values, result.table.values
    assert (y[x == 0] == 0).all() and not np.isin(y, [1, 2]).any()
    assert (np.abs(y - x) <= 5).all()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    frame = pd.DataFrame([{
        "records": records, "partitions": args.dask or 1, "dimensions": len(SIZES),
        "cells": result.original.n_cells,
        "non-empty cells": int(np.count_nonzero(x)), "cells perturbed":
        int(np.count_nonzero(result.noise)), "keys [s]": round(key_seconds, 2),
        "perturb_counts [s]": round(ckm_seconds, 1), "peak RSS [MiB]": round(peak)}])
    print(frame.T.to_string(header=False))


if __name__ == "__main__":
    main()
