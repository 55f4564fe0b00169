"""Codes are text: the one conversion of a column of codes, whatever the column's role.

Every builder of tables and hierarchies turns the codes it is given (dimension columns,
hierarchy levels, parent/child pairs, holding ids) into text here, so that a code means the
same thing wherever it is read:

* a code is a string: ``"01"`` keeps its leading zero and ``"NA"`` (Namibia, "not
  applicable"), ``"None"`` and ``"null"`` are codes like any other. A column of integers
  gives their decimal text (``7`` becomes ``"7"``); a column mixing text and numbers
  (``1``, ``"1"`` and ``1.0``) is refused, since ``1`` and ``"1"`` would become one code and
  ``1.0`` another;
* a missing code (an empty string, ``NaN``, ``None``) is refused, naming the column and the
  row (the frame's index label, called by the index's name: the command line's readers
  index records by ``line``);
* codes are normalised to Unicode NFC (:func:`unicodedata.normalize`): ``"Île"`` typed as
  one character ``Î`` or as ``I`` plus a combining circumflex is one code, written in the
  composed form.

Examples
--------
>>> import pandas as pd
>>> code_column(pd.Series(["01", "NA", "I\\u0302le"]), "region").tolist()
['01', 'NA', 'Île']
>>> code_column(pd.Series(["01", ""], index=pd.Index([2, 3], name="line")), "region")
Traceback (most recent call last):
tabsdc.InputError: column 'region' has a missing (empty) code at line 3
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tabsdc._errors import InputError, TabSDCError


def normal_code(code: object) -> str:
    """One code as text, in Unicode NFC.

    Examples
    --------
    >>> normal_code(7), normal_code("I\\u0302le") == "\\u00cele"
    ('7', True)
    """
    text = code if isinstance(code, str) else str(code)
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def code_column(
    values: pd.Series, column: str, *, error: type[TabSDCError] = InputError
) -> pd.Series:
    """The codes of ``values`` as text (see the module text), same index.

    A column of pandas' string dtype that is ASCII without a missing code is returned as it
    is (vectorised checks only); otherwise each distinct value is converted once
    (``pandas.factorize``), so a column of a million records with a few hundred codes costs
    a few hundred conversions.

    Parameters
    ----------
    values : pandas.Series
        One code per row.
    column : str
        The column's name, for the messages.
    error : exception class
        Raised for a missing code or mixed kinds (a hierarchy builder passes
        :class:`~tabsdc.HierarchyError`).

    Raises
    ------
    InputError
        (or ``error``) A missing or empty code, naming the column and the row; a column
        mixing kinds of codes (text and numbers), naming a row of each.
    """
    if pd.api.types.infer_dtype(values, skipna=True).startswith("mixed"):
        kinds = values.map(type).to_numpy()
        present = np.flatnonzero(values.notna().to_numpy())
        first = int(present[0])
        other = int(present[kinds[present] != kinds[first]][0])
        raise error(f"column {column!r} mixes kinds of codes: {values.iloc[first]!r} at "
                    f"{_row(values, first)}, {values.iloc[other]!r} at "
                    f"{_row(values, other)}; give every code as text")
    if isinstance(values.dtype, pd.StringDtype) and _plain_text(values):
        return values  # text without a missing code, ASCII hence NFC: nothing to convert
    positions, distinct = pd.factorize(values, use_na_sentinel=True)
    text = np.array([normal_code(code) for code in distinct] + [""], dtype=object)
    empty = (text == "")[positions]  # position -1 (missing) takes the trailing ""
    if empty.any():
        raise error(f"column {column!r} has a missing (empty) code at "
                    f"{_row(values, int(np.flatnonzero(empty)[0]))}")
    return pd.Series(text[positions], index=values.index, name=values.name, dtype=object,
                     copy=False)


def code_columns(
    frame: pd.DataFrame, columns: Sequence[str], *, error: type[TabSDCError] = InputError
) -> pd.DataFrame:
    """The ``columns`` of ``frame`` as codes (:func:`code_column`), same index.

    Examples
    --------
    >>> frame = pd.DataFrame({"nuts1": ["01", "01"], "nuts2": [11, 12], "v": [1.0, 2.0]})
    >>> code_columns(frame, ["nuts1", "nuts2"]).to_numpy().tolist()
    [['01', '11'], ['01', '12']]
    """
    return pd.DataFrame({column: code_column(frame[column], column, error=error)
                         for column in columns}, index=frame.index)


def _plain_text(values: pd.Series) -> bool:
    """A column of pandas' string dtype with no missing or empty code and only ASCII
    characters (vectorised checks, no conversion)."""
    return bool(values.notna().all() and (values != "").all() and values.str.isascii().all())


def _row(values: pd.Series, position: int) -> str:
    """``line 7`` or ``row 7``: the index label at ``position``, called by the index's name."""
    return f"{values.index.name or 'row'} {values.index[position]}"
