"""Uploaded files of the web app: what they may be, how they are read, how they are shown.

An upload is a CSV, Parquet or Excel file of microdata (one row per contribution) or of
interior cells (one row per cell), or a tau-ARGUS / sdcTable JJ file (a whole table). A data
file is kept twice: as pandas reads it (numbers parsed exactly as :func:`pandas.read_csv`
does, so values agree with a script's) and as text (codes such as ``"01"`` keep their
leading zeros). Dimension and hierarchy columns are taken from the text copy, the response,
weight and holding columns from the parsed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tabsdc.errors import InputError, TabSDCError
from tabsdc.hierarchy import Hierarchy
from tabsdc.io.csvfile import read_csv_file, refuse_duplicate_columns, with_numbers
from tabsdc.table import Table

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
    string (missing values as empty strings); ``sep`` the separator of a CSV file."""

    name: str
    numbers: pd.DataFrame
    text: pd.DataFrame
    sep: str = ","

    def column_types(self) -> list[dict[str, object]]:
        """One entry per column: name, ``number`` or ``text``, distinct values, missing
        values and a few examples."""
        rows = []
        for column in self.numbers.columns:
            series = self.numbers[column]
            rows.append({
                "name": str(column),
                "type": "number" if pd.api.types.is_numeric_dtype(series) else "text",
                "distinct": int(series.nunique()),
                "missing": int(series.isna().sum()),
                "examples": ", ".join(self.text[column].drop_duplicates().head(4)),
            })
        return rows

    def preview(self, rows: int = PREVIEW_ROWS) -> dict[str, object]:
        """The first ``rows`` rows as text, with the column types (for the page)."""
        head = self.text.head(rows)
        return {"name": self.name, "rows": len(self.text), "columns": self.column_types(),
                "head": head.to_numpy().tolist(), "header": [str(c) for c in head.columns]}

    def codes(self, column: str) -> pd.Series:
        """A code column as text; raises :class:`InputError` naming an unknown column."""
        self.require(column)
        return self.text[column]

    def numeric(self, column: str) -> pd.Series:
        """A numeric column; raises :class:`InputError` when it holds text."""
        self.require(column)
        series = self.numbers[column]
        if not pd.api.types.is_numeric_dtype(series):
            bad = pd.to_numeric(series, errors="coerce").isna() & series.notna()
            row = int(bad.to_numpy().argmax())
            raise InputError(f"{self.name}: column {column!r} must hold numbers; row "
                             f"{row + 2} holds {series.iloc[row]!r}")
        return series

    def require(self, column: str) -> None:
        if column not in self.numbers.columns:
            raise InputError(f"{self.name}: no column {column!r} (columns: "
                             f"{', '.join(map(str, self.numbers.columns))})")


def read_upload(path: Path, name: str) -> Dataset | Table:
    """Read an uploaded file saved at ``path`` under its original ``name``.

    Returns
    -------
    Dataset or Table
        A :class:`Dataset` for CSV, Parquet and Excel files, a :class:`Table` for JJ files.

    Raises
    ------
    InputError
        An unknown suffix, an empty or unreadable file (the reader's message is kept).

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
        return Table.from_jj(path)
    if suffix not in DATA_SUFFIXES:
        allowed = ", ".join((*DATA_SUFFIXES, *TABLE_SUFFIXES))
        raise InputError(f"{name}: files of type {suffix or '(no suffix)'!r} cannot be read; "
                         f"upload one of {allowed}")
    return read_dataset(path, name)


def read_dataset(path: Path, name: str) -> Dataset:
    """A CSV (comma or semicolon separated), Parquet or Excel file as a :class:`Dataset`."""
    suffix = Path(name).suffix.lower()
    sep = ","
    try:
        if suffix == ".parquet":
            numbers = pd.read_parquet(path)
            text = numbers.astype(str).where(numbers.notna(), "")
        elif suffix == ".xlsx":
            refuse_duplicate_columns(pd.read_excel(path, header=None, nrows=1).iloc[0], name)
            numbers = pd.read_excel(path, keep_default_na=False, na_values=[""])
            text = pd.read_excel(path, dtype=str, keep_default_na=False).fillna("")
        else:
            sep = _separator(path)
            text = read_csv_file(path, sep=sep, name=name)
            numbers = with_numbers(text, list(text.columns)).mask(text == "")
    except InputError:  # the CSV reader's own, naming the file and line
        raise
    except ImportError as error:
        raise InputError(f"{name}: reading {suffix} files needs an extra package "
                         f"({error})") from error
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as error:
        raise InputError(f"{name}: not a readable {suffix.lstrip('.')} file ({error})"
                         ) from error
    if numbers.empty or not len(numbers.columns):
        raise InputError(f"{name}: the file holds no rows")
    numbers.columns = [str(c) for c in numbers.columns]
    text.columns = numbers.columns
    return Dataset(name, numbers, text, sep)


def read_parent_child(path: Path, name: str) -> Hierarchy:
    """A hierarchy from an uploaded CSV with columns ``parent`` and ``child``."""
    if Path(name).suffix.lower() not in (".csv", ".txt"):
        raise InputError(f"{name}: a hierarchy file must be a CSV with columns parent,child")
    frame = read_csv_file(path, sep=_separator(path), name=name)
    try:
        return Hierarchy.from_parent_child(frame)
    except TabSDCError as error:
        raise type(error)(f"{name}: {error}") from None


def _separator(path: Path) -> str:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        header = handle.readline()
    return ";" if header.count(";") > header.count(",") else ","
