"""The cell key method in tau-ARGUS jobs: the sample cell-key folders run as batch jobs,
their settings checked against direct calls written out from the .rda text, output type 7,
its leak test, and what is refused."""

import numpy as np
import pandas as pd
import pytest

from tabsdc import Hierarchy
from tabsdc._errors import InputError, TabSDCError
from tabsdc.ckm import FlexFunction, perturb_counts, perturb_magnitudes, read_ptable
from tabsdc.io.argus._batch import run_batch
from tabsdc.io.argus._ckm import parse_scaling, split_ckm_argument

MAGNITUDE_JOB = """<OPENMICRODATA> "microdata.csv"
<OPENMETADATA> "microdata.rda"
<SPECIFYTABLE> "Sex""Age"|"Savings"||
<SAFETYRULE> NK(1,60)|FREQ(10,20)
<SPECIFYTABLE> "Sex""Age"|<freq>||
<SAFETYRULE> FREQ(3,20)
<READMICRODATA>
<SUPPRESS> CKM(1) | | 2.5
<SUPPRESS> CKM(2)
<WRITETABLE> (1,7,AO+AD+AC+,"savings_internal.txt")
<WRITETABLE> (1,7,,"savings.txt")
<WRITETABLE> (2,7,AO+SE+,"counts_internal.txt")
"""

FIELDS = ["Sex", "Age", "HighIncome", "Savings", "Weigt", "Key"]


def read_type7(path, dims, extra):
    frame = pd.read_csv(path, sep=";", header=None, names=[*dims, "value", *extra],
                        dtype={d: str for d in dims} | {"key": str})
    return frame.set_index(dims)


def hierarchies(folder):
    """dim_sex.hrc and dim_age.hrc, read here from their text (@ marks a level)."""
    out = {}
    for dim, name in (("Sex", "dim_sex.hrc"), ("Age", "dim_age.hrc")):
        parents, stack = [], []
        for line in (folder / name).read_text().split():
            depth = len(line) - len(line.lstrip("@"))
            code = line.lstrip("@")
            stack[depth:] = [code]
            parents.append(("Total" if depth == 0 else stack[depth - 1], code))
        out[dim] = Hierarchy.from_parent_child(pd.DataFrame(parents,
                                                            columns=["parent", "child"]))
    return out


def test_the_magnitude_sample_runs_as_its_metadata_says(job):
    folder = job / "cellkey" / "Magnitude"
    (folder / "ckm.arb").write_text(MAGNITUDE_JOB)
    result = run_batch(folder / "ckm.arb")
    assert result.passed and [t.outcome.method for t in result.tables] == ["cell key method"] * 2
    data = pd.read_csv(folder / "microdata.csv", sep=";", header=None, names=FIELDS,
                       dtype={"Sex": str, "Age": str})
    hier = hierarchies(folder)
    unsafe = result.tables[0].table.cells["status"].eq("u")
    assert unsafe.sum() > 0
    # <CKM> T(3), <INCLUDEZEROS> N, <SEPARATION> Y, <PARITY> N,
    # <SCALING> F(0.03,0.30,1000,3,0.5,0.2), <DECIMALS> 8, mu_c 2.5 from the SUPPRESS line
    direct = perturb_magnitudes(
        data, ["Sex", "Age"], "Savings", read_ptable(folder / "ptab_savings_all.txt"),
        FlexFunction(0.30, 0.03, 1000.0, q=3.0, epsilon=(1.0, 0.5, 0.2)), record_key="Key",
        hierarchies=hier, small_ptable=read_ptable(folder / "ptab_savings_smallcells.txt"),
        include_zeros=False, sensitive=unsafe, mu_c=2.5).to_frame()
    written = read_type7(folder / "savings_internal.txt", ["Sex", "Age"],
                         ["original", "difference", "key"])
    assert len(written) == len(direct) == 45
    for label, row in direct.iterrows():
        line = written.loc[label]
        assert line["value"] == round(row["published"])
        assert line["original"] == row["original"]
        assert line["key"] == f"{row['cell_key']:.8f}"
    assert direct["sensitive"].sum() == unsafe.sum()
    counts = perturb_counts(data, ["Sex", "Age"], read_ptable(folder / "ptab_freq.txt"),
                            record_key="Key", hierarchies=hier).to_frame()
    written = read_type7(folder / "counts_internal.txt", ["Sex", "Age"], ["original"])
    nonempty = counts[counts["original"] > 0]
    assert len(written) == len(nonempty)                  # SE+: empty cells left out
    assert (written.loc[nonempty.index, "value"] == nonempty["published"]).all()
    assert (written.loc[nonempty.index, "original"] == nonempty["original"]).all()
    # files holding originals or keys say they are internal; the plain one is publishable
    assert (folder / "savings_internal.rda").read_text().splitlines()[:2] == [
        "// confidential: contains unpublished values", '<SEPARATOR> ";"']
    assert (folder / "savings.rda").read_text().splitlines()[0] == '<SEPARATOR> ";"'
    log = "\n".join(result.log)
    assert "savings_internal.txt: confidential" in log and "savings.txt: confidential" not in log


def test_type7_without_options_writes_only_published_values(job):
    """Leak test: no original of a perturbed cell, no cell key, no difference."""
    folder = job / "cellkey" / "Magnitude"
    (folder / "ckm.arb").write_text(MAGNITUDE_JOB)
    run_batch(folder / "ckm.arb")
    internal = read_type7(folder / "savings_internal.txt", ["Sex", "Age"],
                          ["original", "difference", "key"])
    text = (folder / "savings.txt").read_text()
    fields = {f for line in text.splitlines() for f in line.split(";")}
    assert all(len(line.split(";")) == 3 for line in text.splitlines())
    changed = internal[internal["difference"] != 0]
    assert len(changed) > 30
    for original in changed["original"]:
        assert str(int(original)) not in fields
    assert not {k for k in internal["key"]} & fields


def test_a_frequency_sample_with_fifteen_digit_keys(job):
    """hc_9_2_synth_Tau.rda (free format, <DECIMALS> 15, <PFILE> the scenario 5a p-table)
    with records drawn here in its layout; the noise against a direct call."""
    folder = job / "cellkey" / "Frequency"
    rng = np.random.default_rng(92)
    n = 800
    data = pd.DataFrame({
        "id": np.arange(n), "geo_m": rng.choice(["11", "12", "21"], n),
        "sex": rng.choice(["1", "2"], n), "age_m": rng.choice(["01", "02", "03", "04"], n),
        "yae_h": rng.choice(["10", "20"], n), "usual_resident": "1",
        "spv_cov_imputation_flag": rng.choice(["0", "1"], n),
        "record_key": [f"0.{k:015d}" for k in rng.integers(0, 10**15, n)]})
    data.to_csv(folder / "hc92.csv", sep=";", header=False, index=False)
    (folder / "hc92.arb").write_text(
        '<OPENMICRODATA> "hc92.csv"\n<OPENMETADATA> "hc_9_2_synth_Tau.rda"\n'
        '<SPECIFYTABLE> "geo_m""sex""age_m"|<freq>||\n<SAFETYRULE> FREQ(3,10)\n'
        '<READMICRODATA>\n<SUPPRESS> CKM(1)\n<WRITETABLE> (1,7,AO+AC+,"hc92_ckm.txt")\n')
    result = run_batch(folder / "hc92.arb")
    assert result.passed
    direct = perturb_counts(data, ["geo_m", "sex", "age_m"],
                            read_ptable(folder / "20160511_szenario_5a.txt"),
                            record_key="record_key", digits=15).to_frame()
    written = read_type7(folder / "hc92_ckm.txt", ["geo_m", "sex", "age_m"],
                         ["original", "key"])
    assert len(written) == len(direct)
    assert (written.loc[direct.index, "value"] == direct["published"]).all()
    assert (direct["published"] != direct["original"]).sum() > 10
    keys = written.loc[direct.index, "key"]
    assert all(len(k) == 17 for k in keys)    # 15 decimals


def test_what_is_refused(job):
    folder = job / "cellkey" / "Magnitude"
    (folder / "bad.arb").write_text(MAGNITUDE_JOB.replace('"Savings"', '"HighIncome"'))
    with pytest.raises(TabSDCError, match="HighIncome has <CKM> N"):
        run_batch(folder / "bad.arb")
    (folder / "seven.arb").write_text(MAGNITUDE_JOB.split("<SUPPRESS>")[0]
                                      + '<WRITETABLE> (1,7,,"x.txt")\n')
    with pytest.raises(TabSDCError, match="type 7 \\(CKM\\) needs a table perturbed"):
        run_batch(folder / "seven.arb")
    with pytest.raises(InputError, match="4 parameters and 2 epsilon"):
        parse_scaling("F(0.03,0.3,1000,3,0.5)", 3)
    assert split_ckm_argument('ckm( 3 ) "a b.txt"') == ("3", ["a b.txt"])
