"""Faults at run time: a full disk, a failure while the outputs replace the previous files,
a symbolic link as output, part files of a killed writer, values too large for float64's
sums and for exact rounding, a CTA MILP that runs out of time, and work started after a
deadline. Each gets a clear answer and harms nothing: the outputs of a command land together
or not at all, the previous files stay intact, no partial file is left behind, no raw
warning reaches the user, a time limit is kept."""

import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sdcreport._files as files
from sdcreport._files import OutputPathError, write_text
from tabsdc import Table
from tabsdc._errors import InputError
from tabsdc.cli import main
from tabsdc.solver._problem import SolveResult

from .cases import JJ, MICRO, RULES

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


# -- a full disk, and failures while the outputs are put in place -------------------------------


class _FullDisk(io.RawIOBase):
    """A file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, real: io.FileIO, room: int) -> None:
        self.real, self.room = real, room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.real.write(data)

    def fileno(self) -> int:
        return self.real.fileno()

    def close(self) -> None:
        self.real.close()
        super().close()


def _disk_full_at(monkeypatch: pytest.MonkeyPatch, opened: int, room: int = 10) -> None:
    """The ``opened``-th part file the writers open (1 = the first) fills the disk after
    ``room`` bytes."""
    count = []

    def fake_open(descriptor, mode="r", **kwargs):
        count.append(1)
        if len(count) != opened:
            return open(descriptor, mode, **kwargs)
        raw = _FullDisk(io.FileIO(descriptor, "w"), room)
        buffered = io.BufferedWriter(raw, buffer_size=4)
        if "b" in mode:
            return buffered
        return io.TextIOWrapper(buffered, encoding=kwargs.get("encoding"),
                                newline=kwargs.get("newline"))

    monkeypatch.setattr(files, "open", fake_open, raising=False)


def test_a_full_disk_names_the_file_and_keeps_every_previous_output(tmp_path, monkeypatch,
                                                                     capsys):
    micro = tmp_path / "micro.csv"
    micro.write_text(MICRO)
    outputs = {"--out": "p.jj", "--publish": "p.csv", "--json": "p.json", "--html": "p.html"}
    argv = ["protect", str(micro), *RULES]
    for flag, name in outputs.items():
        argv += [flag, str(tmp_path / name)]
        (tmp_path / name).write_text(f"the previous {name}")
    before = _snapshot(tmp_path)
    _disk_full_at(monkeypatch, opened=3)  # --json, after --out and --publish were staged
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in err
    assert re.fullmatch(rf"tabsdc protect: error: cannot write {re.escape(str(tmp_path))}/"
                        r"p\.json: no space left on the device \([\d.]+ (bytes|KiB|MiB|GiB|TiB)"
                        rf" free in {re.escape(str(tmp_path))}\); nothing was replaced", err[-1])
    assert _snapshot(tmp_path) == before  # all four previous files intact, nothing else
    monkeypatch.undo()
    assert main(argv) == 0  # with room on the disk every output is written
    assert all((tmp_path / name).read_bytes() != before[name] for name in outputs.values())
    assert _parts(tmp_path) == []


def test_a_failure_while_replacing_puts_every_previous_file_back(tmp_path, monkeypatch):
    old = {"a.csv": "old a", "b.json": "old b"}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    real_replace = os.replace
    calls = []

    def interrupted_replace(source, target):
        calls.append(Path(target).name)
        if len(calls) == 3:  # a.csv and b.json are in place; c.html is not
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt), files.all_or_none():
        for name in ("a.csv", "b.json", "c.html"):
            write_text(tmp_path / name, f"new {name}")
    monkeypatch.undo()
    assert calls[:3] == ["a.csv", "b.json", "c.html"]
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == old


def test_an_error_before_the_end_of_the_block_replaces_nothing(tmp_path):
    (tmp_path / "a.csv").write_text("old a")
    with pytest.raises(OutputPathError, match="missing"), files.all_or_none():
        write_text(tmp_path / "a.csv", "new a")
        write_text(tmp_path / "missing" / "b.json", "new b")
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]
    assert (tmp_path / "a.csv").read_text() == "old a"


# -- symbolic links -----------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_an_output_that_is_a_symbolic_link_is_written_through_it(tmp_path):
    micro = tmp_path / "micro.csv"
    micro.write_text(MICRO)
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "cells.csv"
    target.write_text("previous")
    os.chmod(target, 0o640)
    link = tmp_path / "cells.csv"
    link.symlink_to(target)
    assert main(["rules", str(micro), *RULES, "--out", str(link)]) == 0
    assert link.is_symlink() and Path(os.readlink(link)) == target
    assert "status" in pd.read_csv(target, skiprows=1).columns
    assert target.stat().st_mode & 0o777 == 0o640  # the target keeps its permissions
    assert _parts(tmp_path) == _parts(tmp_path / "real") == []


# -- part files of a writer that was killed -----------------------------------------------------

_WRITER = """
import sys, time
from sdcreport._files import atomic_write
with atomic_write(sys.argv[1]) as stream:
    stream.write("half of a table")
    stream.flush()
    print("writing", flush=True)
    time.sleep(600)
"""


def _writer(target: Path) -> subprocess.Popen:
    """A process in the middle of writing ``target`` (it has said so)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], env=env,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "writing"
    return process


@pytest.mark.skipif(os.name != "posix", reason="processes looked up by number")
def test_a_later_write_removes_the_part_files_of_killed_writers_only(tmp_path):
    target = tmp_path / "cells.csv"
    with _writer(target) as killed, _writer(target) as alive:  # (closes their pipes)
        try:
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            parts = _parts(tmp_path)
            assert len(parts) == 2  # a killed writer cannot clean up
            assert any(f".{killed.pid}." in name for name in parts)
            write_text(target, "whole")
            assert target.read_text() == "whole"
            assert [f".{alive.pid}." in name for name in _parts(tmp_path)] == [True]
        finally:
            alive.kill()
            alive.wait()
    write_text(target, "again")
    assert _parts(tmp_path) == []


# -- values beyond what float64 computes exactly ------------------------------------------------


def _micro_scaled(factor: float) -> str:
    lines = MICRO.splitlines()
    return "\n".join([lines[0], *(f"{r},{s},{float(v) * factor!r}" for r, s, v in
                                  (line.split(",") for line in lines[1:]))]) + "\n"


def _run_quietly(argv: list[str]) -> int:
    """``tabsdc`` in-process with every warning an error: none may reach the user."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return main(argv)


def test_values_near_the_largest_float_are_refused_naming_the_line_and_the_limit(
        tmp_path, capsys):
    micro = tmp_path / "micro.csv"
    micro.write_text(_micro_scaled(1e306))  # totals of these overflow to inf
    before = _snapshot(tmp_path)
    assert _run_quietly(["protect", str(micro), *RULES, "--out", str(tmp_path / "o.jj")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tabsdc protect: error: column 'turnover' has a too large value at "
                          "line 2: 1e+308 (value 1e+308 is beyond 1e+150, the largest "
                          "magnitude the toolkit computes with")
    jj = tmp_path / "t.jj"
    jj.write_text(JJ.replace("1 2 1 u 0 10 1 1 0", "1 1.7e308 1 u 0 1.79e308 1 1 0"))
    before = _snapshot(tmp_path)
    for command in (["audit", str(jj), "--json", str(tmp_path / "a.json")],
                    ["adjust", str(jj), "--out", str(tmp_path / "a.jj")]):
        assert _run_quietly(command) == 2
        assert capsys.readouterr().err.strip().endswith(
            "t.jj: line 4: field value 1.7e+308 is beyond 1e+150, the largest magnitude the "
            "toolkit computes with (sums and squares of larger values overflow); give the "
            "values in a larger unit")
    assert _snapshot(tmp_path) == before
    with pytest.raises(InputError, match=r"cell 'b': upl 1e\+200 is beyond 1e\+150"):
        Table(pd.DataFrame({"value": [5.0, 2.0, 3.0], "upl": [0, 1e200, 0]},
                           index=["T", "b", "c"]), [[-1, 1, 1]], [0])


def test_large_values_within_the_limit_are_published_exactly_without_a_warning(tmp_path):
    micro = tmp_path / "micro.csv"
    micro.write_text(_micro_scaled(1e140))
    publish = tmp_path / "p.csv"
    argv = ["protect", str(micro), *RULES, "--out", str(tmp_path / "o.jj"), "--publish",
            str(publish), "--json", str(tmp_path / "o.json"), "--html", str(tmp_path / "o.html")]
    assert _run_quietly(argv) == 0
    published = pd.read_csv(publish, encoding="utf-8-sig", dtype=str)
    shown = published.set_index(["region", "sector"])["value"]
    assert float(shown[("Total", "Total")]) == pytest.approx(272e140, rel=1e-14)
    assert _run_quietly(["adjust", str(tmp_path / "o.jj"), "--out", str(tmp_path / "a.jj"),
                         "--json", str(tmp_path / "a.json")]) == 0


@pytest.mark.parametrize("method", ["controlled", "conventional"])
def test_rounding_beyond_two_to_the_53_is_refused_naming_the_cell(tmp_path, capsys, method):
    jj = tmp_path / "t.jj"
    jj.write_text("0\n3\n0 3e20 1 s 0 1e21 0 0 0\n1 1e20 1 u 0 1e21 1 1 0\n"
                  "2 2e20 1 s 0 1e21 0 0 0\n1\n0 3 : 0 (-1) 1 (1) 2 (1)\n")
    before = _snapshot(tmp_path)
    assert main(["round", str(jj), "--method", method, "--base", "5",
                 "--out", str(tmp_path / "r.jj")]) == 2
    assert capsys.readouterr().err.strip() == (
        "tabsdc round: error: cell 0: 3e+20 is beyond 2**53 - 5 = 9007199254740987: above "
        "2**53 float64 numbers do not hold every multiple of the base 5, so a rounded table "
        "would not be exact; round the table in a larger unit (e.g. thousands)")
    assert _snapshot(tmp_path) == before
    exact = 2**53 - 5 - 2  # the largest total within the limit: rounded exactly
    jj.write_text(f"0\n3\n0 {exact} 1 s 0 {2**53} 0 0 0\n1 {exact - 7} 1 u 0 {2**53} 1 1 0\n"
                  "2 7 1 s 0 100 0 0 0\n1\n0 3 : 0 (-1) 1 (1) 2 (1)\n")
    assert main(["round", str(jj), "--method", method, "--base", "5",
                 "--out", str(tmp_path / "r.jj"), "--no-audit"]) == 0
    rounded = Table.from_jj(tmp_path / "r.jj").values
    assert all(int(v) % 5 == 0 for v in rounded) and int(rounded[0]) == int(rounded[1]) + \
        int(rounded[2])


# -- a CTA MILP that runs out of time -----------------------------------------------------------


def _cta_table(path: Path) -> Table:
    """A 12 x 12 table with totals, 8 % of its interior cells sensitive (levels 30 %)."""
    rng = np.random.default_rng(1)
    cells = pd.MultiIndex.from_product([[f"r{i:02d}" for i in range(12)],
                                        [f"c{j:02d}" for j in range(12)]],
                                       names=["r", "c"]).to_frame(index=False)
    cells["value"] = rng.lognormal(4, 1, len(cells)).round(0) + 1
    table = Table.from_aggregated(cells, ["r", "c"])
    sensitive = (rng.random(table.n_cells) < 0.08) & ~table.total_cells
    level = np.where(sensitive, 0.3 * table.values, 0.0)
    table = table.with_columns(status=np.where(sensitive, "u", "s"), lpl=level, upl=level)
    table.to_jj(path)
    return Table.from_jj(path)


def _milp_out_of_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every CTA MILP solve ends as a worker stopped at its time limit: no solution."""
    import tabsdc.cta._milp as milp

    def stopped(problem, options, **kwargs):
        return SolveResult(status="no_solution", optimal=False, objective=None, bound=None,
                           gap=None, x=None, row_duals=None, col_duals=None, seconds=0.0,
                           solver="highs", message="HiGHS did not return within its time "
                           "limit (it was stopped)")

    monkeypatch.setattr(milp, "solve_isolated", stopped)


def test_a_cta_milp_without_a_solution_returns_the_verified_start_with_its_gap(
        tmp_path, monkeypatch):
    table = _cta_table(tmp_path / "t.jj")
    _milp_out_of_time(monkeypatch)
    out, js = tmp_path / "a.jj", tmp_path / "a.json"
    assert main(["adjust", str(tmp_path / "t.jj"), "--time-limit", "60", "--out", str(out),
                 "--json", str(js)]) == 0
    result = json.loads(js.read_text())
    assert result["status"] == "feasible" and result["passed"]
    assert result["details"]["found_by"] == "fixed directions"
    assert result["details"]["milp_status"] == "no_solution"
    assert 0 < result["gap"] < 1 and result["bound"] <= result["objective"]
    # checked here independently of the method: relations, protection, bounds
    adjusted = Table.from_jj(out).values
    assert np.abs(table.A @ adjusted - table.b).max() <= 1e-9 * np.abs(table.values).max()
    sensitive = (table.cells["status"] == "u").to_numpy()
    a, lpl, upl = table.values, table.cells["lpl"].to_numpy(), table.cells["upl"].to_numpy()
    moved = adjusted[sensitive]
    assert np.all((moved <= (a - lpl)[sensitive] + 1e-9) | (moved >= (a + upl)[sensitive]
                                                            - 1e-9))
    assert np.all(adjusted >= -1e-9)


def test_a_cta_without_any_verified_adjustment_exits_1_not_2(tmp_path, monkeypatch, capsys):
    import tabsdc.cta._heuristic as heuristic

    _cta_table(tmp_path / "t.jj")
    _milp_out_of_time(monkeypatch)
    real = heuristic._solve_fixed

    def out_of_time(model, up, clock):  # every LP for fixed directions stops at its limit
        result = real(model, up, clock)
        return SolveResult(status="no_solution", optimal=False, objective=None, bound=None,
                           gap=None, x=None, row_duals=None, col_duals=None,
                           seconds=result.seconds, solver="highs",
                           message="Time limit reached")

    monkeypatch.setattr(heuristic, "_solve_fixed", out_of_time)
    out = tmp_path / "a.jj"
    for method in ("milp", "heuristic"):
        assert main(["adjust", str(tmp_path / "t.jj"), "--method", method, "--time-limit",
                     "60", "--out", str(out)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("tabsdc adjust: no verified result: ")
        assert not out.exists()


# -- time limits: nothing long starts once the deadline has expired -----------------------------


def _ruled_table() -> Table:
    from tabsdc import FrequencyRule, PPercentRule, apply_rules

    rng = np.random.default_rng(0)
    data = pd.DataFrame({"a": rng.integers(0, 12, 600).astype(str),
                         "b": rng.integers(0, 10, 600).astype(str),
                         "v": rng.lognormal(3, 1.5, 600).round(1)})
    return apply_rules(Table.from_microdata(data, ["a", "b"], "v"),
                       [PPercentRule(15), FrequencyRule(3)]).table


def test_the_optimal_suppression_builds_no_model_after_its_deadline(monkeypatch):
    import tabsdc.suppression._optimal as optimal

    real = optimal.heuristic_pattern

    def routed_until_the_deadline(*args, deadline, **kwargs):
        found = real(*args, deadline=deadline, **kwargs)
        deadline.seconds = 0.0  # the time limit came during the routing
        return found[0], found[1], False

    def no_model(*args, **kwargs):
        raise AssertionError("a model was built after the deadline")

    monkeypatch.setattr(optimal, "heuristic_pattern", routed_until_the_deadline)
    monkeypatch.setattr(optimal, "HighsModel", no_model)
    from tabsdc.suppression import suppress

    result = suppress(_ruled_table(), "optimal", time_limit=600)
    assert result.status == "no pattern" and result.stats.time_limited


def test_routing_starts_no_flow_after_its_deadline(monkeypatch):
    import tabsdc.suppression._heuristic as heuristic
    from tabsdc._bounds import capacities
    from tabsdc._flows import Requirement
    from tabsdc._progress import Deadline

    table = _ruled_table()
    down, up = capacities(table)
    deadline = Deadline(600.0)
    router = heuristic.FlowRouter(table.A, down, up, np.ones(table.n_cells, dtype=bool),
                                  deadline=deadline)
    cell = int(np.flatnonzero(table.cells["status"].to_numpy() == "u")[0])
    requirement = Requirement(cell, 1, float(table.cells["upl"].iloc[cell]))
    cost = table.values.copy()
    none = np.zeros(table.n_cells, dtype=bool)
    assert router.route(requirement, cost, none) is not None
    solved = []
    monkeypatch.setattr(heuristic, "flow_and_status", lambda *a, **k: solved.append(1))
    monkeypatch.setattr(heuristic, "local_flow", lambda *a, **k: solved.append(1))
    deadline.seconds = 0.0
    assert router.route(requirement, cost, none) is None and solved == []


def test_the_seed_rows_built_at_once_are_those_of_each_primary_and_relation():
    import scipy.sparse as sp

    from tabsdc._flows import Requirement
    from tabsdc.suppression._bound import seed_rows

    table = _ruled_table()
    A = sp.csr_array(table.A)
    primaries = np.flatnonzero(table.cells["status"].to_numpy() == "u")
    reqs = [Requirement(int(c), d, 1.0) for c in primaries[::-1] for d in (1, -1)]
    expected = []  # one row per primary (in order) and relation holding it (in order)
    for i in primaries:
        for r in np.flatnonzero(A[:, [i]].toarray().ravel()):
            row = (A[[r]].toarray().ravel() != 0).astype(float)
            row[i] = 0.0
            expected.append(row)
    built = seed_rows(A, reqs, table.n_cells)
    assert len(expected) > 50
    np.testing.assert_array_equal(built.toarray(), np.array(expected))


def test_the_audit_of_a_rounding_gets_what_the_time_limit_left(monkeypatch):
    import tabsdc.rounding._api as api

    limits = []
    real = api.audit_rounding

    def audit(*args, time_limit=None, **kwargs):
        limits.append(time_limit)
        return real(*args, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(api, "audit_rounding", audit)
    table = _ruled_table()
    counts = table.with_columns(value=table.cells["freq"].to_numpy(float))
    result = api.round_table(counts, 5, "controlled", time_limit=120)
    assert len(limits) == 1 and 0 < limits[0] < 120 and result.audit.complete
    api.round_table(counts, 5, "controlled")
    assert limits[1] is None  # without a time limit the audit has none either


@given(st.integers(1, 25), st.integers(1, 40), st.floats(0.01, 0.3), st.integers(0, 10**6))
def test_the_groups_of_tied_cells_are_the_components_of_a_transpose_a(m, n, density, seed):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from tabsdc.audit._intervals import cell_components

    A = sp.csr_array(sp.random(m, n, density=density, random_state=seed, format="csr"))
    pattern = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
    count, label = connected_components((pattern.T @ pattern).tocsr(), directed=False)
    found = cell_components(A)
    assert found[0] == count and found[1].tolist() == label.tolist()
