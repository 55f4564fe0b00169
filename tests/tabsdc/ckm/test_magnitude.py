"""The cell key method on magnitudes: against cellKey 1.0.2's own per-cell functions (a
fixture made in R), against a plain per-cell reimplementation of tau-ARGUS 4.2's rule with
decimal keys and contributions found by masks over the records, the same noise in every
table, the sign and zero promises, the leak test."""

import itertools
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from tabsdc import Hierarchy
from tabsdc._errors import InputError
from tabsdc._release import write_publishable
from tabsdc._rules import PPercentRule
from tabsdc.ckm import FlexFunction, build_ptable, magnitude_noise, perturb_magnitudes, read_ptable
from tabsdc.ckm._magnitude import scramble_keys, separation_point
from tests.conftest import DATA

LARGE = read_ptable(DATA / "ckm" / "ptab_savings_all.txt")         # D = 5, V = 1, step 2
SMALL = read_ptable(DATA / "ckm" / "ptab_savings_smallcells.txt")  # rows 0, 1, 8
PARITY = read_ptable(DATA / "ckm" / "ptab_parity.txt")             # types even and odd


# -- against cellKey -------------------------------------------------------------------------

def test_agrees_with_cellkey_per_cell_functions():
    """cellkey_magnitudes.csv: 400 cells perturbed by cellKey's .perturb_cell_flex (README)."""
    fixture = pd.read_csv(DATA / "ckm" / "cellkey_magnitudes.csv", dtype={"cell_key": str})
    for name, cells in fixture.groupby("config", sort=False):
        first = cells.iloc[0]
        flex = FlexFunction(first["p_small"], first["p_large"], first["fp"], q=first["q"],
                            epsilon=tuple(float(e) for e in str(first["epsilon"]).split()))
        k = int(first["k"])
        tops = np.full((len(cells), k), np.nan)
        for row, text in enumerate(cells["contributions"]):
            values = [float(x) for x in text.split()][:k]
            tops[row, :len(values)] = values
        keys = np.array([int(key[2:]) for key in cells["cell_key"]])
        out = magnitude_noise(
            cells["value"].to_numpy(float), tops, keys,
            PARITY if first["parity"] else LARGE, flex, digits=8,
            small_ptable=SMALL if first["separation"] else None,
            counts=cells["contributors"].to_numpy(), parity=bool(first["parity"]),
            sensitive=cells["sensitive"].to_numpy(bool), mu_c=float(first["mu_c"]))
        expected = cells["published"].to_numpy(float)
        np.testing.assert_allclose(out.published, expected, rtol=1e-9, atol=1e-7, err_msg=name)
        assert (out.published != cells["value"].to_numpy(float)).mean() > 0.5, name


# -- against a plain reimplementation of tau-ARGUS's rule ---------------------------------------

def rotate(key: str) -> str:
    """tau-ARGUS's ShiftFirstDigit on the key's decimals as text."""
    return key[1:] + key[0]


def read_noise(ptable, type_, a, key: str):
    """tau-ARGUS's LookUpVinptable, written plainly with the key as a Decimal."""
    frame = ptable.frame[ptable.frame["type"] == type_]
    rows = sorted(set(frame["i"]))
    ck = Decimal("0." + key)

    def row_noise(i):
        part = frame[frame["i"] == i]
        for v, upper in zip(part["v"], part["p_int_ub"], strict=True):
            if ck < Decimal(repr(float(upper))):
                return float(v)
        raise AssertionError("no transition")

    if not np.isfinite(a):
        return 0.0
    if a >= rows[-1]:
        return row_noise(rows[-1])
    a1 = min(i for i in rows if i > a)
    a0 = max(i for i in rows if i <= a)
    share = (a - a0) / (a1 - a0)
    return (1 - share) * row_noise(a0) + share * (row_noise(a1) if abs(a0 - a) > 1e-8 else 0)


def reference_cell(value, tops, count, key, *, flex, large, small, parity, sensitive, mu_c):
    """One cell by tau-ARGUS 4.2's SetCellKeyValuesCont, a scalar at a time."""
    if count == 0:
        return 0.0
    zs = separation_point(small, flex)
    s1 = flex.small

    def m(z):
        return float(flex(np.array([z]), zs)[0])

    type_ = ("even" if count % 2 == 0 else "odd") if parity else "all"
    sign = lambda t: 1.0 if t >= 0 else -1.0  # noqa: E731
    x = value
    key = rotate(key)
    xj = tops[0]
    mu = mu_c if sensitive and abs(xj) >= zs else 0.0
    unit = xj * m(abs(xj)) if abs(xj) >= zs else 1.0
    if abs(x) < abs(unit):
        unit, xj = x, x / s1
        if abs(xj) < zs:
            unit = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        a = abs(np.float64(x) / unit)
    v = (read_noise(large, type_, a, key) if abs(xj) > zs
         else read_noise(small, "all", a, key) if small is not None else 0.0)
    change = sign(x) * abs(unit) * sign(v) * (mu + abs(v))
    x = x + (change if v >= 0 else min(change, -x) if x < 0 else max(change, -x))
    for j in range(1, min(flex.top_k, count)):
        xj = tops[j]
        if abs(xj) < zs:
            continue
        unit = xj * flex.epsilon[j] * m(abs(xj))
        if abs(x) < abs(unit):
            unit, xj = x, x / (flex.epsilon[j] * s1)
        if abs(xj) >= zs:
            key = rotate(key)
            x = x + sign(x) * abs(unit) * read_noise(large, type_, abs(x / unit), key)
    return x


def leaves_below(hierarchy, code):
    children = hierarchy.children(code)
    return {code} if not children else set().union(*(leaves_below(hierarchy, c)
                                                       for c in children))


def survey(n=300, seed=5):
    rng = np.random.default_rng(seed)
    size = rng.lognormal(4, 2, n).round(2)
    size[rng.random(n) < 0.1] = 0.0
    return pd.DataFrame({
        "region": rng.choice(["r1", "r2", "r3", "r4"], n, p=[0.55, 0.3, 0.1, 0.05]),
        "size": rng.choice(["s", "m", "l"], n, p=[0.8, 0.15, 0.05]),
        "turnover": size, "w": rng.integers(1, 5, n).astype(float),
        "key": [f"0.{k:08d}" for k in rng.integers(0, 10**8, n)]})


HIER = {"region": Hierarchy.from_parent_child(pd.DataFrame(
    {"parent": ["Total", "Total", "N", "N", "S", "S"],
     "child": ["N", "S", "r1", "r2", "r3", "r4"]}))}

SETTINGS = {
    "top3-separation-zeros-out": dict(
        flex=FlexFunction(0.3, 0.03, 500.0, q=3, epsilon=(1, 0.5, 0.2)), small_ptable=SMALL,
        include_zeros=False),
    "top1-parity-weighted": dict(flex=FlexFunction(0.2, 0.05, 100.0, q=2), parity=True,
                                 weight="w"),
    "top2-muc-rules": dict(flex=FlexFunction(0.15, epsilon=(1, 0.6)), rules=PPercentRule(25),
                           mu_c=1.5, small_ptable=SMALL),
    "mean": dict(flex=FlexFunction(0.3), base="mean"),
    "range": dict(flex=FlexFunction(0.3), base="range"),
    "value": dict(flex=FlexFunction(0.05), base="value"),
}


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_agrees_with_a_plain_reimplementation(setting):
    data = survey()
    options = dict(SETTINGS[setting])
    ptable = PARITY if options.get("parity") else LARGE
    result = perturb_magnitudes(data, ["region", "size"], "turnover", ptable,
                                record_key="key", hierarchies=HIER, **options)
    flex = options["flex"]
    base = options.get("base", "top")
    weight = data[options["weight"]] if "weight" in options else pd.Series(1.0, data.index)
    sensitive = result.sensitive
    if "rules" in options:  # the rules flag some cells, each flagged one is in the frame
        assert 0 < sensitive.sum() < len(sensitive)
    hier = result.original.hierarchies
    frame = result.to_frame()
    checked = 0
    for position, combo in enumerate(itertools.product(*(hier[d].codes for d in ("region",
                                                                                   "size")))):
        mask = np.ones(len(data), bool)
        for dim, code in zip(("region", "size"), combo, strict=True):
            mask &= data[dim].isin(leaves_below(hier[dim], code)).to_numpy()
        records = data[mask]
        x = records["turnover"].to_numpy()
        w = weight[mask].to_numpy()
        value = float((w * x).sum())
        row = frame.loc[combo]
        assert row["original"] == pytest.approx(value, rel=1e-12, abs=1e-9)
        keep = np.ones(len(records), bool) if options.get("include_zeros", True) \
            else np.abs(x) > 1e-8
        key_sum = sum((Decimal(k) for k in records["key"][keep]), Decimal(0)) % 1
        key = f"{key_sum:.8f}"[2:]
        order = sorted(range(len(x)), key=lambda r: (-abs(x[r]), -r))
        if base == "top":
            tops = [w[r] * x[r] for r in order]
        elif base == "mean":
            tops = [value / w.sum()] if len(x) else [0.0]
        elif base == "range":
            tops = [x.max() - x.min()] if len(x) else [0.0]
        else:
            tops = [value]
        expected = reference_cell(
            value, tops, len(x), key, flex=flex, large=ptable,
            small=options.get("small_ptable"), parity=options.get("parity", False),
            sensitive=bool(sensitive[position]), mu_c=options.get("mu_c", 0.0))
        assert row["published"] == pytest.approx(expected, rel=1e-12, abs=1e-9), combo
        checked += row["published"] != row["original"]
    assert checked >= 10


# -- promises ----------------------------------------------------------------------------------

def test_the_same_cell_gets_the_same_noise_in_every_table():
    data = survey(400, seed=9)
    flex = FlexFunction(0.2, 0.02, 200.0, epsilon=(1, 0.5))
    by_region = perturb_magnitudes(data, ["region"], "turnover", LARGE, flex,
                                   record_key="key", hierarchies=HIER).to_frame()
    by_both = perturb_magnitudes(data, ["region", "size"], "turnover", LARGE, flex,
                                 record_key="key", hierarchies=HIER).to_frame()
    for region in ["Total", "N", "S", "r1", "r4"]:
        # the same noise; the sums themselves may differ in the last bit (order of additions)
        assert by_region.loc[region, "published"] == pytest.approx(
            by_both.loc[(region, "Total"), "published"], rel=1e-14)
        assert by_region.loc[region, "v1"] == by_both.loc[(region, "Total"), "v1"]


def test_step_one_never_crosses_zero_and_zeros_stay_zero():
    rng = np.random.default_rng(4)
    n = 2000
    values = rng.normal(0, 50, n)
    values[:100] = 0.0
    tops = np.abs(values)[:, None] * rng.uniform(0.3, 1.0, (n, 1)) * np.sign(values)[:, None]
    keys = rng.integers(0, 10**8, n)
    out = magnitude_noise(values, tops, keys, LARGE, FlexFunction(0.9), small_ptable=SMALL,
                          sensitive=rng.random(n) < 0.5, mu_c=3.0)
    assert (out.published[:100] == 0).all()
    assert (np.sign(out.published[100:]) * np.sign(values[100:]) >= 0).all()
    floored = out.published == 0
    assert floored[100:].sum() > 0          # the floor at zero was met
    bound = np.abs(out.delta[:, 0]) * (5 + out.mu)
    assert (np.abs(out.published - values) <= bound + 1e-9).all()


def test_scrambling_moves_the_first_decimal_to_the_end():
    keys = np.array([0, 1, 10**7, 12345678, 99999999])
    assert scramble_keys(keys, 8).tolist() == [0, 10, 1, 23456781, 99999999]
    assert scramble_keys(np.array([123]), 3).tolist() == [231]
    # eight scrambles give the key back
    many = keys
    for _ in range(8):
        many = scramble_keys(many, 8)
    assert many.tolist() == keys.tolist()


def test_publishable_file_holds_only_published_values(tmp_path):
    """Leak test: the original sums of perturbed cells and the cell keys are not written."""
    data = survey()
    result = perturb_magnitudes(data, ["region", "size"], "turnover", LARGE,
                                FlexFunction(0.1, epsilon=(1, 0.5)), record_key="key",
                                hierarchies=HIER)
    path = write_publishable(result.table, tmp_path / "publish.csv")
    published = pd.read_csv(path, encoding="utf-8-sig", dtype={"value": float})
    assert list(published.columns) == ["region", "size", "value"]
    frame = result.to_frame()
    changed = (frame["published"] != frame["original"]).to_numpy()
    assert changed.sum() > 10
    text = path.read_text(encoding="utf-8-sig")
    for original in frame["original"][changed]:
        assert f"{original:.6g}" not in text.replace(",", " ").split() or original == 0
    order = result.table.hierarchy_order()  # the file lists codes in hierarchy order
    np.testing.assert_allclose(published["value"], frame["published"].to_numpy()[order],
                               rtol=1e-12)
    assert "freq" not in text and "x1" not in text


def test_bad_input_is_refused():
    data = survey(20)
    with pytest.raises(InputError, match="needs a magnitude p-table"):
        perturb_magnitudes(data, ["region"], "turnover", build_ptable(3, 1.0),
                           FlexFunction(0.1), record_key="key")
    with pytest.raises(InputError, match="unknown base 'median'"):
        perturb_magnitudes(data, ["region"], "turnover", LARGE, FlexFunction(0.1),
                           record_key="key", base="median")
    with pytest.raises(InputError, match="epsilon must start with 1"):
        FlexFunction(0.1, epsilon=(0.5, 1))
    with pytest.raises(InputError, match="flex point"):
        FlexFunction(0.3, 0.03)
    with pytest.raises(InputError, match="no transitions of type 'even'"):
        perturb_magnitudes(data, ["region"], "turnover", LARGE, FlexFunction(0.1),
                           record_key="key", parity=True)
    with pytest.raises(InputError, match="column 'turnover'"):
        perturb_magnitudes(data.assign(turnover="x"), ["region"], "turnover", LARGE,
                           FlexFunction(0.1), record_key="key")
