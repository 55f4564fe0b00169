"""``tabsdc round``, the rounding demo sections and the rounding example, through a local
parser built with :func:`tabsdc.cli._round.add_round_command`."""

import argparse
import json
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sdcreport import Report
from tabsdc import Hierarchy, InputError, Table, TabSDCError
from tabsdc.cli._demo import demo_table
from tabsdc.cli._round import add_round_command, rounding_demo_sections

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "round_frequency_table.py"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tabsdc")
    add_round_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.run(args)


def grid_table(rows: int = 4, cols: int = 5, seed: int = 1) -> Table:
    values = np.random.default_rng(seed).integers(0, 30, (rows, cols))
    frame = pd.DataFrame([(f"r{i}", f"c{j}", float(v)) for (i, j), v in np.ndenumerate(values)],
                         columns=["r", "c", "value"])
    return Table.from_aggregated(frame, ["r", "c"])


def test_round_jj_controlled(tmp_path, capsys):
    table = grid_table()
    source = table.to_jj(tmp_path / "t.jj")
    out, summary, html = tmp_path / "r.jj", tmp_path / "r.json", tmp_path / "r.html"
    code = run(["round", str(source), "--base", "5", "--method", "controlled",
                "--out", str(out), "--json", str(summary), "--html", str(html)])
    assert code == 0
    payload = json.loads(summary.read_text())
    assert {"status", "base", "method", "total_abs_deviation", "max_abs_deviation",
            "additive"} <= set(payload)
    assert payload["status"] == "optimal" and payload["base"] == 5
    assert payload["method"] == "controlled" and payload["additive"] is True
    rounded = Table.from_jj(out)
    values = rounded.values
    assert np.all(values % 5 == 0) and np.all(np.abs(values - table.values) < 5)
    np.testing.assert_array_equal(rounded.A @ values, 0)
    assert payload["total_abs_deviation"] == pytest.approx(np.abs(values - table.values).sum())
    assert "<img" in html.read_text()
    assert "Rounding to base 5 (controlled): optimal" in capsys.readouterr().out


def test_round_takes_the_solver_of_the_api(tmp_path):
    source = grid_table().to_jj(tmp_path / "t.jj")
    base = ["round", str(source), "--base", "5", "--method", "controlled"]
    cbc, highs = tmp_path / "cbc.json", tmp_path / "highs.json"
    assert run([*base, "--solver", "cbc", "--json", str(cbc)]) == 0
    assert run([*base, "--json", str(highs)]) == 0
    same = [json.loads(p.read_text())["total_abs_deviation"] for p in (cbc, highs)]
    assert same[0] == pytest.approx(same[1])  # both optimal
    with pytest.raises(InputError, match="unknown solver 'simplex'; choose one of highs"):
        run([*base, "--solver", "simplex", "--json", str(tmp_path / "x.json")])


def test_round_csv_with_hierarchy_is_reproducible(tmp_path):
    tree = Hierarchy.from_parent_child({"g0": "Total", "g1": "Total", "a": "g0", "b": "g0",
                                        "c": "g1"})
    frame = pd.DataFrame([(r, f"k{j}", float(3 * i + 7 * j + 1))
                          for i, r in enumerate("abc") for j in range(3)],
                         columns=["r", "k", "value"])
    table = Table.from_aggregated(frame, ["r", "k"], hierarchies={"r": tree})
    source = tmp_path / "cells.csv"
    table.to_frame().to_csv(source, index=False)
    parents = tmp_path / "r.csv"
    pd.DataFrame({"parent": [tree.parents[c] for c in tree.parents],
                  "child": list(tree.parents)}).to_csv(parents, index=False)
    outputs = []
    for k in range(2):
        out = tmp_path / f"out{k}.csv"
        code = run(["round", str(source), "--base", "4", "--method", "unbiased-controlled",
                    "--seed", "9", "--hierarchy", f"r={parents}", "--out", str(out),
                    "--json", str(tmp_path / "out.json")])
        assert code == 0
        outputs.append(pd.read_csv(out, dtype={"r": str, "k": str}, skiprows=1))
    pd.testing.assert_frame_equal(*outputs)
    payload = json.loads((tmp_path / "out.json").read_text())
    assert payload["additive"] is True and payload["seed"] == 9
    assert payload["status"] == "random"
    assert (outputs[0]["value"] % 4 == 0).all()


def test_round_count_column_with_a_rule(tmp_path):
    table = grid_table().with_columns(freq=np.arange(30, dtype=float))
    source = tmp_path / "t.csv"
    table.to_frame().to_csv(source, index=False)
    summary = tmp_path / "r.json"
    code = run(["round", str(source), "--base", "3", "--method", "fifty-fifty", "--seed", "1",
                "--column", "freq", "--no-audit", "--out", str(tmp_path / "r.jj"),
                "--json", str(summary)])
    assert code == 0
    payload = json.loads(summary.read_text())
    assert payload["status"] == "rounded" and "audit" not in payload
    assert payload["max_abs_deviation"] < 3


def test_no_controlled_rounding_exits_with_status_1(tmp_path):
    frame = pd.DataFrame([(f"a{i}", f"b{j}", f"c{k}", float((i + j + k + 1) % 2))
                          for i in range(2) for j in range(2) for k in range(2)],
                         columns=["a", "b", "c", "value"])
    source = tmp_path / "cube.csv"
    Table.from_aggregated(frame, ["a", "b", "c"]).to_frame().to_csv(source, index=False)
    summary = tmp_path / "r.json"
    code = run(["round", str(source), "--base", "2", "--method", "controlled",
                "--out", str(tmp_path / "r.csv"), "--json", str(summary)])
    assert code == 1
    payload = json.loads(summary.read_text())
    assert payload["exists"] is False and payload["additive"] is True
    assert payload["status"] == "relaxed" and len(payload["non_adjacent_cells"]) == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["--base", "5", "--method", "controlled", "--column", "nope"], "no cell column 'nope'"),
    (["--base", "5", "--method", "unbiased-controlled", "--dims", "r"], "duplicate cell"),
])
def test_user_errors_are_tabsdc_errors(tmp_path, argv, message):
    source = tmp_path / "t.csv"
    grid_table().to_frame().to_csv(source, index=False)
    with pytest.raises(TabSDCError, match=message):
        run(["round", str(source), *argv, "--out", str(tmp_path / "o.jj"),
             "--json", str(tmp_path / "o.json")])


def test_unknown_suffix_and_bad_method(tmp_path):
    source = tmp_path / "t.txt"
    source.write_text("x")
    with pytest.raises(InputError, match="expected a .jj or .csv table"):
        run(["round", str(source), "--base", "5", "--method", "controlled",
             "--out", "o.jj", "--json", "o.json"])
    for argv in (["--base", "5", "--method", "bankers"], ["--base", "1", "--method",
                                                          "controlled"]):
        with pytest.raises(SystemExit):
            run(["round", str(source), *argv, "--out", "o.jj", "--json", "o.json"])


@pytest.mark.slow
def test_rounding_demo_sections():
    sections = rounding_demo_sections(demo_table(quick=True))
    text = Report("demo").add(*sections).to_text()
    assert "Choice of the rounding base" in text and "controlled" in text
    assert "every total still equals the sum of its parts" in text
    assert "additive                      yes" in text


def test_example_quick(tmp_path, capsys):
    out = tmp_path / "report.html"
    runpy.run_path(str(EXAMPLE), run_name="example")["main"](["--quick", "--out", str(out)])
    html = out.read_text()
    figures = html.count("<img") + html.count("the same figure as in")  # one image each
    assert "Chosen base per method" in html and figures >= 3
    assert "report written to" in capsys.readouterr().out
