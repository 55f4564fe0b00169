"""The bad inputs the toolkit is tried on, and what each must get.

Each :class:`Case` writes its input files into an empty folder (:func:`write_inputs` plus the
case's own ``files``) and runs one command line (``tabsdc`` or ``microsdc``, in-process) or one
API call. A *rejected* case must end with exit status 2 (CLI) or the toolkit's own error type
(API), a message containing ``expect`` (the file, line, cell or column it names), no
traceback, no output written and every input file byte-identical afterwards. An *accepted*
case is an edge input that is valid (a one-cell table, values of 1e15, codes ``01`` or
``NA``): it must succeed and write its outputs. A *verdict* case is valid input whose answer
is negative (a table that cannot be protected): exit status 1, a message containing
``expect``, no publishable file and every input file byte-identical. A case's ``check``, when
it has one, then looks into what was written (the codes of the publishable file, ...).
Cases come in categories (:data:`CATEGORIES`), one per kind of odd input.

``run_case`` is shared by the tests (``test_badinput.py``) and by ``make_table.py``, which
writes the table of ``docs/reliability.md``.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from sdcreport._files import confidential_lines

#: A small valid JJ table: cell 0 is the total of cells 1 and 2; cell 1 is primary.
JJ = ("0\n3\n"
      "0 5 1 s 0 10 0 0 0\n"
      "1 2 1 u 0 10 1 1 0\n"
      "2 3 1 s 0 10 0 0 0\n"
      "1\n0 3 : 0 (-1) 1 (1) 2 (1)\n")

#: Microdata: region x sector, turnover.
MICRO = ("region,sector,turnover\nA,x,100\nA,x,10\nA,y,50\nB,x,40\nB,y,35\nB,y,30\n"
         "C,y,7\n")

#: Microdata with region levels for --hierarchy nuts2=nuts1,nuts2.
LEVELS = "nuts1,nuts2,v\nFR1,FR10,5\nFR1,FR11,6\nFR2,FR21,7\n"

#: Microdata with levels coded with leading zeros.
LEADING_ZEROS = "nuts1,nuts2,v\n01,011,5\n01,012,6\n02,021,7\n02,022,9\n"

#: Numeric records for microsdc.
RECORDS = "a,b,c\n" + "".join(f"{i},{(7 * i) % 11},{i * i % 5}\n" for i in range(1, 13))

__all__ = ["CASES", "CATEGORIES", "Case", "Outcome", "run_case", "write_inputs"]

#: The kinds of odd input the suite covers, in the order of the table in the docs.
CATEGORIES = ("codes", "missing values", "hierarchies", "column names", "numeric limits",
              "empty and degenerate tables", "files", "options", "outputs", "microdata")

RULES = ["--dims", "region", "sector", "--value", "turnover", "--p", "10"]


@dataclass(frozen=True)
class Case:
    """One bad (or edge) input, the command or call that reads it, and what it must get."""

    id: str
    what: str
    run: tuple[str, ...] | Callable[[Path], object]
    expect: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    accepted: bool = False
    xfail: str | None = None
    strict: bool = True
    verdict: bool = False
    check: Callable[[Path, Outcome], None] | None = None
    category: str = ""

    @property
    def where(self) -> str:
        """The command line, or ``API`` and the call's name, as the table shows it."""
        if callable(self.run):
            return f"API `{self.run.__doc__ or self.run.__name__}`"
        return "`" + " ".join(self.run).replace("{dir}/", "") + "`"


def write_inputs(folder: Path, case: Case) -> None:
    """The shared input files, then the case's own (which may replace one of them)."""
    shared: dict[str, str | bytes] = {"micro.csv": MICRO, "t.jj": JJ, "levels.csv": LEVELS,
                                      "records.csv": RECORDS}
    for name, content in {**shared, **case.files}.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content == "<folder>":
            path.mkdir()
        else:
            path.write_text(content, encoding="utf-8")


@dataclass(frozen=True)
class Outcome:
    """What a case got: exit status (None for an API call), error type, message (the last
    line on standard error, or the error's text), traceback, standard output."""

    status: int | None
    error: str | None
    message: str
    traceback: bool
    output: str = ""


def run_case(case: Case, folder: Path) -> Outcome:
    """Run ``case`` in ``folder`` (its inputs already written)."""
    from microsdc.cli import main as microsdc_main
    from tabsdc.cli import main as tabsdc_main

    if callable(case.run):
        try:
            case.run(folder)
        except Exception as error:  # the test checks the type
            return Outcome(None, type(error).__module__ + "." + type(error).__qualname__,
                           str(error), False)
        return Outcome(None, None, "", False)
    program, *argv = (a.replace("{dir}", str(folder)) for a in case.run)
    main = {"tabsdc": tabsdc_main, "microsdc": microsdc_main}[program]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse's usage errors
            status = exit_.code
        except Exception:
            traceback.print_exc(file=err)
            status = None
    text = err.getvalue()
    lines = [line for line in text.splitlines() if line.strip()]
    message = lines[-1] if lines else ""
    return Outcome(status, None, message, "Traceback" in text, out.getvalue())


# -- API calls ------------------------------------------------------------------------------
def _jj(folder: Path):
    """tabsdc.Table.from_jj"""
    from tabsdc import Table

    return Table.from_jj(folder / "t.jj")


def _round(base: object) -> Callable[[Path], object]:
    def call(folder: Path):
        from tabsdc import Table
        from tabsdc.rounding import round_table

        return round_table(Table.from_jj(folder / "t.jj"), base, "controlled", audit=False)
    call.__doc__ = f"tabsdc.rounding.round_table(base={base!r})"
    return call


def _mdav(k: int) -> Callable[[Path], object]:
    def call(folder: Path):
        from microsdc.masking import mdav

        return mdav(pd.read_csv(folder / "records.csv"), k=k)
    call.__doc__ = f"microsdc.masking.mdav(k={k})"
    return call


def _loss(folder: Path):
    """microsdc.utility.information_loss"""
    from microsdc.utility import information_loss

    original = pd.read_csv(folder / "records.csv")
    return information_loss(original, original.iloc[:-2], seed=0)


def _write_jj_missing_folder(folder: Path):
    """tabsdc.io._jj.write_jj"""
    from tabsdc import Table

    Table.from_jj(folder / "t.jj").to_jj(folder / "absent" / "o.jj")


def _mixed_codes(folder: Path):
    """tabsdc.Table.from_microdata (codes 1, "1", 1.0)"""
    from tabsdc import Table

    data = pd.DataFrame({"region": [1, "1", 1.0], "turnover": [1.0, 2.0, 3.0]})
    return Table.from_microdata(data, ["region"], "turnover")


def _rules_on_negative(folder: Path):
    """tabsdc._rules.apply_rules (a negative contribution)"""
    from tabsdc import Table
    from tabsdc._rules import PPercentRule, apply_rules

    data = pd.read_csv(folder / "micro.csv", dtype={"region": str, "sector": str})
    data.loc[1, "turnover"] = -10.0
    table = Table.from_microdata(data, ["region", "sector"], "turnover")
    return apply_rules(table, [PPercentRule(10)])


def _paths_with_empty_code(folder: Path):
    """tabsdc.Hierarchy.from_paths (an empty code between two separators)"""
    from tabsdc import Hierarchy

    return Hierarchy.from_paths(["FR1>FR10>FR101", "FR1>>FR102"])


def _parent_child_with_empty_code(folder: Path):
    """tabsdc.Hierarchy.from_parent_child (a child code that is empty)"""
    from tabsdc import Hierarchy

    return Hierarchy.from_parent_child(pd.DataFrame({"parent": ["Total", "Total", "A"],
                                                     "child": ["A", "B", ""]}))


def _levels_with_missing_code(folder: Path):
    """tabsdc.Hierarchy.from_levels (a level code that is None)"""
    from tabsdc import Hierarchy

    return Hierarchy.from_levels(pd.DataFrame({"nuts1": ["FR1", None], "nuts2": ["FR10",
                                                                             "FR21"]}))


def _two_columns_of_one_name(folder: Path):
    """tabsdc.Table.from_microdata (two columns named region)"""
    from tabsdc import Table

    data = pd.DataFrame([["A", "x", 1.0], ["B", "y", 2.0]],
                        columns=["region", "region", "turnover"])
    return Table.from_microdata(data, ["region"], "turnover")


def _audit_without_cells(folder: Path):
    """tabsdc.audit.audit (a table of 0 cells)"""
    import numpy as np

    from tabsdc import Table
    from tabsdc.audit import audit

    return audit(Table(pd.DataFrame({"value": np.zeros(0)}), np.zeros((0, 0)), []))


def marked(path: Path) -> int:
    """The lines an internal CSV starts with that say it is confidential (0 or 1)."""
    return confidential_lines(path.read_text(encoding="utf-8-sig"))


def _codes(file: str, column: str, expected: list[str], **values: float
           ) -> Callable[[Path, Outcome], None]:
    """A check: the ``column`` of the written CSV ``file`` holds the codes ``expected``, in
    order, and the cells named in ``values`` (code: value) have these values."""

    def check(folder: Path, outcome: Outcome) -> None:
        frame = pd.read_csv(folder / file, dtype=str, keep_default_na=False,
                            encoding="utf-8-sig", skiprows=marked(folder / file))
        assert frame[column].tolist() == expected, frame[column].tolist()
        found = frame.set_index(column)["value"]
        assert {code: float(found[code]) for code in values} == values
    return check


def _freq(file: str, code: str, expected: int) -> Callable[[Path, Outcome], None]:
    """A check: the cell ``code`` of the written cells CSV ``file`` has ``expected``
    contributors."""

    def check(folder: Path, outcome: Outcome) -> None:
        frame = pd.read_csv(folder / file, dtype=str, keep_default_na=False,
                            skiprows=marked(folder / file))
        assert float(frame.set_index(frame.columns[0]).loc[code, "freq"]) == expected
    return check


def _unpublished_with_reason(folder: Path, outcome: Outcome) -> None:
    """A check: no publishable file, the table and the JSON written, the reason printed."""
    assert not (folder / "p.csv").exists()
    assert (folder / "o.jj").exists() and (folder / "o.json").exists()
    assert "exactly disclosed" in outcome.output and "protection levels are all 0" in \
        outcome.output


def _category(name: str, cases: list[Case]) -> list[Case]:
    """``cases`` in the category ``name`` (one of :data:`CATEGORIES`)."""
    assert name in CATEGORIES, name
    return [replace(case, category=name) for case in cases]


# -- the cases -------------------------------------------------------------------------------
_JJ_LINES = JJ.splitlines()


def _jj_with(line: int, text: str) -> str:
    """The valid JJ file with line ``line`` (1-based) replaced by ``text``."""
    lines = list(_JJ_LINES)
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


_TABSDC_OUT = ("--out", "{dir}/o.jj")
_AUDIT = ("tabsdc", "audit", "{dir}/t.jj", "--json", "{dir}/o.json")
_PROTECT_JJ = ("tabsdc", "protect", "{dir}/t.jj", *_TABSDC_OUT)
_RULES = ("tabsdc", "rules", "{dir}/micro.csv", *RULES, "--out", "{dir}/o.csv")
_ROUND = ("tabsdc", "round", "{dir}/t.jj", "--method", "controlled", *_TABSDC_OUT)
_MASK = ("microsdc", "mask", "{dir}/records.csv", "--out", "{dir}/o.csv")
_COMPARE = ("microsdc", "compare", "{dir}/records.csv", "{dir}/masked.csv", "--json",
            "{dir}/o.json")
_LEVELS = ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
           "2")
_TREE = (*_LEVELS, "--hierarchy", "nuts2={dir}/tree.csv")
_AGGREGATED = ("tabsdc", "rules", "{dir}/cells.csv", "--aggregated", "--dims", "region",
               "--freq", "2", "--freq-column", "n")
_NO_CELLS = "0\n0\n0\n"


def _third_record(id: str, what: str, record: str, expect: str) -> Case:
    """The microdata with the record on line 3 (``A,x,10``) replaced by ``record``, under
    ``tabsdc rules``."""
    return Case(id, what, _RULES, expect, {"micro.csv": MICRO.replace("A,x,10\n",
                                                                      record + "\n")})


def _jj_line(id: str, what: str, line: int, text: str) -> Case:
    """The valid JJ file with line ``line`` replaced by ``text``, audited: refused naming
    that line."""
    return Case(id, what, _AUDIT, f"line {line}", {"t.jj": _jj_with(line, text)})


CASES: list[Case] = [
    *_category("codes", [
        Case("csv-total-code", "a region coded 'Total', the label of the margin", _RULES,
             "'Total'", {"micro.csv": MICRO.replace("C,y,7", "Total,y,7")}),
        Case("csv-mixed-codes", "codes 1, \"1\" and 1.0 in one column", _mixed_codes, "region"),
        Case("codes-with-separators", "codes containing commas, quotes and '='",
             ("tabsdc", "rules", "{dir}/micro.csv", *RULES, "--out", "{dir}/o.csv"), "",
             {"micro.csv": MICRO.replace("A,", '"A,1=2",').replace("B,", '"B ""b""",')},
             accepted=True),
        Case("codes-leading-zeros", "hierarchy level codes 01, 02 (a level column not in --dims)",
             ("tabsdc", "protect", "{dir}/lz.csv", "--dims", "nuts2", "--value", "v", "--freq",
              "2", "--hierarchy", "nuts2=nuts1,nuts2", "--out", "{dir}/o.jj", "--publish",
              "{dir}/p.csv"), "", {"lz.csv": LEADING_ZEROS}, accepted=True,
             check=_codes("p.csv", "nuts2", ["Total", "01", "011", "012", "02", "021", "022"],
                          Total=27.0)),
        Case("codes-na-level", "code NA in a hierarchy level column",
             ("tabsdc", "rules", "{dir}/na.csv", "--dims", "nuts2", "--value", "v", "--freq", "2",
              "--hierarchy", "nuts2=nuts1,nuts2", "--out", "{dir}/o.csv"), "",
             {"na.csv": LEADING_ZEROS.replace("01", "NA").replace("02", "B")}, accepted=True,
             check=_codes("o.csv", "nuts2", ["Total", "NA", "NA1", "NA2", "B", "B1", "B2"],
                          **{"NA": 11.0, "B": 16.0})),
        Case("codes-na-dims", "codes NA, None and null in a --dims column",
             ("tabsdc", "rules", "{dir}/na.csv", "--dims", "country", "--value", "v", "--freq",
              "2", "--out", "{dir}/o.csv"), "",
             {"na.csv": "country,v\nNA,5\nNone,6\nnull,7\nNA,1\n"}, accepted=True,
             check=_codes("o.csv", "country", ["Total", "NA", "None", "null"],
                          **{"NA": 6.0, "null": 7.0})),
        Case("codes-nfc-nfd", "one code typed in Unicode NFC (\u00cele) and NFD (I, a "
             "combining circumflex, le)",
             ("tabsdc", "rules", "{dir}/nf.csv", "--dims", "region", "--value", "v", "--freq",
              "2", "--out", "{dir}/o.csv"), "",
             {"nf.csv": "region,v\n\u00cele,5\nI\u0302le,6\nB,7\n"}, accepted=True,
             check=_codes("o.csv", "region", ["Total", "\u00cele", "B"], **{"\u00cele": 11.0})),
        Case("codes-holding-zeros", "holding ids 007 and 7 (two holdings)",
             ("tabsdc", "rules", "{dir}/h.csv", "--dims", "region", "--value", "v", "--holding",
              "firm", "--freq", "2", "--out", "{dir}/o.csv"), "",
             {"h.csv": "region,firm,v\nA,007,5\nA,7,6\nB,1,7\n"}, accepted=True,
             check=_freq("o.csv", "A", 2)),
        Case("codes-nfc-duplicate-cell", "interior cell given in NFC and in NFD (--aggregated)",
             _AGGREGATED, "duplicate cell",
             {"cells.csv": "region,value,n\n\u00cele,5,2\nI\u0302le,3,1\nB,4,1\n"}),
    ]),
    *_category("missing values", [
        _third_record("csv-nan", "missing turnover", "A,x,", "line 3"),
        _third_record("csv-missing-code", "a record without a region code",
                      ",x,10", "column 'region' has a missing (empty) code at line 3"),
        Case("csv-empty-weight", "a record without a sampling weight",
             (*_RULES, "--weight", "w"), "'w' has a missing or non-numeric value at line 3",
             {"micro.csv": "region,sector,turnover,w\nA,x,100,1\nA,x,10,\nB,y,5,1\n"}),
        Case("csv-empty-holding", "a record without a holding id",
             ("tabsdc", "rules", "{dir}/h.csv", "--dims", "region", "--value", "v", "--holding",
              "firm", "--freq", "2"), "column 'firm' has a missing (empty) code at line 3",
             {"h.csv": "region,firm,v\nA,1,5\nA,,6\nB,2,7\n"}),
        Case("csv-empty-level", "a record without its hierarchy level code",
             (*_LEVELS, "--hierarchy", "nuts2=nuts1,nuts2"),
             "column 'nuts1' has a missing (empty) code at line 3",
             {"levels.csv": LEVELS.replace("FR1,FR11", ",FR11")}),
        _third_record("csv-na-value", "turnover NA (a word, not a missing value)",
                      "A,x,NA", "at line 3: 'NA'"),
        _third_record("csv-empty-record", "a record of empty fields (,,)",
                      ",,", "missing (empty) code at line 3"),
        _third_record("csv-line-after-blank", "a bad value after a blank line (the line counted)",
                      "\nA,x,ten", "at line 4"),
    ]),
    *_category("hierarchies", [
        Case("hierarchy-twice", "--hierarchy given twice for one dimension",
             (*_LEVELS, "--hierarchy", "nuts2=nuts1,nuts2", "--hierarchy", "nuts2=nuts1,nuts2"),
             "twice for the dimension 'nuts2'"),
        Case("hierarchy-malformed", "--hierarchy without '='",
             (*_LEVELS, "--hierarchy", "nuts2"), "expected DIM=L1,L2"),
        Case("hierarchy-two-parents", "hierarchy file where FR10 has two parents",
             _TREE, "FR10",
             {"tree.csv": "parent,child\nTotal,FR1\nTotal,FR2\nFR1,FR10\nFR2,FR10\nFR1,FR11\n"
                          "FR2,FR21\n"}),
        Case("hierarchy-cycle", "hierarchy file with a cycle FR1 > FR10 > FR1",
             _TREE, "tree.csv",
             {"tree.csv": "parent,child\nTotal,FR1\nFR1,FR10\nFR10,FR1\nFR1,FR11\nTotal,FR2\n"
                          "FR2,FR21\n"}),
        Case("hierarchy-levels-not-nested", "level columns where FR10 lies in FR1 and FR2",
             (*_LEVELS, "--hierarchy", "nuts2=nuts1,nuts2"), "FR10",
             {"levels.csv": LEVELS + "FR2,FR10,3\n"}),
        Case("hierarchy-file-empty-code", "hierarchy file with an empty child code",
             _TREE,
             "tree.csv: column 'child' has a missing (empty) code at line 3",
             {"tree.csv": "parent,child\nTotal,FR1\nFR1,\n"}),
        Case("hierarchy-two-roots", "hierarchy file with two roots (Total and All)",
             _TREE, "exactly one root",
             {"tree.csv": "parent,child\nTotal,FR1\nAll,FR2\nFR1,FR10\nFR1,FR11\nFR2,FR21\n"}),
        Case("hierarchy-unknown-code", "a record coded FR99, which the hierarchy file lacks",
             _TREE, "FR99",
             {"tree.csv": "parent,child\nTotal,FR1\nTotal,FR2\nFR1,FR10\nFR1,FR11\nFR2,FR21\n",
              "levels.csv": LEVELS + "FR9,FR99,4\n"}),
        Case("hierarchy-level-column-missing", "--hierarchy naming a level column not in the data",
             (*_LEVELS, "--hierarchy", "nuts2=nuts0,nuts2"), "no column 'nuts0'"),
        Case("paths-empty-code", "level-coded path with an empty code (FR1>>FR102)",
             _paths_with_empty_code, "path 2 'FR1>>FR102' has an empty code at level 2"),
        Case("parent-child-empty-code", "parent/child frame with an empty child code",
             _parent_child_with_empty_code, "column 'child' has a missing (empty) code at row 2"),
        Case("levels-missing-code", "level column with a missing code (None)",
             _levels_with_missing_code, "column 'nuts1' has a missing (empty) code at row 1"),
    ]),
    *_category("column names", [
        Case("csv-no-value-column", "--value names a column the file does not have",
             ("tabsdc", "rules", "{dir}/micro.csv", "--dims", "region", "--value", "sales",
              "--p", "10"), "column 'sales'"),
        Case("csv-no-dim-column", "--dims names a column the file does not have",
             ("tabsdc", "rules", "{dir}/micro.csv", "--dims", "nuts", "--value", "turnover",
              "--p", "10"), "'nuts'"),
        Case("round-csv-no-value", "CSV of cells to round without a value column",
             ("tabsdc", "round", "{dir}/cells.csv", "--base", "5", "--method", "controlled",
              *_TABSDC_OUT), "no 'value' column", {"cells.csv": "region,amount\nA,5\n"}),
        Case("round-column", "--column that no cell has", (*_ROUND, "--base", "5", "--column",
                                                          "nope"), "no cell column 'nope'"),
        Case("protect-unknown-cost", "--cost naming a column that is not there",
             (*_PROTECT_JJ, "--cost", "employees"), "employees"),
        Case("csv-duplicate-column", "CSV header naming the column region twice",
             ("tabsdc", "rules", "{dir}/dup.csv", "--dims", "region", "--value", "v", "--freq",
              "2"), "dup.csv: line 1: the column 'region' appears twice",
             {"dup.csv": "region,region,v\nA,B,5\nC,D,6\n"}),
        Case("hierarchy-file-duplicate-column", "hierarchy file naming the column child twice",
             _TREE,
             "tree.csv: line 1: the column 'child' appears twice",
             {"tree.csv": "parent,child,child\nTotal,FR1,FR2\nFR1,FR10,FR11\n"}),
        Case("frame-duplicate-column", "frame with two columns named region, API",
             _two_columns_of_one_name, "two columns named 'region'"),
        Case("hierarchy-file-no-parent", "hierarchy file with columns from,to",
             _TREE, "tree.csv: parent/child frame has no "
             "column 'parent'", {"tree.csv": "from,to\nTotal,FR1\n"}),
        Case("csv-dims-twice", "--dims naming one column twice",
             ("tabsdc", "rules", "{dir}/micro.csv", "--dims", "region", "region", "--value",
              "turnover", "--p", "10"), "name a column twice"),
        Case("aggregated-no-top-column", "--top-columns naming a column the file lacks",
             ("tabsdc", "rules", "{dir}/cells.csv", "--aggregated", "--dims", "region",
              "--top-columns", "max1", "--p", "10"), "column 'max1'",
             {"cells.csv": "region,value\nA,5\nB,3\n"}),
    ]),
    *_category("numeric limits", [
        _jj_line("jj-text-value", "cell value that is a word", 4, "1 two 1 u 0 10 1 1 0"),
        _jj_line("jj-nan", "cell value NaN", 4, "1 nan 1 u 0 10 1 1 0"),
        _jj_line("jj-inf", "upper bound inf", 5, "2 3 1 s 0 inf 0 0 0"),
        Case("jj-outside-bounds", "value 2 outside its a-priori bounds [3, 10]", _AUDIT,
             "cell 1", {"t.jj": _jj_with(4, "1 2 1 u 3 10 1 1 0")}),
        Case("jj-negative-level", "negative protection level", _PROTECT_JJ, "cell 1",
             {"t.jj": _jj_with(4, "1 2 1 u 0 10 -1 1 0")}),
        Case("jj-level-too-large", "protection level 50 that no pattern can give (the total "
             "is 5)", ("tabsdc", "protect", "{dir}/t.jj", "--method", "heuristic",
                       *_TABSDC_OUT), "cell 1", {"t.jj": _jj_with(4, "1 2 1 u 0 10 1 50 0")}),
        _third_record("csv-text-value", "non-numeric turnover", "A,x,ten", "line 3"),
        _third_record("csv-inf", "infinite turnover", "A,x,inf", "line 3"),
        _third_record("csv-negative", "negative turnover under the p% rule",
                      "A,x,-10", "--negative absolute"),
        Case("negative-api", "negative turnover, API, default negative='keep'",
             _rules_on_negative, "negative"),
        Case("values-1e15", "turnover of about 1e15", ("tabsdc", "protect", "{dir}/micro.csv",
                                                       *RULES, "--out", "{dir}/o.jj"), "",
             {"micro.csv": "region,sector,turnover\n" + "".join(
                 f"{r},{s},{v * 1e15:.17g}\n" for r, s, v in
                 (line.split(",") for line in MICRO.splitlines()[1:]) for v in [float(v)])},
             accepted=True),
        Case("values-1e-9", "turnover of about 1e-9", ("tabsdc", "protect", "{dir}/micro.csv",
                                                       *RULES, "--out", "{dir}/o.jj"), "",
             {"micro.csv": "region,sector,turnover\n" + "".join(
                 f"{r},{s},{v * 1e-9:.17g}\n" for r, s, v in
                 (line.split(",") for line in MICRO.splitlines()[1:]) for v in [float(v)])},
             accepted=True),
        _third_record("csv-thousands-separator", "turnover written 1,000 (a thousands separator)",
                      'A,x,"1,000"', "at line 3: '1,000'"),
        _third_record("csv-hex-value", "turnover written 0x10", "A,x,0x10", "at line 3: '0x10'"),
        Case("csv-negative-weight", "a negative sampling weight", (*_RULES, "--weight", "w"),
             "negative weight", {"micro.csv": "region,sector,turnover,w\nA,x,100,1\nA,x,10,-2\n"
                                              "B,y,5,1\n"}),
        Case("aggregated-text-freq", "contributor count written as a word (--freq-column)",
             _AGGREGATED, "at line 3: 'two'",
             {"cells.csv": "region,value,n\nA,5,3\nB,3,two\n"}),
    ]),
    *_category("empty and degenerate tables", [
        Case("csv-header-only", "CSV with a header and no records", _RULES,
             "has a header but no records", {"micro.csv": "region,sector,turnover\n"}),
        Case("one-cell", "a one-cell table (one record, one code)",
             ("tabsdc", "protect", "{dir}/one.csv", "--dims", "region", "--value", "turnover",
              "--freq", "3", "--out", "{dir}/o.jj"), "", {"one.csv": "region,turnover\nA,5\n"},
             accepted=True),
        Case("jj-non-additive", "total 9 is not the sum of its parts 2 + 3", _AUDIT,
             "relation 0", {"t.jj": _jj_with(3, "0 9 1 s 0 10 0 0 0")}),
        Case("adjust-non-additive", "CTA of a table whose total is not the sum of its parts",
             ("tabsdc", "adjust", "{dir}/t.jj", *_TABSDC_OUT), "relation 0",
             {"t.jj": _jj_with(3, "0 9 1 s 0 10 0 0 0")}),
        Case("round-csv-non-additive", "CSV of cells whose total is not the sum",
             ("tabsdc", "round", "{dir}/cells.csv", "--base", "5", "--method", "controlled",
              *_TABSDC_OUT), "Total",
             {"cells.csv": "region,value\nTotal,9\nA,2\nB,3\n"}),
        Case("aggregated-duplicate", "interior cells given twice (--aggregated)",
             _AGGREGATED, "duplicate",
             {"cells.csv": "region,value,n\nA,5,2\nB,3,1\nA,4,1\n"}),
        *(Case(f"jj-no-cells-{command}", f"JJ file of 0 cells, {command}", run,
               "t.jj: line 2: the table has no cells", {"t.jj": _NO_CELLS})
          for command, run in (("audit", _AUDIT), ("protect", _PROTECT_JJ),
                               ("round", (*_ROUND, "--base", "5")),
                               ("adjust", ("tabsdc", "adjust", "{dir}/t.jj", *_TABSDC_OUT)))),
        Case("audit-api-no-cells", "a Table of 0 cells, audited in the API", _audit_without_cells,
             "the table has no cells"),
        Case("csv-blank-lines-only", "CSV with a header and blank lines only", _RULES,
             "has a header but no records", {"micro.csv": "region,sector,turnover\n\n\n"}),
        Case("all-zero", "every turnover 0: the published total 0 discloses the zero cells "
             "(--publish given)",
             ("tabsdc", "protect", "{dir}/zero.csv", "--dims", "region", "sector", "--value", "v",
              "--freq", "3", "--out", "{dir}/o.jj", "--json", "{dir}/o.json", "--publish",
              "{dir}/p.csv"), "--publish: nothing written",
             {"zero.csv": "region,sector,v\nA,x,0\nA,y,0\nB,x,0\nB,y,0\n"}, verdict=True,
             check=_unpublished_with_reason),
    ]),
    *_category("files", [
        Case("jj-empty", "empty (0-byte) JJ file", _AUDIT, "line 1", {"t.jj": ""}),
        Case("jj-truncated", "JJ file cut after its second cell", _PROTECT_JJ, "t.jj",
             {"t.jj": "\n".join(_JJ_LINES[:4]) + "\n"}),
        Case("jj-cut-mid-line", "JJ file cut in the middle of a cell line", _AUDIT, "t.jj: line 5",
             {"t.jj": JJ[:JJ.index("1 2 1 u") + 5]}),
        _jj_line("jj-first-line", "JJ file whose first line is not 0", 1, "1"),
        _jj_line("jj-cell-index", "relation naming cell 7 of a 3-cell table", 7,
                 "0 3 : 0 (-1) 1 (1) 7 (1)"),
        _jj_line("jj-negative-index", "relation naming cell -1", 7, "0 3 : 0 (-1) 1 (1) -1 (1)"),
        _jj_line("jj-term-count", "relation announcing 2 terms and giving 3", 7,
                 "0 2 : 0 (-1) 1 (1) 2 (1)"),
        _jj_line("jj-status", "unknown status letter q", 4, "1 2 1 q 0 10 1 1 0"),
        _jj_line("jj-fields", "cell line with 8 fields", 3, "0 5 1 s 0 10 0 0"),
        _jj_line("jj-cell-order", "cell lines out of order (index 2 on the second line)", 4,
                 "2 2 1 u 0 10 1 1 0"),
        Case("jj-extra", "text after the last relation", _AUDIT, "line 8",
             {"t.jj": JJ + "garbage\n"}),
        Case("jj-binary", "JJ file that is not text (bytes 0xff 0xfe)", _AUDIT, "line 4",
             {"t.jj": JJ[:30].encode() + b"\xff\xfe" + JJ[30:].encode()}),
        Case("jj-folder", "a folder as the JJ input", _AUDIT, "t.jj is a folder",
             {"t.jj": "<folder>"}),
        Case("jj-missing", "a JJ file that does not exist", ("tabsdc", "audit", "{dir}/none.jj"),
             "none.jj: no such file"),
        Case("jj-api-status", "unknown status letter, read by the API", _jj, "line 4",
             {"t.jj": _jj_with(4, "1 2 1 q 0 10 1 1 0")}),
        Case("csv-empty", "empty (0-byte) CSV", _RULES, "micro.csv is empty", {"micro.csv": ""}),
        Case("csv-latin1", "CSV in Latin-1 (not UTF-8)", _RULES, "line 4 is not UTF-8",
             {"micro.csv": MICRO.replace("A,y", "\u00c9,y").encode("latin-1")}),
        Case("csv-folder", "a folder as the CSV input", _RULES, "micro.csv is a folder",
             {"micro.csv": "<folder>"}),
        Case("csv-missing", "a CSV that does not exist",
             ("tabsdc", "rules", "{dir}/none.csv", *RULES), "none.csv: no such file"),
        _third_record("csv-ragged", "CSV with a record of too many fields", "A,x,10,4,5", "line 3"),
        Case("round-suffix", "a table to round in a .txt file",
             ("tabsdc", "round", "{dir}/t.txt", "--base", "5", "--method", "controlled",
              *_TABSDC_OUT), "expected a .jj or .csv table", {"t.txt": JJ}),
        Case("csv-unclosed-quote", "CSV with a quote that is never closed", _RULES,
             "micro.csv: line 8: a quote", {"micro.csv": MICRO.replace("C,y,7", '"C,y,7')}),
        Case("csv-utf16", "CSV saved as UTF-16", _RULES, "line 1 is not UTF-8",
             {"micro.csv": MICRO.encode("utf-16")}),
        Case("csv-semicolon", "CSV separated by semicolons", _RULES, "column 'region' is not in",
             {"micro.csv": MICRO.replace(",", ";")}),
        Case("hierarchy-file-ragged", "hierarchy file with a line of 3 fields",
             _TREE, "tree.csv: line 3: 3 fields",
             {"tree.csv": "parent,child\nTotal,FR1\nFR1,FR10,x\n"}),
        Case("hierarchy-file-latin1", "hierarchy file in Latin-1",
             _TREE, "tree.csv: line 3 is not UTF-8",
             {"tree.csv": "parent,child\nTotal,FR1\nFR1,\u00cele\n".encode("latin-1")}),
        Case("hierarchy-file-empty", "empty (0-byte) hierarchy file",
             _TREE, "tree.csv is empty", {"tree.csv": ""}),
        _jj_line("jj-relation-no-colon", "relation line without ':'", 7, "0 3 0 (-1) 1 (1) 2 (1)"),
        Case("csv-bom-crlf", "CSV with a byte-order mark and CR-LF line ends, codes 01, 02",
             ("tabsdc", "rules", "{dir}/bom.csv", "--dims", "region", "--value", "v", "--freq",
              "2", "--out", "{dir}/o.csv"), "",
             {"bom.csv": b"\xef\xbb\xbfregion,v\r\n01,5\r\n02,6\r\n"}, accepted=True,
             check=_codes("o.csv", "region", ["Total", "01", "02"], Total=11.0)),
    ]),
    *_category("options", [
        Case("time-limit-negative", "--time-limit -1", (*_PROTECT_JJ, "--time-limit", "-1"),
             "must be a number of seconds > 0"),
        Case("time-limit-zero", "--time-limit 0", (*_ROUND, "--base", "5", "--time-limit", "0"),
             "must be a number of seconds > 0"),
        Case("round-base-0", "rounding base 0", (*_ROUND, "--base", "0"), "--base"),
        Case("round-base-1", "rounding base 1", (*_ROUND, "--base", "1"), "--base"),
        Case("round-base-negative", "rounding base -5", (*_ROUND, "--base", "-5"), "--base"),
        Case("round-base-fraction", "rounding base 2.5", (*_ROUND, "--base", "2.5"), "--base"),
        Case("round-api-base-0", "rounding base 0 in the API", _round(0), "base"),
        Case("round-api-base-fraction", "rounding base 2.5 in the API", _round(2.5), "base"),
        Case("audit-prior-q-negative", "--prior-q -5", (*_AUDIT, "--prior-q", "-5"), "q"),
        Case("adjust-preserve", "--preserve of a statistic CTA cannot keep",
             ("tabsdc", "adjust", "{dir}/t.jj", "--preserve", "median", *_TABSDC_OUT),
             "unknown statistic to preserve 'median'"),
        Case("adjust-method", "--method that CTA does not have",
             ("tabsdc", "adjust", "{dir}/t.jj", "--method", "simplex", *_TABSDC_OUT),
             "invalid choice: 'simplex'"),
        Case("p-zero", "--p 0", ("tabsdc", "rules", "{dir}/micro.csv", *RULES[:-1], "0"),
             "0 < p <= 100"),
        Case("pq-p-above-q", "--pq 10 5 (p above q)", ("tabsdc", "rules", "{dir}/micro.csv",
                                                      *RULES[:-2], "--pq", "10", "5"),
             "0 < p < q <= 100"),
        Case("freq-zero", "--freq 0", ("tabsdc", "rules", "{dir}/micro.csv", *RULES[:-2],
                                       "--freq", "0"), "n >= 1"),
        Case("hierarchy-not-a-dim", "--hierarchy for a column that is not in --dims",
             (*_LEVELS, "--hierarchy", "nuts1=nuts1"), "'nuts1', which is not a dimension"),
        Case("protect-csv-no-rules", "protect of a CSV without a rule option",
             ("tabsdc", "protect", "{dir}/micro.csv", *RULES[:-2], "--out", "{dir}/o.jj"),
             "choose rules"),
        Case("rules-no-dims", "CSV input without --dims",
             ("tabsdc", "rules", "{dir}/micro.csv", "--value", "turnover", "--p", "10"),
             "--dims is required"),
    ]),
    *_category("outputs", [
        Case("out-folder", "--out is a folder", ("tabsdc", "rules", "{dir}/micro.csv", *RULES,
                                                 "--out", "{dir}/sub"), "is a folder",
             {"sub": "<folder>"}),
        Case("out-missing-folder", "--out in a folder that does not exist",
             (*_PROTECT_JJ[:-1], "{dir}/absent/o.jj"), "does not exist"),
        Case("out-is-input", "--out is the input file", ("tabsdc", "rules", "{dir}/micro.csv",
                                                         *RULES, "--out", "{dir}/micro.csv"),
             "is an input file"),
        Case("publish-is-input", "--publish is the input file",
             (*_PROTECT_JJ, "--publish", "{dir}/t.jj"), "is an input file"),
        Case("json-and-publish", "--json and --publish on one path",
             (*_PROTECT_JJ, "--json", "{dir}/p.csv", "--publish", "{dir}/p.csv"),
             "--publish and --json are the same file"),
        Case("mask-out-is-input", "microsdc mask --out on the input file",
             ("microsdc", "mask", "{dir}/records.csv", "--method", "mdav", "--out",
              "{dir}/records.csv"), "is an input file"),
        Case("report-suffix", "--report with a suffix no format has",
             (*_AUDIT, "--report", "{dir}/audit.pdf"), "audit.pdf"),
        Case("write-jj-missing-folder", "write_jj into a folder that does not exist",
             _write_jj_missing_folder, "the folder"),
        Case("adjust-out-is-input", "adjust --out on the input JJ file",
             ("tabsdc", "adjust", "{dir}/t.jj", "--out", "{dir}/t.jj"), "is an input file"),
        Case("out-is-input-force", "--out is the input file, with --force",
             ("tabsdc", "rules", "{dir}/micro.csv", *RULES, "--out", "{dir}/micro.csv",
              "--force"), "", accepted=True),
    ]),
    *_category("microdata", [
        Case("study-data-missing", "study --data naming a file that does not exist",
             ("microsdc", "study", "--data", "{dir}/none.csv", "--quick", "--html",
              "{dir}/s.html", "--json", "{dir}/s.json"), "none.csv"),
        Case("study-vars", "study --vars naming a column the data do not have",
             ("microsdc", "study", "--data", "{dir}/records.csv", "--vars", "a", "zz", "--quick",
              "--html", "{dir}/s.html", "--json", "{dir}/s.json"), "'zz'"),
        Case("compare-empty-masked", "empty (0-byte) masked file", _COMPARE,
             "masked.csv is empty", {"masked.csv": ""}),
        Case("mdav-k-0", "MDAV with k = 0", (*_MASK, "--method", "mdav", "--k", "0"), "k"),
        Case("mdav-api-k-0", "MDAV with k = 0 in the API", _mdav(0), "k"),
        Case("mdav-k-too-large", "MDAV with k = 13 > 12 records",
             (*_MASK, "--method", "mdav", "--k", "13"), "12"),
        Case("masked-fewer-rows", "masked file with 2 records fewer", _COMPARE, "10",
             {"masked.csv": "a,b,c\n" + "".join(RECORDS.splitlines(True)[1:11])}),
        Case("masked-other-columns", "masked file without column c", _COMPARE, "'c'",
             {"masked.csv": "\n".join(",".join(line.split(",")[:2])
                                      for line in RECORDS.splitlines()) + "\n"}),
        Case("masked-api-shape", "masked frame with other rows, API", _loss, "12 records"),
        Case("mask-text-column", "masking a column of words", (*_MASK, "--method", "noise"),
             "line 3", {"records.csv": RECORDS.replace("2,3,4\n", "2,three,4\n")}),
        Case("mask-empty", "empty (0-byte) CSV to mask", (*_MASK, "--method", "noise"),
             "records.csv is empty", {"records.csv": ""}),
        Case("mask-latin1", "CSV to mask in Latin-1", (*_MASK, "--method", "noise"),
             "not UTF-8", {"records.csv": ("name," + RECORDS.replace("\n", ",\u00e9\n", 1)
                                           ).encode("latin-1")}),
    ]),
]
