"""The output files of a batch job: written beside their targets, put in place together.

While a job runs, each output file is written into a staging folder inside the folder of its
target (``.tabsdc-argus-<pid>-<random>``). Putting it in place is then a rename within one
file system (:func:`os.replace`, atomic), never a copy: a full disk stops the writing of the
staged file, and the previous file of that name stays as it was.

When every command has run, :meth:`Staging.publish` moves the files into place: the previous
version of each target is first moved aside (into the staging folder), then the new file takes
its place. If a move fails, the moves already made are undone and the previous files come
back, so either every output of the job lands or none does; the error names the file.
Staging folders are removed in every case. One left behind by a job that was killed (its
process gone) is removed by the next job that writes into the same folder.

Examples
--------
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> staging = Staging()
>>> _ = staging.path_for(folder / "a.csv").write_text("new")
>>> (folder / "a.csv").exists()
False
>>> [p.name for p in staging.publish()], (folder / "a.csv").read_text()
(['a.csv'], 'new')
>>> sorted(p.name for p in folder.iterdir())
['a.csv']
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from sdcreport._files import OutputPathError

#: Name prefix of the staging folders (followed by the process id and a random part).
STAGING_PREFIX = ".tabsdc-argus-"
_PREVIOUS = ".previous"


class Staging:
    """Staging folders of one job, one per target folder, and the folders the job made."""

    def __init__(self) -> None:
        self._staging: dict[Path, Path] = {}
        self._made: list[Path] = []

    def path_for(self, final: Path) -> Path:
        """Where to write ``final`` until the job has run. Files written next to it (an
        intermediate file's ``.rda`` and ``.hrc``) are put in place beside ``final`` too.

        The target's folder is created if it is missing (and removed again by
        :meth:`discard` when the job fails).
        """
        folder = final.parent
        if folder not in self._staging:
            self._make_folder(folder)
            _remove_stale(folder)
            self._staging[folder] = Path(tempfile.mkdtemp(
                prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=folder))
        return self._staging[folder] / final.name

    def staged(self) -> tuple[Path, ...]:
        """The files :meth:`publish` will put in place, in its order."""
        return tuple(folder / staged.name for folder, staged in self._files())

    def publish(self) -> tuple[Path, ...]:
        """Put every staged file in place; returns the files written.

        Raises
        ------
        OutputPathError
            A file that could not be put in place, naming it; every target is then as it
            was before the job (or, if even that failed, the message says where the
            previous version is kept).
        """
        done: list[tuple[Path, Path | None]] = []
        final = None
        try:
            for folder, staged in self._files():
                final = folder / staged.name
                kept = None
                if final.exists():
                    previous = staged.parent / _PREVIOUS
                    previous.mkdir(exist_ok=True)
                    kept = previous / staged.name
                    os.replace(final, kept)
                done.append((final, kept))
                os.replace(staged, final)
        except OSError as error:
            lost = self._undo(done)
            raise OutputPathError(
                f"cannot put {final} in place: {error.strerror}; "
                + ("no output of the job was written (the previous files are unchanged)"
                   if not lost else "the previous version of "
                   + ", ".join(f"{f} is kept as {k}" for f, k in lost))) from None
        self.discard(keep_folders=True)
        return tuple(final for final, _ in done)

    def discard(self, *, keep_folders: bool = False) -> None:
        """Remove the staging folders (and, unless ``keep_folders``, the folders the job
        made that are empty)."""
        for staging in self._staging.values():
            shutil.rmtree(staging, ignore_errors=True)
        self._staging.clear()
        if not keep_folders:
            for folder in reversed(self._made):
                with contextlib.suppress(OSError):
                    folder.rmdir()
        self._made.clear()

    def _files(self) -> list[tuple[Path, Path]]:
        """(target folder, staged file) of every staged file."""
        return [(folder, staged) for folder, staging in self._staging.items()
                for staged in sorted(staging.iterdir()) if staged.name != _PREVIOUS]

    def _make_folder(self, folder: Path) -> None:
        missing = []
        parent = folder
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for path in reversed(missing):
            path.mkdir()
            self._made.append(path)

    def _undo(self, done: list[tuple[Path, Path | None]]) -> list[tuple[Path, Path]]:
        """Undo the moves of :meth:`publish`, last first; returns the (target, kept copy)
        pairs whose previous version could not be put back (kept with the staging folder)."""
        lost = []
        for final, kept in reversed(done):
            try:
                if kept is not None:
                    os.replace(kept, final)
                elif final.exists():
                    final.unlink()
            except OSError:
                if kept is not None:
                    lost.append((final, kept))
        if not lost:
            self.discard()
        return lost


def _remove_stale(folder: Path) -> None:
    """Remove the staging folders in ``folder`` of jobs whose process is gone (killed before
    they could clean up). Only POSIX systems can tell; elsewhere nothing is removed."""
    if os.name != "posix":
        return
    for entry in folder.glob(f"{STAGING_PREFIX}*"):
        pid = entry.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if entry.is_dir() and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
