"""``<WRITETABLE>``: the output files of tau-ARGUS (manual 4.6.1 and 5.7).

``<WRITETABLE> (TabNo, type, options, "file")`` with type

1. CSV: the table as it looks, last spanning variable across (its codes on the first line),
   hidden cells ``x``;
2. CSV for pivot tables: one line per cell, codes, value (``x`` if hidden), status text
   with ``AS+``; variable names on the first line by default;
3. code-value: one line per cell, codes and value (``x`` if hidden), with ``AS+`` the value
   and the status number (1 safe ... 14 empty, manual 4.6.1);
4. SBS: codes (``HL+``: and their levels), value, frequency, status letter (``A`` frequency,
   ``B`` dominance by one, ``C`` by two contributors, ``D`` secondary, ``V`` safe) and the
   dominance percentage (largest two contributions over the cell total);
5. intermediate: the ``.tab`` of :mod:`tabsdc.io.argus.tab` with its ``.rda`` and ``.hrc``
   (``SO+``: codes and status only; ``AR+``: also the audit interval of every cell);
6. JJ: :func:`tabsdc.io.jj.write_jj`.

Options are two letters and ``+`` or ``-``: ``AS`` add status, ``SE`` leave out empty cells,
``FL`` variable names on the first line, ``QU`` codes in quotes (default on), ``HL`` levels
in SBS, ``SO`` status only, ``AR`` audit results. An option that does not apply to the chosen
type is reported and has no effect, as in tau-ARGUS; ``TR+`` (remove trivial levels) and
``HI+`` (holding-level intermediate file) are refused, since their output is not produced
here. Rounded and adjusted tables publish every cell; ``AS+`` adds the original value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tabsdc.audit import audit
from tabsdc.errors import InputError
from tabsdc.io.argus.ckm import write_ckm_output
from tabsdc.io.argus.tab import format_numbers, write_tab
from tabsdc.table import HIDDEN_STATUSES, Table

__all__ = ["WriteOptions", "parse_write_options", "check_write_request", "write_output",
           "STATUS_NUMBERS", "OUTPUT_TYPES"]

#: Output types by number.
OUTPUT_TYPES = {1: "CSV", 2: "CSV for pivot table", 3: "code-value", 4: "SBS",
                5: "intermediate", 6: "JJ", 7: "CKM"}
_APPLIES = {"AS": (1, 2, 3), "SE": (2, 3, 5, 7), "FL": (1, 2, 3), "QU": (1, 2, 3, 4, 5, 7),
            "HL": (4,), "SO": (5,), "AR": (5,), "HI": (), "TR": (), "AO": (7,), "AD": (7,),
            "AC": (7,)}

#: Status numbers of code-value files with ``AS+`` (manual 4.6.1).
STATUS_NUMBERS = {"safe": 1, "safe (manual)": 2, "unsafe": 3, "unsafe (request)": 4,
                  "unsafe (freq)": 5, "unsafe (zero cell)": 6, "unsafe (manual)": 9,
                  "protected": 10, "secondary": 11, "empty": 14}


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
                 decimals: int = 0) -> list[str]:
    """Write ``table`` in tau-ARGUS output ``output_type``; returns notes for the log.

    ``original`` is the table before rounding or adjustment (then every cell is published).

    Raises
    ------
    InputError
        An unknown type, ``TR+``/``HI+``, SBS without the largest contributions, a
        rounded or adjusted table as SBS, intermediate or JJ file (as in tau-ARGUS).
    """
    notes = check_write_request(output_type, options, adjusted=original is not None)
    path.parent.mkdir(parents=True, exist_ok=True)
    if output_type == 7:  # the cell key method (tabsdc.io.argus.ckm)
        return notes + write_ckm_output(table, original if original is not None else table,
                                        path, options, response=response, decimals=decimals)
    if output_type == 6:
        table.to_jj(path, status_map={"x": "m", "w": "z"})
    elif output_type == 5:
        _intermediate(table, path, options, response, decimals)
    else:
        frame = {1: _csv, 2: _pivot, 3: _code_value, 4: _sbs}[output_type](
            table, options, original, response, decimals)
        rows = frame.astype(str).to_numpy()
        names = [str(c) for c in frame.columns]
        if output_type == 1 and len(table.dims) > 1 and not options.get("FL", False):
            names[: len(table.dims) - 1] = [""] * (len(table.dims) - 1)
        header = options.get("FL", output_type == 2) or output_type == 1 and len(table.dims) > 1
        lines = [",".join(names)] if header else []
        lines += [",".join(row) for row in rows]
        path.write_text("\n".join(lines) + "\n", encoding="latin-1")
    return notes


# -- the formats ----------------------------------------------------------------------------
def _codes(table: Table, options: WriteOptions) -> pd.DataFrame:
    frame = table.cells.index.to_frame(index=False).astype(str)
    frame.columns = list(table.dims)
    if options.get("QU", True):
        frame = '"' + frame + '"'
    return frame


def _published(table: Table, original: Table | None, decimals: int,
               with_status: bool) -> np.ndarray:
    text = _numbers(table.values, decimals)
    hidden = table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    if original is None and not with_status:
        text = np.where(hidden, "x", text)
    return text


def _numbers(values: np.ndarray, decimals: int) -> np.ndarray:
    if decimals > 0:
        return np.char.mod(f"%.{decimals}f", values).astype(object)
    return format_numbers(values)


def _csv(table: Table, options: WriteOptions, original: Table | None, response: str,
         decimals: int) -> pd.DataFrame:
    text = _published(table, original, decimals, options.get("AS", False))
    codes = _codes(table, options)
    if len(table.dims) == 1:
        return codes.assign(**{response: text})
    across = table.dims[-1]
    down = list(table.dims[:-1])
    long = codes.assign(_text=text)
    wide = long.pivot_table(index=down, columns=across, values="_text", aggfunc="first",
                            sort=False)
    order = pd.unique(codes[across])
    return wide[order].reset_index().rename_axis(columns=None)


def _status_text(table: Table) -> np.ndarray:
    names = {"s": "Safe", "u": "Unsafe", "m": "Secondary", "x": "Secondary",
             "z": "Protected", "w": "Protected"}
    text = table.cells["status"].map(names).to_numpy(dtype=object)
    return np.where(_empty(table), "Empty", text)


def _empty(table: Table) -> np.ndarray:
    cells = table.cells
    return (cells["value"].to_numpy(float) == 0) & (np.nan_to_num(cells["freq"].to_numpy(float))
                                                     == 0) & (cells["status"] == "z").to_numpy()


def _status_numbers(table: Table) -> np.ndarray:
    cells = table.cells
    status = cells["status"].to_numpy(dtype=object)
    rules = cells["rules"].astype(str).to_numpy() if "rules" in cells.columns \
        else np.full(len(cells), "")
    unsafe = np.select(
        [np.char.find(rules.astype(str), "freq") >= 0,
         np.char.find(rules.astype(str), "request") >= 0,
         np.char.find(rules.astype(str), "zero") >= 0, rules == ""],
        [STATUS_NUMBERS["unsafe (freq)"], STATUS_NUMBERS["unsafe (request)"],
         STATUS_NUMBERS["unsafe (zero cell)"], STATUS_NUMBERS["unsafe (manual)"]],
        STATUS_NUMBERS["unsafe"])
    number = np.select(
        [status == "u", np.isin(status, ["m", "x"]), np.isin(status, ["z", "w"])],
        [unsafe, STATUS_NUMBERS["secondary"], STATUS_NUMBERS["protected"]],
        STATUS_NUMBERS["safe"])
    return np.where(_empty(table), STATUS_NUMBERS["empty"], number)


def _keep(table: Table, frame: pd.DataFrame, options: WriteOptions) -> pd.DataFrame:
    return frame[~_empty(table)] if options.get("SE", False) else frame


def _one_line_per_cell(table: Table, options: WriteOptions, original: Table | None,
                       response: str, decimals: int, status: np.ndarray) -> pd.DataFrame:
    """Types 2 and 3: codes and published value; with ``AS+`` the value and ``status``
    (text for pivot tables, numbers for code-value files)."""
    with_status = options.get("AS", False)
    frame = _codes(table, options).assign(**{response: _published(table, original, decimals,
                                                                  with_status)})
    if with_status:
        frame = _with_status(frame, table, original, decimals, status)
    return _keep(table, frame, options)


def _pivot(table: Table, options: WriteOptions, original: Table | None, response: str,
           decimals: int) -> pd.DataFrame:
    return _one_line_per_cell(table, options, original, response, decimals,
                              _status_text(table))


def _code_value(table: Table, options: WriteOptions, original: Table | None, response: str,
                decimals: int) -> pd.DataFrame:
    return _one_line_per_cell(table, options, original, response, decimals,
                              _status_numbers(table))


def _with_status(frame: pd.DataFrame, table: Table, original: Table | None, decimals: int,
                 status: np.ndarray) -> pd.DataFrame:
    if original is not None:
        return frame.assign(original=_numbers(original.values, decimals))
    return frame.assign(status=status)


def _sbs(table: Table, options: WriteOptions, original: Table | None, response: str,
         decimals: int) -> pd.DataFrame:
    cells = table.cells
    if "x1" not in cells.columns:
        raise InputError("SBS output needs the largest contributions of each cell (a table "
                         "from microdata, or <MAXSCORE> columns in tabular input)")
    frame = _codes(table, options)
    if options.get("HL", False):
        for dim in table.dims:
            hierarchy = table.hierarchies[dim]
            depth = {code: hierarchy.depth(code) for code in hierarchy.codes}
            frame[f"{dim}_level"] = table.cells.index.get_level_values(dim).map(depth)
    value = cells["value"].to_numpy(float)
    top = cells["x1"].to_numpy(float) + (np.nan_to_num(cells["x2"].to_numpy(float))
                                         if "x2" in cells.columns else 0.0)
    share = np.divide(100 * top, np.abs(value), out=np.zeros_like(value), where=value != 0)
    rules = cells["rules"].astype(str).to_numpy() if "rules" in cells.columns \
        else np.full(len(cells), "")
    status = cells["status"].to_numpy(dtype=object)
    letter = np.select(
        [(status == "u") & (np.char.find(rules.astype(str), "freq") >= 0),
         (status == "u") & (np.char.find(rules.astype(str), "(1,") >= 0),
         status == "u", np.isin(status, ["m", "x"])],
        ["A", "B", "C", "D"], "V")
    return frame.assign(**{response: _numbers(value, decimals),
                           "freq": format_numbers(np.nan_to_num(cells["freq"].to_numpy(float))),
                           "status": letter, "dominance": np.char.mod("%.2f", share)})


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
