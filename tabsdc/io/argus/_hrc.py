"""Hierarchies of tau-ARGUS: ``.hrc`` files and ``<HIERLEVELS>`` code structures.

An ``.hrc`` file (manual 5.2) lists the codes of a hierarchical variable in depth-first order,
one per line, each preceded by the lead string (``<HIERLEADSTRING>``, often ``@``) once per
level below the top; the total is not written::

    Nr
    @ 1
    @ 2
    Os
    @ 4

``<HIERLEVELS> 3 1 1 0 0`` derives the hierarchy from the code itself: the first 3
characters are the top level, the 4th the next, the 5th the lowest (a parent is a prefix).
A variable's missing codes sit directly under its total, as tau-ARGUS puts them. Codes are
compared without surrounding blanks (``" 1"`` and ``"1"`` are one code).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from sdcreport._files import write_text
from tabsdc._errors import HierarchyError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc.io.argus._syntax import ArgusFormatError


def read_hrc(path: str | Path, lead: str = "@", total: str = DEFAULT_TOTAL) -> Hierarchy:
    """Read an ``.hrc`` file into a :class:`~tabsdc._hierarchy.Hierarchy` rooted at ``total``."""
    path = Path(path)
    return parse_hrc(path.read_text(encoding="latin-1"), lead, total, path=str(path))


def parse_hrc(text: str, lead: str = "@", total: str = DEFAULT_TOTAL,
              path: str = "<text>") -> Hierarchy:
    """Parse the text of an ``.hrc`` file (see :func:`read_hrc`).

    Raises
    ------
    ArgusFormatError
        Naming file and line: a code more than one level below the code before it, an empty
        code, or a code listed twice.

    Examples
    --------
    >>> h = parse_hrc("Nr\\n@ 1\\n@ 2\\nOs\\n@ 4\\n")
    >>> h.codes, h.children("Nr")
    (('Total', 'Nr', '1', '2', 'Os', '4'), ('1', '2'))
    """
    if not lead:
        raise ArgusFormatError(f"{path}: the lead string (<HIERLEADSTRING>) is empty")
    parents: dict[str, str] = {}
    stack = [total]
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        depth, rest = 0, raw
        while rest.startswith(lead):
            depth, rest = depth + 1, rest[len(lead):]
        code = rest.strip()
        where = f"{path}, line {number}"
        if not code:
            raise ArgusFormatError(f"{where}: no code after the lead strings")
        if depth > len(stack) - 1:
            raise ArgusFormatError(f"{where}: code {code!r} is {depth} levels deep but the "
                                   f"code before it only {len(stack) - 2}")
        if code in parents or code == total:
            raise ArgusFormatError(f"{where}: code {code!r} is listed twice")
        del stack[depth + 1:]
        parents[code] = stack[-1]
        stack.append(code)
    return Hierarchy(parents, root=total)


def format_hrc(hierarchy: Hierarchy, lead: str = "@") -> str:
    """The ``.hrc`` text of ``hierarchy`` (total left out, as tau-ARGUS writes it).

    Examples
    --------
    >>> h = parse_hrc("A\\n@1\\n@2\\nB\\n")
    >>> format_hrc(h)
    'A\\n@1\\n@2\\nB\\n'
    >>> parse_hrc(format_hrc(h)) == h
    True
    """
    return "".join(lead * (hierarchy.depth(code) - 1) + code + "\n"
                   for code in hierarchy.codes[1:])


def write_hrc(hierarchy: Hierarchy, path: str | Path, lead: str = "@") -> Path:
    """Write ``hierarchy`` as an ``.hrc`` file; returns the path."""
    return write_text(path, format_hrc(hierarchy, lead), encoding="latin-1")


def hierarchy_from_levels(codes: Iterable[str], levels: Sequence[int],
                          total: str = DEFAULT_TOTAL, missing: Sequence[str] = ()) -> Hierarchy:
    """The hierarchy ``<HIERLEVELS>`` describes: parents are prefixes of the given widths.

    ``levels`` are the widths of the levels (zeros ignored); codes listed in ``missing`` go
    directly under the total.

    Examples
    --------
    >>> h = hierarchy_from_levels(["14211", "14212", "15000"], [3, 1, 1, 0, 0])
    >>> h.children("Total"), h.children("142"), h.children("1421")
    (('142', '150'), ('1421',), ('14211', '14212'))
    """
    lengths = [int(sum(levels[: i + 1])) for i, width in enumerate(levels) if width > 0]
    codes = list(dict.fromkeys(codes))
    missing_set = set(missing)
    try:
        hierarchy = Hierarchy.from_prefixes([c for c in codes if c not in missing_set],
                                            lengths, total=total)
    except HierarchyError as error:
        raise HierarchyError(f"<HIERLEVELS> {' '.join(map(str, levels))}: {error}") from None
    return with_missing_codes(hierarchy, [c for c in codes if c in missing_set])


def with_missing_codes(hierarchy: Hierarchy, codes: Iterable[str]) -> Hierarchy:
    """``hierarchy`` with ``codes`` (missing-value codes) added directly under the total."""
    extra = [c for c in dict.fromkeys(codes) if c not in hierarchy]
    if not extra:
        return hierarchy
    return Hierarchy({**hierarchy.parents, **{c: hierarchy.root for c in extra}},
                     root=hierarchy.root)
