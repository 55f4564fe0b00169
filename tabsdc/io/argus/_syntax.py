"""The lexical rules shared by tau-ARGUS's text files: lines, tokens, numbers and file names.

tau-ARGUS reads its metadata and batch files line by line: blank lines and lines starting
with ``//`` are skipped, tabs count as blanks, a token is either a double-quoted string
(quotes removed, blanks inside kept) or a run of characters up to the next blank, and
keywords in ``<...>`` are case-insensitive (manual sections 5.1 and 5.7). File names in these
files are often Windows paths of the machine that wrote them (``C:\\data\\x.asc``) and use
another letter case than the file on disk (``REGION.CDL`` for ``region.cdl``);
:func:`resolve_path` finds the file next to the job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

from tabsdc._errors import InputError

_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')


class ArgusFormatError(InputError):
    """A tau-ARGUS file that cannot be used as written; the message names file and line."""


@dataclass(frozen=True)
class SourceLine:
    """One content line of a tau-ARGUS file: its text (stripped) and 1-based line number."""

    path: str
    number: int
    text: str

    def error(self, message: str) -> ArgusFormatError:
        """An error that names this line's file and number."""
        return ArgusFormatError(f"{self.path}, line {self.number}: {message}")


def content_lines(text: str, path: str = "<text>") -> Iterator[SourceLine]:
    """The lines that carry content: stripped, tabs as blanks, no blanks, no ``//`` comments.

    Examples
    --------
    >>> [(line.number, line.text) for line in content_lines("// job\\n\\n<READTABLE>\\n")]
    [(3, '<READTABLE>')]
    """
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.replace("\t", " ").strip()
        if line and not line.startswith("//"):
            yield SourceLine(path, number, line)


def split_tokens(text: str) -> list[str]:
    """Blank-separated tokens, double quotes removed; ``<KEYWORDS>`` upper-cased.

    Examples
    --------
    >>> split_tokens('Region 12 2 "99" <hierleadstring> "@"')
    ['Region', '12', '2', '99', '<HIERLEADSTRING>', '@']
    >>> split_tokens('<CODELIST> "my codes.cdl"')
    ['<CODELIST>', 'my codes.cdl']
    """
    tokens = []
    for match in _TOKEN.finditer(text):
        quoted, bare = match.groups()
        if bare is None:
            tokens.append(quoted)
        else:
            tokens.append(bare.upper() if bare.startswith("<") and bare.endswith(">") else bare)
    return tokens


def parse_number(text: str, decimal_comma: bool = False) -> float:
    """A number as tau-ARGUS files write it; ``decimal_comma`` reads ``1234,56``.

    Raises ``ValueError`` for text that is not a number.

    Examples
    --------
    >>> parse_number("16847646,84", decimal_comma=True)
    16847646.84
    """
    text = text.strip()
    if decimal_comma:
        text = text.replace(",", ".")
    return float(text)


def resolve_path(name: str, folder: Path) -> Path:
    """The file a job names, found relative to the job's folder.

    Tried in turn: the name as a path (relative names against ``folder``), then the file
    name alone in ``folder`` (what tau-ARGUS does for a data folder that moved, and the only
    choice for a Windows path such as ``C:\\TauArgus\\data\\x.asc`` on another system), each
    also with the letter case ignored. Returns the first candidate that exists, else the
    name as a path under ``folder`` (so that the caller's error names it).

    Examples
    --------
    >>> resolve_path("C:\\\\TauArgus\\\\data\\\\pp.tab", Path("/jobs")).as_posix()
    '/jobs/pp.tab'
    """
    windows = PureWindowsPath(name)
    is_windows = bool(windows.drive) or "\\" in name
    given = Path(*windows.parts[1:] if windows.drive else windows.parts) if is_windows \
        else Path(name)
    direct = given if given.is_absolute() and not windows.drive else folder / given
    for candidate in (direct, folder / given.name):
        found = _existing(candidate)
        if found is not None:
            return found
    return folder / given.name if windows.drive else direct


def output_path(name: str, folder: Path) -> tuple[Path, str]:
    """Where a job writes the file it names, and a note when that is not the name as written.

    A relative name is taken relative to ``folder`` (the batch file's folder), with its
    folders, whichever separator it uses (``"out\\a.csv"`` and ``"out/a.csv"`` are
    ``folder/out/a.csv``); an absolute name is used as it is. A name with a drive letter or a
    network share (``C:\\TauArgus\\out\\x.csv``) is a path of a Windows machine: on another
    system the file goes to ``folder`` under its file name, and the note says so.

    Examples
    --------
    >>> path, note = output_path("out\\\\a.csv", Path("/jobs"))
    >>> path.as_posix(), note
    ('/jobs/out/a.csv', '')
    >>> output_path("sub/b.csv", Path("/jobs"))[0].as_posix()
    '/jobs/sub/b.csv'
    """
    windows = PureWindowsPath(name)
    if (windows.drive or windows.root and "\\" in name) and os.name != "nt":
        path = folder / windows.name
        return path, f"{name} is a path of a Windows machine: written as {path}"
    given = Path(*windows.parts) if "\\" in name else Path(name)
    return (given if given.is_absolute() else folder / given), ""


def _existing(candidate: Path) -> Path | None:
    if candidate.exists():
        return candidate
    parent = candidate.parent
    if parent.is_dir():
        wanted = candidate.name.lower()
        for entry in parent.iterdir():
            if entry.name.lower() == wanted:
                return entry
    return None


def quote(text: str) -> str:
    """``text`` in double quotes, as tau-ARGUS writes names and codes."""
    return f'"{text}"'
