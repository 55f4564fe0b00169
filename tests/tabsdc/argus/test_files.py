"""Readers and writers of tau-ARGUS files, on every file of tau-ARGUS's sample folder."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabsdc._errors import HierarchyError, RuleError
from tabsdc._hierarchy import Hierarchy
from tabsdc._rules import DominanceRule, FrequencyRule, PPercentRule
from tabsdc.io.argus._apriori import apply_apriori, parse_hst, read_hst, write_hst
from tabsdc.io.argus._cdl import read_cdl
from tabsdc.io.argus._grc import close_below_depth, close_subtrees, parse_grc, read_grc
from tabsdc.io.argus._hrc import format_hrc, hierarchy_from_levels, parse_hrc, read_hrc
from tabsdc.io.argus._metadata import format_rda, parse_rda, read_rda
from tabsdc.io.argus._microdata import read_data
from tabsdc.io.argus._safety import (
    CoalitionPPercentRule,
    format_safety_rule,
    parse_safety_rule,
)
from tabsdc.io.argus._syntax import ArgusFormatError, resolve_path
from tabsdc.io.argus._tab import write_tab
from tabsdc.io.argus._tables import parse_table_spec, tabular_table, variable_hierarchy
from tests.tabsdc.argus.conftest import SAMPLES

RDA_FILES = sorted(SAMPLES.rglob("*.rda"))


def pp_table(folder=SAMPLES / "tableinput", compute_totals=True):
    metadata = read_rda(folder / "pp.rda", kind="table")
    frame = read_data(folder / "pp.tab", metadata)
    spec = parse_table_spec('"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"')
    hierarchies = {d: variable_hierarchy(metadata.variable(d), frame[d].tolist(), folder)
                   for d in spec.dims}
    return tabular_table(frame, metadata, spec, None, hierarchies,
                         compute_totals=compute_totals, keep_status=True)


# -- metadata -------------------------------------------------------------------------------
def test_every_sample_rda_is_read_and_round_trips():
    assert len(RDA_FILES) == 7
    for path in RDA_FILES:
        metadata = read_rda(path)
        again = parse_rda(format_rda(metadata), kind=metadata.kind)
        assert again.variables == metadata.variables, path.name
        assert (again.separator, again.safe, again.unsafe, again.protect) == (
            metadata.separator, metadata.safe, metadata.unsafe, metadata.protect)


def test_fixed_format_metadata_of_tau_testw():
    metadata = read_rda(SAMPLES / "Tau_TestW.rda")
    assert metadata.kind == "fixed"
    industry = metadata.variable("IndustryCode")
    assert (industry.start, industry.width, industry.missing) == (4, 5, ("99999",))
    assert industry.hier_levels == (3, 1, 1, 0, 0) and industry.distance == (1, 3, 5, 7, 9)
    region = metadata.variable("region")
    assert (region.hierarchy_file, region.lead_string, region.codelist) == (
        "region2.hrc", "@", "region.cdl")
    weight = metadata.variable("Wgt")
    assert (weight.role, weight.decimals, weight.start, weight.width) == ("weight", 1, 15, 4)
    assert metadata.variable("Var2").decimals == 2
    request = metadata.variable("Request")
    assert (request.role, request.request_codes, request.start) == ("request", ("1", "2"), 99)
    assert [v.name for v in metadata.variables if v.numeric] == [f"Var{k}" for k in range(1, 9)]


def test_tabular_metadata_of_pp():
    metadata = read_rda(SAMPLES / "tableinput" / "pp.rda")
    assert (metadata.kind, metadata.separator) == ("table", ";")
    roles = [(v.name, v.role) for v in metadata.variables]
    assert roles == [("Size", ""), ("Region", ""), ("Var2", ""), ("FreqVar", "frequency"),
                     ("Var2_Shadow", "shadow"), ("Var2_Cost", "cost"), ("Top1", "top"),
                     ("Top2", "top"), ("StatusVar", "status"), ("LowerProtLevel", "lower_pl"),
                     ("UpperProtLevel", "upper_pl")]
    assert metadata.variable("Size").missing == ("99",)
    assert metadata.variable("Region").total_code == "Total"


def test_free_format_and_cell_key_metadata():
    micro = read_rda(SAMPLES / "cellkey" / "Magnitude" / "microdata.rda")
    assert (micro.kind, micro.separator) == ("free", ";")
    assert micro.variable("Savings").cell_key["CKM"] == "T(3)"
    assert micro.variable("Key").role == "record_key"
    synth = read_rda(SAMPLES / "cellkey" / "Frequency" / "hc_9_2_synth_Tau.rda")
    assert synth.variable("id").role == "holding" and synth.variable("record_key").decimals == 15


def test_metadata_keywords_of_tabular_input_with_status_codes():
    metadata = parse_rda('<SEPARATOR> ","\n<SAFE> s\n<UNSAFE> u\n<PROTECT> p\n'
                         "expvar1\n <RECODABLE>\n <TOTCODE> T\nrespvar\n <NUMERIC>\n"
                         "costs\n <NUMERIC> <COST>\nfreq\n <FREQUENCY>\nstat\n <STATUS>\n")
    assert (metadata.safe, metadata.unsafe, metadata.protect) == ("s", "u", "p")
    assert metadata.variable("costs").role == "cost"
    assert metadata.variable("expvar1").total_code == "T"


# -- hierarchies, codelists, recodes --------------------------------------------------------
def test_every_sample_hrc_is_read():
    region2 = read_hrc(SAMPLES / "region2.hrc")
    assert region2.children("Total") == ("Nr", "Os", "Ws", "Zd")
    assert region2.children("Ws") == ("8", "9", "10") and len(region2.leaves) == 12
    region = read_hrc(SAMPLES / "Region.hrc")
    assert region.children("Total") == ("A", "B", "C")
    assert region.children("B") == ("3", "4", "5")
    age = read_hrc(SAMPLES / "cellkey" / "Magnitude" / "dim_age.hrc")
    assert age.children("Total") == ("A1", "A2", "3", "4", "5", "6")
    sex = read_hrc(SAMPLES / "cellkey" / "Magnitude" / "dim_sex.hrc")
    assert sex.children("male") == ("2",)
    for path in SAMPLES.rglob("region2.hrc"):
        assert read_hrc(path) == region2


@given(st.lists(st.integers(0, 3), min_size=1, max_size=25))
def test_hrc_round_trip_on_random_trees(depths):
    lines, previous = [], 0
    for number, depth in enumerate(depths):
        depth = min(depth, previous + 1) if number else 0
        lines.append("@" * depth + f"c{number}")
        previous = depth
    hierarchy = parse_hrc("\n".join(lines))
    assert parse_hrc(format_hrc(hierarchy)) == hierarchy
    assert format_hrc(hierarchy).splitlines() == lines


def test_hierlevels_hierarchy_puts_missing_codes_under_the_total():
    h = hierarchy_from_levels(["14211", "15001", "99999"], [3, 1, 1, 0, 0],
                              missing=["99999"])
    assert h.parents["99999"] == "Total" and h.parents["1421"] == "142"
    assert h.parents["14211"] == "1421"


def test_every_sample_codelist_is_read():
    labels = read_cdl(SAMPLES / "region.cdl")
    assert len(labels) == 16 and labels["1"] == "Groningen" and labels["Zd"] == "South"
    assert read_cdl(SAMPLES / "GK.CDL") == {"1": "small", "6": "size 2", "7": "size 3",
                                           "8": "size 4", "9": "size 5"}
    for path in SAMPLES.rglob("*.[cC][dD][lL]"):
        assert read_cdl(path)


def test_every_sample_recode_is_read_and_applied():
    gk = read_grc(SAMPLES / "GK.GRC")
    assert gk.mapping([str(c) for c in range(1, 10)]) == {
        "1": "1", "2": "1", "3": "1", "4": "1", "5": "1", "6": "6", "7": "7", "8": "8", "9": "9"}
    tree = read_grc(SAMPLES / "IndCode2.grc")
    assert tree.tree_codes == ("142", "1500", "1512")
    h = hierarchy_from_levels(["14211", "14212", "15001", "15121"], [3, 1, 1])
    closed, moved = close_subtrees(h, tree.tree_codes)
    assert closed.children("142") == () and moved["14211"] == "142" and moved["1421"] == "142"
    assert moved["15001"] == "1500" and closed.children("151") == ("1512",)


def test_recode_intervals_of_the_manual():
    recode = parse_grc("1: -49\n2: 50 - 99\n3: 100 \u2013 149\n4: 150 -\n")
    assert recode.mapping(["1", "49", "50", "149", "150", "182"]) == {
        "1": "1", "49": "1", "50": "2", "149": "3", "150": "4", "182": "4"}
    assert parse_grc("1: 02 - 06, 09").mapping(["01", "03", "09"]) == {
        "01": "01", "03": "1", "09": "1"}


def test_level_recode_keeps_the_levels_above():
    h = read_hrc(SAMPLES / "region2.hrc")
    assert close_below_depth(h, 2)[0] == h
    cut, moved = close_below_depth(h, 1)
    assert cut.codes == ("Total", "Nr", "Os", "Ws", "Zd") and moved["10"] == "Ws"


# -- data files -----------------------------------------------------------------------------
def test_pp_tab_is_read_with_its_decimal_commas():
    frame = read_data(SAMPLES / "tableinput" / "pp.tab", read_rda(SAMPLES / "tableinput" /
                                                                  "pp.rda"))
    assert len(frame) == 162
    assert frame["Var2"].iloc[0] == 16847646.84 and frame["UpperProtLevel"].max() == 1288.15
    assert frame["StatusVar"].value_counts().to_dict() == {"S": 110, "E": 43, "U": 9}
    assert frame["Size"].iloc[18] == "2" and frame["Region"].iloc[2] == "1"


def test_separated_microdata_of_the_cell_key_folder():
    folder = SAMPLES / "cellkey" / "Magnitude"
    frame = read_data(folder / "microdata.csv", read_rda(folder / "microdata.rda"))
    raw = pd.read_csv(folder / "microdata.csv", sep=";", header=None, dtype=str)
    assert len(frame) == len(raw) == 4580
    assert frame["Savings"].sum() == pytest.approx(raw[3].astype(float).sum())
    assert set(frame["Sex"]) <= set(read_hrc(folder / "dim_sex.hrc").codes)


def test_p_tables_of_the_cell_key_folder_are_distributions():
    """The cell-key p-tables are read (tabsdc.io.argus._ckm runs the method on them): each
    original value i has transition probabilities summing to 1."""
    for path in SAMPLES.rglob("*.txt"):
        table = pd.read_csv(path, sep=";")
        table.columns = [c.strip('"') for c in table.columns]
        sums = table.groupby("i")[table.columns[2]].sum()
        np.testing.assert_allclose(sums, 1.0, atol=1e-6, err_msg=path.name)


def test_pp_tab_becomes_the_table_of_castros_targus_structure():
    table = pp_table()
    assert table.n_cells == 162 and table.n_relations == 63
    assert table.cells["status"].value_counts().to_dict() == {"s": 110, "z": 43, "u": 9}
    primary = table.cells[table.cells["status"] == "u"]
    assert primary.loc[("9", "4"), ["lpl", "upl"]].tolist() == [1288.15, 1288.15]
    targus = __import__("tabsdc").Table.from_jj(SAMPLES / "tableinput" / "TARGUS.jj")
    assert (abs(targus.A - table.A)).sum() == 0


def test_tab_with_all_totals_must_add_up():
    from tabsdc._errors import AdditivityError

    with pytest.raises(AdditivityError, match="Os"):
        pp_table(compute_totals=False)


# -- writers: round trips -------------------------------------------------------------------
def test_tab_round_trip_gives_the_same_table(tmp_path):
    table = pp_table()
    metadata = write_tab(table, tmp_path / "pp_out.tab", response="Var2", decimals=2)
    # an internal file: its .rda says so on a comment line, which the readers skip
    rda = (tmp_path / "pp_out.rda").read_text(encoding="latin-1")
    assert rda.splitlines()[0] == "// confidential: contains unpublished values"
    again_meta = read_rda(tmp_path / "pp_out.rda")
    assert again_meta.variables == metadata.variables
    frame = read_data(tmp_path / "pp_out.tab", again_meta)
    spec = parse_table_spec('"Size""Region"|"Var2"||"cost"')
    hierarchies = {d: variable_hierarchy(again_meta.variable(d), frame[d].tolist(), tmp_path)
                   for d in spec.dims}
    again = tabular_table(frame, again_meta, spec, None, hierarchies)
    assert again.hierarchies == table.hierarchies
    for column in ("value", "freq", "x1", "x2", "cost", "lpl", "upl"):
        np.testing.assert_array_equal(again.cells[column], table.cells[column], column)
    assert (again.cells["status"] == table.cells["status"]).all()


def test_hst_round_trip_gives_statuses_costs_levels_and_bounds(tmp_path):
    table = pp_table()
    rng = np.random.default_rng(3)
    changed = table.with_columns(
        status=np.where(rng.random(table.n_cells) < 0.1, "u", table.cells["status"]),
        cost=rng.integers(1, 100, table.n_cells).astype(float),
        lb=0.0, ub=2 * np.abs(table.values) + 1)
    changed = changed.with_columns(upl=np.where(changed.cells["status"] == "u", 7.5, 0.0),
                                   lpl=np.where(changed.cells["status"] == "u", 2.5, 0.0))
    write_hst(changed, tmp_path / "a.hst")
    plain = table.with_columns(status="s", lpl=0.0, upl=0.0)
    outcome = apply_apriori(plain, read_hst(tmp_path / "a.hst", 2), ("Total", "Total"))
    assert outcome.unknown == () and outcome.applied > 3 * table.n_cells
    for column in ("status", "cost", "lpl", "upl", "lb", "ub"):
        np.testing.assert_array_equal(outcome.table.cells[column], changed.cells[column])


def test_apriori_lines_of_the_manual():
    table = pp_table().with_columns(status="s", lpl=0.0, upl=0.0)
    lines = parse_hst("Nr, 4, u\nZd, 6, p\n 5, 5, c, 1\n5,Nr,pl,3,4\n5,Os,ab,0,9e6\n"
                      "7,Total,u\n", 2, ",")
    flipped = [(a.codes[::-1], a.action, a.numbers) for a in lines[:2]]
    assert flipped == [(("4", "Nr"), "U", ()), (("6", "Zd"), "P", ())]
    outcome = apply_apriori(table, lines, ("Total", "Total"), manual_margin=10)
    cells = outcome.table.cells
    assert [entry.codes for entry in outcome.unknown] == [("Nr", "4"), ("Zd", "6")]
    assert cells.loc[("5", "5"), "cost"] == 1
    assert cells.loc[("5", "Nr"), ["lpl", "upl"]].tolist() == [3, 4]
    assert cells.loc[("5", "Os"), ["lb", "ub"]].tolist() == [0, 9e6]
    assert cells.loc[("7", "Total"), "status"] == "u"
    assert cells.loc[("7", "Total"), "upl"] == pytest.approx(0.1 * 2505042.58)


def test_apriori_levels_hold_whatever_the_order_and_forbidden_changes_stop():
    table = pp_table()
    for text in ("5;Nr;pl;3;4\n5;Nr;u\n", "5;Nr;u\n5;Nr;pl;3;4\n"):
        outcome = apply_apriori(table, parse_hst(text, 2), ("Total", "Total"))
        assert outcome.table.cells.loc[("5", "Nr"), ["status", "lpl", "upl"]].tolist() == [
            "u", 3, 4]
    with pytest.raises(ArgusFormatError, match=r"line 2: cell \('9', '4'\): status 'u'"):
        apply_apriori(table, parse_hst("5;Nr;c;3\n9;4;p\n", 2), ("Total", "Total"))
    with pytest.raises(ArgusFormatError, match="line 1: cell .'5', 'Xx'. is not in the table"):
        apply_apriori(table, parse_hst("5;Xx;s\n", 2), ("Total", "Total"),
                      ignore_errors=False)


# -- safety rules ---------------------------------------------------------------------------
def test_safety_rule_positions_individual_and_holding():
    spec = parse_safety_rule("P(15,3)|P(0,1)|P(10,1)|NK(3,70)|FREQ(3,20)|FREQ(2,10)|ZERO(10)|"
                             "REQ(70,80,3,20)|WGT(1)|MIS(1)|MAN(15)")
    assert [r.name for r in spec.individual] == [
        "p%(p=15, n=3)", "(3,70)-dominance", "freq(n=3)", "zero(range=10)",
        "request(70,80,3,20)"]
    assert spec.holding == (PPercentRule(10), FrequencyRule(2, 10))
    assert (spec.weighted, spec.missing_safe, spec.manual_margin) == (True, True, 15)
    again = parse_safety_rule(format_safety_rule(spec))
    assert (again.individual, again.holding) == (spec.individual, spec.holding)
    assert parse_safety_rule("NK(2,75)|NK(0,0)").individual == (DominanceRule(2, 75),)


@pytest.mark.parametrize("rule", ["NK(3,120)", "NK(0,75)", "FREQ(3,130)", "P(120)",
                                  "P(20,10,1)", "ZERO(-1)", "WGT(2)", "MAN(150)", "XYZ(1)",
                                  "NK(3)", "NK(1,50)|NK(1,50)|NK(1,50)|NK(1,50)|NK(1,50)"])
def test_impossible_safety_rules_are_refused(rule):
    with pytest.raises(RuleError):
        parse_safety_rule(rule)


@given(st.lists(st.floats(0, 1000), min_size=3, max_size=3), st.floats(1, 60))
def test_coalition_p_percent_with_one_intruder_is_the_p_percent_rule(parts, p):
    parts = sorted(parts, reverse=True)
    cells = pd.DataFrame({"value": [sum(parts) + 5.0], "x1": [parts[0]], "x2": [parts[1]],
                          "x3": [parts[2]]})
    ours = CoalitionPPercentRule(p, 1).evaluate(cells)
    theirs = PPercentRule(p).evaluate(cells)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1])


# -- files named by jobs --------------------------------------------------------------------
def test_windows_paths_and_letter_case_resolve_next_to_the_job():
    folder = SAMPLES / "tableinput"
    assert resolve_path(r"C:\Program Files\TauARGUS\data\PP.TAB", folder) == folder / "pp.tab"
    assert resolve_path("REGION.CDL", folder) == folder / "region.cdl"
    assert resolve_path("tau_testW.rda", SAMPLES) == SAMPLES / "Tau_TestW.rda"


def test_codes_missing_from_a_hierarchy_are_named():
    metadata = read_rda(SAMPLES / "tableinput" / "pp.rda")
    with pytest.raises(HierarchyError, match=r"'13' is not in hierarchy region2.hrc"):
        variable_hierarchy(metadata.variable("Region"), ["1", "13"], SAMPLES / "tableinput")
    assert isinstance(variable_hierarchy(metadata.variable("Region"), ["1", "99"],
                                         SAMPLES / "tableinput"), Hierarchy)


@pytest.mark.parametrize("module", [
    *(f"tabsdc.io.argus._{name}" for name in ("syntax", "metadata", "microdata", "hrc", "cdl",
                                             "grc", "apriori", "safety", "tables", "tab",
                                             "output", "batch", "plan", "staging", "protect")),
    "tabsdc.cli._argus"])
def test_the_examples_in_the_docstrings_run(module):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(module))
    assert failures == 0 and tried > 0


@pytest.mark.parametrize("compute_totals", [False, True])
def test_rules_on_tabular_input_look_at_the_shadow_variable(compute_totals):
    """NK(1,90) on pp.tab with the shadow variable at a tenth of the response: a cell is
    primary when its largest contribution exceeds 90 % of the shadow total (9 % of the
    value; none exceeds 90 % of the value)."""
    folder = SAMPLES / "tableinput"
    metadata = read_rda(folder / "pp.rda", kind="table")
    table = pp_table()
    frame = read_data(folder / "pp.tab", metadata)
    frame["Var2"] = table.values  # additive values (pp.tab's totals are 1 unit off)
    frame["Var2_Shadow"] = 0.1 * table.values
    spec = parse_table_spec('"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"')
    hierarchies = dict(table.hierarchies)

    def read(rules):
        return tabular_table(frame, metadata, spec, rules, hierarchies,
                             compute_totals=compute_totals).cells

    before, cells = read(None), read(parse_safety_rule("NK(1,90)"))
    flagged = cells["x1"] > 0.9 * 0.1 * cells["value"]
    expected = (flagged & (before["status"] == "s")) | (before["status"] == "u")
    assert ((cells["status"] == "u") == expected).all()
    on_response = (cells["x1"] > 0.9 * cells["value"]) & (before["status"] == "s")
    assert (flagged & (before["status"] == "s")).sum() > on_response.sum()
