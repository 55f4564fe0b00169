"""Reading and writing tables in the JJ format (tau-ARGUS, sdcTable, Castro's CTA).

The format, what the reader accepts and what the writer writes are described in
:mod:`tabsdc.io._jj_text`, which turns JJ text into a table's parts (cells, ``A``, ``b``) and
back; this module does the same with :class:`~tabsdc._table.Table` objects
(``Table.from_jj`` and ``Table.to_jj`` too).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from tabsdc._table import Table
from tabsdc.io._jj_text import (
    format_jj_parts,
    parse_jj_parts,
    read_jj_parts,
)


def read_jj(path_or_text_stream: str | os.PathLike | TextIO) -> Table:
    """Read a JJ file into a :class:`~tabsdc._table.Table` without dimensions: the table of
    :func:`tabsdc.io._jj_text.read_jj_parts` (a file name or an open text stream; cells
    indexed ``0 .. n-1``, ``freq`` NaN).

    Raises
    ------
    JJFormatError
        For a malformed file, naming the file (when read from a path) and the line.

    See Also
    --------
    parse_jj : the same from a string.
    write_jj : the inverse.

    Examples
    --------
    >>> import io
    >>> table = read_jj(io.StringIO("0\\n3\\n0 5 1 s 0 10 0 0 0\\n1 2 1 u 0 10 1 1 0\\n"
    ...                             "2 3 1 s 0 10 0 0 0\\n1\\n0 3 : 0 (-1) 1 (1) 2 (1)\\n"))
    >>> table.n_cells, table.n_relations, table.cells["status"].tolist()
    (3, 1, ['s', 'u', 's'])
    """
    return Table(*read_jj_parts(path_or_text_stream))


def parse_jj(text: str) -> Table:
    """The table of the text of a JJ file (see :func:`read_jj`).

    Raises
    ------
    JJFormatError
        Naming the line and what is wrong with it (see
        :func:`tabsdc.io._jj_text.parse_jj_parts`).

    Examples
    --------
    >>> table = parse_jj("0\\n2\\n0 4 1 s 0 9 0 0 0\\n1 4 1 s 0 9 0 0 0\\n"
    ...                  "1\\n0 2 : 0 (-1) 1 (1)\\n")
    >>> table.A.toarray().tolist(), table.b.tolist()
    ([[-1.0, 1.0]], [0.0])
    """
    return Table(*parse_jj_parts(text))


def write_jj(table: Table, path: str | os.PathLike, **options) -> Path:
    """Write ``table`` as a JJ file, whole or not at all (``Table.to_jj``); ``options`` are
    ``decimals``, ``status_map``, ``ub_default``, ``lb_default``, ``widen_bounds`` and
    ``max_scaled_cost`` of :func:`tabsdc.io._jj_text.format_jj_parts`.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> table = Table(pd.DataFrame({"value": [3.0, 1.0, 2.0]}), [[-1, 1, 1]], [0])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     read_jj(write_jj(table, f"{tmp}/t.jj")).cells["ub"].tolist()
    [4.5, 4.5, 4.5]
    """
    return table.to_jj(path, **options)


def format_jj(table: Table, **options) -> str:
    """The JJ text of ``table`` (cells in table order, relations in row order of ``A``);
    ``options`` as for :func:`write_jj`. Dimension labels are not written (JJ numbers cells
    by position); a table without dimensions must have the cell index ``0 .. n-1``.

    Raises
    ------
    JJFormatError
        A table without dimensions whose index is not ``0 .. n-1`` (naming the first cell
        whose label differs from its position).
    InputError
        A non-finite value, weight or protection level, ``lb = +inf`` or ``ub = -inf``
        (naming the cell by its dimension codes); see
        :func:`tabsdc.io._jj_text.format_jj_parts`.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"value": [3.0, 1.0, 2.0], "status": ["s", "u", "s"],
    ...                       "upl": [0, 1.5, 0], "lpl": [0, 1.5, 0]})
    >>> print(format_jj(Table(cells, [[-1, 1, 1]], [0]), decimals=1), end="")
    0
    3
    0 3.0 3 s 0.0 4.5 0.0000 0.0000 0.0
    1 1.0 1 u 0.0 4.5 1.5000 1.5000 0.0
    2 2.0 2 s 0.0 4.5 0.0000 0.0000 0.0
    1
    0 3 : 0 (-1) 1 (1) 2 (1)
    """
    return format_jj_parts(table.cells, table.A, table.b, cell_label=table.cell_labels,
                           positional=not table.dims, **options)
