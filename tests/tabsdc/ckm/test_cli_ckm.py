"""``tabsdc ptable`` and ``tabsdc ckm`` as a user runs them (subprocesses)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from tabsdc.ckm import read_ptable
from tests.conftest import DATA


def tabsdc(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "tabsdc.cli", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_ptable_command_writes_tau_argus_s_sample(tmp_path):
    done = tabsdc("ptable", "--max-noise", 5, "--variance", 3, "--js", 2, "--pstay", 0.5,
                  "--out", "p.txt", "--json", "p.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ours, ref = read_ptable(tmp_path / "p.txt"), read_ptable(DATA / "ckm" / "ptab_freq.txt")
    assert np.abs(ours.upper_units - ref.upper_units).max() <= 1
    assert json.loads((tmp_path / "p.json").read_text())["parameters"]["js"] == 2


def test_ckm_command_publishes_perturbed_counts_only(tmp_path):
    rng = np.random.default_rng(2)
    n = 300
    pd.DataFrame({"region": rng.choice(["n1", "n2", "s1"], n),
                  "big": rng.choice(["N", "S"], n), "sex": rng.choice(["m", "f"], n),
                  "rkey": [f"0.{k:08d}" for k in rng.integers(0, 10**8, n)]}
                 ).assign(big=lambda d: d["region"].str[0].str.upper()).to_csv(
        tmp_path / "people.csv", index=False)
    (tmp_path / "p.txt").write_bytes((DATA / "ckm" / "ptab_freq.txt").read_bytes())
    done = tabsdc("ckm", "people.csv", "--dims", "region", "sex", "--hierarchy",
                  "region=big,region", "--record-key", "rkey", "--ptable", "p.txt",
                  "--publish", "pub.csv", "--out", "cells.csv", "--json", "r.json",
                  "--html", "r.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cells = pd.read_csv(tmp_path / "cells.csv", dtype={"region": str, "sex": str},
                        skiprows=1)  # the line saying the file is confidential
    published = pd.read_csv(tmp_path / "pub.csv", encoding="utf-8-sig", dtype=str)
    assert list(published.columns) == ["region", "sex", "value"]
    assert len(published) == len(cells) == 6 * 3
    # codes in the hierarchy's order in the publishable file, in the table's in --out
    merged = published.merge(cells[["region", "sex", "value", "freq"]], on=["region", "sex"],
                             suffixes=("", "_internal"), validate="one_to_one")
    assert (merged["value"].astype(float) == merged["value_internal"]).all()
    assert (merged["value_internal"] != merged["freq"]).any()
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["status"] == "perturbed" and result["cells"] == 18
    assert "Posterior probability" in (tmp_path / "r.html").read_text()


def test_ckm_command_bad_input_exits_2(tmp_path):
    pd.DataFrame({"a": ["x", "y"], "k": ["0.5", "2"]}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "p.txt").write_bytes((DATA / "ckm" / "ptab_freq.txt").read_bytes())
    done = tabsdc("ckm", "d.csv", "--dims", "a", "--record-key", "k", "--ptable", "p.txt",
                  "--publish", "pub.csv", cwd=tmp_path)
    assert done.returncode == 2
    assert "column 'k', line 3: a record key must be a number in [0, 1)" in done.stderr
    assert not (tmp_path / "pub.csv").exists()
    done = tabsdc("ckm", "d.csv", "--dims", "a", "--ptable", "missing.txt",
                  "--publish", "pub.csv", cwd=tmp_path)
    assert done.returncode == 2 and "missing.txt" in done.stderr
