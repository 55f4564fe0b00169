"""``<WRITETABLE>``: the output files of tau-ARGUS (manual 4.6.1 and 5.7).

``<WRITETABLE> (TabNo, type, options, "file")`` with type

1. CSV: the table as it looks, last spanning variable across (its codes on the first line);
2. CSV for pivot tables: one line per cell, codes, value; variable names on the first line
   by default; ``AS+`` adds the status (``Safe``, ``Protected``, ``Empty``);
3. code-value: one line per cell, codes and value; ``AS+`` adds the status number (1 safe,
   10 protected, 14 empty, manual 4.6.1);
4. SBS: codes (``HL+``: and their levels), value, frequency, status letter (``V``);
5. intermediate: the ``.tab`` of :mod:`tabsdc.io.argus._tab` with its ``.rda`` and ``.hrc``
   (``SO+``: codes and status only; ``AR+``: also the audit interval of every cell);
6. JJ: :func:`tabsdc.io._jj.write_jj`.

Types 1 to 4 are publishable files, written by :func:`tabsdc._release.write_release`: a hidden
cell shows ``x`` in every field but its codes (value, status, frequency), whatever the
options, so no file of these types holds a hidden value, a primary/secondary distinction, or
a status from which a value follows (tau-ARGUS's "unsafe (zero cell)"). Here they differ from
tau-ARGUS, whose types 2 and 3 with ``AS+`` and whose SBS file write the values, statuses and
dominance percentages of unsafe cells (its type 1 always writes ``x``, and ``AS`` does not
apply to it). Types 5 and 6 are internal files holding every value: the log says so, the
``.rda`` of type 5 starts with a ``//`` comment line saying so, and a JJ file, whose format
allows no comment, is internal by its type.

Options are two letters and ``+`` or ``-``: ``AS`` add status, ``SE`` leave out empty cells,
``FL`` variable names on the first line, ``QU`` codes in quotes (default on), ``HL`` levels
in SBS, ``SO`` status only, ``AR`` audit results. An option that does not apply to the chosen
type is reported and has no effect, as in tau-ARGUS; ``TR+`` (remove trivial levels) and
``HI+`` (holding-level intermediate file) are refused, since their output is not produced
here. Rounded and adjusted tables publish every cell at its new value; ``AS+``, which adds the
original values in tau-ARGUS, has no effect on them (the original values are not published).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import CONFIDENTIAL
from tabsdc._errors import InputError
from tabsdc._release import published_cells, write_release
from tabsdc._table import Table
from tabsdc.audit import audit
from tabsdc.io.argus._ckm import write_ckm_output
from tabsdc.io.argus._tab import format_numbers, write_tab

#: Output types by number.
OUTPUT_TYPES = {1: "CSV", 2: "CSV for pivot table", 3: "code-value", 4: "SBS",
                5: "intermediate", 6: "JJ", 7: "CKM"}
_APPLIES = {"AS": (2, 3), "SE": (2, 3, 5, 7), "FL": (1, 2, 3), "QU": (1, 2, 3, 4, 5, 7),
            "HL": (4,), "SO": (5,), "AR": (5,), "HI": (), "TR": (), "AO": (7,), "AD": (7,),
            "AC": (7,)}

#: Status numbers of published cells in code-value files with ``AS+`` (manual 4.6.1).
STATUS_NUMBERS = {"safe": 1, "protected": 10, "empty": 14}

#: What a hidden cell shows in every field of a publishable output.
SYMBOL = "x"


@dataclass(frozen=True)
class WriteOptions:
    """The option string of ``<WRITETABLE>`` (two letters and ``+``/``-`` each)."""

    flags: tuple[tuple[str, bool], ...] = ()

    def get(self, option: str, default: bool) -> bool:
        for name, on in self.flags:
            if name == option:
                return on
        return default


def parse_write_options(text: str) -> WriteOptions:
    """Parse ``AS+QU-`` style options.

    Raises
    ------
    InputError
        For an unknown option or a missing ``+``/``-``.

    Examples
    --------
    >>> parse_write_options("AS+ QU-").flags
    (('AS', True), ('QU', False))
    """
    compact = text.replace(" ", "").upper()
    flags = []
    for start in range(0, len(compact), 3):
        item = compact[start:start + 3]
        if len(item) != 3 or item[2] not in "+-":
            raise InputError(f"WRITETABLE option {item!r}: two letters and + or - expected")
        if item[:2] not in _APPLIES:
            raise InputError(f"WRITETABLE option {item[:2]!r} unknown; known: "
                             + ", ".join(_APPLIES))
        flags.append((item[:2], item[2] == "+"))
    return WriteOptions(tuple(flags))


def check_write_request(output_type: int, options: WriteOptions, *,
                        adjusted: bool = False) -> list[str]:
    """Check a WRITETABLE request before anything is computed; returns notes for the log
    (options that do not apply to the type). ``adjusted``: the table is rounded or adjusted.

    Raises
    ------
    InputError
        An unknown type, ``TR+``/``HI+``, a rounded or adjusted table as SBS, intermediate
        or JJ file (as in tau-ARGUS).

    Examples
    --------
    >>> check_write_request(6, parse_write_options("AS+"))
    ['option AS+ does not apply to type 6 (JJ) and has no effect']
    """
    if output_type not in OUTPUT_TYPES:
        raise InputError(f"WRITETABLE type {output_type}: known types are "
                         + ", ".join(f"{k} {v}" for k, v in OUTPUT_TYPES.items()))
    notes = []
    for name, on in options.flags:
        if on and name in ("TR", "HI"):
            raise InputError(f"WRITETABLE option {name}+ is not supported: "
                             + ("trivial levels are kept in every output" if name == "TR"
                                else "holding-level intermediate files are not written"))
        if output_type not in _APPLIES[name]:
            notes.append(f"option {name}{'+' if on else '-'} does not apply to type "
                         f"{output_type} ({OUTPUT_TYPES[output_type]}) and has no effect")
    if adjusted and output_type in (4, 5, 6):
        raise InputError(f"WRITETABLE type {output_type} ({OUTPUT_TYPES[output_type]}) is not "
                         "available for a rounded or adjusted table (as in tau-ARGUS)")
    return notes


def write_output(table: Table, path: Path, output_type: int, options: WriteOptions, *,
                 original: Table | None = None, response: str = "value",
                 decimals: int = 0, protected: bool = True) -> list[str]:
    """Write ``table`` in tau-ARGUS output ``output_type``; returns notes for the log.

    ``original`` is the table before rounding or adjustment (then every cell is published).
    ``protected`` says whether the table's protection passed its check; a publishable
    output of a table that is not protected gets a note that it must not be published.

    Raises
    ------
    InputError
        An unknown type, ``TR+``/``HI+``, SBS without the largest contributions, a
        rounded or adjusted table as SBS, intermediate or JJ file (as in tau-ARGUS).
    """
    notes = check_write_request(output_type, options, adjusted=original is not None)
    if output_type == 4 and "x1" not in table.cells.columns:
        raise InputError("SBS output needs the largest contributions of each cell (a table "
                         "from microdata, or <MAXSCORE> columns in tabular input)")
    path.parent.mkdir(parents=True, exist_ok=True)
    if output_type == 7:  # the cell key method (tabsdc.io.argus._ckm)
        return notes + write_ckm_output(table, original if original is not None else table,
                                        path, options, response=response, decimals=decimals)
    if output_type == 6:
        table.to_jj(path, status_map={"x": "m", "w": "z"})
    elif output_type == 5:
        _intermediate(table, path, options, response, decimals)
    else:
        if original is not None and output_type in (2, 3) and options.get("AS", False):
            notes.append("option AS+ adds no column to a rounded or adjusted table: its "
                         "original values are not published")
        if not protected:
            notes.append("the table is not protected (no SUPPRESS, or its check failed): "
                         "only its primary cells are hidden; do not publish this file")
        _publishable(table, path, output_type, options, original is not None, response,
                     decimals)
        return notes
    return [*notes, f"{path.name}: {CONFIDENTIAL} (an internal file, not for publication)"]


def _publishable(table: Table, path: Path, output_type: int, options: WriteOptions,
                 every_cell: bool, response: str, decimals: int) -> None:
    """Types 1 to 4 through the one door: the fields of the published cells only."""
    cells = np.flatnonzero(~_empty(table)) \
        if output_type in (2, 3) and options.get("SE", False) else None
    codes = _codes(table, options, levels=output_type == 4 and options.get("HL", False))
    if cells is not None:
        codes = codes.iloc[cells]
    chosen = published_cells(table.with_columns(status="s") if every_cell else table, cells)
    at = chosen.to_numpy()
    fields = {response: _numbers(table.values[at], decimals)}
    if output_type in (2, 3) and options.get("AS", False) and not every_cell:
        fields["status"] = (_status_text if output_type == 2 else _status_numbers)(table)[at]
    if output_type == 4:
        fields["freq"] = format_numbers(np.nan_to_num(table.cells["freq"].to_numpy(float)[at]))
        fields["status"] = np.full(len(at), "V", dtype=object)
    # type 1: the printed table, with the names of the dimensions down only with FL+
    across = table.dims[-1] if output_type == 1 and len(table.dims) > 1 else None
    blank = across is not None and not options.get("FL", False)
    write_release(path, codes, pd.DataFrame(fields, index=chosen.index), symbol=SYMBOL,
                  across=across, header=options.get("FL", output_type == 2) or across is not None,
                  names=[""] * (len(table.dims) - 1) if blank else None,
                  quoting=False, encoding="latin-1")


# -- the formats ----------------------------------------------------------------------------
def _codes(table: Table, options: WriteOptions, levels: bool = False) -> pd.DataFrame:
    """The codes of every cell (quoted with ``QU+``, the default), and with ``levels`` each
    code's level in its hierarchy (SBS with ``HL+``)."""
    frame = table.cells.index.to_frame(index=False).astype(str)
    frame.columns = list(table.dims)
    if options.get("QU", True):
        frame = '"' + frame + '"'
    if levels:
        for dim in table.dims:
            hierarchy = table.hierarchies[dim]
            depth = {code: hierarchy.depth(code) for code in hierarchy.codes}
            frame[f"{dim}_level"] = table.cells.index.get_level_values(dim).map(depth) \
                .astype(str)
    return frame


def _numbers(values: np.ndarray, decimals: int) -> np.ndarray:
    if decimals > 0:
        return np.char.mod(f"%.{decimals}f", values).astype(object)
    return format_numbers(values)


def _empty(table: Table) -> np.ndarray:
    """Cells tau-ARGUS calls empty: value 0, no contributors, published as they are."""
    cells = table.cells
    return (cells["value"].to_numpy(float) == 0) & (np.nan_to_num(cells["freq"].to_numpy(float))
                                                     == 0) & (cells["status"] == "z").to_numpy()


def _status_text(table: Table) -> np.ndarray:
    """Status text of published cells (a hidden cell's fields are the symbol)."""
    text = np.where((table.cells["status"] == "z").to_numpy(), "Protected", "Safe")
    return np.where(_empty(table), "Empty", text).astype(object)


def _status_numbers(table: Table) -> np.ndarray:
    """Status numbers of published cells (manual 4.6.1)."""
    number = np.where((table.cells["status"] == "z").to_numpy(),
                      STATUS_NUMBERS["protected"], STATUS_NUMBERS["safe"])
    return np.where(_empty(table), STATUS_NUMBERS["empty"], number).astype(str).astype(object)


def _intermediate(table: Table, path: Path, options: WriteOptions, response: str,
                  decimals: int) -> None:
    if options.get("SE", False):
        raise InputError("WRITETABLE type 5 with SE+: an intermediate file keeps every cell "
                         "so that it can be read back as a table")
    extra = None
    if options.get("AR", False):
        frame = audit(table).frame
        lower = table.cells["value"].to_numpy(float).copy()
        upper = lower.copy()
        position = table.cells.index.get_indexer(frame.index)
        lower[position], upper[position] = frame["lower"], frame["upper"]
        extra = {"audit_lower": lower, "audit_upper": upper}
    write_tab(table, path, response=response, decimals=decimals,
              status_only=options.get("SO", False), extra=extra)
