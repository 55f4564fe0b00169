"""Linked tables: the combined system, the tables cut back out, joint protection."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from tabsdc import (
    FrequencyRule,
    Hierarchy,
    HierarchyError,
    InputError,
    PPercentRule,
    Table,
    TableSet,
    apply_rules,
)
from tabsdc._release import write_publishable
from tabsdc._tableset import TableSetResult
from tabsdc.audit import audit
from tabsdc.cta import adjust
from tabsdc.suppression import suppress
from tests.conftest import examples

# 14 companies: activity, region, size class, turnover. Table 1 is activity x region,
# table 2 activity x size; they share the activity margin and the grand total.
SURVEY = pd.DataFrame({
    "act": list("AAABCBABBCCCAC"),
    "reg": ["N", "S", "N", "N", "S", "N", "S", "N", "N", "E", "S", "E", "E", "E"],
    "size": list("11222221111112"),
    "v": [37.0, 27, 10, 16, 13, 17, 7, 6, 3, 5, 23, 11, 40, 9],
})
RULES = [FrequencyRule(3, level=10)]


def ruled(dims, data=SURVEY) -> Table:
    return apply_rules(Table.from_microdata(data, dims, "v"), RULES).table


def test_combined_table_holds_shared_cells_once_and_every_relation():
    linked = TableSet.from_microdata(SURVEY, [["act", "reg"], ["act", "size"]], "v")
    alone = [Table.from_microdata(SURVEY, d, "v") for d in (["act", "reg"], ["act", "size"])]
    # 4 x 4 + 4 x 3 cells, of which the activity margin (4 cells) is shared
    assert linked.n_cells == 16 + 12 - 4
    # 8 + 7 relations per table; "Total = A + B + C" at the grand total is shared
    assert [t.n_relations for t in alone] == [8, 7]
    assert linked.n_relations == 8 + 7 - 1
    assert linked.combined.dims == ("act", "reg", "size")
    linked.combined.check_additivity()
    # every relation of every table is a relation of the combined system
    combined_rows = {tuple(np.flatnonzero(row)) + tuple(row[row != 0])
                     for row in linked.combined.A.toarray()}
    for table, position in zip(alone, linked.positions, strict=True):
        for row in table.A.toarray():
            mapped = np.zeros(linked.n_cells)
            mapped[position] = row
            assert tuple(np.flatnonzero(mapped)) + tuple(mapped[mapped != 0]) in combined_rows
    # the shared cell is one row of the combined table
    a_margin = [linked.positions[i][alone[i].cells.index.get_loc(("A", "Total"))]
                for i in range(2)]
    assert a_margin[0] == a_margin[1]
    assert linked.combined.cells["value"].iloc[a_margin[0]] == 121.0


def test_tables_protected_one_at_a_time_disclose_a_primary_jointly_protected_do_not():
    t1, t2 = ruled(["act", "reg"]), ruled(["act", "size"])
    s1, s2 = suppress(t1, cost="value"), suppress(t2, cost="value")
    # each pattern is optimal and protects its own table ...
    assert s1.stats.status == s2.stats.status == "optimal"
    assert s1.audit.protected and s2.audit.protected
    # ... but table 1 hides the margins B and C that table 2 publishes (42 and 61)
    assert s1.table.cells.loc[("B", "Total"), "status"] == "m"
    assert s2.table.cells.loc[("B", "Total"), "status"] == "s"
    published_together = TableSet.from_tables([s1.table, s2.table])
    attack = audit(published_together, singletons=False)  # the outsider's attack
    assert isinstance(attack, TableSetResult)
    failures = attack.failures
    assert list(failures.index) == [("A", "N", "Total")]
    # B x N = B = 42, so A x N = (Total x N) 89 - 42 = 47 exactly
    assert failures[["value", "lower", "upper"]].iloc[0].tolist() == [47.0, 47.0, 47.0]

    joint = suppress(TableSet.from_tables([t1, t2]), cost="value")
    assert joint.stats.status == "optimal"
    assert joint.audit.protected
    assert audit(joint.table.combined).protected
    for table in joint.tables:  # each table alone is then protected as well
        assert audit(table).protected
    # the shared cells carry one status in both tables
    shared = joint.tables[0].cells.loc[[("B", "Total"), ("C", "Total")], "status"]
    assert shared.tolist() == joint.tables[1].cells.loc[shared.index, "status"].tolist()
    # the joint pattern costs more than either table alone
    assert joint.totals()["objective (cost of secondaries)"] > max(
        s.totals()["objective (cost of secondaries)"] for s in (s1, s2))


def test_rules_on_a_set_flag_what_the_tables_alone_flag():
    linked = TableSet.from_microdata(SURVEY, [["act", "reg"], ["act", "size"], ["reg"]], "v")
    result = apply_rules(linked, [PPercentRule(10), *RULES])
    assert isinstance(result.table, TableSet)
    for dims, table in zip((["act", "reg"], ["act", "size"], ["reg"]), result.tables,
                           strict=True):
        alone = apply_rules(Table.from_microdata(SURVEY, dims, "v"),
                            [PPercentRule(10), *RULES]).table
        pd.testing.assert_frame_equal(table.cells[["value", "status", "lpl", "upl"]],
                                      alone.cells[["value", "status", "lpl", "upl"]])
    summary = result.summary()
    assert "table act x size: 12 cells" in summary
    assert int(result.primary.sum()) == int(
        (result.table.combined.cells["status"] == "u").sum())


def test_controlled_adjustment_of_a_set_keeps_every_table_additive():
    linked = TableSet.from_tables([ruled(["act", "reg"]), ruled(["act", "size"])])
    result = adjust(linked, "milp", "count", time_limit=60)
    assert result.verification.passed
    assert isinstance(result.table, TableSet)
    for original, table in zip(linked.tables, result.tables, strict=True):
        table.check_additivity(tol=1e-7)
        primary = (original.cells["status"] == "u").to_numpy()
        moved = np.abs(table.values - original.values)
        need = np.minimum(original.cells["lpl"], original.cells["upl"]).to_numpy()
        assert (moved[primary] >= need[primary] - 1e-6).all()
    # a shared cell has one adjusted value
    assert (result.tables[0].cells.loc[("A", "Total"), "value"]
            == result.tables[1].cells.loc[("A", "Total"), "value"])


def test_publishable_output_is_one_file_per_table(tmp_path):
    joint = suppress(TableSet.from_tables([ruled(["act", "reg"]), ruled(["act", "size"])],
                                          names=["activity by region", "activity by size"]),
                     cost="value")
    paths = write_publishable(joint.table, tmp_path / "release")
    assert [p.name for p in paths] == ["activity_by_region.csv", "activity_by_size.csv"]
    for path, table in zip(paths, joint.tables, strict=True):
        alone = write_publishable(table, tmp_path / f"alone-{path.name}")
        assert path.read_bytes() == alone.read_bytes()
    frame = pd.read_csv(paths[1], dtype=str)
    assert list(frame.columns) == ["act", "size", "value"]
    with pytest.raises(InputError, match="one file per table"):
        write_publishable(joint.table, tmp_path / "release.csv")


def test_disagreeing_shared_cell_names_the_cell_and_both_tables():
    first = Table.from_microdata(SURVEY, ["act", "reg"], "v")
    second = Table.from_microdata(SURVEY, ["act", "size"], "v")
    cells = second.cells.copy()
    cells.loc[("B", "Total"), "value"] += 1.0
    cells.loc[("B", "1"), "value"] += 1.0  # still additive, but B's margin is now 43
    with pytest.raises(InputError) as error:
        TableSet.from_tables([first, second.with_cells(cells)], names=["T1", "T2"])
    message = str(error.value)
    assert "act=B x size=Total" in message
    assert "42 in table 'T1'" in message and "43 in table 'T2'" in message


def test_a_dimension_with_two_hierarchies_is_refused():
    coarse = Hierarchy.flat(["A", "B", "C"])
    nested = Hierarchy.from_parent_child(pd.DataFrame(
        {"parent": ["Total", "Total", "AB", "AB"], "child": ["AB", "C", "A", "B"]}))
    one = Table.from_microdata(SURVEY, ["act", "reg"], "v", hierarchies={"act": coarse})
    two = Table.from_microdata(SURVEY, ["act", "size"], "v", hierarchies={"act": nested})
    with pytest.raises(HierarchyError, match="'act' has different hierarchies in tables "
                                             "'act x reg' and 'act x size'"):
        TableSet.from_tables([one, two])


def test_holdings_sum_before_the_rules_in_every_table():
    data = SURVEY.assign(holding=[1, 1, 2, 3, 4, 5, 6, 3, 7, 8, 9, 10, 11, 12])
    dims = [["act", "reg"], ["act", "size"]]
    linked = TableSet.from_microdata(data, dims, "v", holding="holding")
    for table_dims, table in zip(dims, linked.tables, strict=True):
        alone = Table.from_microdata(data, table_dims, "v", holding="holding")
        pd.testing.assert_frame_equal(table.cells[alone.cells.columns], alone.cells)
    # holding 1 owns both A records (37 + 27) under the A margin
    assert linked.combined.cells.loc[("A", "Total", "Total"), "x1"] == 64.0


# -- properties on small random linked sets ----------------------------------------------------
@st.composite
def linked_sets(draw):
    n = draw(st.integers(6, 30))
    codes = {"a": "PQR", "b": "XY", "c": "123"}
    data = pd.DataFrame({
        dim: draw(st.lists(st.sampled_from(list(values)), min_size=n, max_size=n))
        for dim, values in codes.items()})
    data["v"] = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    data["v"] = data["v"].astype(float)
    pairs = [["a", "b"], ["a", "c"], ["b", "c"], ["a"], ["c"]]
    chosen = draw(st.lists(st.sampled_from(range(len(pairs))), min_size=2, max_size=3,
                           unique=True))
    return data, [pairs[i] for i in chosen]


@settings(max_examples=examples(10, 25), deadline=None)
@given(linked_sets())
def test_each_table_of_a_set_equals_the_table_built_alone(case):
    data, dims = case
    nested = Hierarchy.from_parent_child(pd.DataFrame(
        {"parent": ["Total", "Total", "PQ", "PQ"], "child": ["PQ", "R", "P", "Q"]}))
    hierarchies = {"a": nested} if any("a" in d for d in dims) else {}
    linked = TableSet.from_microdata(data, dims, "v", hierarchies=hierarchies)
    for table_dims, table in zip(dims, linked.tables, strict=True):
        alone = Table.from_microdata(
            data, table_dims, "v", hierarchies={d: h for d, h in hierarchies.items()
                                                if d in table_dims})
        assert table.dims == alone.dims
        pd.testing.assert_index_equal(table.cells.index, alone.cells.index)
        pd.testing.assert_frame_equal(table.cells[alone.cells.columns], alone.cells)
        assert (table.A != alone.A).nnz == 0
    linked.combined.check_additivity()
    assert linked.n_cells == len(np.unique(np.concatenate(linked.positions)))


@settings(max_examples=examples(6, 12), deadline=None)
@given(linked_sets())
def test_joint_suppression_is_audit_clean_on_the_combined_system(case):
    data, dims = case
    linked = TableSet.from_microdata(data, dims, "v")
    ruled_set = apply_rules(linked, FrequencyRule(3, level=20)).table
    try:
        result = suppress(ruled_set, "optimal", cost="value", time_limit=60)
    except InputError as error:  # a respondent's own value leaves a primary no room: named
        assert "no suppression pattern can protect" in str(error)
        reject()
    assert result.audit.protected
    assert audit(result.table.combined).protected  # an independent audit of the whole system
    status = result.table.combined.cells["status"].to_numpy()
    for table, position in zip(result.tables, result.table.positions, strict=True):
        assert (table.cells["status"].to_numpy() == status[position]).all()
