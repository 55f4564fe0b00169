"""Controlled rounding on every table: the integer solutions of the relations by
elimination, the tabu search's additive rounding, and the closest additive alternative that
starts from it (neighbourhood search, both phases), with honest certificates."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import InputError, Table
from tabsdc._errors import SolverError
from tabsdc.rounding import controlled_rounding, decompose, round_table
from tabsdc.rounding._closest import (
    CellFormulation,
    ParametricFormulation,
    closest_additive_rounding,
    split_multiples,
)
from tabsdc.rounding._incumbent import (
    additive_rounding,
    balanced_choice,
    extra_steps,
    heuristic_rounding,
    integer_solutions,
)
from tabsdc.solver import LinearProgram, solve

from .test_rounding import bases, cube, cubes, hierarchical_tables, parity_cube
from .test_rounding_closest import lexicographic_by_weight


def linked_tables(rows: np.ndarray, other: np.ndarray) -> Table:
    """Two two-dimensional tables sharing their row totals: ``rows`` (r x c1) and
    ``other`` (r x c2, same row sums), with column totals, row totals and one grand total
    that is the total of three relations. The row totals have two breakdowns, so the
    interior cells are linked (``sum_j X1[i, j] = sum_k X2[i, k]``) and cannot all be
    chosen freely."""
    r, c1 = rows.shape
    c2 = other.shape[1]
    assert np.array_equal(rows.sum(axis=1), other.sum(axis=1))
    x1, x2 = np.arange(r * c1).reshape(r, c1), r * c1 + np.arange(r * c2).reshape(r, c2)
    row_total = r * (c1 + c2) + np.arange(r)
    col1 = row_total[-1] + 1 + np.arange(c1)
    col2 = col1[-1] + 1 + np.arange(c2)
    grand = col2[-1] + 1
    values = np.concatenate([rows.ravel(), other.ravel(), rows.sum(axis=1),
                             rows.sum(axis=0), other.sum(axis=0), [rows.sum()]])
    relations = ([(row_total[i], x1[i]) for i in range(r)]
                 + [(row_total[i], x2[i]) for i in range(r)]
                 + [(col1[j], x1[:, j]) for j in range(c1)]
                 + [(col2[k], x2[:, k]) for k in range(c2)]
                 + [(grand, row_total), (grand, col1), (grand, col2)])
    A = sp.lil_array((len(relations), grand + 1))
    for row, (total, parts) in enumerate(relations):
        A[row, total] = -1.0
        A[row, parts] = 1.0
    return Table(pd.DataFrame({"value": values.astype(float)}), sp.csr_array(A),
                 np.zeros(len(relations)))


@st.composite
def linked(draw):
    r, c1, c2 = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rows = np.reshape(draw(st.lists(st.integers(0, 30), min_size=r * c1, max_size=r * c1)),
                      (r, c1))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    other = np.stack([rng.multinomial(total, np.full(c2, 1 / c2)) for total in rows.sum(1)])
    return linked_tables(rows.astype(float), other.astype(float))


tables = st.one_of(cubes(), hierarchical_tables(), linked())


def beyond_adjacent(table: Table, rounded: np.ndarray, base: int) -> np.ndarray:
    """Extra steps computed from the rounded values (independently of the package)."""
    q, r = decompose(table.values, base)
    low, high = base * q, base * (q + (r > 0))
    return np.maximum(0, np.maximum(low - rounded, rounded - high)) / base


# -- integer solutions ------------------------------------------------------------------------
@settings(max_examples=40)
@given(tables, bases, st.integers(0, 2**16))
def test_integer_solutions_parametrise_every_integer_solution(table, base, seed):
    solutions = integer_solutions(table, base)
    assert solutions is not None
    G = solutions.G.toarray()
    np.testing.assert_array_equal(G, np.round(G))
    # free cells: identity rows
    np.testing.assert_array_equal(G[solutions.free], np.eye(len(solutions.free)))
    # any integer parameters give an integer solution of A Y = b / B
    w = np.random.default_rng(seed).integers(-20, 21, len(solutions.free)).astype(float)
    y = solutions.complete(w)
    np.testing.assert_array_equal(y, np.round(y))
    np.testing.assert_allclose(table.A @ y, table.b / base, atol=1e-9)
    # and the table itself is the solution of its free cells (real parameters)
    np.testing.assert_allclose(solutions.complete(table.values[solutions.free] / base),
                               table.values / base, atol=1e-9)
    # the number of parameters is the dimension of the solution space
    assert len(solutions.free) == table.n_cells - np.linalg.matrix_rank(table.A.toarray())


def test_linked_tables_have_fewer_free_cells_than_interior_cells():
    rows = np.array([[3.0, 4.0], [5.0, 6.0]])
    table = linked_tables(rows, np.array([[7.0], [11.0]]))
    solutions = integer_solutions(table, 1)
    interior = np.flatnonzero(~table.total_cells)
    assert len(interior) == 6 and len(solutions.free) == 4   # one per linked row total
    assert set(solutions.free) <= set(interior)


def test_relations_without_a_unit_coefficient_are_not_eliminated():
    cells = pd.DataFrame({"value": [2.0, 2.0, 4.0]})
    table = Table(cells, sp.csr_array(np.array([[2.0, 2.0, -2.0]])), np.zeros(1))
    assert integer_solutions(table, 2) is None


# -- the tabu search --------------------------------------------------------------------------
def test_balanced_choice_alternates_on_a_line():
    G = sp.csc_array(np.vstack([np.eye(6), np.ones((1, 6))]))
    choice = balanced_choice(G, np.full(7, 0.5), np.ones(7), np.arange(6))
    assert choice.sum() == 3      # the total stays on an adjacent multiple


@settings(max_examples=40, deadline=None)
@given(tables, bases)
def test_tabu_rounding_is_additive_and_never_beats_the_optimum(table, base):
    q, r = decompose(table.values, base)
    found = heuristic_rounding(table, base, q, r, max_steps=2, time_limit=5.0)
    rounded = base * found.multiples
    assert not table.failing_relations(values=rounded).size
    np.testing.assert_array_equal(np.mod(rounded, base), 0)
    np.testing.assert_array_equal(found.steps, beyond_adjacent(table, rounded, base))
    assert found.deviation == pytest.approx(np.abs(rounded - table.values).sum())
    assert np.all(rounded[table.values >= 0] >= 0)
    reference = lexicographic_by_weight(table, base, max_steps=3)
    if reference is not None and found.steps.max(initial=0) <= 3:
        assert found.steps.sum() >= reference[0]


def test_tabu_search_finds_the_parity_cube_optimum():
    table = parity_cube()
    q, r = decompose(table.values, 2)
    found = additive_rounding(table, 2, integer_solutions(table, 2), q, r, max_steps=2,
                              time_limit=5.0)
    assert found.steps.sum() == 1 and np.abs(2 * found.multiples - table.values).sum() == 18


# -- the closest additive alternative from the tabu rounding ----------------------------------
@settings(max_examples=30, deadline=None)
@given(st.one_of(cubes(), linked()), bases)
def test_closest_alternative_from_the_tabu_rounding_is_the_lexicographic_optimum(table, base):
    """Without a time limit both phases are proven: the steps and the deviation equal
    those of one weighted MILP solved by scipy."""
    q, r = decompose(table.values, base)
    start = heuristic_rounding(table, base, q, r, max_steps=2, time_limit=5.0)
    reference = lexicographic_by_weight(table, base)
    closest = closest_additive_rounding(table, base, q, r, incumbent=start)
    rounded = base * closest.multiples
    assert not table.failing_relations(values=rounded).size
    np.testing.assert_array_equal(np.mod(rounded, base), 0)
    np.testing.assert_array_equal(closest.steps, beyond_adjacent(table, rounded, base))
    assert closest.steps_bound <= closest.steps.sum()
    assert closest.report.bound <= closest.report.objective + 1e-9
    if reference is None:      # more than two steps in some cell: the tabu rounding's L
        return
    assert closest.proven
    assert int(closest.steps.sum()) == reference[0]
    assert closest.report.objective == pytest.approx(reference[1], abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(linked(), bases)
def test_round_table_on_linked_tables_is_additive_with_honest_certificates(table, base):
    result = round_table(table, base, "controlled", audit=False, time_limit=20)
    assert result.additive
    np.testing.assert_array_equal(np.mod(result.rounded, base), 0)
    np.testing.assert_array_equal(result.steps,
                                  beyond_adjacent(table, result.rounded, base))
    assert result.solve.bound <= result.solve.objective + 1e-9
    if result.exists:
        assert result.adjacent
    else:
        assert 1 <= result.steps_bound <= result.steps.sum()
        reference = lexicographic_by_weight(table, base)
        if reference is not None:
            assert result.steps.sum() >= reference[0]


def test_existence_agrees_with_brute_force_on_small_cubes():
    """2 x 2 x 2 cubes to base 2: brute force over every adjacent rounding decides whether a
    controlled rounding exists, and the answer agrees; without one, the alternative's
    fewest extra steps are proven and at least 1. The cubes drawn include some without."""
    rng = np.random.default_rng(3)
    without = 0
    for _ in range(12):
        table = cube(rng.integers(0, 4, (2, 2, 2)).astype(float))
        q, r = decompose(table.values, 2)
        odd = np.flatnonzero(r > 0)
        bits = (np.arange(2 ** len(odd))[:, None] >> np.arange(len(odd))) & 1
        candidates = np.tile(q, (len(bits), 1))
        candidates[:, odd] += bits
        exists = bool(np.any(np.all(table.A @ candidates.T == 0, axis=0)))
        outcome = controlled_rounding(table, 2)
        assert outcome.exists == exists
        if not exists:
            without += 1
            assert outcome.status == "relaxed"
            assert 1 <= outcome.steps_bound == outcome.steps.sum()
    assert without >= 1


# -- formulations and the starting solution ---------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.one_of(cubes(), linked()), bases)
def test_both_formulations_encode_and_decode_the_tabu_rounding(table, base):
    q, r = decompose(table.values, base)
    start = heuristic_rounding(table, base, q, r, max_steps=2, time_limit=2.0)
    steps_limit = max(2, int(start.steps.max(initial=0)))
    for form in (CellFormulation(table, base, q, r, steps_limit),
                 ParametricFormulation(start.solutions, base, q, r, steps_limit,
                                       table.values)):
        for deviation in (False, True):
            x = form.encode(start.multiples, deviation)
            assert x is not None
            np.testing.assert_array_equal(form.decode(x), start.multiples)
            program = (form.deviation_program(int(start.steps.sum())) if deviation
                       else form.steps_program())
            rows = program.A @ x
            assert np.all(rows >= program.row_lower - 1e-9)
            assert np.all(rows <= program.row_upper + 1e-9)
            assert program.objective_value(x) == pytest.approx(
                start.deviation if deviation else start.steps.sum())


def test_split_multiples_is_canonical():
    x = split_multiples(np.array([3, 5, 1, 4]), np.array([3, 3, 3, 3]),
                        np.array([1.0, 1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(x.reshape(3, 4), [[0, 1, 0, 1], [0, 1, 0, 0], [0, 0, 2, 0]])


def test_extra_steps():
    np.testing.assert_array_equal(
        extra_steps(np.array([3, 5, 1, 4]), np.array([3, 3, 3, 3]), np.array([1, 1, 0, 1])),
        [0, 1, 2, 0])


@pytest.mark.parametrize("time_limit", [None, 30.0])
def test_a_starting_solution_is_the_milp_incumbent(time_limit):
    """A knapsack started from a feasible point ends at least as good; an infeasible start
    is ignored; in this process (no limit) and in the worker (a limit) alike."""
    rng = np.random.default_rng(1)
    weights = rng.integers(10, 100, 25).astype(float)
    problem = LinearProgram(c=-rng.integers(10, 100, 25).astype(float), A=weights[None, :],
                            row_lower=[-np.inf], row_upper=[weights.sum() / 2],
                            col_lower=np.zeros(25), col_upper=np.ones(25),
                            integrality=np.ones(25, dtype=bool))
    plain = solve(problem, time_limit=time_limit)
    start = np.zeros(25)
    start[np.argsort(weights)[:5]] = 1.0
    started = solve(problem, time_limit=time_limit, start=start)
    assert started.objective == pytest.approx(plain.objective)
    assert started.objective <= problem.objective_value(start)
    ignored = solve(problem, time_limit=time_limit, start=np.ones(25))   # too heavy
    assert ignored.objective == pytest.approx(plain.objective)
    with pytest.raises(Exception, match="start"):
        solve(problem, start=np.ones(3))


def test_decompose_keeps_residues_of_large_integers():
    q, r = decompose(np.array([215324074168.0, 3 * 10.000000000000002]), 10)
    assert r.tolist() == [8.0, 0.0] and q.tolist() == [21532407416.0, 3.0]


def test_max_steps_zero_asks_for_an_exact_rounding_only():
    with pytest.raises(SolverError, match="max_steps=0 allows no extra step"):
        controlled_rounding(parity_cube(), 2, max_steps=0)
    with pytest.raises(InputError, match="non-negative integer or None"):
        controlled_rounding(parity_cube(), 2, max_steps=-1)
