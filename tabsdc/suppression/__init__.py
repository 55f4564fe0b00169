"""Complementary cell suppression.

:func:`suppress` chooses the secondary (complementary) cells of least cost so that every
primary cell (status ``u``) is protected in the sense of ``DESIGN.md`` (lower, upper
protection against the interval attack). Methods:

* ``"optimal"``: master MILP over the binaries with Fischetti-Salazar capacity cuts generated
  from the attacker LPs (:mod:`tabsdc.suppression.optimal`); proven optimal or, under a time
  limit, the best audit-clean pattern with its gap;
* ``"heuristic"``: least-cost deviation flows per failing requirement, then a clean-up pass
  (:mod:`tabsdc.suppression.heuristic`); any linear table;
* ``"network"``: the same with the flows solved as min-cost flows on the table's network
  (:mod:`tabsdc.suppression.network`); two-dimensional tables;
* ``"modular"``: hierarchical tables split into sub-tables protected one by one with the
  optimal method and backtracking (:mod:`tabsdc.suppression.modular`), then audited and
  repaired as a whole.

Every result is checked by :func:`tabsdc.audit.audit` and carries that audit.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Literal

import numpy as np
import pandas as pd

from tabsdc.audit import audit
from tabsdc.audit.verify import HIDDEN_STATUSES
from tabsdc.errors import InputError
from tabsdc.suppression.attacker import Attacker, requirements
from tabsdc.suppression.costs import cell_costs
from tabsdc.suppression.heuristic import FlowRouter, clean_up, heuristic_pattern
from tabsdc.suppression.modular import modular_pattern
from tabsdc.suppression.network import NetworkRouter
from tabsdc.suppression.optimal import CutLoopStats, optimal_pattern
from tabsdc.suppression.result import SuppressionResult
from tabsdc.suppression.singletons import protect_singletons, singleton_rows
from tabsdc.table import Table
from tabsdc.tableset import accepts_table_set

__all__ = ["suppress", "SuppressionResult", "METHODS"]

METHODS = ("optimal", "heuristic", "network", "modular")


@accepts_table_set
def suppress(
    table: Table,
    method: Literal["optimal", "heuristic", "network", "modular"] = "optimal",
    cost: str | np.ndarray = "value",
    *,
    time_limit: float | None = None,
    suppress_totals: bool = True,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    singletons: bool = True,
    progress: Callable[[str], None] | None = None,
) -> SuppressionResult:
    """Choose complementary suppressions protecting every primary cell.

    Parameters
    ----------
    table : Table
        Primary cells have status ``u`` and protection levels ``lpl``/``upl``; cells with
        status ``z`` are never suppressed; cells already ``m`` stay suppressed.
    method : {"optimal", "heuristic", "network", "modular"}
    cost : {"value", "count", "entropy"}, column name or array
        Cost of suppressing a cell: its value (``c = a``), 1, Berg entropy ``log(1 + a)``,
        a column of ``table.cells`` or one number per cell.
    time_limit : float, optional
        Seconds for the optimal method (for ``"modular"``: per sub-table, default 10); on
        expiry the best audit-clean pattern and its gap.
    suppress_totals : bool
        Allow totals as secondaries.
    prior : {"table", "pq"}, q : float
        The intruder's a-priori knowledge, as in :func:`tabsdc.audit.audit`. Infinite
        bounds are replaced, for the protection model only, by
        ``a +- (1.5 max|a| + max level)`` (the audit of the result uses the true bounds, and
        protection under the narrower bounds implies protection under the wider ones).
    singletons : bool
        Protect against two single-contributor primaries in one relation (see
        :mod:`tabsdc.suppression.singletons`).
    progress : callable, optional
        Receives progress lines: one per round of the optimal method, per sub-table of the
        modular method, and every tenth of the routing and clean-up passes of the heuristic
        methods.

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
    >>> result.stats.status, int(result.secondary.sum())
    ('optimal', 3)
    """
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    start = perf_counter()
    cells = table.cells
    status = cells["status"].to_numpy()
    primary = status == "u"
    fixed_on = np.isin(status, HIDDEN_STATUSES)
    fixed_off = (status == "z") & ~fixed_on
    if not suppress_totals:
        fixed_off |= table.total_cells & ~fixed_on
    c = cell_costs(table, cost)
    down, up = _capacities(table, prior, q)
    lpl, upl = cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float)
    reqs = requirements(primary, lpl, upl)
    labels = _labeller(table)
    _check_own_bounds(primary, lpl, upl, down, up, labels)
    attacker = Attacker(table.A, down, up)
    router_class = NetworkRouter if method == "network" else FlowRouter
    router = router_class(table.A, down, up, ~fixed_off)
    extra = singleton_rows(table) if singletons else None
    if not reqs:  # nothing to protect: the given pattern is optimal
        pattern = fixed_on
        stats = CutLoopStats("optimal", 0.0, 0.0, 0.0, 0, 0, 0, 0, perf_counter() - start)
    elif method == "optimal":
        pattern, stats = optimal_pattern(
            table.A, reqs, attacker, router, c, fixed_on, fixed_off, labels,
            extra_rows=extra, time_limit=time_limit, progress=progress)
    else:
        if method == "modular":
            start_pattern, subtable_solves = modular_pattern(
                table, lambda sub, cells: suppress(
                    sub, "optimal", c[cells], time_limit=time_limit or 10.0, prior=prior, q=q,
                    singletons=False).suppressed, (lpl, upl), progress)
            failing = _failing(table, start_pattern, reqs, prior, q)
            removable = ~start_pattern & ~fixed_off
        else:
            start_pattern, failing, removable = fixed_on, reqs, ~fixed_on & ~fixed_off
            subtable_solves = 0
        pattern, certificates = heuristic_pattern(failing, attacker, router, c, start_pattern,
                                                  labels, progress)
        pattern = clean_up(failing, attacker, c, pattern, removable, certificates, progress)
        if extra is not None:
            pattern = protect_singletons(extra, pattern, c, fixed_off)
        total = float(c @ (pattern & ~fixed_on))
        stats = CutLoopStats("feasible", total, np.nan, np.nan, subtable_solves, 0, 0,
                             attacker.n_solves,
                             perf_counter() - start)
    new_status = np.where(pattern & ~fixed_on, "m", status)
    protected = table.with_columns(status=new_status)
    verdict = audit(protected, prior=prior, q=q)
    return SuppressionResult(
        table=protected, method=method, cost=c, secondary=pd.Series(
            pattern & ~fixed_on, index=cells.index), stats=stats, audit=verdict,
        seconds=perf_counter() - start)


def _failing(table: Table, pattern: np.ndarray, reqs: list, prior: str, q: float | None):
    """Requirements a pattern fails, found by one audit of the whole table."""
    frame = audit(table.with_columns(status=np.where(
        pattern & (table.cells["status"] != "u").to_numpy(), "m", table.cells["status"])),
        prior=prior, q=q).frame
    position = table.cells.index.get_indexer(frame.index)
    exact = frame["exact"].to_numpy()
    lower_bad = set(position[~frame["lower_ok"].to_numpy() | exact].tolist())
    upper_bad = set(position[~frame["upper_ok"].to_numpy() | exact].tolist())
    return [r for r in reqs if r.cell in (upper_bad if r.direction > 0 else lower_bad)]


def _capacities(table: Table, prior: str, q: float | None) -> tuple[np.ndarray, np.ndarray]:
    """How far each cell may move down and up (finite: see :func:`suppress`)."""
    from tabsdc.audit.verify import prior_bounds

    values = table.values
    lb, ub = prior_bounds(table.cells, values, prior, q)
    levels = table.cells[["lpl", "upl"]].to_numpy(float)
    cap = 1.5 * float(np.abs(values).max(initial=0.0)) + float(levels.max(initial=0.0))
    down = np.minimum(values - lb, cap)
    up = np.minimum(ub - values, cap)
    bad = (down < 0) | (up < 0)
    if bad.any():
        label = _labeller(table)(int(np.flatnonzero(bad)[0]))
        raise InputError(f"{label} lies outside its a-priori bounds [lb, ub]")
    return down, up


def _check_own_bounds(primary, lpl, upl, down, up, labels) -> None:
    for need, room, word in ((upl, up, "upper"), (lpl, down, "lower")):
        bad = primary & (need > room * (1 + 1e-9))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"no suppression pattern can protect {labels(i)}: its {word} protection level "
                f"{need[i]:g} exceeds what its a-priori bounds allow ({room[i]:g})"
            )


def _labeller(table: Table) -> Callable[[int], str]:
    return lambda i: table.cell_labels([i])[0]
