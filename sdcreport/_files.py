"""Files written whole or not at all, and output paths checked before any work starts.

Every writer of the toolkit (tables, JJ files, publishable files, reports, masked microdata)
writes through :func:`atomic_write`: the content goes to a temporary *part file* in the
folder of the destination, ``.NAME.PID.TOKEN.part`` (``PID``: the writing process), which is
flushed to the disk and renamed into place (:func:`os.replace`, atomic on POSIX and Windows)
only once it is complete. A run that fails or is interrupted while writing leaves the previous
file, if any, untouched and no partial file behind. A destination that is a symbolic link is
written through: the link's target is replaced, the link kept.

A process killed outright (SIGKILL, a power cut) cannot remove its part file; the next write
to the same destination removes every part file of it whose writer process no longer exists
(on POSIX, where a process can be looked up by its number; same machine).

A full disk (or any other error of the file system while writing) is an
:class:`OutputPathError` naming the file, and for a full disk the space left.

:func:`all_or_none` makes the outputs of one command land together: within the block every
:func:`atomic_write` only stages its part file, and when the block ends without an error all
of them replace their destinations; on an error (or an interrupt), even while they are being
replaced, every destination is left, or put back, as it was.

:func:`check_output_paths` is what a command line runs before it starts a long computation:
every output must be a file in a folder that exists (or is created on request) and can be
written, no output may be an input, and no two outputs may share a path.

Every file that holds unpublished values (tables with all their cells, JJ files, reports,
result summaries) says so of itself with :data:`CONFIDENTIAL`: as its first line where the
format allows a comment (:func:`confidential_lines` tells a reader how many lines to skip), as
a JSON field (:data:`CONFIDENTIAL_FIELD`), or as a banner of a report. Publishable files carry
no such mark: they are written by :func:`tabsdc._release.write_release` alone.

This module imports nothing of the methods, so both :mod:`tabsdc` and :mod:`microsdc` use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO

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

    __module__ = "sdcreport"  # where users find it, not the private module


#: Errors of a file system that has no room left (a full disk, a full quota).
_FULL = (errno.ENOSPC, errno.EDQUOT) if hasattr(errno, "EDQUOT") else (errno.ENOSPC,)

#: The part files of the current :func:`all_or_none` block: (part, destination) pairs.
_staged: ContextVar[list[tuple[Path, Path]] | None] = ContextVar("sdcreport_staged",
                                                                 default=None)


def destination(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symbolic link
    ``path`` points to (followed to its end).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "real.csv").write_text("x")
    ...     (Path(tmp) / "link.csv").symlink_to("real.csv")
    ...     destination(Path(tmp) / "link.csv").name, destination(Path(tmp) / "new.csv").name
    ('real.csv', 'new.csv')
    """
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _part(path: Path) -> Path:
    """A new part file's name for ``path``: ``.NAME.PID.TOKEN.part`` in its folder."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie does not count); True where that cannot be
    told (not POSIX)."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    with contextlib.suppress(OSError, IndexError):  # Linux: a zombie has ended
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        return state != "Z"
    return True


def remove_stale_parts(path: Path) -> list[Path]:
    """Remove the part files of ``path`` whose writer process no longer exists; returns
    them.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     stale = Path(tmp) / ".out.csv.999999999.0a1b2c3d.part"  # no such process
    ...     _ = stale.write_text("half")
    ...     mine = _part(Path(tmp) / "out.csv")
    ...     _ = mine.write_text("being written")
    ...     [p.name for p in remove_stale_parts(Path(tmp) / "out.csv")], mine.exists()
    (['.out.csv.999999999.0a1b2c3d.part'], True)
    """
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[0-9a-f]+\.part")
    folder = path.parent
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = pattern.fullmatch(entry.name)
            if match and not _alive(int(match.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(entry.path)
                    removed.append(folder / entry.name)
    return removed


def _size(count: float) -> str:
    """A number of bytes for a message.

    Examples
    --------
    >>> _size(0), _size(1536), _size(3.2e9)
    ('0 bytes', '1.5 KiB', '2.98 GiB')
    """
    if count < 1024:
        return f"{int(count)} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        count /= 1024
        if count < 1024 or unit == "TiB":
            break
    return f"{count:.3g} {unit}"


def _write_error(path: Path, error: OSError) -> OutputPathError:
    """The error of a file system that failed while ``path`` was written, naming it (and,
    for a full disk, the space left)."""
    if error.errno in _FULL:
        try:
            free = f"{_size(shutil.disk_usage(path.parent).free)} free"
        except OSError:
            free = "free space unknown"
        return OutputPathError(f"cannot write {path}: no space left on the device ({free} in "
                               f"{path.parent}); nothing was replaced")
    return OutputPathError(f"cannot write {path}: {error.strerror or error}")


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike, mode: str = "w", **open_kwargs
) -> Iterator[IO]:
    """Open a part file beside ``path``; rename it to ``path`` when the block succeeds.

    Parameters
    ----------
    path : str or path-like
        The destination (a symbolic link: the file it points to). Its folder must exist.
    mode : {"w", "wb"}
        Text or binary.
    **open_kwargs
        Passed to :func:`open` (``encoding``, ``newline``).

    Yields
    ------
    file object
        The part file. If the block raises (or is interrupted), the part file is removed
        and ``path`` is left as it was. Within :func:`all_or_none` the part file replaces
        ``path`` only when that block ends.

    Raises
    ------
    OutputPathError
        ``path`` is a folder, its folder does not exist, or the file system failed while
        writing (a full disk: the space left is named).

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
    path = destination(path)
    if path.is_dir():
        raise OutputPathError(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise OutputPathError(f"cannot write {path}: the folder {path.parent} does not exist")
    remove_stale_parts(path)
    temporary = _part(path)
    try:
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with open(descriptor, mode, **open_kwargs) as stream:
                yield stream
                stream.flush()
                os.fsync(stream.fileno())
        except OSError as error:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
            raise _write_error(path, error) from error
        if path.exists():  # keep the permissions of the file replaced
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        staged = _staged.get()
        if staged is None:
            os.replace(temporary, path)
        else:
            staged.append((temporary, path))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


@contextlib.contextmanager
def all_or_none() -> Iterator[None]:
    """Every :func:`atomic_write` of the block lands, or none does.

    Within the block the writers only stage their part files. When the block ends without
    an error, each destination that exists is first kept aside (a hard link, or a copy where
    the file system has none), then every part file replaces its destination; an error or an
    interrupt while they do puts every destination back. When the block raises, the part
    files are removed and nothing is replaced. A block within another joins it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first, second = Path(tmp) / "a.csv", Path(tmp) / "b.json"
    ...     _ = first.write_text("old")
    ...     try:
    ...         with all_or_none():
    ...             _ = write_text(first, "new")
    ...             raise OSError("the second output failed")
    ...     except OSError:
    ...         pass
    ...     first.read_text(), second.exists(), sorted(p.name for p in Path(tmp).iterdir())
    ('old', False, ['a.csv'])
    """
    if _staged.get() is not None:
        yield
        return
    staged: list[tuple[Path, Path]] = []
    token = _staged.set(staged)
    try:
        yield
    except BaseException:
        for temporary, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
        raise
    finally:
        _staged.reset(token)
    _replace_all(staged)


def _replace_all(staged: list[tuple[Path, Path]]) -> None:
    """Replace every destination by its part file, all or none (see :func:`all_or_none`)."""
    kept: list[tuple[Path, Path | None]] = []
    replaced: list[tuple[Path, Path | None]] = []
    try:
        for _, path in staged:
            kept.append((path, _keep_aside(path) if path.exists() else None))
        for (temporary, path), pair in zip(staged, kept, strict=True):
            os.replace(temporary, path)
            replaced.append(pair)
    except BaseException:
        for path, previous in reversed(replaced):
            with contextlib.suppress(OSError):
                if previous is None:
                    os.remove(path)
                else:
                    os.replace(previous, path)
        for temporary, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
        raise
    finally:
        for _, previous in kept:
            if previous is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(previous)


def _keep_aside(path: Path) -> Path:
    """A second name for the file ``path`` (a part file of it), to put it back from."""
    aside = _part(path)
    try:
        os.link(path, aside)
    except OSError:
        try:
            shutil.copy2(path, aside)
        except OSError as error:
            raise _write_error(path, error) from error
    return aside


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
    sdcreport.OutputPathError: --out and --json are the same file a.csv; give each ...
    >>> check_output_paths([("--out", "data.csv")], inputs=["data.csv"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sdcreport.OutputPathError: --out data.csv is an input file; it would be overwritten ...
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
