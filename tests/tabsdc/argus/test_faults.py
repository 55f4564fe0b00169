"""Faults of batch jobs: outputs on inputs, full disks, folders in output names, errors late
in a batch file, and outputs that cannot all be put in place. A job either writes every
output it names, where it names it, or changes nothing."""

import builtins
import errno
import io
import os
import shutil
from pathlib import Path

import pytest

from sdcreport._files import OutputPathError
from tabsdc.cli import main
from tabsdc.io.argus._batch import run_batch
from tabsdc.io.argus._staging import STAGING_PREFIX


def table_job(job: Path, *commands: str) -> Path:
    """TestTable.arb protected by GH with ``commands`` (WRITETABLE lines) after it."""
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace(
        "<GOINTERACTIVE>", "<SUPPRESS> GH(1,100)\n" + "\n".join(commands) + "\n"))
    return arb


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its content."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def refused(arb: Path, capsys, *expected: str) -> str:
    """The job exits 2 naming ``expected``, before any work (nothing on standard output,
    where the log goes), and leaves every file as it was."""
    before = snapshot(arb.parent)
    assert main(["argus", str(arb)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    for text in expected:
        assert text in captured.err, captured.err
    assert snapshot(arb.parent) == before
    return captured.err


# -- an output on an input ----------------------------------------------------------------------
@pytest.mark.parametrize("write, named", [
    ('(1,3,AS+,"pp.tab")', "pp.tab is read by this job (line 4)"),
    ('(1,3,AS+,"PP.TAB")', "PP.TAB is read by this job (line 4)"),
    ('(1,5,,"pp.tab")', "pp.tab is read by this job (line 4)"),
    ('(1,5,,"other.tab")', None),
    ('(1,3,,"region2.hrc")', "region2.hrc is read by this job (line 6)"),
    ('(1,3,,"TestTable.arb")', "TestTable.arb is read by this job (the batch file itself)"),
])
def test_an_output_that_is_an_input_is_refused_before_any_work(job, capsys, write, named):
    """(1,3,AS+,"pp.tab") replaced the job's own tabular input and exited 0."""
    arb = table_job(job, f"<WRITETABLE> {write}")
    if named is None:  # an intermediate file writes .rda and .hrc files beside it: fine here
        assert main(["argus", str(arb), "--quiet"]) == 0
        assert (arb.parent / "other_Region.hrc").is_file()
        return
    refused(arb, capsys, "TestTable.arb, line 9: <WRITETABLE>", named,
            "writing it would replace it")


def test_an_intermediate_file_whose_metadata_would_replace_the_input_is_refused(job, capsys):
    """Type 5 writes pp.rda beside "pp.tab" in another folder: fine; in the job's folder the
    .rda of "PP.tab" would replace the job's metadata."""
    arb = table_job(job, '<WRITETABLE> (1,5,,"copy\\pp.tab")', '<WRITETABLE> (1,5,,"pP.TaB")')
    refused(arb, capsys, "line 10: <WRITETABLE>", "is read by this job (line 4)")


# -- full disk ---------------------------------------------------------------------------------
class FillingFile:
    """A file on a disk with ``room`` bytes left (shared by every file on it): a write past
    them writes what fits and raises ENOSPC."""

    def __init__(self, stream, room: list[int], name: str) -> None:
        self._stream, self._room, self._name = stream, room, name

    def write(self, data):
        size = len(data)
        if size > self._room[0]:
            fits = self._room[0]
            self._stream.write(data[:fits])
            self._stream.flush()
            self._room[0] = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._name)
        self._room[0] -= size
        return self._stream.write(data)

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stream.close()

    def __iter__(self):
        return iter(self._stream)


@pytest.fixture
def full_disk(monkeypatch):
    """Make ``folder`` a file system of its own with ``room`` bytes free: files opened for
    writing in it fill up, and a rename between it and anywhere else fails with EXDEV (as
    between two disks), so that moving a file there copies it through those writes."""

    def install(folder: Path, room: int) -> None:
        disk = os.path.realpath(folder) + os.sep
        left = [room]
        real_open, real_rename, real_replace = builtins.open, os.rename, os.replace

        def on_disk(path) -> bool:
            if isinstance(path, int):
                path = os.readlink(f"/proc/self/fd/{path}")
            return os.path.realpath(path).startswith(disk)

        def filling_open(file, mode="r", *args, **kwargs):
            stream = real_open(file, mode, *args, **kwargs)
            if set(mode) & set("wax+") and on_disk(file):
                return FillingFile(stream, left, str(file))
            return stream

        def within_one_disk(move):
            def moved(src, dst, *args, **kwargs):
                if on_disk(src) != on_disk(dst):
                    raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src)
                return move(src, dst, *args, **kwargs)
            return moved

        monkeypatch.setattr(builtins, "open", filling_open)
        monkeypatch.setattr(io, "open", filling_open)
        monkeypatch.setattr(os, "rename", within_one_disk(real_rename))
        monkeypatch.setattr(os, "replace", within_one_disk(real_replace))
        # copies go through file writes, which the full disk sees (not sendfile)
        monkeypatch.setattr(shutil, "_USE_CP_SENDFILE", False)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("the simulated disk tells files by /proc/self/fd")
    return install


def test_a_full_disk_leaves_the_previous_outputs_intact(job, full_disk, capsys):
    """The outputs were staged in /tmp and moved with shutil.move, which copies between
    file systems: on a full disk out.csv was left truncated in place of the good file."""
    arb = table_job(job, '<WRITETABLE> (1,3,AS+,"out.csv")', '<WRITETABLE> (1,6,,"out.jj")')
    assert main(["argus", str(arb), "--quiet"]) == 0
    capsys.readouterr()
    folder = arb.parent
    before = snapshot(folder)
    assert len(before["out.csv"]) > 1000
    arb.write_text(arb.read_text().replace("GH(1,100)", "OPT(1,1)"))  # a new pattern
    before = snapshot(folder)
    full_disk(folder, room=300)
    assert main(["argus", str(arb), "--quiet"]) == 2
    after = snapshot(folder)
    assert len(after["out.csv"]) == len(before["out.csv"])  # not cut short
    assert after == before
    assert not list(folder.glob(f"{STAGING_PREFIX}*"))
    err = capsys.readouterr().err
    assert "line 9" in err and "cannot write" in err and "out.csv" in err
    assert "No space left on device" in err and "bytes free on its disk" in err


def test_a_failing_move_puts_every_previous_output_back(job, monkeypatch):
    """The second of two outputs cannot be put in place: the first, already moved, is put
    back, so that no output of the job changes."""
    arb = table_job(job, '<WRITETABLE> (1,3,AS+,"a.csv")', '<WRITETABLE> (1,3,AS+,"b.csv")')
    run_batch(arb)
    arb.write_text(arb.read_text().replace("GH(1,100)", "OPT(1,1)"))
    before = snapshot(arb.parent)
    real_replace = os.replace

    def refusing(src, dst, *args, **kwargs):  # the move out of the staging folder only
        if Path(dst).name == "b.csv" and Path(src).parent.name.startswith(STAGING_PREFIX) \
                and not Path(dst).parent.name.startswith(STAGING_PREFIX):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", refusing)
    with pytest.raises(OutputPathError, match=r"cannot put .*b\.csv in place: Permission "
                                              r"denied; no output of the job was written"):
        run_batch(arb)
    assert snapshot(arb.parent) == before


def test_a_staging_folder_of_a_killed_job_is_removed_by_the_next(job):
    arb = table_job(job, '<WRITETABLE> (1,3,AS+,"a.csv")')
    stale = arb.parent / f"{STAGING_PREFIX}{2**22 + 12345}-abc"  # a process that is gone
    stale.mkdir()
    (stale / "a.csv").write_text("half")
    run_batch(arb)
    assert not stale.exists() and (arb.parent / "a.csv").read_text() != "half"


# -- folders in output names --------------------------------------------------------------------
def test_outputs_go_to_the_folders_they_name(job):
    """All three were written to the batch folder, archive\\a.txt replacing out\\a.txt, and
    the log counted 3 files where 2 existed."""
    arb = table_job(job, '<WRITETABLE> (1,3,AS+,"out\\a.txt")',
                    '<WRITETABLE> (1,3,,"archive\\a.txt")', '<WRITETABLE> (1,2,AS+,"sub/b.txt")',
                    '<LOGBOOK> "logs\\job.log"')
    result = run_batch(arb)
    folder = arb.parent
    expected = [folder / "out" / "a.txt", folder / "archive" / "a.txt", folder / "sub" / "b.txt",
                folder / "logs" / "job.log"]
    assert sorted(result.written) == sorted(expected)
    assert all(path.is_file() for path in expected)
    assert not (folder / "a.txt").exists() and not (folder / "b.txt").exists()
    # two files: with and without the status (AS+)
    assert (folder / "out" / "a.txt").read_text() != (folder / "archive" / "a.txt").read_text()
    assert "4 output file(s) put in place" in result.log[-1]


@pytest.mark.parametrize("first, second", [
    ('"out\\a.txt"', '"out/a.txt"'), ('"a.txt"', '"sub\\..\\A.TXT"'),
    ('"C:\\TauArgus\\a.txt"', '"D:\\other\\a.txt"')])
def test_two_outputs_on_one_file_are_refused_before_running(job, capsys, first, second):
    arb = table_job(job, f"<WRITETABLE> (1,3,,{first})", f"<WRITETABLE> (1,2,,{second})")
    refused(arb, capsys, "line 10: <WRITETABLE>", "is also written by line 9")


def test_an_output_folder_that_cannot_be_made_is_refused_before_running(job, capsys):
    arb = table_job(job, '<WRITETABLE> (1,3,,"pp.rda\\x.csv")')
    refused(arb, capsys, "line 9: <WRITETABLE>", "pp.rda is not a folder")


# -- everything checked before any work -------------------------------------------------------
@pytest.mark.parametrize("late, message", [
    ("<WRITETABEL> (1,3,,\"b.csv\")", "line 10: <WRITETABEL>: unknown command"),
    ("<SUPPRESS> OTP(1,5)", "line 10: <SUPPRESS>: unknown method OTP"),
    ("<SUPPRESS> OPT(1,five)", "parameter 'five' is not a number"),
    ("<SUPPRESS> OPT(1,0)", "the time limit must be a positive number of minutes"),
    ("<WRITETABLE> (2,3,,\"b.csv\")", "table 2 does not exist"),
    ("<WRITETABLE> (1,3,XX+,\"b.csv\")", "option 'XX' unknown"),
    ('<APRIORI> "absent.hst", 1, ";"', "a-priori file absent.hst not found"),
    ('<LOGBOOK> "pp.tab"', "pp.tab is read by this job"),
])
def test_a_mistake_late_in_the_job_stops_it_before_the_first_command_runs(job, capsys, late,
                                                                          message):
    """A typo on the last line was reported only after the protection before it had run."""
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace(
        "<GOINTERACTIVE>", f"<SUPPRESS> MOD(1,1)\n<WRITETABLE> (1,3,,\"a.csv\")\n{late}\n"))
    refused(arb, capsys, "TestTable.arb, " + message if message.startswith("line") else message)


def test_files_named_in_the_metadata_are_checked_before_any_work(job, capsys):
    (job / "tableinput" / "region2.hrc").unlink()
    refused(job / "tableinput" / "TestTable.arb", capsys, "line 6: <SPECIFYTABLE>",
            "hierarchy file of Region region2.hrc not found")


@pytest.mark.parametrize("option, path, use", [
    ("--log", "pp.tab", "is read by the job"), ("--json", "out.csv", "is written by line 9")])
def test_the_commands_own_outputs_are_checked_against_the_job(job, capsys, option, path, use):
    """--log pp.tab replaced the job's tabular input after the job had run."""
    arb = table_job(job, '<WRITETABLE> (1,3,AS+,"out.csv")')
    before = snapshot(arb.parent)
    assert main(["argus", str(arb), option, str(arb.parent / path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"{option} {arb.parent / path} {use}" in captured.err
    assert snapshot(arb.parent) == before


def test_a_job_that_fails_while_running_leaves_no_trace(job, capsys):
    """An error only the data can show (a code the hierarchy lacks) comes after the first
    output was written: no output, staging folder or made folder remains."""
    folder = job / "tableinput"
    bad = (folder / "pp.tab").read_text().replace('" 9";"12"', '" 9";"13"')
    (folder / "bad.tab").write_text(bad)
    read = ['<OPENMETADATA> "pp.rda"', '<SPECIFYTABLE> "Size""Region"|"Var2"|"Var2"|"Var2"',
            "<READTABLE> 1T"]
    arb = folder / "two.arb"
    arb.write_text("\n".join(['<OPENTABLEDATA> "pp.tab"', *read, "<SUPPRESS> GH(1,100)",
                              '<WRITETABLE> (1,3,AS+,"new\\a.csv")', "<CLEAR>",
                              '<OPENTABLEDATA> "bad.tab"', *read]) + "\n")
    before = snapshot(arb.parent)
    assert main(["argus", str(arb), "--quiet"]) == 2
    assert "code '13' is not in hierarchy" in capsys.readouterr().err
    assert snapshot(arb.parent) == before
    assert not (arb.parent / "new").exists()
    assert not list(arb.parent.glob(f"{STAGING_PREFIX}*"))


def test_a_distance_cost_is_refused_before_the_data_are_read(job, capsys):
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace('"Var2_Shadow"|"Var2"', '"Var2_Shadow"|-3'))
    refused(arb, capsys, "line 6: <SPECIFYTABLE>", "cost -3 (distance function) is not "
            "supported")


def test_the_logbook_is_appended_to_as_it_was_written(job):
    """tau-ARGUS appends to its logbook; an earlier logbook in Latin-1 is kept byte for
    byte."""
    arb = table_job(job, '<LOGBOOK> "job.log"')
    earlier = "01-janv.-2024 : année précédente\n".encode("latin-1")
    (arb.parent / "job.log").write_bytes(earlier)
    run_batch(arb)
    run_batch(arb)
    log = (arb.parent / "job.log").read_bytes()
    assert log.startswith(earlier) and log.count(b"Start of batch procedure") == 2
