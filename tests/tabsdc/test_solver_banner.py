"""HiGHS's start-up banner never reaches the user's terminal."""

import subprocess
import sys

SCRIPT = """
import numpy as np
from tabsdc.solver import HighsModel, LinearProgram
lp = LinearProgram(c=np.array([1.0]), A=np.ones((1, 1)), row_lower=[1.0], row_upper=[2.0],
                   col_lower=[0.0], col_upper=[5.0])
print("objective", HighsModel(lp).solve().objective)
"""


def test_first_highs_model_prints_only_what_we_print():
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True)
    assert run.stdout == "objective 1.0\n"
    assert "HiGHS" not in run.stderr


def test_cli_audit_output_starts_with_our_own_lines(tmp_path):
    path = tmp_path / "t.jj"
    path.write_text("0\n3\n0 5 1 s 0 100 0 0 0\n1 2 1 u 0 100 1 1 0\n2 3 1 m 0 100 0 0 0\n"
                    "1\n0 3 : 0 (-1) 1 (1) 2 (1)\n")
    run = subprocess.run([sys.executable, "-m", "tabsdc.cli", "audit", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("Audit (a-priori bounds of the table)")
    assert "Running HiGHS" not in run.stdout + run.stderr
