"""Files of the ``microsdc`` commands: records read as text, the numeric columns chosen and
checked (each error naming the column and the line of the file), JSON-ready results."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microsdc._errors import DataError
from tabsdc._errors import TabSDCError
from tabsdc.io._csvfile import read_csv_file

#: Cell texts read as missing values.
MISSING = frozenset({"", "NA", "NaN", "nan", "NULL", "null", "N/A", "."})


def read_records(path: Path) -> pd.DataFrame:
    """The file's cells as text (so that columns that are not masked are copied verbatim),
    indexed by the line of the file each record starts on (the header is line 1;
    :func:`tabsdc.io._csvfile.read_csv_file`).

    Raises
    ------
    DataError
        The file is missing, a folder, empty, not UTF-8 or not CSV.
    """
    try:
        return read_csv_file(path)
    except TabSDCError as error:
        raise DataError(str(error)) from None


def known_columns(frame: pd.DataFrame, columns: Sequence[str], source: Any) -> list[str]:
    """``columns``, each checked to be a column of ``frame`` (read from ``source``) and
    named once.

    Raises
    ------
    DataError
        A column not in the file, or named twice.
    """
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise DataError(f"column {absent[0]!r} is not in {source}")
    if len(set(columns)) != len(columns):
        raise DataError(f"a column is named twice in --vars: {list(columns)}")
    return list(columns)


def numeric_columns(text: pd.DataFrame) -> list[str]:
    """The columns of ``text`` with a number in them: the default of ``--vars``. A column
    of words and codes is left out (copied by ``mask``); a column of numbers with a word
    among them is kept, so that :func:`numbers_of` refuses it naming the word's line rather
    than copying its numbers unmasked.

    Examples
    --------
    >>> text = pd.DataFrame({"id": ["a1", "a2"], "age": ["31", "NA"], "pay": ["1.5", "two"]})
    >>> numeric_columns(text)
    ['age', 'pay']
    """
    return [column for column in text.columns
            if pd.to_numeric(text[column].str.strip(), errors="coerce").notna().any()]


def numbers_of(text: pd.DataFrame, columns: Sequence[str], path: Path) -> pd.DataFrame:
    """The chosen columns as finite numbers.

    Raises
    ------
    DataError
        A column that is not in the file, or a field that is not a number, missing or
        infinite (naming the column and the line of the file).
    """
    out = {}
    for column in known_columns(text, columns, path):
        cells = text[column].str.strip()
        values = pd.to_numeric(cells, errors="coerce").astype(float)
        missing = cells.isin(MISSING)
        bad = values.isna() & ~missing
        infinite = np.isinf(values)
        for problem, where in (("is not numeric", bad), ("has a missing value", missing),
                               ("has an infinite value", infinite)):
            if where.any():
                row = int(where.to_numpy().argmax())
                hint = "; choose columns with --vars" if problem == "is not numeric" else ""
                raise DataError(f"column {column!r} of {path} {problem} "
                                f"({text[column].iloc[row]!r} on line {text.index[row]}){hint}")
        out[column] = values
    return pd.DataFrame(out, index=text.index)
