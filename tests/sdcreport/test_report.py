import base64
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from sdcreport import Report, Section  # noqa: E402
from sdcreport._files import CONFIDENTIAL  # noqa: E402


def sample_report() -> Report:
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    frame = pd.DataFrame({"cell": ["A", "B"], "value": [1.5, np.nan], "ok": [True, False]})
    section = (
        Section("Results")
        .add_text("First paragraph.\n\nSecond <b>paragraph</b>.")
        .add_metrics({"cells": np.int64(12), "gap": 0.0125, "optimal": np.bool_(True),
                      "bound": float("inf")})
        .add_table(frame, "Cells")
        .add_figure(fig, "A line")
    )
    return Report("Demo report", metadata={"tool": "tabsdc"}).add(section, Section("Empty"))


def test_html_is_self_contained_and_escaped():
    html = sample_report().to_html()
    assert html.startswith("<!DOCTYPE html>")
    assert "Second &lt;b&gt;paragraph&lt;/b&gt;." in html
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html)
    assert len(images) == 1
    assert base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    assert "<td>yes</td>" in html  # optimal: True


def test_json_holds_numbers_and_tables_but_not_figures():
    data = json.loads(sample_report().to_json())
    blocks = data["sections"][0]["blocks"]
    assert [b["type"] for b in blocks] == ["text", "metrics", "table"]
    assert blocks[1]["values"] == {"cells": 12, "gap": 0.0125, "optimal": True, "bound": None}
    assert blocks[2]["rows"] == [{"cell": "A", "value": 1.5, "ok": True},
                                 {"cell": "B", "value": None, "ok": False}]
    assert data["metadata"] == {"tool": "tabsdc"}


def test_text_and_markdown():
    report = sample_report()
    text = report.to_text()
    assert text.splitlines()[:4] == [CONFIDENTIAL, "", "Demo report", "==========="]
    assert "gap      0.0125" in text
    markdown = report.to_markdown()
    assert "| cell | value | ok |" in markdown
    assert "*Figure: A line (see the HTML report)*" in markdown


def test_every_rendering_says_first_that_the_report_is_confidential():
    report = sample_report()
    assert report.to_text().startswith(CONFIDENTIAL + "\n")
    assert report.to_markdown().startswith(f"**{CONFIDENTIAL}**\n")
    body = report.to_html().split("<body>", 1)[1].lstrip()
    assert body.startswith(f'<p class="confidential">{CONFIDENTIAL}</p>')
    data = json.loads(report.to_json())
    assert next(iter(data.items())) == ("confidential", "contains unpublished values")


def test_long_tables_are_cut_in_text_but_not_in_json():
    frame = pd.DataFrame({"i": range(100)})
    report = Report("r").add(Section("s").add_table(frame))
    assert "(60 more rows not shown)" in report.to_text()
    assert len(report.to_dict()["sections"][0]["blocks"][0]["rows"]) == 100


def test_save_chooses_format_by_suffix(tmp_path):
    report = sample_report()
    assert report.save(tmp_path / "r.json").read_text().startswith("{")
    assert report.save(tmp_path / "r.html").read_text().startswith("<!DOCTYPE")
    with pytest.raises(ValueError, match="cannot tell the report format from 'r.pdf'"):
        report.save(tmp_path / "r.pdf")


def test_added_table_is_a_copy():
    frame = pd.DataFrame({"a": [1]})
    section = Section("s").add_table(frame)
    frame.loc[0, "a"] = 99
    assert section.blocks[0].frame.loc[0, "a"] == 1
