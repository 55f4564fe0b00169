"""Build a Table from microdata and apply the p% and frequency rules.

Instances: the shipped business survey (9,786 companies, A88 x NUTS3 with their
hierarchies), and a synthetic 1,000,000-record data set over 3 dimensions (two hierarchical,
one flat; 114,912 cells). Baseline, in the same process: a plain pandas computation of the same
cell values, counts and two largest contributions, one ``groupby`` per combination of
hierarchy levels.

Usage: ``python benchmarks/bench_table_rules.py [--quick]``
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from harness import measure, print_table  # noqa: E402

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._datasets import business_survey_hierarchies, load_business_survey  # noqa: E402


def synthetic(n: int, seed: int = 1) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Records over act (3 levels: 5 x 4 x 5), geo (2 levels: 8 x 6), size (15 codes)."""
    rng = np.random.default_rng(seed)
    a1, a2, a3 = rng.integers(0, 5, n), rng.integers(0, 4, n), rng.integers(0, 5, n)
    g1, g2 = rng.integers(0, 8, n), rng.integers(0, 6, n)
    data = pd.DataFrame({
        "act1": np.char.add("A", a1.astype(str)),
        "act2": np.char.add(np.char.add("A", a1.astype(str)), a2.astype(str)),
        "act3": np.char.add(np.char.add(np.char.add("A", a1.astype(str)), a2.astype(str)),
                            a3.astype(str)),
        "geo1": np.char.add("G", g1.astype(str)),
        "geo2": np.char.add(np.char.add("G", g1.astype(str)), g2.astype(str)),
        "size": np.char.add("S", rng.integers(0, 15, n).astype(str)),
        "turnover": rng.lognormal(5, 2, n),
    })
    return data, {"act3": ["act1", "act2", "act3"], "geo2": ["geo1", "geo2"], "size": ["size"]}


def build_and_apply(data: pd.DataFrame, hierarchies: dict[str, Hierarchy], value: str):
    table = Table.from_microdata(data, list(hierarchies), value, hierarchies=hierarchies, top=2)
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)])


def pandas_baseline(data: pd.DataFrame, levels: dict[str, list[str]], value: str) -> int:
    """Cell value, count and two largest contributions per level combination (pandas)."""
    ordered = data.sort_values(value, ascending=False)
    n_cells = 0
    for combo in itertools.product(*[[None, *cols] for cols in levels.values()]):
        keys = [c for c in combo if c is not None]
        if not keys:
            n_cells += 1
            continue
        grouped = ordered.groupby(keys, sort=False)[value]
        stats = grouped.agg(["sum", "count", "first"])  # first = largest contribution
        grouped.nth(1)  # second largest contribution of each cell
        n_cells += len(stats)
    return n_cells


def main(quick: bool) -> None:
    rows = []
    survey = load_business_survey()
    survey_h = business_survey_hierarchies(survey)
    survey_levels = {"A88": ["A10", "A21", "A88"], "NUTS3": ["NUTS1", "NUTS2", "NUTS3"]}
    rows.append(measure("business survey 9,786", "pandas groupby baseline",
                        lambda: pandas_baseline(survey, survey_levels, "TURNOVER")))
    rows.append(measure("business survey 9,786", "tabsdc table + rules",
                        lambda: build_and_apply(survey, survey_h, "TURNOVER"),
                        baseline="pandas groupby baseline"))
    n = 20_000 if quick else 1_000_000
    data, levels = synthetic(n)
    hierarchies = {dim: Hierarchy.from_levels(data[cols]) for dim, cols in levels.items()}
    label = f"synthetic {n:,} x 3 dims"
    rows.append(measure(label, "pandas groupby baseline",
                        lambda: pandas_baseline(data, levels, "turnover")))
    rows.append(measure(label, "tabsdc table + rules",
                        lambda: build_and_apply(data, hierarchies, "turnover"),
                        baseline="pandas groupby baseline"))
    print_table(rows, "Table building and sensitivity rules")
    for row in rows[1::2]:
        result = row.result
        print(f"{row.instance}: {result.table.n_cells:,} cells, "
              f"{result.table.n_relations:,} relations, {int(result.primary.sum()):,} primary")


if __name__ == "__main__":
    main("--quick" in sys.argv)
