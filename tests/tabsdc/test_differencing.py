"""Disclosure by differencing for counts: the pairs against an independent enumeration of
every pair of cells by their sets of records, the rule's protection levels, the check on a
suppressed release with its own linear programs, and linked tables."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from tabsdc import Hierarchy, Table, TableSet
from tabsdc._differencing import KDisclosureRule, difference_pairs, differencing_check
from tabsdc._errors import InputError, RuleError
from tabsdc._rules import FrequencyRule, apply_rules

REGION = Hierarchy.from_parent_child(pd.DataFrame(
    {"parent": ["Total", "Total", "N", "N", "S"], "child": ["N", "S", "r1", "r2", "r3"]}))


def leaves_below(hierarchy, code):
    children = hierarchy.children(code)
    return {code} if not children else set().union(*(leaves_below(hierarchy, c)
                                                       for c in children))


def records(seed, n=40):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"region": rng.choice(["r1", "r2", "r3"], n, p=[0.7, 0.2, 0.1]),
                         "sex": rng.choice(["m", "f"], n, p=[0.8, 0.2]),
                         "age": rng.choice(["a", "b"], n, p=[0.9, 0.1])})


def enumerate_pairs(data, table, k):
    """Every (child, parent) of cells whose leaf sets nest strictly, with counts from masks
    over the records, kept when the child is non-empty and the difference at most k."""
    hier = table.hierarchies
    labels = list(table.cells.index)
    leaves = {lab: [leaves_below(hier[d], c) for d, c in zip(table.dims, lab, strict=True)]
              for lab in labels}
    count = {}
    for lab in labels:
        mask = np.ones(len(data), bool)
        for d, s in zip(table.dims, leaves[lab], strict=True):
            mask &= data[d].isin(s).to_numpy()
        count[lab] = int(mask.sum())
    found = set()
    for c, p in itertools.permutations(labels, 2):
        inside = all(a <= b for a, b in zip(leaves[c], leaves[p], strict=True))
        strict = any(a < b for a, b in zip(leaves[c], leaves[p], strict=True))
        if inside and strict and count[c] > 0 and count[p] - count[c] <= k:
            found.add((c, p, count[p] - count[c]))
    return found


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [0, 1, 2])
def test_pairs_agree_with_an_enumeration_of_every_pair(seed, k):
    data = records(seed, 15 + 10 * seed)
    table = Table.from_microdata(data, ["region", "sex", "age"], hierarchies={"region": REGION})
    pairs = difference_pairs(table, k)
    got = set(zip(pairs["child"], pairs["parent"], pairs["difference"].astype(int),
                  strict=True))
    assert got == enumerate_pairs(data, table, k)
    assert len(got) > 0


def test_the_rule_protects_each_child_with_k_plus_one_minus_the_difference():
    data = records(3, 30)
    table = Table.from_microdata(data, ["region", "sex"], hierarchies={"region": REGION})
    k = 2
    result = apply_rules(table, [KDisclosureRule(k), FrequencyRule(2)])
    cells = result.table.cells
    expected = {}
    for c, _, d in enumerate_pairs(data, table, k):
        expected[c] = max(expected.get(c, 0), k + 1 - d)
    flagged = result.flags["k-disclosure(k=2)"]
    assert set(flagged.index[flagged]) == set(expected)
    for label, level in expected.items():
        assert cells.loc[label, "status"] == "u"
        assert cells.loc[label, "upl"] >= level   # the frequency rule may ask more


def attacker_intervals(table, hidden):
    """Each hidden cell's range given the published cells and the relations (own LPs)."""
    A = table.A.toarray()
    values = table.values
    n = len(values)
    bounds = [(v, v) if not h else (0, None) for v, h in zip(values, hidden, strict=True)]
    out = {}
    for i in np.flatnonzero(hidden):
        c = np.zeros(n)
        c[i] = 1
        lo = linprog(c, A_eq=A, b_eq=np.zeros(len(A)), bounds=bounds, method="highs").fun
        hi = -linprog(-c, A_eq=A, b_eq=np.zeros(len(A)), bounds=bounds, method="highs").fun
        out[i] = (lo, hi)
    return out


def test_the_check_reads_hidden_cells_through_the_interval_attack():
    data = pd.DataFrame({"region": ["r1"] * 6 + ["r2"] * 5 + ["r3"] * 4,
                         "sex": list("mmmmmf") + list("mmmff") + list("mfff")})
    table = Table.from_microdata(data, ["region", "sex"], hierarchies={"region": REGION})
    counts = table.with_columns(value=table.cells["freq"].to_numpy(float))
    plain = differencing_check(counts, 1)
    assert not plain.passed
    # hide (r1, m) and the three cells that make its interval wide
    status = counts.cells["status"].to_numpy().copy()
    labels = counts.cells.index
    for key in [("r1", "m"), ("r1", "f"), ("r2", "m"), ("r2", "f")]:
        status[labels.get_loc(key)] = "m"
    hidden_table = counts.with_columns(status=status)
    check = differencing_check(hidden_table, 1)
    hidden = np.isin(status, ["m"])
    intervals = attacker_intervals(hidden_table, hidden)
    lower, upper = counts.values.copy(), counts.values.copy()
    for i, (lo, hi) in intervals.items():
        lower[i], upper[i] = lo, hi
    expected = difference_pairs(counts, 1, lower=lower, upper=upper)
    assert check.pairs[["child", "parent"]].equals(expected[["child", "parent"]])
    hidden_children = {labels[i] for i in np.flatnonzero(hidden)}
    assert not hidden_children & set(check.pairs["child"])
    assert len(check.pairs) < len(plain.pairs)


def test_linked_tables_are_checked_as_one_release():
    data = records(5, 60)
    linked = TableSet.from_microdata(data, [["region", "sex"], ["region", "age"]],
                                     hierarchies={"region": REGION})
    check = differencing_check(linked, 1)
    one = differencing_check(linked.combined, 1)
    assert check.pairs.equals(one.pairs)
    union = set()
    for member, dims in zip(linked.tables, [["region", "sex"], ["region", "age"]],
                            strict=True):
        for c, p, d in enumerate_pairs(data, member, 1):
            full = lambda lab, dims=dims: tuple(  # noqa: E731
                dict(zip(dims, lab, strict=True)).get(x, "Total")
                for x in linked.combined.dims)
            union.add((full(c), full(p), d))
    got = set(zip(check.pairs["child"], check.pairs["parent"],
                  check.pairs["difference"].astype(int), strict=True))
    assert got == union
    ruled = apply_rules(linked, KDisclosureRule(1))
    assert ruled.table.combined.cells["status"].eq("u").sum() == check.pairs["child"].nunique()


def test_bad_input_is_refused():
    with pytest.raises(RuleError, match="whole k >= 0"):
        KDisclosureRule(-1)
    table = Table.from_microdata(records(1), ["region"], hierarchies={"region": REGION})
    with pytest.raises(InputError, match="k must be a whole number"):
        difference_pairs(table, 1.5)
    with pytest.raises(RuleError, match="reads the table's hierarchies"):
        KDisclosureRule(1).evaluate(table.cells)
