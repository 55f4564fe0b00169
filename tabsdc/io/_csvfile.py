"""CSV files as the toolkit reads them: every field as text, every error naming the file.

Every CSV a command or the app reads (records, interior cells, cells to round, parent/child
hierarchies, microdata to mask) goes through :func:`read_csv_file`:

* the file must exist, be a file, not be empty and be UTF-8 (a byte-order mark is allowed);
  otherwise the error names the file and the line of the first byte that is not UTF-8;
* every field is read as text (``dtype=str, keep_default_na=False``): codes keep their
  leading zeros, and ``NA``, ``None`` or ``null`` are codes, not missing values. Only an
  empty field is missing. The columns named in ``numbers`` are parsed as numbers by pandas
  (an empty field is NaN, which the table builders refuse naming the line); a column with a
  word in it stays text, so that the builders' error shows the word;
* each record is indexed by the line of the file it starts on (the header is line 1; blank
  lines are not records, quoted line breaks are counted), so that every later error names
  the line;
* a header naming a column twice, a record with more fields than the header and a quote
  never closed are refused naming the file, the line and the column;
* the first line of an internal file written by the toolkit,
  ``# confidential: contains unpublished values`` (:data:`sdcreport._files.CSV_MARK`), is
  skipped (and counted: lines keep their numbers in the file).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "records.csv"
>>> _ = path.write_text("region,turnover\\n01,5\\n\\nNA,7\\n")
>>> frame = read_csv_file(path, numbers=["turnover"])
>>> frame["region"].tolist(), frame["turnover"].tolist(), frame.index.tolist()
(['01', 'NA'], [5.0, 7.0], [2, 4])
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import confidential_lines
from tabsdc._errors import InputError

_FIELDS_ERROR = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_QUOTE_ERROR = re.compile(r"EOF inside string starting at row (\d+)")


def input_file(path: Path) -> Path:
    """``path``, checked to be an existing file (not a folder).

    Raises
    ------
    InputError
        The file does not exist or is a folder.
    """
    if path.is_dir():
        raise InputError(f"{path} is a folder; give a file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def read_csv_text(path: Path, name: str | None = None, encoding: str = "utf-8-sig") -> str:
    """The text of a CSV file (UTF-8, with or without a byte-order mark, unless another
    ``encoding`` is given); ``name`` is the file's name in messages (default: ``path``).

    Raises
    ------
    InputError
        The file is missing, a folder, empty, or not UTF-8 (the line of the first bad byte).
    """
    shown = name or path
    data = input_file(path).read_bytes()
    if not data.strip():
        raise InputError(f"{shown} is empty")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        written = "UTF-8" if encoding.startswith("utf-8") else encoding
        raise InputError(f"{shown}: line {line} is not {written} text (byte "
                         f"{data[error.start]:#04x}); save the file as UTF-8") from None


def read_csv_file(
    path: Path, *, numbers: Sequence[str] = (), sep: str = ",", name: str | None = None,
    encoding: str = "utf-8-sig",
) -> pd.DataFrame:
    """The records of a CSV file, every field as text, indexed by ``line`` (see the module
    text).

    Parameters
    ----------
    path : Path
        The file.
    numbers : sequence of str
        Columns to read as numbers where every non-empty field is one (an empty field is
        NaN; a column with a word in it stays text); columns not in the file are ignored.
    sep : str
        The field separator.
    name : str, optional
        The file's name in messages (an uploaded file saved under another name).
    encoding : str
        The file's encoding (UTF-8 by default; the web app detects it,
        :func:`tabsdc.ui._dialect.detect_dialect`).

    Raises
    ------
    InputError
        The file is missing, a folder, empty or not UTF-8; it has a header but no records;
        its header names a column twice; a record has more fields than the header or a
        quote is never closed (naming the line).
    """
    shown = name or path
    text = read_csv_text(path, name, encoding).replace("\r\n", "\n").replace("\r", "\n")
    marked = confidential_lines(text)
    text = text.split("\n", 1)[1] if marked else text
    header = next(csv.reader(io.StringIO(text), delimiter=sep), [])
    refuse_duplicate_columns(header, shown)
    numbers = [c for c in numbers if c in header]
    try:  # numbers parsed by pandas (a column with a word in it stays text)
        frame = pd.read_csv(io.StringIO(text), sep=sep, keep_default_na=False,
                            dtype={c: str for c in header if c not in numbers},
                            na_values=dict.fromkeys(numbers, [""]), skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"{shown} is empty") from None
    except pd.errors.ParserError as error:
        raise InputError(f"{shown}: {_parser_problem(str(error), marked)}") from None
    frame.index = pd.Index(_record_lines(frame, text), name="line")
    frame = frame[~_blank(frame, text)]
    frame.index = pd.Index(frame.index + marked, name="line")
    if frame.empty:
        raise InputError(f"{shown} has a header but no records")
    return frame


def with_numbers(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` (those it has) as numbers when every non-empty
    field of the column is one (empty fields become NaN); other columns unchanged.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["1", "", "2.5"], "b": ["1", "ten", ""]})
    >>> converted = with_numbers(frame, ["a", "b"])
    >>> converted["a"].tolist(), converted["b"].tolist()
    ([1.0, nan, 2.5], ['1', 'ten', ''])
    """
    frame = frame.copy()
    for column in columns:
        if column not in frame.columns:
            continue
        text = frame[column].astype(str).str.strip()
        number = pd.to_numeric(text.where(text != ""), errors="coerce")
        if not (number.isna() & (text != "")).any():
            frame[column] = number
    return frame


def refuse_duplicate_columns(header: Sequence[object], file: object) -> None:
    """Refuse a header that names a column twice (pandas would rename the second copy and
    the first would be used silently).

    Raises
    ------
    InputError
        Naming the column, its two positions and the file.

    Examples
    --------
    >>> refuse_duplicate_columns(["region", "value", "region"], "x.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    tabsdc.InputError: x.csv: line 1: the column 'region' appears twice (columns 1 ...
    """
    seen: dict[str, int] = {}
    for position, column in enumerate(map(str, header), 1):
        if column in seen:
            raise InputError(f"{file}: line 1: the column {column!r} appears twice (columns "
                             f"{seen[column]} and {position}); give each column its own name")
        seen[column] = position


def _parser_problem(message: str, skipped: int = 0) -> str:
    """pandas' tokenizer message in the toolkit's words, with the line (of the file, whose
    first ``skipped`` lines pandas did not see)."""
    fields = _FIELDS_ERROR.search(message)
    if fields:
        expected, line, saw = fields.groups()
        return (f"line {int(line) + skipped}: {saw} fields where the header has {expected} "
                "(a separator too many, or a field with a separator that is not quoted)")
    quote = _QUOTE_ERROR.search(message)
    if quote:
        return (f"line {int(quote.group(1)) + 1 + skipped}: a quote opened on this line or a "
                "later one is never closed")
    return f"not a valid CSV file: {message.strip()}"


def _record_lines(frame: pd.DataFrame, text: str) -> np.ndarray:
    """The line each record starts on: the header is line 1, each record takes one line
    plus the line breaks inside its quoted fields (none without a quote in the file)."""
    breaks = np.zeros(len(frame), dtype=np.int64)
    quoted = '"' in text
    for column in frame.columns[[quoted and pd.api.types.is_string_dtype(t)
                                 for t in frame.dtypes]]:
        breaks += frame[column].str.count("\n").fillna(0).to_numpy(np.int64)
    return 2 + np.arange(len(frame)) + np.concatenate([[0], np.cumsum(breaks)[:-1]])


def _blank(frame: pd.DataFrame, text: str) -> np.ndarray:
    """Records that are blank lines of the file (a line ``,,`` is a record of empty fields,
    not a blank line)."""
    empty = (frame.isna() | (frame == "")).all(axis=1).to_numpy()
    if not empty.any():
        return empty
    lines = text.split("\n")
    blank = empty.copy()
    blank[empty] = [not lines[line - 1].strip() for line in frame.index[empty]]
    return blank
