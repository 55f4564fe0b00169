"""Masking methods: sdcMicro's published MDAV outputs, an independent literal transcription of
sdcMicro's MDAV steps (bucket sort included) on tie-heavy data, and properties."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microsdc._datasets import load_tarragona
from microsdc._errors import DataError, MicroSDCError
from microsdc.masking import additive_noise, correlated_noise, mdav, mdav_groups, rank_swap


# -- MDAV: sdcMicro's published outputs --------------------------------------------------------
def test_mdav_reproduces_sdcmicro_testdata_example(testdata_100):
    # sdcMicro: microaggregation(testdata[1:100, c('expend','income','savings')],
    #                            method='mdav', aggr=4); summary(m2) quantiles of mx.
    masked = mdav(testdata_100, k=4)
    quantiles = masked.quantile([0, 0.25, 0.5, 0.75, 1.0]).round().astype("int64")
    assert quantiles["expend"].tolist() == [14471827, 22752145, 42916487, 71888065, 91918606]
    assert quantiles["income"].tolist() == [4482460, 24675000, 46850000, 65000000, 93725000]
    assert quantiles["savings"].tolist() == [872137, 2353262, 5116959, 7020042, 9407783]


def test_mdav_reproduces_sdcmicro_microdata_utility(micro_data):
    # sdcMicro's dUtility of microaggregation(microData, method='mdav', aggr=3):
    # IL1s (as a sum over cells of |x - xm| / (sqrt(2) sd)) 22.84007, eigen 3.11481.
    x = micro_data.to_numpy(float)
    xm = mdav(micro_data, k=3).to_numpy()
    il1s_sum = (np.abs(x - xm) / (np.sqrt(2) * x.std(axis=0, ddof=1))).sum()
    assert il1s_sum == pytest.approx(22.84007, abs=5e-6)

    def eigen(a):
        scaled = (a - a.mean(axis=0)) / a.std(axis=0, ddof=1)
        return np.sort(np.linalg.eigvalsh(np.cov(scaled, rowvar=False)))[::-1]

    assert (np.abs(eigen(x) - eigen(xm)) / eigen(x)).sum() == pytest.approx(3.11481, abs=5e-6)


# -- MDAV: agreement with a literal, record-by-record transcription ---------------------------
def literal_mdav(x, k):
    """sdcMicro's MDAV as its C++ reads: linked list of live records, float distances, the
    65,536-bucket hash sort of distances, sums in list order. Slow; for small n only."""
    n, p = x.shape
    buckets = 1 << 16
    mean = [0.0] * p
    square = [0.0] * p
    for i in range(n):
        for j in range(p):
            mean[j] += x[i, j]
            square[j] += x[i, j] * x[i, j]
    weights = []
    for j in range(p):
        average_j = mean[j] / n
        variance = square[j] / n - average_j * average_j
        weights.append(1.0 / variance if variance else 1.0)

    def dist(a, b):
        total = np.float32(0.0)
        for j in range(p):
            diff = a[j] - b[j]
            total = np.float32(total + np.float32(diff * diff * weights[j]))
        return total

    def average(rows):
        total = [0.0] * p
        for i in rows:
            for j in range(p):
                total[j] += x[i, j]
        return [t / len(rows) for t in total]

    out = np.empty_like(x)
    live = list(range(n))
    while len(live) >= 2 * k:
        groups = 1 if len(live) - 2 * k < k else 2
        centre = average(live)
        far = live[0]
        d = {i: dist(x[i], centre) for i in live}
        for i in live:
            if d[i] > d[far]:
                far = i
        point = x[far]
        for _ in range(groups):
            d = {i: dist(x[i], point) for i in live}
            farthest = closest = live[0]
            for i in live:
                if d[i] > d[farthest]:
                    farthest = i
                elif d[i] < d[closest]:
                    closest = i
            low = d[closest]
            delta = np.float32(d[farthest] - low)
            if not delta:
                delta = np.float32(delta + 1)
            delta = np.float32(float(delta) * ((buckets + 1.0) / buckets))
            table = {}
            for i in live:
                h = int(np.float32(np.float32(buckets) * np.float32(d[i] - low)) / delta)
                chain = table.setdefault(h, [])
                at = 0
                if chain and d[chain[0]] < d[i]:
                    while at + 1 < len(chain) and d[chain[at + 1]] < d[i]:
                        at += 1
                    at += 1
                chain.insert(at, i)
            chosen = [i for h in sorted(table) for i in table[h]][:k]
            out[chosen] = average(chosen)
            live = [i for i in live if i not in chosen]
            point = x[farthest]
    if live:
        out[live] = average(live)
    return out


@given(st.integers(6, 40), st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_mdav_matches_literal_transcription_on_tied_integer_data(n, p, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(n, p)).astype(float)  # many duplicates and equal distances
    np.testing.assert_array_equal(mdav(x, k=k), literal_mdav(x, k))


@pytest.mark.parametrize("k", [3, 4])
def test_mdav_matches_literal_transcription_on_tarragona(k):
    x = load_tarragona().to_numpy(float)[:150, 4:8]
    np.testing.assert_array_equal(mdav(x, k=k), literal_mdav(x, k))


def simple_mdav(x, k):
    """The same steps with whole-array numpy and no shortcuts: left-to-right means, a full
    sort by (distance, -record) for every group. Independent of the fast path's sampling,
    bounds and storage; quick enough for a few thousand records."""
    p = x.shape[1]
    n = len(x)
    variance = np.cumsum(x * x, axis=0)[-1] / n - (np.cumsum(x, axis=0)[-1] / n) ** 2
    weights = np.where(variance != 0, 1 / np.where(variance != 0, variance, 1), 1)

    def dist(rows, point):
        terms = (np.square(x[rows] - point) * weights).astype(np.float32)
        total = terms[:, 0].copy()
        for j in range(1, p):
            total += terms[:, j]
        return total

    out = np.empty_like(x)
    live = np.arange(n)
    while live.size >= 2 * k:
        groups = 2 if live.size >= 3 * k else 1
        point = x[live[np.argmax(dist(live, np.cumsum(x[live], axis=0)[-1] / live.size))]]
        for _ in range(groups):
            d = dist(live, point)
            farthest = x[live[np.argmax(d)]]
            chosen = live[np.lexsort((-live, d))[:k]]
            out[chosen] = np.cumsum(x[chosen], axis=0)[-1] / k
            live = np.setdiff1d(live, chosen)
            point = farthest
    out[live] = np.cumsum(x[live], axis=0)[-1] / live.size
    return out


@pytest.mark.parametrize("kind, k", [("lognormal", 3), ("integers", 4), ("lognormal", 7)])
def test_mdav_matches_simple_version_on_thousands_of_records(kind, k):
    rng = np.random.default_rng(k)
    x = (np.exp(rng.standard_normal((2500, 4))) if kind == "lognormal"
         else rng.integers(0, 6, size=(2500, 3)).astype(float))
    np.testing.assert_array_equal(mdav(x, k=k), simple_mdav(x, k))


def test_mdav_fast_centre_falls_back_on_near_ties():
    # Two distinct records at exactly the same distance from the centre: the fast (pairwise)
    # mean must hand over to the left-to-right one; the result still matches the literal one.
    x = np.array([[-1.0, 0], [1, 0], [0, 1], [0, -1], [0.5, 0], [-0.5, 0], [0, 0.5]] * 3)
    np.testing.assert_array_equal(mdav(x, k=3), literal_mdav(x, 3))


# -- MDAV: properties -------------------------------------------------------------------------
@given(st.integers(1, 120), st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_mdav_groups_sizes_and_means(n, p, k, seed):
    x = np.exp(np.random.default_rng(seed).standard_normal((n, p)))
    if n < k:
        with pytest.raises(DataError, match=f"at least {k} records"):
            mdav(x, k=k)
        return
    labels = mdav_groups(x, k=k)
    masked = mdav(x, k=k)
    sizes = np.bincount(labels)
    assert sizes.sum() == n
    if n >= 2 * k:
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    else:
        assert sizes.tolist() == [n]
    for g in range(sizes.size):
        members = labels == g
        np.testing.assert_allclose(masked[members], np.tile(x[members].mean(axis=0),
                                                            (members.sum(), 1)), rtol=1e-12)
    np.testing.assert_allclose(masked.mean(axis=0), x.mean(axis=0), rtol=1e-12)


def test_mdav_keeps_frame_and_leaves_input_alone(micro_data):
    frame = micro_data.set_axis([f"r{i}" for i in range(len(micro_data))])
    before = frame.copy()
    masked = mdav(frame, k=3)
    assert isinstance(masked, pd.DataFrame)
    assert masked.columns.tolist() == frame.columns.tolist()
    assert masked.index.tolist() == frame.index.tolist()
    pd.testing.assert_frame_equal(frame, before)


def test_mdav_k1_and_n_below_2k():
    x = np.array([[1.0, 2], [3, 5], [4, 4]])
    np.testing.assert_array_equal(mdav(x, k=1), x)
    np.testing.assert_array_equal(mdav(x, k=2), np.tile(x.mean(axis=0), (3, 1)))


# -- validation (shared by every method) ------------------------------------------------------
@pytest.mark.parametrize("method", [
    lambda x: mdav(x, 2), lambda x: additive_noise(x, seed=1),
    lambda x: correlated_noise(x, seed=1), lambda x: rank_swap(x, seed=1)])
def test_errors_name_the_column(method):
    frame = pd.DataFrame({"age": [30.0, 40, 50, 60], "town": ["a", "b", "c", "d"]})
    with pytest.raises(DataError, match="column 'town' is not numeric"):
        method(frame)
    frame = pd.DataFrame({"age": [30.0, 40, np.nan, 60], "pay": [1.0, 2, 3, 4]})
    with pytest.raises(MicroSDCError, match="column 'age' has a missing .* record 2"):
        method(frame)


@pytest.mark.parametrize("call, message", [
    (lambda x: mdav(x, k=0), "k must be a whole number >= 1"),
    (lambda x: mdav(x, k=2.5), "k must be a whole number"),
    (lambda x: additive_noise(x, -1), "noise must be a number >= 0"),
    (lambda x: additive_noise(x, method="gauss"), "unknown method .gauss.; choose one of"),
    (lambda x: rank_swap(x, p=120), r"p must be a number in \[0, 100\]"),
    (lambda x: additive_noise(x[:1]), "at least 2 records"),
])
def test_parameter_errors(call, message):
    with pytest.raises(DataError, match=message):
        call(np.ones((4, 2)))


# -- noise ------------------------------------------------------------------------------------
def test_additive_noise_scales():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40000, 2)) * [1.0, 10.0]
    sd = x.std(axis=0, ddof=1)
    sdc = additive_noise(x, 150, seed=1) - x
    np.testing.assert_allclose(sdc.std(axis=0), 1.5 * sd, rtol=0.02)
    variance = additive_noise(x, 150, method="variance", seed=1) - x
    np.testing.assert_allclose(variance.std(axis=0), np.sqrt(1.5) * sd, rtol=0.02)
    assert abs(np.corrcoef(sdc.T)[0, 1]) < 0.03


def test_correlated_noise_covariance_is_a_multiple_of_the_data():
    rng = np.random.default_rng(2)
    cov = np.array([[4.0, 1.8, 0.0], [1.8, 1.0, -0.3], [0.0, -0.3, 2.0]])
    x = rng.multivariate_normal([1, 2, 3], cov, size=60000)
    noise = correlated_noise(x, 50, seed=3) - x
    np.testing.assert_allclose(np.cov(noise, rowvar=False), 0.5 * np.cov(x, rowvar=False),
                               atol=0.04)


def test_correlated_noise_handles_collinear_columns():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5000, 2))
    x = np.column_stack([a, a.sum(axis=1)])  # singular covariance
    noise = correlated_noise(x, 100, seed=1) - x
    np.testing.assert_allclose(noise[:, 2], noise[:, 0] + noise[:, 1], atol=1e-9)


@pytest.mark.parametrize("method", [additive_noise, correlated_noise])
def test_noise_is_reproducible_and_keeps_the_frame(method):
    frame = pd.DataFrame({"a": [1.0, 5, 2, 8, 3], "b": [10.0, 12, 9, 30, 11]},
                         index=list("vwxyz"))
    first, second = method(frame, seed=7), method(frame, seed=7)
    pd.testing.assert_frame_equal(first, second)
    assert not np.allclose(first, method(frame, seed=8))
    assert first.index.tolist() == list("vwxyz") and first.columns.tolist() == ["a", "b"]
    generator = np.random.default_rng(3)
    assert not np.allclose(method(frame, seed=generator), method(frame, seed=generator))


# -- rank swapping ----------------------------------------------------------------------------
@given(st.integers(1, 300), st.integers(1, 3), st.floats(0, 100), st.integers(0, 2**32 - 1))
def test_rank_swap_properties(n, q, p, seed):
    x = np.random.default_rng(seed).standard_normal((n, q))  # distinct values
    z = rank_swap(x, p=p, seed=seed)
    window = int(np.floor(p * n / 100))
    for j in range(q):
        ranked = np.sort(x[:, j])
        np.testing.assert_array_equal(np.sort(z[:, j]), ranked)  # same multiset
        rank_of = np.empty(n, dtype=int)
        rank_of[np.argsort(x[:, j])] = np.arange(n)
        partner = np.empty(n, dtype=int)
        partner[rank_of] = np.searchsorted(ranked, z[:, j])
        assert np.abs(partner - np.arange(n)).max(initial=0) <= window
        np.testing.assert_array_equal(partner[partner], np.arange(n))  # pairs, not cycles
        unswapped = np.flatnonzero(partner == np.arange(n))
        assert np.all(np.diff(unswapped) > window)  # no two free records left in a window


def test_rank_swap_reproducible_and_equal_values():
    x = pd.DataFrame({"v": [3.0, 1, 3, 2, 3, 1, 2, 2, 3, 1] * 10, "w": np.arange(100.0)})
    z = rank_swap(x, 10, seed=11)
    pd.testing.assert_frame_equal(z, rank_swap(x, 10, seed=11))
    assert sorted(z["v"]) == sorted(x["v"])
    assert (z["w"] != x["w"]).mean() > 0.9
    np.testing.assert_array_equal(rank_swap(x, 0, seed=1), x)
