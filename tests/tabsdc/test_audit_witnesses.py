"""Witnesses in the audit: checked on the table, never trusted, and inside the exact intervals."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import Table
from tabsdc._errors import InputError
from tabsdc.audit import audit
from tabsdc.audit._witnesses import derived_cells, witness_bounds
from tests.tabsdc.test_parallel import small_hierarchical_table, suppressed_small_table


# each seed costs a suppression of its own (mostly the lower bound); the fast suite keeps the
# two tables the other tests of this module use, make test-slow the third
@pytest.mark.parametrize("seed", [4, 5, pytest.param(9, marks=pytest.mark.slow)])
def test_witness_bounds_lie_inside_the_exact_intervals(seed):
    result = suppressed_small_table(seed, "hypercube")
    assert result.witnesses is not None and result.witnesses.shape[1] > 0
    proven = audit(result.table, witnesses=result.witnesses)
    exact = audit(result.table)
    assert proven.protected and exact.protected
    assert proven.witnesses == result.witnesses.shape[1]  # every structure passes the checks
    by_witness = proven.frame["solver_status"] == "witness"
    assert by_witness.sum() > 0.5 * len(proven.frame)
    inner, outer = proven.frame[by_witness], exact.frame.loc[proven.frame.index[by_witness]]
    slack = 1e-6 * np.maximum(1.0, np.abs(inner["value"]))
    assert (outer["lower"] <= inner["lower"] + slack).all()
    assert (outer["upper"] >= inner["upper"] - slack).all()
    # the cells the LP bounded have the exact intervals, the ones given away are exact,
    # and no sensitive cell is left unsettled
    how = proven.frame["solver_status"]
    rest = proven.frame[how == "optimal"]
    assert np.allclose(rest[["lower", "upper"]], exact.frame.loc[rest.index, ["lower", "upper"]])
    assert exact.frame.loc[proven.frame.index[how == "derived"], "exact"].all()
    assert not (proven.frame["status"][how == "unsettled"] == "u").any()
    # the suppression's own audit used them
    assert result.audit.witnesses == proven.witnesses


def test_a_witness_that_breaks_a_relation_or_moves_a_published_cell_is_dropped():
    result = suppressed_small_table(4, "hypercube")
    table = result.table
    hidden = result.suppressed
    D = result.witnesses.tocsc()
    good = D[:, [0]]
    nudge = np.zeros((table.n_cells, 1))
    nudge[np.flatnonzero(hidden)[0], 0] = 1.0
    breaking = good + sp.csc_array(nudge)  # no longer in the relations' null space
    published = np.flatnonzero(~hidden)[0]
    moving = sp.csc_array(np.eye(table.n_cells)[:, [published]])  # moves a published cell
    checks = witness_bounds(table.A, table.values, hidden, table.cells["lb"].to_numpy(float),
                            table.cells["ub"].to_numpy(float), sp.hstack([good, breaking,
                                                                          moving]))
    assert checks.valid.tolist() == [True, False, False]


def test_false_witnesses_cannot_make_an_unprotected_table_pass():
    result = suppressed_small_table(5, "hypercube")
    table = result.table
    status = table.cells["status"].to_numpy().copy()
    status[result.secondary.to_numpy()] = "s"  # publish every secondary: primaries exposed
    exposed = table.with_columns(status=status)
    honest = audit(exposed)
    assert not honest.protected
    # witnesses claiming every primary moves freely (not in the relations' null space)
    fake = sp.csc_array(np.eye(table.n_cells)[:, status == "u"])
    claimed = audit(exposed, witnesses=sp.hstack([fake, result.witnesses]))
    assert not claimed.protected
    assert set(claimed.failures.index) == set(honest.failures.index)


@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.integers(0, 50), min_size=3, max_size=3),
       signs=st.lists(st.sampled_from([-2.0, -1.0, 1.0, 3.0]), min_size=2, max_size=2),
       upper=st.integers(50, 120))
def test_the_steps_stop_where_a_cell_meets_its_bound(values, signs, upper):
    # x0 + x1 = x2 with x2 hidden and fixed by d[2] = 0: d = (s, -s, 0) scaled
    a = np.array([values[0], values[1], values[0] + values[1]], dtype=float)
    s = signs[0]
    D = sp.csc_array(np.array([[s], [-s], [0.0]]))
    A = sp.csr_array([[1.0, 1.0, -1.0]])
    lb, ub = np.zeros(3), np.full(3, float(max(upper, a[2])))
    w = witness_bounds(A, a, np.ones(3, bool), lb, ub, D)
    # x0 ranges over [max(0, x2 - ub), min(ub, x2)] along this direction
    assert w.upper[0] == pytest.approx(min(ub[0], a[2]))
    assert w.lower[0] == pytest.approx(max(0.0, a[2] - ub[1]))
    assert w.valid[0] == (w.upper[0] > w.lower[0])


@pytest.mark.slow
def test_parallel_bounds_equal_the_sequential_ones():
    result = suppressed_small_table(6, "heuristic")
    one = audit(result.table)
    two = audit(result.table, n_jobs=2)
    # the same LP optima; warm starts from other bases differ only in rounding
    assert np.allclose(one.frame[["lower", "upper"]].to_numpy(),
                       two.frame[["lower", "upper"]].to_numpy(), rtol=1e-9, atol=1e-9)
    assert one.frame["protected"].equals(two.frame["protected"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cells_given_away_by_elimination_have_point_intervals(seed):
    table = small_hierarchical_table(seed)
    rng = np.random.default_rng(seed)
    hidden = rng.random(table.n_cells) < 0.3  # an arbitrary pattern
    status = np.where(hidden, "m", "s")
    status[(table.cells["status"] == "u").to_numpy() & hidden] = "u"
    exposed = table.with_columns(status=status)
    given_away = derived_cells(table.A, hidden)
    assert given_away.sum() > 0 and not (given_away & ~hidden).any()
    exact = audit(exposed).frame["exact"].to_numpy()
    in_frame = given_away[hidden]
    assert exact[in_frame].all()  # what elimination finds, the LP confirms


@pytest.mark.parametrize("seed, method", [
    (4, "heuristic"), (5, "hypercube"), pytest.param(9, "hypercube", marks=pytest.mark.slow),
    # the modular method's run costs three times the others' (its sub-tables and the lower
    # bound): make test-slow; the search on any pattern is the heuristic's case above
    pytest.param(5, "modular", marks=pytest.mark.slow)])
def test_witnesses_searched_in_any_pattern_agree_with_the_exact_audit(seed, method):
    result = suppressed_small_table(seed, method)
    searched = audit(result.table, witnesses="search")
    exact = audit(result.table)
    assert searched.protected == exact.protected
    how = searched.frame["solver_status"]
    sensitive = searched.frame["status"] == "u"
    # most sensitive cells are settled by a hypercube of hidden cells, without an LP
    assert (how[sensitive] == "witness").mean() > 0.5
    inner, outer = searched.frame[how == "witness"], exact.frame[how == "witness"]
    slack = 1e-6 * np.maximum(1.0, np.abs(inner["value"]))
    assert (outer["lower"] <= inner["lower"] + slack).all()
    assert (outer["upper"] >= inner["upper"] - slack).all()
    assert not (sensitive & (how == "unsettled")).any()


def test_a_searched_audit_finds_the_primaries_a_pattern_exposes():
    result = suppressed_small_table(5, "hypercube")
    status = result.table.cells["status"].to_numpy().copy()
    status[result.secondary.to_numpy()] = "s"  # publish every secondary: primaries exposed
    exposed = result.table.with_columns(status=status)
    honest, searched = audit(exposed), audit(exposed, witnesses="search")
    assert not searched.protected
    assert set(searched.failures.index) == set(honest.failures.index)


def test_a_table_of_relations_only_is_settled_without_hypercubes():
    from tabsdc.audit._witness_search import search_witnesses

    result = suppressed_small_table(4, "hypercube")
    table = result.table
    relations_only = Table(table.cells.reset_index(drop=True), table.A, table.b)
    with pytest.raises(InputError, match="dimensions and hierarchies"):
        search_witnesses(relations_only, np.asarray(result.suppressed))
    settled = audit(relations_only, witnesses="search")  # joint points and relaxations only
    exact = audit(relations_only)
    assert settled.witnesses == 0 and settled.protected == exact.protected
    sensitive = settled.frame["status"] == "u"
    assert (settled.frame["solver_status"][sensitive] == "witness").all()
    with pytest.raises(InputError, match="witnesses"):
        audit(table, witnesses="hypercubes")


def test_the_witness_search_in_parallel_finds_the_same_witnesses():
    from tabsdc.audit._witness_search import search_witnesses

    result = suppressed_small_table(4, "heuristic")  # the pattern searched above
    one = search_witnesses(result.table, result.suppressed)
    two = search_witnesses(result.table, result.suppressed, n_jobs=2, batch=16)
    assert one.shape[1] > 0 and one.shape == two.shape
    assert (abs(one - two)).sum() == 0
