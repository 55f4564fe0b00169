"""``--keep-best``: Ctrl-C during a solve writes the best result found so far that passes its
checks, marked interrupted, and still exits 130; without it, or without such a result,
nothing is written. Interrupts come from a real SIGINT sent to a subprocess after a chosen
progress line, or (in-process) from the test raising SIGINT at a chosen step."""

import functools
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tabsdc import Table
from tabsdc.audit import audit
from tabsdc.cli import main
from tests.tabsdc.test_interrupts import interrupt_after, sigint

ROOT = Path(__file__).resolve().parents[2]


def grid_jj(path: Path, k: int = 40, share: float = 0.08, seed: int = 1) -> Table:
    """A k x k table with totals, ``share`` of its interior cells primary (levels 30 %)."""
    rng = np.random.default_rng(seed)
    cells = pd.MultiIndex.from_product(
        [[f"r{i:02d}" for i in range(k)], [f"c{j:02d}" for j in range(k)]],
        names=["r", "c"]).to_frame(index=False)
    cells["value"] = rng.lognormal(4, 1, len(cells)).round(0) + 1
    table = Table.from_aggregated(cells, ["r", "c"])
    primary = (rng.random(table.n_cells) < share) & ~table.total_cells
    level = np.where(primary, 0.3 * table.values, 0.0)
    table = table.with_columns(status=np.where(primary, "u", "s"), lpl=level, upl=level)
    table.to_jj(path)
    return table


def run_interrupted(argv: list[str], at: str, cwd: Path) -> tuple[int, str]:
    """Run ``tabsdc`` in a subprocess and send it SIGINT at the first stderr line holding
    ``at``; returns the exit status and the whole standard error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    process = subprocess.Popen([sys.executable, "-m", "tabsdc.cli", *argv], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if at in line:
            process.send_signal(signal.SIGINT)
            break
    _, rest = process.communicate(timeout=300)
    return process.returncode, "".join(seen) + rest


@pytest.mark.parametrize("keep", [True, False])
def test_ctrl_c_after_the_first_pattern(tmp_path, keep):
    grid_jj(tmp_path / "g.jj", k=20)
    argv = ["protect", "g.jj", "--method", "optimal", "--out", "p.jj", "--json", "p.json",
            "--publish", "p.csv", *(["--keep-best"] if keep else [])]
    # the optimal method's first LP round comes after its first (heuristic) pattern
    status, err = run_interrupted(argv, "LP round 1", tmp_path)
    assert status == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("tabsdc protect: interrupted after ")
    # with --keep-best the kept pattern's audit was the last work done
    assert ("last progress: audit: " if keep else "last progress: LP round 1") in last
    if not keep:
        assert last.endswith("; no output written")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jj"]
        return
    assert ("; --keep-best: the best audit-clean pattern found so far (status feasible, gap "
            in last)
    assert last.endswith("marked interrupted: written p.jj, p.csv, p.json")
    summary = json.loads((tmp_path / "p.json").read_text())
    assert summary["interrupted"] and summary["time_limited"]
    assert summary["status"] == "feasible" and summary["audit_protected"]
    assert summary["gap"] > 0 and summary["rounds"] == 0
    written = Table.from_jj(tmp_path / "p.jj")
    check = audit(written)  # an independent audit of what was written
    assert check.protected and len(check.frame) == len(summary["suppressed"])
    published = pd.read_csv(tmp_path / "p.csv")
    assert (published["value"].astype(str) == "x").sum() == len(summary["suppressed"])


def keep_best_at(monkeypatch, module, at: str) -> None:
    """Make the command's progress lines send one Ctrl-C at the first line holding ``at``."""
    real = module.progress_printer

    def printer(args):
        show = real(args)
        sent = []

        def line(text: str) -> None:
            show(text)
            if at in text and not sent:
                sent.append(text)
                sigint()
        return line

    monkeypatch.setattr(module, "progress_printer", printer)


def test_keep_best_without_a_pattern_writes_nothing(tmp_path, monkeypatch, capsys):
    import tabsdc.cli._protect as protect

    grid_jj(tmp_path / "g.jj", k=12)
    keep_best_at(monkeypatch, protect, "routing: 0 of")
    out = tmp_path / "p.jj"
    assert main(["protect", str(tmp_path / "g.jj"), "--method", "heuristic", "--out",
                 str(out), "--keep-best"]) == 130
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith("; no protecting pattern was complete; no output written")
    assert not out.exists()


def test_keep_best_never_writes_a_pattern_that_fails_the_audit(tmp_path, monkeypatch,
                                                                capsys):
    import tabsdc.cli._protect as protect

    table = grid_jj(tmp_path / "g.jj", k=12)
    real = protect.suppress

    @functools.wraps(real)  # the parser reads suppress's defaults
    def unprotecting(*args, **kwargs):  # as if the search had kept only the primaries
        result = real(*args, **kwargs)
        return replace(result, interrupted=True, audit=audit(table))

    monkeypatch.setattr(protect, "suppress", unprotecting)
    out, js = tmp_path / "p.jj", tmp_path / "p.json"
    assert main(["protect", str(tmp_path / "g.jj"), "--method", "heuristic", "--out",
                 str(out), "--json", str(js), "--keep-best"]) == 130
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith("; --keep-best: the pattern found so far fails the audit, so it was "
                         "not written; no output written")
    assert not out.exists() and not js.exists()


def test_adjust_keeps_the_heuristics_adjustment(tmp_path, monkeypatch, capsys):
    import tabsdc.cta._heuristic as heuristic

    grid_jj(tmp_path / "g.jj", k=10, share=0.15)
    real = heuristic.improve

    def interrupted(*args, **kwargs):  # Ctrl-C once the first adjustment exists
        sigint()
        return real(*args, **kwargs)

    monkeypatch.setattr(heuristic, "improve", interrupted)
    out, js = tmp_path / "a.jj", tmp_path / "a.json"
    argv = ["adjust", str(tmp_path / "g.jj"), "--method", "heuristic", "--time-limit", "60",
            "--seed", "0", "--out", str(out), "--json", str(js)]
    assert main(argv) == 130  # without --keep-best
    assert "; no output written" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--keep-best"]) == 130
    captured = capsys.readouterr()
    assert "INTERRUPTED (Ctrl-C)" in captured.out
    assert "--keep-best: the best adjustment (every check passed) found so far" in captured.err
    summary = json.loads(js.read_text())
    assert summary["interrupted"] and summary["passed"]
    adjusted = Table.from_jj(out)
    assert np.abs(adjusted.A @ adjusted.values - adjusted.b).max() < 1e-6  # still additive


def test_round_keeps_the_milps_rounding(tmp_path, monkeypatch, capsys):
    import tabsdc.rounding._controlled as controlled

    interrupt_after(monkeypatch, controlled, "solve")
    # three dimensions: controlled rounding is a MILP, not a flow
    rng = np.random.default_rng(0)
    cells = pd.MultiIndex.from_product([list("abcde"), list("vwxyz"), list("pqr")],
                                       names=["i", "j", "k"]).to_frame(index=False)
    cells["value"] = rng.integers(0, 30, len(cells)).astype(float)
    counts = tmp_path / "c.jj"
    Table.from_aggregated(cells, ["i", "j", "k"]).to_jj(counts)
    out, js = tmp_path / "r.jj", tmp_path / "r.json"
    assert main(["round", str(counts), "--base", "5", "--method", "controlled", "--no-audit",
                 "--out", str(out), "--json", str(js), "--keep-best"]) == 130
    err = capsys.readouterr().err
    assert "--keep-best: the best controlled rounding (additive) found so far" in err
    summary = json.loads(js.read_text())
    assert summary["interrupted"] and summary["additive"]
    assert np.all(Table.from_jj(out).values % 5 == 0)
