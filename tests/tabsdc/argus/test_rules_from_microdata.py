"""SAFETYRULE on microdata: every rule kind against a computation with pandas alone, on the
interior cells of a generated tau_testW file."""

import numpy as np
import pandas as pd
import pytest

from tabsdc.io.argus._batch import run_batch
from tests.tabsdc.argus.conftest import tau_testw_records, write_tau_testw


@pytest.fixture
def records():
    rows = tau_testw_records(600, seed=4)
    for row in rows:
        if row["Region"] == "99":
            row["Var2"] = "0.00"
    return rows


def run(job, records, rule, holding=False):
    write_tau_testw(job / "tau_testW.asc", records)
    rda = job / "Tau_TestW.rda"
    if holding:
        rda.write_text(rda.read_text() + "Holding 4 5\n  <HOLDING>\n")
    arb = job / "rules.arb"
    arb.write_text('<OPENMICRODATA> "tau_testW.asc"\n<OPENMETADATA> "Tau_TestW.rda"\n'
                   '<SPECIFYTABLE> "Size""Region"|"Var2"||\n'
                   f"<SAFETYRULE> {rule}\n<READMICRODATA>\n")
    return run_batch(arb).tables[0].table


def frame(records):
    data = pd.DataFrame(records).astype({"Var2": float, "Wgt": float})
    data["key"] = list(zip(data["Size"], data["Region"], strict=True))
    return data


def primaries(table):
    cells = table.cells
    interior = [key for key in cells.index if "Total" not in key and
                key[1] not in ("Nr", "Os", "Ws", "Zd")]
    status = cells.loc[interior, "status"]
    return set(status.index[status == "u"])


def test_frequency_zero_request_and_weights(job, records):
    table = run(job, records, "FREQ(3,20)|ZERO(5)|REQ(30,40,3,20)|WGT(1)")
    data = frame(records)
    groups = data.groupby("key")
    weighted = groups.apply(lambda g: (g["Wgt"] * g["Var2"]).sum())
    np.testing.assert_allclose(table.cells.loc[list(weighted.index), "value"], weighted)
    freq = groups.size()
    total = groups["Var2"].sum()
    expected = set(freq.index[freq < 3])
    expected |= set(total.index[(total == 0) & (freq > 0)])
    for code, percent in (("1", 30), ("2", 40)):
        top = data[data["Request"] == code].groupby("key")["Var2"].max()
        expected |= set(top.index[(top > percent / 100 * total[top.index]) & (top > 0)])
    requests = data[data["Request"].isin(["1", "2"])].groupby("key").size()
    expected |= set(requests.index[freq[requests.index] < 3])
    assert primaries(table) == expected and len(expected) > 5
    zero = [key for key in expected if total[key] == 0]
    assert zero and (table.cells.loc[zero, "upl"] == 5).all()


def test_missing_codes_are_safe_with_mis(job, records):
    table = run(job, records, "FREQ(3,20)|ZERO(5)|MIS(1)")
    missing = table.cells.index.get_level_values("Region") == "99"
    assert (table.cells.loc[missing, "status"] != "u").all()
    assert (table.cells.loc[~missing, "status"] == "u").any()


def test_holding_level_dominance(job, records):
    table = run(job, records, "NK(0,0)|NK(0,0)|NK(1,60)", holding=True)
    data = frame(records)
    per_holding = data.groupby(["key", "IndustryCode"])["Var2"].sum()
    top = per_holding.groupby(level="key").max()
    total = data.groupby("key")["Var2"].sum()
    expected = set(total.index[(top > 0.6 * total) & (total > 0)])
    assert primaries(table) == expected and len(expected) > 5
    individual = run(job, records, "NK(1,60)")
    assert primaries(individual) != expected
