"""brMAE and brMSE: the note's Tables 1 and 2, the bounds of eqs. (1)-(3), ties, properties."""

from itertools import permutations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from microsdc._errors import DataError
from microsdc.utility import brmae, brmse, rank_distance_bound, ranks

# The note's Table 1 (n = 3): permutations r2 of r1* = (1, 2, 3) and their distances.
TABLE_1 = {
    (1, 2, 3): (0, 0), (1, 3, 2): (2, 2), (2, 1, 3): (2, 2),
    (3, 1, 2): (4, 6), (2, 3, 1): (4, 6), (3, 2, 1): (4, 8),
}
# Table 2 (n = 4): rows of r2 as printed, then the absolute and squared distances.
_ROWS = [
    "1 1 1 2 2 1 1 3 2 1 3 3 2 4 2 4 3 2 4 3 4 3 4 4",
    "2 2 3 1 1 4 3 1 3 4 2 1 4 1 3 1 2 4 2 4 3 4 2 3",
    "3 4 2 3 4 2 4 2 1 3 1 4 1 2 4 3 4 3 1 1 1 2 3 2",
    "4 3 4 4 3 3 2 4 4 2 4 2 3 3 1 2 1 1 3 2 2 1 1 1",
]
_ABSOLUTE = "0 2 2 2 4 4 4 4 4 4 4 6 6 6 6 6 6 6 6 8 8 8 6 8"
_SQUARED = "0 2 2 2 4 6 6 6 6 8 8 10 10 12 12 14 14 14 14 16 18 18 18 20"
TABLE_2 = {
    perm: (a, s) for perm, a, s in zip(
        zip(*(map(int, row.split()) for row in _ROWS), strict=True),
        map(int, _ABSOLUTE.split()), map(int, _SQUARED.split()), strict=True)
}


@pytest.mark.parametrize(("table", "n"), [(TABLE_1, 3), (TABLE_2, 4)])
def test_every_permutation_of_the_notes_tables(table, n):
    assert set(table) == set(permutations(range(1, n + 1)))  # every permutation, once
    original = np.arange(1.0, n + 1)[:, None]
    absolute_bound, squared_bound = rank_distance_bound(n), rank_distance_bound(n, squared=True)
    assert (absolute_bound, squared_bound) == max(table.values())
    for perm, (absolute, squared) in table.items():
        masked = np.array(perm, dtype=float)[:, None]
        assert brmae(original, masked) * absolute_bound == pytest.approx(absolute, abs=1e-12)
        assert brmse(original, masked) * squared_bound == pytest.approx(squared, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 10, 101])
def test_bounded_measures_are_exactly_one_at_the_reversal(n):
    x = np.arange(n, dtype=float)[:, None] * [1.0, -2.0]
    assert brmae(x, x[::-1]) == 1.0
    assert brmse(x, x[::-1]) == 1.0


@pytest.mark.parametrize("n", [5, 6, 7])
def test_bound_is_the_maximum_over_all_permutations(n):
    # the note's Figure 1: no permutation exceeds the bound; some reach it
    perms = np.array(list(permutations(range(1, n + 1))))
    diff = perms - np.arange(1, n + 1)
    assert np.abs(diff).sum(axis=1).max() == rank_distance_bound(n)
    assert (diff**2).sum(axis=1).max() == rank_distance_bound(n, squared=True)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 10, 57, 1000, 10**6 + 1])
def test_closed_form_bounds_equal_the_sums_of_eqs_1_to_3(n):
    k = np.arange(1, n // 2 + 1, dtype=object)  # exact integers; K = floor(n/2)
    assert rank_distance_bound(n) == 2 * sum(n - 2 * k + 1)
    assert rank_distance_bound(n, squared=True) == 2 * sum((n - 2 * k + 1) ** 2)


def test_ranks_first_is_record_order_for_ties():
    x = np.random.default_rng(0).integers(0, 4, size=(40, 3)).astype(float)
    expected = np.column_stack([stats.rankdata(x[:, j], method="ordinal") for j in range(3)])
    assert np.array_equal(ranks(x, ties="first"), expected)


def test_random_ties_are_reproducible_and_uniform():
    x = np.zeros((6, 1))
    assert np.array_equal(ranks(x, seed=3), ranks(x, seed=3))
    draws = np.stack([ranks(x, seed=s)[:, 0] for s in range(400)])
    assert all(sorted(row) == [1, 2, 3, 4, 5, 6] for row in draws.tolist())
    # each record takes each rank about equally often: mean rank near (n + 1)/2 = 3.5
    assert np.allclose(draws.mean(axis=0), 3.5, atol=0.35)
    assert len({tuple(row) for row in draws.tolist()}) > 100


def test_random_ties_keep_the_order_of_distinct_values():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, size=(200, 2)).astype(float)
    r = ranks(x, seed=2)
    for j in range(2):
        assert np.all(np.diff(x[np.argsort(r[:, j]), j]) >= 0)


def test_ties_change_brmae_only_through_tied_records():
    x = np.arange(8.0)[:, None]
    xm = np.array([0.0, 0.0, 2, 3, 4, 5, 6, 7])[:, None]  # records 0 and 1 tied
    values = {brmae(x, xm, seed=s) for s in range(20)}
    assert values == {0.0, 2 / rank_distance_bound(8)}
    assert brmae(x, xm, ties="first") == 0.0


def test_errors():
    with pytest.raises(DataError, match="ties"):
        brmae(np.ones((3, 1)), np.ones((3, 1)), ties="average")
    with pytest.raises(DataError, match="2 records"):
        brmse(np.ones((1, 1)), np.ones((1, 1)))


values = arrays(np.float64, st.tuples(st.integers(2, 25), st.integers(1, 4)),
                elements=st.one_of(st.floats(-1e9, 1e9), st.integers(-3, 3).map(float)))


@given(values, st.integers(0, 2**32 - 1), st.sampled_from(["random", "first"]))
def test_bounded_in_unit_interval_and_zero_for_identical_data(x, seed, ties):
    xm = np.random.default_rng(seed).permutation(x)
    for measure in (brmae, brmse):
        assert 0.0 <= measure(x, xm, ties=ties, seed=seed) <= 1.0
    # identical data: 0, also with tied values (one random record order serves both)
    assert brmae(x, x, ties=ties, seed=seed) == brmse(x, x, ties=ties, seed=seed) == 0.0


def test_brmae_increases_on_average_with_noise():
    rng = np.random.default_rng(5)
    x = rng.lognormal(size=(300, 3))
    levels = [0.01, 0.1, 0.5, 2.0, 10.0]
    means = [np.mean([brmae(x, x + level * x.std(axis=0) * rng.normal(size=x.shape), seed=s)
                      for s in range(10)]) for level in levels]
    assert all(a < b for a, b in zip(means, means[1:], strict=False))
    assert means[-1] < 1.0
