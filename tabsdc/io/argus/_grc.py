"""tau-ARGUS global recodes (``.grc``) and tree recodes.

A recode file (manual 5.4) gives a new code per line and the old codes it replaces: single
codes separated by commas and intervals ``low-high`` (an open end takes every code below or
above), e.g. ``1: -49``, ``3: 05-07``, ``1: 02-06, 09``. Codes not listed keep their code.
Intervals compare numerically when the bounds and the code are numbers, else as text.
``<MISSING>`` and ``<CODELIST>`` lines (new missing code, codelist of the new codes) are
read too. A file starting with ``<TREERECODE>`` lists codes of a hierarchical variable whose
subtree is closed: the code becomes a leaf and takes the records of every code below it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tabsdc._hierarchy import Hierarchy
from tabsdc.io.argus._syntax import content_lines, split_tokens

_INTERVAL = re.compile(r"(.*?)\s*[-\u2013]\s*(.*)")


@dataclass(frozen=True)
class Recode:
    """A recode: ``rules`` ``(new code, [(low, high), ...])`` with single codes as
    ``(code, code)`` and open ends as ``None``; or, for a tree recode, ``tree_codes``."""

    rules: tuple[tuple[str, tuple[tuple[str | None, str | None], ...]], ...] = ()
    tree_codes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    codelist: str = ""

    @property
    def is_tree(self) -> bool:
        return bool(self.tree_codes)

    def mapping(self, codes: Iterable[str]) -> dict[str, str]:
        """New code of every code in ``codes`` (unchanged when no rule takes it).

        Examples
        --------
        >>> parse_grc("1:1-5\\n2: 7, 9-").mapping(["1", "5", "6", "7", "12"])
        {'1': '1', '5': '1', '6': '6', '7': '2', '12': '2'}
        """
        result = {}
        for code in codes:
            result[code] = code
            for new, items in self.rules:
                if any(_within(code, low, high) for low, high in items):
                    result[code] = new
                    break
        return result


def read_grc(path: str | Path) -> Recode:
    """Read a ``.grc`` file (see :func:`parse_grc`)."""
    path = Path(path)
    return parse_grc(path.read_text(encoding="latin-1"), path=str(path))


def parse_grc(text: str, path: str = "<text>") -> Recode:
    """Parse the text of a recode file.

    Raises
    ------
    ArgusFormatError
        Naming file and line: a line without the colon after the new code, an empty code
        set.

    Examples
    --------
    >>> parse_grc("<TREERECODE>\\n142\\n1500\\n").tree_codes
    ('142', '1500')
    """
    lines = list(content_lines(text, path))
    if lines and lines[0].text.upper().startswith("<TREERECODE>"):
        return Recode(tree_codes=tuple(line.text.strip() for line in lines[1:]))
    rules, missing, codelist = [], (), ""
    for line in lines:
        if line.text.startswith("<"):
            tokens = split_tokens(line.text)
            if tokens[0] == "<MISSING>":
                missing = tuple(tokens[1:])
            elif tokens[0] == "<CODELIST>" and len(tokens) > 1:
                codelist = tokens[1]
            else:
                raise line.error(f"field 1: unknown keyword {tokens[0]}")
            continue
        new, colon, rest = line.text.partition(":")
        if not colon:
            raise line.error("field 1: no ':' after the new code (manual 5.4: 'new: old codes')")
        items = tuple(_item(line, part) for part in rest.split(",") if part.strip())
        if not items:
            raise line.error(f"field 2: no old codes for new code {new.strip()!r}")
        rules.append((new.strip(), items))
    return Recode(tuple(rules), missing=missing, codelist=codelist)


def _item(line, part: str) -> tuple[str | None, str | None]:
    part = part.strip()
    interval = _INTERVAL.fullmatch(part)
    if interval is None:
        return part, part
    low, high = (bound or None for bound in interval.groups())
    if low is None and high is None:
        raise line.error(f"field 2: interval {part!r} has no bounds")
    return low, high


def _within(code: str, low: str | None, high: str | None) -> bool:
    values = [code, low, high]
    try:
        numbers = [float(v) if v is not None else None for v in values]
        key, lo, hi = numbers
    except ValueError:
        key, lo, hi = values
    return (lo is None or lo <= key) and (hi is None or key <= hi)


def close_subtrees(hierarchy: Hierarchy, codes: Iterable[str]) -> tuple[Hierarchy, dict[str, str]]:
    """Close the subtrees of ``codes``: they become leaves. Returns the new hierarchy and
    the new code of every code that disappears (its closed ancestor).

    Examples
    --------
    >>> h = Hierarchy({"A": "T", "A1": "A", "A2": "A", "B": "T"}, root="T")
    >>> new, moved = close_subtrees(h, ["A"])
    >>> new.codes, moved
    (('T', 'A', 'B'), {'A1': 'A', 'A2': 'A'})
    """
    closed = [c for c in codes if c in hierarchy]
    moved: dict[str, str] = {}
    for code in hierarchy.codes:
        for ancestor in _ancestors(hierarchy, code):
            if ancestor in closed:
                moved[code] = ancestor
    # the outermost closed ancestor wins
    for code in list(moved):
        outer = [a for a in _ancestors(hierarchy, code) if a in closed]
        moved[code] = outer[-1]
    parents = {c: p for c, p in hierarchy.parents.items() if c not in moved}
    return Hierarchy(parents, root=hierarchy.root), moved


def close_below_depth(hierarchy: Hierarchy, depth: int) -> tuple[Hierarchy, dict[str, str]]:
    """Close every code at ``depth`` (total = 0) that has children: the hierarchy keeps
    ``depth`` levels below its total (tau-ARGUS's ``<RECODE> tab, var, n``)."""
    return close_subtrees(hierarchy, [c for c in hierarchy.codes
                                      if hierarchy.depth(c) == depth and hierarchy.children(c)])


def _ancestors(hierarchy: Hierarchy, code: str) -> list[str]:
    """Ancestors of ``code``, nearest first, the total excluded."""
    chain = []
    while code in hierarchy.parents and hierarchy.parents[code] != hierarchy.root:
        code = hierarchy.parents[code]
        chain.append(code)
    return chain
