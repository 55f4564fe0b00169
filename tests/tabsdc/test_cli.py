import json

import pandas as pd
import pytest

from sdcreport._files import CSV_MARK
from tabsdc.cli import main

from ..conftest import DATA


@pytest.fixture()
def microdata_csv(tmp_path):
    data = pd.DataFrame({
        "region": ["A", "A", "A", "B", "B", "B", "C"],
        "sector": ["x", "x", "y", "x", "y", "y", "y"],
        "turnover": [100.0, 10.0, 50.0, 40.0, 35.0, 30.0, 7.0],
    })
    path = tmp_path / "micro.csv"
    data.to_csv(path, index=False)
    return path


def test_rules_writes_cells_and_report(microdata_csv, tmp_path, capsys):
    out, report = tmp_path / "cells.csv", tmp_path / "report.json"
    status = main(["rules", str(microdata_csv), "--dims", "region", "sector",
                   "--value", "turnover", "--p", "10", "--freq", "2",
                   "--out", str(out), "--report", str(report)])
    assert status == 0
    assert out.read_text().splitlines()[0] == CSV_MARK  # an internal file says so
    cells = pd.read_csv(out, skiprows=1).set_index(["region", "sector"])
    # (A, x): 100 and 10 -> upl = 10 - 0 = 10
    assert cells.loc[("A", "x"), "status"] == "u"
    assert cells.loc[("A", "x"), "upl"] == pytest.approx(10.0)
    assert cells.loc[("C", "x"), "status"] == "z"
    data = json.loads(report.read_text())
    titles = [s["title"] for s in data["sections"]]
    assert titles == ["Table", "Sensitive cells"]
    assert "primary (any rule)" in capsys.readouterr().out


def test_rules_reports_user_errors_without_traceback(microdata_csv, capsys):
    status = main(["rules", str(microdata_csv), "--dims", "region", "--value", "sales",
                   "--p", "10"])
    assert status == 2
    assert "column 'sales' is not in the data" in capsys.readouterr().err
    assert main(["rules", str(microdata_csv), "--dims", "region", "--value", "turnover"]) == 2
    assert "choose at least one rule" in capsys.readouterr().err


def test_hierarchy_from_level_columns(tmp_path):
    data = pd.DataFrame({"nuts1": ["FR1", "FR1", "FR2"], "nuts2": ["FR10", "FR11", "FR21"],
                         "v": [5.0, 6.0, 7.0]})
    path = tmp_path / "m.csv"
    data.to_csv(path, index=False)
    out = tmp_path / "c.csv"
    assert main(["rules", str(path), "--dims", "nuts2", "--value", "v", "--freq", "2",
                 "--hierarchy", "nuts2=nuts1,nuts2", "--out", str(out)]) == 0
    cells = pd.read_csv(out, skiprows=1)
    assert cells["nuts2"].tolist() == ["Total", "FR1", "FR10", "FR11", "FR2", "FR21"]
    assert cells["value"].tolist() == [18, 11, 5, 6, 7, 7]


@pytest.mark.slow
def test_demo_writes_html(tmp_path):
    out = tmp_path / "demo.html"
    assert main(["demo", "--quick", "--out", str(out), "--method", "heuristic"]) == 0
    html = out.read_text()
    assert "Sensitive cells" in html and "data:image/png;base64," in html
    assert "Complementary suppression (heuristic)" in html and "Audit: interval attack" in html


def test_audit_command_json(tmp_path, capsys):
    out = tmp_path / "audit.json"
    html = tmp_path / "audit.html"
    jj = DATA / "jj" / "examples" / "taumanual_audit_example.jj"
    assert main(["audit", str(jj), "--json", str(out), "--html", str(html)]) == 0
    data = json.loads(out.read_text())
    assert data["protected"] is True
    assert [(c["cell"], c["lower"], c["upper"]) for c in data["cells"]] == [
        (4, 3.0, 6.0), (5, 1.0, 4.0), (7, 0.0, 3.0), (8, 0.0, 3.0)]
    assert set(data["cells"][0]) >= {"cell", "value", "status", "lower", "upper", "lpl",
                                     "upl", "protected", "exact"}
    assert "PROTECTED" in capsys.readouterr().out
    assert "data:image/png;base64," in html.read_text()
    # with the p/q prior and released intervals the same pattern gives itself away
    assert main(["audit", str(jj), "--prior-q", "20", "--release-intervals",
                 "--json", str(out)]) == 1
    assert json.loads(out.read_text())["pq_attack"]["n_revealed"] == 4


def test_protect_from_microdata_and_from_jj(microdata_csv, tmp_path):
    out, js = tmp_path / "protected.jj", tmp_path / "protect.json"
    status = main(["protect", str(microdata_csv), "--dims", "region", "sector", "--value",
                   "turnover", "--p", "10", "--cost", "count", "--out", str(out),
                   "--json", str(js)])
    assert status == 0
    data = json.loads(js.read_text())
    assert data["status"] == "optimal" and data["audit_protected"]
    assert set(data["secondary"]) < set(data["suppressed"])
    from tabsdc import Table

    written = Table.from_jj(out)
    hidden = written.cells["status"].isin(["u", "m"]).to_numpy().nonzero()[0].tolist()
    assert hidden == data["suppressed"]
    # a JJ file with primaries: protect it again (nothing to add) and audit it
    again = tmp_path / "again.json"
    assert main(["protect", str(out), "--method", "heuristic", "--json", str(again)]) == 0
    assert json.loads(again.read_text())["secondary"] == []
    # every method's JSON carries the certified lower bound and the gap against it
    heuristic = tmp_path / "heuristic.json"
    assert main(["protect", str(microdata_csv), "--dims", "region", "sector", "--value",
                 "turnover", "--p", "10", "--cost", "count", "--method", "heuristic",
                 "--json", str(heuristic)]) == 0
    figures = json.loads(heuristic.read_text())
    assert 0 < figures["bound"] <= data["objective"] <= figures["objective"]
    assert figures["gap"] == pytest.approx(1 - figures["bound"] / figures["objective"])
    assert figures["ratio_to_bound"] >= 1 and figures["bound_how"]
    assert main(["audit", str(out), "--json", str(tmp_path / "a.json")]) == 0


def test_protect_writes_a_publishable_file_without_statuses(microdata_csv, tmp_path):
    js, pub = tmp_path / "protect.json", tmp_path / "publish.csv"
    assert main(["protect", str(microdata_csv), "--dims", "region", "sector", "--value",
                 "turnover", "--p", "10", "--json", str(js), "--publish", str(pub),
                 "--symbol", "-", "--layout", "wide"]) == 0
    summary = json.loads(js.read_text())
    assert next(iter(summary.items())) == ("confidential", "contains unpublished values")
    suppressed = summary["suppressed"]
    published = pd.read_csv(pub, dtype=str, encoding="utf-8-sig", index_col=0)
    assert published.index.tolist() == ["Total", "A", "B", "C"]
    assert (published.to_numpy() == "-").sum() == len(suppressed)


def test_rules_alone_offer_no_publishable_file(microdata_csv, tmp_path):
    """A table with its primary cells hidden and nothing else gives them by subtraction."""
    with pytest.raises(SystemExit) as stop:
        main(["rules", str(microdata_csv), "--dims", "region", "sector", "--value", "turnover",
              "--p", "10", "--publish", str(tmp_path / "p.csv")])
    assert stop.value.code == 2
    assert not (tmp_path / "p.csv").exists()


def test_a_cells_file_of_rules_is_read_back_by_round(microdata_csv, tmp_path, capsys):
    """The confidentiality line of an internal cells file is skipped by the readers, and
    their errors still name the line of the file."""
    cells = tmp_path / "cells.csv"
    assert main(["rules", str(microdata_csv), "--dims", "region", "sector", "--value",
                 "turnover", "--freq", "2", "--out", str(cells)]) == 0
    summary = tmp_path / "r.json"
    assert main(["round", str(cells), "--base", "5", "--method", "conventional", "--json",
                 str(summary)]) == 0
    assert json.loads(summary.read_text())["base"] == 5
    lines = cells.read_text().splitlines()
    record = lines[4].split(",")
    lines[4] = ",".join([*record[:2], "abc", *record[3:]])  # the fifth line of the file
    cells.write_text("\n".join(lines) + "\n")
    assert main(["round", str(cells), "--base", "5", "--method", "conventional", "--json",
                 str(summary)]) == 2
    assert "non-numeric value at line 5: 'abc'" in capsys.readouterr().err


def test_adjusted_and_rounded_tables_publish_every_cell(tmp_path):
    jj = DATA / "jj" / "castro" / "TARGUS.jj"
    for command in (["adjust", str(jj), "--method", "milp"],
                    ["round", str(jj), "--base", "10", "--method", "controlled", "--no-audit"]):
        pub = tmp_path / f"{command[0]}.csv"
        assert main([*command, "--out", str(tmp_path / "t.jj"), "--json",
                     str(tmp_path / "t.json"), "--publish", str(pub)]) in (0, 1)
        published = pd.read_csv(pub, dtype=str, encoding="utf-8-sig")
        assert list(published.columns) == ["cell", "value"]
        assert published["value"].astype(float).notna().all()  # no cell hidden


@pytest.mark.parametrize(("content", "message"), [
    ("region,sector,turnover\n", "has a header but no records"),
    ("", "is empty"),
    ("region,sector,turnover\nA,x,1\nA,y,inf\n", "infinite value at line 3: inf"),
    ("region,sector,turnover\nA,x,1\nA,y,\n", "missing or non-numeric value at line 3: nan"),
])
def test_bad_records_name_the_line_of_the_file(tmp_path, capsys, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "cells.csv"
    status = main(["rules", str(path), "--dims", "region", "sector", "--value", "turnover",
                   "--freq", "3", "--out", str(out)])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
