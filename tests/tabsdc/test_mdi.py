"""Iterative proportional fitting with fixed cells, the MDI statistic and MDI-CTA."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chi2

from tabsdc import InputError
from tabsdc.cta import adjust, mdi_cta
from tabsdc.mdi import (
    FitError,
    aggregation_matrix,
    constraint_degrees_of_freedom,
    ipf,
    mdi_p_value,
    mdi_statistic,
)

from .test_cta import cube, grid, hierarchical, mark, sensitive_tables, slide_table

# -- IPF ---------------------------------------------------------------------------------------


@st.composite
def fitting_problems(draw):
    """A table, its margins, a target table with the same zeros, fixed cells and zeros."""
    kind = draw(st.sampled_from(["2d", "3d", "hierarchical"]))
    shape = {"2d": (draw(st.integers(2, 5)), draw(st.integers(2, 5))), "3d": (2, 3, 3),
             "hierarchical": (4, 3)}[kind]
    size = int(np.prod(shape))
    seed = np.reshape(draw(st.lists(st.integers(1, 50), min_size=size, max_size=size)), shape)
    zeros = np.reshape(draw(st.lists(st.booleans(), min_size=size, max_size=size)), shape)
    zeros &= np.reshape(np.arange(size) % 3 == 0, shape)  # about a sixth structural zeros
    fixed = np.reshape(draw(st.lists(st.booleans(), min_size=size, max_size=size)), shape)
    fixed &= np.reshape(np.arange(size) % 4 == 1, shape) & ~zeros
    noise = np.reshape(draw(st.lists(st.floats(0.5, 2.0), min_size=size, max_size=size)),
                       shape)
    seed = np.where(zeros, 0.0, seed.astype(float))
    target = seed * noise
    build = {"2d": grid, "3d": cube,
             "hierarchical": lambda v: hierarchical(v, [2, 2])}[kind]
    table = build(target)
    interior, _, G = aggregation_matrix(table)
    order = table.cells.index[interior]
    flat = build(seed).cells["value"].reindex(order).to_numpy()
    fixed_cells = build(fixed.astype(float)).cells["value"].reindex(order).to_numpy() > 0
    target_interior = table.values[interior]
    start = np.where(fixed_cells, target_interior, flat)
    return start, G, G @ target_interior, fixed_cells, target_interior


@given(problem=fitting_problems())
def test_ipf_meets_every_margin_with_fixed_cells_and_structural_zeros(problem):
    start, G, targets, fixed, target = problem
    result = ipf(start, G, targets, fixed, tol=1e-12)
    assert result.converged
    x = result.fitted
    assert np.all(np.abs(G @ x - targets) <= 1e-9 * np.maximum(1.0, targets))
    assert np.array_equal(x[fixed], start[fixed])
    assert np.all(x[start == 0] == 0)
    # minimum discrimination: log(x / p) on the free positive cells is a sum of margin terms
    free = ~fixed & (start > 0)
    if free.any():
        design = G[:, free].toarray().T
        log_ratio = np.log(x[free] / start[free])
        coef = np.linalg.lstsq(design, log_ratio, rcond=None)[0]
        assert np.abs(design @ coef - log_ratio).max() <= 1e-6


def test_ipf_classical_two_by_two_and_errors():
    G = sp.csr_array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
    result = ipf(np.ones(4), G, np.array([3.0, 7.0, 4.0, 6.0]))
    # the independence table: row total x column total / N
    assert np.allclose(result.fitted, [1.2, 1.8, 2.8, 4.2], atol=1e-12)
    with pytest.raises(FitError, match="smaller than its fixed cells"):
        ipf(np.array([5.0, 1.0, 1.0, 1.0]), G, np.array([3.0, 7.0, 4.0, 6.0]),
            np.array([True, False, False, False]))
    with pytest.raises(FitError, match="free cells are zero"):
        ipf(np.array([0.0, 0.0, 1.0, 1.0]), G, np.array([3.0, 7.0, 4.0, 6.0]))
    with pytest.raises(InputError, match="non-negative"):
        ipf(-np.ones(4), G, np.ones(4))


# -- the statistic and its test ----------------------------------------------------------------


def test_mdi_statistic_values():
    information, statistic = mdi_statistic(np.array([10.0, 30.0]), np.array([20.0, 20.0]))
    expected = 0.5 * np.log(0.5 / 0.25) + 0.5 * np.log(0.5 / 0.75)
    assert information == pytest.approx(expected, rel=1e-12)
    assert statistic == pytest.approx(2 * 40 * expected, rel=1e-12)
    assert mdi_statistic(np.array([1.0, 2.0]), np.array([2.0, 4.0]))[0] == 0.0
    assert mdi_statistic(np.array([0.0, 2.0]), np.array([1.0, 4.0]))[0] == np.inf
    assert mdi_p_value(statistic, 1) == pytest.approx(chi2.sf(statistic, 1), rel=1e-12)
    with pytest.raises(InputError):
        mdi_statistic(np.array([-1.0, 2.0]), np.array([1.0, 2.0]))


@pytest.mark.parametrize("sensitive", [[0], [0, 5], [0, 1, 4, 5], [0, 5, 10]])
def test_degrees_of_freedom_against_dense_ranks(sensitive):
    table = grid(np.arange(1.0, 13.0).reshape(3, 4))
    _, _, G = aggregation_matrix(table)
    moved = np.zeros(12, dtype=bool)
    moved[sensitive] = True
    kept = np.zeros(12, dtype=bool)
    df, exact = constraint_degrees_of_freedom(G, sp.csr_array((0, 12)), kept, moved)
    fixed_rows = np.eye(12)[sensitive]
    dense = np.linalg.matrix_rank(np.vstack([G.toarray(), fixed_rows])) \
        - np.linalg.matrix_rank(G.toarray())
    assert exact and df == dense == len(sensitive)


# -- MDI-CTA -----------------------------------------------------------------------------------


def test_mdi_cta_on_the_slide_table_keeps_margins_zeros_and_protects():
    table, _ = slide_table()
    result = adjust(table, "mdi", seed=0, alpha=1e-12)
    assert result.verification.passed
    totals = table.total_cells
    assert np.allclose(result.values[totals], table.values[totals], rtol=1e-10)
    zeros = table.values == 0
    assert np.all(result.values[zeros] == 0)
    d = result.details
    assert d["df"] == 7 and d["df_exact"]
    assert d["p_value"] == pytest.approx(chi2.sf(result.objective, 7))
    assert result.objective == pytest.approx(
        mdi_statistic(table.values[~totals], result.values[~totals])[1])
    report = result.to_report()
    assert "zero cell stays zero" in result.details["properties"]
    assert report.title.startswith("Controlled tabular adjustment (mdi)")


def test_mdi_cta_stops_as_soon_as_the_mdi_is_insignificant():
    """Counts of the slide's kind (a 4 x 9 table in tens): the search keeps flipping while
    the test rejects and stops at the first insignificant table."""
    counts, _ = slide_table(scale=10)
    full = mdi_cta(counts, seed=3, alpha=1 - 1e-9)
    start = full.details["start_statistic"]
    best = full.objective
    assert full.details["stop"] == "no improving move" and best < start
    df = full.details["df"]
    # a level between the start and the best statistic: the search must stop in between
    threshold = 0.5 * (start + best)
    alpha = chi2.sf(threshold, df)
    stopped = mdi_cta(counts, seed=3, alpha=alpha)
    assert stopped.details["stop"] == "insignificant"
    assert stopped.details["p_value"] >= alpha and stopped.objective <= threshold
    assert stopped.verification.passed
    assert stopped.details["fits"] <= full.details["fits"]


@given(table=sensitive_tables())
def test_mdi_cta_on_random_tables(table):
    try:
        result = adjust(table, "mdi", seed=0)
    except InputError as error:
        assert "fits the margins" in str(error) or "cannot be met" in str(error)
        return
    assert result.verification.passed
    _, totals, G = aggregation_matrix(table)
    assert np.allclose(result.values[totals], table.values[totals], rtol=1e-9)
    assert result.objective >= 0 and 0 <= result.details["p_value"] <= 1


def test_mdi_cta_errors():
    table = mark(grid(np.array([[10.0, 20.0], [30.0, 40.0]])), np.array([4]))
    with pytest.raises(InputError, match="preserve"):
        adjust(table, "mdi", preserve="mean")
    with pytest.raises(InputError, match="alpha"):
        mdi_cta(table, alpha=2)
    negative = table.with_columns(value=np.where(np.arange(9) == 8, -1.0, table.values))
    with pytest.raises(InputError):
        mdi_cta(negative)
