"""Every example script runs in quick mode and writes its HTML report, so none rots."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 3


#: The examples that take longest (a study over a grid, a masking comparison): run by the slow
#: suite; the others by the fast one.
SLOW = {"microdata_bounded_measures_study", "compare_masking_tarragona"}


@pytest.mark.parametrize("script", [
    pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p for p in EXAMPLES],
    ids=[p.stem for p in EXAMPLES])
def test_example_runs_in_quick_mode(script, tmp_path):
    out = tmp_path / "report.html"
    run = subprocess.run([sys.executable, str(script), "--quick", "--out", str(out)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "MPLBACKEND": "Agg"})
    assert run.returncode == 0, run.stderr[-3000:]
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
