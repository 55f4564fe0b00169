"""Fixtures of the web-app tests: the app served in a thread on a free local port, and the
API's own protection of the business survey for the choices the tests make in the app."""

from __future__ import annotations

import contextlib
import threading
import time
from importlib.resources import files
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs the ui extra (starlette)")
uvicorn = pytest.importorskip("uvicorn", reason="the web app needs the ui extra (uvicorn)")

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._datasets import load_business_survey  # noqa: E402
from tabsdc.ui._app import create_app  # noqa: E402
from tabsdc.ui._server import listening_socket  # noqa: E402

#: The shipped business survey, as a person would upload it.
SURVEY = Path(str(files("tabsdc").joinpath("data", "business_survey.csv")))
#: The choices the tests make: activity (3 levels) x region (2 levels), p% 10 and freq 3.
DIMS = ["A88", "NUTS2"]
LEVELS = {"A88": ["A10", "A21"], "NUTS2": ["NUTS1"]}


class ServedApp:
    """The app on 127.0.0.1 in a background thread (stopped by :meth:`stop`)."""

    def __init__(self, max_upload_mb: float, root: Path, **limits) -> None:
        self.socket = listening_socket()
        self.port = self.socket.getsockname()[1]
        self.app = create_app(max_upload_mb, root, port=self.port, **limits)
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.socket]}, daemon=True)
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)

    @property
    def sessions(self) -> dict:
        return self.app.state.sessions

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> ServedApp:
    app = ServedApp(max_upload_mb=2, root=tmp_path_factory.mktemp("sessions"),
                    max_sessions=500)
    yield app
    app.stop()


def run_script(script: str, folder: Path) -> None:
    """Run a session's script as ``python -c script`` from ``folder`` does, in this process
    (a new interpreter would import numpy, pandas and scipy again): its own namespace, its
    own imports; an error in it fails the test."""
    with contextlib.chdir(folder):
        exec(compile(script, "<session script>", "exec"), {"__name__": "__main__"})


def ruled_by_api(levels: dict[str, list[str]]) -> Table:
    """The API's table of the survey's turnover by the dimensions of ``levels`` (each with
    its level columns), after the tests' rules (p% 10, frequency 3)."""
    data = load_business_survey()
    hierarchies = {dim: Hierarchy.from_levels(data[[*above, dim]])
                   for dim, above in levels.items()}
    table = Table.from_microdata(data, list(levels), "TURNOVER", hierarchies=hierarchies)
    return apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table


def published_by_api(ruled: Table, folder: Path) -> bytes:
    """The publishable file of the API's optimal suppression (by value) of ``ruled``."""
    from tabsdc._release import write_publishable
    from tabsdc.suppression import suppress

    result = suppress(ruled, "optimal", "value", time_limit=60)
    assert result.stats.status == "optimal"
    return write_publishable(result.table, folder / "p.csv").read_bytes()


@pytest.fixture(scope="session")
def api_ruled() -> Table:
    """The API's table after the rules, for the tests' choices."""
    return ruled_by_api({dim: LEVELS[dim] for dim in DIMS})


@pytest.fixture(scope="session")
def api_publishable(api_ruled, tmp_path_factory) -> bytes:
    """The publishable file of the API's optimal suppression for the tests' choices."""
    return published_by_api(api_ruled, tmp_path_factory.mktemp("api"))
