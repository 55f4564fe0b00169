"""The guided method's routing alone: every requirement routed from the hypercube pattern
with its most expensive secondaries published again, with and without the router's skipping
of neighbourhoods that rarely hold a flow (``tabsdc.suppression._heuristic.SKIP_BELOW``).

For each instance: the routing's time, the LPs tried per radius (the neighbourhood of
``hops`` relations, then one and two more) and the cost of the routed pattern, before the
clean-up. The routing runs at the true costs (no relaxation), with no time limit of its own
but the whole table's flows capped at 2 s as under one
(:class:`~tabsdc.suppression._guided.RestoringRouter`). The baseline (no radius ever
skipped) runs first, in the same process.

Usage::

    python benchmarks/bench_routing.py [--instances=4d_5k:0.1,4d_20k:0.01] [--cost=value]
        [--quick]

``instance:share``: the share of the hypercube pattern's secondaries published again (the
default's choice under a time limit: 10 % on ``4d_5k`` at 120 s, 1 % on ``4d_20k`` at
300 s). ``--quick``: ``4d_5k`` with 2 % published again.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))
from harness import markdown_table  # noqa: E402
from large_instances import build_table, records  # noqa: E402

import tabsdc.suppression._heuristic as heuristic  # noqa: E402
from tabsdc._progress import Deadline  # noqa: E402
from tabsdc._validation import in_working_units  # noqa: E402
from tabsdc.suppression._costs import cell_costs  # noqa: E402
from tabsdc.suppression._guided import RestoringRouter, ruined  # noqa: E402
from tabsdc.suppression._hypercube.method import hypercube_phases  # noqa: E402
from tabsdc.suppression._problem import MethodOptions, suppression_problem  # noqa: E402

#: A routing deadline long enough never to expire, so that the whole table's flows are
#: capped as under a time limit.
ROUTING_SECONDS = 3600.0


def routed(problem, start, hypercubes, skip: bool) -> dict:
    """Route every requirement of ``problem`` from ``start``; the row of the table."""
    saved = heuristic.SKIP_AFTER
    heuristic.SKIP_AFTER = saved if skip else sys.maxsize
    try:
        attacker = problem.attacker(Deadline(None))
        attacker.add_witnesses(hypercubes.witnesses)
        flows = problem.router(heuristic.FlowRouter, Deadline(ROUTING_SECONDS))
        router = RestoringRouter(flows, attacker.witnesses, hypercubes.pattern)
        started = time.perf_counter()
        pattern, _, complete = heuristic.heuristic_pattern(
            problem.reqs, attacker, router, problem.cost, start, problem.labels)
        seconds = time.perf_counter() - started
    finally:
        heuristic.SKIP_AFTER = saved
    return {"routing [s]": round(seconds, 1), "complete": complete,
            "LPs tried per radius": ", ".join(map(str, flows.tried.tolist())),
            "flows held": ", ".join(map(str, flows.held.tolist())),
            "cost of the routed pattern":
                f"{problem.cost_unit * (problem.cost @ (pattern & ~problem.fixed_on)):,.0f}"}


def main(argv: list[str]) -> None:
    args = dict(a.lstrip("-").split("=", 1) for a in argv if "=" in a)
    cost = args.get("cost", "value")
    rows = []
    default = "4d_5k:0.02" if "--quick" in argv else "4d_5k:0.1,4d_20k:0.01"
    for item in args.get("instances", default).split(","):
        name, share = item.split(":")
        original = build_table(records(name))
        table, _ = in_working_units(original)
        problem = suppression_problem(table, cell_costs(original, cost))
        hypercubes = hypercube_phases(problem, MethodOptions(Deadline(None)))
        removable = ~problem.fixed_on & ~problem.fixed_off
        start = ruined(hypercubes.pattern, problem.cost, removable, float(share))
        for skip in (False, True):
            row = {"instance": name, "ruin": f"{float(share):.0%}",
                   "radii skipped": "yes" if skip else "no (baseline)"}
            row.update(routed(problem, start, hypercubes, skip))
            print(row, flush=True)
            rows.append(row)
    frame = pd.DataFrame(rows)
    base = frame.groupby("instance")["routing [s]"].transform("first")
    frame["ratio"] = (frame["routing [s]"] / base).round(2)
    print(markdown_table(frame))


if __name__ == "__main__":
    main(sys.argv[1:])
