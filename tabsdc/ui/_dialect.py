"""How a CSV file is written: its encoding, separator, decimal mark and thousands separator.

Spreadsheets save CSV files in the conventions of their language: a German or French
Excel writes ``;`` between fields, a decimal comma (``1234,5``), often a thousands
separator (``1.234,5``, ``1 234,5``) and, on Windows, the Windows-1252 encoding
(``Île-de-France`` as the byte 0xCE). :func:`detect_dialect` reads the start of the file
and decides each of these from what it sees; :meth:`CsvDialect.read_options` gives the
keywords of :func:`pandas.read_csv` that read the file so, and
:meth:`CsvDialect.describe` says in words what was detected.

The rules, on the first lines of the file:

* encoding: UTF-8 (with or without its byte-order mark) when the bytes are UTF-8, UTF-16
  when they start with its byte-order mark, else Windows-1252 (Latin-1 where a byte is not
  Windows-1252);
* separator: of ``;``, ``,``, tab and ``|``, the one that splits every line into the same
  number of fields, the most fields first;
* decimal mark: a comma when the separator is not a comma and more fields are numbers
  with a decimal comma than with a decimal point (``12,5``; ``1.234,5``), or as many and
  some field has points between groups of three digits (``1.234.567``); fields such as
  ``1,234`` or ``1.234``, which could be either, do not count;
* thousands separator: ``.``, a space or a no-break space between groups of three digits
  when the decimal mark is a comma (``1.234.567``, ``1 234,5``); ``,`` when the decimal mark
  is a point and the separator is not a comma (``1,234,567.5``).
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: Bytes read to decide.
SAMPLE_BYTES = 1 << 20
#: Lines looked at for the separator and the numbers.
SAMPLE_LINES = 200
SEPARATORS = (";", ",", "\t", "|")
_NAMES = {";": "semicolon", ",": "comma", "\t": "tab", "|": "vertical bar", ".": "point",
          " ": "space", "\u00a0": "no-break space", "\u202f": "narrow no-break space",
          "'": "apostrophe"}
_ENCODINGS = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8 (with byte-order mark)",
              "utf-16": "UTF-16", "cp1252": "Windows-1252 (Western European)",
              "latin-1": "Latin-1"}
_SPACES = " \u00a0\u202f"
# unambiguous decimals: not exactly three digits after the mark, a leading 0, four or more
# digits before the mark, or grouped thousands before it
_DECIMAL_COMMA = re.compile(r"[+-]?(\d+,(\d{1,2}|\d{4,})|0,\d+|\d{4,},\d+|"
                            r"[1-9]\d{0,2}([.'" + _SPACES + r"]\d{3})+,\d+)")
_DECIMAL_POINT = re.compile(r"[+-]?(\d+\.(\d{1,2}|\d{4,})|0\.\d+|\d{4,}\.\d+|"
                            r"[1-9]\d{0,2}(,\d{3})+\.\d+)")
_GROUPED = {mark: re.compile(r"[+-]?[1-9]\d{0,2}(" + re.escape(mark) + r"\d{3})+([.,]\d+)?")
            for mark in (".", ",", " ", "\u00a0", "\u202f", "'")}


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV file is written (see the module's rules).

    Examples
    --------
    >>> print(CsvDialect("cp1252", ";", ",", ".").describe())  # doctest: +NORMALIZE_WHITESPACE
    fields separated by semicolon, decimal comma, thousands separated by point, encoding
    Windows-1252 (Western European)
    """

    encoding: str = "utf-8"
    sep: str = ","
    decimal: str = "."
    thousands: str | None = None

    def read_options(self) -> dict[str, Any]:
        """The keywords of :func:`pandas.read_csv` for this dialect (its Python engine when
        the thousands separator is not an ASCII character: the C engine takes one byte)."""
        options = {"sep": self.sep, "decimal": self.decimal, "thousands": self.thousands,
                   "encoding": self.encoding}
        if self.thousands is not None and not self.thousands.isascii():
            options["engine"] = "python"
        return options

    def plain_numbers(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (fields as text) with numbers written as Python writes them: the
        thousands separator removed, the decimal mark a point (the frame itself in the
        default dialect).

        Examples
        --------
        >>> frame = pd.DataFrame({"v": ["1.234,5", "7"]})
        >>> CsvDialect("cp1252", ";", ",", ".").plain_numbers(frame)["v"].tolist()
        ['1234.5', '7']
        """
        if self.decimal == "." and self.thousands is None:
            return frame
        plain = frame.astype(str)
        for column in plain.columns:
            text = plain[column]
            if self.thousands is not None:
                text = text.str.replace(self.thousands, "", regex=False)
            plain[column] = text.str.replace(self.decimal, ".", regex=False)
        return plain

    def describe(self) -> str:
        """What was detected, in words."""
        thousands = ("no thousands separator" if self.thousands is None else
                     f"thousands separated by {_NAMES.get(self.thousands, self.thousands)}")
        mark = "decimal comma" if self.decimal == "," else "decimal point"
        return (f"fields separated by {_NAMES.get(self.sep, repr(self.sep))}, {mark}, "
                f"{thousands}, encoding {_ENCODINGS.get(self.encoding, self.encoding)}")


def detect_dialect(path: str | Path) -> CsvDialect:
    """The dialect of the CSV file at ``path``, from its first bytes (module rules).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "de.csv").write_bytes(
    ...     "Region;Umsatz\\nÎle-de-France;1.234.567,5\\nBayern;12,25\\n".encode("cp1252"))
    >>> detect_dialect(folder / "de.csv")
    CsvDialect(encoding='cp1252', sep=';', decimal=',', thousands='.')
    """
    with open(path, "rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
    encoding = _encoding(sample)
    text = _decoded(sample, encoding)
    lines = [line for line in text.splitlines()[:SAMPLE_LINES + 1] if line.strip()]
    sep = _separator(lines)
    fields = [field.strip() for row in csv.reader(io.StringIO("\n".join(lines[1:])),
                                                  delimiter=sep) for field in row]
    comma = sum(bool(_DECIMAL_COMMA.fullmatch(f)) for f in fields)
    point = sum(bool(_DECIMAL_POINT.fullmatch(f)) for f in fields)
    decimal = "," if sep != "," and (comma > point or (comma == point and _grouped(
        fields, "."))) else "."
    if decimal == ",":
        marks = [".", "\u00a0", "\u202f", " ", "'"]
    else:
        marks = [","] if sep != "," else []
    thousands = next((mark for mark in marks if mark != sep and _grouped(fields, mark)), None)
    return CsvDialect(encoding, sep, decimal, thousands)


def _encoding(sample: bytes) -> str:
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    for encoding in ("utf-8", "cp1252"):
        try:
            _decoded(sample, encoding, strict=True)
        except UnicodeDecodeError:
            continue
        return encoding
    return "latin-1"


def _decoded(sample: bytes, encoding: str, strict: bool = False) -> str:
    """The sample as text; a character cut at the sample's end is not an error."""
    decoder = codecs.getincrementaldecoder(encoding)("strict" if strict else "replace")
    return decoder.decode(sample, final=len(sample) < SAMPLE_BYTES)


def _separator(lines: list[str]) -> str:
    """The separator that gives every line the same number of fields (the most fields);
    else the one most frequent in the header."""
    best, best_fields = None, 1
    for sep in SEPARATORS:
        counts = {len(row) for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=sep)}
        if len(counts) == 1 and (fields := counts.pop()) > best_fields:
            best, best_fields = sep, fields
    if best is not None:
        return best
    header = lines[0] if lines else ""
    return max(SEPARATORS, key=header.count) if any(s in header for s in SEPARATORS) else ","


def _grouped(fields: list[str], mark: str) -> bool:
    """Whether some field is a number with groups of three digits separated by ``mark``."""
    pattern = _GROUPED[mark]
    return any(pattern.fullmatch(f) for f in fields if mark in f)
