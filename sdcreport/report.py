"""Report and Section: the documents every result object of the toolkit renders to.

A section is an ordered list of blocks. Four kinds of block exist:

* :class:`Text`: a paragraph;
* :class:`Metrics`: named key figures (a small mapping of name -> number, string or bool);
* :class:`TableBlock`: a :class:`pandas.DataFrame`;
* :class:`Figure`: a matplotlib figure, stored as PNG bytes when it is added (so the figure
  can be closed at once and a report never holds live figures).

Renderers: :meth:`Report.to_text` (terminal), :meth:`Report.to_markdown`,
:meth:`Report.to_html` (one self-contained file, figures embedded as base64 PNG),
:meth:`Report.to_dict` / :meth:`Report.to_json` (machine-readable; figures are omitted from
JSON, tables are written as lists of records).

A report is internal: it holds what a publication must not (rules, levels, statuses, audit
intervals, original values). Every rendering says so first
(:data:`sdcreport.files.CONFIDENTIAL`): a line above the title, a banner of the HTML page,
the first field of the JSON. What may be published is written by
:func:`tabsdc.release.write_release` alone.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdcreport.files import CONFIDENTIAL, CONFIDENTIAL_FIELD, write_text
from sdcreport.numbers import format_frame, format_number

__all__ = ["Text", "Metrics", "TableBlock", "Figure", "Section", "Report", "jsonable",
           "REPORT_FORMATS", "report_format"]

#: Rows of a table shown in the text and Markdown renderers (HTML and JSON get all rows).
MAX_PREVIEW_ROWS = 40


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text."""

    text: str


@dataclass(frozen=True)
class Metrics:
    """Named key figures, e.g. ``{"cells": 120, "primary": 7, "optimal": True}``."""

    values: dict[str, Any]
    caption: str = ""


@dataclass(frozen=True)
class TableBlock:
    """A table; the frame is copied when the block is made."""

    frame: pd.DataFrame
    caption: str = ""
    max_html_rows: int | None = None


@dataclass(frozen=True)
class Figure:
    """A figure rendered to PNG bytes."""

    png: bytes
    caption: str = ""

    @classmethod
    def from_matplotlib(cls, fig: Any, caption: str = "", dpi: int = 100) -> Figure:
        """Render a matplotlib figure to PNG; a figure made by pyplot is closed (one made as
        ``matplotlib.figure.Figure`` has nothing to close, and needs no lock to draw)."""
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        if getattr(fig.canvas, "manager", None) is not None:
            import matplotlib.pyplot as plt

            plt.close(fig)
        return cls(png=buffer.getvalue(), caption=caption)


Block = Text | Metrics | TableBlock | Figure


@dataclass
class Section:
    """A titled part of a report; the ``add_*`` methods return the section for chaining."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add_text(self, text: str) -> Section:
        self.blocks.append(Text(text))
        return self

    def add_metrics(self, values: dict[str, Any], caption: str = "") -> Section:
        self.blocks.append(Metrics(dict(values), caption))
        return self

    def add_table(
        self, frame: pd.DataFrame, caption: str = "", max_html_rows: int | None = None
    ) -> Section:
        self.blocks.append(TableBlock(frame.copy(), caption, max_html_rows))
        return self

    def add_figure(self, fig: Any, caption: str = "") -> Section:
        """Add a matplotlib figure (rendered to PNG now and closed)."""
        self.blocks.append(Figure.from_matplotlib(fig, caption))
        return self


@dataclass
class Report:
    """An ordered collection of sections with a title and free-form metadata."""

    title: str
    sections: list[Section] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def add(self, *sections: Section) -> Report:
        """Append sections (results' ``to_report()`` output) and return the report."""
        self.sections.extend(sections)
        return self

    # -- renderers ---------------------------------------------------------------------------
    def to_text(self) -> str:
        """Plain text for the terminal (tables cut to :data:`MAX_PREVIEW_ROWS` rows)."""
        out = [CONFIDENTIAL, "", self.title, "=" * len(self.title), ""]
        for section in self.sections:
            out += [section.title, "-" * len(section.title)]
            for block in section.blocks:
                out.append(_block_text(block))
                out.append("")
        return "\n".join(out).rstrip() + "\n"

    def to_markdown(self) -> str:
        """Markdown; figures are referenced by caption only (use HTML to see them)."""
        out = [f"**{CONFIDENTIAL}**", "", f"# {self.title}", ""]
        for section in self.sections:
            out += [f"## {section.title}", ""]
            for block in section.blocks:
                out.append(_block_markdown(block))
                out.append("")
        return "\n".join(out).rstrip() + "\n"

    def to_html(self) -> str:
        """One self-contained HTML document (inline CSS, figures as data-URI PNG)."""
        body = [f'<p class="confidential">{_esc(CONFIDENTIAL)}</p>',
                f"<h1>{_esc(self.title)}</h1>"]
        if self.metadata:
            body.append(_metrics_html(Metrics(self.metadata)))
        toc = "".join(
            f'<li><a href="#s{i}">{_esc(s.title)}</a></li>' for i, s in enumerate(self.sections)
        )
        if len(self.sections) > 1:
            body.append(f"<nav><ol>{toc}</ol></nav>")
        for i, section in enumerate(self.sections):
            body.append(f'<section id="s{i}"><h2>{_esc(section.title)}</h2>')
            body.extend(_block_html(block) for block in section.blocks)
            body.append("</section>")
        return _HTML_PAGE.format(title=_esc(self.title), body="\n".join(body))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the confidentiality field, title, metadata, and per section its
        text, metrics and tables."""
        field, note = CONFIDENTIAL_FIELD
        return {
            field: note,
            "title": self.title,
            "metadata": jsonable(self.metadata),
            "sections": [
                {"title": s.title, "blocks": [b for b in map(_block_dict, s.blocks) if b]}
                for s in self.sections
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def save(self, path: str | Path) -> Path:
        """Write the report; the suffix chooses the format (.html, .md, .json, .txt).

        The file is written whole or not at all (:func:`sdcreport.files.atomic_write`).
        """
        path = Path(path)
        render = getattr(self, REPORT_FORMATS[report_format(path)])
        return write_text(path, render())


#: Report file suffixes and the method that renders each.
REPORT_FORMATS = {".html": "to_html", ".htm": "to_html", ".md": "to_markdown",
                  ".json": "to_json", ".txt": "to_text"}


def report_format(path: str | Path) -> str:
    """The report format of a file name: its suffix, lower case.

    Raises
    ------
    ValueError
        A suffix that is not one of :data:`REPORT_FORMATS`.

    Examples
    --------
    >>> report_format("audit.HTML")
    '.html'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ValueError(f"cannot tell the report format from {Path(path).name!r}: "
                         f"use one of {', '.join(REPORT_FORMATS)}")
    return suffix


# -- helpers -----------------------------------------------------------------------------------
def _esc(text: Any) -> str:
    return html.escape(str(text))


def jsonable(value: Any) -> Any:
    """Turn numpy/pandas scalars and containers into plain JSON values (NaN/inf -> None)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray | pd.Index):
        return [jsonable(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, pd.Timestamp | _dt.datetime | _dt.date):
        return value.isoformat()
    if value is None or isinstance(value, str | int):
        return value
    if pd.isna(value):
        return None
    return str(value)


def _frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    flat = frame.reset_index() if _has_named_index(frame) else frame
    columns = [str(c) for c in flat.columns]
    return [dict(zip(columns, map(jsonable, row), strict=True)) for row in flat.to_numpy(object)]


def _has_named_index(frame: pd.DataFrame) -> bool:
    return any(name is not None for name in frame.index.names)


def _preview(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if len(frame) <= MAX_PREVIEW_ROWS:
        return frame, ""
    return frame.head(MAX_PREVIEW_ROWS), f"({len(frame) - MAX_PREVIEW_ROWS} more rows not shown)"


def _block_text(block: Block) -> str:
    if isinstance(block, Text):
        return block.text
    if isinstance(block, Metrics):
        width = max((len(k) for k in block.values), default=0)
        lines = [f"{k:<{width}}  {format_number(v)}" for k, v in block.values.items()]
        return "\n".join(([block.caption] if block.caption else []) + lines)
    if isinstance(block, TableBlock):
        shown, note = _preview(block.frame)
        parts = [block.caption, format_frame(shown).to_string(), note]
        return "\n".join(p for p in parts if p)
    return f"[figure: {block.caption or 'untitled'}]"


def _block_markdown(block: Block) -> str:
    if isinstance(block, Text):
        return block.text
    if isinstance(block, Metrics):
        rows = "\n".join(f"| {k} | {format_number(v)} |" for k, v in block.values.items())
        caption = f"**{block.caption}**\n\n" if block.caption else ""
        return f"{caption}| figure | value |\n|---|---|\n{rows}"
    if isinstance(block, TableBlock):
        shown, note = _preview(block.frame)
        flat = format_frame(shown.reset_index() if _has_named_index(shown) else shown)
        header = "| " + " | ".join(map(str, flat.columns)) + " |"
        rule = "|" + "---|" * len(flat.columns)
        body = "\n".join(
            "| " + " | ".join(format_number(v) for v in row) + " |"
            for row in flat.to_numpy(object)
        )
        caption = f"**{block.caption}**\n\n" if block.caption else ""
        return f"{caption}{header}\n{rule}\n{body}" + (f"\n\n{note}" if note else "")
    return f"*Figure: {block.caption or 'untitled'} (see the HTML report)*"


def _metrics_html(block: Metrics) -> str:
    rows = "".join(
        f"<tr><th>{_esc(k)}</th><td>{_esc(format_number(v))}</td></tr>"
        for k, v in block.values.items()
    )
    caption = f"<caption>{_esc(block.caption)}</caption>" if block.caption else ""
    return f'<table class="metrics">{caption}{rows}</table>'


def _block_html(block: Block) -> str:
    if isinstance(block, Text):
        return "".join(f"<p>{_esc(p)}</p>" for p in block.text.split("\n\n"))
    if isinstance(block, Metrics):
        return _metrics_html(block)
    if isinstance(block, TableBlock):
        frame = block.frame
        note = ""
        if block.max_html_rows is not None and len(frame) > block.max_html_rows:
            note = f"<p class='note'>{len(frame) - block.max_html_rows} more rows not shown</p>"
            frame = frame.head(block.max_html_rows)
        table = format_frame(frame).to_html(classes="data", border=0, na_rep="")
        caption = f"<p class='caption'>{_esc(block.caption)}</p>" if block.caption else ""
        return f"{caption}<div class='scroll'>{table}</div>{note}"
    data = base64.b64encode(block.png).decode("ascii")
    caption = f"<figcaption>{_esc(block.caption)}</figcaption>" if block.caption else ""
    return f"<figure><img alt='{_esc(block.caption)}' src='data:image/png;base64,{data}'/>" \
        f"{caption}</figure>"


def _block_dict(block: Block) -> dict[str, Any] | None:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Metrics):
        return {"type": "metrics", "caption": block.caption, "values": jsonable(block.values)}
    if isinstance(block, TableBlock):
        return {"type": "table", "caption": block.caption, "rows": _frame_records(block.frame)}
    return None


_HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }}
h1 {{ border-bottom: 2px solid #444; }} h2 {{ border-bottom: 1px solid #aaa; margin-top: 2em; }}
table {{ border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }}
th, td {{ border: 1px solid #ccc; padding: 2px 8px; text-align: right; }}
table.metrics th {{ text-align: left; background: #f3f3f3; }}
.scroll {{ overflow-x: auto; max-height: 40em; }}
.caption, figcaption, .note {{ color: #555; font-style: italic; }}
.confidential {{ border: 2px solid #a00; color: #a00; font-weight: bold; padding: 4px 8px; }}
img {{ max-width: 100%; }}
</style></head>
<body>
{body}
</body></html>
"""
