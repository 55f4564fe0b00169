"""What protection against insider respondents costs, measured in the same run.

Every suppression method with the protection against the respondents of single-contributor
primaries (``singletons=True``, the default: each method's own insider-aware search and the
insider attack in its audit) against the same method without it (``singletons=False``: the
outside intruder only). For each pattern: the method's time, the time of its own audit,
the secondaries and their value (cost = value), and how many (respondent, sensitive cell)
pairs the insider attack of an audit of the pattern finds narrowed below their levels
(the outsider-only patterns show what the protection is for).

(i) the business survey A88 x NUTS3 of the README (p % rule p = 10, frequency 3):
    heuristic, modular, hypercube and optimal (with ``--time-limit``, default 300 s);
(ii) ``4d_100k`` of ``large_instances.py`` (126,000 cells): the hypercube method, the audit
     with the method's witnesses.

The insider attack on an outsider-only pattern gets ``--time-limit`` seconds: where it
does not finish, the failing pairs found are a lower bound (``>= n``).

Usage: ``python benchmarks/bench_insider.py [--quick] [--parts=i,ii] [--time-limit=S]``
(``--quick``: part (i) without the optimal method).

Another version of the toolkit (e.g. one without the insider attack) is measured with
``--baseline=DIR``: each method of part (i) once with its defaults (time, secondaries,
value), its patterns kept in ``DIR`` (pickled tables); ``--audit-kept=DIR`` then audits
them with this version's insider attack (the pairs each leaves open).
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from harness import markdown_table  # noqa: E402
from large_instances import build_table, records  # noqa: E402

from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._datasets import business_survey_hierarchies, load_business_survey  # noqa: E402
from tabsdc.audit import audit  # noqa: E402
from tabsdc.suppression import suppress  # noqa: E402


def business_survey() -> Table:
    data = load_business_survey()
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                 hierarchies=business_survey_hierarchies(data))
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


def compare(instance: str, table: Table, method: str, time_limit: float | None) -> list[dict]:
    """The method with and without the insider protection: one row each."""
    rows = []
    for singletons in (False, True):
        start = time.perf_counter()
        result = suppress(table, method, time_limit=time_limit, singletons=singletons)
        seconds = time.perf_counter() - start
        own = result.audit.seconds
        # the insider attack on the pattern, whichever protection built it (on the
        # outsider's pattern within the time limit: then at least that many pairs fail)
        insider = result.audit.insider if singletons else audit(
            result.table, witnesses=result.witnesses, time_limit=time_limit).insider
        totals = result.totals()
        rows.append({
            "instance": instance, "method": method,
            "insiders": "protected" if singletons else "outsider only",
            "status": result.status + ("" if result.method != "optimal" else
                                       f" (gap {100 * result.stats.gap:.3g} %)"),
            "method s": round(seconds - own, 1), "audit s": round(own, 1),
            "secondaries": totals["secondary cells"],
            "secondary value": round(totals["secondary value"]),
            "respondents": insider.respondents,
            "pairs failing": f"{'' if insider.complete else '>= '}{len(insider.pairs)}",
            "audit": "clean" if result.passed else "FAILED",
        })
        print("   ", rows[-1], file=sys.stderr, flush=True)
    without, with_ = rows
    with_["time ratio"] = round((with_["method s"] + with_["audit s"])
                                / max(without["method s"] + without["audit s"], 1e-9), 2)
    with_["extra secondaries"] = with_["secondaries"] - without["secondaries"]
    with_["extra value %"] = round(100 * (with_["secondary value"]
                                          / max(without["secondary value"], 1) - 1), 1)
    return rows


#: The methods of part (i) and their time limits.
SURVEY_METHODS = {"heuristic": None, "modular": None, "hypercube": None, "optimal": 300.0}


def baseline(folder: Path) -> list[dict]:
    """Each method of part (i) once with its defaults, its pattern kept in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    table, rows = business_survey(), []
    for method, limit in SURVEY_METHODS.items():
        start = time.perf_counter()
        result = suppress(table, method, time_limit=limit)
        seconds = time.perf_counter() - start
        totals = result.totals()
        rows.append({"method": method, "status": result.status,
                     "method s": round(seconds - result.audit.seconds, 1),
                     "audit s": round(result.audit.seconds, 1),
                     "secondaries": totals["secondary cells"],
                     "secondary value": round(totals["secondary value"])})
        with open(folder / f"{method}.pickle", "wb") as file:
            pickle.dump(result.table, file)
    return rows


def audit_kept(folder: Path) -> list[dict]:
    """The insider attack on the patterns :func:`baseline` kept."""
    rows = []
    for method in SURVEY_METHODS:
        with open(folder / f"{method}.pickle", "rb") as file:
            verdict = audit(pickle.load(file))
        rows.append({"method": method, "audit s": round(verdict.seconds, 1),
                     "respondents": verdict.insider.respondents,
                     "pairs in one block": verdict.insider.pairs_in_blocks,
                     "flows": verdict.insider.certificates,
                     "pairs failing": len(verdict.insider.pairs)})
    return rows


def main(argv: list[str]) -> None:
    options = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "1") for a in argv
                   if a.startswith("--"))
    if "baseline" in options or "audit-kept" in options:
        rows = (baseline(Path(options["baseline"])) if "baseline" in options
                else audit_kept(Path(options["audit-kept"])))
        print(markdown_table(pd.DataFrame(rows)))
        return
    quick = "quick" in options
    parts = set(options.get("parts", "i" if quick else "i,ii").split(","))
    limit = float(options.get("time-limit", 300))
    rows: list[dict] = []
    if "i" in parts:
        survey = business_survey()
        for method, method_limit in SURVEY_METHODS.items():
            if not (quick and method == "optimal"):
                rows += compare("business survey A88 x NUTS3", survey, method,
                                method_limit and limit)
    if "ii" in parts:
        rows += compare("4d_100k", build_table(records("4d_100k")), "hypercube", limit)
    print(markdown_table(pd.DataFrame(rows).fillna("")))


if __name__ == "__main__":
    main(sys.argv[1:])
