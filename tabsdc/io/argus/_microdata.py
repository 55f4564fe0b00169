"""Data files as an ``.rda`` describes them: fixed-width ``.asc`` microdata, separated
microdata (``.csv``) and the separated cells of tabular input (``.tab``).

Every file becomes a DataFrame with one column per variable of the metadata: codes of
spanning, holding and request variables as text without surrounding blanks, numeric
variables (response, weight, shadow, cost, frequency, top-n, protection levels) as floats.
A separated file whose separator is not a comma may write numbers with a decimal comma
(``16847646,84`` in ``pp.tab``); both forms are read. The whole file is parsed with array
operations (pandas), so files of millions of records are read in seconds.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from tabsdc.io.argus._metadata import Metadata, Variable
from tabsdc.io.argus._syntax import ArgusFormatError

_CODE_ROLES = ("holding", "request", "record_key")


def numeric_variable(variable: Variable) -> bool:
    """Whether the variable's values are numbers (not codes)."""
    if variable.role in ("status",) + _CODE_ROLES:
        return False
    return (variable.numeric or variable.role != "") and not variable.explanatory


def read_data(path: str | Path, metadata: Metadata) -> pd.DataFrame:
    """Read a microdata or tabular data file laid out as ``metadata`` says.

    Raises
    ------
    ArgusFormatError
        Naming the file and the record (1-based): a fixed-width record shorter than the
        layout, a separated record with too few fields, a number that does not parse.
    """
    path = Path(path)
    return parse_data(path.read_text(encoding="latin-1"), metadata, path=str(path))


def parse_data(text: str, metadata: Metadata, path: str = "<text>") -> pd.DataFrame:
    """Parse the text of a data file (see :func:`read_data`).

    Examples
    --------
    >>> from tabsdc.io.argus._metadata import parse_rda
    >>> meta = parse_rda("Region 1 2\\n <RECODEABLE>\\nTurnover 3 6\\n <NUMERIC>")
    >>> parse_data(" 1  12.5\\n12 100.0\\n", meta)
      Region  Turnover
    0      1      12.5
    1     12     100.0
    """
    if metadata.kind == "fixed":
        raw = _fixed_fields(text, metadata, path)
    else:
        raw = _separated_fields(text, metadata, path)
    decimal_comma = metadata.kind != "fixed" and metadata.separator != ","
    frame = {}
    for variable in metadata.variables:
        column = raw[variable.name].str.strip()
        frame[variable.name] = (_numbers(column, variable, decimal_comma, path)
                                if numeric_variable(variable) else column)
    return pd.DataFrame(frame)


def _fixed_fields(text: str, metadata: Metadata, path: str) -> pd.DataFrame:
    lines = pd.Series(text.splitlines(), dtype=object)
    lines = lines[lines.str.strip() != ""].reset_index(drop=True)
    needed = max((v.start + v.width - 1 for v in metadata.variables), default=0)
    lengths = lines.str.len().to_numpy()
    short = np.flatnonzero(lengths < needed)
    if len(short):
        last = max(metadata.variables, key=lambda v: v.start + v.width)
        raise ArgusFormatError(
            f"{path}: record {short[0] + 1} has {lengths[short[0]]} characters, the layout "
            f"needs {needed} (variable {last.name} ends in column {needed}); "
            f"{len(short)} record(s) are too short")
    return pd.DataFrame({v.name: lines.str.slice(v.start - 1, v.start - 1 + v.width)
                         for v in metadata.variables})


def _separated_fields(text: str, metadata: Metadata, path: str) -> pd.DataFrame:
    names = [v.name for v in metadata.variables]
    separator = metadata.separator
    try:
        frame = pd.read_csv(io.StringIO(text), sep=separator, header=None, dtype=str,
                            keep_default_na=False, quotechar='"', skip_blank_lines=True,
                            engine="python" if len(separator) > 1 else "c")
    except pd.errors.ParserError as error:
        raise ArgusFormatError(f"{path}: {error}") from None
    if frame.shape[1] < len(names):
        raise ArgusFormatError(f"{path}: record 1 has {frame.shape[1]} fields separated by "
                               f"{separator!r}; the metadata describe {len(names)} ({names})")
    short = frame.iloc[:, len(names) - 1].isna() | (frame.iloc[:, len(names) - 1] == "")
    variable_last = metadata.variables[-1]
    if short.any() and numeric_variable(variable_last):
        first = int(np.flatnonzero(short.to_numpy())[0])
        raise ArgusFormatError(f"{path}: record {first + 1} has no field {len(names)} "
                               f"({variable_last.name})")
    frame = frame.iloc[:, : len(names)].fillna("")
    frame.columns = names
    return frame


def _numbers(column: pd.Series, variable: Variable, decimal_comma: bool, path: str) -> pd.Series:
    text = column.str.replace(",", ".", regex=False) if decimal_comma else column
    empty = text.isin(["", "-"])
    values = pd.to_numeric(text.where(~empty), errors="coerce")
    bad = values.isna() & ~empty
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise ArgusFormatError(f"{path}: record {first + 1}, variable {variable.name}: "
                               f"{column.iloc[first]!r} is not a number")
    return values.astype(float)
