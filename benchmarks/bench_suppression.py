"""Optimal suppression (cut generation) against the full Fischetti-Salazar MILP, and the
heuristic on hierarchical tables.

(i) 2-D tables n x n (n = 20, 30, 50, 100; values 1..99, 5 % of interior cells primary with
    levels 15 % of the value, cost = value): our cut loop against the full model (binaries z
    plus one copy of the table per primary and direction, built from sparse blocks) solved by
    HiGHS in the same run, both with the same time limit. Columns: time, objective, gap, and
    for ours rounds and cuts.
(ii) the business survey (A88 x NUTS3, p% rule p = 10 and frequency 3): heuristic, modular
     and optimal.
(iii) a synthetic hierarchical table of 114,912 cells (activity 3 levels x region 2 levels x
     15 size classes, built from 1,000,000 records as in ``bench_table_rules.py``; same rules):
     heuristic and modular (3 s per sub-table), with the audit of the whole table.

Usage: ``python benchmarks/bench_suppression.py [--quick] [--parts=i,ii,iii]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).parent))
from bench_table_rules import synthetic  # noqa: E402
from harness import measure, print_table  # noqa: E402

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._bounds import capacities  # noqa: E402
from tabsdc._datasets import business_survey_hierarchies, load_business_survey  # noqa: E402
from tabsdc.solver import LinearProgram, solve  # noqa: E402
from tabsdc.suppression import suppress  # noqa: E402
from tabsdc.suppression._attacker import requirements  # noqa: E402
from tabsdc.suppression._costs import cell_costs  # noqa: E402


def grid_table(size: int, share: float = 0.05, seed: int = 3) -> Table:
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    frame = pd.DataFrame({"r": r.ravel().astype(str), "c": c.ravel().astype(str),
                          "value": rng.integers(1, 100, size * size).astype(float)})
    table = Table.from_aggregated(frame, ["r", "c"])
    interior = np.flatnonzero(~table.total_cells)
    chosen = rng.choice(interior, int(share * len(interior)), replace=False)
    status = np.full(table.n_cells, "s", dtype=object)
    status[chosen] = "u"
    level = np.zeros(table.n_cells)
    level[chosen] = 0.15 * table.values[chosen]
    return table.with_columns(status=status, lpl=level, upl=level)


def full_model(table: Table, time_limit: float):
    """The Fischetti-Salazar model with a table copy per requirement, solved by HiGHS."""
    cells = table.cells
    primary = (cells["status"] == "u").to_numpy()
    reqs = requirements(primary, cells["lpl"].to_numpy(), cells["upl"].to_numpy())
    down, up = capacities(table)
    n, m, k = table.n_cells, table.n_relations, len(reqs)
    eye_k = sp.identity(k, format="csr")
    eye_n = sp.identity(n, format="csr")
    stack = sp.csr_array(np.ones((k, 1)))
    rows_a = sp.hstack([sp.csr_array((m * k, n)), sp.kron(eye_k, table.A)])
    rows_up = sp.hstack([-sp.kron(stack, sp.diags_array(up)), sp.kron(eye_k, eye_n)])
    rows_down = sp.hstack([-sp.kron(stack, sp.diags_array(down)), -sp.kron(eye_k, eye_n)])
    A = sp.vstack([rows_a, rows_up, rows_down], format="csr")
    lower = np.concatenate([np.zeros(m * k), np.full(2 * n * k, -np.inf)])
    upper = np.zeros(m * k + 2 * n * k)
    col_lower = np.concatenate([primary.astype(float), np.full(n * k, -np.inf)])
    col_upper = np.concatenate([np.ones(n), np.full(n * k, np.inf)])
    for q, req in enumerate(reqs):  # the attack must reach the level: y_i = +-level
        col_lower[n + q * n + req.cell] = col_upper[n + q * n + req.cell] = \
            req.direction * req.level
    cost = np.where(primary, 0.0, cell_costs(table, "value"))
    problem = LinearProgram(c=np.concatenate([cost, np.zeros(n * k)]), A=A, row_lower=lower,
                            row_upper=upper, col_lower=col_lower, col_upper=col_upper,
                            integrality=np.concatenate([np.ones(n, bool), np.zeros(n * k, bool)]))
    return solve(problem, time_limit=time_limit)


def main(quick: bool, parts: set[str]) -> None:
    limit = 30.0 if quick else 120.0
    if "i" in parts:
        optimal_against_full_model(quick, limit)
    if "ii" in parts:
        data = load_business_survey()
        table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                     hierarchies=business_survey_hierarchies(data))
        large_tables(table, f"business survey {table.n_cells} cells",
                     ("heuristic", "modular", "optimal"), limit)
    if "iii" in parts:
        data, levels = synthetic(100_000 if quick else 1_000_000)
        hierarchies = {dim: Hierarchy.from_levels(data[cols]) for dim, cols in levels.items()}
        table = Table.from_microdata(data, list(hierarchies), "turnover",
                                     hierarchies=hierarchies, top=2)
        large_tables(table, f"synthetic {table.n_cells} cells", ("heuristic", "modular"), 3.0)


def optimal_against_full_model(quick: bool, limit: float) -> None:
    rows = []
    for size in ([10, 20] if quick else [20, 30, 50, 100]):
        table = grid_table(size)
        label = f"{size}x{size}, {int((table.cells['status'] == 'u').sum())} primaries"
        if size <= 50:
            rows.append(measure(label, "full MILP (HiGHS)", lambda t=table: full_model(t, limit),
                                objective=lambda r: r.objective, gap=lambda r: r.gap))
        rows.append(measure(label, "cut loop (ours)",
                            lambda t=table: suppress(t, "optimal", time_limit=limit),
                            baseline="full MILP (HiGHS)" if size <= 50 else None,
                            objective=lambda r: r.stats.objective, gap=lambda r: r.stats.gap))
    print_table(rows, f"(i) optimal suppression, time limit {limit:g} s per solve")
    for row in rows:
        if row.method.startswith("cut"):
            s = row.result.stats
            print(f"  {row.instance}: {s.status}, rounds {s.rounds}, cuts {s.cuts}, "
                  f"audit {'clean' if row.result.audit.protected else 'FAILED'}")
        else:
            print(f"  {row.instance}: full model {row.result.status}")


def large_tables(table: Table, label: str, methods: tuple[str, ...], limit: float) -> None:
    """p% rule (p = 10) and frequency 3, then each method; ``limit``: the optimal method's
    time limit (for modular: per sub-table)."""
    ruled = apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table
    label += f", {int((ruled.cells['status'] == 'u').sum())} primaries"
    survey = [measure(label, method, lambda m=method: suppress(ruled, m, time_limit=limit),
                      objective=lambda r: r.stats.objective, gap=lambda r: r.stats.gap)
              for method in methods]
    print_table(survey, "hierarchical table (objective = value of secondaries)")
    for row in survey:
        totals = row.result.totals()
        print(f"  {row.method}: {totals['suppressed cells']} cells suppressed, value "
              f"{totals['suppressed value']:.6g}, status {row.result.stats.status}, audit "
              f"{'clean' if row.result.audit.protected else 'FAILED'}")


if __name__ == "__main__":
    chosen = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--parts=")), "i,ii,iii")
    main("--quick" in sys.argv, set(chosen.split(",")))
