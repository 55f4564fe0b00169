"""MDAV microaggregation and distance-based record linkage at scale.

Instances: ``exp(N(0, 1))`` data (R's ``rlnorm``) with 5 columns and n = 10,000, 30,000 and
100,000 records (``--quick``: 2,000). Baseline for MDAV: sdcMicro 5.8.1's C++ MDAV
(``microaggregation(x, method = "mdav", aggr = 3)``) timed on the same kind of 2-core machine
on the same kind of data (shared/data/peers/README.md: 0.57 s, 7.0 s and 110.6 s); those
times are published figures, not re-measured here, so the ratio compares this run with them.
Record linkage (k-d tree) of the MDAV output is timed on the same instances; its baseline is
a blocked brute-force distance computation, run in the same process where it is affordable
(n <= 30,000).

Usage: ``python benchmarks/bench_microsdc_mdav.py [--quick]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from harness import Measurement, measure, print_table  # noqa: E402

from microsdc._risk import record_linkage  # noqa: E402
from microsdc.masking import mdav  # noqa: E402

#: sdcMicro 5.8.1 MDAV, elapsed seconds (shared/data/peers/README.md).
SDCMICRO_SECONDS = {10_000: 0.57, 30_000: 7.0, 100_000: 110.6}
BASELINE = "sdcMicro 5.8.1 MDAV (published)"


def brute_force_linkage(x: np.ndarray, xm: np.ndarray, block: int = 500) -> float:
    """DBRL with the full distance matrix computed block by block (ties shared)."""
    centre, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    a, b = (x - centre) / sd, (xm - centre) / sd
    b_squared = np.square(b).sum(axis=1)
    score = 0.0
    for start in range(0, len(a), block):
        rows = a[start:start + block]
        d = np.sqrt(np.maximum(np.square(rows).sum(axis=1)[:, None] + b_squared
                               - 2.0 * rows @ b.T, 0.0))
        nearest = d.min(axis=1, keepdims=True)
        tied = d <= nearest * (1 + 1e-9) + 1e-9
        own = tied[np.arange(len(rows)), np.arange(start, start + len(rows))]
        score += np.sum(own / tied.sum(axis=1))
    return score / len(a)


def main(quick: bool) -> None:
    sizes = [2_000] if quick else [10_000, 30_000, 100_000]
    rows: list[Measurement] = []
    for n in sizes:
        x = np.exp(np.random.default_rng(1).standard_normal((n, 5)))
        label = f"rlnorm {n:,} x 5"
        if n in SDCMICRO_SECONDS:
            rows.append(Measurement(label, BASELINE, SDCMICRO_SECONDS[n], float("nan")))
        baseline = BASELINE if n in SDCMICRO_SECONDS else None
        masked = measure(label, "microsdc mdav k=3", lambda x=x: mdav(x, k=3),
                         baseline=baseline)
        rows.append(masked)
        xm = masked.result
        if n <= 30_000:
            rows.append(measure(label, "brute-force DBRL", lambda x=x, xm=xm:
                                brute_force_linkage(x, xm), objective=float))
        rows.append(measure(label, "microsdc record_linkage", lambda x=x, xm=xm:
                            record_linkage(x, xm), objective=float,
                            baseline="brute-force DBRL" if n <= 30_000 else None))
    print_table(rows, "MDAV (k = 3) and distance-based record linkage of its output")
    print("objective = DBRL (at most 1/3 for k = 3); sdcMicro rows are published timings "
          "on the same machine type, not measured in this run")


if __name__ == "__main__":
    main("--quick" in sys.argv)
