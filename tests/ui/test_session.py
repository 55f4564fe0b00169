"""The web app's server side without a browser: sessions, jobs, downloads, the script."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from sdcreport._files import CSV_MARK
from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._errors import InputError
from tabsdc.audit import audit
from tabsdc.ui._jobs import Job
from tabsdc.ui._session import Session
from tests.ui.conftest import DIMS, LEVELS, SURVEY, published_by_api, ruled_by_api

HIERARCHIES = {dim: {"kind": "levels", "columns": LEVELS[dim]} for dim in DIMS}
#: A smaller table (144 cells) for the tests that run several methods.
SMALL = {"A21": {"kind": "levels", "columns": ["A10"]},
         "NUTS2": {"kind": "levels", "columns": ["NUTS1"]}}


def slow_count(seconds: float, progress=None) -> int:
    """A task for the job tests: one progress line per tenth of a second."""
    steps = int(seconds * 10)
    for step in range(steps):
        if progress is not None:
            progress(f"step {step + 1}/{steps}")
        time.sleep(0.1)
    return steps


def within(condition: Callable[[], bool], timeout: float = 10) -> bool:
    """Whether ``condition()`` holds within ``timeout`` seconds (asked every 0.1 s)."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)
    return True


def gone(pid: int, timeout: float = 10) -> bool:
    """Whether process ``pid`` no longer exists (or is a zombie) within ``timeout``."""
    return within(lambda: _ended(pid), timeout)


def _ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def wait(session: Session, timeout: float = 120) -> dict:
    end = time.monotonic() + timeout
    while (state := session.job_state())["state"] == "running" and time.monotonic() < end:
        time.sleep(0.2)
    return state


@pytest.fixture
def session(tmp_path):
    s = Session(10**8, root=tmp_path)
    yield s
    s.close()


def ruled_session(session: Session, hierarchies: dict = HIERARCHIES) -> Session:
    """The survey's turnover by the dimensions of ``hierarchies``, p% 10 and frequency 3."""
    session.load_source(SURVEY, "business_survey.csv")
    session.build_table({"kind": "microdata", "dims": list(hierarchies), "value": "TURNOVER"},
                        hierarchies)
    session.apply_rules({"p": 10, "freq": 3})
    return session


def test_suppression_session_publishes_what_the_api_publishes(session, tmp_path):
    ruled_session(session, SMALL)
    session.start_protection({"method": "suppression", "algorithm": "optimal",
                              "cost": "value", "time_limit": 60})
    (tmp_path / "api").mkdir()  # the API's run while the session's worker runs
    api_ruled = ruled_by_api({dim: spec["columns"] for dim, spec in SMALL.items()})
    api_publishable = published_by_api(api_ruled, tmp_path / "api")
    primaries = int((api_ruled.cells["status"] == "u").sum())
    assert api_publishable.count(b",x\n") > primaries > 0  # secondaries too
    assert wait(session)["state"] == "done"
    check = session.check()
    assert check["passed"] and check["failing"]["rows"] == []
    assert check["hidden"] == int(np.isin(session.protection.table.cells["status"],
                                          ["u", "m"]).sum())
    assert session.download("publishable").read_bytes() == api_publishable


@pytest.mark.slow
def test_the_script_reproduces_the_session(session, tmp_path):
    ruled_session(session, SMALL)
    session.start_protection({"method": "suppression", "algorithm": "optimal",
                              "cost": "count", "time_limit": 60})
    assert wait(session)["state"] == "done"
    published = session.download("publishable").read_bytes()
    script = session.download("script")
    workdir = tmp_path / "batch"
    workdir.mkdir()
    (workdir / "business_survey.csv").write_bytes(SURVEY.read_bytes())
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, str(script)], cwd=workdir, env=env, check=True,
                   capture_output=True)
    assert (workdir / "business_survey_publishable.csv").read_bytes() == published
    assert published.count(b",x") == int(session.protection.suppressed.sum())
    assert (workdir / "business_survey_report.html").stat().st_size > 10_000


def test_every_download_stays_in_the_session_folder(session, tmp_path):
    ruled_session(session, SMALL)
    session.start_protection({"method": "suppression", "algorithm": "heuristic",
                              "cost": "count"})
    assert wait(session)["state"] == "done"
    paths = [session.download(kind) for kind in
             ("publishable", "internal-jj", "internal-csv", "report", "script")]
    assert all(session.folder in p.parents for p in paths)
    assert paths[2].read_text().splitlines()[0] == CSV_MARK
    internal = pd.read_csv(paths[2], dtype=str, skiprows=1)
    assert set(internal["status"]) >= {"u", "m"}
    assert "<html" in paths[3].read_text()[:500].lower()
    assert [p.name for p in tmp_path.iterdir()] == [session.folder.name]
    session.close()
    assert not session.folder.exists()


def test_rule_counts_follow_the_parameters_as_the_api_counts_them(session, api_ruled):
    ruled_session(session)
    assert session.apply_rules({"p": 10, "freq": 3})["primary"] == int(
        (api_ruled.cells["status"] == "u").sum())
    loose = session.apply_rules({"p": 5, "freq": 2})
    strict = session.apply_rules({"p": 25, "nk": [2, 80], "freq": 5, "freq_level": 15})
    api = apply_rules(session.table, [PPercentRule(25), FrequencyRule(5, level=15)])
    assert loose["primary"] < strict["primary"]
    assert strict["per_rule"]["p%(p=25)"] == int(api.flags["p%(p=25)"].sum())
    grid = strict["map"]
    pivot = session.rules.table.pivot("A88", "NUTS2", "status")
    assert (grid["row_dim"], grid["column_dim"]) == ("A88", "NUTS2")
    assert sum(row.count("u") for row in grid["status"]) == int((pivot == "u").sum().sum())
    assert {code for code, _ in grid["rows"]} == set(pivot.index)


def test_tree_counts_are_the_margins_of_the_table(session):
    session.load_source(SURVEY, "business_survey.csv")
    result = session.build_table({"kind": "microdata", "dims": DIMS, "value": "TURNOVER"},
                                 {"A88": {"kind": "levels", "columns": ["A10", "A21"]},
                                  "NUTS2": {"kind": "prefixes", "lengths": [3, 4]}})
    data = pd.read_csv(SURVEY)
    region = result["trees"]["NUTS2"]
    assert region["count"] == len(data)
    assert [c["code"] for c in region["children"]] == sorted(data["NUTS1"].unique())
    fr1 = next(c for c in region["children"] if c["code"] == "FR1")
    assert fr1["count"] == int((data["NUTS1"] == "FR1").sum())
    assert fr1["value"] == pytest.approx(data.loc[data["NUTS1"] == "FR1", "TURNOVER"].sum())


def test_parent_child_file_gives_the_same_table_as_level_columns(session, tmp_path):
    data = pd.read_csv(SURVEY, dtype=str)
    pairs = Hierarchy.from_levels(data[["NUTS1", "NUTS2"]]).to_frame().dropna()
    pairs = pairs.rename(columns={"code": "child"})[["parent", "child"]]
    hierarchy_file = tmp_path / "regions.csv"
    pairs.to_csv(hierarchy_file, index=False)
    session.load_source(SURVEY, "business_survey.csv")
    session.load_hierarchy_file("NUTS2", hierarchy_file, "regions.csv")
    by_file = session.build_table({"kind": "microdata", "dims": ["NUTS2"], "value": "TURNOVER"},
                                  {"NUTS2": {"kind": "file"}})
    by_levels = session.build_table({"kind": "microdata", "dims": ["NUTS2"],
                                     "value": "TURNOVER"}, {"NUTS2": HIERARCHIES["NUTS2"]})
    assert by_file["trees"] == by_levels["trees"]


def test_a_pattern_that_fails_its_check_is_not_offered_for_publication(session):
    ruled_session(session, SMALL)
    session.start_protection({"method": "suppression", "algorithm": "heuristic",
                              "cost": "count"})
    assert wait(session)["state"] == "done"
    table = session.protection.table
    exposed = table.with_columns(status=table.cells["status"].replace("m", "s").to_numpy())
    session.protection = SimpleNamespace(table=exposed, audit=audit(exposed))
    assert not session.protection.audit.protected
    with pytest.raises(InputError, match="failed its check"):
        session.download("publishable")
    assert not list((session.folder / "downloads").glob("*_publishable.csv"))


def test_rounding_and_cta_sessions(session):
    ruled_session(session, SMALL)
    session.start_protection({"method": "rounding", "column": "freq", "rule": "controlled",
                              "base": 5, "time_limit": 60})
    assert wait(session)["state"] == "done"
    assert session.check()["passed"]
    published = pd.read_csv(session.download("publishable"), dtype=str)
    counts = published["value"].astype(int)
    assert (counts % 5 == 0).all() and len(published) == session.table.n_cells
    session.start_protection({"method": "cta", "algorithm": "heuristic", "time_limit": 30,
                              "seed": 0})
    assert wait(session)["state"] == "done"
    check = session.check()
    assert check["passed"] == session.protection.verification.passed
    assert check["statistics"]["rows"]


def test_base_choice_job_gives_the_quality_table(session):
    ruled_session(session, SMALL)
    session.start_base_choice({"candidates": [2, 5, 10], "rule": "fifty-fifty",
                               "column": "freq"})
    state = wait(session)
    assert state["state"] == "done"
    assert [row[0] for row in state["bases"]["rows"]] == ["2", "5", "10"]


def test_a_cancelled_job_stops_its_worker_process():
    job = Job("test", slow_count, {"seconds": 60})
    while not job.lines:
        time.sleep(0.05)
    pid = job.pid
    assert job.cancel().state == "cancelled"
    assert gone(pid)
    finished = Job("test", slow_count, {"seconds": 0.3}).wait(60)
    assert (finished.state, finished.result, finished.fraction) == ("done", 3, 1.0)


def test_errors_a_statistician_can_act_on(session, tmp_path):
    with pytest.raises(InputError, match="upload a data file"):
        session.build_table({"dims": ["A88"]}, {})
    bad = tmp_path / "notes.docx"
    bad.write_bytes(b"PK")
    with pytest.raises(InputError, match="cannot be read; upload one of .csv"):
        session.load_source(bad, "notes.docx")
    session.load_source(SURVEY, "business_survey.csv")
    with pytest.raises(InputError, match="no column 'SECTOR'"):
        session.build_table({"dims": ["SECTOR"]}, {})
    with pytest.raises(InputError, match="'NUTS3' must hold numbers; 9786 of 9786 values are "
                       "not numbers, the first 'FR105' on line 2"):
        session.build_table({"dims": ["A88"], "value": "NUTS3"}, {})
    session.build_table({"dims": ["A88"], "value": "TURNOVER"}, {})
    with pytest.raises(InputError, match="choose at least one rule"):
        session.apply_rules({})
    with pytest.raises(InputError, match=r"the rules are not valid \(choose at least one "
                                         r"rule\): correct them on step 3 Rules first"):
        session.start_protection({"method": "suppression"})


def test_semicolon_csv_and_excel_read_like_the_comma_csv(tmp_path):
    pytest.importorskip("openpyxl")
    from tabsdc.ui._inputs import read_upload

    data = pd.read_csv(SURVEY, dtype=str).head(50)
    data.to_csv(tmp_path / "s.csv", sep=";", index=False)
    data.to_excel(tmp_path / "s.xlsx", index=False)
    frames = [read_upload(tmp_path / n, n) for n in ("s.csv", "s.xlsx")]
    for frame in frames:
        assert frame.codes("A88").tolist() == data["A88"].tolist()
        assert np.allclose(frame.numeric("TURNOVER"), data["TURNOVER"].astype(float))
    assert isinstance(read_upload(_jj(tmp_path), "t.jj"), Table)


def test_a_jj_file_is_protected_with_its_own_statuses(session, tmp_path):
    ruled_session(session, SMALL)
    jj = session.rules.table.to_jj(tmp_path / "ruled.jj")
    loaded = session.load_source(jj, "ruled.jj")
    assert loaded["kind"] == "jj" and loaded["table"]["cells"] == session.table.n_cells
    session.start_protection({"method": "suppression", "algorithm": "heuristic"})
    state = wait(session)
    assert state["state"] == "done" and state["fraction"] == 1.0
    assert session.check()["passed"]
    published = pd.read_csv(session.download("publishable"), dtype=str)
    hidden = session.protection.table.cells["status"].isin(["u", "m"]).to_numpy()
    assert list(published.columns) == ["cell", "value"]
    assert ((published["value"] == "x").to_numpy() == hidden).all()
    assert "Table.from_jj(SOURCE)" in session.download("script").read_text()


def _jj(folder: Path) -> Path:
    cells = pd.DataFrame({"r": ["a", "b"], "value": [3.0, 4.0]})
    return Table.from_aggregated(cells, ["r"]).to_jj(folder / "t.jj")
