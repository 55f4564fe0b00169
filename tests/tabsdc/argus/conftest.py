"""Fixtures of the tau-ARGUS tests: the sample folder and a generated tau_testW.asc."""

import shutil
from pathlib import Path

import numpy as np
import pytest

#: tau-ARGUS's sample folder (see tests/data/argus/README.md).
SAMPLES = Path(__file__).resolve().parents[2] / "data" / "argus"

#: IndustryCode values of the generated microdata (5 digits, levels 3-1-1 as the .rda says).
INDUSTRY = ("14211", "14212", "14221", "15001", "15002", "15121", "15122", "16011")


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A copy of the sample folder, so that runs can write next to the batch files."""
    target = tmp_path / "job"
    shutil.copytree(SAMPLES, target)
    return target


def tau_testw_records(n: int = 1200, seed: int = 15) -> list[dict]:
    """Records for the Tau_TestW.rda layout (Year 1-2, IndustryCode 4-8, Size 9-10,
    Region 12-13, Wgt 15-18, Var1 19-27, Var2..Var8 28-97 (width 10), Request 99)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 10, n)
    regions = rng.integers(1, 13, n).astype(object)
    regions[rng.random(n) < 0.02] = 99
    records = []
    for i in range(n):
        records.append({
            "Year": str(rng.integers(10, 13)),
            "IndustryCode": INDUSTRY[rng.integers(len(INDUSTRY))],
            "Size": str(sizes[i]), "Region": str(regions[i]),
            "Wgt": f"{rng.uniform(1, 50):.1f}",
            "Var1": str(rng.integers(1, 10**6)),
            **{f"Var{k}": f"{min(rng.lognormal(6, 1.2) * sizes[i], 9.9e6):.2f}"
               for k in range(2, 9)},
            "Request": str(rng.choice(["0", "0", "0", "1", "2"])),
        })
    return records


def write_tau_testw(path: Path, records: list[dict]) -> None:
    """Write records as fixed-width lines laid out as Tau_TestW.rda says: each field right
    aligned in its columns (start, width), blanks between."""
    from tabsdc.io.argus.metadata import read_rda

    layout = read_rda(SAMPLES / "Tau_TestW.rda").variables
    length = max(v.start + v.width - 1 for v in layout)
    lines = []
    for record in records:
        line = [" "] * length
        for v in layout:
            text = record[v.name]
            assert len(text) <= v.width, (v.name, text)
            line[v.start - 1:v.start - 1 + v.width] = text.rjust(v.width)
        lines.append("".join(line))
    path.write_text("\n".join(lines) + "\n")
