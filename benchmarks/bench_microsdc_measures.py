"""Timing of every numeric information-loss measure on a large synthetic data set.

Usage: ``python benchmarks/bench_microsdc_measures.py [--quick]``; 1,000,000 x 10 by default,
10,000 x 10 with ``--quick``. The data are correlated log-normal values rounded to cents (so
there are many ties) and the masked data add normal noise of 20 % of each standard deviation.

Baselines, measured in the same run: brMAE with scipy's ``rankdata`` (ordinal ranks, column by
column) for the rank measures, and plain numpy expressions for MAE and IL1s. ``objective``
is the measure's value; "information_loss (all)" is one call computing every measure but the
robust eigenvalues.
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import measure, print_table
from scipy import stats

from microsdc import utility


def synthetic(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(p, p)) / np.sqrt(p)
    x = np.round(np.exp(rng.normal(size=(n, p)) @ mixing) * 1000.0, 2)
    return x, x + rng.normal(size=(n, p)) * 0.2 * x.std(axis=0, ddof=1)


def rankdata_brmae(x: np.ndarray, xm: np.ndarray) -> float:
    n, p = x.shape
    total = sum(np.abs(stats.rankdata(x[:, j], method="ordinal")
                       - stats.rankdata(xm[:, j], method="ordinal")).sum() for j in range(p))
    return float(total / (p * utility.rank_distance_bound(n)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 x 10 instead of 1e6 x 10")
    args = parser.parse_args()
    n, p = (10_000, 10) if args.quick else (1_000_000, 10)
    x, xm = synthetic(n, p)
    instance = f"lognormal {n:,} x {p}"
    value = float
    runs = [
        ("MAE numpy", lambda: np.abs(x - xm).mean(), None),
        ("MAE", lambda: utility.mae(x, xm), "MAE numpy"),
        ("MSE", lambda: utility.mse(x, xm), "MAE numpy"),
        ("IL1", lambda: utility.il1(x, xm), "MAE numpy"),
        ("IL1s numpy", lambda: (np.abs(x - xm) / (np.sqrt(2) * x.std(axis=0, ddof=1))).mean(),
         None),
        ("IL1s", lambda: utility.il1s(x, xm), "IL1s numpy"),
        ("brMAE scipy rankdata", lambda: rankdata_brmae(x, xm), None),
        ("brMAE ties=first", lambda: utility.brmae(x, xm, ties="first"), "brMAE scipy rankdata"),
        ("brMAE ties=random", lambda: utility.brmae(x, xm, seed=1), "brMAE scipy rankdata"),
        ("brMSE ties=random", lambda: utility.brmse(x, xm, seed=1), "brMAE scipy rankdata"),
        ("PIL (all five)", lambda: utility.probabilistic_information_loss(x, xm).overall, None),
        ("matrix discrepancy", lambda: utility.matrix_discrepancy(x, xm).loc["R", "MAE"], None),
        ("eigen", lambda: utility.eigen_discrepancy(x, xm), None),
        ("robust eigen (MCD)", lambda: utility.eigen_discrepancy(x, xm, robust=True, seed=1),
         "eigen"),
        ("information_loss (all)", lambda: utility.information_loss(x, xm, seed=1).brMAE, None),
    ]
    rows = [measure(instance, name, fn, baseline=baseline, objective=value)
            for name, fn, baseline in runs]
    print_table(rows, "Information-loss measures (objective = value of the measure)")


if __name__ == "__main__":
    main()
