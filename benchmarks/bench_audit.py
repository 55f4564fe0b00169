"""Interval attack: all bounds of the hidden cells of a 100 x 100 table (10 % hidden).

Compared in the same run: the audit (one kept HiGHS model per independent block, warm
re-solves after each objective change) and a cold loop of ``scipy.optimize.linprog`` calls
over the whole table with published cells fixed by their bounds (what a straightforward
implementation does). The cold loop bounds only the first ``COLD_CELLS`` hidden cells (same
polytope), so the two are compared by their rates: ``objective`` = bounds per second.

Usage: ``python benchmarks/bench_audit.py [--quick]``
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


if __name__ == "__main__":
    main("--quick" in sys.argv)
