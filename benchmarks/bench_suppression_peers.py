"""Suppression on the peers' own problems: ours beside sdcTable and GaussSuppression.

Input: the JJ files sdcTable wrote after primary suppression (``shared/data/peers/sdctable/
inputs/*__problem.jj``: its statuses, bounds and protection levels). Each is protected with
our optimal method (cost = the JJ value, i.e. the frequency suppressed, and cost = count),
audited, and printed beside every peer run recorded in ``shared/data/peers/summary.csv``
(number of suppressed cells, suppressed frequency, seconds). Peer times were measured on a
machine like this one, not in this process; the ratio column is ours / peer.

Usage: ``python benchmarks/bench_suppression_peers.py [--quick]`` (``--quick``: the small
tables only).
"""

from __future__ import annotations

import sys
from pathlib import Path
from time import perf_counter

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from harness import shared_data  # noqa: E402

from tabsdc import Table  # noqa: E402
from tabsdc.suppression import suppress  # noqa: E402

CASES = [("md1", "freq3"), ("md1", "p20"), ("md2", "freq3"), ("md2", "p20"),
         ("vig", "freq25"), ("syn100", "freq3")]


def ours(folder: Path, table: str, rule: str, cost: str) -> dict:
    problem = Table.from_jj(folder / "sdctable" / "inputs" / f"{table}__{rule}__problem.jj")
    start = perf_counter()
    result = suppress(problem, "optimal", cost, time_limit=300)
    seconds = perf_counter() - start
    hidden = result.suppressed
    return {"tool": "ours", "version": f"optimal, cost={cost}", "table": table, "rule": rule,
            "method": result.stats.status, "n_suppressed": int(hidden.sum()),
            "suppressed_freq_total": float(problem.values[hidden].sum()),
            "elapsed_s": round(seconds, 2), "audit": "clean" if result.audit.protected
            else "FAILED", "gap": result.stats.gap}


def main(quick: bool) -> None:
    folder = shared_data("peers")
    if folder is None:
        return
    summary = pd.read_csv(folder / "summary.csv")
    rows = []
    for table, rule in CASES:
        if quick and table in ("syn100", "vig"):
            continue
        peers = summary[(summary["table"] == table) & (summary["rule"] == rule)]
        for cost in ("value", "count"):
            rows.append(ours(folder, table, rule, cost))
        for peer in peers.itertuples():
            rows.append({"tool": peer.tool, "version": peer.version, "table": table,
                         "rule": rule, "method": peer.method if peer.status == "ok"
                         else f"{peer.method} ({peer.status})",
                         "n_suppressed": peer.n_suppressed,
                         "suppressed_freq_total": peer.suppressed_freq_total,
                         "elapsed_s": peer.elapsed_s, "audit": "", "gap": None})
    frame = pd.DataFrame(rows)
    best = frame[frame["tool"] == "ours"].groupby(["table", "rule"])
    peer = frame[(frame["tool"] != "ours") & frame["n_suppressed"].notna()]
    print(frame.to_string(index=False))
    print("\nOurs (best of the two costs) against the best peer run per table:")
    compare = pd.DataFrame({
        "ours_cells": best["n_suppressed"].min(),
        "peer_best_cells": peer.groupby(["table", "rule"])["n_suppressed"].min(),
        "ours_freq": best["suppressed_freq_total"].min(),
        "peer_best_freq": peer.groupby(["table", "rule"])["suppressed_freq_total"].min(),
    })
    print(compare.to_string())


if __name__ == "__main__":
    main("--quick" in sys.argv)
