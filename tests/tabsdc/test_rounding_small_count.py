"""Small-count rounding: its promises checked by group sums over the rounded inner cells
(written independently of the contribution matrix), an attacker's linear programs, the
rounding of SmallCountRounding 1.2.5 (an R fixture) held to the same checks, and
``round_table(method="small-count")``."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc import Table
from tabsdc._errors import InputError
from tabsdc.rounding import round_small_counts, round_table
from tabsdc.rounding._small_count import contribution_matrix
from tests.conftest import DATA, examples


def published_cells(inner: pd.DataFrame, dims, column: str) -> pd.Series:
    """Every cell of the table over ``dims`` (totals as "Total"), by pandas group sums."""
    parts = []
    for kept in itertools.product([True, False], repeat=len(dims)):
        by = [d for d, k in zip(dims, kept, strict=True) if k]
        sums = (inner.groupby(by)[column].sum().reset_index() if by
                else pd.DataFrame({column: [inner[column].sum()]}))
        for d, k in zip(dims, kept, strict=True):
            if not k:
                sums[d] = "Total"
        parts.append(sums[[*dims, column]])
    return pd.concat(parts).set_index(list(dims))[column]


def check_release(inner: pd.DataFrame, tables, base: int, max_round: int) -> list[str]:
    """The promises of small-count rounding; returns what is broken."""
    broken = []
    y, r = inner["original"].to_numpy(), inner["rounded"].to_numpy()
    if (r < 0).any():
        broken.append("negative inner count")
    moved = y != r
    if not np.isin(r[moved], [y[moved] // base * base, (y[moved] // base + 1) * base]).all():
        broken.append("an inner cell left its adjacent multiples")
    for dims in tables:
        original = published_cells(inner, dims, "original")
        rounded = published_cells(inner, dims, "rounded")
        was_small = (original > 0) & (original <= max_round)
        if (rounded[was_small] % base != 0).any():
            broken.append(f"{dims}: a small original count is not a multiple of the base")
        if (rounded[rounded <= max_round] % base != 0).any():
            broken.append(f"{dims}: a small published count is not 0 or a multiple")
    return broken


def microdata(seed: int, n: int = 250) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice([f"r{k}" for k in range(6)], n,
                             p=[0.4, 0.25, 0.15, 0.1, 0.06, 0.04]),
        "age": rng.choice(["a1", "a2", "a3", "a4"], n, p=[0.5, 0.3, 0.15, 0.05]),
        "sex": rng.choice(["m", "f"], n)})


@settings(max_examples=examples(6, 15), deadline=None)
@given(seed=st.integers(0, 10**6), base=st.sampled_from([2, 3, 5]),
       extra=st.integers(0, 3), n=st.integers(30, 400))
def test_every_published_table_keeps_the_promises(seed, base, extra, n):
    data = microdata(seed, n)
    tables = [["region", "age"], ["region", "sex"], ["age", "sex"]]
    result = round_small_counts(data, tables, base=base, max_round=base - 1 + extra,
                                seed=seed)
    inner = result.inner
    assert inner["original"].sum() == n
    assert check_release(inner, tables, base, base - 1 + extra) == []
    # every table is the sum of the rounded inner cells: additive and consistent
    for dims, table in zip(tables, result.tables, strict=True):
        got = table.cells["value"]
        expected = published_cells(inner, dims, "rounded").reindex(got.index).fillna(0)
        assert got.to_dict() == {k: float(v) for k, v in expected.items()}
        assert not table.failing_relations().size


def test_no_small_rounded_inner_count_is_pinned_by_the_published_cells():
    """An attacker's LPs over the inner cells given every published cell: an inner cell
    whose minimum equals its maximum is revealed; none of those may be a small count that
    is not a multiple of the base."""
    for seed in range(4):
        data = microdata(100 + seed, 150)
        tables = [["region", "age"], ["region", "sex"]]
        result = round_small_counts(data, tables, base=3, seed=seed)
        codes = result.inner[["region", "age", "sex"]]
        X = np.hstack([contribution_matrix(codes, t).toarray() for t in result.tables])
        published = X.T @ result.inner["rounded"].to_numpy()
        rounded = result.inner["rounded"].to_numpy()
        for i in np.flatnonzero((rounded % 3 != 0) & (rounded < 3)):
            c = np.zeros(len(rounded))
            c[i] = 1
            low = linprog(c, A_eq=X.T, b_eq=published, bounds=(0, None), method="highs")
            high = linprog(-c, A_eq=X.T, b_eq=published, bounds=(0, None), method="highs")
            assert high.fun + low.fun < -1e-6, f"inner cell {i} pinned at {rounded[i]}"


def test_small_count_rounding_of_the_r_package_passes_the_same_checks_and_ours_is_as_close():
    """small_count_inner.csv: SmallCountRounding 1.2.5's PLSrounding of region x age and
    sex x age (README). Both roundings keep the promises; ours moves the published cells
    about as little (within 25 %, summed over every published cell)."""
    fixture = pd.read_csv(DATA / "rounding" / "small_count_inner.csv")
    tables = [["region", "age"], ["sex", "age"]]
    assert check_release(fixture, tables, 3, 2) == []
    records = fixture.loc[fixture.index.repeat(fixture["original"]), ["region", "age", "sex"]]
    ours = round_small_counts(records, tables, base=3, seed=1)
    merged = fixture.merge(ours.inner, on=["region", "age", "sex"], how="left",
                           suffixes=("", "_ours")).fillna({"rounded_ours": 0})
    assert (merged["original_ours"].fillna(0) == merged["original"]).all()
    mine = merged.assign(rounded=merged["rounded_ours"])
    assert check_release(mine, tables, 3, 2) == []

    def deviation(frame):
        return sum((published_cells(frame, d, "rounded") - published_cells(frame, d, "original"))
                   .abs().sum() for d in tables)

    assert deviation(mine) <= 1.25 * deviation(fixture)


def test_round_table_small_count_on_one_table():
    data = microdata(7, 300)
    table = Table.from_microdata(data, ["region", "age"])
    counts = table.with_columns(value=table.cells["freq"].to_numpy(float))
    result = round_table(counts, 3, "small-count", seed=2)
    assert result.method == "small-count" and result.additive and result.audit is None
    inner = data.groupby(["region", "age"]).size().rename("original").reset_index()
    frame = result.to_frame()
    rounded = {(r, a): frame.loc[(r, a), "rounded"] for r, a in zip(inner["region"],
                                                                    inner["age"], strict=True)}
    inner["rounded"] = [int(rounded[k]) for k in zip(inner["region"], inner["age"],
                                                      strict=True)]
    assert check_release(inner, [["region", "age"]], 3, 2) == []
    assert result.n_changed > 0
    assert "adjacent and zero-restricted" not in result.summary()


def test_bad_input_is_refused():
    table = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "value": [1.5, 2.0]}), ["r"])
    with pytest.raises(InputError, match=r"needs counts; cell .*a.* holds 1.5"):
        round_table(table, 3, "small-count")
    data = microdata(1, 40)
    with pytest.raises(InputError, match="max_round must be at least base - 1 = 2"):
        round_small_counts(data, [["region"]], base=3, max_round=1)
    with pytest.raises(InputError, match="dims must list"):
        round_small_counts(data, [], base=3)
