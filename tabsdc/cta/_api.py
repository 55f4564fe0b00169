"""The entry points of controlled tabular adjustment: :func:`adjust` and
:func:`adjust_multivariate`.

Both validate their options once, build a :class:`~tabsdc.cta._problem.CTAProblem` per table
(with the quality-preserving rows of :mod:`tabsdc.cta._constraints`), hand it to one engine
(:mod:`tabsdc.cta._exact`, :mod:`tabsdc.cta._heuristic` - also the fixed-directions CTA - or
:mod:`tabsdc.cta._l2`; MDI-CTA is
:func:`tabsdc.cta._mdi.mdi_cta`) and wrap the adjustment in an :class:`AdjustmentResult`, which
checks it independently (:mod:`tabsdc.cta._verify`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError
from tabsdc._progress import Progress, heartbeat, validate_time_limit
from tabsdc._table import Table
from tabsdc._tableset import accepts_table_set
from tabsdc._validation import check_choice, validate_table
from tabsdc.cta._constraints import (
    Groups,
    covariance_rows,
    parse_preserve,
    preservation_rows,
    resolve_groups,
)
from tabsdc.cta._exact import milp_method
from tabsdc.cta._heuristic import fixed_directions, heuristic
from tabsdc.cta._l2 import l2_method
from tabsdc.cta._mdi import mdi_cta
from tabsdc.cta._problem import CTAProblem, build_problem, fixed_cells
from tabsdc.cta._result import AdjustmentResult, MultivariateAdjustmentResult
from tabsdc.cta._scaling import Scaling
from tabsdc.cta._solution import CTASolution
from tabsdc.solver import require_highs

#: The methods of :func:`adjust`.
METHODS = ("milp", "heuristic", "fixed-directions", "l2", "mdi")

#: The methods of :func:`adjust_multivariate`.
JOINT_METHODS = ("milp", "heuristic", "fixed-directions", "l2")

#: Options of :func:`adjust` that limit the moves of cells (passed to ``build_problem``).
LIMITS = ("capacity", "relative_capacity", "sensitive_capacity", "fixed", "fix_totals")


def _check_limits(limits: dict[str, Any]) -> None:
    unknown = sorted(set(limits) - set(LIMITS))
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r}; known: {', '.join(LIMITS)}")


def _problem(table: Table, cost: object, wanted: Sequence[str], groups: Groups,
             min_correlation: float, limits: dict[str, Any]) -> CTAProblem:
    """The CTA problem of one table with its preserved statistics (``covariance`` aside)."""
    problem = build_problem(table, cost, **limits)
    single = tuple(w for w in wanted if w != "covariance")
    if single:
        rows, names, quadratic = preservation_rows(table.values, groups, single,
                                                   min_correlation)
        problem = problem.with_rows(rows, names, quadratic)
    return problem


def _solve(problem: CTAProblem, method: str, *, directions: object, time_limit: float | None,
           mip_gap: float | None, seed: object) -> CTASolution:
    """Run one engine on ``problem`` in the units of :class:`~tabsdc.cta._scaling.Scaling`
    and bring its solution back, re-certified in the original units."""
    if problem.s == 0:
        return CTASolution(y=np.zeros(problem.n), up=np.zeros(0, dtype=bool), objective=0.0,
                           bound=0.0, status="optimal", gap=0.0,
                           message="no sensitive cell: nothing to adjust")
    scaling = Scaling.of(problem)
    scaled = scaling.apply(problem)
    with interrupts.stoppable() as search:  # a Ctrl-C ends it as the time limit does
        if method == "milp":
            solution = milp_method(scaled, time_limit=time_limit, mip_gap=mip_gap)
        elif method == "heuristic":
            solution = heuristic(scaled, time_limit=time_limit, seed=seed)
        elif method == "fixed-directions":
            solution = fixed_directions(scaled, time_limit=time_limit, seed=seed)
        else:
            solution = l2_method(scaled, directions=directions, time_limit=time_limit,
                                 seed=seed)
    if search.interrupted:
        solution = replace(solution, interrupted=True, message=solution.message
                           + "; interrupted (Ctrl-C): the best adjustment found so far")
    return scaling.restore(solution, problem, "l2" if method == "l2" else "l1")


def _forced(problem: CTAProblem) -> dict[str, Any]:
    one_way = np.flatnonzero(~problem.free_direction)
    return {"forced_directions": int(one_way.size),
            "forced_cells": problem.labels(problem.sensitive[one_way[:10]])}


def _result(table: Table, problem: CTAProblem, y: np.ndarray, up: np.ndarray,
            solution: CTASolution, *, method: str, seconds: float, groups: Groups,
            limits: dict[str, Any], **overrides: Any) -> AdjustmentResult:
    """Check and wrap the adjustment ``y`` of one table."""
    figures = {"status": solution.status, "objective": solution.objective,
               "bound": solution.bound, "gap": solution.gap, "message": solution.message,
               "details": {**solution.details, **_forced(problem)},
               "interrupted": solution.interrupted, **overrides}
    return AdjustmentResult.build(
        table, table.values + y, method=method, sensitive=problem.sensitive, up=up,
        seconds=seconds, fixed=fixed_cells(table, limits.get("fixed"),
                                           limits.get("fix_totals", False)),
        rows=problem.rows, row_names=problem.row_names, quadratic=problem.quadratic,
        cost=problem.cost, groups=groups, **figures,
    )


@accepts_table_set
def adjust(
    table: Table,
    method: str = "milp",
    cost: str | Sequence[float] | np.ndarray = "inverse",
    *,
    preserve: str | Sequence[str] | None = None,
    groups: object = None,
    min_correlation: float = 0.99,
    capacity: float | Sequence[float] | None = None,
    relative_capacity: float | None = None,
    sensitive_capacity: float | Sequence[float] | None = None,
    fixed: object = None,
    fix_totals: bool = False,
    directions: object = None,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    seed: int | np.random.Generator | None = None,
    margins: object = None,
    alpha: float = 0.05,
    solver: str = "highs",
    progress: Progress | None = None,
) -> AdjustmentResult:
    """Protect the sensitive cells of ``table`` by controlled tabular adjustment.

    Parameters
    ----------
    table : Table
        Sensitive cells have status ``u`` and protection levels ``lpl``/``upl``; cells with
        status ``z`` are published as they are; ``lb``/``ub`` bound every published value.
    method : {"milp", "heuristic", "fixed-directions", "l2", "mdi"}
        See the module docstring. ``"milp"`` is exact (given time); ``"heuristic"`` scales to
        tables of a million cells; ``"fixed-directions"`` reads the protection directions
        from the LP relaxation and solves one LP for them (the heuristic without its search
        and MILP phase: an answer in seconds, with its certified gap).
    cost : {"count", "inverse", "cost"} or array-like
        Cost per unit of change of each cell (:func:`tabsdc.cta._problem.adjustment_costs`;
        ``"count"``: one per cell, as the suppression cost ``"count"``; ``"cost"``: the
        table's ``cost`` column); ``"inverse"`` (``1 / |a|``, relative change; zero cells
        weigh as the smallest non-zero one) is the usual choice. Not used by ``"mdi"``.
    preserve : str or sequence, optional
        Statistics to keep for each group: ``"mean"``, ``"variance"``, ``"correlation"``
        (``"mean,variance"`` also accepted); see :mod:`tabsdc.cta._constraints`.
    groups : optional
        Groups of cells for ``preserve`` and for the reported statistics (default: the
        interior cells); see :func:`tabsdc.cta._constraints.resolve_groups`.
    min_correlation : float
        Lower limit of ``Corr(a, a + y)`` per group with ``preserve`` ``"correlation"``.
    capacity, relative_capacity : optional
        Largest change of a non-sensitive cell, absolute (a number or one per cell) and as a
        fraction of ``|a|``; by default cells only stay within ``lb``/``ub`` (non-negative).
    sensitive_capacity : optional
        Largest change of a sensitive cell (the ``m_i`` of the MILP; default: the sum of all
        protection levels, within ``lb``/``ub``).
    fixed : mask or cell labels, optional
        Cells exempt from adjustment (besides status ``z``).
    fix_totals : bool
        Keep every (non-sensitive) total unchanged.
    directions : {"up", "down"} or array of bool, optional
        ``"l2"`` only: protection directions (default: those of the L1 heuristic).
    time_limit : float, optional
        Seconds; a solve stopped by it is reported as ``"feasible"`` with its certified gap.
    mip_gap : float, optional
        ``"milp"``: relative gap at which HiGHS may stop.
    seed : int or numpy Generator, optional
        Randomness of the heuristic (block order) and of MDI-CTA.
    margins, alpha
        ``"mdi"`` only: the margins kept (:func:`tabsdc.cta._mdi.mdi_cta`) and the significance
        level that ends the search.
    solver : {"highs"}
        The methods keep HiGHS models between solves (:func:`tabsdc.solver.require_highs`).
    progress : callable, optional
        Receives progress lines (one str each): at once, then at least every 10 s, with the
        time used and the most that is left (:func:`tabsdc._progress.heartbeat`).

    Returns
    -------
    AdjustmentResult

    Raises
    ------
    InputError
        Unknown method or options, a sensitive cell that can be protected in neither
        direction (named), inconsistent constraints.
    NoSolutionError
        No phase of the method found an adjustment within the time limit (a
        :class:`~tabsdc.SolverError`).

    Notes
    -----
    A sensitive cell whose downward move would cross its lower bound (``a - lpl < lb``, e.g.
    ``lpl > a`` with ``lb = 0``) is protected upward only, and vice versa; the result counts
    such cells (``details["forced_directions"]``). Sliding protection levels (``spl``) are
    not used: a published value is a point, not an interval.

    Examples
    --------
    The 2 x 2 table of Cox's cycle example, cell (1, 1) sensitive with levels 2:

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["1", "2", "1", "2"],
    ...                       "value": [10.0, 5.0, 7.0, 8.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> status = ["s"] * 9; status[4] = "u"
    >>> t = t.with_columns(status=status, lpl=[0, 0, 0, 0, 2, 0, 0, 0, 0],
    ...                    upl=[0, 0, 0, 0, 2, 0, 0, 0, 0])
    >>> result = adjust(t, "milp", "count", fix_totals=True)
    >>> result.status, result.objective, result.verification.passed
    ('optimal', 8.0, True)
    >>> result.table.pivot().loc[["1", "2"], ["1", "2"]].to_numpy().tolist()
    [[12.0, 3.0], [5.0, 10.0]]
    """
    validate_table(table)
    validate_time_limit(time_limit)
    require_highs(solver, "controlled tabular adjustment")
    check_choice("method", method, METHODS)
    if method == "mdi":
        unused = {"preserve": preserve, "capacity": capacity,
                  "relative_capacity": relative_capacity,
                  "sensitive_capacity": sensitive_capacity, "fix_totals": fix_totals,
                  "directions": directions, "mip_gap": mip_gap}
        given = [name for name, value in unused.items() if value not in (None, False, "")]
        if given:
            raise InputError(f"{given[0]}= is for the L1 and L2 methods; MDI-CTA keeps the "
                             "margins and the distribution")
        with heartbeat(progress, "MDI-CTA", time_limit):
            return mdi_cta(table, margins=margins, alpha=alpha, fixed=fixed, seed=seed,
                           time_limit=time_limit)
    if directions is not None and method != "l2":
        raise InputError("directions are chosen by the method itself except for method='l2'")
    start = time.perf_counter()
    wanted = parse_preserve(preserve)
    if "covariance" in wanted:
        raise InputError("covariance is kept between tables: use adjust_multivariate")
    limits = {"capacity": capacity, "relative_capacity": relative_capacity,
              "sensitive_capacity": sensitive_capacity, "fixed": fixed,
              "fix_totals": fix_totals}
    resolved = resolve_groups(table, groups)
    problem = _problem(table, cost, wanted, resolved, min_correlation, limits)
    with heartbeat(progress, f"adjustment ({method})", time_limit):
        solution = _solve(problem, method, directions=directions, time_limit=time_limit,
                          mip_gap=mip_gap, seed=seed)
    return _result(table, problem, solution.y, solution.up, solution, method=method,
                   seconds=time.perf_counter() - start, groups=resolved, limits=limits)


def _same_structure(tables: Sequence[Table]) -> None:
    if len(tables) < 2:
        raise InputError("multivariate CTA needs at least two tables")
    first = tables[0]
    for k, other in enumerate(tables[1:], start=1):
        if other.n_cells != first.n_cells or not other.cells.index.equals(first.cells.index):
            raise InputError(f"table {k} does not have the cells of table 0")
        if other.A.shape != first.A.shape or (other.A != first.A).nnz:
            raise InputError(f"table {k} does not have the relations of table 0")


def adjust_multivariate(
    tables: Sequence[Table],
    method: str = "heuristic",
    cost: str | Sequence[float] | np.ndarray = "inverse",
    *,
    preserve: str | Sequence[str] | None = ("mean", "variance", "covariance"),
    groups: object = None,
    min_correlation: float = 0.99,
    time_limit: float | None = None,
    mip_gap: float | None = None,
    seed: int | np.random.Generator | None = None,
    solver: str = "highs",
    progress: Progress | None = None,
    **limits: Any,
) -> MultivariateAdjustmentResult:
    """Adjust several tables of the same structure together (multivariate CTA).

    Each table is protected with its own sensitive cells and keeps its own relations and
    chosen statistics; with ``"covariance"`` in ``preserve``, the covariance of every pair of
    tables over each group is kept up to the second-order term ``Cov(y, z)``
    (:func:`tabsdc.cta._constraints.covariance_rows`; Cox, slide 28). ``method`` is
    ``"milp"``, ``"heuristic"`` or ``"l2"``; the other parameters and the keyword ``limits``
    (``capacity``, ``relative_capacity``, ``sensitive_capacity``, ``fixed``, ``fix_totals``)
    are those of :func:`adjust` and apply to every table; ``time_limit`` (total seconds),
    ``seed``, ``solver`` and ``progress`` are those of :func:`adjust` too.

    Returns
    -------
    MultivariateAdjustmentResult

    Raises
    ------
    InputError
        Fewer than two tables, tables with different cells or relations, or the errors of
        :func:`adjust`.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> frame = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"),
    ...                       "v1": [10.0, 20.0, 30.0, 40.0], "v2": [12.0, 18.0, 33.0, 41.0]})
    >>> tables = []
    >>> for col in ("v1", "v2"):
    ...     t = Table.from_aggregated(frame, ["r", "c"], col)
    ...     status = ["s"] * 9; status[4] = "u"
    ...     tables.append(t.with_columns(status=status, lpl=[0, 0, 0, 0, 3, 0, 0, 0, 0],
    ...                                  upl=[0, 0, 0, 0, 3, 0, 0, 0, 0]))
    >>> result = adjust_multivariate(tables, "milp")
    >>> c = result.covariance.iloc[0]
    >>> result.passed, round(float(c.before), 3), round(float(c.after - c.second_order), 3)
    (True, 170.0, 170.0)
    """
    validate_time_limit(time_limit)
    require_highs(solver, "controlled tabular adjustment")
    check_choice("method", method, JOINT_METHODS)
    _check_limits(limits)
    _same_structure(tables)
    for table in tables:
        validate_table(table)
    start = time.perf_counter()
    wanted = parse_preserve(preserve)
    resolved = resolve_groups(tables[0], groups)
    problems = [_problem(t, cost, wanted, resolved, min_correlation, limits)
                for t in tables]
    joint = CTAProblem.stack(problems)
    offsets = np.cumsum([0, *(p.n for p in problems)])
    if "covariance" in wanted:
        rows, names = covariance_rows([t.values for t in tables], resolved, offsets)
        joint = joint.with_rows(rows, names)
    with heartbeat(progress, f"joint adjustment ({method}) of {len(tables)} tables",
                   time_limit):
        solution = _solve(joint, method, directions=None, time_limit=time_limit,
                          mip_gap=mip_gap, seed=seed)
    seconds = time.perf_counter() - start
    sensitive_offsets = np.cumsum([0, *(p.s for p in problems)])
    kind = "l2" if method == "l2" else "l1"
    results: list[AdjustmentResult] = []
    for k, (table, problem) in enumerate(zip(tables, problems, strict=True)):
        y = solution.y[offsets[k]:offsets[k + 1]]
        results.append(_result(
            table, problem, y, solution.up[sensitive_offsets[k]:sensitive_offsets[k + 1]],
            solution, method=method, seconds=seconds, groups=resolved, limits=limits,
            objective=problem.objective(y, kind), bound=None, gap=None,
            message=f"table {k} of a joint adjustment", details=_forced(problem)))
    return MultivariateAdjustmentResult(
        results=tuple(results), method=method, status=solution.status,
        objective=solution.objective, bound=solution.bound, gap=solution.gap,
        message=solution.message, seconds=seconds,
        covariance=_covariances(tables, [r.table.values for r in results], resolved),
        details={**solution.details, "joint_rows": list(joint.row_names),
                 "interrupted": solution.interrupted},
    )


def _covariances(tables: Sequence[Table], adjusted: Sequence[np.ndarray],
                 groups: Groups) -> pd.DataFrame:
    """Covariance of each pair of tables per group: before, after, and ``Cov(y, z)``."""
    rows = []
    for t in range(len(tables)):
        for u in range(t + 1, len(tables)):
            for name, cells in groups:
                a, b = tables[t].values[cells], tables[u].values[cells]
                x, z = adjusted[t][cells], adjusted[u][cells]
                ddof = 1 if len(cells) > 1 else 0
                rows.append({"tables": f"{t}-{u}", "group": name,
                             "before": np.cov(a, b, ddof=ddof)[0, 1],
                             "after": np.cov(x, z, ddof=ddof)[0, 1],
                             "second_order": np.cov(x - a, z - b, ddof=ddof)[0, 1]})
    return pd.DataFrame(rows)
