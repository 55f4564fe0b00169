"""Uploaded files of the web app: what they may be, how they are read, how they are shown.

An upload is a CSV, Parquet or Excel file of microdata (one row per contribution) or of
interior cells (one row per cell), or a tau-ARGUS / sdcTable JJ file (a whole table). A data
file is kept twice: as pandas reads it (numbers parsed exactly as :func:`pandas.read_csv`
does, so values agree with a script's) and as text (codes such as ``"01"`` keep their
leading zeros). Dimension and hierarchy columns are taken from the text copy, the response,
weight and holding columns from the parsed one. A CSV file is read in the dialect
:func:`~tabsdc.ui._dialect.detect_dialect` finds (separator, decimal mark, thousands
separator, encoding), and the page says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tabsdc._errors import InputError, TabSDCError
from tabsdc._hierarchy import Hierarchy
from tabsdc._table import Table
from tabsdc.io._csvfile import read_csv_file, refuse_duplicate_columns, with_numbers
from tabsdc.ui._dialect import CsvDialect, detect_dialect

#: Data files the app reads, by suffix.
DATA_SUFFIXES = (".csv", ".txt", ".parquet", ".xlsx")
#: Whole tables the app reads, by suffix.
TABLE_SUFFIXES = (".jj",)
#: Rows shown in the preview.
PREVIEW_ROWS = 12


@dataclass(frozen=True)
class Dataset:
    """An uploaded data file: ``numbers`` as pandas parses it, ``text`` with every cell as a
    string (missing values as empty strings); ``dialect`` how a CSV file is written (None
    for Parquet and Excel files)."""

    name: str
    numbers: pd.DataFrame
    text: pd.DataFrame
    dialect: CsvDialect | None = None

    def column_types(self) -> list[dict[str, object]]:
        """One entry per column: name, ``number`` or ``text``, distinct values, missing
        (empty) values, values of spaces only, a few examples, what its missing or blank
        codes mean if it is chosen as a dimension, and for a text column whose values are
        mostly numbers, why it is not numeric."""
        rows = []
        for column in self.numbers.columns:
            series = self.numbers[column]
            numeric = pd.api.types.is_numeric_dtype(series)
            rows.append({
                "name": str(column),
                "type": "number" if numeric else "text",
                "distinct": int(series.nunique()),
                "missing": int(self.text[column].eq("").sum()),
                "spaces": int(self._spaces_only(column).sum()),
                "examples": ", ".join(self.text[column].drop_duplicates().head(4)),
                "code_warning": self.code_warning(column),
                "note": "" if numeric else self._not_numeric(column, mostly_numbers=True),
            })
        return rows

    def preview(self, rows: int = PREVIEW_ROWS) -> dict[str, object]:
        """The first ``rows`` rows as text, with the column types and how the file was
        read (for the page)."""
        head = self.text.head(rows)
        return {"name": self.name, "rows": len(self.text), "columns": self.column_types(),
                "head": head.to_numpy().tolist(), "header": [str(c) for c in head.columns],
                "read_as": None if self.dialect is None else self.dialect.describe()}

    def codes(self, column: str) -> pd.Series:
        """A code column as text; raises :class:`InputError` naming an unknown column."""
        self.require(column)
        return self.text[column]

    def numeric(self, column: str) -> pd.Series:
        """A numeric column (an empty field is NaN); raises :class:`InputError` when it
        holds text, saying how much and where."""
        self.require(column)
        series = self.numbers[column]
        if not pd.api.types.is_numeric_dtype(series):
            raise InputError(f"{self.name}: column {column!r} must hold numbers; "
                             f"{self._not_numeric(column)}")
        return series

    def filled(self, column: str) -> pd.Series:
        """A numeric column with a value on every row; raises :class:`InputError` naming
        the first line without one (and how many more)."""
        series = self.numeric(column)
        missing = series.isna().to_numpy()
        if missing.any():
            more = int(missing.sum()) - 1
            raise InputError(f"{self.name}: column {column!r} has no value on "
                             f"{self._line(int(missing.argmax()))}"
                             + (f" (and on {more} more rows)" if more else "")
                             + "; fill in the values, or remove these rows")
        return series

    def code_warning(self, column: str) -> str:
        """What the missing codes and the codes of spaces only of ``column`` mean when it
        is a dimension (empty when it has none): a row without a code cannot be tabulated;
        a code of spaces only is a category of its own."""
        self.require(column)
        found = [(int(rows.sum()), what, self._line(int(rows.argmax())), advice)
                 for rows, what, advice in (
                     (self.text[column].eq("").to_numpy(), "no code",
                      "a table cannot be built with rows without a code: fill in the codes, "
                      "or remove these rows"),
                     (self._spaces_only(column).to_numpy(), "a code of spaces only",
                      "codes of spaces only form a category of their own, shown as "
                      "(blank): fill in the codes if they belong elsewhere"))
                 if rows.any()]
        if not found:
            return ""
        counts = " and ".join(f"{n} rows have {what} (the first on {line})"
                              for n, what, line, _ in found)
        return f"{column}: {counts}; " + "; ".join(advice for *_, advice in found)

    def code_warnings(self, dims: list[str]) -> list[str]:
        """:meth:`code_warning` of each dimension that has one."""
        return [warning for dim in dims if (warning := self.code_warning(dim))]

    def require(self, column: str) -> None:
        if column not in self.numbers.columns:
            raise InputError(f"{self.name}: no column {column!r} (columns: "
                             f"{', '.join(map(str, self.numbers.columns))})")

    def _line(self, row: int) -> str:
        """Where data row ``row`` (from 0) is in the file: the line of a CSV file (its
        records are indexed by line), the line of an Excel sheet (the header is line 1),
        a row of a Parquet file."""
        if self.text.index.name == "line":
            return f"line {self.text.index[row]}"
        if Path(self.name).suffix.lower() == ".parquet":
            return f"row {row + 1}"
        return f"line {row + 2}"

    def _spaces_only(self, column: str) -> pd.Series:
        text = self.text[column]
        return text.ne("") & text.str.strip().eq("")

    def _not_numeric(self, column: str, mostly_numbers: bool = False) -> str:
        """Why a text column is not read as numbers: how many of its values are not
        numbers (in the file's dialect), and the first one. With ``mostly_numbers``, only
        for a column in which at least half the values are numbers (a column of codes
        needs no explanation)."""
        plain = self.text[[column]] if self.dialect is None else self.dialect.plain_numbers(
            self.text[[column]])
        text = plain[column].str.strip()
        bad = (pd.to_numeric(text, errors="coerce").isna() & text.ne("")).to_numpy()
        if not bad.any() or (mostly_numbers and 2 * bad.sum() > text.ne("").sum()):
            return ""
        first = int(bad.argmax())
        return (f"{int(bad.sum())} of {len(bad)} values are not numbers, the first "
                f"{self.text[column].iloc[first]!r} on {self._line(first)}")


def read_upload(path: Path, name: str) -> Dataset | Table:
    """Read an uploaded file saved at ``path`` under its original ``name``.

    Returns
    -------
    Dataset or Table
        A :class:`Dataset` for CSV, Parquet and Excel files, a :class:`Table` for JJ files.

    Raises
    ------
    InputError
        An unknown suffix, an empty or unreadable file (the reader's message is kept, with
        the file's name where it named the session's copy).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "x.csv").write_text("region,value\\n01,5\\n02,7\\n")
    >>> data = read_upload(folder / "x.csv", "x.csv")
    >>> data.codes("region").tolist(), data.numeric("value").tolist()
    (['01', '02'], [5, 7])
    """
    suffix = Path(name).suffix.lower()
    if suffix in TABLE_SUFFIXES:
        try:
            return Table.from_jj(path)
        except TabSDCError as error:
            raise type(error)(str(error).replace(str(path), name)) from None
    if suffix not in DATA_SUFFIXES:
        allowed = ", ".join((*DATA_SUFFIXES, *TABLE_SUFFIXES))
        raise InputError(f"{name}: files of type {suffix or '(no suffix)'!r} cannot be read; "
                         f"upload one of {allowed}")
    return read_dataset(path, name)


def read_dataset(path: Path, name: str) -> Dataset:
    """A CSV (in the dialect :func:`~tabsdc.ui._dialect.detect_dialect` finds), Parquet or
    Excel file as a :class:`Dataset`."""
    suffix = Path(name).suffix.lower()
    dialect = None
    try:
        if suffix == ".parquet":
            numbers = pd.read_parquet(path)
            text = numbers.astype(str).where(numbers.notna(), "")
        elif suffix == ".xlsx":
            refuse_duplicate_columns(pd.read_excel(path, header=None, nrows=1).iloc[0], name)
            numbers = pd.read_excel(path, keep_default_na=False, na_values=[""])
            text = pd.read_excel(path, dtype=str, keep_default_na=False).fillna("")
        else:
            dialect = detect_dialect(path)
            text = read_csv_file(path, sep=dialect.sep, name=name, encoding=dialect.encoding)
            numbers = with_numbers(dialect.plain_numbers(text), list(text.columns)).mask(
                text == "")
    except InputError:  # the CSV reader's own, naming the file and line
        raise
    except ImportError as error:
        raise InputError(f"{name}: reading {suffix} files needs an extra package "
                         f"({error})") from error
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as error:
        read_as = "" if dialect is None else f", read with {dialect.describe()}"
        raise InputError(f"{name}: not a readable {suffix.lstrip('.')} file "
                         f"({str(error).replace(str(path), name)}{read_as})") from error
    if numbers.empty or not len(numbers.columns):
        raise InputError(f"{name}: the file holds no rows")
    numbers.columns = [str(c) for c in numbers.columns]
    text.columns = numbers.columns
    return Dataset(name, numbers, text, dialect)


def read_parent_child(path: Path, name: str) -> Hierarchy:
    """A hierarchy from an uploaded CSV with columns ``parent`` and ``child`` (in the
    dialect :func:`~tabsdc.ui._dialect.detect_dialect` finds)."""
    if Path(name).suffix.lower() not in (".csv", ".txt"):
        raise InputError(f"{name}: a hierarchy file must be a CSV with columns parent,child")
    dialect = detect_dialect(path)
    frame = read_csv_file(path, sep=dialect.sep, name=name, encoding=dialect.encoding)
    try:
        return Hierarchy.from_parent_child(frame)
    except TabSDCError as error:
        raise type(error)(f"{name}: {error}") from None
