"""The bad inputs the toolkit is tried on, and what each must get.

Each :class:`Case` writes its input files into an empty folder (:func:`write_inputs` plus the
case's own ``files``) and runs one command line (``tabsdc`` or ``microsdc``, in-process) or one
API call. A *rejected* case must end with exit status 2 (CLI) or the toolkit's own error type
(API), a message containing ``expect`` (the file, line, cell or column it names), no
traceback, no output written and every input file byte-identical afterwards. An *accepted*
case is an edge input that is valid (a one-cell table, values of 1e15): it must succeed and
write its outputs.

``run_case`` is shared by the tests (``test_badinput.py``) and by ``make_table.py``, which
writes the table of ``docs/reliability.md``.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

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

#: Numeric records for microsdc.
RECORDS = "a,b,c\n" + "".join(f"{i},{(7 * i) % 11},{i * i % 5}\n" for i in range(1, 13))

__all__ = ["CASES", "Case", "Outcome", "run_case", "write_inputs"]

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
    """What a case got: exit status (None for an API call), error type, message, traceback."""

    status: int | None
    error: str | None
    message: str
    traceback: bool


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
    return Outcome(status, None, message, "Traceback" in text)


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
    """tabsdc.io.jj.write_jj"""
    from tabsdc import Table

    Table.from_jj(folder / "t.jj").to_jj(folder / "absent" / "o.jj")


def _mixed_codes(folder: Path):
    """tabsdc.Table.from_microdata (codes 1, "1", 1.0)"""
    from tabsdc import Table

    data = pd.DataFrame({"region": [1, "1", 1.0], "turnover": [1.0, 2.0, 3.0]})
    return Table.from_microdata(data, ["region"], "turnover")


def _rules_on_negative(folder: Path):
    """tabsdc.rules.apply_rules (a negative contribution)"""
    from tabsdc import Table
    from tabsdc.rules import PPercentRule, apply_rules

    data = pd.read_csv(folder / "micro.csv", dtype={"region": str, "sector": str})
    data.loc[1, "turnover"] = -10.0
    table = Table.from_microdata(data, ["region", "sector"], "turnover")
    return apply_rules(table, [PPercentRule(10)])


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

CASES: list[Case] = [
    # JJ files
    Case("jj-empty", "empty (0-byte) JJ file", _AUDIT, "line 1", {"t.jj": ""}),
    Case("jj-truncated", "JJ file cut after its second cell", _PROTECT_JJ, "t.jj",
         {"t.jj": "\n".join(_JJ_LINES[:4]) + "\n"}),
    Case("jj-cut-mid-line", "JJ file cut in the middle of a cell line", _AUDIT, "t.jj: line 5",
         {"t.jj": JJ[:JJ.index("1 2 1 u") + 5]}),
    Case("jj-first-line", "JJ file whose first line is not 0", _AUDIT, "line 1",
         {"t.jj": _jj_with(1, "1")}),
    Case("jj-cell-index", "relation naming cell 7 of a 3-cell table", _AUDIT, "line 7",
         {"t.jj": _jj_with(7, "0 3 : 0 (-1) 1 (1) 7 (1)")}),
    Case("jj-negative-index", "relation naming cell -1", _AUDIT, "line 7",
         {"t.jj": _jj_with(7, "0 3 : 0 (-1) 1 (1) -1 (1)")}),
    Case("jj-term-count", "relation announcing 2 terms and giving 3", _AUDIT, "line 7",
         {"t.jj": _jj_with(7, "0 2 : 0 (-1) 1 (1) 2 (1)")}),
    Case("jj-text-value", "cell value that is a word", _AUDIT, "line 4",
         {"t.jj": _jj_with(4, "1 two 1 u 0 10 1 1 0")}),
    Case("jj-nan", "cell value NaN", _AUDIT, "line 4",
         {"t.jj": _jj_with(4, "1 nan 1 u 0 10 1 1 0")}),
    Case("jj-inf", "upper bound inf", _AUDIT, "line 5",
         {"t.jj": _jj_with(5, "2 3 1 s 0 inf 0 0 0")}),
    Case("jj-status", "unknown status letter q", _AUDIT, "line 4",
         {"t.jj": _jj_with(4, "1 2 1 q 0 10 1 1 0")}),
    Case("jj-fields", "cell line with 8 fields", _AUDIT, "line 3",
         {"t.jj": _jj_with(3, "0 5 1 s 0 10 0 0")}),
    Case("jj-cell-order", "cell lines out of order (index 2 on the second line)", _AUDIT,
         "line 4", {"t.jj": _jj_with(4, "2 2 1 u 0 10 1 1 0")}),
    Case("jj-extra", "text after the last relation", _AUDIT, "line 8",
         {"t.jj": JJ + "garbage\n"}),
    Case("jj-non-additive", "total 9 is not the sum of its parts 2 + 3", _AUDIT,
         "relation 0", {"t.jj": _jj_with(3, "0 9 1 s 0 10 0 0 0")}),
    Case("jj-outside-bounds", "value 2 outside its a-priori bounds [3, 10]", _AUDIT,
         "cell 1", {"t.jj": _jj_with(4, "1 2 1 u 3 10 1 1 0")}),
    Case("jj-negative-level", "negative protection level", _PROTECT_JJ, "cell 1",
         {"t.jj": _jj_with(4, "1 2 1 u 0 10 -1 1 0")}),
    Case("jj-binary", "JJ file that is not text (bytes 0xff 0xfe)", _AUDIT, "line 4",
         {"t.jj": JJ[:30].encode() + b"\xff\xfe" + JJ[30:].encode()}),
    Case("jj-folder", "a folder as the JJ input", _AUDIT, "t.jj is a folder",
         {"t.jj": "<folder>"}),
    Case("jj-missing", "a JJ file that does not exist", ("tabsdc", "audit", "{dir}/none.jj"),
         "none.jj: no such file"),
    Case("jj-api-status", "unknown status letter, read by the API", _jj, "line 4",
         {"t.jj": _jj_with(4, "1 2 1 q 0 10 1 1 0")}),
    Case("jj-level-too-large", "protection level 50 that no pattern can give (the total "
         "is 5)", ("tabsdc", "protect", "{dir}/t.jj", "--method", "heuristic",
                   *_TABSDC_OUT), "cell 1", {"t.jj": _jj_with(4, "1 2 1 u 0 10 1 50 0")}),
    # microdata CSV
    Case("csv-empty", "empty (0-byte) CSV", _RULES, "micro.csv is empty", {"micro.csv": ""}),
    Case("csv-header-only", "CSV with a header and no records", _RULES,
         "has a header but no records", {"micro.csv": "region,sector,turnover\n"}),
    Case("csv-latin1", "CSV in Latin-1 (not UTF-8)", _RULES, "line 4 is not UTF-8",
         {"micro.csv": MICRO.replace("A,y", "\u00c9,y").encode("latin-1")}),
    Case("csv-folder", "a folder as the CSV input", _RULES, "micro.csv is a folder",
         {"micro.csv": "<folder>"}),
    Case("csv-missing", "a CSV that does not exist",
         ("tabsdc", "rules", "{dir}/none.csv", *RULES), "none.csv: no such file"),
    Case("csv-ragged", "CSV with a record of too many fields", _RULES, "line 3",
         {"micro.csv": MICRO.replace("A,x,10\n", "A,x,10,4,5\n")}),
    Case("csv-no-value-column", "--value names a column the file does not have",
         ("tabsdc", "rules", "{dir}/micro.csv", "--dims", "region", "--value", "sales",
          "--p", "10"), "column 'sales'"),
    Case("csv-no-dim-column", "--dims names a column the file does not have",
         ("tabsdc", "rules", "{dir}/micro.csv", "--dims", "nuts", "--value", "turnover",
          "--p", "10"), "'nuts'"),
    Case("csv-text-value", "non-numeric turnover", _RULES, "line 3",
         {"micro.csv": MICRO.replace("A,x,10\n", "A,x,ten\n")}),
    Case("csv-nan", "missing turnover", _RULES, "line 3",
         {"micro.csv": MICRO.replace("A,x,10\n", "A,x,\n")}),
    Case("csv-inf", "infinite turnover", _RULES, "line 3",
         {"micro.csv": MICRO.replace("A,x,10\n", "A,x,inf\n")}),
    Case("csv-negative", "negative turnover under the p% rule", _RULES,
         "--negative absolute",
         {"micro.csv": MICRO.replace("A,x,10\n", "A,x,-10\n")}),
    Case("csv-missing-code", "a record without a region code", _RULES, "row 3",
         {"micro.csv": MICRO.replace("A,x,10\n", ",x,10\n")}),
    Case("csv-total-code", "a region coded 'Total', the label of the margin", _RULES,
         "'Total'", {"micro.csv": MICRO.replace("C,y,7", "Total,y,7")}),
    Case("csv-mixed-codes", "codes 1, \"1\" and 1.0 in one column", _mixed_codes, "region"),
    Case("hierarchy-twice", "--hierarchy given twice for one dimension",
         ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
          "2", "--hierarchy", "nuts2=nuts1,nuts2", "--hierarchy", "nuts2=nuts1,nuts2"),
         "twice for the dimension 'nuts2'"),
    Case("hierarchy-malformed", "--hierarchy without '='",
         ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
          "2", "--hierarchy", "nuts2"), "expected DIM=L1,L2"),
    Case("hierarchy-two-parents", "hierarchy file where FR10 has two parents",
         ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
          "2", "--hierarchy", "nuts2={dir}/tree.csv"), "FR10",
         {"tree.csv": "parent,child\nTotal,FR1\nTotal,FR2\nFR1,FR10\nFR2,FR10\nFR1,FR11\n"
                      "FR2,FR21\n"}),
    Case("hierarchy-cycle", "hierarchy file with a cycle FR1 > FR10 > FR1",
         ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
          "2", "--hierarchy", "nuts2={dir}/tree.csv"), "tree.csv",
         {"tree.csv": "parent,child\nTotal,FR1\nFR1,FR10\nFR10,FR1\nFR1,FR11\nTotal,FR2\n"
                      "FR2,FR21\n"}),
    Case("hierarchy-levels-not-nested", "level columns where FR10 lies in FR1 and FR2",
         ("tabsdc", "rules", "{dir}/levels.csv", "--dims", "nuts2", "--value", "v", "--freq",
          "2", "--hierarchy", "nuts2=nuts1,nuts2"), "FR10",
         {"levels.csv": LEVELS + "FR2,FR10,3\n"}),
    Case("aggregated-duplicate", "interior cells given twice (--aggregated)",
         ("tabsdc", "rules", "{dir}/cells.csv", "--aggregated", "--dims", "region",
          "--freq", "2", "--freq-column", "n"), "duplicate",
         {"cells.csv": "region,value,n\nA,5,2\nB,3,1\nA,4,1\n"}),
    # options
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
    Case("round-column", "--column that no cell has", (*_ROUND, "--base", "5", "--column",
                                                      "nope"), "no cell column 'nope'"),
    Case("protect-unknown-cost", "--cost naming a column that is not there",
         (*_PROTECT_JJ, "--cost", "employees"), "employees"),
    Case("audit-prior-q-negative", "--prior-q -5", (*_AUDIT, "--prior-q", "-5"), "q"),
    Case("negative-api", "negative turnover, API, default negative='keep'",
         _rules_on_negative, "negative"),
    # outputs
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
    # adjust, round from CSV
    Case("adjust-preserve", "--preserve of a statistic CTA cannot keep",
         ("tabsdc", "adjust", "{dir}/t.jj", "--preserve", "median", *_TABSDC_OUT),
         "unknown statistic to preserve 'median'"),
    Case("adjust-method", "--method that CTA does not have",
         ("tabsdc", "adjust", "{dir}/t.jj", "--method", "simplex", *_TABSDC_OUT),
         "invalid choice: 'simplex'"),
    Case("adjust-non-additive", "CTA of a table whose total is not the sum of its parts",
         ("tabsdc", "adjust", "{dir}/t.jj", *_TABSDC_OUT), "relation 0",
         {"t.jj": _jj_with(3, "0 9 1 s 0 10 0 0 0")}),
    Case("adjust-out-is-input", "adjust --out on the input JJ file",
         ("tabsdc", "adjust", "{dir}/t.jj", "--out", "{dir}/t.jj"), "is an input file"),
    Case("round-csv-no-value", "CSV of cells to round without a value column",
         ("tabsdc", "round", "{dir}/cells.csv", "--base", "5", "--method", "controlled",
          *_TABSDC_OUT), "no 'value' column", {"cells.csv": "region,amount\nA,5\n"}),
    Case("round-suffix", "a table to round in a .txt file",
         ("tabsdc", "round", "{dir}/t.txt", "--base", "5", "--method", "controlled",
          *_TABSDC_OUT), "expected a .jj or .csv table", {"t.txt": JJ}),
    Case("round-csv-non-additive", "CSV of cells whose total is not the sum",
         ("tabsdc", "round", "{dir}/cells.csv", "--base", "5", "--method", "controlled",
          *_TABSDC_OUT), "Total",
         {"cells.csv": "region,value\nTotal,9\nA,2\nB,3\n"}),
    # microsdc
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
    # edge inputs that are valid
    Case("one-cell", "a one-cell table (one record, one code)",
         ("tabsdc", "protect", "{dir}/one.csv", "--dims", "region", "--value", "turnover",
          "--freq", "3", "--out", "{dir}/o.jj"), "", {"one.csv": "region,turnover\nA,5\n"},
         accepted=True),
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
    Case("codes-with-separators", "codes containing commas, quotes and '='",
         ("tabsdc", "rules", "{dir}/micro.csv", *RULES, "--out", "{dir}/o.csv"), "",
         {"micro.csv": MICRO.replace("A,", '"A,1=2",').replace("B,", '"B ""b""",')},
         accepted=True),
    Case("out-is-input-force", "--out is the input file, with --force",
         ("tabsdc", "rules", "{dir}/micro.csv", *RULES, "--out", "{dir}/micro.csv",
          "--force"), "", accepted=True),
]
