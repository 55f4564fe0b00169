"""Round a table: the one entry point, :func:`round_table`."""

from __future__ import annotations

from time import perf_counter

import numpy as np

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError
from tabsdc._progress import Progress, heartbeat, validate_time_limit
from tabsdc._table import Table
from tabsdc._validation import check_choice, validate_table
from tabsdc.rounding._audit import audit_rounding
from tabsdc.rounding._controlled import controlled_rounding, unbiased_controlled_rounding
from tabsdc.rounding._result import RoundingResult
from tabsdc.rounding._rules import RULES, apply_rule, check_base
from tabsdc.rounding._small_count import round_table_small_counts
from tabsdc.rounding._statistics import METHODS, SMALL_COUNT, table_statistics

#: The largest magnitude at which float64 holds every integer, 2**53: beyond it not every
#: multiple of a base is a float64 number, so a rounded table could not be exact.
EXACT_LIMIT = 2.0**53


def _check_exact(table: Table, base: int) -> None:
    """Refuse a table whose values or right-hand sides reach :data:`EXACT_LIMIT` (less the
    base), naming the first such cell or relation."""
    room = EXACT_LIMIT - base
    cell = np.flatnonzero(np.abs(table.values) > room)
    relation = np.flatnonzero(np.abs(table.b) > room)
    if not cell.size and not relation.size:
        return
    where, number = ((table.cell_labels(cell[:1])[0], table.values[cell[0]]) if cell.size else
                     (table.describe_relation(int(relation[0])), table.b[relation[0]]))
    raise InputError(f"{where}: {number:g} is beyond 2**53 - {base} = {room:.0f}: above 2**53 "
                     f"float64 numbers do not hold every multiple of the base {base}, so a "
                     "rounded table would not be exact; round the table in a larger unit "
                     "(e.g. thousands)")


def round_table(
    table: Table,
    base: int,
    method: str = "controlled",
    *,
    seed: int | np.random.Generator | None = None,
    objective: str = "deviation",
    engine: str = "auto",
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    max_steps: int | None = None,
    audit: bool = True,
    min_width: float | None = None,
    alpha: float = 0.05,
    max_round: int | None = None,
    progress: Progress | None = None,
) -> RoundingResult:
    """Round every cell of a table (totals included) to a multiple of ``base``.

    Parameters
    ----------
    table : Table
        The table (not modified).
    base : int
        Rounding base, an integer >= 2.
    method : str
        ``"conventional"``, ``"modified"``, ``"fifty-fifty"``, ``"unbiased"`` (cell by
        cell, :mod:`tabsdc.rounding._rules`), ``"controlled"`` (optimal zero-restricted
        controlled rounding, :func:`~tabsdc.rounding._controlled.controlled_rounding`) or
        ``"unbiased-controlled"`` (random, ``E[R(x)] = x``, network tables only) or
        ``"small-count"`` (the inner cells of a count table rounded so that no published
        count up to ``max_round`` is left unless 0 or a multiple of the base; totals are
        sums of the rounded inner cells, :mod:`tabsdc.rounding._small_count`).
    seed : int, numpy Generator or None
        Random source of the random methods (None: fresh entropy).
    objective, engine, solver, time_limit, mip_gap, max_steps
        Of controlled rounding; see :func:`~tabsdc.rounding._controlled.controlled_rounding`
        (``time_limit``: seconds for the whole call; the audit gets what the rounding left,
        and the ranges it does not reach in that time make its status ``"time-limited"``).
        A Ctrl-C during controlled rounding ends its MILP as the time limit does
        (:mod:`tabsdc._interrupts`): the best rounding found so far (status ``"feasible"``,
        ``result.interrupted``), or :class:`KeyboardInterrupt` when there is none.
    progress : callable, optional
        Receives progress lines (one str each) during controlled rounding and the audit: at
        once, then at least every 10 s (:func:`tabsdc._progress.heartbeat`).
    audit : bool
        Also run the audit of the release (:func:`~tabsdc.rounding._audit.audit_rounding`;
        two LPs per cell, so leave it off for very large tables).
    min_width : float, optional
        Audit: ranges narrower than this are flagged (default: ``B - 1`` for integer data,
        ``B`` otherwise; see :mod:`tabsdc.rounding._audit`).
    alpha : float
        Significance level of the chi-square comparison of the statistics.
    max_round : int, optional
        Small-count rounding: published counts up to this are rounded (default
        ``base - 1``).

    Returns
    -------
    RoundingResult

    Raises
    ------
    InputError
        A base that is not an integer >= 2, an unknown method, objective or engine, a table
        that is not a network for ``"unbiased-controlled"`` or a network engine, a
        relation whose right-hand side is not a multiple of the base, or a value beyond
        :data:`EXACT_LIMIT` (2**53) less the base.
    SolverError
        Controlled rounding stopped without any solution
        (:class:`~tabsdc.NoSolutionError` when the time limit came first).

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
    ...                       "value": [3.0, 6.0, 4.0, 12.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> result = round_table(t, 5, "controlled", audit=False)
    >>> result.additive, result.status, result.total_abs_deviation
    (True, 'optimal', 14.0)
    """
    if not isinstance(table, Table):
        raise InputError(f"table must be a tabsdc.Table, got {type(table).__name__}")
    base = check_base(base)
    check_choice("method", method, METHODS)
    _check_exact(table, base)
    start = perf_counter()
    if method not in RULES:  # controlled rounding keeps the relations: they must hold
        validate_table(table)
    validate_time_limit(time_limit)
    values = table.values
    interrupted = False
    if method == SMALL_COUNT:
        rounded, outcome = round_table_small_counts(table, base, max_round, seed=seed)
        status, exists, engine, solve = "rounded", None, "small-count", None
        steps, steps_bound = np.zeros(len(values), dtype=int), None
        note = (f"inner cells rounded ({outcome.iterations} iterations, "
                f"{outcome.checked} added by the disclosure check); counts above "
                f"{base - 1 if max_round is None else max_round} may stay unrounded, so the "
                "interval audit of rounded releases does not apply")
        audit = False
    elif method in RULES:
        rounded = apply_rule(values, base, method, seed=seed)
        status, exists, engine, solve, note = "rounded", None, "rule", None, ""
        steps, steps_bound = np.zeros(len(values), dtype=int), None
    else:
        with heartbeat(progress, f"{method} rounding", time_limit), \
                interrupts.stoppable() as search:
            outcome = (controlled_rounding(table, base, objective=objective, engine=engine,
                                           solver=solver, time_limit=time_limit,
                                           mip_gap=mip_gap, max_steps=max_steps)
                       if method == "controlled"
                       else unbiased_controlled_rounding(table, base, seed=seed))
        rounded, steps, steps_bound = outcome.rounded, outcome.steps, outcome.steps_bound
        status, exists, engine = outcome.status, outcome.exists, outcome.engine
        solve, note = outcome.solve, outcome.note
        interrupted = search.interrupted
        if interrupted:
            note += "; interrupted (Ctrl-C): the best rounding found so far"
    residual = table.residuals(rounded)
    additive = not table.failing_relations(values=rounded).size
    statistics = table_statistics(values, rounded, base, method, table.total_cells,
                                  alpha=alpha)
    release = None
    if audit:
        with heartbeat(progress, "audit of the rounded release"), interrupts.unstoppable():
            release = audit_rounding(
                table, rounded, base, method, min_width=min_width,
                extra_steps=int(steps.max(initial=0)), solver=solver,
                time_limit=None if time_limit is None else
                max(time_limit - (perf_counter() - start), 1e-3))
    return RoundingResult(
        original=table, table=table.with_columns(value=rounded), base=base, method=method,
        status=status, exists=exists, engine=engine, deviations=rounded - values,
        additive=additive, max_residual=float(np.abs(residual).max(initial=0.0)), steps=steps,
        solve=solve, statistics=statistics, audit=release,
        seed=seed if isinstance(seed, int) else None, note=note, steps_bound=steps_bound,
        seconds=perf_counter() - start, interrupted=interrupted)
