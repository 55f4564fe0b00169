"""tau-ARGUS a-priori files (``.hst``): statuses, costs, protection levels and bounds of
cells set before secondary suppression (manual 5.6).

Each line gives the codes of the table's spanning variables, then an action, all separated
by the file's separator (the ``<APRIORI>`` command names it)::

    Nr;4;u            status unsafe (manual protection levels, see MAN)
    Zd;6;p            status protected (never suppressed)
    Zd;7;s            status safe
    5;5;c;1           cost 1 (also ``w``)
    5;5;pl;10;12      lower and upper protection level
    5;5;ab;0;900      a-priori bounds: the intruder knows the value lies in [0, 900]
    5;5;m             status secondary (already suppressed)

The total of a variable is written as its ``<TOTCODE>`` (or the hierarchy's total).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import write_text
from tabsdc._table import Table
from tabsdc.io.argus._syntax import SourceLine, content_lines, parse_number
from tabsdc.io.argus._tab import format_numbers

_ARITY = {"S": 0, "U": 0, "P": 0, "M": 0, "ML": 0, "C": 1, "W": 1, "PL": 2, "AB": 2}


@dataclass(frozen=True)
class AprioriLine:
    """One line: the cell's codes, the action (upper-case) and its numbers."""

    codes: tuple[str, ...]
    action: str
    numbers: tuple[float, ...]
    line: SourceLine


@dataclass(frozen=True)
class AprioriOutcome:
    """The table after an a-priori file, and the lines that named unknown cells."""

    table: Table
    applied: int
    unknown: tuple[AprioriLine, ...]


def read_hst(path: str | Path, n_dims: int, separator: str = ";") -> list[AprioriLine]:
    """Read an a-priori file for a table with ``n_dims`` spanning variables."""
    path = Path(path)
    return parse_hst(path.read_text(encoding="latin-1"), n_dims, separator, path=str(path))


def parse_hst(text: str, n_dims: int, separator: str = ";",
              path: str = "<text>") -> list[AprioriLine]:
    """Parse an a-priori file (see :func:`read_hst`).

    Raises
    ------
    ArgusFormatError
        Naming file, line and field: too few fields, an unknown action, a missing or
        non-numeric parameter, a negative cost or protection level, bounds with lower > upper.

    Examples
    --------
    >>> [(a.codes, a.action, a.numbers) for a in parse_hst("Nr, 4, u\\n 5, 5, c, 1", 2, ",")]
    [(('Nr', '4'), 'U', ()), (('5', '5'), 'C', (1.0,))]
    """
    lines = []
    decimal_comma = separator != ","
    for line in content_lines(text, path):
        fields = [f.strip().strip('"').strip() for f in line.text.split(separator)]
        if len(fields) < n_dims + 1:
            raise line.error(f"field {len(fields) + 1}: {n_dims} codes and an action expected, "
                             f"separated by {separator!r}")
        action = fields[n_dims].upper()
        if action not in _ARITY:
            raise line.error(f"field {n_dims + 1}: unknown action {fields[n_dims]!r}; known: "
                             + ", ".join(sorted(_ARITY)))
        numbers = []
        for position in range(n_dims + 1, n_dims + 1 + _ARITY[action]):
            if position >= len(fields) or not fields[position]:
                raise line.error(f"field {position + 1}: {action} needs {_ARITY[action]} "
                                 "number(s)")
            try:
                numbers.append(parse_number(fields[position], decimal_comma))
            except ValueError:
                raise line.error(f"field {position + 1}: {fields[position]!r} is not a number") \
                    from None
        if action in ("C", "W", "PL") and any(x < 0 for x in numbers):
            raise line.error(f"field {n_dims + 2}: {action} must not be negative")
        if action == "AB" and numbers[0] > numbers[1]:
            raise line.error(f"field {n_dims + 2}: lower bound {numbers[0]:g} > upper bound "
                             f"{numbers[1]:g}")
        lines.append(AprioriLine(tuple(fields[:n_dims]), action, tuple(numbers), line))
    return lines


def apply_apriori(table: Table, lines: list[AprioriLine], total_codes: tuple[str, ...],
                  *, manual_margin: float = 20.0, ignore_errors: bool = True) -> AprioriOutcome:
    """Apply a-priori lines to a table with dimensions.

    ``total_codes`` are the codes the file uses for each dimension's total. Cells made
    unsafe get protection levels ``manual_margin`` % of their value (at most the value);
    ``PL`` lines set levels after the status lines, so a cell's ``u`` and ``pl`` lines work
    in either order. For a cell named twice with one kind of line, the later line counts.
    Lines whose codes name no cell are returned in ``unknown`` (``ignore_errors``,
    tau-ARGUS's default) or raise. The lines are applied with array operations.

    Raises
    ------
    ArgusFormatError
        A line naming an unknown cell (without ``ignore_errors``), or a status change
        tau-ARGUS forbids: an unsafe cell made protected, a protected cell made unsafe.
    """
    cells = table.cells.copy()
    roots = [h.root for h in table.hierarchies.values()]
    keys = [tuple(root if code == total else code
                  for code, total, root in zip(entry.codes, total_codes, roots, strict=True))
            for entry in lines]
    lookup = (pd.MultiIndex.from_tuples(keys, names=cells.index.names) if cells.index.nlevels > 1
              else pd.Index([key[0] for key in keys]))
    position = cells.index.get_indexer(lookup) if lines else np.zeros(0, dtype=int)
    unknown = tuple(entry for entry, at in zip(lines, position, strict=True) if at < 0)
    if unknown and not ignore_errors:
        raise unknown[0].line.error(f"cell {unknown[0].codes} is not in the table")
    found = pd.DataFrame({"position": position,
                          "action": [entry.action for entry in lines],
                          "entry": np.arange(len(lines))})[position >= 0]
    status = cells["status"].to_numpy(dtype=object, copy=True)
    value = np.abs(cells["value"].to_numpy(float))
    _check_transitions(found, status, value, lines)
    last = {kind: found[found["action"].isin(actions)].drop_duplicates("position", keep="last")
            for kind, actions in _KINDS.items()}
    lpl, upl = cells["lpl"].to_numpy(float, copy=True), cells["upl"].to_numpy(float, copy=True)
    rows = last["status"]
    at, action = rows["position"].to_numpy(), rows["action"].to_numpy()
    status[at] = np.select([action == "S", action == "U", action == "P"], ["s", "u", "z"], "m")
    level = np.where(action == "U", np.minimum(manual_margin / 100 * value[at], value[at]), 0.0)
    keep_levels = np.isin(action, ["P", "M", "ML"])
    lpl[at] = np.where(keep_levels, lpl[at], level)
    upl[at] = np.where(keep_levels, upl[at], level)
    columns = {"status": status, "lpl": lpl, "upl": upl}
    for kind, targets in (("cost", ("cost",)), ("levels", ("lpl", "upl")),
                          ("bounds", ("lb", "ub"))):
        rows = last[kind]
        numbers = np.array([lines[i].numbers for i in rows["entry"]], dtype=float)
        for column, values in zip(targets, numbers.T, strict=False):
            target = columns.setdefault(column, cells[column].to_numpy(float, copy=True))
            target[rows["position"].to_numpy()] = values
    for column, values in columns.items():
        cells[column] = values
    return AprioriOutcome(table.with_cells(cells), len(found), unknown)


#: The kinds of a-priori lines; within a kind, a later line for the same cell wins.
_KINDS = {"status": ("S", "U", "P", "M", "ML"), "cost": ("C", "W"), "levels": ("PL",),
          "bounds": ("AB",)}


def _check_transitions(found: pd.DataFrame, status: np.ndarray, value: np.ndarray,
                       lines: list[AprioriLine]) -> None:
    """tau-ARGUS forbids making an unsafe cell protected and a protected one unsafe."""
    at, action = found["position"].to_numpy(), found["action"].to_numpy()
    bad = ((action == "P") & (status[at] == "u")) | (
        (action == "U") & (status[at] == "z") & (value[at] > 0))
    if bad.any():
        entry = lines[found["entry"].to_numpy()[bad][0]]
        raise entry.line.error(f"cell {entry.codes}: status {status[at][bad][0]!r} cannot "
                               f"become {entry.action} (tau-ARGUS forbids it)")


def format_hst(table: Table, separator: str = ";", total_codes: tuple[str, ...] | None = None,
               *, bounds: bool = True) -> str:
    """An a-priori file that gives another job this table's statuses, costs, protection
    levels and (``bounds``) finite a-priori bounds.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "v": [3.0, 5.0]}), ["r"], "v")
    >>> t = t.with_columns(status=["s", "s", "u"], lpl=[0, 0, 1], upl=[0, 0, 2])
    >>> print(format_hst(t, bounds=False), end="")
    Total;s
    Total;c;8
    a;s
    a;c;3
    b;u
    b;c;5
    b;pl;1;2
    """
    roots = [table.hierarchies[d].root for d in table.dims]
    totals = total_codes or tuple(roots)
    cells = table.cells
    codes = cells.index.to_frame(index=False).astype(str)
    for position, (root, total) in enumerate(zip(roots, totals, strict=True)):
        column = codes.iloc[:, position]
        codes.iloc[:, position] = column.where(column != root, total)
    key = codes.iloc[:, 0]
    for position in range(1, codes.shape[1]):
        key = key + separator + codes.iloc[:, position]
    key = key.to_numpy(dtype=object) + separator
    status = cells["status"].to_numpy(dtype=object)
    letters = pd.Series(status).map({"s": "s", "u": "u", "z": "p", "m": "m", "x": "m",
                                     "w": "p"}).to_numpy(dtype=object)
    number = {c: format_numbers(cells[c].to_numpy(float)) for c in ("cost", "lpl", "upl",
                                                                     "lb", "ub")}
    finite = np.isfinite(cells["lb"].to_numpy(float)) & np.isfinite(cells["ub"].to_numpy(float))
    blocks = [key + letters, key + "c" + separator + number["cost"],
              np.where(status == "u", key + "pl" + separator + number["lpl"] + separator
                       + number["upl"], ""),
              np.where(finite & bounds, key + "ab" + separator + number["lb"] + separator
                       + number["ub"], "")]
    lines = np.stack(blocks, axis=1).ravel()
    return "\n".join(lines[lines != ""]) + "\n"


def write_hst(table: Table, path: str | Path, separator: str = ";",
              *, bounds: bool = True) -> Path:
    """Write :func:`format_hst` to ``path``; returns the path."""
    return write_text(path, format_hst(table, separator, bounds=bounds), encoding="latin-1")
