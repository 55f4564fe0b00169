"""The cell key method on counts: cell keys and noise against an independent computation in
Python's decimals, exact boundaries, the same noise in every table, the leak test."""

import itertools
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from tabsdc import Hierarchy
from tabsdc._errors import InputError
from tabsdc._release import write_publishable
from tabsdc.ckm import build_ptable, perturb_counts, read_ptable
from tests.conftest import DATA

PTABLE = read_ptable(DATA / "ckm" / "ptab_freq.txt")  # D=5, V=3, js=2, pstay=0.5


def records(n=400, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice(["r1", "r2", "r3", "r4"], n, p=[0.6, 0.3, 0.08, 0.02]),
        "sex": rng.choice(["m", "f"], n),
        "age": rng.choice(["a1", "a2", "a3"], n, p=[0.7, 0.25, 0.05]),
        "key": [f"0.{k:08d}" for k in rng.integers(0, 10**8, n)]})


def leaves_below(hierarchy, code):
    """The leaf codes under ``code`` (itself when a leaf), by walking the children."""
    children = hierarchy.children(code)
    if not children:
        return {code}
    return set().union(*(leaves_below(hierarchy, c) for c in children))


def reference_cells(data, dims, hierarchies):
    """Every cell (totals included) with its count and its cell key as a Decimal, by masks
    over the records: the sum of the keys modulo 1."""
    keys = [Decimal(k) for k in data["key"]]
    out = {}
    for combo in itertools.product(*(hierarchies[d].codes for d in dims)):
        mask = np.ones(len(data), bool)
        for dim, code in zip(dims, combo, strict=True):
            mask &= data[dim].isin(leaves_below(hierarchies[dim], code)).to_numpy()
        total = sum((keys[k] for k in np.flatnonzero(mask)), Decimal(0))
        out[combo] = (int(mask.sum()), total % 1)
    return out


def reference_noise(ptable_frame, count, cell_key):
    """tau-ARGUS's rule written plainly: the first transition of row min(n, max i) whose
    p_int_ub (as decimal text) is above the cell key."""
    row = min(count, int(ptable_frame["i"].max()))
    part = ptable_frame[ptable_frame["i"] == row]
    for v, upper in zip(part["v"], part["p_int_ub"], strict=True):
        if Decimal(repr(float(upper))) > cell_key:
            return int(v)
    raise AssertionError("no transition")


@pytest.fixture(scope="module")
def three_dims():
    data = records()
    hier = {"region": Hierarchy.from_parent_child(pd.DataFrame(
        {"parent": ["Total", "Total", "N", "N", "S", "S"],
         "child": ["N", "S", "r1", "r2", "r3", "r4"]}))}
    return data, hier, perturb_counts(data, ["region", "sex", "age"], PTABLE,
                                      record_key="key", hierarchies=hier)


def test_cell_keys_and_noise_agree_with_decimal_arithmetic(three_dims):
    data, hier, result = three_dims
    hierarchies = result.original.hierarchies
    frame = result.to_frame()
    ref = reference_cells(data, ["region", "sex", "age"], hierarchies)
    assert len(ref) == len(frame) == 7 * 3 * 4
    for label, row in frame.iterrows():
        count, key = ref[label]
        assert row["original"] == count, label
        assert Decimal(int(result.cell_keys[frame.index.get_loc(label)])) / 10**8 == key, label
        assert row["noise"] == reference_noise(PTABLE.frame, count, key), label
        assert row["published"] == count + row["noise"]


def test_published_counts_keep_the_ptable_s_promises(three_dims):
    _, _, result = three_dims
    x, y = result.original.values, result.table.values
    assert (y[x == 0] == 0).all()                      # zero stays zero
    assert not np.isin(y, [1, 2]).any()                 # js = 2: no published 1 or 2
    assert (y >= 0).all() and (np.abs(y - x) <= 5).all()
    assert result.status == "perturbed"
    assert result.table.cells.index.equals(result.original.cells.index)


def test_a_key_on_a_boundary_takes_the_next_transition():
    """Three keys summing exactly to p_int_ub of row 3's first transition (0.18737598): in
    floating point the sum falls below it (and would take v = -3); exactly, it is not below,
    so the cell takes the next transition (v = 0)."""
    keys = ["0.00155228", "0.12565890", "0.06016480"]
    assert sum(float(k) for k in keys) < 0.18737598    # the float sum is on the wrong side
    data = pd.DataFrame({"g": ["a"] * 3, "key": keys})
    result = perturb_counts(data, ["g"], PTABLE, record_key="key")
    frame = result.to_frame()
    assert frame.loc["a", "original"] == 3 and frame.loc["a", "cell_key"] == 0.18737598
    assert frame.loc["a", "noise"] == 0
    one_less = data.assign(key=["0.00155228", "0.12565890", "0.06016479"])
    assert perturb_counts(one_less, ["g"], PTABLE, record_key="key").to_frame().loc[
        "a", "noise"] == -3


def test_the_same_cell_gets_the_same_noise_in_every_table():
    data = records(600, seed=5)
    by_sex = perturb_counts(data, ["region", "sex"], PTABLE, record_key="key").to_frame()
    by_age = perturb_counts(data, ["region", "age"], PTABLE, record_key="key").to_frame()
    alone = perturb_counts(data, ["region"], PTABLE, record_key="key").to_frame()
    for region in ["Total", "r1", "r2", "r3", "r4"]:
        assert by_sex.loc[(region, "Total"), "published"] == \
            by_age.loc[(region, "Total"), "published"] == alone.loc[region, "published"]


def test_noise_frequencies_follow_the_ptable_row():
    """Many cells of count 4 with drawn keys: the share of each noise is its probability."""
    n_cells = 20000
    data = pd.DataFrame({"cell": np.repeat(np.arange(n_cells).astype(str), 4)})
    result = perturb_counts(data, ["cell"], PTABLE, seed=11, keep_empty=False)
    noise = result.noise[result.original.values == 4]
    row = PTABLE.frame[PTABLE.frame["i"] == 4]
    observed = np.array([(noise == v).mean() for v in row["v"]])
    assert np.abs(observed - row["p"].to_numpy()).max() < 4 * np.sqrt(0.25 / n_cells)
    assert len(result.record_keys) == len(data)


def test_drawn_keys_are_reproducible_with_the_seed():
    data = records(200).drop(columns="key")
    first = perturb_counts(data, ["region", "sex"], PTABLE, seed=4)
    again = perturb_counts(data, ["region", "sex"], PTABLE, seed=4)
    assert (first.record_keys == again.record_keys).all()
    assert (first.table.values == again.table.values).all()


def test_keys_with_more_decimals_are_exact(three_dims):
    data = records(50).assign(key=lambda d: [k + "1234567" for k in d["key"]])
    result = perturb_counts(data, ["sex"], PTABLE, record_key="key", digits=15)
    keys = [Decimal(k) for k in data["key"]]
    total = sum(keys, Decimal(0)) % 1
    assert Decimal(int(result.cell_keys[0])) / 10**15 == total


def test_publishable_file_holds_only_published_counts(three_dims, tmp_path):
    """Leak test: no original count of a perturbed cell, no cell key, no count column."""
    _, _, result = three_dims
    path = write_publishable(result.table, tmp_path / "publish.csv")
    published = pd.read_csv(path, encoding="utf-8-sig", dtype=str)
    assert list(published.columns) == ["region", "sex", "age", "value"]
    frame = result.to_frame()
    values = published["value"].astype(int).to_numpy()
    assert (values == frame["published"].to_numpy()).all()
    changed = frame["noise"].to_numpy() != 0
    assert changed.sum() > 20
    assert (values[changed] != frame["original"].to_numpy()[changed]).all()
    text = path.read_text(encoding="utf-8-sig")
    for key in frame["cell_key"]:
        assert f"{key:.8f}".rstrip("0") not in text or key == 0
    assert "freq" not in text and "noise" not in text


def test_bad_input_names_the_row():
    data = pd.DataFrame({"g": ["a", "b"], "key": ["0.5", "1.2"]})
    with pytest.raises(InputError, match="column 'key', row 1: a record key must be"):
        perturb_counts(data, ["g"], PTABLE, record_key="key")
    data = pd.DataFrame({"g": ["a", "b"], "key": ["0.5", "0.123456789"]})
    with pytest.raises(InputError, match="row 1: the record key '0.123456789' has more than 8"):
        perturb_counts(data, ["g"], PTABLE, record_key="key")
    magnitude = build_ptable(5, 1, kind="magnitude")
    with pytest.raises(InputError, match="needs a count p-table"):
        perturb_counts(data.assign(key="0.1"), ["g"], magnitude, record_key="key")
    with pytest.raises(InputError, match="column 'nope' is not in the data"):
        perturb_counts(data, ["nope"], PTABLE, record_key="key")


def test_dask_records_give_the_same_keys_and_noise(three_dims):
    """Out of core: the record keys summed per leaf cell in each partition, then merged."""
    dd = pytest.importorskip("dask.dataframe")
    data, hier, result = three_dims
    lazy = dd.from_pandas(data, npartitions=6)
    lines = []
    out = perturb_counts(lazy, ["region", "sex", "age"], PTABLE, record_key="key",
                         hierarchies=hier, progress=lines.append)
    expected = result.to_frame()
    got = out.to_frame().loc[expected.index]
    assert (got == expected).all().all()
    assert any(line.startswith("partitions 6/6 record keys summed") for line in lines)
    with pytest.raises(InputError, match="dask data need stored record keys"):
        perturb_counts(lazy, ["sex"], PTABLE)
    bad = dd.from_pandas(data.assign(key=["0.5"] * 399 + ["1.5"]), npartitions=4)
    with pytest.raises(InputError, match="column 'key', row 399: a record key must be"):
        perturb_counts(bad, ["sex"], PTABLE, record_key="key")
