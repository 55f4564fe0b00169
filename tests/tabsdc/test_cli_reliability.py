"""The command line's guarantees: outputs checked before the work, written whole or not at
all, interrupts (exit 130), internal errors (exit 3), --help examples, choices from the API."""

import argparse
import inspect
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microsdc.cli import main as microsdc_main
from sdcreport._files import atomic_write
from tabsdc.cli import main
from tabsdc.cli._main import COMMANDS, build_parser
from tabsdc.cta import adjust
from tabsdc.rounding import METHODS as ROUNDING_METHODS
from tabsdc.suppression import METHODS as SUPPRESSION_METHODS

ROOT = Path(__file__).resolve().parents[2]
MICRO = "region,sector,turnover\nA,x,100\nA,x,10\nA,y,50\nB,x,40\nB,y,35\nB,y,30\nC,y,7\n"
RULES = ["--dims", "region", "sector", "--value", "turnover", "--p", "10"]


@pytest.fixture()
def micro(tmp_path):
    path = tmp_path / "micro.csv"
    path.write_text(MICRO)
    return path


def test_a_bad_output_path_is_found_before_any_work(micro, tmp_path, capsys):
    argv = ["protect", str(micro), *RULES, "--out", str(tmp_path / "a.jj"),
            "--publish", str(tmp_path / "b.csv"), "--json", str(tmp_path / "missing/x.json")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing was solved, not even the rules summary
    assert "the folder" in captured.err and "missing does not exist" in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["micro.csv"]
    # --mkdir creates the folder; every output is then written
    assert main([*argv, "--mkdir"]) == 0
    assert json.loads((tmp_path / "missing" / "x.json").read_text())["audit_protected"]
    assert (tmp_path / "a.jj").exists() and (tmp_path / "b.csv").exists()


def test_an_output_may_replace_the_input_only_with_force(micro, tmp_path):
    before = micro.read_bytes()
    assert main(["rules", str(micro), *RULES, "--out", str(micro)]) == 2
    assert micro.read_bytes() == before
    assert main(["rules", str(micro), *RULES, "--out", str(micro), "--force"]) == 0
    assert "status" in pd.read_csv(micro, skiprows=1).columns


def test_atomic_write_keeps_the_old_file_when_interrupted(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_write(target) as stream:
        stream.write("half of the new")
        raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_an_internal_error_is_one_line_and_exit_3(micro, monkeypatch, capsys):
    import tabsdc.cli._rules

    def broken(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(tabsdc.cli._rules, "read_table", broken)
    assert main(["rules", str(micro), *RULES]) == 3
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "tabsdc rules: internal error: ZeroDivisionError: division by zero "
        "(--debug shows the traceback)"]
    assert main(["rules", str(micro), *RULES, "--debug"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken" in err


def test_microsdc_uses_the_same_runner(tmp_path, capsys):
    records = tmp_path / "r.csv"
    records.write_text("a,b\n" + "".join(f"{i},{i * i % 7}\n" for i in range(12)))
    out = tmp_path / "new" / "m.csv"
    assert microsdc_main(["mask", str(records), "--method", "mdav", "--out", str(out)]) == 2
    assert "give --mkdir" in capsys.readouterr().err
    assert microsdc_main(["mask", str(records), "--method", "mdav", "--out", str(out),
                          "--mkdir"]) == 0
    assert len(pd.read_csv(out)) == 12


def test_every_help_ends_with_an_example(capsys):
    commands = argparse.ArgumentParser(prog="tabsdc").add_subparsers()
    for command in COMMANDS.values():
        command.load()(commands)
    names = list(commands.choices)
    assert names == list(COMMANDS) == ["sample", "rules", "protect", "audit", "round",
                                       "ptable", "ckm", "adjust", "demo", "argus", "ui"]
    for argv in ([], *([name] for name in names)):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        last = capsys.readouterr().out.strip().splitlines()[-2:]
        assert last[0] == "example:" and last[1].strip().startswith("tabsdc")
        if argv:
            assert last[1].strip().startswith(f"tabsdc {argv[0]}")


def test_choices_and_defaults_come_from_the_api():
    parser = build_parser("tabsdc", "Tables.", COMMANDS, "tabsdc demo")
    protect = parser.parse_args(["protect", "t.jj"])
    assert protect.method == inspect.signature(
        __import__("tabsdc.suppression", fromlist=["suppress"]).suppress
    ).parameters["method"].default
    assert parser.parse_args(["adjust", "t.jj"]).method == \
        inspect.signature(adjust).parameters["method"].default
    for method in SUPPRESSION_METHODS:
        assert parser.parse_args(["protect", "t.jj", "--method", method]).method == method
    for method in ROUNDING_METHODS:
        assert parser.parse_args(["round", "t.jj", "--base", "5", "--method", method])


def test_the_positional_argument_is_input_everywhere():
    parser = build_parser("tabsdc", "Tables.", COMMANDS, "tabsdc demo")
    for argv in (["rules", "x"], ["protect", "x"], ["audit", "x"],
                 ["round", "x", "--base", "2", "--method", "conventional"], ["adjust", "x"]):
        assert parser.parse_args(argv).input == Path("x")


def _long_survey(path: Path, records: int = 40_000) -> None:
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.integers(0, 60, records), "b": rng.integers(0, 40, records),
                  "c": rng.integers(0, 6, records),
                  "v": rng.lognormal(3, 1.5, records).round(1)}).to_csv(path, index=False)


def test_ctrl_c_during_a_long_solve_exits_130_and_writes_nothing(tmp_path):
    survey = tmp_path / "survey.csv"
    _long_survey(survey)
    out, js = tmp_path / "protected.jj", tmp_path / "protected.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tabsdc.cli", "protect", str(survey), "--dims", "a", "b", "c",
         "--value", "v", "--p", "15", "--freq", "3", "--method", "optimal",
         "--time-limit", "3600", "--out", str(out), "--json", str(js)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in process.stdout:  # the rules' summary is printed just before the solve
        if "primary" in line:
            break
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("tabsdc protect: interrupted after ")
    assert err.strip().endswith("no output written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


@pytest.mark.parametrize("scale", [1e15, 1e-9])
def test_the_pattern_does_not_depend_on_the_unit(tmp_path, scale):
    patterns = []
    for factor in (1.0, scale):
        lines = MICRO.splitlines()
        scaled = [lines[0]] + [f"{r},{s},{float(v) * factor!r}"
                               for r, s, v in (line.split(",") for line in lines[1:])]
        path = tmp_path / f"m{factor}.csv"
        path.write_text("\n".join(scaled) + "\n")
        js = tmp_path / f"p{factor}.json"
        assert main(["protect", str(path), *RULES, "--json", str(js)]) == 0
        patterns.append(json.loads(js.read_text())["suppressed"])
    assert patterns[0] == patterns[1] and patterns[0]


def test_study_refuses_to_write_over_its_data(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b\n" + "".join(f"{i},{i % 3}\n" for i in range(20)))
    before = data.read_bytes()
    assert microsdc_main(["study", "--data", str(data), "--quick", "--html", str(data),
                          "--json", str(tmp_path / "s.json")]) == 2
    assert "is an input file" in capsys.readouterr().err
    assert data.read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_a_command_as_ctrl_c_does(tmp_path, signum):
    survey = tmp_path / "survey.csv"
    _long_survey(survey)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tabsdc.cli", "protect", str(survey), "--dims", "a", "b", "c",
         "--value", "v", "--p", "15", "--freq", "3", "--method", "optimal",
         "--time-limit", "3600", "--out", str(tmp_path / "p.jj"),
         "--json", str(tmp_path / "p.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in process.stdout:  # the rules' summary is printed just before the solve
        if "primary" in line:
            break
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, err  # 143 for SIGTERM, 129 for SIGHUP
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"tabsdc protect: interrupted by {signal.Signals(signum).name} "
                           "after ")
    assert last.endswith("no output written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_sigterm_during_a_cta_milp_ends_the_command_and_its_worker(tmp_path):
    from tests.tabsdc.test_cli_keep_best import grid_jj
    from tests.tabsdc.test_solver_isolated import cpu_seconds, running, wait_for, workers_of

    grid_jj(tmp_path / "g.jj", k=40)  # its MILP runs minutes
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tabsdc.cli", "adjust", "g.jj", "--method", "milp",
         "--time-limit", "600", "--out", "a.jj", "--json", "a.json"], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert wait_for(lambda: workers_of(process.pid), 120.0)
        worker = workers_of(process.pid)[0]
        assert wait_for(lambda: cpu_seconds(worker) > 5.0, 120.0)  # it is solving
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("tabsdc adjust: interrupted by SIGTERM after ")
    assert last.endswith("no output written") and "Traceback" not in err
    assert wait_for(lambda: not running(worker), 10.0)  # not re-parented to run on
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jj"]
