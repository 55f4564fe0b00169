"""Every example script runs in quick mode and writes its HTML report, so none rots."""

import runpy
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
def test_example_runs_in_quick_mode(script, tmp_path, monkeypatch):
    # as ``python script --quick --out report.html`` from an empty folder, in this process
    # (a new interpreter would import numpy, pandas and scipy again for each example)
    out = tmp_path / "report.html"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), "--quick", "--out", str(out)])
    runpy.run_path(str(script), run_name="__main__")
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
