"""The README's examples run as they are written, as a newcomer copies them: its command
block in an empty folder (every command exits 0, or the status its comment gives), its
Python blocks one after the other in one session (a shown value, ``x  # Repr(...)``, is
checked against the value's repr)."""

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

#: The programs of the command block, as this interpreter runs them.
PROGRAMS = {"tabsdc": [sys.executable, "-m", "tabsdc.cli"],
            "microsdc": [sys.executable, "-m", "microsdc.cli"]}


def fenced_blocks(text: str, language: str) -> list[tuple[str, str]]:
    """(heading above, body) of every fenced block of ``language`` ("" for a plain one)."""
    blocks, heading, opened, body = [], "", None, []
    for line in text.splitlines():
        if opened is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("```"):
            if opened is None:
                opened, body = line[3:].strip(), []
                continue
            if opened == language:
                blocks.append((heading, "\n".join(body) + "\n"))
            opened = None
        elif opened is not None:
            body.append(line)
    return blocks


def command_block() -> str:
    return next(body for heading, body in fenced_blocks(README.read_text(), "")
                if heading == "Command line")


def commands(block: str) -> list[tuple[list[str], int]]:
    """Each command of a shell block (continued lines joined) and the exit status its
    comment states (``# exit status N``; 0 otherwise)."""
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        if not line.strip():
            continue
        status = re.search(r"#.*exit status (\d+)", line)
        out.append((shlex.split(line, comments=True), int(status.group(1)) if status else 0))
    return out


def test_the_command_block_is_parsed_as_a_newcomer_would_run_it():
    parsed = commands(command_block())
    assert [argv[:2] for argv, _ in parsed][:3] == [
        ["tabsdc", "sample"], ["microsdc", "sample"], ["tabsdc", "rules"]]
    assert all(argv[0] in PROGRAMS for argv, _ in parsed)
    assert not any("[" in word or "]" in word for argv, _ in parsed for word in argv)
    assert [status for _, status in parsed].count(1) == 1


@pytest.mark.slow
def test_the_command_block_runs_in_an_empty_folder(tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for argv, expected in commands(command_block()):
        done = subprocess.run([*PROGRAMS[argv[0]], *argv[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == expected, (" ".join(argv), done.stderr[-2000:])
    for name in ("results/publish.csv", "counts.csv", "counts_ckm.csv", "adjusted.csv",
                 "demo-report.html", "masked.csv", "study.html"):
        assert (tmp_path / name).stat().st_size > 0, name


def shown_values(source: str) -> list[tuple[str, str]]:
    """``expression  # Shown(...)`` lines: the expression and the start of the repr the
    comment shows (up to its ``...``)."""
    found = []
    for line in source.splitlines():
        match = re.fullmatch(r"(\w[\w.]*)\s+# (\w+\(.*)\.\.\.\)", line.strip())
        if match:
            found.append(match.groups())
    return found


def test_the_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {}
    checked = 0
    for heading, source in fenced_blocks(README.read_text(), "python"):
        code = compile(ast.parse(source), f"README.md ({heading})", "exec")
        exec(code, namespace)  # noqa: S102 - the README's own examples
        for expression, start in shown_values(source):
            assert repr(eval(expression, namespace)).startswith(start)  # noqa: S307
            checked += 1
    assert checked >= 1
    assert namespace["protected"].passed and namespace["adjusted"].passed
    assert (tmp_path / "turnover.csv").exists() and (tmp_path / "report.html").exists()
