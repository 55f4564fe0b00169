"""Uploaded files as spreadsheets in other languages save them, and what the app says
about columns it cannot use: the CSV dialect, text in a numeric column, missing values,
blank codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc._errors import InputError, JJFormatError
from tabsdc.ui._dialect import CsvDialect, detect_dialect
from tabsdc.ui._inputs import read_upload
from tabsdc.ui._session import Session

#: Regions with letters outside ASCII, and turnovers with decimals and thousands.
REGIONS = ["Île-de-France", "Bayern", "Provence-Alpes-Côte d'Azur", "Baden-Württemberg"]
TURNOVER = [1234567.5, 12.25, 0.5, 98765.0]


def written(x: float, decimal: str, thousands: str) -> str:
    """``x`` with two decimals as a spreadsheet writes it with these marks."""
    whole, fraction = f"{x:,.2f}".split(".")
    return whole.replace(",", thousands) + decimal + fraction


def european(sep: str, decimal: str, thousands: str) -> str:
    """The regions and turnovers written as a spreadsheet of that language writes them."""
    rows = [f"{r}{sep}{written(x, decimal, thousands)}{sep}{i}"
            for i, (r, x) in enumerate(zip(REGIONS, TURNOVER, strict=True))]
    return "\n".join([f"region{sep}turnover{sep}size", *rows]) + "\n"


@pytest.mark.parametrize("sep,decimal,thousands,encoding", [
    (";", ",", ".", "cp1252"),          # German Excel on Windows
    (";", ",", "\u00a0", "utf-8-sig"),  # French Excel, UTF-8 with byte-order mark
    (";", ",", " ", "utf-8"),
    ("\t", ",", ".", "utf-16"),         # Excel's "Unicode text"
    (",", ".", "", "latin-1"),
    ("|", ".", ",", "utf-8"),
])
def test_the_dialect_is_detected_and_the_values_read_exactly(tmp_path, sep, decimal,
                                                             thousands, encoding):
    path = tmp_path / "survey.csv"
    text = european(sep, decimal, thousands)
    if encoding == "latin-1":
        text = text.replace("Île", "Ile").replace("Côte", "Cote").replace("Würt", "Wurt")
        text = text.replace("1,234,567.50", "1234567.50").replace("98,765.00", "98765.00")
    path.write_bytes(text.encode(encoding))
    dialect = detect_dialect(path)
    assert (dialect.sep, dialect.decimal) == (sep, decimal)
    assert dialect.thousands == (thousands or None)
    data = read_upload(path, "survey.csv")
    assert data.numeric("turnover").tolist() == TURNOVER
    assert data.codes("region").tolist()[1] == "Bayern"
    assert data.preview()["read_as"] == dialect.describe()
    if encoding == "cp1252":
        assert data.codes("region").tolist() == REGIONS
        assert "Windows-1252" in data.preview()["read_as"]


def test_a_german_csv_builds_the_same_table_as_the_comma_csv(tmp_path):
    session = Session(10**7, root=tmp_path)
    try:
        sums = []
        for name, text, encoding in [("de.csv", european(";", ",", "."), "cp1252"),
                                     ("en.csv", european(",", ".", ""), "utf-8")]:
            path = tmp_path / name
            path.write_bytes(text.replace('"', "").encode(encoding))
            session.load_source(path, name)
            info = session.build_table({"dims": ["region"], "value": "turnover"}, {})
            sums.append(info["trees"]["region"]["value"])
        assert sums[0] == sums[1] == pytest.approx(sum(TURNOVER))
    finally:
        session.close()


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(0, 1e9, allow_nan=False).map(lambda x: round(x, 2)),
                       min_size=2, max_size=30),
       style=st.sampled_from([(";", ",", "."), (";", ",", "\u00a0"), (",", ".", ""),
                              (";", ".", ",")]))
def test_numbers_written_in_any_dialect_read_back_exactly(tmp_path_factory, values, style):
    sep, decimal, thousands = style
    path = tmp_path_factory.mktemp("d") / "x.csv"
    lines = [f"code{sep}value"] + [f"c{i}{sep}{written(x, decimal, thousands)}"
                                   for i, x in enumerate(values)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = read_upload(path, "x.csv")
    assert np.allclose(data.numeric("value").to_numpy(), values, rtol=0, atol=1e-9)


def test_a_text_column_says_why_it_is_not_numeric(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("code,turnover\na,12\nb,n/a\nc,7\nd,x\n")
    data = read_upload(path, "t.csv")
    column = next(c for c in data.column_types() if c["name"] == "turnover")
    assert column["type"] == "text"
    assert column["note"] == "2 of 4 values are not numbers, the first 'n/a' on line 3"
    with pytest.raises(InputError, match="'turnover' must hold numbers; 2 of 4 values are not "
                                         "numbers, the first 'n/a' on line 3"):
        data.numeric("turnover")


def test_missing_values_are_named_by_their_line(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("code,turnover\na,12\nb,\nc,7\nd,\n")
    session = Session(10**7, root=tmp_path)
    try:
        session.load_source(path, "m.csv")
        with pytest.raises(InputError) as error:
            session.build_table({"dims": ["code"], "value": "turnover"}, {})
        assert str(error.value) == ("m.csv: column 'turnover' has no value on line 3 (and on "
                                    "1 more rows); fill in the values, or remove these rows")
        assert "nan" not in str(error.value) and "row 1" not in str(error.value)
    finally:
        session.close()


def test_missing_and_blank_codes_are_said_on_the_data_step_and_with_the_table(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("region,size,turnover\nN,s,5\n,s,7\nS, ,9\nS,m,1\n  ,m,3\n")
    session = Session(10**7, root=tmp_path)
    try:
        columns = {c["name"]: c for c in session.load_source(path, "b.csv")["columns"]}
        assert (columns["region"]["missing"], columns["region"]["spaces"]) == (1, 1)
        assert (columns["size"]["missing"], columns["size"]["spaces"]) == (0, 1)
        assert columns["region"]["code_warning"] == (
            "region: 1 rows have no code (the first on line 3) and 1 rows have a code of "
            "spaces only (the first on line 6); a table cannot be built with rows without a "
            "code: fill in the codes, or remove these rows; codes of spaces only form a "
            "category of their own, shown as (blank): fill in the codes if they belong "
            "elsewhere")
        with pytest.raises(InputError, match="'region' has a missing .* code at line 3"):
            session.build_table({"dims": ["region", "size"], "value": "turnover"}, {})
        info = session.build_table({"dims": ["size"], "value": "turnover"}, {})
        assert info["warnings"] == [
            "size: 1 rows have a code of spaces only (the first on line 4); codes of spaces "
            "only form a category of their own, shown as (blank): fill in the codes if they "
            "belong elsewhere"]
        assert " " in [c["code"] for c in info["trees"]["size"]["children"]]
    finally:
        session.close()


def test_a_bad_jj_file_is_named_not_the_session_copy(tmp_path):
    path = tmp_path / "tabsdc-ui-secret" / "uploads" / "t.jj"
    path.parent.mkdir(parents=True)
    path.write_text("0\n1\nfoo\n")
    with pytest.raises(JJFormatError) as error:
        read_upload(path, "mytable.jj")
    assert str(error.value).startswith("mytable.jj: line 3")
    assert str(tmp_path) not in str(error.value)


def test_the_dialect_describes_itself():
    assert CsvDialect("utf-8", ",", ".", None).describe() == (
        "fields separated by comma, decimal point, no thousands separator, encoding UTF-8")
    assert CsvDialect("cp1252", ";", ",", ".").read_options() == {
        "sep": ";", "decimal": ",", "thousands": ".", "encoding": "cp1252"}


def test_the_script_reads_the_file_in_its_dialect(tmp_path):
    from tests.ui.conftest import run_script

    path = tmp_path / "de.csv"
    path.write_bytes(european(";", ",", ".").encode("cp1252"))
    session = Session(10**7, root=tmp_path)
    try:
        session.load_source(path, "de.csv")
        session.build_table({"dims": ["region", "size"], "value": "turnover"}, {})
        session.apply_rules({"freq": 2})
        session.start_protection({"method": "suppression", "algorithm": "heuristic",
                                  "cost": "count"})
        assert session.job.wait(120).state == "done"
        published = session.download("publishable").read_bytes()
        script = session.download("script").read_text()
        assert "sep=';', decimal=',', thousands='.', encoding='cp1252'" in script
        run_script(script, tmp_path)
        assert (tmp_path / "de_publishable.csv").read_bytes() == published
        assert pd.read_csv(tmp_path / "de_publishable.csv", dtype=str)["value"].notna().all()
    finally:
        session.close()
