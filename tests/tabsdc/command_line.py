"""The ``tabsdc`` command run in the test's own process, as a user runs it from a folder.

A subprocess pays the import of numpy, pandas and scipy again (a second or two a run); the
tests of what a command reads and writes run it here, and the tests of the process itself
(exit on signals, start-up, the installed entry point) keep their subprocesses.
"""

import contextlib
import io
import subprocess
from pathlib import Path

from tabsdc.cli import main


def run_tabsdc(*argv, cwd: Path) -> subprocess.CompletedProcess:
    """``tabsdc argv`` run from folder ``cwd``: its exit status (``returncode``), standard
    output and standard error, as :func:`subprocess.run` with ``capture_output=True`` and
    ``text=True`` gives them (an argument that argparse refuses exits 2 there too)."""
    args = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            status = main(args)
        except SystemExit as exit_:  # argparse refuses its arguments so
            status = exit_.code
    return subprocess.CompletedProcess(["tabsdc", *args], status, out.getvalue(),
                                       err.getvalue())
