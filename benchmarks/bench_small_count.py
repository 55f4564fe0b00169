"""Small-count rounding against controlled rounding on the same count tables (base 3).

Three linked count tables of the shipped business survey (A21 x NUTS2, A21 x SIZE,
NUTS2 x SIZE) are rounded once by small-count rounding (consistent across the three) and
each on its own by optimal controlled rounding; the figures are those of
:func:`tabsdc.rounding._small_count.deviation_figures`.

Usage::

    python benchmarks/bench_small_count.py
"""
import time

import pandas as pd

from tabsdc._datasets import load_business_survey
from tabsdc.rounding import round_small_counts, round_table
from tabsdc.rounding._small_count import deviation_figures


def main() -> None:
    data = load_business_survey()
    tables = [["A21", "NUTS2"], ["A21", "SIZE"], ["NUTS2", "SIZE"]]
    start = time.perf_counter()
    small = round_small_counts(data, tables, base=3, seed=1)
    print(f"small-count, 3 linked tables: {time.perf_counter() - start:.1f} s")
    rows = []
    for dims, original, rounded in zip(tables, small.originals, small.tables, strict=True):
        rows.append({"table": " x ".join(dims), "method": "small-count",
                     **deviation_figures(original, rounded.values)})
        start = time.perf_counter()
        result = round_table(original, 3, "controlled", audit=False, time_limit=120)
        rows.append({"table": " x ".join(dims), "method": f"controlled ({result.status}, "
                     f"{time.perf_counter() - start:.1f} s)",
                     **deviation_figures(original, result.rounded)})
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
