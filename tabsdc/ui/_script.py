"""A Python script that reproduces a web-app session with the toolkit's API.

The script reads the same file, builds the same table, applies the same rules and protection
and writes the same publishable file and report, so a job prepared in the browser can be
rerun in batch (``python job.py``) or edited.

Every string that came from the person or their file (the file name, column names, codes,
the symbol of hidden cells, every parameter) enters the script as a Python literal
(:func:`repr`) or as a number converted by Python, never as code: a file whose name
closes a string and calls ``os.system`` is just a file name in the script, and a Windows
path with backslashes does not break it.
"""

from __future__ import annotations

from typing import Any

from tabsdc.ui._choices import rules_from_spec


def session_script(spec: dict[str, Any], symbol: str = "x") -> str:
    """The script of a session's choices (see :class:`tabsdc.ui._session.Session`); hidden
    cells of the publishable file show ``symbol``.

    Examples
    --------
    >>> spec = {"source": "survey.csv",
    ...         "data": {"kind": "microdata", "dims": ["A88"], "value": "TURNOVER"},
    ...         "hierarchies": {"A88": {"kind": "levels", "columns": ["A10"]}},
    ...         "rules": {"p": 10, "freq": 3},
    ...         "protect": {"method": "suppression", "algorithm": "optimal"}}
    >>> script = session_script(spec)
    >>> "suppress(table, 'optimal', 'value', time_limit=None)" in script
    True
    >>> compile(script, "job.py", "exec") is not None
    True
    """
    source = spec.get("source", "data.csv")
    data = spec.get("data") or {}
    lines = [
        repr(f"Protection of {source}, as prepared in the tabsdc web app."),
        "",
        "from pathlib import Path",
        "",
        "import pandas as pd",
        "",
        "from sdcreport import Report",
        "from tabsdc import (DominanceRule, FrequencyRule, Hierarchy, PPercentRule, PQRule,",
        "                    Table, apply_rules)",
        "from tabsdc._release import write_publishable",
        "",
        f"SOURCE = Path({source!r})",
        f"SYMBOL = {str(symbol)!r}  # what hidden cells show in the publishable file",
        "",
    ]
    if data.get("kind") == "jj":
        lines += ["table = Table.from_jj(SOURCE)"]
    else:
        lines += _table_lines(source, data, spec.get("hierarchies") or {})
    sections = ["table.to_report()"]
    if spec.get("rules"):
        lines += ["", "rules = apply_rules(table, [" + ", ".join(_rules(spec["rules"])) + "])",
                  "print(rules.summary())", "table = rules.table"]
        sections.append("rules.to_report()")
    protect = spec.get("protect")
    if protect:
        lines += [""] + _protect_lines(protect)
        sections.append("result.to_report()")
        if protect["method"] == "suppression":
            sections.append("result.audit.to_report()")
        lines += ["", f"Report({'Protection of ' + source!r}).add(" + ", ".join(sections)
                  + ").save(SOURCE.stem + '_report.html')"]
    return "\n".join(lines) + "\n"


def _table_lines(source: str, data: dict[str, Any], hierarchies: dict[str, Any]) -> list[str]:
    dims = list(data.get("dims") or [])
    codes = sorted({*dims, *(c for h in hierarchies.values() for c in h.get("columns", [])),
                    *([data["holding"]] if data.get("holding") else [])})
    suffix = source.rsplit(".", 1)[-1].lower()
    if suffix == "parquet":
        read = "pd.read_parquet(SOURCE)"
    elif suffix == "xlsx":
        read = "pd.read_excel(SOURCE, dtype=CODES)"
    else:
        options = data.get("csv") or {"sep": ","}
        read = "pd.read_csv(SOURCE, " + "".join(f"{key}={value!r}, " for key, value in
                                                options.items()) + "dtype=CODES)"
    lines = [f"CODES = dict.fromkeys({codes!r}, str)", f"data = {read}",
             "data[list(CODES)] = data[list(CODES)].astype(str)", "hierarchies = {"]
    for dim in dims:
        spec = hierarchies.get(dim, {"kind": "flat"})
        if spec.get("kind") == "levels":
            columns = [c for c in spec.get("columns", []) if c != dim] + [dim]
            lines.append(f"    {dim!r}: Hierarchy.from_levels(data[{columns!r}]),")
        elif spec.get("kind") == "prefixes":
            lengths = [int(n) for n in spec.get("lengths", [])]
            lines.append(f"    {dim!r}: Hierarchy.from_prefixes(data[{dim!r}].unique(), "
                         f"{lengths!r}),")
        elif spec.get("kind") == "file":
            lines.append(f"    {dim!r}: Hierarchy.from_parent_child(pd.read_csv("
                         f"{dim + '_hierarchy.csv'!r}, dtype=str)),  # the uploaded file")
    lines.append("}")
    value = data.get("value")
    if data.get("kind") == "cells":
        freq = f", freq={data['freq']!r}" if data.get("freq") else ""
        lines.append(f"table = Table.from_aggregated(data, {dims!r}, {value!r}{freq}, "
                     "hierarchies=hierarchies)")
    else:
        extra = "".join(f", {key}={data[key]!r}" for key in ("holding", "weight")
                        if data.get(key))
        if data.get("negative", "keep") != "keep":
            extra += f", negative={data['negative']!r}"
        lines.append(f"table = Table.from_microdata(data, {dims!r}, {value!r}{extra}, "
                     f"hierarchies=hierarchies, top={int(data.get('top') or 3)})")
    return lines


def _rules(spec: dict[str, Any]) -> list[str]:
    return [repr(rule) for rule in rules_from_spec(spec)]


def _protect_lines(spec: dict[str, Any]) -> list[str]:
    time_limit = None if spec.get("time_limit") in (None, "") else float(spec["time_limit"])
    seed = None if spec.get("seed") in (None, "") else int(spec["seed"])
    method = spec["method"]
    if method == "suppression":
        return ["from tabsdc.suppression import suppress",
                f"result = suppress(table, {spec.get('algorithm', 'optimal')!r}, "
                f"{spec.get('cost', 'value')!r}, time_limit={time_limit!r})",
                "print(result.summary())",
                "write_publishable(result.table, SOURCE.stem + '_publishable.csv', "
                "symbol=SYMBOL)"]
    if method == "rounding":
        lines = ["from tabsdc.rounding import round_table"]
        if spec.get("column", "value") != "value":
            lines.append(f"table = table.with_columns(value=table.cells[{spec['column']!r}]"
                         ".to_numpy(dtype=float))")
        return lines + [
            f"result = round_table(table, {int(spec['base'])}, "
            f"{spec.get('rule', 'controlled')!r}, seed={seed!r}, time_limit={time_limit!r})",
            "print(result.summary())",
            "write_publishable(result.table.with_columns(status='s'), "
            "SOURCE.stem + '_publishable.csv', symbol=SYMBOL)"]
    return ["from tabsdc.cta import adjust",
            f"result = adjust(table, {spec.get('algorithm', 'heuristic')!r}, 'inverse', "
            f"time_limit={time_limit!r}, seed={seed!r})",
            "print(result.summary())",
            "write_publishable(result.table.with_columns(status='s'), "
            "SOURCE.stem + '_publishable.csv', symbol=SYMBOL)"]


def session_notebook(spec: dict[str, Any], symbol: str = "x") -> dict[str, Any]:
    """The script of :func:`session_script` as a Jupyter notebook (nbformat 4): a title,
    a cell of imports and the file, then one code cell per step (the blocks of the script
    between blank lines).

    Examples
    --------
    >>> notebook = session_notebook({"source": "survey.csv", "data": {"kind": "jj"}})
    >>> [cell["cell_type"] for cell in notebook["cells"]]
    ['markdown', 'code', 'code']
    >>> "".join(notebook["cells"][2]["source"])
    'table = Table.from_jj(SOURCE)'
    """
    blocks = [block.strip("\n") for block in session_script(spec, symbol).split("\n\n")]
    first = next(i for i, block in enumerate(blocks) if block.startswith("SOURCE = "))
    code = ["\n\n".join(blocks[1:first + 1]), *blocks[first + 1:]]
    cells = [{"cell_type": "markdown", "metadata": {},
              "source": ["# Protection of a table, as prepared in the tabsdc web app\n",
                         "Run the cells in order, with the data file beside the notebook."]}]
    cells += [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": block.splitlines(keepends=True)} for block in code if block]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"},
                         "language_info": {"name": "python"}}}
