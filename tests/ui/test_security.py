"""The web app against a local web attacker: code in file and column names, foreign pages
(Host and Origin), too many sessions or computations, forgotten sessions and their
workers, and the headers that keep the page out of frames."""

from __future__ import annotations

import ast
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tabsdc.ui._jobs import Job
from tabsdc.ui._script import session_script
from tabsdc.ui._session import Session
from tests.ui.conftest import SURVEY, ServedApp, run_script
from tests.ui.test_session import gone, wait, within

#: Strings that are code when pasted into a script unquoted, and a Windows path.
PAYLOAD = '"""+__import__("os").system("touch PWNED")+"""'
HOSTILE = {
    "file": f"x{PAYLOAD}.csv",
    "region": "reg'ion\\\"); __import__('os').system('touch PWNED') #",
    "size": f"size{PAYLOAD}",
    "value": "tur\nnover\\x",
    "symbol": PAYLOAD,
}


def hostile_microdata(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = 120
    regions = rng.choice(["N1", "N2", "S1", "S2"], rows)
    return pd.DataFrame({"area": [r[0] for r in regions], HOSTILE["region"]: regions,
                         HOSTILE["size"]: rng.choice(["s", "m", "l"], rows),
                         HOSTILE["value"]: rng.integers(1, 1000, rows)})


def protected_session(folder: Path, name: str) -> Session:
    """A session on the hostile microdata saved as ``name``, suppressed by the heuristic."""
    path = folder / name
    hostile_microdata().to_csv(path, index=False)
    session = Session(10**7, root=folder)
    session.load_source(path, name)
    dims = [HOSTILE["region"], HOSTILE["size"]]
    session.build_table({"kind": "microdata", "dims": dims, "value": HOSTILE["value"]},
                        {HOSTILE["region"]: {"kind": "levels", "columns": ["area"]}})
    session.apply_rules({"p": 10, "freq": 3})
    session.start_protection({"method": "suppression", "algorithm": "heuristic",
                              "cost": "count", "time_limit": 60})
    assert wait(session)["state"] == "done"
    return session


def code_without_strings(script: str) -> str:
    """The script with every string literal emptied: what Python would run as code."""
    tree = ast.parse(script)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.unparse(tree)


@pytest.mark.parametrize("name", [HOSTILE["file"], "C:\\New\\x.csv"])
def test_names_and_symbols_enter_the_script_as_literals_only(tmp_path, name):
    session = protected_session(tmp_path, name)
    try:
        script = session.download("script", HOSTILE["symbol"]).read_text()
        code = code_without_strings(script)  # it parses
        assert "__import__" not in code and "system" not in code
        literals = {node.value for node in ast.walk(ast.parse(script))
                    if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        assert {name, HOSTILE["region"], HOSTILE["size"], HOSTILE["value"],
                HOSTILE["symbol"]} <= literals
        workdir = tmp_path / "batch"
        workdir.mkdir()
        (workdir / name).write_bytes((tmp_path / name).read_bytes())
        run_script(script, workdir)
        assert not (workdir / "PWNED").exists() and not Path("PWNED").exists()
        published = session.download("publishable", HOSTILE["symbol"]).read_bytes()
        assert (workdir / f"{Path(name).stem}_publishable.csv").read_bytes() == published
        assert published.count(HOSTILE["symbol"].encode()) == int(
            session.protection.suppressed.sum())
    finally:
        session.close()


def test_every_parameter_of_the_script_is_a_literal():
    spec = {"source": "a.parquet",
            "data": {"kind": "cells", "dims": [PAYLOAD], "value": PAYLOAD, "freq": PAYLOAD,
                     "sep": PAYLOAD},
            "hierarchies": {PAYLOAD: {"kind": "file"}},
            "rules": {"p": 10},
            "protect": {"method": "cta", "algorithm": PAYLOAD, "time_limit": 5, "seed": 2}}
    assert "__import__" not in code_without_strings(session_script(spec, PAYLOAD))
    spec["protect"] = {"method": "rounding", "column": PAYLOAD, "rule": PAYLOAD, "base": 5}
    assert "__import__" not in code_without_strings(session_script(spec, PAYLOAD))


def request(url: str, *, method: str = "GET", body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture
def limited(tmp_path):
    app = ServedApp(2, tmp_path, max_sessions=2, max_jobs=1)
    yield app
    app.stop()


@pytest.fixture
def forgetful(tmp_path):
    """An app whose sessions end after 1.8 s without a request."""
    app = ServedApp(2, tmp_path, idle_minutes=0.03)
    yield app
    app.stop()


def test_foreign_host_or_origin_is_refused(served):
    port = served.port
    before = len(served.sessions)
    for host in ("attacker.example", f"attacker.example:{port}", f"127.0.0.1:{port + 1}",
                 f"10.0.0.1:{port}"):
        status, _, body = request(served.url + "/api/session", method="POST", body=b"",
                                  headers={"Host": host})
        assert status == 403, host
        assert "answers only requests to its own address" in json.loads(body)["error"]
    for origin in ("http://attacker.example", "null", f"http://localhost:{port + 1}",
                   f"https://127.0.0.1:{port}"):
        status, _, body = request(served.url + "/api/session", method="POST", body=b"",
                                  headers={"Origin": origin})
        assert status == 403, origin
        assert "may not use this app" in json.loads(body)["error"]
    assert request(served.url + "/", headers={"Host": "attacker.example"})[0] == 403
    assert len(served.sessions) == before
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        status, _, _ = request(served.url + "/api/session", method="POST", body=b"",
                               headers={"Host": host, "Origin": f"http://{host}"})
        assert status == 200
    assert len(served.sessions) == before + 2


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/api/nosuchsession/job"])
def test_every_answer_forbids_framing_and_foreign_scripts(served, path):
    status, headers, _ = request(served.url + path)
    headers = {k.lower(): v for k, v in headers.items()}
    policy = {part.split()[0]: part.split()[1:]
              for part in headers["content-security-policy"].split("; ")}
    assert policy["default-src"] == ["'self'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_the_page_has_no_inline_script(served):
    page = request(served.url + "/")[2].decode()
    assert "<script>" not in page and " on" + "click=" not in page
    assert page.count("<script") == page.count('<script src="/static/')


def test_session_and_job_limits_answer_429_with_a_sentence(limited):
    first = request(limited.url + "/api/session", method="POST", body=b"")
    second = request(limited.url + "/api/session", method="POST", body=b"")
    assert first[0] == second[0] == 200
    status, _, body = request(limited.url + "/api/session", method="POST", body=b"")
    assert status == 429
    assert json.loads(body)["error"].startswith("2 sessions are open already in this app")
    ids = [json.loads(first[2])["id"], json.loads(second[2])["id"]]
    for sid in ids:
        limited.sessions[sid].load_source(SURVEY, "business_survey.csv")
        limited.sessions[sid].build_table(
            {"dims": ["A88", "NUTS3"], "value": "TURNOVER"},
            {"A88": {"kind": "levels", "columns": ["A10", "A21"]},
             "NUTS3": {"kind": "levels", "columns": ["NUTS1", "NUTS2"]}})
        limited.sessions[sid].apply_rules({"p": 10, "freq": 3})
    body = json.dumps({"method": "suppression", "algorithm": "optimal",
                       "time_limit": 600}).encode()
    status, _, answer = request(f"{limited.url}/api/{ids[0]}/protect", method="POST",
                                body=body)
    assert status == 200 and json.loads(answer)["state"] == "running"
    status, _, answer = request(f"{limited.url}/api/{ids[1]}/protect", method="POST",
                                body=body)
    assert status == 429
    assert "1 computation is running already in this app" in json.loads(answer)["error"]
    request(f"{limited.url}/api/{ids[0]}/cancel", method="POST", body=b"{}")
    status, _, answer = request(f"{limited.url}/api/{ids[1]}/protect", method="POST",
                                body=body)
    assert status == 200
    request(f"{limited.url}/api/{ids[1]}/cancel", method="POST", body=b"{}")


def test_an_idle_session_ends_with_its_worker_and_folder(forgetful):
    limited = forgetful
    status, _, body = request(limited.url + "/api/session", method="POST", body=b"")
    sid = json.loads(body)["id"]
    session = limited.sessions[sid]
    session.load_source(SURVEY, "business_survey.csv")
    session.build_table({"dims": ["A88", "NUTS3"], "value": "TURNOVER"},
                        {"A88": {"kind": "levels", "columns": ["A10", "A21"]},
                         "NUTS3": {"kind": "levels", "columns": ["NUTS1", "NUTS2"]}})
    session.apply_rules({"p": 10, "freq": 3})
    session.start_protection({"method": "suppression", "algorithm": "optimal",
                              "time_limit": 600})
    pid = session.job.pid
    session.touch()  # then silence: no request for more than idle_minutes (1.8 s)
    assert gone(pid, timeout=30)
    # the worker ends first, then its session's folder is removed
    assert within(lambda: sid not in limited.sessions and not session.folder.exists())
    status, _, body = request(f"{limited.url}/api/{sid}/job")
    assert status == 404 and "reload the page" in json.loads(body)["error"]
    assert limited.sessions.slots.running == 0


def test_a_page_that_leaves_ends_its_session_unless_it_comes_back(limited, monkeypatch):
    import tabsdc.ui._registry as registry

    monkeypatch.setattr(registry, "LEAVE_GRACE", 0.5)
    ids = [json.loads(request(limited.url + "/api/session", method="POST", body=b"")[2])["id"]
           for _ in range(2)]
    for sid in ids:
        assert request(f"{limited.url}/api/{sid}/leave", method="POST", body=b"")[0] == 204
    assert request(f"{limited.url}/api/{ids[1]}/ping")[0] == 200  # a reload: it came back
    time.sleep(1.0)
    limited.sessions.expire()
    assert ids[0] not in limited.sessions and ids[1] in limited.sessions


def chatty(lines: int, size: int, progress=None) -> bytes:
    """A task that says a lot and returns a large result (more than a pipe holds)."""
    for line in range(lines):
        progress(f"line {line} of {lines}: " + "x" * 100)
    return b"r" * size


def test_a_worker_never_waits_for_the_page_to_read_its_pipe():
    job = Job("test", chatty, {"lines": 20_000, "size": 50_000_000})
    pid = job.pid
    assert gone(pid, timeout=60)  # nobody asked for the job's state
    assert job.wait(30).state == "done" and len(job.result) == 50_000_000
    assert len(job.lines) == 200 and job.fraction == pytest.approx(19_999 / 20_000)
