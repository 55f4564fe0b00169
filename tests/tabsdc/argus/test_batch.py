"""Running tau-ARGUS batch files: the two sample jobs, the method mapping, the outputs."""

import numpy as np
import pandas as pd
import pytest

import tabsdc.io.argus._protect as protect_module
from tabsdc import Table
from tabsdc.cli import main
from tabsdc.io.argus._apriori import write_hst
from tabsdc.io.argus._batch import JobTable, format_arb, run_batch
from tabsdc.io.argus._tab import write_tab
from tabsdc.io.argus._tables import TableSpec
from tabsdc.suppression import suppress
from tests.tabsdc.argus.conftest import tau_testw_records, write_tau_testw
from tests.tabsdc.argus.test_files import pp_table
from tests.tabsdc.leaks import leaked


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
    written = pd.read_csv(folder / "targus_safe.csv", header=None, dtype=str)
    hidden = written[2] == "x"  # a hidden cell shows x as its value and as its status
    assert hidden.sum() == outcome.details["secondary_cells"] + 13
    assert (hidden == (written[3] == "x")).all()
    assert set(written.loc[~hidden, 3]) <= {"1", "10", "14"}


def test_test_table_arb_with_the_optimal_method(job, capsys):
    arb = with_commands(job / "tableinput" / "TestTable.arb", "<SUPPRESS> OPT(1,5)",
                        '<WRITETABLE> (1,6,,"pp_safe.jj")', '<WRITETABLE> (1,2,AS+,"p.csv")',
                        '<WRITETABLE> (1,1,,"C:\\TauArgus\\out\\wide.csv")',
                        '<WRITETABLE> (1,5,AR+,"pp_safe.tab")')
    assert main(["argus", str(arb), "--quiet", "--json", str(job / "r.json"), "--log",
                 str(job / "r.log")]) == 0
    assert "every protection passed its audit" in capsys.readouterr().out
    log = (job / "r.log").read_text()
    for internal in ("pp_safe.jj", "pp_safe.tab"):  # the internal outputs are named as such
        assert f"{internal}: confidential: contains unpublished values" in log
    assert log.count("confidential") == 2
    folder = job / "tableinput"
    jj = Table.from_jj(folder / "pp_safe.jj")
    pivot = pd.read_csv(folder / "p.csv", dtype=str)
    assert list(pivot.columns) == ["Size", "Region", "Var2", "status"]
    hidden = (pivot["Var2"] == "x") & (pivot["status"] == "x")
    # (protected against the respondents of its single-contributor cells too)
    assert hidden.sum() == jj.cells["status"].isin(["u", "m"]).sum() == 22
    assert set(pivot.loc[~hidden, "status"]) <= {"Safe", "Protected", "Empty"}
    wide = (folder / "wide.csv").read_text().splitlines()
    assert len(wide) == 1 + 9 and wide[0].split(",")[1:4] == ['"Total"', '"Nr"', '"1"']
    assert sum(line.count(",x") for line in wide) == 22
    back = pd.read_csv(folder / "pp_safe.tab", sep=";", header=None)
    assert back.shape == (162, 12)
    primary = back[back[7] == "U"]
    assert len(primary) == 9
    assert (primary[10] <= primary[2] - primary[8] + 1e-6).all()
    assert (primary[11] >= primary[2] + primary[9] - 1e-6).all()


def test_publishable_outputs_of_the_sample_job_show_x_for_every_hidden_cell(job):
    """pp.tab protected with OPT(1,5), written with the manual's own ``(1,1,AS+,...)`` and as
    every other publishable type with ``AS+``: a hidden cell shows x in every field, and no
    hidden value is in any of the files (type 1 with AS+ wrote every one of them)."""
    arb = with_commands(job / "tableinput" / "TestTable.arb", "<SUPPRESS> OPT(1,5)",
                        '<WRITETABLE> (1,1,AS+,"t1.csv")', '<WRITETABLE> (1,2,AS+,"t2.csv")',
                        '<WRITETABLE> (1,3,AS+SE-,"t3.csv")',
                        '<WRITETABLE> (1,4,AS+HL+,"t4.sbs")')
    result = run_batch(arb)
    assert result.passed
    protected = result.tables[0].protected
    hidden = protected.cells["status"].isin(["u", "m"]).to_numpy()
    assert hidden.sum() == 22  # (protected against its single-contributor respondents too)
    folder = job / "tableinput"
    wide = pd.read_csv(folder / "t1.csv", dtype=str, index_col=0)
    np.testing.assert_array_equal(wide.stack().to_numpy() == "x", hidden)  # rows Size, cols Region
    for name, fields in (("t2.csv", [2, 3]), ("t3.csv", [2, 3]), ("t4.sbs", [4, 5, 6])):
        lines = pd.read_csv(folder / name, dtype=str, header=None,
                            skiprows=1 if name == "t2.csv" else 0)
        assert len(lines) == protected.n_cells
        np.testing.assert_array_equal(lines[fields].eq("x").all(axis=1), hidden)
        assert not lines.loc[~hidden, fields].eq("x").any(axis=None)
    values = protected.values
    published = values[~hidden]
    # the hidden values that no published cell or code shares (4, 5, 11 and 15 are codes)
    secret = [v for v in values[hidden]
              if v > 100 and not np.isclose(published, v, atol=0.5).any()]
    assert len(secret) == 11
    for name in ("t1.csv", "t2.csv", "t3.csv", "t4.sbs"):
        assert not leaked((folder / name).read_text(encoding="latin-1"), secret).size, name


def test_an_output_of_a_table_not_protected_is_logged_as_not_publishable(job):
    arb = with_commands(job / "tableinput" / "TestTable.arb", '<WRITETABLE> (1,3,,"raw.csv")')
    result = run_batch(arb)
    assert any("not protected" in line and "do not publish this file" in line
               for line in result.log)
    raw = pd.read_csv(job / "tableinput" / "raw.csv", header=None, dtype=str)
    assert (raw[2] == "x").sum() == 9  # the primary cells alone are hidden


def test_test_recode_arb_on_generated_microdata(job):
    records = tau_testw_records()
    write_tau_testw(job / "tau_testW.asc", records)
    arb = with_commands(job / "TestRecode.arb", "<SUPPRESS> MOD(0,1)",
                        '<WRITETABLE> (1,3,AS+,"t1.csv")', '<WRITETABLE> (2,4,HL+,"t2.sbs")',
                        '<WRITETABLE> (2,6,,"t2.jj")')
    result = run_batch(arb)
    assert result.passed
    assert any("audit of the linked tables together: every primary cell protected" in line
               for line in result.log)
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
    t1 = pd.read_csv(job / "t1.csv", header=None, dtype=str)
    assert len(t1) == first.n_cells
    protected = result.tables[0].protected.cells
    hidden = protected["status"].isin(["u", "m"]).to_numpy()
    assert (protected["status"] == "m").sum() > 0
    np.testing.assert_array_equal(t1[2] == "x", hidden)
    np.testing.assert_array_equal(t1[3] == "x", hidden)
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
    out = pd.read_csv(job / "tableinput" / "out.csv", header=None, dtype=str)
    if command.startswith("GH"):
        assert any("GH runs the toolkit's hypercube method" in line for line in result.log)
    if command.startswith(("GH", "MOD")):  # the pattern's cost against its bound
        assert any("of the certified lower bound" in line for line in result.log)
    if outcome.original is not None:
        # every cell at its new value; AS+ adds no column of original values
        assert out.shape[1] == 3
        assert any("original values are not published" in line for line in result.log)
        published = out[2].astype(float).to_numpy()
        table = outcome.table
        np.testing.assert_allclose(published, table.values, atol=0.006)
        assert np.abs(table.A @ table.values - table.b).max() < 1e-6
        if command.startswith("RND"):
            assert np.all(np.isclose(np.round(published / 10) * 10, published))
    else:
        hidden = outcome.table.cells["status"].isin(["u", "m"]).to_numpy()
        np.testing.assert_array_equal(out[2] == "x", hidden)
        assert set(out.loc[hidden, 3]) == {"x"}
        assert set(out.loc[~hidden, 3]) <= {"1", "10", "14"}


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


def test_the_modular_job_in_two_processes_writes_the_same_table(job, monkeypatch):
    # ``tabsdc argus --n-jobs 2`` hands its processes to the suppression (spied), whose
    # sub-tables then run in two processes: the same pattern as in one
    arb = with_commands(job / "tableinput" / "TestTable.arb", "<SUPPRESS> MOD(1)",
                        '<WRITETABLE> (1,3,AS+,"out.csv")')
    one = run_batch(arb)
    written = (job / "tableinput" / "out.csv").read_text()
    real, asked = protect_module.suppress, []
    monkeypatch.setattr(protect_module, "suppress",
                        lambda *args, **kwargs: asked.append(kwargs["n_jobs"])
                        or real(*args, **kwargs))
    assert main(["argus", str(arb), "--n-jobs", "2", "--quiet"]) == 0
    assert asked == [2] and one.passed
    assert (job / "tableinput" / "out.csv").read_text() == written
