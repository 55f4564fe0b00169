"""``tabsdc adjust`` on a local parser, and the demo's CTA sections."""

import argparse
import json

import numpy as np
import pytest

from sdcreport import Report
from tabsdc import Table
from tabsdc._errors import TabSDCError
from tabsdc.cli._adjust import add_adjust_command, adjustment_demo_sections

from ..conftest import DATA
from .test_cta import slide_table


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tabsdc")
    add_adjust_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.run(args)


@pytest.fixture
def slide_jj(tmp_path):
    table, _ = slide_table()
    path = tmp_path / "slide.jj"
    table.to_jj(path)
    return path


@pytest.mark.parametrize("method", ["milp", "heuristic", "l2", "mdi"])
def test_adjust_writes_table_json_and_html(slide_jj, tmp_path, method, capsys):
    out, js, html = tmp_path / "out.jj", tmp_path / "out.json", tmp_path / "out.html"
    argv = ["adjust", str(slide_jj), "--method", method, "--time-limit", "5", "--seed", "0",
            "--out", str(out), "--json", str(js), "--html", str(html)]
    if method in ("milp", "heuristic"):
        argv += ["--preserve", "mean,variance", "--cost", "count"]
    assert run(argv) == 0
    data = json.loads(js.read_text())
    for key in ("status", "objective", "bound", "gap", "l1_distance", "additive", "protected"):
        assert key in data
    assert data["additive"] is True and data["protected"] is True
    if method == "milp":
        assert data["status"] == "optimal" and data["gap"] <= 1e-9
    adjusted = Table.from_jj(out)
    original = Table.from_jj(slide_jj)
    assert np.abs(adjusted.A @ adjusted.values - adjusted.b).max() <= 1e-6
    assert data["l1_distance"] == pytest.approx(
        np.abs(adjusted.values - original.values).sum(), rel=1e-6)
    assert "data:image/png;base64" in html.read_text()
    assert "Controlled tabular adjustment" in capsys.readouterr().out


def test_adjust_reports_user_errors(slide_jj, tmp_path):
    base = ["adjust", str(slide_jj), "--out", str(tmp_path / "o.jj"),
            "--json", str(tmp_path / "o.json")]
    with pytest.raises(TabSDCError, match="unknown statistic to preserve 'median'"):
        run([*base, "--preserve", "median"])
    with pytest.raises(TabSDCError, match="fix_totals= is for the L1 and L2 methods"):
        run([*base, "--method", "mdi", "--fix-totals"])
    with pytest.raises(SystemExit):
        run([*base, "--method", "simplex"])


def test_adjust_on_a_castro_instance(tmp_path):
    out, js = tmp_path / "t.jj", tmp_path / "t.json"
    status = run(["adjust", str(DATA / "jj" / "castro" / "TARGUS.jj"),
                  "--method", "heuristic", "--time-limit", "3", "--seed", "0",
                  "--out", str(out), "--json", str(js)])
    data = json.loads(js.read_text())
    assert status == 0 and data["passed"] and data["bound"] <= data["objective"]


def test_demo_sections_on_a_rules_table(tmp_path):
    table, _ = slide_table()
    sections = adjustment_demo_sections(table, time_limit=2)
    assert sections and sections[0].title.startswith("Controlled tabular adjustment")
    html = Report("demo").add(*sections).save(tmp_path / "demo.html").read_text()
    assert "certified gap" in html
