"""The programs start light: ``tabsdc --help`` and ``microsdc --help`` list every command
without importing any command module, nor the solvers, SciPy's optimisers, plotting or
pandas (checked in a fresh interpreter, by the modules it has loaded, not by time)."""

import subprocess
import sys

import pytest

from microsdc.cli import COMMANDS as MICROSDC_COMMANDS
from tabsdc.cli._main import COMMANDS as TABSDC_COMMANDS

#: What ``--help`` of a program must not import.
HEAVY = ("highspy", "pulp", "scipy.optimize", "matplotlib", "pandas")

PROBE = """
import runpy, sys
sys.argv = [{prog!r}, *{argv!r}]
try:
    runpy.run_module("{prog}.cli", run_name="__main__")
except SystemExit:
    pass
print(",".join(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_by(prog: str, argv: list[str]) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(prog=prog, argv=argv)],
                          capture_output=True, text=True, timeout=120)
    return done.stdout, set(done.stderr.strip().splitlines()[-1].split(","))


@pytest.mark.parametrize("prog, commands", [("tabsdc", TABSDC_COMMANDS),
                                            ("microsdc", MICROSDC_COMMANDS)])
def test_help_lists_every_command_and_imports_none(prog, commands):
    out, modules = loaded_by(prog, ["--help"])
    for name, command in commands.items():
        assert f"    {name} " in out and command.help.split()[0] in out
        assert command.module not in modules
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_a_command_imports_its_own_module_only():
    out, modules = loaded_by("tabsdc", ["audit", "--help"])
    assert "tabsdc.cli._audit" in modules and "--prior-q" in out
    assert not {c.module for n, c in TABSDC_COMMANDS.items() if n != "audit"} & modules
