import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabsdc import AdditivityError, Hierarchy, HierarchyError, InputError, Table


@st.composite
def hierarchical_tables(draw):
    """Random tables of 1-3 dimensions, each with a random two- or three-level hierarchy."""
    hierarchies = {}
    for d in range(draw(st.integers(1, 3))):
        rows = []
        for g in range(draw(st.integers(1, 3))):
            for s in range(draw(st.integers(1, 3))):
                depth3 = draw(st.booleans())
                leaves = [f"{d}{g}{s}{i}" for i in range(draw(st.integers(1, 3)))] if depth3 \
                    else [f"{d}{g}{s}"]
                rows += [(f"{d}{g}", f"{d}{g}{s}", leaf) for leaf in leaves]
        levels = pd.DataFrame(rows, columns=["l1", "l2", "l3"])
        hierarchies[f"dim{d}"] = Hierarchy.from_levels(levels)
    leaves = list(itertools.product(*[h.leaves for h in hierarchies.values()]))
    keep = draw(st.lists(st.booleans(), min_size=len(leaves), max_size=len(leaves)))
    values = draw(st.lists(st.integers(0, 1000), min_size=len(leaves), max_size=len(leaves)))
    frame = pd.DataFrame([leaf for leaf, k in zip(leaves, keep, strict=True) if k] or [leaves[0]],
                         columns=list(hierarchies))
    frame["v"] = [v for v, k in zip(values, keep, strict=True) if k] or [values[0]]
    return frame, hierarchies


def descendants(h: Hierarchy, code: str) -> set[str]:
    out = {code}
    for child in h.children(code):
        out |= descendants(h, child)
    return out


@given(hierarchical_tables(), st.booleans())
def test_built_tables_are_additive_and_totals_are_sums_of_leaves(case, keep_empty):
    frame, hierarchies = case
    dims = list(hierarchies)
    table = Table.from_aggregated(frame, dims, "v", hierarchies=hierarchies, keep_empty=keep_empty)
    assert np.array_equal(table.A @ table.values, table.b)  # integers: exact
    table.check_additivity(tol=0)
    # independent computation: every cell is the sum of the leaf rows below it
    cells = table.cells["value"]
    if len(dims) == 1:
        cells.index = pd.MultiIndex.from_arrays([cells.index])
    under = {dim: {code: frame[dim].isin(descendants(h, code)).to_numpy() for code in h.codes}
             for dim, h in hierarchies.items()}  # the leaf rows below each code
    leaf_values = frame["v"].to_numpy()
    for key, value in cells.items():
        below = np.ones(len(frame), dtype=bool)
        for dim, code in zip(dims, key, strict=True):
            below &= under[dim][code]
        assert value == leaf_values[below].sum()
    expected = np.prod([len(h) for h in hierarchies.values()])
    assert (table.n_cells == expected) if keep_empty else (table.n_cells <= expected)
    # each relation is one parent code with its direct children
    n_rel = sum(
        len(h.parent_codes) * np.prod([len(o) for n, o in hierarchies.items() if n != dim])
        for dim, h in hierarchies.items()
    )
    if keep_empty:
        assert table.n_relations == n_rel


@given(st.lists(st.tuples(st.sampled_from("ABC"), st.sampled_from("xy"), st.integers(-0, 50),
                          st.integers(0, 4)), min_size=1, max_size=40))
def test_largest_contributions_of_totals_match_brute_force(records):
    data = pd.DataFrame(records, columns=["r", "g", "v", "h"]).astype({"v": float})
    table = Table.from_microdata(data, ["r", "g"], "v", top=3)
    by_holding = Table.from_microdata(data, ["r", "g"], "v", holding="h", top=3)
    for key in table.cells.index:
        below = np.ones(len(data), dtype=bool)
        for dim, code in zip(["r", "g"], key, strict=True):
            if code != "Total":
                below &= (data[dim] == code).to_numpy()
        contributions = np.sort(data["v"][below].to_numpy())[::-1]
        expected = np.zeros(3)
        expected[: min(3, len(contributions))] = contributions[:3]
        assert table.cells.loc[key, ["x1", "x2", "x3"]].tolist() == expected.tolist()
        assert table.cells.loc[key, "freq"] == below.sum()
        per_holding = np.sort(data[below].groupby("h")["v"].sum().to_numpy())[::-1]
        expected = np.zeros(3)
        expected[: min(3, len(per_holding))] = per_holding[:3]
        assert by_holding.cells.loc[key, ["x1", "x2", "x3"]].tolist() == expected.tolist()
        assert by_holding.cells.loc[key, "freq"] == len(per_holding)
        assert by_holding.cells.loc[key, "value"] == table.cells.loc[key, "value"]


def test_microdata_weights_counts_and_empty_cells():
    data = pd.DataFrame({"r": ["A", "A", "B"], "g": ["x", "x", "x"], "v": [10.0, 5.0, 7.0],
                         "w": [2.0, 1.0, 3.0]})
    table = Table.from_microdata(data, ["r", "g"], "v", weight="w")
    cells = table.cells
    assert cells.loc[("Total", "Total"), "value"] == 2 * 10 + 5 + 3 * 7
    assert cells.loc[("Total", "Total"), "contrib_total"] == 22
    assert cells.loc[("A", "x"), "freq"] == 2
    counts = Table.from_microdata(data, ["r", "g"])
    assert counts.cells.loc[("Total", "Total"), "value"] == 3
    assert table.cells.loc[("Total", "Total"), "status"] == "s"
    both = pd.concat([data, pd.DataFrame({"r": ["B"], "g": ["y"], "v": [1.0], "w": [1.0]})])
    table = Table.from_microdata(both, ["r", "g"], "v")
    assert table.cells.loc[("A", "y"), "status"] == "z"  # empty
    assert table.cells.loc[("A", "y"), "value"] == 0
    sparse = Table.from_microdata(both, ["r", "g"], "v", keep_empty=False)
    assert ("A", "y") not in sparse.cells.index
    sparse.check_additivity(tol=0)


def test_negative_contributions_are_counted_and_bounds_opened():
    data = pd.DataFrame({"r": ["A", "A", "B"], "v": [10.0, -5.0, 7.0]})
    table = Table.from_microdata(data, ["r"], "v")
    assert table.cells.loc["A", "n_negative"] == 1
    assert np.isneginf(table.cells["lb"]).all()
    absolute = Table.from_microdata(data, ["r"], "v", negative="absolute")
    assert absolute.cells.loc["A", "contrib_total"] == 15
    assert absolute.cells.loc["A", "value"] == 5


def test_bad_microdata_is_named():
    data = pd.DataFrame({"r": ["A", "B"], "v": [1.0, None]})
    with pytest.raises(InputError, match="column 'v'.*row 1"):
        Table.from_microdata(data, ["r"], "v")
    with pytest.raises(InputError, match="column 'turnover' is not in the data"):
        Table.from_microdata(data, ["r"], "turnover")
    data = pd.DataFrame({"r": ["A", "B"], "v": [1.0, "x"]})
    with pytest.raises(InputError, match="non-numeric.*'x'"):
        Table.from_microdata(data, ["r"], "v")
    h = Hierarchy.flat(["A"])
    data = pd.DataFrame({"r": ["A", "C"], "v": [1.0, 2.0]})
    with pytest.raises(HierarchyError, match="'C' of dimension 'r' is not in the hierarchy"):
        Table.from_microdata(data, ["r"], "v", hierarchies={"r": h})
    with pytest.raises(HierarchyError, match="'Total' of dimension 'r' is a total"):
        Table.from_microdata(pd.DataFrame({"r": ["Total"], "v": [1.0]}), ["r"], "v",
                             hierarchies={"r": h})


def full_frame():
    return pd.DataFrame({
        "r": ["Total", "Total", "Total", "A", "A", "A", "B", "B", "B"],
        "g": ["Total", "x", "y"] * 3,
        "v": [21.0, 12.0, 9.0, 10.0, 6.0, 4.0, 11.0, 6.0, 5.0],
    })


def test_from_frame_reorders_and_checks():
    frame = full_frame().sample(frac=1, random_state=1)
    table = Table.from_frame(frame, ["r", "g"], "v")
    assert table.cells.index[0] == ("Total", "Total")
    assert table.n_relations == 3 + 3
    assert table.pivot("r", "g").loc["B", "y"] == 5
    bad = full_frame()
    bad.loc[4, "v"] = 7.0  # A,x: 7 + 4 != 10
    first = r"2 relation.*relation 1: r=Total x g=x \(12\) = r=A x g=x \(7\) \+ r=B"
    with pytest.raises(AdditivityError, match=first):
        Table.from_frame(bad, ["r", "g"], "v")
    Table.from_frame(bad.assign(v=bad["v"] + [0, 0, 0, 0, -1 + 1e-12, 0, 0, 0, 0]), ["r", "g"],
                     "v")
    with pytest.raises(InputError, match="duplicate cell"):
        Table.from_frame(pd.concat([full_frame(), full_frame().head(1)]), ["r", "g"], "v")
    with pytest.raises(InputError, match=r"total cell \('B', 'Total'\) is missing"):
        Table.from_frame(full_frame().drop(index=6), ["r", "g"], "v")


def test_table_never_modifies_its_input():
    frame = full_frame()
    before = frame.copy()
    table = Table.from_frame(frame, ["r", "g"], "v")
    table.with_columns(status=["u"] + ["s"] * 8)
    pd.testing.assert_frame_equal(frame, before)
    assert (table.cells["status"] == "s").all()


def test_constructor_validates():
    table = Table.from_frame(full_frame(), ["r", "g"], "v")
    with pytest.raises(InputError, match="status 'q'"):
        table.with_columns(status=["q"] + ["s"] * 8)
    with pytest.raises(InputError, match="A has shape"):
        Table(table.cells, table.A[:, :4], table.b)


def test_sample_business_survey_builds_an_additive_table():
    from tabsdc._datasets import business_survey_hierarchies, load_business_survey

    data = load_business_survey()
    table = Table.from_microdata(data, ["A88", "NUTS3"], "TURNOVER",
                                 hierarchies=business_survey_hierarchies(data))
    table.check_additivity()
    assert table.cells.loc[("Total", "Total"), "value"] == pytest.approx(data["TURNOVER"].sum())
    assert table.cells.loc[("Total", "Total"), "freq"] == len(data)
    tidy = table.to_frame()
    assert list(tidy.columns[:2]) == ["A88", "NUTS3"] and len(tidy) == table.n_cells
