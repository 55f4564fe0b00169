"""The web app under load: many browser tabs walking the business survey at once.

Each client (a thread speaking HTTP, as the page does) opens a session, loads the example
survey, builds turnover by A88 x NUTS2 with their level hierarchies, applies the rules three
times (p% 10, then 15, then 10, with a frequency of 3: the page does so as a person changes
a parameter), protects the table by suppression, polls the job as the page does, opens the
Check step and downloads the publishable file. A run is correct when the check passes and
the file is byte for byte the one the API writes for the same choices (computed once here).

Reported: the median and 95th percentile of the Rules and Check requests, of building the
table and of a protection (start to done), and how many runs were correct. The app is served
by ``python -m tabsdc.ui`` in its own process, with room for every client
(``--max-sessions``, ``--max-jobs``); ``--url`` measures an app already running instead.

Usage: ``python benchmarks/bench_ui_load.py [--clients 20] [--runs 3] [--method heuristic]
[--url http://127.0.0.1:PORT] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

DIMS = {"A88": ["A10", "A21"], "NUTS2": ["NUTS1"]}


def call(url: str, body: dict | None = None, *, raw: bool = False,
         method: str | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method or (
        "GET" if body is None else "POST"), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            content = response.read()
            return response.status, content if raw else json.loads(content)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def timed(times: dict[str, list[float]], step: str, url: str, body: dict | None = None,
          **kwargs) -> object:
    """One request; its time goes to ``times[step]``; 429 (the app is full) is retried."""
    while True:
        start = time.perf_counter()
        status, answer = call(url, body, **kwargs)
        if status != 429:
            break
        time.sleep(1.0)
    times.setdefault(step, []).append(time.perf_counter() - start)
    if status != 200:
        raise RuntimeError(f"{step}: HTTP {status}: {answer}")
    return answer


def one_run(url: str, method: str, times: dict[str, list[float]]) -> bytes:
    session = timed(times, "session", f"{url}/api/session", {})["id"]
    base = f"{url}/api/{session}"
    timed(times, "data", f"{base}/example", {})
    timed(times, "table", f"{base}/table", {
        "data": {"kind": "microdata", "dims": list(DIMS), "value": "TURNOVER"},
        "hierarchies": {d: {"kind": "levels", "columns": c} for d, c in DIMS.items()}})
    for p in (10, 15, 10):
        timed(times, "rules", f"{base}/rules", {"rules": {"p": p, "freq": 3}})
    start = time.perf_counter()
    timed(times, "protect start", f"{base}/protect", {"method": "suppression",
                                                      "algorithm": method, "cost": "value",
                                                      "time_limit": 300})
    while (state := timed(times, "job poll", f"{base}/job"))["state"] == "running":
        time.sleep(0.5)
    times.setdefault("protection", []).append(time.perf_counter() - start)
    if state["state"] != "done":
        raise RuntimeError(f"protection {state['state']}: {state['error']}")
    check = timed(times, "check", f"{base}/check")
    if not check["passed"]:
        raise RuntimeError("the check failed")
    published = timed(times, "download", f"{base}/download/publishable", raw=True)
    call(f"{base}/close", {})
    return published


def reference(method: str) -> bytes:
    """The API's publishable file for the clients' choices."""
    from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
    from tabsdc._datasets import load_business_survey
    from tabsdc._release import write_publishable
    from tabsdc.suppression import suppress

    data = load_business_survey()
    hierarchies = {d: Hierarchy.from_levels(data[[*c, d]]) for d, c in DIMS.items()}
    table = Table.from_microdata(data, list(DIMS), "TURNOVER", hierarchies=hierarchies)
    ruled = apply_rules(table, [PPercentRule(10), FrequencyRule(3)]).table
    result = suppress(ruled, method, "value", time_limit=300)
    path = Path(tempfile.mkdtemp()) / "p.csv"
    return write_publishable(result.table, path).read_bytes()


def serve(clients: int) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tabsdc.ui", "--no-browser", "--max-sessions",
         str(2 * clients), "--max-jobs", str(clients)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    url = process.stdout.readline().split("open ")[1].split()[0].rstrip("/")
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "/", timeout=5).read()
            break
        except urllib.error.URLError:
            time.sleep(0.1)
    return process, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="runs per client")
    parser.add_argument("--method", default="heuristic")
    parser.add_argument("--url", help="an app already running (else one is started)")
    parser.add_argument("--quick", action="store_true", help="4 clients, 1 run each")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.runs = 4, 1
    expected = reference(args.method)
    process, url = (None, args.url.rstrip("/")) if args.url else serve(args.clients)
    times: dict[str, list[float]] = {}
    outcomes: list[str] = []
    lock = threading.Lock()

    def client() -> None:
        for _ in range(args.runs):
            try:
                ok = one_run(url, args.method, times) == expected
                outcome = "correct" if ok else "a different publishable file"
            except Exception as error:  # noqa: BLE001 - every failure is counted and named
                outcome = f"failed: {error}"
            with lock:
                outcomes.append(outcome)

    start = time.perf_counter()
    try:
        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        if process is not None:
            process.terminate()
            process.wait(30)
    wall = time.perf_counter() - start
    print(f"{args.clients} clients x {args.runs} runs, suppression {args.method!r}, "
          f"{wall:.0f} s in all, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"{'request':<14}{'count':>7}{'median s':>10}{'p95 s':>9}{'max s':>9}")
    for step in ("table", "rules", "protection", "check", "download"):
        values = np.array(times.get(step, [np.nan]))
        print(f"{step:<14}{len(values):>7}{np.median(values):>10.2f}"
              f"{np.percentile(values, 95):>9.2f}{values.max():>9.2f}")
    correct = outcomes.count("correct")
    print(f"runs correct: {correct} of {len(outcomes)}")
    for outcome in sorted(set(outcomes) - {"correct"}):
        print(f"  {outcomes.count(outcome)} x {outcome}")
    sys.exit(0 if correct == len(outcomes) else 1)


if __name__ == "__main__":
    main()
