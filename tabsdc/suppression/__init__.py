"""Complementary cell suppression.

:func:`suppress` chooses the secondary (complementary) cells of least cost so that every
primary cell (status ``u``) is protected in the sense of ``docs/architecture.md`` (lower,
upper protection against the interval attack: "Contracts", protection). Methods:

* ``"optimal"``: master MILP over the binaries with Fischetti-Salazar capacity cuts generated
  from the attacker LPs (:mod:`tabsdc.suppression._optimal`); proven optimal or, under a time
  limit, the best audit-clean pattern with its gap;
* ``"guided"``: the hypercube pattern (on tables with dimensions), then the heuristic's
  flows with each cell's cost lowered by the share of it the lower bound's LP relaxation
  hides, and its clean-up (:mod:`tabsdc.suppression._guided`); the cheaper of the two
  patterns;
* ``"heuristic"``: least-cost deviation flows per failing requirement, then a clean-up pass
  (:mod:`tabsdc.suppression._heuristic`); any linear table;
* ``"network"``: the same with the flows solved as min-cost flows on the table's network
  (:mod:`tabsdc.suppression._network`); two-dimensional tables;
* ``"modular"``: hierarchical tables split into sub-tables protected top-down in waves of
  independent sub-tables (in parallel) with the optimal method, each with its own time
  limit, and backtracking (:mod:`tabsdc.suppression._modular`), then every
  requirement checked (in parallel, :mod:`tabsdc.suppression._checks`) and repaired as a
  whole;
* ``"hypercube"``: for large hierarchical tables, a least-cost hypercube per primary found
  on arrays without an LP (:mod:`tabsdc.suppression._hypercube`), then routing of the few
  requirements no hypercube meets (within a box around the primary first);
* ``"auto"`` (the default): one of these chosen by the table's size and dimensions
  (:func:`choose_method`).

Every method honours ``time_limit`` (total seconds, :class:`tabsdc._progress.Deadline`) and
reports progress in time (:class:`tabsdc._progress.ProgressReporter`).

Every result is checked by :func:`tabsdc.audit.audit` and carries that audit: with the
method's witnesses (the hypercube method's hypercubes), or, for a pattern without them
on a table with dimensions above ``AUDIT_SEARCH_CELLS`` cells, with the hypercubes the
audit finds among the hidden cells itself (``witnesses="search"``: the same verdicts
as the exact audit, tested; on the 5,184-cell 4-D benchmark table the heuristic's
pattern is audited in 13.7 s instead of 278.8 s); small tables get exact intervals.

A Ctrl-C during the search (:mod:`tabsdc._interrupts`) stops it as the time limit does: the
result is the best protecting pattern found so far, audited, with ``interrupted`` set (or,
with none complete yet, :class:`KeyboardInterrupt` saying so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import numpy as np
import pandas as pd

import tabsdc._interrupts as interrupts
from tabsdc._progress import Deadline, validate_time_limit
from tabsdc._table import Table
from tabsdc._tableset import accepts_table_set
from tabsdc._validation import check_choice, in_working_units, validate_table
from tabsdc.audit import audit
from tabsdc.solver import require_highs
from tabsdc.suppression._bound import LowerBound
from tabsdc.suppression._costs import cell_costs
from tabsdc.suppression._methods import METHOD_FUNCTIONS
from tabsdc.suppression._modular import subtables
from tabsdc.suppression._optimal import PROVEN_GAP, CutLoopStats
from tabsdc.suppression._problem import (
    SUBTABLE_SECONDS,
    MethodOptions,
    MethodOutcome,
    suppression_problem,
)
from tabsdc.suppression._result import SuppressionResult

__all__ = ["suppress", "choose_method", "SuppressionResult", "METHODS"]

#: The names ``method=`` accepts: ``"auto"`` and those of the methods' table
#: (:data:`tabsdc.suppression._methods.METHOD_FUNCTIONS`).
METHODS = ("auto", *METHOD_FUNCTIONS)

#: ``method="auto"`` runs the optimal method on tables up to this many cells (its incumbent
#: and gap are kept under a time limit), the hypercube method on tables of four or more
#: dimensions above ``AUTO_HYPERCUBE_CELLS``, the modular method on tables up to that size
#: whose sub-tables hold at most ``AUTO_OPTIMAL_CELLS`` cells, and the guided method
#: otherwise (see :func:`choose_method`).
AUTO_OPTIMAL_CELLS = 2000
AUTO_HYPERCUBE_CELLS = 20_000
#: The final audit of a pattern without the method's witnesses searches them itself on
#: tables with dimensions above this many cells (exact intervals below).
AUDIT_SEARCH_CELLS = 2000


def choose_method(table: Table) -> tuple[str, str]:
    """The method ``method="auto"`` runs on ``table``, and why.

    Up to 2,000 cells the optimal method (proves optimality in seconds to minutes there).
    Tables of four or more dimensions above 20,000 cells: the hypercube method, which needs
    no LP per requirement (on the 126,000-cell 4-D benchmark the heuristic routes fewer
    than 10 % of its requirements in 40 minutes, while the hypercube method protects it in
    under a minute; ``docs/large-tables.md``). Hierarchical tables of at most 20,000 cells
    whose sub-tables hold at most 2,000 cells each: the modular method (each sub-table by
    the optimal method, then every requirement checked and repaired on the whole table;
    the hypercube pattern first, kept when the rest does not end in time or costs more:
    on three benchmark tables of 5,184-9,600 cells, two minutes in one process, 34-56 %
    below the guided method's pattern at cost = value, 2-14 % at cost = count;
    ``docs/performance.md``). Otherwise the guided method (any linear
    table; the hypercube pattern first where the table has dimensions, so a time limit
    still gives a pattern, then routing steered by the lower bound's LP relaxation from it
    with its most expensive secondaries published again, :mod:`tabsdc.suppression._guided`,
    kept when cheaper; then the neighbourhood search).

    Examples
    --------
    >>> from tabsdc._datasets import load_business_survey
    >>> choose_method(Table.from_aggregated(
    ...     pd.DataFrame({"r": ["a", "b"], "value": [1.0, 2.0]}), ["r"]))[0]
    'optimal'
    """
    n = table.n_cells
    if n <= AUTO_OPTIMAL_CELLS:
        return "optimal", (f"{n:,} cells <= {AUTO_OPTIMAL_CELLS:,}: the optimal method (proven "
                           "optimal, or the best pattern and its gap under a time limit)")
    if len(table.dims) >= 4 and n > AUTO_HYPERCUBE_CELLS:
        return "hypercube", (f"{n:,} cells > {AUTO_HYPERCUBE_CELLS:,} in {len(table.dims)} "
                             "dimensions: the hypercube method (no LP per requirement)")
    if table.dims and n <= AUTO_HYPERCUBE_CELLS:
        largest = max(len(cells) for cells in subtables(table).values())
        if largest <= AUTO_OPTIMAL_CELLS:
            return "modular", (f"{n:,} cells <= {AUTO_HYPERCUBE_CELLS:,} in sub-tables of at "
                               f"most {largest:,}: the modular method (each sub-table by the "
                               "optimal method, then checked and repaired on the whole table; "
                               "the hypercube pattern where cheaper)")
    return "guided", (f"{n:,} cells > {AUTO_OPTIMAL_CELLS:,}: the guided method (the "
                      "hypercube pattern, then flows per requirement steered by the bound's "
                      "relaxation and clean-up; the cheaper pattern)")


@accepts_table_set
def suppress(
    table: Table,
    method: Literal["auto", "optimal", "guided", "heuristic", "network", "modular",
                    "hypercube"] = "auto",
    cost: str | np.ndarray = "value",
    *,
    time_limit: float | Deadline | None = None,
    suppress_totals: bool = True,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    singletons: bool = True,
    progress: Callable[[str], None] | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    solver: str = "highs",
    subtable_limit: float | None = None,
) -> SuppressionResult:
    """Choose complementary suppressions protecting every primary cell.

    Parameters
    ----------
    table : Table
        Primary cells have status ``u`` and protection levels ``lpl``/``upl``; cells with
        status ``z`` are never suppressed; cells already ``m`` stay suppressed.
    method : {"auto", "optimal", "guided", "heuristic", "network", "modular", "hypercube"}
        ``"auto"`` picks one by the table's size (:func:`choose_method`); the result says
        which and why.
    cost : {"value", "count", "entropy"}, column name or array
        Cost of suppressing a cell: its value (``c = a``), 1, Berg entropy ``log(1 + a)``,
        a column of ``table.cells`` or one number per cell.
    time_limit : float, optional
        Total seconds for the whole search, every method (the modular method gives its
        sub-tables, each at most 10 s, 60 % of it and the repair the rest). On expiry the
        best protecting pattern found so far (status ``"feasible"``, with its gap when a
        bound is known) or, when none is complete yet, status ``"no pattern"`` (not
        audited; every cell of ``result.table`` is withheld, so that writing it out
        publishes nothing). The final audit of a pattern is not counted. A
        :class:`~tabsdc._progress.Deadline` may be passed instead (one deadline shared by
        several calls, or a test's clock). A Ctrl-C during the search ends it the same way
        (:mod:`tabsdc._interrupts`): the best protecting pattern so far, audited, with
        ``result.interrupted`` set; :class:`KeyboardInterrupt` when none is complete.
    suppress_totals : bool
        Allow totals as secondaries.
    prior : {"table", "pq"}, q : float
        The intruder's a-priori knowledge, as in :func:`tabsdc.audit.audit`. Infinite
        bounds are replaced, for the protection model only, by
        ``a +- (1.5 max|a| + max level)`` (the audit of the result uses the true bounds, and
        protection under the narrower bounds implies protection under the wider ones).
    singletons : bool
        Protect against the respondents of single-contributor primaries (``freq == 1``),
        who know their own values: every other primary keeps its protection levels when
        such a value is known (the insider attack, :mod:`tabsdc.audit._insider`; on where
        the table has frequencies). Every method takes these requirements into its own
        search and the result's audit runs the attack.
    progress : callable, optional
        Receives progress lines (one str each): at once, then at least every 10 s during
        routing, clean-up and sub-tables (with done/total, rate and time left), and one per
        round of the optimal method.
    n_jobs : int, optional
        Processes for independent work (the modular method's sub-tables of a wave and its
        check of every requirement after them); ``-1``: one per core. The pattern does not
        depend on it, except through time limits (a sub-table stopped by its own keeps
        the pattern found by then, which depends on the machine's speed).
    client : dask.distributed.Client, optional
        Run that work on a Dask cluster instead (see :mod:`tabsdc._parallel`).
    solver : {"highs"}
        The methods keep HiGHS models between solves (:func:`tabsdc.solver.require_highs`).
    subtable_limit : float, optional
        Seconds each sub-table of the modular method may take (default 10 s); the sub-tables
        together still take at most 60 % of ``time_limit``.

    Returns
    -------
    SuppressionResult

    Raises
    ------
    InputError
        An unknown method or cost, or a primary that no pattern can protect (named).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table, FrequencyRule, apply_rules
    >>> data = pd.DataFrame({"r": list("AABBBCCC"), "c": list("xyxyyxyy"),
    ...                      "v": [5.0, 6, 7, 8, 9, 10, 11, 12]})
    >>> ruled = apply_rules(Table.from_microdata(data, ["r", "c"], "v"),
    ...                     FrequencyRule(2, level=20)).table
    >>> result = suppress(ruled, cost="count")
    >>> result.method, result.stats.status, int(result.secondary.sum())
    ('optimal', 'optimal', 4)
    """
    check_choice("method", method, METHODS)
    validate_table(table)
    require_highs(solver, "suppression")
    deadline = time_limit if isinstance(time_limit, Deadline) else Deadline(time_limit)
    options = MethodOptions(
        deadline, progress, prior, q, n_jobs, client,
        validate_time_limit(subtable_limit, "subtable_limit") or SUBTABLE_SECONDS)
    # solved in the table's working unit and with costs of ordinary size, so that tables of
    # 1e-9 and of 1e12 get the pattern the same table gets in ordinary units
    original, (table, _) = table, in_working_units(table)
    reported_cost = cell_costs(original, cost)
    reason = ""
    if method == "auto":
        method, reason = choose_method(table)
        if progress is not None:
            progress(f"method auto: {reason}")
    problem = suppression_problem(table, reported_cost, prior=prior, q=q,
                                  singletons=singletons, suppress_totals=suppress_totals)
    fixed_on, status = problem.fixed_on, table.cells["status"].to_numpy()
    with interrupts.stoppable() as search:
        if problem.reqs:
            outcome = METHOD_FUNCTIONS[method](problem, options)
        else:  # nothing to protect: the given pattern is optimal
            outcome = MethodOutcome(fixed_on, CutLoopStats(
                "optimal", 0.0, 0.0, 0.0, 0, 0, 0, 0, deadline.elapsed(),
                bound_how="nothing to protect"))
    pattern = outcome.pattern
    if search.interrupted and pattern is None:
        raise KeyboardInterrupt("no protecting pattern was complete")
    stats = _with_bound(outcome.stats, outcome.bound)
    stats = replace(stats, objective=stats.objective * problem.cost_unit,
                    bound=stats.bound * problem.cost_unit,
                    time_limited=stats.time_limited or (search.interrupted
                                                        and stats.status != "optimal"))
    secondary = pd.Series(False if pattern is None else pattern & ~fixed_on,
                          index=table.cells.index)
    if pattern is None:  # fail safe: withhold every cell, so that nothing is published
        return SuppressionResult(
            table=original.with_columns(status=np.where(fixed_on, status, "m")),
            method=method, cost=reported_cost, secondary=secondary, stats=stats, audit=None,
            seconds=deadline.elapsed(), reason=reason, original=original)
    protected = original.with_columns(status=np.where(secondary, "m", status))
    if search.interrupted and progress is not None:
        progress("interrupted (Ctrl-C): auditing the best pattern found so far")
    with interrupts.unstoppable():
        witnesses = outcome.witnesses
        if witnesses is None and table.dims and table.n_cells > AUDIT_SEARCH_CELLS:
            witnesses = "search"
        verdict = audit(protected, prior=prior, q=q, witnesses=witnesses,
                        singletons=singletons, progress=progress, n_jobs=n_jobs,
                        client=client)
    return SuppressionResult(
        table=protected, method=method, cost=reported_cost, secondary=secondary, stats=stats,
        audit=verdict, seconds=deadline.elapsed(), reason=reason, original=original,
        witnesses=outcome.witnesses, interrupted=search.interrupted)


def _with_bound(stats: CutLoopStats, certified: LowerBound | None) -> CutLoopStats:
    """The statistics with the certified lower bound and the gap of the pattern against it
    (``(objective - bound) / objective``); the status is ``"optimal"`` only when the gap is
    at most :data:`~tabsdc.suppression._optimal.PROVEN_GAP`."""
    bound, how = stats.bound, stats.bound_how or (
        "the optimal method's relaxation with its cuts and master MILP"
        if stats.status != "no pattern" else "")
    if certified is not None and not certified.value <= bound:  # nan counts as no bound
        bound, how = certified.value, certified.how
    objective = stats.objective
    gap = ((objective - bound) / max(abs(objective), 1e-10)
           if np.isfinite(objective) and np.isfinite(bound) else np.nan)
    status = stats.status
    if status == "optimal" and not gap <= PROVEN_GAP:
        status = "feasible"
    return replace(stats, status=status, bound=bound, gap=gap, bound_how=how)
