"""The JJ format (tau-ARGUS, sdcTable, Castro's CTA) as text <-> cells, ``A``, ``b``.

The parts of a table, below :class:`~tabsdc._table.Table` (which builds itself of them in
``Table.from_jj`` and writes itself with them in ``Table.to_jj``); :mod:`tabsdc.io._jj` is the
same on tables.

A JJ file is free-format text, tokens separated by blanks, ``.`` as decimal point::

    0                                       always the integer 0
    n                                       number of cells
    i  v  w  s  lb  ub  lpl  upl  spl       n cell lines, i = 0 .. n-1 in order
    m                                       number of relations
    rhs  k  :  j1 (c1)  j2 (c2) ... jk (ck) m relation lines: sum_t c_t x_{j_t} = rhs

Cell fields: index, value, weight (the cell column ``cost``: suppression cost; an integer
for tau-ARGUS), status
(``s`` safe, ``u`` primary, ``z`` must be published, ``m`` secondary; sdcTable also writes
``x`` secondary and ``w`` never-published dummy), a-priori bounds ``lb``/``ub`` and the lower,
upper and sliding protection levels. A relation lists ``k`` terms ``cell (coefficient)``,
the total included.

The reader accepts what tau-ARGUS, sdcTable and Castro's instances write: integer or real
weights, coefficients and right-hand sides (``0`` or ``0.0``), numbers in fixed or scientific
notation, ``j(c)`` without a blank, ``k:`` without a blank, blank lines and CR-LF line ends. It
keeps real weights as they are. A companion ``<file>.frq`` (frequencies for tau-ARGUS's
singleton handling) is not read: JJ tables have ``freq = NaN``.

The writer writes what tau-ARGUS's readers (``fscanf("%d %lf %d %c %lf %lf %lf %lf %lf")``
per cell, ``"%lf %d :"`` and ``" %d (%d)"`` per relation) accept; see :func:`format_jj_parts`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import NamedTuple, TextIO

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._files import atomic_write
from tabsdc._cellstatus import STATUS_CODES
from tabsdc._errors import InputError, JJFormatError
from tabsdc._units import LARGEST_VALUE, too_large

#: tau-ARGUS's ``MaxScaledCost``: the largest weight after scaling non-integer costs.
MAX_SCALED_COST = 20000

#: Infinite upper (lower) bounds are written as ``BOUND_FACTOR`` times the largest absolute
#: cell value (its negative), as in the tau-ARGUS manual's example (ub = 1.5 x grand total).
BOUND_FACTOR = 1.5

_FIELDS = ("index", "value", "cost", "status", "lb", "ub", "lpl", "upl", "spl")
_REAL_FIELDS = (1, 2, 4, 5, 6, 7, 8)  # positions of the real-valued cell fields

# A number is what C's strtod reads in fixed or scientific notation (no inf, nan, hex or
# digit separators); integers have at most 18 digits so that they fit an int64.
_INT = r"[+-]?\d{1,18}"
_REAL = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_INT_RE = re.compile(_INT)
_REAL_RE = re.compile(_REAL)
_SEP = r"[ \t]+"
_CELL_LINE = (
    rf"[ \t]*{_INT}{_SEP}{_REAL}{_SEP}{_REAL}{_SEP}[{''.join(STATUS_CODES)}]"
    rf"(?:{_SEP}{_REAL}){{5}}[ \t]*"
)
_TERM = rf"[ \t]*{_INT}[ \t]*\([ \t]*{_REAL}[ \t]*\)"
_RELATION_LINE = rf"[ \t]*{_REAL}{_SEP}{_INT}[ \t]*:(?:{_TERM})*[ \t]*"
# zero-width match at the start of the first line that is not a well-formed cell / relation
_BAD_CELL_LINE = re.compile(rf"^(?!{_CELL_LINE}$)", re.MULTILINE)
_BAD_RELATION_LINE = re.compile(rf"^(?!{_RELATION_LINE}$)", re.MULTILINE)
# pieces of well-formed relation lines
_HEAD_RE = re.compile(r"^[ \t]*(\S+?)[ \t]+([^\s:]+)[ \t]*:(.*)$", re.MULTILINE)
_TERM_RE = re.compile(r"([^\s()]+)[ \t]*\([ \t]*([^\s()]+)[ \t]*\)")


class JJParts(NamedTuple):
    """What a JJ file holds: the cells and the relations ``A @ cells["value"] == b``
    (``Table(*parts)`` is the table)."""

    cells: pd.DataFrame
    A: sp.csr_array
    b: np.ndarray


def cell_numbers(cells: pd.DataFrame) -> Callable[[Sequence[int]], list[str]]:
    """Labels of cells by their index, ``"cell 3"``: how the writer names cells by default.

    Examples
    --------
    >>> cell_numbers(pd.DataFrame(index=[7, 8, 9]))([0, 2])
    ['cell 7', 'cell 9']
    """
    return lambda positions: [f"cell {i}" for i in cells.index[np.asarray(positions, int)]]


# -- reading ------------------------------------------------------------------------------------
def read_jj_parts(path_or_text_stream: str | os.PathLike | TextIO) -> JJParts:
    """Read a JJ file: the parts of a table without dimensions.

    Parameters
    ----------
    path_or_text_stream : str, path-like or text stream
        A file name, or an open text stream (anything with ``read()``).

    Returns
    -------
    JJParts
        Cells indexed ``0 .. n-1`` (a ``RangeIndex`` named ``cell``) with the columns
        ``value, freq, cost, status, lb, ub, lpl, upl, spl`` (``freq`` is NaN: JJ carries no
        frequencies); ``A`` (CSR, one row per relation) and ``b`` (the right-hand sides).

    Raises
    ------
    JJFormatError
        For a malformed file; the message names the file (when read from a path) and the
        line. See :func:`parse_jj_parts` for the checks.

    See Also
    --------
    parse_jj_parts : the same from a string.
    write_jj_parts : the inverse.
    tabsdc.io._jj.read_jj : the same as a :class:`~tabsdc._table.Table`.

    Examples
    --------
    >>> import io
    >>> cells, A, b = read_jj_parts(io.StringIO(
    ...     "0\\n3\\n0 5 1 s 0 10 0 0 0\\n1 2 1 u 0 10 1 1 0\\n"
    ...     "2 3 1 s 0 10 0 0 0\\n1\\n0 3 : 0 (-1) 1 (1) 2 (1)\\n"))
    >>> len(cells), A.shape[0], cells["status"].tolist()
    (3, 1, ['s', 'u', 's'])
    """
    if hasattr(path_or_text_stream, "read"):
        return parse_jj_parts(path_or_text_stream.read())
    path = Path(path_or_text_stream)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise JJFormatError(f"{path}: line {line}: not a text file ({err.reason})") from None
    try:
        return parse_jj_parts(text)
    except JJFormatError as err:
        raise JJFormatError(f"{path}: {err}") from None


def parse_jj_parts(text: str) -> JJParts:
    """Parse the text of a JJ file (see :func:`read_jj_parts`).

    The cell block is split into tokens once and converted column by column with numpy; the
    relation block is read with one regular expression over the whole block (right-hand
    side, term count, terms) and one split of all terms, and ``A`` is built as one CSR
    matrix. Every line is first checked against the grammar of its block
    (one regular-expression pass per block), so the conversions cannot fail part-way.

    Parameters
    ----------
    text : str
        The whole file.

    Returns
    -------
    JJParts

    Raises
    ------
    JJFormatError
        Naming the line and what is wrong with it: a first line other than ``0``; a count
        line that is not one non-negative integer; a table of 0 cells; fewer cell lines than
        announced (the file ends, or a relation line comes first); a cell line without
        exactly 9 fields, with a non-numeric or non-finite field, a status other than
        ``s u z m x w``, or an index other than its position; a relation line without ``:``,
        with a non-numeric right-hand side, term count, cell or coefficient, a term count
        ``k`` other than the number of ``cell (coef)`` pairs, a cell outside ``0 .. n-1``,
        the same cell twice, or stray text; fewer relation lines than announced; anything
        after the last relation.

    Examples
    --------
    >>> parts = parse_jj_parts("0\\n2\\n0 4 1 s 0 9 0 0 0\\n1 4 1 s 0 9 0 0 0\\n"
    ...                        "1\\n0 2 : 0 (-1) 1 (1)\\n")
    >>> parts.A.toarray().tolist(), parts.b.tolist()
    ([[-1.0, 1.0]], [0.0])
    """
    lines, numbers = _content_lines(text)
    if _header_int(lines, numbers, 0, "the fixed value 0") != 0:
        raise JJFormatError(
            f"line {numbers[0]}: the first line must be 0, found {_shorten(lines[0])!r}"
        )
    n = _header_int(lines, numbers, 1, "the number of cells")
    if n == 0:
        raise JJFormatError(f"line {numbers[1]}: the table has no cells (the number of cells "
                            "is 0); a JJ file holds at least one cell")
    cells = _parse_cells(lines[2 : 2 + n], numbers[2 : 2 + n], n, numbers[1])
    m = _header_int(lines, numbers, 2 + n, "the number of relations")
    first, stop = 3 + n, 3 + n + m
    A, b = _parse_relations(lines[first:stop], numbers[first:stop], n, m, numbers[2 + n])
    if len(lines) > stop:
        raise JJFormatError(
            f"line {numbers[stop]}: unexpected text after the {m} relations announced on line "
            f"{numbers[2 + n]}: {_shorten(lines[stop])!r}"
        )
    return JJParts(cells, A, b)


def _content_lines(text: str) -> tuple[list[str], list[int]]:
    """The non-blank lines and their 1-based line numbers."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    numbers = [i for i, line in enumerate(raw, start=1) if line and not line.isspace()]
    return [raw[i - 1] for i in numbers], numbers


def _end_line(numbers: list[int]) -> int:
    return numbers[-1] + 1 if numbers else 1


def _header_int(lines: list[str], numbers: list[int], pos: int, what: str) -> int:
    """The single non-negative integer on content line ``pos``."""
    if pos >= len(lines):
        raise JJFormatError(f"line {_end_line(numbers)}: the file ends where {what} was expected")
    token = lines[pos].strip()
    if not re.fullmatch(r"\+?\d{1,18}", token):
        raise JJFormatError(
            f"line {numbers[pos]}: expected {what} (one non-negative integer), "
            f"found {_shorten(token)!r}"
        )
    return int(token)


def _parse_cells(block: list[str], numbers: list[int], n: int, count_line: int) -> pd.DataFrame:
    joined = "\n".join(block)
    if len(block) < n or ":" in joined:
        k = next((k for k, line in enumerate(block) if ":" in line), len(block))
        found = "a relation line" if k < len(block) else "the end of the file"
        line = numbers[k] if k < len(block) else (numbers[-1] + 1 if numbers else count_line + 1)
        raise JJFormatError(
            f"line {line}: expected cell line {k + 1} of the {n} announced on line {count_line}, "
            f"found {found} (fewer cell lines than announced)"
        )
    bad = _BAD_CELL_LINE.search(joined)
    if bad is not None and n:
        k = joined.count("\n", 0, bad.start())
        raise JJFormatError(f"line {numbers[k]}: {_cell_problem(block[k], k)}")
    tokens = joined.split()
    width = len(_FIELDS)
    index = _ints(tokens[0::width])
    wrong = np.flatnonzero(index != np.arange(n))
    if len(wrong):
        k = wrong[0]
        raise JJFormatError(
            f"line {numbers[k]}: cell index {index[k]} differs from its position {k} "
            "(cells must be numbered 0 .. n-1 in order)"
        )
    line_of = np.asarray(numbers)
    columns = {
        _FIELDS[j]: _finite(tokens[j::width], line_of, f"field {_FIELDS[j]}",
                            limited=_FIELDS[j] not in ("lb", "ub"))
        for j in _REAL_FIELDS
    }
    return pd.DataFrame(
        {
            "value": columns["value"],
            "freq": np.full(n, np.nan),
            "cost": columns["cost"],
            "status": np.array(tokens[3::width], dtype=object),
            **{name: columns[name] for name in ("lb", "ub", "lpl", "upl", "spl")},
        },
        index=pd.RangeIndex(n, name="cell"),
    )


def _cell_problem(line: str, position: int) -> str:
    """What is wrong with a cell line that does not match the grammar."""
    fields = line.split()
    if len(fields) != len(_FIELDS):
        hint = " (the number of relations? fewer cell lines than announced)" if (
            len(fields) == 1 and _INT_RE.fullmatch(fields[0])) else ""
        return (
            f"cell line {position + 1} has {len(fields)} fields, expected {len(_FIELDS)} "
            f"({' '.join(_FIELDS)}){hint}"
        )
    if not _INT_RE.fullmatch(fields[0]):
        return f"cell index {fields[0]!r} is not an integer"
    for name, token in zip(_FIELDS[1:], fields[1:], strict=True):
        if name == "status":
            if token not in STATUS_CODES:
                return f"status {token!r} of cell {position} is not one of {' '.join(STATUS_CODES)}"
        elif not _REAL_RE.fullmatch(token):
            return f"{name} of cell {position} is not a number: {token!r}"
    return f"cell line {position + 1} is malformed"  # pragma: no cover - grammar and checks agree


def _parse_relations(
    block: list[str], numbers: list[int], n: int, m: int, count_line: int
) -> tuple[sp.csr_array, np.ndarray]:
    if len(block) < m:
        raise JJFormatError(
            f"line {_end_line(numbers) if numbers else count_line + 1}: the file ends after "
            f"{len(block)} of the {m} relations announced on line {count_line}"
        )
    if m == 0:
        return sp.csr_array((0, n)), np.zeros(0)
    joined = "\n".join(block)
    line_of = np.asarray(numbers)
    bad = _BAD_RELATION_LINE.search(joined)
    if bad is not None:
        k = joined.count("\n", 0, bad.start())
        raise JJFormatError(f"line {numbers[k]}: relation {k}: {_relation_problem(block[k])}")
    rhs_tokens, k_tokens, terms = zip(*_HEAD_RE.findall(joined), strict=True)
    rhs = _finite(rhs_tokens, line_of, "right-hand side")
    declared = _ints(k_tokens)
    counts = np.fromiter(map(str.count, terms, repeat("(")), dtype=np.int64, count=m)
    wrong = np.flatnonzero(declared != counts)
    if len(wrong):
        k = wrong[0]
        raise JJFormatError(
            f"line {numbers[k]}: relation {k} declares {declared[k]} terms but lists {counts[k]}"
        )
    # every term is 'cell (coef)' (checked above): without the brackets, cells and
    # coefficients alternate
    pairs = "\n".join(terms).replace("(", " ").replace(")", " ").split()
    rows = np.repeat(np.arange(m), counts)
    cols = _ints(pairs[0::2])
    coefs = _finite(pairs[1::2], line_of[rows], "coefficient")
    outside = np.flatnonzero((cols < 0) | (cols >= n))
    if len(outside):
        r = rows[outside[0]]
        raise JJFormatError(
            f"line {numbers[r]}: relation {r} names cell {cols[outside[0]]}, but the cells are "
            f"numbered 0 .. {n - 1}"
        )
    order = np.lexsort((cols, rows))
    twice = np.flatnonzero((np.diff(rows[order]) == 0) & (np.diff(cols[order]) == 0))
    if len(twice):
        r, c = rows[order][twice[0]], cols[order][twice[0]]
        raise JJFormatError(f"line {numbers[r]}: relation {r} names cell {c} twice")
    A = sp.csr_array((coefs, (rows, cols)), shape=(m, n))
    return A, rhs


def _ints(tokens: list[str]) -> np.ndarray:
    """Tokens that match the integer grammar, as int64."""
    return np.fromiter(map(int, tokens), dtype=np.int64, count=len(tokens))


def _finite(tokens: list[str], line_of: np.ndarray, what: str, *, limited: bool = False
            ) -> np.ndarray:
    """Tokens that match the number grammar, as floats; overflow to inf is an error, and
    with ``limited`` so is a number beyond :data:`~tabsdc._units.LARGEST_VALUE`."""
    values = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    infinite = np.flatnonzero(~np.isfinite(values))
    if len(infinite):
        k = infinite[0]
        raise JJFormatError(f"line {line_of[k]}: {what} {tokens[k]!r} is not a finite number")
    beyond = np.flatnonzero(np.abs(values) > LARGEST_VALUE) if limited else []
    if len(beyond):
        k = beyond[0]
        raise JJFormatError(f"line {line_of[k]}: {too_large(values[k], what)}")
    return values


def _relation_problem(line: str) -> str:
    """What is wrong with a relation line that does not match the grammar."""
    head, colon, rest = line.partition(":")
    if not colon:
        return "no ':' after the number of terms (expected 'rhs k : cell (coef) ...')"
    parts = head.split()
    if len(parts) != 2:
        return f"expected 'rhs k' before ':', found {head.strip()!r}"
    if not _REAL_RE.fullmatch(parts[0]):
        return f"right-hand side {parts[0]!r} is not a number"
    if not _INT_RE.fullmatch(parts[1]):
        return f"number of terms {parts[1]!r} is not an integer"
    for cell, coef in _TERM_RE.findall(rest):
        if not _INT_RE.fullmatch(cell):
            return f"cell {cell!r} is not an integer"
        if not _REAL_RE.fullmatch(coef):
            return f"coefficient {coef!r} of cell {cell} is not a number"
    stray = _TERM_RE.sub(" ", rest).split()
    return f"unexpected text {stray[0]!r} (terms are written 'cell (coefficient)')"


def _shorten(text: str, limit: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- writing ------------------------------------------------------------------------------------
def write_jj_parts(
    cells: pd.DataFrame, A: sp.sparray, b: np.ndarray, path: str | os.PathLike, **options
) -> Path:
    """Write cells and relations as a JJ file; ``options`` are the keywords of
    :func:`format_jj_parts`.

    The file is written whole or not at all (:func:`sdcreport._files.atomic_write`).

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import tempfile
    >>> from tabsdc import Table
    >>> table = Table(pd.DataFrame({"value": [3.0, 1.0, 2.0]}), [[-1, 1, 1]], [0])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_jj_parts(table.cells, table.A, table.b, f"{tmp}/t.jj")
    ...     read_jj_parts(path).cells["ub"].tolist()
    [4.5, 4.5, 4.5]
    """
    text = format_jj_parts(cells, A, b, **options)
    path = Path(path)
    with atomic_write(path, encoding="ascii", newline="\n") as stream:
        stream.write(text)
    return path


def format_jj_parts(
    cells: pd.DataFrame,
    A: sp.sparray,
    b: np.ndarray,
    *,
    cell_label: Callable[[Sequence[int]], list[str]] | None = None,
    positional: bool = True,
    decimals: int | None = None,
    status_map: Mapping[str, str] | None = None,
    ub_default: float | None = None,
    lb_default: float | None = None,
    widen_bounds: bool = False,
    max_scaled_cost: int = MAX_SCALED_COST,
) -> str:
    """The JJ text of cells and relations ``A @ cells["value"] == b`` (cells in their order,
    relations in row order of ``A``).

    Parameters
    ----------
    cells : DataFrame
        One row per cell with the columns of :attr:`Table.cells <tabsdc._table.Table>`
        (``value, cost, status, lb, ub, lpl, upl, spl``); the index is not written (JJ
        numbers cells by position).
    A : sparse matrix, shape (m, n)
    b : ndarray, shape (m,)
    cell_label : callable, optional
        Labels of cells at positions, for the messages (``Table.cell_labels``). Default:
        :func:`cell_numbers`, ``"cell 3"``.
    positional : bool
        The cell index must be ``0 .. n-1`` (as for a table without dimensions, whose index
        is its cells' numbers).
    decimals : int, optional
        Write value, lb, ub and spl with this many decimals and lpl, upl with
        ``decimals + 3`` (tau-ARGUS's writer: the response variable's decimals, and 3 more for
        protection levels). By default every real number is written in the shortest form
        that reads back to the same float (integers without decimals, no exponent).
    status_map : mapping, optional
        Letters to write instead of some statuses, e.g. ``{"x": "m"}`` to give tau-ARGUS
        (which knows ``s u z m``) sdcTable's secondary cells as ``m``. Default: as stored.
    ub_default, lb_default : float, optional
        Written for infinite upper (lower) bounds, before widening (see Notes). Default:
        ``BOUND_FACTOR * max|value|`` (its negative for lb).
    widen_bounds : bool
        Also widen the finite bounds, as tau-ARGUS's writer does:
        ``lb = min(lb, v - lpl)``, ``ub = max(ub, v + upl)``. Default: finite bounds are
        written as they are.
    max_scaled_cost : int
        Largest weight after scaling non-integer weights (tau-ARGUS's ``MaxScaledCost``).

    Returns
    -------
    str

    Raises
    ------
    JJFormatError
        With ``positional``, an index other than ``0 .. n-1`` (naming the first cell whose
        label differs from its position).
    InputError
        A non-finite value, weight or protection level, ``lb = +inf`` or ``ub = -inf``
        (naming the cell); a negative weight when weights must be scaled; a ``status_map``
        letter that is not a status code; negative ``decimals``.

    Notes
    -----
    *Weights.* tau-ARGUS reads weights with ``%d``. When every weight is an integer it is
    written unchanged (so round trips are exact; tau-ARGUS's C ``int`` then limits them to
    2**31 - 1). Otherwise each weight is scaled as in tau-ARGUS's ``CJJFormat::WriteCells``:
    ``w' = (long)(w * MaxScaledCost / MaxCost + 0.5)``, ``w' = 1`` where that gives 0, with
    ``MaxCost = max w`` and ``MaxScaledCost = max_scaled_cost`` (default 20000, the largest
    weight in the tau-ARGUS manual's example, section 5.5).

    *Bounds.* JJ needs finite bounds. An infinite ``ub`` is written as
    ``max(ub_default, v + upl)`` and an infinite ``lb`` as ``min(lb_default, v - lpl)``
    (negative protection levels count as 0), so that ``lb <= v - lpl`` and ``ub >= v + upl``
    hold for them as tau-ARGUS's writer guarantees (an interval audit reading the file
    rejects ``v - lpl < lb``). Finite bounds are written as given unless ``widen_bounds`` is
    set, in which case every cell's bounds are widened the same way. With ``decimals``, the
    replacements and widenings use ``v``, ``lpl``, ``upl`` as written (rounded), and every
    bound is rounded outward (lb down, ub up), so rounding never narrows a bound nor breaks
    the guarantee where it holds.

    *Relations.* One line per row of ``A``: right-hand side, number of terms, ``:``, then
    the terms with negative coefficients first and the others after, each group in
    ascending cell order. For the usual rows (one total with ``-1``, parts with ``+1``)
    this is tau-ARGUS's layout, ``0 4 : 1 (-1) 2 (1) 3 (1) 4 (1)``. Integer coefficients
    are written as integers, as tau-ARGUS reads them (``%d``); a non-integer coefficient is
    written in full and can then only be read by readers that accept reals (this one does).

    References
    ----------
    .. [1] Hundepool, A. et al. *tau-ARGUS version 4.1 user's manual*, section 5.5 (JJ format).
    .. [2] Statistics Netherlands, libtauargus ``src/JJFormat.cpp`` (``WriteCells``,
       ``WriteRestrictions``) and tauhitas ``src/HiTaSCtrl.cpp`` (``FullJJ`` reader).

    Examples
    --------
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"value": [3.0, 1.0, 2.0], "status": ["s", "u", "s"],
    ...                       "upl": [0, 1.5, 0], "lpl": [0, 1.5, 0]})
    >>> table = Table(cells, [[-1, 1, 1]], [0])
    >>> print(format_jj_parts(table.cells, table.A, table.b), end="")
    0
    3
    0 3 3 s 0 4.5 0 0 0
    1 1 1 u 0 4.5 1.5 1.5 0
    2 2 2 s 0 4.5 0 0 0
    1
    0 3 : 0 (-1) 1 (1) 2 (1)
    """
    if decimals is not None and (int(decimals) != decimals or decimals < 0):
        raise InputError(f"decimals must be a non-negative integer, got {decimals!r}")
    label = cell_numbers(cells) if cell_label is None else cell_label
    A, b = sp.csr_array(A), np.asarray(b, dtype=float)
    n = len(cells)
    if positional:
        _check_positions(cells, label)
    value, lpl, upl, spl = (_finite_column(cells, c, label) for c in ("value", "lpl", "upl", "spl"))
    dec_pl = None if decimals is None else decimals + 3
    if decimals is not None:  # bounds are derived from the numbers as written
        value, spl = _as_written(value, decimals), _as_written(spl, decimals)
        lpl, upl = _as_written(lpl, dec_pl), _as_written(upl, dec_pl)
    lb, ub = _jj_bounds(cells, label, value, lpl, upl, ub_default, lb_default, widen_bounds)
    if decimals is not None:
        lb, ub = _round_outward(lb, decimals, up=False), _round_outward(ub, decimals, up=True)
    cell_lines = map(
        " ".join,
        zip(
            np.arange(n).astype(str).tolist(), _numbers(value, decimals),
            _numbers(_jj_weights(cells, label, max_scaled_cost)),
            _jj_status(cells, status_map), _numbers(lb, decimals), _numbers(ub, decimals),
            _numbers(lpl, dec_pl), _numbers(upl, dec_pl), _numbers(spl, decimals), strict=True,
        ),
    )
    parts = ["0", str(n), *cell_lines, str(A.shape[0])]
    if A.shape[0]:
        parts.append(_relation_text(A, b))
    return "\n".join(parts) + "\n"


def _check_positions(cells: pd.DataFrame, label: Callable[[Sequence[int]], list[str]]) -> None:
    labels = cells.index
    if labels.equals(pd.RangeIndex(len(labels))):
        return
    differs = np.asarray(labels, dtype=object) != np.arange(len(labels))
    k = int(np.flatnonzero(differs)[0])
    raise JJFormatError(
        f"{label([k])[0]} is at position {k}: JJ numbers cells by position, so a table "
        "without dimensions must have the cell index 0 .. n-1 (use cells.reset_index(drop=True))"
    )


def _finite_column(cells: pd.DataFrame, column: str,
                   label: Callable[[Sequence[int]], list[str]]) -> np.ndarray:
    values = cells[column].to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise InputError(f"{label(bad[:1])[0]} has {column} {values[bad[0]]}; "
                         "JJ needs finite numbers")
    return values


def _jj_weights(cells: pd.DataFrame, label: Callable[[Sequence[int]], list[str]],
                max_scaled_cost: int) -> np.ndarray:
    """Integer weights unchanged; otherwise tau-ARGUS's scaling (see :func:`format_jj_parts`)."""
    weight = _finite_column(cells, "cost", label)
    if np.array_equal(weight, np.trunc(weight)):
        return weight
    negative = np.flatnonzero(weight < 0)
    if len(negative):
        raise InputError(
            f"{label(negative[:1])[0]} has weight {weight[negative[0]]}; non-integer weights "
            "are scaled to integers for JJ, which needs non-negative weights"
        )
    scaled = np.trunc(weight * max_scaled_cost / weight.max() + 0.5)
    return np.where(scaled == 0, 1.0, scaled)


def _jj_bounds(
    cells: pd.DataFrame,
    label: Callable[[Sequence[int]], list[str]],
    value: np.ndarray,
    lpl: np.ndarray,
    upl: np.ndarray,
    ub_default: float | None,
    lb_default: float | None,
    widen: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Finite bounds to write (see the Notes of :func:`format_jj_parts`)."""
    lb = cells["lb"].to_numpy(dtype=float)
    ub = cells["ub"].to_numpy(dtype=float)
    for name, bad, sign in (("lb", lb == np.inf, "+"), ("ub", ub == -np.inf, "-")):
        if bad.any():
            raise InputError(f"{label(np.flatnonzero(bad)[:1])[0]} has {name} {sign}inf")
    scale = BOUND_FACTOR * (np.abs(value).max() if len(value) else 0.0)
    low, high = value - np.maximum(lpl, 0), value + np.maximum(upl, 0)
    lb_fill = -scale if lb_default is None else lb_default
    ub_fill = scale if ub_default is None else ub_default
    lb = np.where(np.isinf(lb), np.minimum(lb_fill, low), lb)
    ub = np.where(np.isinf(ub), np.maximum(ub_fill, high), ub)
    if widen:
        lb, ub = np.minimum(lb, low), np.maximum(ub, high)
    return lb, ub


def _as_written(values: np.ndarray, decimals: int) -> np.ndarray:
    """The numbers a reader gets back from ``values`` written with ``decimals`` decimals."""
    return np.fromiter(map(float, _numbers(values, decimals)), dtype=np.float64,
                       count=len(values))


def _round_outward(values: np.ndarray, decimals: int, up: bool) -> np.ndarray:
    """Round to ``decimals`` decimals, up (or down) where the nearest is below (above)."""
    nearest = _as_written(values, decimals)
    step = 10.0**-decimals
    if up:
        return np.where(nearest < values, nearest + step, nearest)
    return np.where(nearest > values, nearest - step, nearest)


def _jj_status(cells: pd.DataFrame, status_map: Mapping[str, str] | None) -> list[str]:
    status = cells["status"].astype(str)
    if status_map:
        unknown = sorted(set(status_map.values()) - set(STATUS_CODES))
        if unknown:
            raise InputError(
                f"status_map writes {unknown[0]!r}, which is not one of {' '.join(STATUS_CODES)}"
            )
        status = status.replace(dict(status_map))
    return status.tolist()


def _numbers(values: np.ndarray, decimals: int | None = None) -> list[str]:
    """Numbers as JJ tokens: fixed decimals, or the shortest exact positional form."""
    values = np.asarray(values, dtype=float)
    if decimals is not None:
        return [f"{v:.{decimals}f}" for v in values.tolist()]
    out = np.empty(len(values), dtype=object)
    exact_int = (values == np.trunc(values)) & (np.abs(values) < 2.0**53)
    out[exact_int] = values[exact_int].astype(np.int64).astype(str).tolist()
    rest = np.flatnonzero(~exact_int)
    out[rest] = [_shortest(v) for v in values[rest].tolist()]
    return out.tolist()


def _shortest(value: float) -> str:
    """Shortest decimal that reads back to ``value``, without an exponent."""
    if value == int(value):
        return f"{value:.0f}"  # exact digits of a large integral float
    text = repr(value)
    return np.format_float_positional(value) if "e" in text else text


def _relation_text(A: sp.csr_array, b: np.ndarray) -> str:
    """Relation lines: ``rhs k : j (c) ...`` with negative coefficients first."""
    coo = A.tocoo()
    order = np.lexsort((coo.col, coo.data >= 0, coo.row))
    rows, cols, coefs = coo.row[order], coo.col[order], coo.data[order]
    counts = np.bincount(rows, minlength=A.shape[0])
    terms = list(map("{} ({})".format, cols.astype(str).tolist(), _numbers(coefs)))
    heads = list(map("{} {} :".format, _numbers(b), counts.tolist()))
    starts = np.cumsum(counts) - counts
    # heads inserted before the terms of their row; a newline before each head, blanks
    # before each term; the leading newline is dropped.
    pieces = np.insert(np.array(terms, dtype=object), starts, np.array(heads, dtype=object))
    separators = np.full(len(pieces), " ", dtype=object)
    separators[starts + np.arange(len(starts))] = "\n"
    return "".join((separators + pieces).tolist())[1:]
