"""Controlled rounding: the network method against the MILP on the same tables.

(i) 2-D tables n x n (n = 100, 300, 1000; interior values uniform on 0..99, base 5; with
    totals (n+1)^2 cells): the min-cost flow by pricing (HiGHS simplex on restricted LPs,
    ``engine="network"``) and networkx's network simplex against the MILP over the up/down
    binaries (HiGHS branch and bound, the baseline) on the same table, plus unbiased
    controlled rounding. The MILP gets a time limit; a stopped MILP is shown with its gap.
    Objective = total absolute deviation of the rounding.
(ii) the hierarchical business survey (rtauargus ``indiv_dt``, shipped as
    ``tabsdc._datasets.load_business_survey``): counts and turnover (base 100) of A88 x NUTS3
    with both hierarchies (a MILP: not a network), and of A88 (hierarchy) x NUTS3 (flat), a
    network with a hierarchy in one dimension: network against MILP.

(iii) the 28 Castro instances (``shared/data/jj/castro``), base 10: an exact controlled
    rounding when one exists, else the closest additive alternative (fewest extra steps,
    then least total deviation), 120 s per instance for the whole call; per instance its
    cells, sensitive cells, method (engine and what found the rounding), time, objective
    (total |deviation|), its proven bound and gap, extra steps (counted from the rounded
    values) with their proven lower bound, and the check.

Every rounding is checked: every relation holds and every cell is adjacent (or, for the
closest alternative, within its extra steps).

Usage::

    python benchmarks/bench_rounding.py [--quick]             # (i) and (ii)
    python benchmarks/bench_rounding.py --parts castro [--castro-limit 120 --base 10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_cta import castro_table  # noqa: E402
from harness import measure, print_table  # noqa: E402

from tabsdc import Table  # noqa: E402
from tabsdc._datasets import business_survey_hierarchies, load_business_survey  # noqa: E402
from tabsdc.rounding import (  # noqa: E402
    controlled_rounding,
    decompose,
    unbiased_controlled_rounding,
)


def grid_table(size: int, seed: int = 7) -> Table:
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    frame = pd.DataFrame({"r": r.ravel().astype(str), "c": c.ravel().astype(str),
                          "value": rng.integers(0, 100, size * size).astype(float)})
    return Table.from_aggregated(frame, ["r", "c"])


def deviation(table: Table):
    return lambda outcome: float(np.abs(outcome.rounded - table.values).sum())


def gap(outcome):
    return outcome.solve.gap if outcome.solve is not None else None


def check(table: Table, outcome, base: int, allowed: np.ndarray | int = 0) -> str:
    """Additive (``Table.failing_relations``), multiples of the base, and adjacent but for
    ``allowed`` extra steps; computed from the rounded values, not from the solver."""
    additive = not table.failing_relations(values=outcome.rounded).size
    multiples = np.allclose(outcome.rounded / base, np.round(outcome.rounded / base))
    adjacent = np.all(np.abs(outcome.rounded - table.values) < base * (1 + allowed))
    ok = additive and adjacent and multiples
    kind = "adjacent" if np.all(np.asarray(allowed) == 0) else "closest additive"
    return f"{outcome.status}, {f'additive, {kind}' if ok else 'CHECK FAILED'}"


def run(label: str, table: Table, base: int, methods: list[str], limit: float) -> list:
    calls = {
        "MILP (HiGHS)": lambda: controlled_rounding(table, base, engine="milp",
                                                    time_limit=limit),
        "network (pricing)": lambda: controlled_rounding(table, base, engine="network"),
        "network (networkx)": lambda: controlled_rounding(table, base, engine="networkx"),
        "unbiased controlled": lambda: unbiased_controlled_rounding(table, base, seed=1),
    }
    rows = []
    for method in methods:
        rows.append(measure(label, method, calls[method], baseline="MILP (HiGHS)",
                            objective=deviation(table), gap=gap))
        print(f"  {label}, {method}: {check(table, rows[-1].result, base)}", flush=True)
    return rows


def survey_tables() -> dict[str, tuple[Table, int]]:
    data = load_business_survey()
    hierarchies = business_survey_hierarchies(data)
    both = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER", hierarchies=hierarchies)
    one = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                               hierarchies={"A88": hierarchies["A88"]})
    tables = {}
    for name, table in (("A88 x NUTS3, both hierarchical", both),
                        ("A88 (hierarchy) x NUTS3 (flat)", one)):
        counts = table.with_columns(value=table.cells["freq"].to_numpy(dtype=float))
        tables[f"counts {name}, base 5"] = (counts, 5)
        tables[f"turnover {name}, base 100"] = (table, 100)
    return tables


def castro(base: int, limit: float, names: list[str]) -> None:
    """Controlled rounding of every Castro instance: exact when one exists, else the closest
    additive alternative, within ``limit`` seconds for the whole call."""
    def rounding(table: Table) -> dict:
        outcome = controlled_rounding(table, base, time_limit=limit)
        result = outcome.solve
        q, r = decompose(table.values, base)
        steps = np.maximum(0, np.maximum(q - outcome.rounded / base,
                                         outcome.rounded / base - q - (r > 0)))
        return {"method": outcome.engine + (f", {outcome.found_by}" if outcome.found_by
                                            else ""),
                "status": outcome.status,
                "extra_steps": int(steps.sum()), "steps_bound": outcome.steps_bound,
                "objective": round(result.objective, 2),
                "bound": None if result.bound is None else round(result.bound, 2),
                "gap": None if result.gap is None else f"{100 * result.gap:.2f} %",
                "verification": check(table, outcome, base, allowed=steps)}

    castro_table(f"(iii) Castro instances: controlled rounding to base {base}, time limit "
                 f"{limit:g} s per instance (objective: total |deviation|; extra steps with "
                 f"their proven lower bound)", names, {"controlled": rounding})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grids, 60 s MILP limit")
    parser.add_argument("--parts", default="grid,survey",
                        help="comma-separated: grid, survey, castro")
    parser.add_argument("--base", type=int, default=10, help="rounding base of part (iii)")
    parser.add_argument("--castro-limit", type=float, default=120.0,
                        help="seconds per Castro instance")
    parser.add_argument("--instances", default="",
                        help="comma-separated Castro instances (default: all 28)")
    args = parser.parse_args()
    parts = args.parts.split(",")
    limit = 60.0 if args.quick else 600.0
    if "grid" in parts:
        rows = []
        for size in [50, 100] if args.quick else [100, 300, 1000]:
            table = grid_table(size)
            methods = ["MILP (HiGHS)", "network (pricing)", "unbiased controlled"]
            if size <= 300:
                methods.insert(2, "network (networkx)")
            rows += run(f"{size}x{size} ({table.n_cells} cells)", table, 5, methods, limit)
        print_table(rows, f"(i) controlled rounding of 2-D tables, base 5 (MILP time limit "
                    f"{limit:g} s; objective = total |deviation|)")
    if "survey" in parts:
        survey = []
        for label, (table, base) in survey_tables().items():
            network = not label.startswith(("counts A88 x", "turnover A88 x"))
            methods = ["MILP (HiGHS)", *(["network (pricing)", "network (networkx)",
                                          "unbiased controlled"] if network else [])]
            if base != 5:   # networkx needs integer costs: real-valued turnover
                methods = [m for m in methods if m != "network (networkx)"]
            survey += run(f"{label} ({table.n_cells} cells)", table, base, methods, limit)
        print_table(survey, "(ii) hierarchical business survey (objective = total |deviation|)")
    if "castro" in parts:
        castro(args.base, args.castro_limit, [n for n in args.instances.split(",") if n])


if __name__ == "__main__":
    main()
