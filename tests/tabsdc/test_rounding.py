"""Rounding: the four rules, controlled and unbiased controlled rounding, the slides' quality
and disclosure statistics, the base chooser and the audit of rounded releases."""

import doctest
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tabsdc.rounding as rounding
from sdcreport import Report
from tabsdc import Hierarchy, InputError, Table
from tabsdc.rounding import (
    RULES,
    apply_rule,
    audit_rounding,
    chi_square_bound,
    choose_base,
    conditional_chi_square,
    controlled_rounding,
    decompose,
    expected_chi_square,
    posterior_table,
    release_box,
    round_table,
    rule_statistics,
    table_network,
    unbiased_controlled_rounding,
    up_probability,
)
from tabsdc.rounding._network import unbiased_flow

# -- tables -----------------------------------------------------------------------------------


def grid(values, base_names=("r", "c")) -> Table:
    values = np.asarray(values, dtype=float)
    frame = pd.DataFrame([(f"r{i}", f"c{j}", v) for (i, j), v in np.ndenumerate(values)],
                         columns=[*base_names, "value"])
    return Table.from_aggregated(frame, list(base_names))


def random_tree(groups: list[int], deep: bool) -> tuple[Hierarchy, list[str]]:
    """Total -> g0, g1, ... -> leaves; with ``deep`` the first group has an extra level."""
    parents, leaves = {}, []
    for g, size in enumerate(groups):
        parents[f"g{g}"] = "Total"
        for k in range(size):
            if deep and g == 0:
                parents[f"h{k}"] = "g0"
                for j in range(2):
                    parents[f"l{g}{k}{j}"] = f"h{k}"
                    leaves.append(f"l{g}{k}{j}")
            else:
                parents[f"l{g}{k}"] = f"g{g}"
                leaves.append(f"l{g}{k}")
    return Hierarchy.from_parent_child(parents), leaves


def hierarchical(values: np.ndarray, tree: Hierarchy, leaves: list[str],
                 columns: bool = False) -> Table:
    """Rows ``leaves`` under ``tree`` x flat columns; with ``columns`` the hierarchical
    dimension comes second."""
    frame = pd.DataFrame([(leaves[i], f"c{j}", v) for (i, j), v in np.ndenumerate(values)],
                         columns=["r", "c", "value"])
    dims = ["c", "r"] if columns else ["r", "c"]
    return Table.from_aggregated(frame, dims, hierarchies={"r": tree})


def cube(values: np.ndarray) -> Table:
    frame = pd.DataFrame([(f"a{i}", f"b{j}", f"c{k}", v)
                          for (i, j, k), v in np.ndenumerate(values)],
                         columns=["a", "b", "c", "value"])
    return Table.from_aggregated(frame, ["a", "b", "c"])


small_values = st.integers(0, 40)
bases = st.integers(2, 10)


@st.composite
def grids(draw, max_side=5):
    rows, cols = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    values = draw(st.lists(small_values, min_size=rows * cols, max_size=rows * cols))
    return grid(np.reshape(values, (rows, cols)))


@st.composite
def hierarchical_tables(draw):
    groups = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    tree, leaves = random_tree(groups, draw(st.booleans()))
    cols = draw(st.integers(1, 4))
    values = draw(st.lists(small_values, min_size=len(leaves) * cols,
                           max_size=len(leaves) * cols))
    return hierarchical(np.reshape(values, (len(leaves), cols)), tree, leaves,
                        draw(st.booleans()))


@st.composite
def lines(draw):
    """One-dimensional hierarchical tables."""
    groups = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    tree, leaves = random_tree(groups, draw(st.booleans()))
    values = draw(st.lists(small_values, min_size=len(leaves), max_size=len(leaves)))
    frame = pd.DataFrame({"r": leaves, "value": np.array(values, dtype=float)})
    return Table.from_aggregated(frame, ["r"], hierarchies={"r": tree})


@st.composite
def cubes(draw):
    shape = tuple(draw(st.integers(1, 3)) for _ in range(3))
    size = int(np.prod(shape))
    values = draw(st.lists(small_values, min_size=size, max_size=size))
    return cube(np.reshape(values, shape))


def assert_controlled(table: Table, rounded: np.ndarray, base: int) -> None:
    """Every relation holds, every cell adjacent, multiples of the base unchanged."""
    x = table.values
    np.testing.assert_array_equal(table.A @ rounded, table.b)
    table.check_additivity(values=rounded)
    np.testing.assert_array_equal(np.mod(rounded, base), 0)
    assert np.all(np.abs(rounded - x) < base)
    multiples = np.mod(x, base) == 0
    np.testing.assert_array_equal(rounded[multiples], x[multiples])


# -- the rules --------------------------------------------------------------------------------


@pytest.mark.parametrize("base", range(2, 13))
def test_conventional_rule_exhaustively(base):
    q = np.repeat(np.arange(-2, 4), base)
    r = np.tile(np.arange(base), 6)
    x = (q * base + r).astype(float)
    threshold = base / 2 if base % 2 == 0 else (base + 1) / 2   # the statement
    expected = np.where(r >= threshold, (q + 1) * base, q * base)
    np.testing.assert_array_equal(apply_rule(x, base, "conventional"), expected)


@pytest.mark.parametrize("base", range(2, 13))
def test_exact_up_probabilities_of_every_rule(base):
    r = np.arange(base, dtype=float)
    half = r == base / 2
    conventional = (r >= base / 2).astype(float)
    expected = {
        "conventional": conventional,
        "modified": np.where(half, 0.5, conventional),
        "fifty-fifty": np.where(r == 0, 0.0, 0.5),
        "unbiased": r / base,
    }
    for rule, p in expected.items():
        np.testing.assert_allclose(up_probability(r, base, rule), p, err_msg=rule)


@pytest.mark.parametrize("rule", ["modified", "fifty-fifty", "unbiased"])
@pytest.mark.parametrize("base", [2, 5, 10])
def test_random_rules_large_sample(rule, base):
    """Seeded frequencies of rounding up match the exact probabilities within 5 sigma."""
    n = 20_000
    r = np.arange(base, dtype=float)
    x = np.repeat(7 * base + r, n)
    up = (apply_rule(x, base, rule, seed=11) > 7 * base).reshape(base, n).mean(axis=1)
    p = up_probability(r, base, rule)
    sigma = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(up - p) <= 5 * sigma + 1e-12)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30), bases,
       st.sampled_from(RULES), st.integers(0, 2**31))
def test_rules_are_adjacent_and_zero_restricted(values, base, rule, seed):
    x = np.array(values)
    rounded = apply_rule(x, base, rule, seed=seed)
    q, r = decompose(x, base)
    assert np.all((rounded == base * q) | (rounded == base * (q + 1)))
    assert np.all(np.abs(rounded - x) < base * (1 + 1e-9))
    np.testing.assert_array_equal(rounded[r == 0], base * q[r == 0])
    np.testing.assert_array_equal(rounded, apply_rule(x, base, rule, seed=seed))


def test_decompose_snaps_float_noise_and_negative_values():
    q, r = decompose(np.array([0.1 * 3 * 10, -3.0, 2.9999999999999996]), 3)
    assert q.tolist() == [1.0, -1.0, 1.0] and r.tolist() == [0.0, 0.0, 0.0]
    q, r = decompose(np.array([-4.0]), 3)
    assert (q[0], r[0]) == (-2.0, 2.0)


@pytest.mark.parametrize("bad", [1, 0, -5, 2.5, True, "3", None])
def test_bad_base_is_rejected(bad):
    with pytest.raises(InputError, match="base"):
        apply_rule(np.array([1.0]), bad, "conventional")


def test_unknown_rule_and_non_finite_values():
    with pytest.raises(InputError, match="unknown rule .banker.; choose one of conventional"):
        apply_rule(np.array([1.0]), 3, "banker")
    with pytest.raises(InputError, match="position 1"):
        apply_rule(np.array([1.0, np.nan]), 3, "unbiased")


# -- quality statistics -----------------------------------------------------------------------


@pytest.mark.parametrize("base", range(2, 21))
def test_slides_formulas_for_fifty_fifty(base):
    row = rule_statistics(base, ("fifty-fifty",)).iloc[0]
    assert row["P[R(r)=B]"] == pytest.approx((base - 1) / (2 * base))       # slide 8
    assert row["E[R(r)]"] == pytest.approx((base - 1) / 2)
    assert row["E[r]"] == pytest.approx((base - 1) / 2)
    assert row["V[R(r)]"] == pytest.approx((base**2 - 1) / 4)
    assert row["V[r]"] == pytest.approx((base**2 - 1) / 12)
    assert row["MSE increase"] == pytest.approx((base - 1) * (2 * base - 1) / 6)   # slide 9
    harmonic = sum(1 / s for s in range(1, base))
    assert row["E[(R(r)-r)^2/r]"] == pytest.approx(base / 2 * harmonic - (base - 1) / 2)
    assert row["P[x=0|R(x)=0]"] == pytest.approx(2 / (base + 1))             # slide 10


@pytest.mark.parametrize("base", [2, 3, 4, 7, 10])
def test_rule_statistics_agree_with_enumeration(base):
    """Mean, variance and MSE of R(r) by listing every (r, outcome) with its probability."""
    r = np.arange(base)
    for rule in RULES:
        p = up_probability(r.astype(float), base, rule)
        outcomes = np.concatenate([np.zeros(base), np.full(base, base)])
        weights = np.concatenate([1 - p, p]) / base
        residues = np.concatenate([r, r])
        mean = weights @ outcomes
        row = rule_statistics(base, (rule,)).iloc[0]
        assert row["E[R(r)]"] == pytest.approx(mean)
        assert row["V[R(r)]"] == pytest.approx(weights @ (outcomes - mean) ** 2)
        assert row["V[r]"] == pytest.approx(np.var(r))
        assert row["MSE increase"] == pytest.approx(weights @ (outcomes - residues) ** 2)
        assert row["bias"] == pytest.approx(mean - r.mean())
    unbiased = rule_statistics(base, ("unbiased",)).iloc[0]
    assert unbiased["bias"] == pytest.approx(0.0)


@pytest.mark.parametrize("base", [2, 3, 5, 10])
def test_posterior_probabilities_of_fifty_fifty(base):
    table = posterior_table(base, ("fifty-fifty",))
    zero = table[table["rounded"] == "0"]["probability"].to_numpy()
    assert zero[0] == pytest.approx(2 / (base + 1))
    np.testing.assert_allclose(zero[1:], 1 / (base + 1))


@pytest.mark.parametrize("base", [2, 3, 4, 5])
def test_posterior_table_agrees_with_bayes_by_enumeration(base):
    """Uniform prior on x = 0..K B - 1; P[x | R(x) = R] = P[R | x] / sum_x' P[R | x']."""
    x = np.arange(6 * base, dtype=float)
    table = posterior_table([base], RULES)
    for rule in RULES:
        q, r = decompose(x, base)
        p = up_probability(r, base, rule)
        for rounded, label in ((0, "0"), (3 * base, "mB > 0")):
            likelihood = np.where(base * (q + 1) == rounded, p, 0.0) + np.where(
                base * q == rounded, 1 - p, 0.0)
            keep = likelihood > 0
            posterior = likelihood[keep] / likelihood.sum()
            part = table[(table["rule"] == rule) & (table["rounded"] == label)]
            part = part[part["probability"] > 0]
            np.testing.assert_allclose(part["offset"], x[keep] - rounded)
            np.testing.assert_allclose(part["probability"], posterior, err_msg=rule)


def test_expected_chi_square_matches_seeded_simulation():
    x = np.array([0.0, 1.0, 2.0, 4.0, 6.0, 13.0, 25.0, 31.0])
    for rule in ("fifty-fifty", "unbiased", "modified"):
        draws = np.array([conditional_chi_square(x, apply_rule(x, 4, rule, seed=seed))
                          for seed in range(3000)])
        se = draws.std(ddof=1) / np.sqrt(len(draws))
        assert abs(draws.mean() - expected_chi_square(x, 4, rule)) < 5 * se + 1e-9


@pytest.mark.parametrize("base", [2, 3, 5, 10])
def test_slides_bound_is_attained_on_small_cells_and_bounds_large_ones(base):
    """One cell per residue 0..B-1: the x < B part of the bound is E[U] exactly; adding
    cells qB + r (q >= 1) keeps E[U] below the bound (the x >= B part is an upper bound)."""
    small = np.arange(base, dtype=float)
    bound, parts = chi_square_bound(small, base, "fifty-fifty")
    assert parts["e"] == base and parts["d"] == base
    assert bound == pytest.approx(expected_chi_square(small, base, "fifty-fifty"))
    for q in (1, 3):
        cells = np.concatenate([small, q * base + small])
        bound, parts = chi_square_bound(cells, base, "fifty-fifty")
        assert parts["E[1/q|q>=1]"] == pytest.approx(1 / q)
        assert expected_chi_square(cells, base, "fifty-fifty") <= bound + 1e-12


def test_choose_base_takes_the_largest_non_significant_base():
    rng = np.random.default_rng(5)
    table = grid(rng.integers(0, 60, (8, 6)))
    choice = choose_base(table, (2, 3, 5, 10, 25), "fifty-fifty", alpha=0.05)
    frame = choice.frame
    assert list(frame["base"]) == [2, 3, 5, 10, 25]
    for _, row in frame.iterrows():
        u = expected_chi_square(table.values, int(row["base"]), "fifty-fifty")
        assert row["E[U|x]"] == pytest.approx(u)
        assert row["significant"] == (u > row["critical"])
    ok = frame.loc[~frame["significant"], "base"]
    assert choice.base == (ok.max() if len(ok) else None)
    assert frame["df"].iloc[0] == int((table.values > 0).sum())
    # controlled rounding: U of the optimal rounding at each base, totals not counted in df
    controlled = choose_base(table, (2, 3, 5), "controlled")
    for _, row in controlled.frame.iterrows():
        assert row["U"] == pytest.approx(
            round_table(table, int(row["base"]), audit=False).statistics.u)
    assert controlled.frame["df"].iloc[0] == int(((table.values > 0)
                                                  & ~table.total_cells).sum())
    with pytest.raises(InputError, match="bound"):
        choose_base(table, (2, 3), "controlled", criterion="bound")
    by_bound = choose_base(table, (2, 3, 5), "unbiased", criterion="bound")
    assert by_bound.frame["U"].tolist() == by_bound.frame["slides' bound"].tolist()


def test_table_statistics_observed_beside_expected():
    table = grid([[3, 6, 11], [4, 12, 0]])
    result = round_table(table, 5, "unbiased", seed=3, audit=False)
    s = result.statistics
    x, rounded = table.values, result.rounded
    assert s.u == pytest.approx(conditional_chi_square(x, rounded))
    assert s.expected_u == pytest.approx(expected_chi_square(x, 5, "unbiased"))
    assert s.frame.loc["mean", "expected given x"] == pytest.approx(x.mean())  # unbiased
    assert s.frame.loc["sum of squared deviations", "rounded"] == pytest.approx(
        np.sum((rounded - x) ** 2))
    assert s.df == int((x > 0).sum())


# -- controlled rounding ----------------------------------------------------------------------


@given(grids(), bases)
def test_controlled_rounding_of_2d_tables(table, base):
    result = round_table(table, base, "controlled", audit=False)
    assert result.engine == "network (highs)" and result.status == "optimal"
    assert result.exists and result.additive and result.adjacent
    assert_controlled(table, result.rounded, base)
    milp = controlled_rounding(table, base, engine="milp")
    flow = controlled_rounding(table, base, engine="networkx")
    total = np.abs(result.deviations).sum()
    assert milp.status == "optimal"
    assert milp.solve.objective == pytest.approx(total)
    assert np.abs(milp.rounded - table.values).sum() == pytest.approx(total)
    assert np.abs(flow.rounded - table.values).sum() == pytest.approx(total)


@given(hierarchical_tables(), bases)
def test_controlled_rounding_of_hierarchical_tables(table, base):
    network, reason = table_network(table)
    assert network is not None, reason
    result = controlled_rounding(table, base)
    assert result.engine == "network (highs)" and result.exists
    assert_controlled(table, result.rounded, base)
    milp = controlled_rounding(table, base, engine="milp")
    assert milp.status == "optimal"
    assert milp.solve.objective == pytest.approx(result.solve.objective)
    assert np.abs(result.rounded - table.values).sum() == pytest.approx(result.solve.objective)


@given(lines(), bases)
def test_controlled_rounding_of_one_dimensional_hierarchies(table, base):
    result = controlled_rounding(table, base)
    assert result.engine == "network (highs)"
    assert_controlled(table, result.rounded, base)
    assert controlled_rounding(table, base, engine="milp").solve.objective == pytest.approx(
        result.solve.objective)


def test_jj_tables_without_dimensions(tmp_path):
    rng = np.random.default_rng(4)
    table = grid(rng.integers(0, 40, (5, 4)))
    jj = Table.from_jj(table.to_jj(tmp_path / "grid.jj"))
    assert not jj.dims
    result = controlled_rounding(jj, 5)
    assert result.engine == "network (highs)"
    assert_controlled(jj, result.rounded, 5)
    assert result.solve.objective == pytest.approx(controlled_rounding(table, 5).solve.objective)


@given(cubes(), bases)
def test_controlled_rounding_of_3d_tables(table, base):
    result = round_table(table, base, "controlled", audit=False)
    assert result.additive
    np.testing.assert_array_equal(table.A @ result.rounded, table.b)
    if result.exists:
        assert result.engine == "milp" and result.status == "optimal"
        assert_controlled(table, result.rounded, base)
    else:   # the closest additive alternative: only its extra steps leave adjacency
        assert result.status == "relaxed" and not result.adjacent
        q, r = decompose(table.values, base)
        low, high = base * q, base * (q + (r > 0))
        beyond = np.maximum(low - result.rounded, result.rounded - high) / base
        np.testing.assert_array_equal(np.maximum(beyond, 0), result.steps)


def parity_cube() -> Table:
    """2 x 2 x 2 with 1 where i + j + k is even: every line sums to 1, every plane to 2."""
    return cube(np.fromfunction(lambda i, j, k: (i + j + k + 1) % 2, (2, 2, 2)))


def test_no_controlled_rounding_exists_for_the_parity_cube():
    table = parity_cube()
    # brute force: every zero-restricted adjacent choice for the 16 non-multiples of 2
    q, r = decompose(table.values, 2)
    free = np.flatnonzero(r > 0)
    assert len(free) == 16
    choices = np.array(list(itertools.product([0, 1], repeat=len(free))), dtype=float)
    candidates = np.tile(2 * q, (len(choices), 1))
    candidates[:, free] += 2 * choices
    assert not np.any(np.all(np.abs(table.A @ candidates.T) < 1e-9, axis=0))
    result = round_table(table, 2, "controlled")
    assert result.exists is False and result.status == "relaxed"
    assert result.additive and result.steps.sum() == 1
    assert result.max_abs_deviation == 2.0
    # the alternative is the closest additive one: brute force over cells moved one more step
    assert "no zero-restricted controlled rounding exists" in result.note
    payload = result.to_dict()
    assert payload["exists"] is False and len(payload["non_adjacent_cells"]) == 1
    json.dumps(payload)


def test_far_objective_minimises_cells_rounded_away_from_nearest():
    rng = np.random.default_rng(2)
    table = grid(rng.integers(0, 30, (6, 7)))
    base = 4
    _, r = decompose(table.values, base)

    def far(rounded):
        up = rounded > table.values
        return int(np.sum((up & (r < base / 2)) | (~up & (r > base / 2) & (r > 0))))

    by_far = controlled_rounding(table, base, objective="far")
    by_deviation = controlled_rounding(table, base)
    milp = controlled_rounding(table, base, objective="far", engine="milp")
    assert far(by_far.rounded) == by_far.solve.objective == milp.solve.objective
    assert far(by_far.rounded) <= far(by_deviation.rounded)
    assert_controlled(table, by_far.rounded, base)


def test_network_detection():
    assert table_network(grid(np.ones((3, 4))))[0].n_nodes == 4 + 5 + 1
    tree, leaves = random_tree([2, 2], deep=False)
    network, _ = table_network(hierarchical(np.ones((4, 3)), tree, leaves))
    assert network is not None and len(network.dropped_rows) == 3   # Total, g0, g1 rows
    frame = pd.DataFrame([(leaves[i], leaves[j], 1.0) for i in range(4) for j in range(4)],
                         columns=["r", "c", "value"])
    both = Table.from_aggregated(frame, ["r", "c"], hierarchies={"r": tree, "c": tree})
    assert table_network(both) == (None, "both dimensions have a hierarchy with subtotals")
    assert table_network(parity_cube())[0] is None
    with pytest.raises(InputError, match="not a network"):
        controlled_rounding(both, 2, engine="network")
    with pytest.raises(InputError, match="network"):
        unbiased_controlled_rounding(parity_cube(), 2)


def test_right_hand_side_must_be_a_multiple_of_the_base():
    table = grid([[1, 2], [3, 4]])
    shifted = Table(table.cells.assign(value=table.values + np.eye(1, table.n_cells, 0)[0]),
                    table.A, table.A @ (table.values + np.eye(1, table.n_cells, 0)[0]))
    assert np.any(shifted.b != 0)
    with pytest.raises(InputError, match="not a multiple of the base"):
        controlled_rounding(shifted, 5)


def test_controlled_rounding_of_real_values():
    table = grid([[0.4, 2.75, 1.5], [3.2, 0.0, 6.1]])
    result = round_table(table, 2, "controlled", audit=False)
    assert_controlled(table, result.rounded, 2)
    assert controlled_rounding(table, 2, engine="milp").solve.objective == pytest.approx(
        result.total_abs_deviation)
    for seed in range(20):
        assert_controlled(table, unbiased_controlled_rounding(table, 2, seed=seed).rounded, 2)


# -- unbiased controlled rounding -------------------------------------------------------------


@given(st.one_of(grids(), hierarchical_tables()), bases, st.integers(0, 2**31))
def test_unbiased_controlled_rounding_is_controlled(table, base, seed):
    outcome = unbiased_controlled_rounding(table, base, seed=seed)
    assert outcome.status == "random"
    assert_controlled(table, outcome.rounded, base)
    np.testing.assert_array_equal(
        outcome.rounded, unbiased_controlled_rounding(table, base, seed=seed).rounded)


@pytest.mark.parametrize("hierarchy", [False, True])
def test_unbiased_controlled_rounding_mean_converges_to_x(hierarchy):
    rng = np.random.default_rng(8)
    if hierarchy:
        tree, leaves = random_tree([2, 1, 2], deep=True)
        table = hierarchical(rng.integers(0, 20, (len(leaves), 3)), tree, leaves)
    else:
        table = grid(rng.integers(0, 20, (4, 5)))
    base, runs = 5, 2000
    generator = np.random.default_rng(123)
    # The draw of unbiased_controlled_rounding on the table's network, built once (the
    # function rebuilds it for every call; its seeds are tested above).
    network, _ = table_network(table)
    x = table.values
    q, r = decompose(x, base)
    draws = np.array([base * (q + unbiased_flow(network, r, base, generator))
                      for _ in range(runs)])
    np.testing.assert_array_equal(
        unbiased_controlled_rounding(table, base, seed=np.random.default_rng(5)).rounded,
        base * (q + unbiased_flow(network, r, base, np.random.default_rng(5))))
    p = r / base
    sigma = base * np.sqrt(p * (1 - p) / runs)
    assert np.all(np.abs(draws.mean(axis=0) - x) <= 5 * sigma + 1e-12)
    assert np.abs(draws.mean(axis=0) - x).max() < 0.35


# -- the audit of a rounded release -----------------------------------------------------------


@pytest.mark.parametrize("base", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("method", rounding._statistics.AUDITED_METHODS)
def test_release_boxes_are_the_preimages_of_the_rules(base, method):
    """Integer boxes equal {x : R(x) = R possible under the rule}, by enumeration."""
    x = np.arange(-3 * base, 6 * base, dtype=float)
    _, r = decompose(x, base)
    rule = {"controlled": "fifty-fifty", "unbiased-controlled": "unbiased"}.get(method, method)
    p = up_probability(r, base, rule)
    for R in (0.0, 2.0 * base):
        possible = x[((x - r + base == R) & (p > 0)) | ((x - r == R) & (p < 1))]
        lower, upper = release_box(np.array([R]), base, method, integer=True)
        assert (lower[0], upper[0]) == (possible.min(), possible.max())
    lower, upper = release_box(np.array([2.0 * base]), base, method, True, extra_steps=1)
    assert upper[0] - lower[0] == release_box(np.array([0.0]), base, method, True)[1][0] \
        - release_box(np.array([0.0]), base, method, True)[0][0] + 2 * base


def brute_force_ranges(table: Table, rounded: np.ndarray, base: int) -> np.ndarray:
    """Min and max of every cell over integer tables inside the adjacent boxes: the
    interior is enumerated and the totals computed from it."""
    interior = np.flatnonzero(~table.total_cells)
    boxes = [range(int(max(0, rounded[k] - base + 1)), int(rounded[k] + base))
             for k in interior]
    lower = np.full(table.n_cells, np.inf)
    upper = np.full(table.n_cells, -np.inf)
    # totals are the unique solution of A x = 0 given the interior
    totals = np.flatnonzero(table.total_cells)
    A_t, A_i = table.A[:, totals].toarray(), table.A[:, interior].toarray()
    for combo in itertools.product(*boxes):
        x = np.zeros(table.n_cells)
        x[interior] = combo
        x[totals] = np.linalg.lstsq(A_t, -A_i @ np.array(combo, dtype=float), rcond=None)[0]
        x = np.round(x, 9)
        if np.all(np.abs(x - rounded) < base) and np.all(x >= 0):
            lower, upper = np.minimum(lower, x), np.maximum(upper, x)
    return np.column_stack([lower, upper])


@given(st.lists(st.integers(0, 12), min_size=4, max_size=4), st.integers(2, 4))
def test_audit_ranges_equal_the_brute_force_ranges(values, base):
    table = grid(np.reshape(values, (2, 2)))
    result = round_table(table, base, "controlled")
    audit = result.audit
    expected = brute_force_ranges(table, result.rounded, base)
    np.testing.assert_allclose(audit.frame[["lower", "upper"]].to_numpy(), expected)
    assert np.all((audit.frame["lower"] <= table.values) & (table.values <= audit.frame["upper"]))


@given(st.one_of(grids(4), hierarchical_tables()), st.integers(2, 6),
       st.sampled_from(rounding._statistics.AUDITED_METHODS), st.integers(0, 1000))
def test_audit_ranges_contain_the_original(table, base, method, seed):
    result = round_table(table, base, method, seed=seed)
    frame = result.audit.frame
    x = table.values
    assert np.all((frame["lower"] <= x) & (x <= frame["upper"]))
    assert np.all((frame["lower"] >= frame["box_lower"]) & (frame["upper"] <= frame["box_upper"]))


def test_audit_finds_small_counts_pinned_down():
    # conventional base 2 publishes 0 only for x = 0 (x < 1): every zero is disclosed
    table = grid([[0, 3], [1, 0]])
    result = round_table(table, 2, "conventional")
    frame = result.audit.frame
    zeros = table.values == 0
    assert frame["exact"].to_numpy()[zeros].all()
    # 50/50 rounding of 1 = 1 + 0 (not additive): additivity pins every cell
    line = Table.from_aggregated(pd.DataFrame({"c": ["a", "b"], "value": [1.0, 0.0]}), ["c"])
    audit = audit_rounding(line, np.array([0.0, 2.0, 0.0]), 2, "fifty-fifty")
    assert audit.n_exact == 3 and audit.n_tightened == 3
    # a controlled rounding of the same line leaves a range of two values: not narrow
    safe = round_table(line, 2, "controlled").audit
    assert safe.n_exact == 0 and safe.n_narrow == 0 and safe.min_width == 1.0
    # as checks: the pinned release fails, the controlled one passes
    assert (audit.passed, audit.status) == (False, "not protected")
    assert (safe.passed, safe.status) == (True, "protected")


def test_a_rounding_audit_cut_short_by_its_time_limit_is_not_shown_safe():
    line = Table.from_aggregated(pd.DataFrame({"c": ["a", "b"], "value": [1.0, 0.0]}), ["c"])
    rounded = round_table(line, 2, "controlled", audit=False).rounded
    full = audit_rounding(line, rounded, 2, "controlled")
    short = audit_rounding(line, rounded, 2, "controlled", time_limit=0.01)  # spent at once
    assert full.complete and full.passed
    assert not short.complete and short.n_exact == 0  # no range computed, none exact ...
    assert (short.passed, short.status) == (False, "time-limited")  # ... yet not safe
    assert short.to_dict()["status"] == "time-limited" and "time limit" in short.summary()


# -- the result -------------------------------------------------------------------------------


def test_result_renderings():
    table = grid([[3, 6, 11], [4, 12, 0], [7, 7, 7]])
    result = round_table(table, 5, "controlled")
    payload = result.to_dict()
    for key in ("status", "base", "method", "total_abs_deviation", "max_abs_deviation",
                "additive"):
        assert key in payload
    assert payload["additive"] is True and payload["status"] == "optimal"
    assert payload["total_abs_deviation"] == pytest.approx(np.abs(result.deviations).sum())
    json.dumps(payload)
    frame = result.to_frame()
    assert list(frame.columns[:4]) == ["value", "rounded", "deviation", "steps"]
    assert (frame["rounded"] - frame["value"]).tolist() == frame["deviation"].tolist()
    assert "Rounding to base 5 (controlled): optimal" in result.summary()
    html = Report("rounding").add(result.to_report()).to_html()
    assert html.count("<img") >= 2 and "Posterior probability" in html
    assert "An intruder who knows the base (5)" in html


def test_round_table_input_errors():
    table = grid([[1, 2]])
    with pytest.raises(InputError, match="unknown method .stochastic.; choose one of"):
        round_table(table, 5, "stochastic")
    with pytest.raises(InputError, match="tabsdc.Table"):
        round_table(table.values, 5)
    with pytest.raises(InputError, match="base"):
        round_table(table, 1)


def test_docstring_examples():
    for module in (rounding._rules, rounding._statistics, rounding._controlled, rounding._network,
                   rounding._audit, rounding._base_choice, rounding._api):
        failures, _ = doctest.testmod(module, extraglobs={"np": np, "Table": Table})
        assert failures == 0, module.__name__
