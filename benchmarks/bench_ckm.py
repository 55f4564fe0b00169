"""The cell key method at census scale: record keys, cell keys and noise for an 8-dimension
count table.

Synthetic census records: 8 dimensions with 2, 10, 6, 5, 4, 3, 8 and 3 codes (a flat total
each: 997,920 cells with every total, 172,800 interior), codes drawn with skewed
probabilities so that many cells are small or empty; record keys drawn with 8 digits. Timed
phases: drawing the keys, and :func:`tabsdc.ckm.perturb_counts` (the count table with every
total, the cell keys by exact integer sums, the noise lookup). Every published cell is
checked: zero stays zero, no count in 1..js, ``|noise| <= D``. Peak memory is the process's
peak resident set (``ru_maxrss``), which includes the synthetic data.

Usage::

    python benchmarks/bench_ckm.py --quick            # 10^6 records
    python benchmarks/bench_ckm.py --records 10000000 # 10^7 records
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="10^6 records")
    args = parser.parse_args()
    records = 1_000_000 if args.quick else args.records
    data = census(records)
    ptable = build_ptable(5, 3, js=2, pstay=0.5)

    start = time.perf_counter()
    keys = draw_record_keys(records, seed=2)
    data["rkey"] = key_fraction(keys)
    key_seconds = time.perf_counter() - start

    start = time.perf_counter()
    result = perturb_counts(data, list(data.columns[:-1]), ptable, record_key="rkey")
    ckm_seconds = time.perf_counter() - start

    x, y = result.original.values, result.table.values
    assert (y[x == 0] == 0).all() and not np.isin(y, [1, 2]).any()
    assert (np.abs(y - x) <= 5).all()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    frame = pd.DataFrame([{
        "records": records, "dimensions": len(SIZES), "cells": result.original.n_cells,
        "non-empty cells": int(np.count_nonzero(x)), "cells perturbed":
        int(np.count_nonzero(result.noise)), "keys [s]": round(key_seconds, 2),
        "perturb_counts [s]": round(ckm_seconds, 1), "peak RSS [MiB]": round(peak)}])
    print(frame.T.to_string(header=False))


if __name__ == "__main__":
    main()
