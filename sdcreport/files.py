"""Files written whole or not at all, and output paths checked before any work starts.

Every writer of the toolkit (tables, JJ files, publishable files, reports, masked microdata)
writes through :func:`atomic_write`: the content goes to a temporary file in the folder of the
destination, which is renamed into place (:func:`os.replace`, atomic on POSIX and Windows) only
once it is complete. A run that fails or is interrupted while writing leaves the previous file,
if any, untouched and no partial file behind.

:func:`check_output_paths` is what a command line runs before it starts a long computation:
every output must be a file in a folder that exists (or is created on request) and can be
written, no output may be an input, and no two outputs may share a path.

Every file that holds unpublished values (tables with all their cells, JJ files, reports,
result summaries) says so of itself with :data:`CONFIDENTIAL`: as its first line where the
format allows a comment (:func:`confidential_lines` tells a reader how many lines to skip), as
a JSON field (:data:`CONFIDENTIAL_FIELD`), or as a banner of a report. Publishable files carry
no such mark: they are written by :func:`tabsdc.release.write_release` alone.

This module imports nothing of the methods, so both :mod:`tabsdc` and :mod:`microsdc` use it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["OutputPathError", "atomic_write", "write_text", "check_output_paths",
           "CONFIDENTIAL", "CONFIDENTIAL_FIELD", "CSV_MARK", "confidential_lines"]

#: The JSON field an internal summary or report starts with: ``"confidential": "contains
#: unpublished values"``.
CONFIDENTIAL_FIELD = ("confidential", "contains unpublished values")

#: What an internal file says of itself.
CONFIDENTIAL = ": ".join(CONFIDENTIAL_FIELD)

#: The first line of an internal CSV file (a comment line: ``pandas.read_csv(...,
#: skiprows=confidential_lines(text))`` reads the file below it).
CSV_MARK = f"# {CONFIDENTIAL}"


def confidential_lines(text: str) -> int:
    """How many lines at the start of ``text`` are the confidentiality mark (0 or 1).

    Examples
    --------
    >>> confidential_lines(CSV_MARK + "\\nr,value\\n"), confidential_lines("r,value\\n")
    (1, 0)
    """
    return int(text.split("\n", 1)[0].rstrip("\r") == CSV_MARK)


class OutputPathError(ValueError):
    """An output path that cannot or must not be written (named in the message)."""


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike, mode: str = "w", **open_kwargs
) -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it to ``path`` when the block succeeds.

    Parameters
    ----------
    path : str or path-like
        The destination. Its folder must exist.
    mode : {"w", "wb"}
        Text or binary.
    **open_kwargs
        Passed to :func:`open` (``encoding``, ``newline``).

    Yields
    ------
    file object
        The temporary file. If the block raises (or is interrupted), the temporary file is
        removed and ``path`` is left as it was.

    Raises
    ------
    OutputPathError
        ``path`` is a folder, or its folder does not exist.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = Path(tmp) / "a.txt"
    ...     with atomic_write(target, encoding="utf-8") as stream:
    ...         _ = stream.write("kept")
    ...     try:
    ...         with atomic_write(target, encoding="utf-8") as stream:
    ...             _ = stream.write("half")
    ...             raise RuntimeError("stopped")
    ...     except RuntimeError:
    ...         pass
    ...     target.read_text(), sorted(p.name for p in Path(tmp).iterdir())
    ('kept', ['a.txt'])
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    if path.is_dir():
        raise OutputPathError(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise OutputPathError(f"cannot write {path}: the folder {path.parent} does not exist")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                             dir=path.parent if str(path.parent) else ".")
    try:
        with open(descriptor, mode, **open_kwargs) as stream:
            yield stream
        if path.exists():  # keep the permissions of the file replaced
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write`); returns the path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_text(Path(tmp) / "r.txt", "done").read_text()
    'done'
    """
    with atomic_write(path, encoding=encoding) as stream:
        stream.write(text)
    return Path(path)


def check_output_paths(
    outputs: Iterable[tuple[str, str | os.PathLike]],
    inputs: Iterable[str | os.PathLike] = (),
    *,
    force: bool = False,
    mkdir: bool = False,
) -> None:
    """Check, before any work, that every output can be written and overwrites nothing it
    must not.

    Parameters
    ----------
    outputs : iterable of (name, path)
        Each output with the name the message uses for it (e.g. ``"--out"``).
    inputs : iterable of path
        Files the run reads; an output on one of them is refused unless ``force``.
    force : bool
        Allow an output to replace an input file.
    mkdir : bool
        Create missing output folders (otherwise a missing folder is an error).

    Raises
    ------
    OutputPathError
        An output that is a folder, in a folder that does not exist or cannot be written, a
        file that cannot be written, an input file (without ``force``), or a path given to two
        outputs.

    Examples
    --------
    >>> check_output_paths([("--out", "a.csv"), ("--json", "./a.csv")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sdcreport.files.OutputPathError: --out and --json are the same file a.csv; give each ...
    >>> check_output_paths([("--out", "data.csv")], inputs=["data.csv"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sdcreport.files.OutputPathError: --out data.csv is an input file; it would be overwritten ...
    """
    seen: dict[Path, str] = {}
    read = {Path(p).resolve() for p in inputs}
    for name, given in outputs:
        path = Path(given)
        resolved = path.resolve()
        if resolved in seen:
            raise OutputPathError(f"{seen[resolved]} and {name} are the same file {path}; "
                                  "give each its own path")
        seen[resolved] = name
        if path.is_dir():
            raise OutputPathError(f"{name} {path} is a folder; give a file name")
        if resolved in read and not force:
            raise OutputPathError(f"{name} {path} is an input file; it would be overwritten "
                                  "(give --force to allow it)")
        folder = resolved.parent
        if not folder.exists():
            if not mkdir:
                raise OutputPathError(f"{name} {path}: the folder {path.parent} does not exist "
                                      "(create it, or give --mkdir)")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise OutputPathError(f"{name} {path}: cannot create the folder "
                                      f"{path.parent}: {error.strerror}") from None
        if not folder.is_dir():
            raise OutputPathError(f"{name} {path}: {path.parent} is not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputPathError(f"{name} {path}: the folder {path.parent} is not writable")
        if path.exists() and not os.access(path, os.W_OK):
            raise OutputPathError(f"{name} {path} exists and is not writable")
