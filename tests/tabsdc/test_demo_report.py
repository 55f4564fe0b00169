"""The demo report reads as a report for people: no markup, no empty columns, no row
numbers, no raw key names, no Python booleans, no figure twice, and the exactly disclosed
hidden cells of a protected pattern explained where they are listed (the quick demo here;
the full one, as ``make demo`` runs it, in the slow test)."""

import html
import re

import numpy as np
import pytest

from sdcreport import Report, TableBlock, Text
from tabsdc.audit._plots import interval_figure, offsets_in_levels
from tabsdc.cli._demo import demo_report

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def faults(report: Report) -> list[str]:
    """What a reader should not meet in the HTML, Markdown and text renderings."""
    page = report.to_html()
    found = []
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    if len(images) != len(set(images)):
        found.append("a figure shown twice")
    page = re.sub(r"<img[^>]*>", "", page)
    for rendering in (page, report.to_markdown(), report.to_text()):
        if "``" in rendering:
            found.append("``markup``")
        if re.search(r"(?<![\w-])(True|False|None)(?![\w-])", rendering):
            found.append("a Python value: " + re.search(r"(?<![\w-])(True|False|None)(?![\w-])",
                                                        rendering).group(0))
    labels = [html.unescape(t).strip() for t in re.findall(r"<th[^>]*>([^<]*)</th>", page)]
    found += [f"raw key {t!r}" for t in labels if SNAKE.fullmatch(t)]
    for table in re.findall(r'<table class="dataframe data">(.*?)</table>', page, re.S):
        body = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)
        rows = [[html.unescape(c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>",
                                                             row, re.S)] for row in body]
        width = max(len(r) for r in rows)
        full = [r for r in rows if len(r) == width]  # rows without a spanned index label
        for column in range(width):
            if all(r[column] == "" for r in full):
                found.append("an empty column")
        heads = [re.findall(r"<th[^>]*>(.*?)</th>", row) for row in body]
        if len(body) > 1 and all(h and h[0] == str(k) for k, h in enumerate(heads)):
            found.append("row numbers")
    return found


def check_demo(report: Report) -> None:
    assert faults(report) == []
    text = report.to_text()
    sections = [s.title for s in report.sections]
    assert sections[:4] == ["Table", "Sensitive cells", "Complementary suppression (optimal)",
                            "Audit: interval attack"]
    figures = [b.caption for s in report.sections for b in s.blocks
               if type(b).__name__ == "Figure"]
    assert "Cell status after suppression (red primary, orange secondary)" in figures
    exact = re.search(r"exactly disclosed cells +(\d+)", text)
    if exact and int(exact.group(1)):
        assert (f"{exact.group(1)} hidden cells are exactly disclosed (their interval is one "
                "value): all are secondary cells") in " ".join(text.split())


def test_the_quick_demo_report_reads_as_a_report():
    check_demo(demo_report("optimal", quick=True))


@pytest.mark.slow
def test_the_full_demo_report_reads_as_a_report():
    check_demo(demo_report("optimal"))  # what make demo writes (tabsdc demo)


def test_the_report_layer_removes_each_fault():
    import pandas as pd
    from matplotlib.figure import Figure as Drawing

    from sdcreport import Figure, Section

    drawing = Drawing()
    drawing.subplots().plot([0, 1], [1, 0])
    figure = Figure.from_matplotlib(drawing, "a status map")
    section = (Section("faults")
               .add_text("the statistic ``U`` of the slides")
               .add_metrics({"l1_distance": 3.5, "additive": True})
               .add_table(pd.DataFrame({"base": [2, 3], "slides_bound": [np.nan, np.nan],
                                        "protected": [True, None]}))
               .add_table(pd.DataFrame({"n": [1, 2]}, index=["a", "b"]).rename_axis("cell")))
    section.blocks.extend([figure, figure])
    report = Report("r").add(section)
    assert faults(report) == []
    markdown = report.to_markdown()
    assert "the statistic `U` of the slides" in markdown and "| l1 distance | 3.50 |" in markdown
    assert "<code>U</code>" in report.to_html() and "slides" not in markdown.split("\n| base")[1]
    assert report.to_json().count('"l1_distance"') == 1  # JSON keeps the keys


def test_the_interval_chart_shows_every_interval_in_protection_levels():
    from tabsdc import FrequencyRule, PPercentRule, apply_rules
    from tabsdc.audit import audit
    from tabsdc.cli._demo import demo_table
    from tabsdc.suppression import suppress

    low, high = offsets_in_levels(np.array([100.0, 1e6]), np.array([0.0, 9e5]),
                                  np.array([150.0, np.inf]), np.array([10.0, 1e4]),
                                  np.array([10.0, 0.0]))
    assert low.tolist() == [-10.0, -10.0] and high.tolist() == [5.0, np.inf]
    rules = apply_rules(demo_table(quick=True), [PPercentRule(10), FrequencyRule(3)])
    protected = suppress(rules.table, "heuristic")
    result = audit(protected.table)
    axes = interval_figure(result.frame, result.table).axes[0]
    assert axes.get_xscale() == "symlog" and "clipped" not in axes.get_xlabel()


@pytest.mark.parametrize("hidden, said", [
    # the grand total, hidden beside a protected rectangle, is the sum of the published
    # row totals: an exactly disclosed secondary, allowed and said so
    ({("1", "a"): "u", ("1", "b"): "m", ("2", "a"): "m", ("2", "b"): "m",
      ("Total", "Total"): "m"},
     "1 hidden cells are exactly disclosed (their interval is one value): all are secondary "
     "cells. A secondary cell is hidden to protect the primary cells"),
    # a primary hidden alone is its row total minus the published cell
    ({("1", "a"): "u"},
     "1 hidden cells are exactly disclosed (their interval is one value): 1 of them are "
     "primary (sensitive) cells, which are therefore not protected"),
])
def test_the_audit_says_why_exactly_disclosed_cells_are_allowed_where_they_are_listed(
        hidden, said):
    import pandas as pd

    from tabsdc import Table
    from tabsdc.audit import audit

    data = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["a", "b", "a", "b"],
                         "value": [10.0, 20.0, 30.0, 40.0]})
    table = Table.from_aggregated(data, ["r", "c"])
    status = pd.Series([hidden.get(cell, "s") for cell in table.cells.index],
                       index=table.cells.index)
    level = np.where(status == "u", 5.0, 0.0)
    section = audit(table.with_columns(status=status.to_numpy(), lpl=level, upl=level)
                    ).to_report()
    blocks = section.blocks
    said_at = [k for k, block in enumerate(blocks)
               if isinstance(block, Text) and said in " ".join(block.text.split())]
    assert len(said_at) == 1  # said once, just before the list of hidden cells
    listed = blocks[said_at[0] + 1]
    assert isinstance(listed, TableBlock) and listed.caption == "Hidden cells"
