"""Writing a table as tau-ARGUS tabular input: a ``.tab`` file, its ``.rda`` and ``.hrc`` files.

One line per cell, totals included, fields separated by ``;``: the codes of the spanning
variables (the total as ``<TOTCODE>``), the value, then, when the table has them, the
frequency, the largest contributions, the cost, the status (``S`` safe, ``U`` unsafe,
``P`` protected, ``M`` secondary, ``E`` empty) and the lower and upper protection levels.
The ``.rda`` describes these columns and names one ``.hrc`` per dimension, so tau-ARGUS (and
:func:`tabsdc.io.argus._tables.tabular_table`) reads the same table back. A-priori bounds
are not part of a ``.tab``: :func:`tabsdc.io.argus._apriori.write_hst` writes them.

A ``.tab`` holds the value of every cell: it is an internal file. Its ``.rda`` says so on its
first line, a ``//`` comment (:data:`sdcreport._files.CONFIDENTIAL`), which tau-ARGUS's and
this toolkit's readers skip; the ``.tab`` and ``.hrc`` formats allow no comment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import CONFIDENTIAL, all_or_none, atomic_write, write_text
from tabsdc._errors import InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._table import Table
from tabsdc.io.argus._hrc import write_hrc
from tabsdc.io.argus._metadata import Metadata, Variable, format_rda


def tab_status_codes(table: Table) -> np.ndarray:
    """tau-ARGUS status letters of the cells: ``S``, ``U``, ``M``, ``P``, or ``E`` for a
    protected cell that is empty (value 0 and no contributors)."""
    cells = table.cells
    freq = np.nan_to_num(cells["freq"].to_numpy(float))
    empty = (cells["value"].to_numpy(float) == 0) & (freq == 0)
    letters = {"s": "S", "u": "U", "m": "M", "x": "M", "z": "P", "w": "P"}
    codes = cells["status"].map(letters).to_numpy(dtype=object)
    return np.where((codes == "P") & empty, "E", codes)


def format_numbers(values: np.ndarray) -> np.ndarray:
    """Shortest text that reads back to the same float; whole numbers without ``.0``.

    Examples
    --------
    >>> format_numbers(np.array([5.0, 0.75, 16847646.84, -2.0])).tolist()
    ['5', '0.75', '16847646.84', '-2']
    """
    text = pd.Series(np.asarray(values, dtype=float).astype(str))
    return text.str.replace(r"\.0$", "", regex=True).to_numpy(dtype=object)


def tab_files(path: Path, dims: Sequence[str]) -> tuple[Path, ...]:
    """The files :func:`write_tab` writes for a table with spanning variables ``dims``: the
    ``.tab``, its ``.rda`` and one ``<stem>_<dim>.hrc`` per variable.

    Examples
    --------
    >>> [p.name for p in tab_files(Path("out/t.tab"), ["Size", "Region"])]
    ['t.tab', 't.rda', 't_Size.hrc', 't_Region.hrc']
    """
    return (path, path.with_suffix(".rda"),
            *(path.with_name(f"{path.stem}_{dim}.hrc") for dim in dims))


def write_tab(table: Table, path: str | Path, *, response: str = "value", decimals: int = 0,
              status_only: bool = False,
              extra: Mapping[str, np.ndarray] | None = None) -> Metadata:
    """Write ``table`` as ``path`` (``.tab``) with ``.rda`` and ``.hrc`` files beside it.

    Returns the metadata written (``<stem>.rda``); hierarchy files are ``<stem>_<dim>.hrc``.
    ``status_only`` writes the codes and the status only; ``extra`` adds numeric columns
    (e.g. the audit interval) at the end of each line.

    Raises
    ------
    InputError
        For a table without dimensions (a JJ table: write it with ``to_jj``).

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> from tabsdc import Table
    >>> from tabsdc.io.argus._microdata import read_data
    >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "v": [3.5, 5.0]}), ["r"], "v")
    >>> folder = Path(tempfile.mkdtemp())
    >>> meta = write_tab(t, folder / "t.tab")
    >>> print((folder / "t.tab").read_text(), end="")
    "Total";8.5;8.5;S;0;0
    "a";3.5;3.5;S;0;0
    "b";5;5;S;0;0
    """
    if not table.dims:
        raise InputError("a table without dimensions (read from JJ) has no codes to write as "
                         ".tab; write it with to_jj")
    path = Path(path)
    cells = table.cells
    index = cells.index.to_frame(index=False)
    columns: dict[str, np.ndarray] = {}
    variables: list[Variable] = []
    hrc_files = tab_files(path, table.dims)[2:]
    hierarchy_files = []
    for position, dim in enumerate(table.dims):
        hierarchy = table.hierarchies[dim]
        hrc = hrc_files[position]
        hierarchy_files.append((hierarchy, hrc))
        columns[dim] = ('"' + index.iloc[:, position].astype(str) + '"').to_numpy()
        variables.append(Variable(dim, explanatory=True, total_code=hierarchy.root,
                                  hierarchical=True, hierarchy_file=hrc.name))
    if status_only:
        columns["status"] = tab_status_codes(table)
        return _write(columns, variables + [Variable("status", role="status")], path,
                      hierarchy_files)
    columns[response] = format_numbers(cells["value"].to_numpy(float))
    variables.append(Variable(response, numeric=True, decimals=decimals))
    if cells["freq"].notna().all():
        columns["freq"] = format_numbers(cells["freq"].to_numpy(float))
        variables.append(Variable("freq", role="frequency"))
    tops = sorted((c for c in cells.columns if c[:1] == "x" and c[1:].isdigit()),
                  key=lambda c: int(c[1:]))
    for top in tops:
        columns[top] = format_numbers(np.nan_to_num(cells[top].to_numpy(float)))
        variables.append(Variable(top, role="top"))
    columns["cost"] = format_numbers(cells["cost"].to_numpy(float))
    variables.append(Variable("cost", numeric=True, role="cost"))
    columns["status"] = tab_status_codes(table)
    variables.append(Variable("status", role="status"))
    for level, role in (("lpl", "lower_pl"), ("upl", "upper_pl")):
        columns[level] = format_numbers(cells[level].to_numpy(float))
        variables.append(Variable(level, numeric=True, role=role))
    for name, values in (extra or {}).items():
        columns[name] = format_numbers(np.asarray(values, dtype=float))
        variables.append(Variable(name, numeric=True, role="extra"))
    return _write(columns, variables, path, hierarchy_files)


def _write(columns: dict[str, np.ndarray], variables: list[Variable], path: Path,
           hierarchy_files: list[tuple[Hierarchy, Path]]) -> Metadata:
    """The ``.tab``, its ``.rda`` and its ``.hrc`` files, all of them or none."""
    metadata = Metadata(tuple(variables), kind="table", separator=";",
                        path=str(path.with_suffix(".rda")))
    with all_or_none():
        for hierarchy, hrc in hierarchy_files:
            write_hrc(hierarchy, hrc)
        with atomic_write(path, encoding="utf-8", newline="") as stream:
            pd.DataFrame(columns).to_csv(stream, sep=";", header=False, index=False,
                                         quoting=3, lineterminator="\n")
        write_text(path.with_suffix(".rda"), f"// {CONFIDENTIAL}\n" + format_rda(metadata),
                   encoding="latin-1")
    return metadata
