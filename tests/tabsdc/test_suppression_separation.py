"""Capacity cuts of local attacks (tabsdc.suppression._separation), checked against an
attacker written here with scipy's linprog: a local attack that meets a level is an attack
on the whole table, every cut holds for every binary pattern that protects the requirement,
attacks solved together are those solved alone, and the lower bound built on them reaches
at least the compact LP relaxation (one flow per requirement) and at most the optimum."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc._bounds import capacities
from tabsdc._flows import Requirement
from tabsdc._progress import Deadline
from tabsdc.suppression import suppress
from tabsdc.suppression._attacker import Attacker, requirements
from tabsdc.suppression._bound import lower_bound
from tabsdc.suppression._separation import LocalSeparator
from tests.conftest import examples
from tests.tabsdc.test_suppression import random_tables


def setting(table):
    """The relations, capacities, primaries and requirements of a ruled table."""
    primary = table.cells["status"].to_numpy() == "u"
    down, up = capacities(table)
    reqs = requirements(primary, table.cells["lpl"].to_numpy(float),
                        table.cells["upl"].to_numpy(float))
    return sp.csr_array(table.A), down, up, primary, reqs


def reach(A, down, up, z, req: Requirement) -> float:
    """How far req.cell moves under the (fractional) pattern z: scipy's LP, independent of
    the toolkit's attacker."""
    held = np.isin(np.arange(A.shape[1]), req.fixed)
    bounds = list(zip(np.where(held, 0.0, -down * z), np.where(held, 0.0, up * z),
                      strict=True))
    c = np.zeros(A.shape[1])
    c[req.cell] = -req.direction
    lp = linprog(c, A_eq=A.toarray(), b_eq=np.zeros(A.shape[0]), bounds=bounds,
                 method="highs")
    assert lp.status == 0
    return -lp.fun


def scenarios(reqs, n, rng):
    """The requirements, and each again with one other random cell held at its value."""
    out = list(reqs)
    for req in reqs:
        other = int(rng.integers(n))
        if other != req.cell:
            out.append(Requirement(req.cell, req.direction, req.level, fixed=(other,)))
    return out


@settings(max_examples=examples(15, 60), deadline=None)
@given(random_tables(), st.integers(1, 3), st.integers(0, 10_000))
def test_local_cuts_hold_for_every_protecting_binary_pattern(table, hops, seed):
    rng = np.random.default_rng(seed)
    A, down, up, primary, reqs = setting(table)
    n = table.n_cells
    z = np.where(primary, 1.0, rng.random(n) * (rng.random(n) < 0.6))
    separator = LocalSeparator(A, down, up, hops)
    separator.set_pattern(z)
    reqs = scenarios(reqs, n, rng)
    attacks = separator.attack(reqs)
    patterns = [primary | (rng.random(n) < rng.random()) for _ in range(25)]
    for req, attack in zip(reqs, attacks, strict=True):
        whole = reach(A, down, up, z, req)
        # a local attack is an attack on the whole table
        assert attack.reach <= whole + 1e-7 * max(1.0, req.level)
        if attack.met:
            assert whole >= req.level * (1 - 1e-6)
        assert np.all((attack.cut_values > 0) & (attack.cut_values <= 1))
        assert not np.isin(attack.cut_cells, req.fixed).any()
        for pattern in patterns:
            if reach(A, down, up, pattern.astype(float), req) >= req.level * (1 - 1e-7):
                assert attack.cut_values @ pattern[attack.cut_cells] >= 1 - 1e-7


@settings(max_examples=examples(10, 40), deadline=None)
@given(random_tables(), st.integers(0, 10_000))
def test_attacks_solved_together_are_those_solved_alone(table, seed):
    rng = np.random.default_rng(seed)
    A, down, up, primary, reqs = setting(table)
    z = np.where(primary, 1.0, rng.random(table.n_cells))
    separator = LocalSeparator(A, down, up, hops=2)
    separator.set_pattern(z)
    reqs = scenarios(reqs, table.n_cells, rng)
    together = separator.attack(reqs)
    for req, attack in zip(reqs, together, strict=True):
        alone = separator.attack([req])[0]
        assert attack.reach == pytest.approx(alone.reach, abs=1e-7 * max(1.0, req.level))
        assert attack.met == alone.met
        if covers_the_pattern(separator, req):  # then the local attack is the whole one
            assert attack.reach == pytest.approx(reach(A, down, up, z, req),
                                                 abs=1e-6 * max(1.0, req.level))


def covers_the_pattern(separator: LocalSeparator, req: Requirement) -> bool:
    """The requirement's neighbourhood holds every hidden cell."""
    near = separator.neighbourhoods(np.array([req.cell])).indices
    return len(near) == int(separator.hidden.sum())


def compact_relaxation(A, down, up, cost, primary, reqs) -> float:
    """min cost @ z over z in [0, 1] (primaries 1) with, for each requirement, a deviation
    d_r meeting it within the capacities scaled by z: the LP relaxation over every capacity
    cut before their coefficients are cut at the level (scipy's LP)."""
    m, n = A.shape
    k = len(reqs)
    size = n + k * n  # z, then one deviation per requirement
    equalities, rows, bounds = [], [], [(float(p), 1.0) for p in primary]
    for r, req in enumerate(reqs):
        block = sp.lil_array((m, size))
        block[:, n + r * n:n + (r + 1) * n] = A.toarray()
        equalities.append(block)
        for j in range(n):  # -down_j z_j <= d_j <= up_j z_j
            held = j in req.fixed
            upper, lower = sp.lil_array((1, size)), sp.lil_array((1, size))
            upper[0, n + r * n + j], lower[0, n + r * n + j] = 1.0, -1.0
            upper[0, j], lower[0, j] = -(0.0 if held else up[j]), -(0.0 if held else down[j])
            rows += [upper, lower]
        meet = sp.lil_array((1, size))
        meet[0, n + r * n + req.cell] = -req.direction
        rows.append((meet, -req.level))
        bounds += [(None, None)] * n
    ub_rows = [row if isinstance(row, tuple) else (row, 0.0) for row in rows]
    lp = linprog(np.concatenate([cost, np.zeros(k * n)]),
                 A_ub=sp.vstack([row for row, _ in ub_rows]).tocsr(),
                 b_ub=np.array([b for _, b in ub_rows]),
                 A_eq=sp.vstack(equalities).tocsr(), b_eq=np.zeros(k * m), bounds=bounds,
                 method="highs")
    assert lp.status == 0
    return float(lp.fun)


@settings(max_examples=examples(8, 25), deadline=None)
@given(random_tables(), st.sampled_from(["value", "count"]))
def test_the_converged_bound_lies_between_the_compact_relaxation_and_the_optimum(table,
                                                                                  cost):
    A, down, up, primary, reqs = setting(table)
    c = np.abs(table.values) if cost == "value" else np.ones(table.n_cells)
    c = np.where(primary, 0.0, c)
    bound = lower_bound(A, reqs, Attacker(A, down, up), c, primary,
                        np.zeros(table.n_cells, dtype=bool), deadline=Deadline(120.0))
    assert bound.converged
    compact = compact_relaxation(A, down, up, c, primary, reqs)
    slack = 1e-6 * max(1.0, compact)
    assert bound.value >= (np.ceil(compact - slack) if cost == "count" else compact - slack)
    optimal = suppress(table, "optimal", cost=cost, singletons=False)
    assert optimal.status == "optimal"
    assert bound.value <= optimal.stats.objective * (1 + 1e-9) + 1e-9
