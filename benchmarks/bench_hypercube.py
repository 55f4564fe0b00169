"""The hypercube method's search: batched evaluation against one primary at a time.

Baseline, measured in the same process: the implementation of
:mod:`tabsdc.suppression._hypercube` at commit :data:`BASELINE` (read with ``git show``),
which evaluated every primary's candidates one primary at a time, listing their corners, at
most 2,048 of them, and re-evaluated each primary of a secondary in the clean-up. The
current one evaluates candidates by matrix products on the grid of cells they use, a batch
of primaries at a time, and keeps each primary's free hypercubes during the clean-up
(:mod:`tabsdc.suppression._hypercube`). Both run the phases of the method on the same
table, costs and requirements: the cover (a hypercube per primary), the wider search for
the requirements left, the clean-up, and the check of every certificate against the
relations (:func:`~tabsdc.suppression._hypercube.uncertified`); no LP routing, no audit.

Times are CPU seconds of this process (``time.process_time``), so that a machine shared
with other jobs does not inflate them; the wall-clock seconds follow. ``objective`` is the
cost of the secondaries after the clean-up.

Usage::

    python benchmarks/bench_hypercube.py [INSTANCE ...] [--quick] [--no-baseline]

Instances from :mod:`large_instances` (default ``4d_100k``; ``--quick``: ``4d_40k``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from harness import Measurement, print_table  # noqa: E402
from large_instances import INSTANCES, build_table, records  # noqa: E402

import tabsdc.suppression._hypercube as current  # noqa: E402
from tabsdc._bounds import capacities  # noqa: E402
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._units import working_unit
from tabsdc._validation import in_working_units
from tabsdc.suppression._attacker import requirements  # noqa: E402
from tabsdc.suppression._costs import cell_costs  # noqa: E402

#: The commit whose hypercube search is the baseline.
BASELINE = "23cc76a"
ROOT = Path(__file__).resolve().parents[1]


def baseline_module():
    """The hypercube module of :data:`BASELINE`, or None (with a line saying why)."""
    try:
        text = subprocess.run(["git", "show", f"{BASELINE}:tabsdc/suppression/hypercube.py"],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"baseline skipped: commit {BASELINE} not readable ({error})", flush=True)
        return None
    path = Path(tempfile.mkdtemp()) / "hypercube_baseline.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("hypercube_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def inputs(name: str):
    """The table (in working units), costs, room, fixed cells and requirements that
    :func:`tabsdc.suppression.suppress` gives the hypercube method."""
    original = build_table(records(name))
    table, _ = in_working_units(original)
    reported = cell_costs(original, "value")
    cost = reported / working_unit(reported)
    status = table.cells["status"].to_numpy()
    fixed_on = np.isin(status, HIDDEN_STATUSES)
    allowed = ~((status == "z") & ~fixed_on)
    down, up = capacities(table, "table", None)
    reqs = requirements(status == "u", table.cells["lpl"].to_numpy(float),
                        table.cells["upl"].to_numpy(float))
    return table, cost, fixed_on, allowed, down, up, reqs


def run(module, table, cost, fixed_on, allowed, down, up, reqs) -> dict:
    """The phases with ``module``: CPU and wall seconds of each, and the pattern."""
    out: dict = {}

    def phase(label, fn):
        cpu, wall = time.process_time(), time.perf_counter()
        value = fn()
        out[label] = (time.process_time() - cpu, time.perf_counter() - wall)
        return value

    search = phase("set-up", lambda: module.HypercubeSearch(table, down, up, cost, allowed))
    cover = phase("cover", lambda: module.hypercube_pattern(search, reqs, fixed_on))
    out["left"] = len(cover.unmet)
    if cover.unmet:
        cover = phase("wider search", lambda: module.widen_cover(module.HypercubeSearch(
            table, down, up, cost, allowed, every_chain=True,
            max_combinations=module.WIDE_COMBINATIONS), cover))
    pattern = phase("clean-up", lambda: module.clean_up_hypercubes(
        search, cover, cover.pattern, ~fixed_on))
    out["unproven"] = len(phase("certificates", lambda: module.uncertified(
        table.A, cover, pattern, down, up)))
    out["pattern"] = pattern
    out["secondaries"] = int((pattern & ~fixed_on).sum())
    out["cost"] = float(cost @ (pattern & ~fixed_on))
    return out


def main(argv: list[str]) -> None:
    names = [a for a in argv if not a.startswith("--")] or (
        ["4d_40k"] if "--quick" in argv else ["4d_100k"])
    old = None if "--no-baseline" in argv else baseline_module()
    rows = []
    for name in names:
        if name not in INSTANCES:
            raise SystemExit(f"unknown instance {name!r}: {', '.join(INSTANCES)}")
        data = inputs(name)
        label = f"{name} ({data[0].n_cells:,} cells, {len({r.cell for r in data[-1]}):,} primaries)"
        results = {"batched": run(current, *data)}
        if old is not None:
            results["one at a time"] = run(old, *data)
        for method, result in results.items():
            for phase in ("cover", "wider search", "clean-up", "certificates"):
                if phase in result:
                    cpu, wall = result[phase]
                    rows.append(Measurement(label, f"{method}: {phase}", cpu, float("nan"),
                                            baseline=f"one at a time: {phase}"
                                            if old is not None else None))
            cpu = sum(result[p][0] for p in ("set-up", "cover", "wider search", "clean-up",
                                              "certificates") if p in result)
            rows.append(Measurement(label, f"{method}: all", cpu, float("nan"),
                                    objective=round(result["cost"], 1),
                                    baseline="one at a time: all" if old is not None
                                    else None))
            wall = sum(result[p][1] for p in ("set-up", "cover", "wider search", "clean-up",
                                               "certificates") if p in result)
            print(f"{label}, {method}: {wall:.1f} s wall; {result['secondaries']:,} "
                  f"secondaries (cost {result['cost']:,.1f}); {result['left']:,} "
                  f"requirements left after the cover; {result['unproven']} certificates "
                  "not holding", flush=True)
        if old is not None:
            same = (results["batched"]["pattern"] == results["one at a time"]["pattern"]).all()
            print(f"{label}: the two patterns are {'the same' if same else 'different'}",
                  flush=True)
    print_table(rows, "Hypercube search, CPU seconds (process time)")


if __name__ == "__main__":
    main(sys.argv[1:])
