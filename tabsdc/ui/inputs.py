"""Uploaded files of the web app: what they may be, how they are read, how they are shown.

An upload is a CSV, Parquet or Excel file of microdata (one row per contribution) or of
interior cells (one row per cell), or a tau-ARGUS / sdcTable JJ file (a whole table). A data
file is kept twice: as pandas reads it (numbers parsed exactly as :func:`pandas.read_csv`
does, so values agree with a script's) and as text (codes such as ``"01"`` keep their
leading zeros). Dimension and hierarchy columns are taken from the text copy, the response,
weight and holding columns from the parsed one. A CSV file is read in the dialect
:func:`~tabsdc.ui.dialect.detect_dialect` finds (separator, decimal mark, thousands
separator, encoding), and the page says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tabsdc.errors import InputError, TabSDCError
from tabsdc.hierarchy import Hierarchy
from tabsdc.table import Table
from tabsdc.ui.dialect import CsvDialect, detect_dialect

__all__ = ["DATA_SUFFIXES", "TABLE_SUFFIXES", "Dataset", "read_dataset", "read_upload",
           "read_parent_child"]

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
        values, blank codes, a few examples, and for a text column whose values are mostly
        numbers, why it is not numeric."""
        rows = []
        for column in self.numbers.columns:
            series = self.numbers[column]
            numeric = pd.api.types.is_numeric_dtype(series)
            rows.append({
                "name": str(column),
                "type": "number" if numeric else "text",
                "distinct": int(series.nunique()),
                "missing": int(series.isna().sum()),
                "blank": int(self.text[column].str.strip().eq("").sum()),
                "examples": ", ".join(self.text[column].drop_duplicates().head(4)),
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
        """A numeric column; raises :class:`InputError` when it holds text or has missing
        values, naming the first line of the file concerned."""
        self.require(column)
        series = self.numbers[column]
        if not pd.api.types.is_numeric_dtype(series):
            raise InputError(f"{self.name}: column {column!r} must hold numbers; "
                             f"{self._not_numeric(column)}")
        missing = series.isna().to_numpy()
        if missing.any():
            first = int(missing.argmax())
            more = int(missing.sum()) - 1
            raise InputError(f"{self.name}: column {column!r} has no value on "
                             f"{self._line(first)}" + (f" (and on {more} more rows)" if more
                                                       else "")
                             + "; fill in the values, or remove these rows")
        return series

    def blank_warnings(self, dims: list[str]) -> list[str]:
        """A sentence for each dimension with blank codes: those rows form a category of
        their own (the code ``""``)."""
        out = []
        for dim in dims:
            blank = self.codes(dim).str.strip().eq("").to_numpy()
            if blank.any():
                out.append(f"{dim}: {int(blank.sum())} rows have a blank code (the first on "
                           f"{self._line(int(blank.argmax()))}); they form a category of "
                           "their own, shown as (blank): fill in the codes if they belong "
                           "elsewhere")
        return out

    def require(self, column: str) -> None:
        if column not in self.numbers.columns:
            raise InputError(f"{self.name}: no column {column!r} (columns: "
                             f"{', '.join(map(str, self.numbers.columns))})")

    def _line(self, row: int) -> str:
        """Where data row ``row`` (from 0) is in the file: a line of a CSV or Excel file
        (the header is line 1), a row of a Parquet file."""
        if Path(self.name).suffix.lower() == ".parquet":
            return f"row {row + 1}"
        return f"line {row + 2}"

    def _not_numeric(self, column: str, mostly_numbers: bool = False) -> str:
        """Why a text column is not read as numbers: how many of its values are not
        numbers (in the file's dialect), and the first one. With ``mostly_numbers``, only
        for a column in which at least half the values are numbers (a column of codes
        needs no explanation)."""
        text = self.text[column].str.strip()
        if self.dialect is not None:
            if self.dialect.thousands:
                text = text.str.replace(self.dialect.thousands, "", regex=False)
            text = text.str.replace(self.dialect.decimal, ".", regex=False)
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
    """A CSV (in the dialect :func:`~tabsdc.ui.dialect.detect_dialect` finds), Parquet or
    Excel file as a :class:`Dataset`."""
    suffix = Path(name).suffix.lower()
    dialect = None
    try:
        if suffix == ".parquet":
            numbers = pd.read_parquet(path)
            text = numbers.astype(str).where(numbers.notna(), "")
        elif suffix == ".xlsx":
            numbers = pd.read_excel(path)
            text = pd.read_excel(path, dtype=str).fillna("")
        else:
            dialect = detect_dialect(path)
            options = dialect.read_options()
            numbers = pd.read_csv(path, **options)
            text = pd.read_csv(path, **options, dtype=str, keep_default_na=False)
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
    dialect :func:`~tabsdc.ui.dialect.detect_dialect` finds)."""
    if Path(name).suffix.lower() not in (".csv", ".txt"):
        raise InputError(f"{name}: a hierarchy file must be a CSV with columns parent,child")
    dialect = detect_dialect(path)
    try:
        frame = pd.read_csv(path, sep=dialect.sep, encoding=dialect.encoding, dtype=str,
                            keep_default_na=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise InputError(f"{name}: not a readable CSV file ({error})") from error
    return Hierarchy.from_parent_child(frame)
