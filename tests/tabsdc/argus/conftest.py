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
    from tabsdc.io.argus._metadata import read_rda

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


def write_survey_job(folder: Path, *commands: str) -> Path:
    """The business survey (9,786 companies, package data) as a tau-ARGUS job in ``folder``:
    separated microdata, its .rda, the activity and region hierarchies as .hrc files, and
    ``survey.arb`` building A88 x NUTS3 turnover with P(10)|FREQ(3,10) followed by
    ``commands``. Returns the batch file."""
    from tabsdc._datasets import business_survey_hierarchies, load_business_survey
    from tabsdc.io.argus._hrc import write_hrc
    from tabsdc.io.argus._metadata import Metadata, Variable, write_rda

    folder.mkdir(parents=True, exist_ok=True)
    data = load_business_survey()
    hierarchies = business_survey_hierarchies(data)
    data[["A88", "NUTS3", "TURNOVER"]].to_csv(folder / "survey.csv", index=False,
                                               header=False)
    for dim in ("A88", "NUTS3"):
        write_hrc(hierarchies[dim], folder / f"{dim.lower()}.hrc")
    write_rda(Metadata((
        *(Variable(dim, width=5, explanatory=True, hierarchical=True,
                   hierarchy_file=f"{dim.lower()}.hrc") for dim in ("A88", "NUTS3")),
        Variable("TURNOVER", width=20, numeric=True, decimals=2)), kind="free", separator=","),
        folder / "survey.rda")
    arb = folder / "survey.arb"
    arb.write_text("\n".join(['<OPENMICRODATA> "survey.csv"', '<OPENMETADATA> "survey.rda"',
                              '<SPECIFYTABLE> "A88""NUTS3"|"TURNOVER"|"TURNOVER"|"TURNOVER"',
                              "<SAFETYRULE> P(10)|FREQ(3,10)", "<READMICRODATA>", *commands])
                   + "\n")
    return arb
