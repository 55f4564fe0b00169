"""Codes are text and every answer is clear: the CSV reader, the one conversion of codes, the
hierarchy builders, the app's reader and the publishable file of a failed result.

The expectations are computed here independently of the readers: the CSV files are written
record by record with Python's ``csv`` module while counting their lines, and codes are
normalised with :func:`unicodedata.normalize` in the test.
"""

import argparse
import csv
import io
import unicodedata

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import Hierarchy, Table
from tabsdc._codes import code_column
from tabsdc._errors import HierarchyError, InputError
from tabsdc.cli import main
from tabsdc.cli._io import write_outputs
from tabsdc.io._csvfile import read_csv_file
from tabsdc.ui._inputs import read_parent_child, read_upload

#: Characters that break naive readers: digits (leading zeros), the letters of NA and null,
#: separators, quotes, line breaks, spaces, and a letter with a combining accent.
TRICKY = st.sampled_from(["0", "1", "N", "A", "n", "u", "l", ",", '"', "\n", " ", "\u00ce",
                          "I\u0302", "e"])
CODE = st.lists(TRICKY, max_size=5).map("".join)


@st.composite
def csv_files(draw) -> tuple[str, list[tuple[int, str, str, float]]]:
    """A CSV text (header ``a,b,v``) with blank lines between some records, and each record
    as (line it starts on, a, b, v) - v NaN where the field is empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "v"])
    records = []
    for _ in range(draw(st.integers(1, 8))):
        for _ in range(draw(st.integers(0, 2))):
            out.write("\n")
        line = out.getvalue().count("\n") + 1
        a, b = draw(CODE), draw(CODE)
        v = draw(st.one_of(st.none(), st.integers(-10**6, 10**6),
                           st.floats(-1e9, 1e9, allow_nan=False)))
        writer.writerow([a, b, "" if v is None else repr(v)])
        records.append((line, a, b, np.nan if v is None else float(v)))
    return out.getvalue(), records


@settings(max_examples=120, deadline=None)
@given(csv_files())
def test_the_reader_gives_every_field_as_written_and_the_line_of_every_record(tmp_path_factory,
                                                                              drawn):
    text, records = drawn
    path = tmp_path_factory.mktemp("csv") / "records.csv"
    path.write_text(text, encoding="utf-8")
    frame = read_csv_file(path, numbers=["v"])
    assert frame.index.tolist() == [line for line, *_ in records]
    assert frame["a"].tolist() == [a for _, a, _, _ in records]
    assert frame["b"].tolist() == [b for _, _, b, _ in records]
    np.testing.assert_array_equal(frame["v"].to_numpy(float), [v for *_, v in records])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=12))
def test_codes_are_text_in_nfc_whatever_their_form(codes):
    nfc = [unicodedata.normalize("NFC", c) for c in codes]
    nfd = [unicodedata.normalize("NFD", c) for c in codes]
    for given_codes in (codes, nfd):
        assert code_column(pd.Series(given_codes, dtype=object), "r").tolist() == nfc


def test_a_missing_code_and_mixed_kinds_are_refused_naming_the_row():
    lines = pd.Index([2, 3, 4], name="line")
    for missing in ("", None, np.nan):
        with pytest.raises(InputError, match="column 'r' has a missing .* at line 3"):
            code_column(pd.Series(["A", missing, "B"], index=lines, dtype=object), "r")
    with pytest.raises(InputError, match="'1' at line 3"):
        code_column(pd.Series([1, "1", "B"], index=lines, dtype=object), "r")
    assert code_column(pd.Series([7, 10]), "r").tolist() == ["7", "10"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["\u00cele", "I\u0302le", "NA", "01", "1", "null"]),
                          st.integers(1, 100)), min_size=1, max_size=15))
def test_a_table_from_codes_in_any_form_is_the_table_of_their_nfc_form(records):
    codes = [code for code, _ in records]
    values = [float(v) for _, v in records]
    built = Table.from_microdata(pd.DataFrame({"r": codes, "v": values}), ["r"], "v")
    expected: dict[str, float] = {}
    for code, value in zip(codes, values, strict=True):
        key = unicodedata.normalize("NFC", code)
        expected[key] = expected.get(key, 0.0) + value
    cells = built.cells["value"]
    assert {c: cells[c] for c in expected} == expected
    assert cells["Total"] == sum(values) and built.n_cells == len(expected) + 1


def test_the_dask_build_reads_codes_as_the_pandas_build():
    dd = pytest.importorskip("dask.dataframe")
    data = pd.DataFrame({"r": ["01", "NA", "I\u0302le", "\u00cele", "01", "null"],
                         "v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    pandas_build = Table.from_microdata(data, ["r"], "v")
    dask_build = Table.from_microdata(dd.from_pandas(data, npartitions=3), ["r"], "v")
    pd.testing.assert_frame_equal(dask_build.cells, pandas_build.cells)
    assert pandas_build.cells.loc["\u00cele", "value"] == 7.0
    data.loc[2, "r"] = ""
    with pytest.raises(InputError, match="missing"):
        Table.from_microdata(dd.from_pandas(data, npartitions=3), ["r"], "v")


@pytest.mark.parametrize("build", [
    lambda: Hierarchy.flat(["A", ""]),
    lambda: Hierarchy({"A": "Total", "": "A"}),
    lambda: Hierarchy({"A": "Total"}, root=""),
    lambda: Hierarchy.from_parent_child({"A": "Total", "B": ""}),
    lambda: Hierarchy.from_levels(pd.DataFrame({"l1": ["A", "B"], "l2": ["A1", np.nan]})),
    lambda: Hierarchy.from_paths(["A>A1", "A>"]),
    lambda: Hierarchy.from_paths(["A> >A1"]),
])
def test_every_hierarchy_builder_refuses_an_empty_code(build):
    with pytest.raises(HierarchyError, match="empty"):
        build()


def test_hierarchy_codes_are_text_in_nfc():
    nfd = unicodedata.normalize("NFD", "\u00cele")
    hierarchy = Hierarchy.from_paths([f"FR>{nfd}", "FR>\u00cele", "FR>NA"])
    assert hierarchy.codes == ("Total", "FR", "\u00cele", "NA")
    assert Hierarchy({1: "Total"}).codes == ("Total", "1")
    with pytest.raises(HierarchyError, match="two parents"):
        Hierarchy({nfd: "A", "\u00cele": "B", "A": "Total", "B": "Total"})


def test_round_reads_the_codes_of_a_cells_csv_as_text(tmp_path, capsys):
    cells = tmp_path / "cells.csv"
    cells.write_text("region,value\nTotal,18\n01,5\nNA,6\nnull,7\n")
    status = main(["round", str(cells), "--base", "5", "--method", "conventional", "--out",
                   str(tmp_path / "o.csv"), "--no-audit"])
    assert status == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False, skiprows=1)
    assert out["region"].tolist() == ["Total", "01", "NA", "null"]
    assert out["value"].astype(float).tolist() == [20.0, 5.0, 5.0, 5.0]


def test_the_apps_reader_keeps_codes_and_names_the_file_and_line(tmp_path):
    path = tmp_path / "upload.bin"
    path.write_text(f"region;v\n01;5\nNA;\n{unicodedata.normalize('NFD', 'Île')};7\n")
    data = read_upload(path, "survey.csv")
    assert data.codes("region").tolist()[:2] == ["01", "NA"]
    assert data.numeric("v").isna().tolist() == [False, True, False]
    path.write_text("region,region,v\n01,02,5\n")
    with pytest.raises(InputError, match="survey.csv: line 1: the column 'region' appears"):
        read_upload(path, "survey.csv")
    path.write_text("parent,child\nTotal,01\n01,011,x\n")
    with pytest.raises(InputError, match="tree.csv: line 3: 3 fields"):
        read_parent_child(path, "tree.csv")
    path.write_text("parent,child\nTotal,01\n01,\n")
    with pytest.raises(HierarchyError, match="tree.csv: column 'child' has a missing"):
        read_parent_child(path, "tree.csv")


@pytest.mark.parametrize("publishable", [True, False])
def test_a_result_that_failed_gets_no_publishable_file(tmp_path, capsys, publishable):
    table = Table.from_aggregated(pd.DataFrame({"r": ["01", "02"], "value": [4.0, 5.0]}),
                                  ["r"])
    args = argparse.Namespace(out=tmp_path / "o.csv", publish=tmp_path / "p.csv", json=None,
                              html=None, report=None, symbol="x", layout="long", decimals=None,
                              written=[])
    write_outputs(args, table=table, publishable=publishable)
    assert (tmp_path / "o.csv").exists()
    assert (tmp_path / "p.csv").exists() == publishable
    if publishable:
        published = pd.read_csv(tmp_path / "p.csv", dtype=str, encoding="utf-8-sig")
        assert published["r"].tolist() == ["Total", "01", "02"]
    else:
        assert "--publish: nothing written" in capsys.readouterr().err


def test_the_apps_excel_reader_keeps_codes_and_refuses_a_column_named_twice(tmp_path):
    pytest.importorskip("openpyxl")
    path = tmp_path / "upload.bin"
    pd.DataFrame({"region": ["01", "NA", "null"], "v": [5, None, 7]}).to_excel(path,
                                                                           index=False)
    data = read_upload(path, "survey.xlsx")
    assert data.codes("region").tolist() == ["01", "NA", "null"]
    assert data.numeric("v").isna().tolist() == [False, True, False]
    pd.DataFrame([["01", "02", 5]], columns=["region", "region", "v"]).to_excel(path,
                                                                            index=False)
    with pytest.raises(InputError, match="survey.xlsx: line 1: the column 'region' appears"):
        read_upload(path, "survey.xlsx")
