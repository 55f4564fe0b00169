"""No publishable file gives a hidden value: every writer, every option, read by an outsider.

Tables are built whose every interior cell has a value found nowhere else (a whole part
``100000 + 3 k`` with ``k`` drawn without replacement, so that cells differ even rounded to
units, and three decimals ending in a non-zero digit; a total is above every interior cell).
They are protected by suppression, rounding and adjustment, and every publishable writer runs
on them: ``write_publishable`` in both layouts, tau-ARGUS output types 1 to 4 with every option
combination, the browser app's download and the command line's ``--publish``. The outsider
(:mod:`tests.tabsdc.leaks`) reads every number of every file in any notation and must find
no hidden value (to whole units), no sum or difference of one with a published value, and no
largest contribution (to the three decimals). For suppression the files must also be
byte-identical when everything about the hidden cells (values, statuses, contributor counts,
contributions, levels) is changed: the files are a function of what is published alone.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._release import write_publishable
from tabsdc.cli import main
from tabsdc.cta import adjust
from tabsdc.io.argus._output import parse_write_options, write_output
from tabsdc.rounding import round_table
from tabsdc.suppression import suppress
from tabsdc.ui._session import Session
from tests.tabsdc.leaks import leaked

#: Option letters of WRITETABLE that act on each publishable type (and AS, which tau-ARGUS's
#: manual offers for every type): each combination of + and - is written.
OPTIONS = {1: ("AS", "FL", "QU"), 2: ("AS", "SE", "FL", "QU"), 3: ("AS", "SE", "FL", "QU"),
           4: ("AS", "QU", "HL")}
#: And once with every option that is not refused (those that do not apply to a type are
#: reported and have no effect), and once with none.
EVERY_OPTION = "AS+SE+FL+QU+HL+SO+AR+"

CASES = settings(max_examples=8, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])


# -- the tables ---------------------------------------------------------------------------------
def planted_cells(seed: int, shape: tuple[int, ...]) -> pd.DataFrame:
    """Interior cells with distinctive values, contributor counts and two largest
    contributions (cell ``0`` has one contributor, so it is sensitive)."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    whole = 100_000 + 3 * rng.choice(30_000, size, replace=False)
    thousandths = 10 * rng.integers(0, 100, size) + rng.integers(1, 10, size)
    value = whole + thousandths / 1000
    freq = rng.integers(1, 6, size)
    freq[0] = 1
    x1 = np.where(freq == 1, value, np.round(value * rng.uniform(0.3, 0.7, size), 3))
    x2 = np.where(freq == 1, 0.0, np.where(freq == 2, np.round(value - x1, 3),
                                           np.round((value - x1) * rng.uniform(0.2, 0.6), 3)))
    codes = np.array(list(itertools.product(*[range(n) for n in shape])))
    frame = pd.DataFrame({f"d{k}": [f"{'abc'[k]}{c}" for c in codes[:, k]]
                          for k in range(len(shape))})
    return frame.assign(value=value, freq=freq, x1=x1, x2=x2)


def row_hierarchy(codes: list[str]) -> Hierarchy:
    """The codes of the first dimension under two groups ``G0``, ``G1``."""
    return Hierarchy.from_parent_child({code: f"G{k % 2}" for k, code in enumerate(codes)}
                                       | {"G0": "Total", "G1": "Total"})


def table_of(cells: pd.DataFrame, hierarchical: bool) -> Table:
    dims = [c for c in cells.columns if c.startswith("d")]
    hierarchies = {"d0": row_hierarchy(sorted(set(cells["d0"])))} if hierarchical else None
    return Table.from_aggregated(cells, dims, freq="freq", top=["x1", "x2"],
                                 hierarchies=hierarchies)


@st.composite
def tables(draw) -> tuple[pd.DataFrame, bool]:
    shape = draw(st.sampled_from([(2, 3), (3, 3), (4, 3), (3, 4), (2, 2, 3)]))
    hierarchical = len(shape) == 2 and shape[0] >= 3 and draw(st.booleans())
    return planted_cells(draw(st.integers(0, 2**32 - 1)), shape), hierarchical


RULES = [FrequencyRule(3), PPercentRule(10)]


# -- what must not leave -------------------------------------------------------------------------
def hidden_mask(table: Table) -> np.ndarray:
    return table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()


def assert_no_leak(text: str, secret: np.ndarray, exact: np.ndarray, where: str,
                   finest: float = 0.5) -> None:
    """No value of ``secret`` in ``text`` to ``finest`` (whole units: 0.5), and none of
    ``exact`` to its three decimals."""
    found = leaked(text, secret, finest=finest)
    assert not found.size, f"{where}: hidden values {found.tolist()}"
    found = leaked(text, exact, finest=0.0005)
    assert not found.size, f"{where}: values that give a hidden one {found.tolist()[:5]}"


def secrets_of(cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The hidden values among ``cells`` (columns ``value``, ``status``, ``x1``, ``x2``); and
    the sums and differences of sensitive ones with published values, and every largest
    contribution. (A secondary cell may be given by one subtraction: it is not sensitive,
    and a pattern may hide one that the others already give.)"""
    values = cells["value"].to_numpy(float)
    status = cells["status"].to_numpy()
    h, p = values[status == "u"], values[~np.isin(status, HIDDEN_STATUSES)]
    mixed = np.abs(np.concatenate([(h[:, None] + p).ravel(), (h[:, None] - p).ravel()]))
    tops = cells[["x1", "x2"]].to_numpy(float).ravel()
    return values[np.isin(status, HIDDEN_STATUSES)], np.concatenate([mixed, tops[tops > 0]])


def option_strings(output_type: int) -> list[str]:
    combos = itertools.product(*[[f"{o}+", f"{o}-"] for o in OPTIONS[output_type]])
    return ["".join(c) for c in combos] + [EVERY_OPTION, ""]


def argus_files(table: Table, folder: Path, *, original: Table | None = None,
                decimals: int = 0) -> dict[str, Path]:
    """Every tau-ARGUS publishable output of ``table``, one file per type and options."""
    files = {}
    for output_type in ((1, 2, 3) if original is not None else (1, 2, 3, 4)):
        for k, options in enumerate(option_strings(output_type)):
            path = folder / f"argus_{output_type}_{k}.csv"
            write_output(table, path, output_type, parse_write_options(options),
                         original=original, response="Var", decimals=decimals)
            files[f"type {output_type} {options or '(none)'}"] = path
    return files


def api_files(table: Table, folder: Path, symbol: str, decimals: int | None,
              every_cell: bool = False) -> dict[str, Path]:
    """write_publishable in both layouts and with both separators."""
    published = table.with_columns(status="s") if every_cell else table
    files = {}
    for layout, sep in (("long", ","), ("wide", ";")):
        path = folder / f"api_{layout}.csv"
        write_publishable(published, path, symbol=symbol, decimals=decimals, layout=layout,
                          sep=sep)
        files[f"write_publishable {layout}"] = path
    return files


def app_download(result: object, method: str, folder: Path, symbol: str) -> Path:
    """The browser app's publishable download of ``result``."""
    session = Session(max_upload=10**6, root=folder)
    try:
        session.spec = {"source": "planted.csv", "protect": {"method": method}}
        session.protection = result
        path = session.download("publishable", symbol)
        target = folder / f"app_{method}.csv"
        target.write_bytes(path.read_bytes())
        return target
    finally:
        session.close()


def perturbed(table: Table, seed: int) -> Table:
    """``table`` with everything about its hidden cells changed: values, statuses (primary
    and secondary swapped), contributor counts, contributions and protection levels."""
    rng = np.random.default_rng(seed)
    hidden = hidden_mask(table)
    n = table.n_cells
    status = table.cells["status"].to_numpy()

    def other(column: str, values: np.ndarray) -> np.ndarray:
        return np.where(hidden, values, table.cells[column].to_numpy(float))

    return table.with_columns(
        value=other("value", rng.uniform(1, 9e6, n).round(rng.integers(0, 4))),
        status=np.where(hidden, np.where(status == "u", "m", "u"), status),
        freq=other("freq", rng.integers(0, 40, n)), x1=other("x1", rng.uniform(0, 9e5, n)),
        x2=other("x2", rng.uniform(0, 9e5, n)), lpl=other("lpl", rng.uniform(0, 9e3, n)),
        upl=other("upl", rng.uniform(0, 9e3, n)))


# -- suppression ---------------------------------------------------------------------------------
@pytest.mark.slow
@CASES
@given(case=tables(), symbol=st.sampled_from(["x", "..", "c", "-"]),
       decimals=st.sampled_from([None, 0, 3]))
def test_no_publishable_file_of_a_suppressed_table_gives_a_hidden_value(
        tmp_path_factory, case, symbol, decimals):
    cells, hierarchical = case
    folder = tmp_path_factory.mktemp("suppressed")
    table = table_of(cells, hierarchical)
    result = suppress(apply_rules(table, RULES).table, "optimal", "value")
    assert result.passed
    protected = result.table
    hidden = hidden_mask(protected)
    assert hidden.any()
    secret, exact = secrets_of(protected.cells)

    files = {**api_files(protected, folder, symbol, decimals),
             **argus_files(protected, folder),
             "app download": app_download(result, "suppression", folder, symbol)}
    for where, path in files.items():
        assert_no_leak(path.read_text(encoding="latin-1"), secret, exact, where)

    # the files depend on what is published alone
    other = perturbed(protected, seed=len(cells))
    again = folder / "again"
    again.mkdir()
    for where, path in {**api_files(other, again, symbol, decimals),
                        **argus_files(other, again)}.items():
        assert path.read_bytes() == files[where].read_bytes(), where

    # the command line, from the interior cells, with its own pattern
    source = folder / "cells.csv"
    cells.to_csv(source, index=False)
    dims = [c for c in cells.columns if c.startswith("d")]
    tree = []
    if hierarchical:
        parents = folder / "d0.csv"
        hierarchy = table.hierarchies["d0"]
        pd.DataFrame({"parent": list(hierarchy.parents.values()),
                      "child": list(hierarchy.parents)}).to_csv(parents, index=False)
        tree = ["--hierarchy", f"d0={parents}"]
    for layout in ("long", "wide"):
        internal, publish = folder / f"cli_{layout}_cells.csv", folder / f"cli_{layout}.csv"
        assert main(["protect", str(source), "--aggregated", "--dims", *dims, "--value",
                     "value", "--freq-column", "freq", "--top-columns", "x1", "x2", *tree,
                     "--freq", "3", "--p", "10", "--method", "optimal", "--out", str(internal),
                     "--publish", str(publish), "--symbol", symbol, "--layout", layout]) == 0
        written = pd.read_csv(internal, skiprows=1, dtype=dict.fromkeys(dims, str))
        mask = written["status"].isin(HIDDEN_STATUSES).to_numpy()
        assert mask.any()
        assert_no_leak(publish.read_text(encoding="utf-8-sig"), *secrets_of(written),
                       f"tabsdc protect --publish {layout}")


# -- rounding and adjustment: every cell published at its new value -------------------------------
@pytest.mark.slow
@CASES
@given(case=tables(), symbol=st.sampled_from(["x", ".."]))
def test_no_publishable_file_of_a_rounded_or_adjusted_table_gives_an_original_value(
        tmp_path_factory, case, symbol):
    """A rounded or adjusted value lies near the original by design; what must not appear
    is the original itself (to one decimal or finer) or a largest contribution."""
    cells, hierarchical = case
    folder = tmp_path_factory.mktemp("released")
    ruled = apply_rules(table_of(cells, hierarchical), RULES).table
    tops = ruled.cells[["x1", "x2"]].to_numpy(float).ravel()
    tops = tops[tops > 0]
    rounded = round_table(ruled, 10, "controlled")
    adjusted = adjust(ruled, "heuristic", time_limit=30, seed=1)
    sensitive = ruled.cells["status"].eq("u").to_numpy()
    for name, result, secret in (("rounding", rounded, ruled.values),
                                 ("adjustment", adjusted, ruled.values[sensitive])):
        assert not np.isin(np.round(result.table.values, 3), np.round(secret, 3)).any()
        files = {**api_files(result.table, folder, symbol, None, every_cell=True),
                 **argus_files(result.table, folder, original=ruled),
                 "app download": app_download(result, name, folder, symbol)}
        jj = folder / f"{name}.jj"
        ruled.to_jj(jj)
        command = (["round", str(jj), "--base", "10", "--method", "controlled"]
                   if name == "rounding" else ["adjust", str(jj), "--method", "heuristic",
                                               "--time-limit", "30"])
        publish = folder / f"cli_{name}.csv"
        assert main([*command, "--publish", str(publish), "--symbol", symbol]) in (0, 1)
        if publish.exists():
            files[f"tabsdc {command[0]} --publish"] = publish
        for where, path in files.items():
            assert_no_leak(path.read_text(encoding="latin-1"), secret, tops,
                           f"{name}: {where}", finest=0.05)
