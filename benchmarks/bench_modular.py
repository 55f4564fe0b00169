"""The modular method (HiTaS sub-tables in waves) against the hypercube and routing methods.

(i) ``modular_3d``: a tau-ARGUS job on a 3-D table of 3,162 cells hierarchical in every
    dimension (sector 3 levels, 31 codes x region 2 levels, 17 codes x size class, 6 codes),
    16,500 records from ``large_instances.py`` (``Instance(16_500, 2, (3, 3, 2), (4, 3), (5,))``),
    ``P(15)|FREQ(3,10)``: 458 primary cells, 65 sub-tables. The job is in ``jobs/modular_3d/``
    (``tabsdc argus benchmarks/jobs/modular_3d/modular_3d.arb``); ``--write-job DIR`` writes
    it again. Run with ``MOD(1,0.05,1,1,1)`` (3 s per sub-table; minutes per sub-table, as
    tau-ARGUS means them), ``GH(1,100)``, and without ``--quick`` ``MOD(1,5,1,1,1)`` and
    ``OPT(1,5)``.
(ii) ``4d_5k``: ``Instance(8_000, 5, (2, 3, 3), (3, 4), (3, 2))`` (5,184 cells) with p% (15)
    and frequency (3) primaries: modular (3 s per sub-table; one process and two),
    hypercube and heuristic.

For each: wall time, CPU time of this process and its workers, secondaries, % of the cells
hidden, value hidden, the audit.

Usage: ``python benchmarks/bench_modular.py [--parts=i,ii] [--quick] [--write-job DIR]``
(``--quick``: no OPT on (i), modular with one process only on (ii)).
"""

from __future__ import annotations

import re
import resource
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import large_instances  # noqa: E402

from tabsdc import Hierarchy  # noqa: E402
from tabsdc.io.argus._batch import run_batch  # noqa: E402
from tabsdc.io.argus._hrc import write_hrc  # noqa: E402
from tabsdc.io.argus._metadata import Metadata, Variable, write_rda  # noqa: E402
from tabsdc.suppression import suppress  # noqa: E402

JOB = Path(__file__).resolve().parent / "jobs" / "modular_3d"
THREE_D = large_instances.Instance(16_500, 2, (3, 3, 2), (4, 3), (5,))
FOUR_D = large_instances.Instance(8_000, 5, (2, 3, 3), (3, 4), (3, 2))
COMMANDS = ("MOD(1,0.05,1,1,1)", "GH(1,100)", "MOD(1,5,1,1,1)", "OPT(1,5)")


def instance_records(spec: large_instances.Instance) -> pd.DataFrame:
    """The records of an instance that is not in ``large_instances.INSTANCES``."""
    large_instances.INSTANCES["bench"] = spec
    try:
        return large_instances.records("bench")
    finally:
        del large_instances.INSTANCES["bench"]


def write_job(folder: Path, command: str = "MOD(1,5,1,1,1)") -> Path:
    """The 3-D job: records (CSV), metadata, the two hierarchies and the batch file."""
    folder.mkdir(parents=True, exist_ok=True)
    frame = instance_records(THREE_D)
    frame[["s3", "r2", "size", "val"]].to_csv(folder / "records.csv", index=False,
                                              header=False)
    write_hrc(Hierarchy.from_levels(frame[["s1", "s2", "s3"]].drop_duplicates()),
              folder / "sector.hrc")
    write_hrc(Hierarchy.from_levels(frame[["r1", "r2"]].drop_duplicates()),
              folder / "region.hrc")
    write_rda(Metadata((
        Variable("s3", width=4, explanatory=True, hierarchical=True,
                 hierarchy_file="sector.hrc"),
        Variable("r2", width=3, explanatory=True, hierarchical=True,
                 hierarchy_file="region.hrc"),
        Variable("size", width=2, explanatory=True),
        Variable("val", width=20, numeric=True, decimals=2)), kind="free", separator=","),
        folder / "records.rda")
    arb = folder / "modular_3d.arb"
    arb.write_text("\n".join([
        '<OPENMICRODATA> "records.csv"', '<OPENMETADATA> "records.rda"',
        '<SPECIFYTABLE> "s3""r2""size"|"val"|"val"|"val"', "<SAFETYRULE> P(15)|FREQ(3,10)",
        "<READMICRODATA>", f"<SUPPRESS> {command}", '<WRITETABLE> (1,3,AS+,"protected.csv")'])
        + "\n")
    return arb


def cpu_seconds() -> float:
    """CPU time of this process and its finished worker processes."""
    own, workers = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                       resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def job_run(command: str, folder: Path) -> dict:
    arb = folder / "modular_3d.arb"
    arb.write_text(re.sub(r"<SUPPRESS> .*", f"<SUPPRESS> {command}", arb.read_text()))
    start, cpu = time.perf_counter(), cpu_seconds()
    result = run_batch(arb)
    details = result.tables[0].outcome.details
    table = result.tables[0].outcome.table
    hidden = int(table.cells["status"].isin(("u", "m")).sum())
    return {"instance": "modular_3d (3,162 cells)", "method": command,
            "seconds": round(time.perf_counter() - start, 1),
            "cpu s": round(cpu_seconds() - cpu, 1), "status": details.get("status"),
            "secondaries": details.get("secondary_cells"),
            "% hidden": round(100 * hidden / table.n_cells, 1),
            "value hidden": details.get("objective"), "passed": result.tables[0].outcome.passed}


def table_run(label: str, table, method: str, **options) -> dict:
    start, cpu = time.perf_counter(), cpu_seconds()
    result = suppress(table, method, "value", **options)
    totals = result.totals()
    jobs = f", n_jobs={options['n_jobs']}" if "n_jobs" in options else ""
    return {"instance": label, "method": method + jobs,
            "seconds": round(time.perf_counter() - start, 1),
            "cpu s": round(cpu_seconds() - cpu, 1), "status": result.stats.status,
            "secondaries": totals["secondary cells"],
            "% hidden": round(100 * totals["suppressed cells"] / table.n_cells, 1),
            "value hidden": round(totals["secondary value"]), "passed": result.passed}


def main() -> None:
    if "--write-job" in sys.argv:
        print(write_job(Path(sys.argv[sys.argv.index("--write-job") + 1])))
        return
    quick = "--quick" in sys.argv
    parts = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--parts=")), "i,ii")
    rows = []
    if "i" in parts.split(","):
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "job"
            shutil.copytree(JOB, folder)
            for command in COMMANDS[:2] if quick else COMMANDS:
                rows.append(job_run(command, folder))
                print(rows[-1], flush=True)
    if "ii" in parts.split(","):
        table = large_instances.build_table(instance_records(FOUR_D))
        label = f"4d_5k ({table.n_cells:,} cells)"
        runs = [("modular", {"n_jobs": 1, "subtable_limit": 3.0}),
                ("modular", {"n_jobs": 2, "subtable_limit": 3.0}),
                ("hypercube", {}), ("heuristic", {})]
        for method, options in runs[:1] + runs[2:] if quick else runs:
            rows.append(table_run(label, table, method, **options))
            print(rows[-1], flush=True)
    with pd.option_context("display.width", 200):
        print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
