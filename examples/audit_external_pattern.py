"""Audit suppression patterns made elsewhere: sdcTable's results on its own example tables.

An office that receives a protected table, or wants to check a pattern made by another tool or
by hand, needs the interval attack: for every hidden cell, the smallest and largest value
consistent with the published cells and the table's additivity. This script reads the problem
sdcTable wrote as a JJ file (its statuses, a-priori bounds and protection levels), applies each
pattern sdcTable returned (``*__finalData.csv``, in ``examples/data/sdctable``), and audits
it: LP and integer intervals, protection verdicts, exact disclosures, and the p/q-interval
attack that asks what would be revealed if the exact intervals were published.

Usage::

    python examples/audit_external_pattern.py --quick                   # one small table
    python examples/audit_external_pattern.py --out audit-report.html   # every table
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport import Report, Section
from tabsdc import Table
from tabsdc.audit import audit

#: sdcTable 0.34.0's and 0.32.6's problems and patterns (examples/data/sdctable/README.md).
PEERS = Path(__file__).resolve().parent / "data"
PROBLEMS = [("md1", "freq3"), ("md1", "p20"), ("md2", "freq3"), ("md2", "p20"),
            ("vig", "freq25")]


def peer_patterns(peers: Path, table: str, rule: str) -> dict[str, pd.Series]:
    """Every sdcTable pattern for a problem: label -> sdcTable status per cell (JJ order)."""
    problem = pd.read_csv(peers / "sdctable" / "inputs" / f"{table}__{rule}__problem.csv",
                          dtype=str)
    dims = [c for c in problem.columns if c not in ("strID", "freq", "sdcStatus")]
    patterns = {}
    for path in sorted((peers / "sdctable").glob(f"v*/{table}__{rule}__*__finalData.csv")):
        final = pd.read_csv(path, dtype=str)
        merged = problem[dims].merge(final[[*dims, "sdcStatus"]], on=dims, how="left")
        if merged["sdcStatus"].isna().any():
            raise ValueError(f"{path.name}: cells missing from the problem")
        method = path.name.split("__")[2]
        patterns[f"sdcTable {path.parent.name[1:]} {method}"] = merged["sdcStatus"]
    return patterns


def audit_pattern(problem: Table, statuses: pd.Series, integer: bool):
    """The problem with the peer's pattern (``u`` primary, ``x`` secondary), audited."""
    status = np.select([statuses == "u", statuses == "x"], ["u", "m"],
                       np.where(problem.cells["status"] == "z", "z", "s"))
    return audit(problem.with_columns(status=status), integer=integer, release_intervals=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=Path, default=PEERS,
                        help="folder holding sdctable/inputs and sdctable/v*/ "
                        "(default: examples/data)")
    parser.add_argument("--quick", action="store_true", help="md1 only, LP bounds only")
    parser.add_argument("--out", type=Path, default=Path("audit-report.html"))
    args = parser.parse_args(argv)

    rows, failing = [], []
    for table, rule in PROBLEMS[:2] if args.quick else PROBLEMS:
        problem = Table.from_jj(args.peers / "sdctable" / "inputs" /
                                f"{table}__{rule}__problem.jj")
        for label, statuses in peer_patterns(args.peers, table, rule).items():
            result = audit_pattern(problem, statuses, integer=not args.quick)
            frame = result.to_frame()
            intervals_ok = bool(result.frame["protected"].all())
            hidden = frame["status"].isin(["u", "m"])
            rows.append({
                "table": table, "rule": rule, "pattern": label,
                "suppressed": int(hidden.sum()),
                "suppressed value": float(frame.loc[hidden, "value"].sum()),
                "primaries unprotected": int((~frame["protected"] & (frame["status"] == "u"))
                                             .sum()),
                "cells exactly disclosed": int((frame["exact"] & hidden).sum()),
                "revealed if intervals published": int(result.pq_attack.revealed.sum())
                if result.pq_attack is not None else 0,
                "verdict": "protected" if intervals_ok else "NOT protected",
            })
            if not intervals_ok:
                failing.append((f"{table} {rule}: {label}", result))
            print(f"{table:6s} {rule:6s} {label:32s} {rows[-1]['verdict']}")
    summary = pd.DataFrame(rows)
    report = Report("Audit of suppression patterns made by sdcTable",
                    metadata={"source": str(args.peers / "sdctable"),
                              "attack": "LP interval attack" + ("" if args.quick else
                                                                " and integer bounds")})
    section = Section("Every pattern").add_text(
        "Each row is one pattern sdcTable returned for its own problem (the JJ file it wrote "
        "after primary suppression, with its a-priori bounds and protection levels). "
        "The verdict is the interval attack's: 'primaries unprotected' counts sensitive cells "
        "whose interval does not reach the required protection. 'revealed if intervals "
        "published' counts hidden cells whose value is the midpoint of its exact interval: "
        "an intruder who knows the p/q rule was used reads them off if the office publishes "
        "the intervals (sdcTable does not publish them; the column shows why it should not).")
    report.add(section.add_table(summary))
    for title, result in failing[:3]:
        detail = result.to_report()
        detail.title = f"Failing pattern: {title}"
        report.add(detail)
    print(f"report written to {report.save(args.out)}")


if __name__ == "__main__":
    main()
