"""Protect a business-survey table from microdata: rules, three suppression methods, audit, release.

The shipped sample (rtauargus ``indiv_dt``: 9,786 fictitious enterprises) is tabulated as
turnover by activity (NACE A10 > A21 > A88) x region (NUTS1 > NUTS2 > NUTS3). The sample has no
holding identifier, so the script groups enterprises into holdings (a seeded draw: about one
enterprise in ten belongs to a holding of 2-4 enterprises of the same region) to show how
contributions of one holding are summed before the rules. Sensitive cells: p% rule (p = 10),
(1, 85)-dominance and minimum frequency 3. Complementary suppression with the optimal method
(proven gap reported), the routing heuristic and the modular (sub-table) method, each audited;
the optimal pattern is written as the publishable file (codes and values, ``x`` for hidden
cells) beside the internal report.

Usage::

    python examples/protect_business_survey.py --quick               # A21 x NUTS2, seconds
    python examples/protect_business_survey.py --out protect.html    # A88 x NUTS3
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport import Report, Section
from tabsdc import (
    DominanceRule,
    FrequencyRule,
    Hierarchy,
    PPercentRule,
    Table,
    apply_rules,
    load_business_survey,
    write_publishable,
)
from tabsdc.suppression import suppress

LEVELS = {"quick": (["A10", "A21"], ["NUTS1", "NUTS2"]),
          "full": (["A10", "A21", "A88"], ["NUTS1", "NUTS2", "NUTS3"])}


def with_holdings(data: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """Add a ``HOLDING`` id: most enterprises alone, some grouped 2-4 within a region."""
    rng = np.random.default_rng(seed)
    grouped = rng.random(len(data)) < 0.1
    group = rng.integers(0, max(1, grouped.sum() // 3), len(data))
    region = data["NUTS2"].astype(str).to_numpy()
    own = np.char.add("E", np.arange(len(data)).astype(str))
    holding = np.where(grouped, np.char.add(np.char.add("H", region), group.astype(str)), own)
    return data.assign(HOLDING=holding)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="A21 x NUTS2 and 10 s time limits (a few seconds)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds for the optimal method (default 120, or 10 with --quick)")
    parser.add_argument("--out", type=Path, default=Path("protect-report.html"))
    args = parser.parse_args(argv)
    time_limit = args.time_limit or (10.0 if args.quick else 120.0)
    activity, region = LEVELS["quick" if args.quick else "full"]

    data = with_holdings(load_business_survey())
    hierarchies = {activity[-1]: Hierarchy.from_levels(data[activity]),
                   region[-1]: Hierarchy.from_levels(data[region])}
    table = Table.from_microdata(data, list(hierarchies), "TURNOVER", holding="HOLDING",
                                 hierarchies=hierarchies)
    rules = apply_rules(table, [PPercentRule(10), DominanceRule(1, 85), FrequencyRule(3)])
    print(rules.summary())

    results = {}
    for method in ("optimal", "heuristic", "modular"):
        print(f"{method} ...")
        results[method] = suppress(rules.table, method, "value", time_limit=time_limit,
                                   progress=(lambda line: print("  " + line))
                                   if method == "optimal" else None)
        print(results[method].summary())
    comparison = pd.DataFrame([{
        "method": method, "status": r.stats.status,
        "proven gap": r.stats.gap if method == "optimal" else np.nan,
        **r.totals(), "seconds": round(r.seconds, 2),
        "audit": "protected" if r.audit.protected else "NOT protected",
    } for method, r in results.items()])
    print(comparison.to_string(index=False))

    best = results["optimal"]
    publishable = write_publishable(best.table, args.out.with_suffix(".publish.csv"), decimals=0)
    print(f"publishable table written to {publishable}")
    overview = Section("Methods side by side").add_text(
        "Complementary suppression of the same primary cells by three methods (cost = value "
        "suppressed). 'proven gap': how far the optimal method's pattern can be from the best "
        "possible, from its lower bound; the heuristic and modular methods give no bound. Every "
        "pattern passed the interval-attack audit below. The publishable file "
        f"({publishable.name}) holds only codes and published values.").add_table(comparison)
    report = Report(
        f"Business survey: turnover by {activity[-1]} x {region[-1]}",
        metadata={"data": "rtauargus indiv_dt (9,786 fictitious enterprises), seeded holdings",
                  "rules": "p% (p = 10), (1, 85)-dominance, frequency 3",
                  "time limit": f"{time_limit:g} s"},
    ).add(table.to_report(), rules.to_report(), overview, best.to_report(),
          best.audit.to_report())
    print(f"report written to {report.save(args.out)}")


if __name__ == "__main__":
    main()
