"""Controlled rounding: every cell, totals included, to an adjacent multiple of the base with
every relation of the table kept.

A controlled rounding of a table with relations ``A x = b`` and base ``B`` is a vector
``R = B (q + z)`` with ``q = floor(x / B)``, ``z`` in {0, 1} (``z = 0`` where ``x`` is a
multiple of ``B``: zero-restriction) and ``A R = b``. Its cost is linear in ``z``:

* ``objective="deviation"``: the total absolute deviation ``sum |R - x| = sum r + sum (B - 2r) z``;
* ``objective="far"``: the number of cells rounded to the farther of their two multiples
  (``r < B/2`` rounded up or ``r > B/2`` rounded down).

Engines (:func:`controlled_rounding`):

* a table whose relations form a network (two dimensions, a hierarchy in at most one; see
  :mod:`tabsdc.rounding._network`) is solved as a min-cost flow, where a solution always
  exists (Cox & Ernst 1982);
* any other table (three or more dimensions, hierarchies in two dimensions, JJ tables) is a
  MILP over the binaries ``z``, built from the sparse matrix ``A`` in one piece. A
  controlled rounding need not exist then (Causey, Cox & Ernst 1985 give three-dimensional
  tables without one); an infeasible MILP is reported as such, and the closest *additive*
  alternative is computed (:mod:`tabsdc.rounding._closest`): every cell may move up to
  ``max_steps`` further multiples of ``B`` beyond its adjacent ones (a multiple of ``B``
  may move too), the number of such extra steps is minimised first and the total absolute
  deviation second, each with its certified bound. An additive rounding built without a
  MILP (:mod:`tabsdc.rounding._incumbent`: the table's integer solutions by elimination,
  then a tabu search) starts it, so an answer never depends on HiGHS finding a first
  solution in time; when it has no extra step it is a controlled rounding (one the exact
  MILP did not find in its time).

:func:`unbiased_controlled_rounding` draws a controlled rounding with ``E[R(x)] = x`` for
every cell (Cox 1987) on network tables.

References
----------
L. H. Cox and L. R. Ernst, "Controlled rounding", *INFOR* 20(4), 423-432, 1982.
B. D. Causey, L. H. Cox and L. R. Ernst, "Applications of transportation theory to
statistical problems", *JASA* 80(392), 903-909, 1985.
L. H. Cox, "A constructive procedure for unbiased controlled rounding", *JASA* 82(398),
520-524, 1987.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError, NoSolutionError, SolverError
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.rounding._closest import MIN_PHASE_SECONDS, closest_additive_rounding
from tabsdc.rounding._incumbent import AdditiveRounding, heuristic_rounding
from tabsdc.rounding._network import min_cost_flow, table_network, unbiased_flow
from tabsdc.rounding._rules import RESIDUE_TOL, decompose
from tabsdc.solver import LinearProgram, SolveResult, solve

#: What controlled rounding minimises.
OBJECTIVES = ("deviation", "far")

#: How controlled rounding is solved.
ENGINES = ("auto", "network", "networkx", "milp")

#: Extra steps a cell of the closest additive alternative may take when ``max_steps`` is
#: None and the tabu search's rounding needs no more.
DEFAULT_MAX_STEPS = 2

#: Share of ``time_limit`` for the MILP of an exact controlled rounding; the closest
#: additive alternative (when none exists or none was found) gets the time left.
EXACT_SHARE = 0.5

#: Share of ``time_limit`` (at most what the exact MILP left) for the search of an additive
#: rounding without a MILP (:func:`tabsdc.rounding._incumbent.heuristic_rounding`), the
#: closest alternative's starting solution.
HEURISTIC_SHARE = 0.15


@dataclass(frozen=True)
class ControlledOutcome:
    """What a controlled rounding produced.

    Attributes
    ----------
    rounded : ndarray
        Rounded values (multiples of the base), in cell order.
    exists : bool
        Whether a zero-restricted adjacent controlled rounding exists (False: ``rounded`` is
        the closest additive alternative).
    status : str
        ``"optimal"`` (proven), ``"feasible"`` (a MILP stopped by its time limit or gap
        target: not proven optimal), ``"random"`` (unbiased controlled rounding), or
        ``"relaxed"`` / ``"relaxed-feasible"`` (no controlled rounding exists; the
        alternative is proven optimal / not proven).
    engine : str
        ``"network (highs)"``, ``"network (networkx)"``, ``"milp"``, ``"milp (relaxed)"``
        or ``"network (random cycles)"``.
    solve : SolveResult or None
        The solver's report (objective, bound, gap, time); None for the random method.
    steps : ndarray of int
        Per cell, the multiples of the base by which it lies outside its zero-restricted
        adjacent choices (0 everywhere unless relaxed).
    note : str
        Why the engine was chosen, and what the relaxation did.
    steps_bound : int or None
        Relaxed only: proven lower bound on the fewest extra steps (``steps.sum()`` when
        proven minimal).
    found_by : str
        Relaxed only (or an exact rounding found by that search): what found the rounding
        (:attr:`tabsdc.rounding._closest.ClosestRounding.found_by`).
    """

    rounded: np.ndarray
    exists: bool
    status: str
    engine: str
    solve: SolveResult | None
    steps: np.ndarray
    note: str = ""
    steps_bound: int | None = None
    found_by: str = ""


def rounding_costs(
    residues: np.ndarray, base: int, objective: str
) -> tuple[np.ndarray, np.ndarray]:
    """Cost of rounding each cell down (``z = 0``) and up (``z = 1``).

    Parameters
    ----------
    residues : ndarray
        ``r = x - B floor(x / B)``.
    base : int
    objective : {"deviation", "far"}
        See the module docstring.

    Returns
    -------
    down, up : ndarray
        ``r`` and ``B - r`` (deviation), or 0/1 indicators of the farther multiple (far).

    Examples
    --------
    >>> rounding_costs(np.array([0.0, 1.0, 4.0]), 5, "deviation")
    (array([0., 1., 4.]), array([5., 4., 1.]))
    """
    check_choice("objective", objective, OBJECTIVES)
    r = np.asarray(residues, dtype=float)
    if objective == "deviation":
        return r.copy(), base - r
    tol = RESIDUE_TOL * base
    return (r > base / 2 + tol).astype(float), ((r > 0) & (r < base / 2 - tol)).astype(float)


def _check_right_hand_sides(table: Table, base: int) -> None:
    """Relations ``A R = b`` with R multiples of B need b to be a multiple of B."""
    _, remainder = decompose(table.b, base)
    bad = np.flatnonzero(remainder != 0)
    if bad.size:
        raise InputError(
            f"right-hand side {table.b[bad[0]]:g} is not a multiple of the base {base}, so no "
            f"rounded table can keep {table.describe_relation(int(bad[0]))}")


def controlled_rounding(
    table: Table,
    base: int,
    *,
    objective: str = "deviation",
    engine: str = "auto",
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    max_steps: int | None = None,
) -> ControlledOutcome:
    """Optimal zero-restricted controlled rounding of ``table`` to base ``base``.

    Parameters
    ----------
    table : Table
        Any table; values need not be integers.
    base : int
        Rounding base (validated by the caller).
    objective : {"deviation", "far"}
        What to minimise (module docstring).
    engine : {"auto", "network", "networkx", "milp"}
        ``"auto"``: the network method when the table is a network, else the MILP;
        ``"network"`` / ``"networkx"``: the flow LP by HiGHS / networkx's network simplex
        (an error if the table is not a network); ``"milp"``: always the MILP.
    solver, time_limit, mip_gap
        Of the MILP (see :func:`tabsdc.solver.solve`); ``time_limit`` also bounds the flow LP.
        It is the time of the whole call: the MILP of an exact rounding gets
        :data:`EXACT_SHARE` of it; when it proves that none exists, or ends undecided, the
        search of an additive rounding without a MILP gets :data:`HEURISTIC_SHARE` of it
        and the closest additive alternative, started from that rounding, the time left.
        So every call on a table whose relations that search can solve (every table built
        from dimensions and hierarchies, and JJ tables of that kind) returns an additive
        rounding within the time limit.
    max_steps : int or None
        How far the relaxed alternative may move a cell beyond its adjacent multiples, in
        multiples of the base (only used when no controlled rounding exists). None (the
        default): :data:`DEFAULT_MAX_STEPS`, or as many as the rounding of the tabu search
        moves a cell when that is more, so that an answer always exists. 0: an exact
        controlled rounding or an error.

    Returns
    -------
    ControlledOutcome

    Raises
    ------
    InputError
        Unknown objective or engine, a network engine on a table that is not a network
        (the message says why), or a right-hand side that is not a multiple of the base.
    SolverError
        The MILP stopped without a solution (e.g. at its time limit), or no additive
        rounding exists within ``max_steps``.

    Notes
    -----
    MILP (Cox & Ernst 1982, controlled rounding as an integer program):
    ``min sum_k (c1_k - c0_k) z_k + sum_k c0_k`` s.t. ``A z = b/B - A q``,
    ``0 <= z_k <= [r_k > 0]``, ``z`` integer, with ``c0, c1`` from :func:`rounding_costs`.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
    ...                       "value": [3.0, 3.0, 3.0, 3.0]})
    >>> outcome = controlled_rounding(Table.from_aggregated(cells, ["r", "c"]), 5)
    >>> outcome.status, outcome.engine, outcome.solve.objective
    ('optimal', 'network (highs)', 16.0)
    """
    began = time.perf_counter()  # time_limit is the time of the whole call
    check_choice("engine", engine, ENGINES)
    if max_steps is not None and not (isinstance(max_steps, int) and not isinstance(
            max_steps, bool) and max_steps >= 0):
        raise InputError(f"max_steps must be a non-negative integer or None, got "
                         f"{max_steps!r}")
    _check_right_hand_sides(table, base)
    q, r = decompose(table.values, base)
    down, up = rounding_costs(r, base, objective)
    capacity = (r > 0).astype(float)
    network, reason = (None, "engine='milp' was asked for") if engine == "milp" else \
        table_network(table)
    if network is None and engine in ("network", "networkx"):
        raise InputError(f"the table is not a network ({reason}); use engine='milp' or 'auto'")
    if network is not None:
        flow_engine = "networkx" if engine == "networkx" else "highs"
        z, result = min_cost_flow(network, q, capacity, up - down, engine=flow_engine,
                                  time_limit=time_limit)
        result = _with_offset(result, float(down.sum()))
        return ControlledOutcome(base * (q + z), True, "optimal", f"network ({flow_engine})",
                                 result, np.zeros(len(q), dtype=int),
                                 "the relations form a network: a controlled rounding always "
                                 "exists and the flow LP's optimal vertex is integral")
    problem = LinearProgram(
        c=up - down, A=table.A, row_lower=table.b / base - table.A @ q,
        row_upper=table.b / base - table.A @ q, col_lower=np.zeros(len(q)), col_upper=capacity,
        integrality=np.ones(len(q), dtype=bool), offset=float(down.sum()))
    result = solve(problem, solver, mip_gap=mip_gap,
                   time_limit=None if time_limit is None else EXACT_SHARE * time_limit,
                   within=None if time_limit is None else
                   time_limit - (time.perf_counter() - began))
    note = f"MILP: {reason}"
    if not result.has_solution and interrupts.stopping():
        raise KeyboardInterrupt("no controlled rounding was found before the interrupt")
    if result.has_solution:
        z = np.round(result.x)
        return ControlledOutcome(base * (q + z), True, result.status, "milp", result,
                                 np.zeros(len(q), dtype=int), note)
    infeasible = result.status in ("infeasible", "infeasible_or_unbounded")
    if infeasible:
        note += "; no zero-restricted controlled rounding exists (MILP infeasible)"
    elif result.status == "no_solution":
        note += ("; whether a controlled rounding exists was not decided within "
                 f"{EXACT_SHARE:.0%} of the time limit")
    else:
        raise NoSolutionError(f"the controlled rounding MILP stopped without a solution: "
                              f"status {result.status!r} ({result.message})")
    heuristic = None if max_steps == 0 else heuristic_rounding(
        table, base, q, r, max_steps=max_steps or DEFAULT_MAX_STEPS,
        time_limit=None if time_limit is None else min(
            HEURISTIC_SHARE * time_limit,
            max(time_limit - (time.perf_counter() - began), 0.0)))
    left = None if time_limit is None else time_limit - (time.perf_counter() - began)
    return _relaxed(table, base, q, r, solver, left, mip_gap, max_steps, note, heuristic,
                    int(infeasible))


def _with_offset(result: SolveResult, offset: float) -> SolveResult:
    """The flow's report with the objective of the whole rounding (constant part added)."""
    objective = result.objective + offset
    return replace(result, objective=objective, bound=objective)


def _relaxed(table: Table, base: int, q: np.ndarray, r: np.ndarray, solver: str,
             time_limit: float | None, mip_gap: float | None, max_steps: int | None,
             note: str, heuristic: AdditiveRounding | None,
             steps_at_least: int) -> ControlledOutcome:
    """The closest additive rounding (:mod:`tabsdc.rounding._closest`) as an outcome."""
    if max_steps == 0:
        raise SolverError(f"{note}; max_steps=0 allows no extra step, so there is no "
                          f"closest additive alternative; allow steps (max_steps=None or "
                          f">= 1)")
    if heuristic is None:
        note += ("; the table's integer solutions were not found by elimination, so the "
                 "MILPs start without a rounding")
        if time_limit is not None and time_limit < MIN_PHASE_SECONDS:
            raise NoSolutionError("the controlled rounding MILP used the whole time limit, "
                                  "none is left for the closest additive alternative; raise "
                                  "time_limit")
    elif time_limit is not None:
        time_limit = max(time_limit, 1e-3)  # the starting rounding is the answer at worst
    if max_steps is None:
        max_steps = max(DEFAULT_MAX_STEPS,
                        0 if heuristic is None else int(heuristic.steps.max(initial=0)))
    closest = closest_additive_rounding(table, base, q, r, solver=solver,
                                        time_limit=time_limit, mip_gap=mip_gap,
                                        max_steps=max_steps, incumbent=heuristic,
                                        steps_at_least=steps_at_least)
    steps = closest.steps
    total = int(steps.sum())
    report = closest.report
    if total == 0:   # the exact MILP was stopped undecided; the alternative is exact
        return ControlledOutcome(base * closest.multiples, True, report.status, "milp",
                                 report, steps, note + "; a controlled rounding was found by "
                                 f"the search for the closest additive one ({closest.found_by})",
                                 steps_bound=0, found_by=closest.found_by)
    fewest = ("the fewest (proven)" if closest.steps_proven
              else f"at least {closest.steps_bound} needed (proven)")
    start = ("" if heuristic is None else
             f"; the tabu search started the MILPs from {int(heuristic.steps.sum())} extra "
             f"step(s)")
    return ControlledOutcome(
        base * closest.multiples, False, "relaxed" if closest.proven else "relaxed-feasible",
        "milp (relaxed)", report, steps,
        note + f"; closest additive alternative: {int((steps > 0).sum())} cell(s) moved "
        f"{total} extra multiple(s) of the base beyond their adjacent values ({fewest}), "
        f"found by the {closest.found_by}{start}; solver objective = total |deviation|, "
        f"bound = proven lower bound on the deviation of the closest alternative",
        steps_bound=closest.steps_bound, found_by=closest.found_by)


def unbiased_controlled_rounding(
    table: Table,
    base: int,
    *,
    seed: int | np.random.Generator | None = None,
) -> ControlledOutcome:
    """A random zero-restricted controlled rounding with ``E[R(x)] = x`` for every cell.

    Parameters
    ----------
    table : Table
        A table whose relations form a network (two dimensions, a hierarchy in at most one;
        see :mod:`tabsdc.rounding._network`).
    base : int
    seed : int, numpy Generator or None
        Random source (None: fresh entropy); the same seed gives the same rounding.

    Returns
    -------
    ControlledOutcome
        With status ``"random"``.

    Raises
    ------
    InputError
        The table is not a network (the message says why), or a right-hand side is not a
        multiple of the base.

    Notes
    -----
    Each cell is rounded up with probability exactly ``r / B``, so ``E[R(x)] = B q + r = x``
    (Cox 1987's unbiased controlled rounding); the draw moves the residues along cycles of
    the network (:func:`tabsdc.rounding._network.unbiased_flow`).

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
    ...                       "value": [5.0, 2.0, 1.0, 10.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> outcome = unbiased_controlled_rounding(t, 5, seed=1)
    >>> bool(np.all(t.A @ outcome.rounded == 0))
    True
    """
    _check_right_hand_sides(table, base)
    network, reason = table_network(table)
    if network is None:
        raise InputError(
            f"unbiased controlled rounding needs a table whose relations form a network "
            f"(two dimensions, a hierarchy in at most one); this table is not one ({reason})")
    q, r = decompose(table.values, base)
    z = unbiased_flow(network, r, base, np.random.default_rng(seed))
    return ControlledOutcome(base * (q + z), True, "random", "network (random cycles)", None,
                             np.zeros(len(q), dtype=int),
                             "each cell rounded up with probability r/B along cycles of the "
                             "table's network")
