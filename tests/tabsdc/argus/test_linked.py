"""Linked tables in tau-ARGUS jobs (table number 0, as rtauargus writes it for linked = TRUE),
checked by an attacker written here with scipy: it reads the files the job publishes, builds
the relations of both tables with the shared cells identified, and bounds every hidden cell
with linprog."""

import itertools
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from tabsdc._tableset import TableSet
from tabsdc.audit import audit
from tabsdc.cli import main
from tabsdc.io.argus._batch import run_batch
from tests.tabsdc.argus.conftest import SAMPLES

#: The job's two tables: published file and spanning variables.
FILES = {"activity_region.csv": ("ACTIVITY", "REGION"), "size_region.csv": ("SIZE", "REGION")}
UNION = ("ACTIVITY", "REGION", "SIZE")


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A copy of the linked-tables job; returns its batch file."""
    shutil.copytree(SAMPLES / "linked", tmp_path / "linked")
    return tmp_path / "linked" / "linked.arb"


def one_by_one(arb: Path, method: str = "GH({n},100)") -> Path:
    """The same job with each table protected on its own."""
    text = arb.read_text().replace("<SUPPRESS> GH(0,100)", "\n".join(
        f"<SUPPRESS> {method.format(n=n)}" for n in (1, 2)))
    arb.write_text(text)
    return arb


def children(path: Path) -> dict[str, list[str]]:
    """Parent -> children of an .hrc file (``@`` per level), the top level under Total."""
    tree: dict[str, list[str]] = {}
    chain: list[str] = []
    for line in path.read_text().splitlines():
        depth = len(line) - len(line.lstrip("@"))
        chain = [*chain[:depth], line.lstrip("@").strip()]
        tree.setdefault(chain[-2] if depth else "Total", []).append(chain[-1])
    return tree


def union_cell(dims: tuple[str, ...], codes) -> tuple[str, ...]:
    """A table's cell as a cell of the union of the variables (Total where it lacks one)."""
    return tuple(codes[dims.index(d)] if d in dims else "Total" for d in UNION)


def attack(folder: Path) -> dict[tuple[str, ...], tuple[float, float]]:
    """[min, max] of every cell hidden in the published files, over x >= 0 and the
    relations of both tables (a cell published by either file is known)."""
    trees = {"REGION": children(folder / "region.hrc")}
    published, hidden, relations = {}, set(), []
    for name, dims in FILES.items():
        frame = pd.read_csv(folder / name, dtype=str)
        for dim in dims:
            trees.setdefault(dim, {"Total": sorted(set(frame[dim]) - {"Total"})})
        for *codes, value in frame.itertuples(index=False):
            cell = union_cell(dims, codes)
            if value == "x":
                hidden.add(cell)
            else:
                published[cell] = float(value)
        for i, dim in enumerate(dims):  # parent = sum of children, at every code of the other
            for code in ["Total", *itertools.chain(*trees[dims[1 - i]].values())]:
                for parent, kids in trees[dim].items():
                    pairs = [(c, code) if i == 0 else (code, c) for c in (parent, *kids)]
                    relations.append((union_cell(dims, pairs[0]),
                                      [union_cell(dims, p) for p in pairs[1:]]))
    hidden -= set(published)
    cells = sorted(hidden)
    column = {cell: j for j, cell in enumerate(cells)}
    rows, rhs = [], []
    for parent, kids in relations:
        row, known = np.zeros(len(cells)), 0.0
        for cell, sign in [(parent, 1.0), *((k, -1.0) for k in kids)]:
            if cell in column:
                row[column[cell]] += sign
            else:
                known += sign * published[cell]
        if row.any():
            rows.append(row)
            rhs.append(-known)
        else:  # a relation of published cells only must hold in what is published
            assert abs(known) < 1e-6 * max(1.0, abs(published[parent])), parent
    intervals = {}
    for cell in cells:
        objective = np.zeros(len(cells))
        objective[column[cell]] = 1.0
        low = linprog(objective, A_eq=np.array(rows), b_eq=rhs, bounds=(0, None))
        high = linprog(-objective, A_eq=np.array(rows), b_eq=rhs, bounds=(0, None))
        assert low.status == 0 and high.status in (0, 3)
        intervals[cell] = (low.fun, np.inf if high.status == 3 else -high.fun)
    return intervals


def requirements(result) -> dict[tuple[str, ...], tuple[float, float, float, bool]]:
    """Value, lower and upper protection level and primary flag of every cell of the job's
    tables (as the rules made them), by cell of the union of the variables."""
    cells = {}
    for job in result.tables:
        table = job.table
        for codes, row in table.cells.iterrows():
            cell = union_cell(table.dims, codes)
            value, lpl, upl, primary = cells.get(cell, (row.value, 0.0, 0.0, False))
            cells[cell] = (value, max(lpl, row.lpl), max(upl, row.upl),
                           primary or row.status == "u")
    return cells


def verdict(folder: Path, result) -> tuple[list, list]:
    """Primary cells the attacker narrows below their protection levels, and hidden cells
    it pins to one value."""
    needed = requirements(result)
    unprotected, exact = [], []
    for cell, (low, high) in attack(folder).items():
        value, lpl, upl, primary = needed[cell]
        scale = 1e-7 * max(1.0, abs(value))
        if high - low <= scale:
            exact.append(cell)
        if primary and (low > value - lpl + scale or high < value + upl - scale):
            unprotected.append(cell)
    return unprotected, exact


@pytest.mark.parametrize("suppress", [None, "MOD(0,1)", "OPT(0,1)"])
def test_linked_tables_are_protected_together(linked, suppress):
    if suppress:
        linked.write_text(linked.read_text().replace("GH(0,100)", suppress))
    result = run_batch(linked)
    log = "\n".join(result.log)
    assert "linked tables: 2 tables protected together" in log
    assert "audit of the linked tables together: every primary cell protected" in log
    assert result.passed and all(job.outcome.passed for job in result.tables)
    unprotected, exact = verdict(linked.parent, result)
    assert unprotected == [] and exact == []
    # a cell the tables share has one status: hidden in both files or published in both
    frames = [pd.read_csv(linked.parent / name, dtype=str) for name in FILES]
    shown = [frame[frame["ACTIVITY" if k == 0 else "SIZE"] == "Total"]
             .set_index("REGION").iloc[:, -1] == "x" for k, frame in enumerate(frames)]
    pd.testing.assert_series_equal(shown[0], shown[1], check_names=False)
    primaries = sum(needed[3] for needed in requirements(result).values())
    assert primaries == 22


def test_tables_protected_one_by_one_are_not_protected_together(linked):
    """The danger table number 0 avoids: each table passes its own audit, yet the two files
    together pin down primary cells (a margin hidden in one table is published in the
    other). The attacker and the toolkit's audit of the set agree on the cells."""
    result = run_batch(one_by_one(linked))
    assert all(job.outcome.passed for job in result.tables)
    unprotected, _ = verdict(linked.parent, result)
    assert len(unprotected) >= 1
    published = TableSet.from_tables([job.protected for job in result.tables])
    joint = audit(published, singletons=False)  # the outside intruder, as the attacker above
    assert sorted(joint.failures.index) == sorted(unprotected)
    # the job says so (its audit attacks as the respondents of single cells too: at least
    # these cells), and does not pass
    assert not result.passed and result.status == "failed" and result.together == (False,)
    assert result.to_dict()["audited_together"] == [False]
    failing = audit(published).failures.index
    assert set(unprotected) <= set(failing)
    assert any(f"published together they leave {len(failing)} primary cell(s) NOT "
               "protected" in line for line in result.log)


def test_the_command_line_runs_the_job_as_rtauargus_wrote_it(linked, capsys):
    assert main(["argus", str(linked), "--quiet"]) == 0
    assert "2 table(s), 2 protected, 2 file(s) written" in capsys.readouterr().out
    assert all((linked.parent / name).is_file() for name in FILES)


def test_the_command_line_fails_a_job_whose_tables_do_not_protect_each_other(linked, capsys):
    assert main(["argus", str(one_by_one(linked)), "--quiet"]) == 1
    assert "tables protected one by one do NOT protect each other" in capsys.readouterr().out


def test_linked_tables_need_one_response(linked, capsys):
    linked.write_text(linked.read_text().replace('"SIZE""REGION"|"TURNOVER"',
                                                 '"SIZE""REGION"|"<freq>"'))
    assert main(["argus", str(linked), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "linked.arb, line 10: <SUPPRESS>" in err and "one response variable" in err
