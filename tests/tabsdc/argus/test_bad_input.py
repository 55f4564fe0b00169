"""Jobs that cannot run: a clear message naming file, line and field (or record), exit
status 2, no traceback, and nothing written (outputs of earlier commands included)."""

import pytest

from tabsdc.cli import main
from tests.tabsdc.argus.conftest import tau_testw_records, write_tau_testw


def files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


def fails(arb, capsys, *expected):
    folder = arb.parent
    before = files(folder)
    assert main(["argus", str(arb), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, err
    assert files(folder) == before
    return err


def table_job(job, *extra):
    """TestTable.arb with a WRITETABLE before ``extra`` (which must then fail)."""
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace(
        "<GOINTERACTIVE>", "<SUPPRESS> GH(1)\n<WRITETABLE> (1,3,AS+,\"early.csv\")\n"
        + "\n".join(extra)))
    return arb


def test_unparsable_metadata_line_names_file_line_and_field(job, capsys):
    rda = job / "tableinput" / "pp.rda"
    rda.write_text(rda.read_text().replace("<DECIMALS> 2", "<DECIMALS> two"))
    fails(job / "tableinput" / "TestTable.arb", capsys, "pp.rda, line 15", "field 2",
          "'two' is not a whole number")


def test_unknown_metadata_keyword(job, capsys):
    rda = job / "Tau_TestW.rda"
    rda.write_text(rda.read_text().replace("<WEIGHT>", "<WIEGHT>"))
    write_tau_testw(job / "tau_testW.asc", tau_testw_records(50))
    fails(job / "TestRecode.arb", capsys, "Tau_TestW.rda, line 20", "unknown keyword <WIEGHT>")


def test_short_fixed_width_record_names_the_record(job, capsys):
    write_tau_testw(job / "tau_testW.asc", tau_testw_records(50))
    lines = (job / "tau_testW.asc").read_text().splitlines()
    lines[2] = lines[2][:60]
    (job / "tau_testW.asc").write_text("\n".join(lines) + "\n")
    fails(job / "TestRecode.arb", capsys, "tau_testW.asc: record 3 has 60 characters",
          "needs 99")


def test_code_missing_from_the_hierarchy(job, capsys):
    tab = job / "tableinput" / "pp.tab"
    tab.write_text(tab.read_text().replace('" 9";"12"', '" 9";"13"'))
    fails(job / "tableinput" / "TestTable.arb", capsys,
          "Region: code '13' is not in hierarchy region2.hrc")


def test_totals_that_disagree_with_their_parts(job, capsys):
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace("<READTABLE> 1T", "<READTABLE> 0"))
    fails(arb, capsys, "TestTable.arb, line 7: <READTABLE>", "do not hold",
          "Size=Total x Region=Os")


@pytest.mark.parametrize("rule, message", [
    ("NK(2,175)", "0 < k <= 100"), ("FREQ(3,-5)", "range in [0, 100]"),
    ("P(30,20,1)", "p < q"), ("NK(2,75)|WGT(3)", "WGT takes 0 or 1")])
def test_impossible_safety_rule(job, capsys, rule, message):
    write_tau_testw(job / "tau_testW.asc", tau_testw_records(50))
    arb = job / "TestRecode.arb"
    arb.write_text(arb.read_text().replace("NK(2,75)|NK(0,0)", rule, 1))
    fails(arb, capsys, "TestRecode.arb, line 7: <SAFETYRULE>", message)


@pytest.mark.parametrize("command, message", [
    ("<CKM> 1", "<CKM>: the cell key method runs as <SUPPRESS> CKM(table number)"),
    ("<SUPPRESS> CKM(1)", "CKM needs microdata with record keys"),
    ("<SUPPRESS> RND(0,5)", "table number 0 (linked tables) is possible with GH, MOD, OPT"),
    ("<SUPPRESS> OPT(2)", "table 2 does not exist"),
    ("<WRITETABLE> (1,7,,\"x.txt\")", "type 7 (CKM) needs a table perturbed by SUPPRESS CKM"),
    ("<WRITETABLE> (1,6,TR+,\"x.jj\")", "TR+ is not supported"),
    ("<APRIORI> \"pp.hst\", 1, \";\"", "a-priori file"),
    ("<FROBNICATE>", "unknown command"),
])
def test_unsupported_commands_stop_the_run(job, capsys, command, message):
    err = fails(table_job(job, command), capsys, message)
    assert "TestTable.arb, line 10" in err


@pytest.mark.parametrize("arb, message", [
    ("<SAFETYRULE> NK(3,75)\n", "line 1: <SAFETYRULE>: SAFETYRULE must follow a SPECIFYTABLE"),
    ('<OPENTABLEDATA> "pp.tab"\n<READTABLE>\n', "line 2: <READTABLE>: needs OPENTABLEDATA"),
    ("<NEEDS> 1\n", "line 1: <NEEDS>: unknown command"),
    ("OPENMETADATA pp.rda\n", "line 1: field 1: expected a <COMMAND>"),
])
def test_commands_out_of_order_or_unknown(job, capsys, arb, message):
    path = job / "tableinput" / "bad.arb"
    path.write_text(arb)
    fails(path, capsys, message)


def test_readtable_without_additivity_is_refused(job, capsys):
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace("<READTABLE> 1T", "<READTABLE> 2"))
    fails(arb, capsys, "line 7: <READTABLE>", "2 (additivity not required) is not")


def test_missing_data_file(job, capsys):
    (job / "tableinput" / "pp.tab").unlink()
    fails(job / "tableinput" / "TestTable.arb", capsys,
          "line 4: <OPENTABLEDATA>: file pp.tab not found")
