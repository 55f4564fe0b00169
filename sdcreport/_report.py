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

The renderers for people (text, Markdown, HTML) show what a reader needs and nothing of
how it was computed: ``snake_case`` keys and column names as words (``l1_distance`` ->
``l1 distance``), inline code marked ````U```` as code (HTML) or plain text, no column that
is empty in every row, no row numbers of an unnamed index, yes/no for booleans, and a figure
that repeats one shown earlier in the report (the same image) only once, with a line saying
where it is. JSON keeps the keys and every column as they are.

A report is internal: it holds what a publication must not (rules, levels, statuses, audit
intervals, original values). Every rendering says so first
(:data:`sdcreport._files.CONFIDENTIAL`): a line above the title, a banner of the HTML page,
the first field of the JSON. What may be published is written by
:func:`tabsdc._release.write_release` alone.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdcreport._files import CONFIDENTIAL, CONFIDENTIAL_FIELD, write_text
from sdcreport._numbers import format_frame, format_number

#: Rows of a table shown in the text and Markdown renderers (HTML and JSON get all rows).
MAX_PREVIEW_ROWS = 40

#: A ``snake_case`` name (two words at least, lower case).
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")

#: Inline code in text: ````code````.
_CODE = re.compile(r"``(.+?)``")


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
        for section, blocks in _shown(self.sections):
            out += [section.title, "-" * len(section.title)]
            for block in blocks:
                out.append(_block_text(block))
                out.append("")
        return "\n".join(out).rstrip() + "\n"

    def to_markdown(self) -> str:
        """Markdown; figures are referenced by caption only (use HTML to see them)."""
        out = [f"**{CONFIDENTIAL}**", "", f"# {self.title}", ""]
        for section, blocks in _shown(self.sections):
            out += [f"## {section.title}", ""]
            for block in blocks:
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
        for i, (section, blocks) in enumerate(_shown(self.sections)):
            body.append(f'<section id="s{i}"><h2>{_esc(section.title)}</h2>')
            body.extend(_block_html(block) for block in blocks)
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

        The file is written whole or not at all (:func:`sdcreport._files.atomic_write`).
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


def label(name: Any) -> str:
    """A key or column name as a reader sees it: ``snake_case`` words joined by spaces.

    Examples
    --------
    >>> label("l1_distance"), label("upl p%(p=10)"), label("E[U|x]"), label(3)
    ('l1 distance', 'upl p%(p=10)', 'E[U|x]', '3')
    """
    text = str(name)
    return text.replace("_", " ") if _SNAKE.fullmatch(text) else text


def inline_code(text: str, render: str = "text") -> str:
    """Text with ````code```` marks: ``"html"`` makes them ``<code>`` elements (the rest
    escaped), ``"markdown"`` single backticks, ``"text"`` drops them.

    Examples
    --------
    >>> inline_code("the statistic ``U`` of <B>", "html")
    'the statistic <code>U</code> of &lt;B&gt;'
    >>> inline_code("the statistic ``U``"), inline_code("``U``", "markdown")
    ('the statistic U', '`U`')
    """
    if render == "html":
        parts = _CODE.split(text)
        return "".join(_esc(p) if k % 2 == 0 else f"<code>{_esc(p)}</code>"
                       for k, p in enumerate(parts))
    return _CODE.sub(r"`\1`" if render == "markdown" else r"\1", text)


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a reader sees it: columns empty in every row dropped, names as words
    (:func:`label`), numbers formatted (:func:`sdcreport._numbers.format_frame`, booleans as
    yes/no, also among other values).

    Examples
    --------
    >>> frame = pd.DataFrame({"mean_before": [1.5, 2.0], "bound": [None, None],
    ...                       "protected": [True, None]})
    >>> readable(frame).to_dict("list")
    {'mean before': ['1.50', '2.00'], 'protected': ['yes', '']}
    """
    empty = [c for c in frame.columns if frame[c].map(_blank).all()]
    out = format_frame(frame.drop(columns=empty)) if len(frame) else frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if column.dtype == object:
            out.isetitem(position, column.map(lambda v: "" if v is None else format_number(v)))
    out.columns = [label(c) for c in out.columns] if not isinstance(
        out.columns, pd.MultiIndex) else out.columns
    out.index = out.index.set_names([None if n is None else label(n) for n in out.index.names])
    return out


def _blank(value: Any) -> bool:
    """A value that shows as nothing: missing, or text of blanks."""
    if isinstance(value, str):
        return not value.strip()
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a container: not a missing value
        return False


def _shown(sections: list[Section]) -> list[tuple[Section, list[Block]]]:
    """Each section with the blocks to show: a figure identical to one shown earlier (the
    same image) is replaced by a line saying where it is."""
    first: dict[bytes, Section] = {}
    out = []
    for section in sections:
        blocks: list[Block] = []
        for block in section.blocks:
            if isinstance(block, Figure) and block.png in first:
                where = first[block.png]
                blocks.append(Text(f"Figure: {block.caption or 'untitled'}: the same figure as "
                                   f"in \"{where.title}\" above."))
                continue
            if isinstance(block, Figure):
                first[block.png] = section
            blocks.append(block)
        out.append((section, blocks))
    return out


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
        return inline_code(block.text)
    if isinstance(block, Metrics):
        keys = [label(k) for k in block.values]
        width = max((len(k) for k in keys), default=0)
        lines = [f"{k:<{width}}  {format_number(v)}"
                 for k, v in zip(keys, block.values.values(), strict=True)]
        return "\n".join(([inline_code(block.caption)] if block.caption else []) + lines)
    if isinstance(block, TableBlock):
        shown, note = _preview(block.frame)
        table = readable(shown).to_string(index=_has_named_index(shown))
        parts = [inline_code(block.caption), table, note]
        return "\n".join(p for p in parts if p)
    return f"[figure: {inline_code(block.caption) or 'untitled'}]"


def _block_markdown(block: Block) -> str:
    if isinstance(block, Text):
        return inline_code(block.text, "markdown")
    caption = f"**{inline_code(block.caption, 'markdown')}**\n\n" if block.caption else ""
    if isinstance(block, Metrics):
        rows = "\n".join(f"| {label(k)} | {format_number(v)} |"
                         for k, v in block.values.items())
        return f"{caption}| figure | value |\n|---|---|\n{rows}"
    if isinstance(block, TableBlock):
        shown, note = _preview(block.frame)
        flat = readable(shown.reset_index() if _has_named_index(shown) else shown)
        header = "| " + " | ".join(map(str, flat.columns)) + " |"
        rule = "|" + "---|" * len(flat.columns)
        body = "\n".join(
            "| " + " | ".join(format_number(v) for v in row) + " |"
            for row in flat.to_numpy(object)
        )
        return f"{caption}{header}\n{rule}\n{body}" + (f"\n\n{note}" if note else "")
    return f"*Figure: {inline_code(block.caption, 'markdown') or 'untitled'} (see the HTML " \
        "report)*"


def _metrics_html(block: Metrics) -> str:
    rows = "".join(
        f"<tr><th>{_esc(label(k))}</th><td>{_esc(format_number(v))}</td></tr>"
        for k, v in block.values.items()
    )
    caption = (f"<caption>{inline_code(block.caption, 'html')}</caption>" if block.caption
               else "")
    return f'<table class="metrics">{caption}{rows}</table>'


def _block_html(block: Block) -> str:
    if isinstance(block, Text):
        return "".join(f"<p>{inline_code(p, 'html')}</p>" for p in block.text.split("\n\n"))
    if isinstance(block, Metrics):
        return _metrics_html(block)
    if isinstance(block, TableBlock):
        frame = block.frame
        note = ""
        if block.max_html_rows is not None and len(frame) > block.max_html_rows:
            note = f"<p class='note'>{len(frame) - block.max_html_rows} more rows not shown</p>"
            frame = frame.head(block.max_html_rows)
        table = readable(frame).to_html(classes="data", border=0, na_rep="",
                                        index=_has_named_index(frame))
        caption = (f"<p class='caption'>{inline_code(block.caption, 'html')}</p>"
                   if block.caption else "")
        return f"{caption}<div class='scroll'>{table}</div>{note}"
    data = base64.b64encode(block.png).decode("ascii")
    caption = (f"<figcaption>{inline_code(block.caption, 'html')}</figcaption>"
               if block.caption else "")
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
