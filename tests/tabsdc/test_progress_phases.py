"""Every phase of every method says what it does, and no step that may last long is
silent: the command line's first progress line gives the time limit (a default one unless
``--time-limit``); each method's lines name its phases; the steps that report nothing of
their own (one solve of the master MILP, the attacks of a round, a sub-table) run inside a
heartbeat, which says something at least every ``interval`` seconds. The tests assert the
phases, never a time."""

import argparse
import contextlib
import time

import numpy as np
import pandas as pd
import pytest

import tabsdc.suppression._modular as modular
import tabsdc.suppression._optimal as optimal
from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules
from tabsdc._progress import heartbeat
from tabsdc.cli import main
from tabsdc.cli._options import DEFAULT_TIME_LIMIT, time_limit_of
from tabsdc.cta import adjust
from tabsdc.rounding import round_table
from tabsdc.suppression import suppress
from tabsdc.suppression._hypercube import method as hypercube_module


def three_way_table() -> Table:
    """120 cells whose optimal pattern takes rounds of the master MILP with failing
    requirements (so the master's patterns are repaired)."""
    rng = np.random.default_rng(1)
    n = 300
    data = pd.DataFrame({"a": rng.choice(list("ABCDE"), n), "b": rng.choice(list("PQRS"), n),
                         "c": rng.choice(list("XYZ"), n), "v": rng.lognormal(5, 1.5, n)})
    table = Table.from_microdata(data, ["a", "b", "c"], "v")
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


@pytest.fixture()
def steps(monkeypatch):
    """The tasks of the heartbeats the methods open, each reported as a long step would be
    (one line), in order."""
    opened = []

    @contextlib.contextmanager
    def recording(progress, task, time_limit=None, **options):
        opened.append(task)
        with heartbeat(progress, task, time_limit, **options):
            if progress is not None and options.get("quiet"):
                progress(f"{task}: 10 s so far")  # what a long step says
            yield

    for module in (optimal, modular, hypercube_module):
        monkeypatch.setattr(module, "heartbeat", recording)
    return opened


def phases(lines: list[str]) -> list[str]:
    """The phase of each line (its text before the first colon), consecutive repeats
    dropped."""
    out = []
    for line in lines:
        phase = line.split(":")[0]
        if not out or out[-1] != phase:
            out.append(phase)
    return out


def test_optimal_reports_every_phase_and_every_long_step(steps):
    lines = []
    result = suppress(three_way_table(), "optimal", time_limit=120, progress=lines.append)
    assert result.stats.status == "optimal" and result.protected
    said = phases(lines)
    assert said[:5] == ["optimal", "routing", "clean-up", "incumbent", "LP round 1"]
    assert said[-1].split(" (")[0] == "audit"  # the audit (and its insider attack) last
    tasks = " | ".join(steps)
    for step in ("LP round 1: relaxation", "LP round 1: attacks on the relaxation",
                 "master MILP: building the model", "round 1: master MILP",
                 "round 1: attacks on the master's pattern", "repairing the master's pattern"):
        assert step in tasks
    for task in steps:  # each long step said something while it ran
        assert f"{task}: 10 s so far" in lines


def test_heuristic_modular_and_hypercube_report_their_phases(steps):
    table = three_way_table()
    expected = {"heuristic": ["routing", "clean-up", "audit"],
                "modular": ["sub-tables", "sub-table 1 (", "checking", "audit"],
                "hypercube": ["hypercubes", "clean-up", "certificates"]}
    for method, wanted in expected.items():
        lines = []
        steps.clear()
        assert suppress(table, method, time_limit=120, progress=lines.append).protected
        said = " | ".join(phases(lines))
        position = [said.find(phase) for phase in wanted]
        assert -1 not in position and position == sorted(position), (method, said)


def test_rounding_and_adjustment_report_their_phases():
    table = three_way_table()
    counts = table.with_columns(value=table.cells["freq"].to_numpy(float))
    lines = []
    round_table(counts, 3, "controlled", time_limit=60, progress=lines.append)
    assert phases(lines) == ["controlled rounding", "audit of the rounded release"]
    lines = []
    adjust(table, "heuristic", time_limit=30, progress=lines.append, seed=0)
    assert phases(lines) == ["adjustment (heuristic)"]
    assert lines[0].startswith("adjustment (heuristic): started (time limit")


def test_a_quiet_heartbeat_speaks_during_a_long_step_only():
    lines = []
    with heartbeat(lines.append, "short", quiet=True, interval=60):
        pass
    assert lines == []
    with heartbeat(lines.append, "long", quiet=True, interval=0.05):
        time.sleep(1.0)
    assert lines[0].startswith("long: ") and "so far" in lines[0]
    assert lines[-1].startswith("long: done in")


def test_every_solving_command_has_a_default_time_limit_said_first(tmp_path, capsys):
    path = tmp_path / "t_internal.jj"
    three_way_table().to_jj(path)
    for argv in (["protect", str(path), "--method", "heuristic"], ["audit", str(path)],
                 ["round", str(path), "--base", "5", "--method", "conventional"],
                 ["adjust", str(path), "--method", "heuristic"]):
        assert main(argv) in (0, 1)
        err = capsys.readouterr().err.splitlines()
        assert err[0].strip() == "time limit 300 s (default; --time-limit to change)", argv
        assert main([*argv, "--time-limit", "30"]) in (0, 1)
        assert capsys.readouterr().err.splitlines()[0].strip() == \
            "time limit 30 s (--time-limit)"
        with pytest.raises(SystemExit):
            main([argv[0], "--help"])
        assert f"(default {DEFAULT_TIME_LIMIT:g})" in " ".join(capsys.readouterr().out.split())
    assert time_limit_of(argparse.Namespace(time_limit=None)) == DEFAULT_TIME_LIMIT
