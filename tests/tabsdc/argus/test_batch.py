"""Running tau-ARGUS batch files: the two sample jobs, the method mapping, the outputs."""

import numpy as np
import pandas as pd
import pytest

from tabsdc import Table
from tabsdc.cli import main
from tabsdc.io.argus.apriori import write_hst
from tabsdc.io.argus.batch import JobTable, format_arb, run_batch
from tabsdc.io.argus.tab import write_tab
from tabsdc.io.argus.tables import TableSpec
from tabsdc.suppression import suppress
from tests.tabsdc.argus.conftest import tau_testw_records, write_tau_testw
from tests.tabsdc.argus.test_files import pp_table


def with_commands(arb, *commands, before="<GOINTERACTIVE>"):
    """The batch file with ``commands`` inserted before its GOINTERACTIVE line."""
    text = arb.read_text()
    arb.write_text(text.replace(before, "\n".join(commands) + "\n" + before))
    return arb


def test_test_table_arb_as_shipped_reads_the_table(job):
    result = run_batch(job / "tableinput" / "TestTable.arb")
    (table,) = result.tables
    assert table.table.n_cells == 162
    assert (table.table.cells["status"] == "u").sum() == 9
    assert table.outcome is None and result.written == ()
    assert any("not protected (no SUPPRESS)" in line for line in result.log)
    assert any("4 total(s) of the file differ" in line for line in result.log)
    assert any("GOINTERACTIVE has nothing to do here" in line for line in result.log)
    assert any("codelist region.cdl of Region: 16 labels" in line for line in result.log)


def test_targus_job_reaches_the_optimum_of_the_jj_version(job):
    """TARGUS.jj (Castro's version of pp.tab) made into a tau-ARGUS job with the writers:
    values, costs, statuses and protection levels in a .tab (no frequencies, as in the JJ
    file, so no singleton protection), a-priori bounds in a .hst.
    The batch run must reach the optimum the optimal method finds on the JJ file itself."""
    folder = job / "tableinput"
    targus = Table.from_jj(folder / "TARGUS.jj")
    pp = pp_table(folder)
    jj = targus.cells
    version = pp.with_columns(value=jj["value"].to_numpy(), status=jj["status"].to_numpy(),
                              cost=jj["cost"].to_numpy(), lpl=jj["lpl"].to_numpy(),
                              upl=jj["upl"].to_numpy(), lb=jj["lb"].to_numpy(),
                              ub=jj["ub"].to_numpy(), freq=np.nan)
    write_tab(version, folder / "targus.tab", response="Var2", decimals=2)
    write_hst(version, folder / "targus.hst")
    spec = TableSpec(("Size", "Region"), "Var2", cost="cost")
    arb = folder / "targus.arb"
    arb.write_text(format_arb("targus.tab", "targus.rda", [JobTable(spec)], tabular=True)
                   + '<APRIORI> "targus.hst", 1, ";"\n<SUPPRESS> OPT(1,5)\n'
                   + '<WRITETABLE> (1,3,AS+,"targus_safe.csv")\n')
    result = run_batch(arb)
    read = result.tables[0].table.cells
    for column in ("value", "status", "cost", "lpl", "upl", "lb", "ub"):
        np.testing.assert_array_equal(read[column], jj[column], column)
    direct = suppress(targus, "optimal", "cost")
    outcome = result.tables[0].outcome
    assert direct.stats.status == outcome.details["status"] == "optimal"
    assert outcome.details["objective"] == pytest.approx(direct.stats.objective, rel=1e-9)
    assert outcome.passed and result.passed
    protected = result.tables[0].protected.cells
    np.testing.assert_array_equal(protected["lb"], jj["lb"])
    np.testing.assert_array_equal(protected["ub"], jj["ub"])
    written = pd.read_csv(folder / "targus_safe.csv", header=None)
    assert (written[3] == 11).sum() == outcome.details["secondary_cells"]
    assert (written[3] == 9).sum() == 13


def test_test_table_arb_with_the_optimal_method(job, capsys):
    arb = with_commands(job / "tableinput" / "TestTable.arb", "<SUPPRESS> OPT(1,5)",
                        '<WRITETABLE> (1,6,,"pp_safe.jj")', '<WRITETABLE> (1,2,AS+,"p.csv")',
                        '<WRITETABLE> (1,1,,"C:\\TauArgus\\out\\wide.csv")',
                        '<WRITETABLE> (1,5,AR+,"pp_safe.tab")')
    assert main(["argus", str(arb), "--quiet", "--json", str(job / "r.json")]) == 0
    assert "every protection passed its audit" in capsys.readouterr().out
    folder = job / "tableinput"
    jj = Table.from_jj(folder / "pp_safe.jj")
    pivot = pd.read_csv(folder / "p.csv", dtype=str)
    assert list(pivot.columns) == ["Size", "Region", "Var2", "status"]
    hidden = pivot["status"].isin(["Unsafe", "Secondary"]).sum()
    # (protected against the respondents of its single-contributor cells too)
    assert hidden == jj.cells["status"].isin(["u", "m"]).sum() == 22
    wide = (folder / "wide.csv").read_text().splitlines()
    assert len(wide) == 1 + 9 and wide[0].split(",")[1:4] == ['"Total"', '"Nr"', '"1"']
    assert sum(line.count(",x") for line in wide) == 22
    back = pd.read_csv(folder / "pp_safe.tab", sep=";", header=None)
    assert back.shape == (162, 12)
    primary = back[back[7] == "U"]
    assert len(primary) == 9
    assert (primary[10] <= primary[2] - primary[8] + 1e-6).all()
    assert (primary[11] >= primary[2] + primary[9] - 1e-6).all()


def test_test_recode_arb_on_generated_microdata(job):
    records = tau_testw_records()
    write_tau_testw(job / "tau_testW.asc", records)
    arb = with_commands(job / "TestRecode.arb", "<SUPPRESS> MOD(1,1)",
                        '<WRITETABLE> (1,3,AS+,"t1.csv")', "<SUPPRESS> OPT(2,5)",
                        '<WRITETABLE> (2,4,HL+,"t2.sbs")', '<WRITETABLE> (2,6,,"t2.jj")')
    result = run_batch(arb)
    assert result.passed
    first, second = (job_table.table for job_table in result.tables)
    assert first.hierarchies["Size"].codes == ("Total", "1", "6", "7", "8", "9")
    assert first.hierarchies["Region"].parents["99"] == "Total"
    industry = second.hierarchies["IndustryCode"]
    assert industry.children("142") == () and industry.children("150") == ("1500",)
    assert industry.children("151") == ("1512",) and industry.children("1601") == ("16011",)
    data = pd.DataFrame(records).astype({"Var2": float})
    data["Size"] = np.where(data["Size"].astype(int) <= 5, "1", data["Size"])
    # interior cells and primary cells against an independent computation
    interior = data.groupby(["Size", "Region"])["Var2"].sum()
    values = first.cells["value"]
    np.testing.assert_allclose(values.loc[interior.index].to_numpy(), interior.to_numpy())
    assert set(first.cells.index[first.cells["status"] == "u"]) == nk_primaries(
        data, first.hierarchies["Region"], 2, 75)
    # the outputs
    t1 = pd.read_csv(job / "t1.csv", header=None, dtype={0: str, 1: str})
    assert len(t1) == first.n_cells
    protected = result.tables[0].protected.cells
    assert (t1[3] == 3).sum() == (protected["status"] == "u").sum()
    assert (t1[3] == 11).sum() == (protected["status"] == "m").sum() > 0
    jj = Table.from_jj(job / "t2.jj")
    assert jj.cells["status"].value_counts().to_dict() == \
        result.tables[1].protected.cells["status"].value_counts().to_dict()
    sbs = pd.read_csv(job / "t2.sbs", header=None, dtype={0: str, 1: str})
    row = sbs[(sbs[0] == "Total") & (sbs[1] == "1512")].iloc[0]
    assert (row[2], row[3]) == (0, 2)


def nk_primaries(data, region, n, k):
    """Cells of Size x Region where the n largest contributions exceed k % of the total,
    computed from the records with pandas alone."""
    rows = []
    for size in ("Total", None):
        for depth in range(3):
            part = data.copy()
            if size == "Total":
                part["Size"] = "Total"
            part["Region"] = [ancestor(region, code, depth) for code in part["Region"]]
            rows.append(part.dropna(subset=["Region"]))
    cells = pd.concat(rows).drop_duplicates(subset=["IndustryCode", "Year", "Var1", "Size",
                                                    "Region"])
    grouped = cells.groupby(["Size", "Region"])["Var2"]
    top = grouped.apply(lambda x: x.nlargest(n).sum())
    total = grouped.sum()
    return set(total.index[(top > k / 100 * total) & (total > 0)])


def ancestor(hierarchy, code, depth):
    """The code's ancestor at ``depth`` (0: the total), or None above its own depth."""
    chain = [code]
    while chain[-1] in hierarchy.parents:
        chain.append(hierarchy.parents[chain[-1]])
    chain.reverse()
    return chain[depth] if depth < len(chain) else None


@pytest.mark.parametrize("command, method", [("GH(1,75)", "hypercube"), ("MOD(1)", "modular"),
                                             ("CTA(1)", "controlled tabular adjustment"),
                                             ("RND(1,10,0,1)", "controlled rounding")])
def test_every_method_maps_and_is_checked(job, command, method):
    arb = with_commands(job / "tableinput" / "TestTable.arb", f"<SUPPRESS> {command}",
                        '<WRITETABLE> (1,3,AS+,"out.csv")')
    result = run_batch(arb)
    outcome = result.tables[0].outcome
    assert outcome.method == method and outcome.passed
    out = pd.read_csv(job / "tableinput" / "out.csv", header=None)
    if command.startswith("GH"):
        assert any("GH runs the toolkit's hypercube method" in line for line in result.log)
    if outcome.original is not None:
        published, original = out[2].to_numpy(), out[3].to_numpy()
        np.testing.assert_allclose(original, outcome.original.values, atol=0.006)
        table = outcome.table
        assert np.abs(table.A @ table.values - table.b).max() < 1e-6
        if command.startswith("RND"):
            assert np.all(np.isclose(np.round(published / 10) * 10, published))
    else:
        assert set(out[3]) <= {1, 9, 10, 11, 14}


def test_logbook_solver_versioninfo_and_clear(job):
    arb = job / "tableinput" / "TestTable.arb"
    text = arb.read_text()
    arb.write_text('<LOGBOOK> "C:\\Temp\\job log.txt"\n<SOLVER> CPLEX\n<VERSIONINFO> "v.txt"\n'
                   + text + "<CLEAR>\n" + text)
    result = run_batch(arb)
    log = (job / "tableinput" / "job log.txt").read_text()
    assert "<SOLVER> CPLEX" in log and "solves with HiGHS" in log
    assert "sdctoolkit" in (job / "tableinput" / "v.txt").read_text()
    assert len(result.tables) == 1 and log.count("Table file read") == 2


def test_safety_rules_on_tabular_input_keep_the_files_statuses(job):
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace("<READTABLE> 1T",
                                           "<SAFETYRULE> FREQ(10,30)\n<READTABLE> 1T"))
    cells = run_batch(arb).tables[0].table.cells
    from_file = pp_table(job / "tableinput").cells
    frequency = ((cells["freq"] > 0) & (cells["freq"] < 10)).to_numpy()
    became = frequency & (from_file["status"] == "s").to_numpy()
    assert became.sum() > 0
    assert (cells["status"].to_numpy()[became] == "u").all()
    np.testing.assert_allclose(cells["upl"].to_numpy()[became],
                               0.3 * np.abs(cells["value"].to_numpy()[became]))
    kept = (from_file["status"] != "s").to_numpy()
    assert (cells["status"].to_numpy()[kept] == from_file["status"].to_numpy()[kept]).all()
    assert cells.loc[("9", "4"), "upl"] == 1288.15
    assert (cells["status"] == "u").sum() == 9 + became.sum()


def test_a_batch_file_written_from_a_job_runs_the_same_job(job):
    write_tau_testw(job / "tau_testW.asc", tau_testw_records())
    arb = job / "TestRecode.arb"
    arb.write_text("\n".join(line for line in arb.read_text().splitlines()
                             if not line.startswith("<RECODE>")))
    first = run_batch(arb)
    again = job / "again.arb"
    again.write_text(format_arb("tau_testW.asc", "Tau_TestW.rda", list(first.tables),
                                tabular=False, suppress="MOD", outputs=((3, "t{n}.csv"),)))
    second = run_batch(again)
    for one, other in zip(first.tables, second.tables, strict=True):
        for spec in (one.spec, other.spec):
            assert (spec.dims, spec.response, spec.shadow_variable, spec.cost_variable) == (
                one.spec.dims, "Var2", "Var2", "Var2")
        assert one.safety.individual == other.safety.individual
        assert one.table.hierarchies == other.table.hierarchies
        pd.testing.assert_frame_equal(one.table.cells, other.table.cells)
    assert [p.name for p in second.written] == ["t1.csv", "t2.csv"] and second.passed


def test_a_recode_holds_for_every_table_with_the_variable(job):
    write_tau_testw(job / "tau_testW.asc", tau_testw_records(300))
    arb = job / "TestRecode.arb"
    arb.write_text(arb.read_text().replace("<RECODE>           1, Region, 2",
                                           "<RECODE>           1, Region, 1"))
    first, second = (t.table for t in run_batch(arb).tables)
    for table in (first, second):
        assert table.hierarchies["Region"].codes == ("Total", "Nr", "Os", "Ws", "Zd", "99")
    assert first.hierarchies["Size"].codes[1:] == ("1", "6", "7", "8", "9")
    assert "Size" not in second.hierarchies
