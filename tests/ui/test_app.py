"""The web app over HTTP (no browser): sessions per tab, upload limits and types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from tests.ui.conftest import SURVEY, uvicorn


def call(url: str, body: bytes | dict | None = None, method: str | None = None
         ) -> tuple[int, dict]:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(url, data=data, method=method or (
        "GET" if body is None else "POST"))
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def new_session(served) -> str:
    status, data = call(f"{served.url}/api/session", b"")
    assert status == 200
    return f"{served.url}/api/{data['id']}"


def test_the_page_and_its_scripts_are_served(served):
    with urllib.request.urlopen(served.url + "/", timeout=30) as response:
        page = response.read().decode()
    assert 'id="step-protect"' in page and "/static/app.js" in page
    with urllib.request.urlopen(served.url + "/static/app.js", timeout=30) as response:
        assert b"/api/session" in response.read()


def test_two_tabs_keep_two_tables(served):
    first, second = new_session(served), new_session(served)
    assert first != second
    assert call(first + "/upload?name=survey.csv", SURVEY.read_bytes())[0] == 200
    small = b"region,size,value\nN,1,5\nN,2,7\nS,1,9\nS,2,1\n"
    assert call(second + "/upload?name=small.csv", small)[0] == 200
    status, one = call(first + "/table", {"data": {"dims": ["NUTS1"], "value": "TURNOVER"}})
    assert status == 200, one
    status, two = call(second + "/table", {"data": {"dims": ["region", "size"],
                                                    "value": "value"}})
    assert status == 200, two
    regions = len(set(pd.read_csv(SURVEY)["NUTS1"]))
    assert one["table"]["cells"] == 1 + regions and two["table"]["cells"] == 3 * 3
    rules_one = call(first + "/rules", {"rules": {"freq": 3}})[1]
    rules_two = call(second + "/rules", {"rules": {"freq": 3}})[1]
    assert rules_one["cells"] == 1 + regions and rules_two["cells"] == 9
    assert rules_two["primary"] == 8  # every interior cell (1 record) and margin (2)


def test_upload_over_the_limit_or_of_the_wrong_type_is_refused_clearly(served):
    base = new_session(served)
    status, data = call(base + "/upload?name=big.csv", b"a,b\n" + b"1,2\n" * 600_000)
    assert status == 413
    assert data["error"].startswith("big.csv is larger than the upload limit of 2 MB")
    status, data = call(base + "/upload?name=report.pdf", b"%PDF-1.4")
    assert status == 400
    assert "files of type '.pdf' cannot be read; upload one of .csv" in data["error"]
    status, data = call(base + "/upload?name=empty.csv", b"")
    assert (status, data["error"]) == (400, "empty.csv is empty")
    session = served.sessions[base.rsplit("/", 1)[1]]
    assert not any((session.folder / "uploads").iterdir())


def test_an_unknown_session_is_told_to_reload(served):
    status, data = call(served.url + "/api/nosuchsession/job")
    assert status == 404 and "reload the page" in data["error"]


@pytest.mark.parametrize("path,body,message", [
    ("/table", {"data": {"dims": []}}, "upload a data file"),
    ("/protect", {"method": "suppression"}, "apply the sensitivity rules first"),
    ("/rules", b"{not json", "not valid JSON"),
])
def test_out_of_order_steps_say_what_to_do(served, path, body, message):
    status, data = call(new_session(served) + path, body)
    assert status == 400 and message in data["error"]


@pytest.mark.parametrize("command", [["-m", "tabsdc.ui"], ["-m", "tabsdc.cli", "ui"]])
def test_the_command_serves_the_page_on_a_free_local_port(command, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with subprocess.Popen([sys.executable, *command, "--no-browser"], env=env,
                          stdout=subprocess.PIPE, text=True, cwd=tmp_path) as process:
        try:
            line = process.stdout.readline()
            url = line.split("open ")[1].split()[0]
            assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/")
            for _ in range(100):
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        assert b"tabsdc" in response.read()
                    break
                except urllib.error.URLError:
                    time.sleep(0.1)
            else:
                pytest.fail(f"nothing answers at {url}")
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize("option,message", [
    (["--max-sessions", "0"], "the session limit must be at least 1, not 0"),
    (["--max-jobs", "0"], "the job limit must be at least 1, not 0"),
    (["--idle-minutes", "-5"], "the idle time of a session must be positive, not -5 minutes"),
])
def test_the_command_refuses_a_limit_that_cannot_work(option, message, capsys, monkeypatch):
    # in this process (the command's own process is the test above): a server that starts
    # fails the test instead of serving forever
    from tabsdc.ui.__main__ import main

    monkeypatch.setattr(uvicorn.Server, "run", lambda *args, **kwargs: pytest.fail(
        f"the app was served with {option}"))
    assert main(["--no-browser", *option]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"tabsdc ui: error: {message}"


def test_the_command_and_the_app_have_the_same_defaults():
    import tabsdc.cli._ui as command
    import tabsdc.ui._registry as registry

    assert command.MAX_SESSIONS == registry.DEFAULT_MAX_SESSIONS
    assert command.IDLE_MINUTES == registry.DEFAULT_IDLE_MINUTES
