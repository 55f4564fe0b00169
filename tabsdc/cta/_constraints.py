"""Quality-preserving CTA (QP-CTA) and multivariate CTA: constraints on the adjustment.

For a group G of cells with original values ``a`` and adjustments ``y`` (Cox, Kelly and
Patil 2004; Cox, *Towards a quality assessment of disclosure-limited statistical data*,
slides 26 and 28):

* **mean**: ``sum_G y_i = 0`` keeps the mean of the group;
* **variance**: ``L(y) = sum_G (a_i - abar) y_i = 0`` (the slides' ``L(y) = 0``, there
  divided by ``Var(a)``) makes ``Cov(a, y) = 0``, so ``Var(a + y) = Var(a) + Var(y)``:
  the variance is kept up to the (small) variance of the adjustments;
* **correlation**: with ``L(y) = 0``, ``Corr(a, a + y) = (1 + Var(y) / Var(a))**-1/2``,
  which is at least ``rho`` when ``sum_G y_i**2 <= (1/rho**2 - 1) sum_G (a_i - abar)**2``
  (``Var(y) <= sum y**2 / |G|``). That convex limit is kept by outer-approximation cuts
  ``(y0 / |y0|) . y <= sqrt(limit)`` at the current point ``y0`` (Kelley's cutting planes),
  added until it holds within a relative ``CUT_TOLERANCE``;
* **covariance** of two tables ``a``, ``b`` of the same structure adjusted by ``y``, ``z``:
  ``Cov(a + y, b + z) = Cov(a, b) + Cov(a, z) + Cov(y, b) + Cov(y, z)``; the linear rows
  ``sum_G (a_i - abar) z_i + (b_i - bbar) y_i = 0`` cancel the two cross terms, leaving
  the second-order ``Cov(y, z)``.

Rows are scaled to a largest coefficient of 1; groups are given once (see
:func:`resolve_groups`) and default to the interior (non-total) cells.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError
from tabsdc._validation import check_choice
from tabsdc.cta._problem import CTAProblem, QuadraticLimit

if TYPE_CHECKING:
    from tabsdc._table import Table

#: Statistics a univariate adjustment can keep (``"covariance"`` is for several tables).
PRESERVABLE = ("mean", "variance", "correlation", "covariance")

#: A quadratic limit holds when ``sum y**2 <= limit * (1 + CUT_TOLERANCE)``.
CUT_TOLERANCE = 1e-7

#: Cutting-plane rounds before giving up (the result then reports the value reached).
MAX_CUT_ROUNDS = 200

Groups = list[tuple[str, np.ndarray]]


def parse_preserve(preserve: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"mean,variance"`` or a sequence of names -> a checked tuple of names.

    Raises
    ------
    InputError
        An unknown statistic (the message lists the known ones).
    """
    if preserve is None:
        return ()
    names = preserve.split(",") if isinstance(preserve, str) else list(preserve)
    names = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    for name in names:
        check_choice("statistic to preserve", name, PRESERVABLE)
    return names


def resolve_groups(table: Table, groups: object = None) -> Groups:
    """Named groups of cell positions over which statistics are kept.

    Parameters
    ----------
    table : Table
    groups : None, str, mapping or sequence
        None: one group, the interior (non-total) cells. A column name of ``table.cells``:
        one group per distinct non-missing label. A mapping ``name -> mask or labels``, or a
        sequence of boolean masks (named ``group 0``, ``group 1``, ...).

    Returns
    -------
    list of (name, positions)

    Raises
    ------
    InputError
        An unknown column, a mask of the wrong length, an unknown cell label or an empty
        group.
    """
    if groups is None:
        interior = np.flatnonzero(~table.total_cells)
        return [("interior", interior if interior.size else np.arange(table.n_cells))]
    if isinstance(groups, str):
        if groups not in table.cells.columns:
            raise InputError(f"groups: no column {groups!r} in the table's cells")
        labels = table.cells[groups]
        codes, uniques = pd.factorize(labels, use_na_sentinel=True)
        return [(f"{groups}={u}", np.flatnonzero(codes == k)) for k, u in enumerate(uniques)]
    items = groups.items() if isinstance(groups, Mapping) else \
        ((f"group {k}", g) for k, g in enumerate(groups))
    resolved = []
    for name, cells in items:
        array = np.asarray(cells)
        if array.dtype == bool:
            if array.shape != (table.n_cells,):
                raise InputError(f"group {name!r} has shape {array.shape}, the table has "
                                 f"{table.n_cells} cells")
            positions = np.flatnonzero(array)
        else:
            positions = table.cells.index.get_indexer(list(cells))
            if (positions < 0).any():
                raise InputError(f"group {name!r}: unknown cell "
                                 f"{list(cells)[int(np.flatnonzero(positions < 0)[0])]!r}")
        if positions.size == 0:
            raise InputError(f"group {name!r} is empty")
        resolved.append((str(name), np.unique(positions)))
    return resolved


def _scaled_row(positions: np.ndarray, coefficients: np.ndarray, n: int) -> sp.csr_array:
    largest = np.max(np.abs(coefficients)) if coefficients.size else 0.0
    scale = 1.0 / largest if largest > 0 else 1.0
    return sp.csr_array((coefficients * scale, (np.zeros(len(positions), dtype=int), positions)),
                        shape=(1, n))


def preservation_rows(
    values: np.ndarray,
    groups: Groups,
    preserve: Sequence[str],
    min_correlation: float = 0.99,
) -> tuple[sp.csr_array, list[str], list[QuadraticLimit]]:
    """Rows ``E y = 0`` and quadratic limits that keep the chosen statistics of each group.

    Parameters
    ----------
    values : ndarray, shape (n,)
        Original cell values ``a``.
    groups : list of (name, positions)
        From :func:`resolve_groups`.
    preserve : sequence of {"mean", "variance", "correlation"}
        ``"correlation"`` adds the variance row (it needs ``Cov(a, y) = 0``).
    min_correlation : float
        ``rho`` in ``Corr(a, a + y) >= rho`` (0 < rho < 1).

    Returns
    -------
    rows : scipy.sparse.csr_array
    names : list of str
    limits : list of QuadraticLimit

    Raises
    ------
    InputError
        A group of fewer than two cells or with constant values for variance/correlation,
        or ``min_correlation`` outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> rows, names, limits = preservation_rows(np.array([1.0, 2.0, 6.0]),
    ...                                         [("all", np.arange(3))], ["mean", "variance"])
    >>> rows.toarray().round(3).tolist(), names
    ([[1.0, 1.0, 1.0], [-0.667, -0.333, 1.0]], ['mean (all)', 'variance (all)'])
    """
    n = len(values)
    rows, names, limits = [], [], []
    wants_variance = "variance" in preserve or "correlation" in preserve
    if "correlation" in preserve and not 0 < min_correlation < 1:
        raise InputError(f"min_correlation must be in (0, 1), got {min_correlation!r}")
    for name, cells in groups:
        a = values[cells]
        if "mean" in preserve:
            rows.append(_scaled_row(cells, np.ones(len(cells)), n))
            names.append(f"mean ({name})")
        if not wants_variance:
            continue
        centred = a - a.mean()
        if len(cells) < 2 or not np.any(centred):
            raise InputError(f"group {name!r} has fewer than two distinct values: its variance "
                             "and correlation cannot be kept")
        rows.append(_scaled_row(cells, centred, n))
        names.append(f"variance ({name})")
        if "correlation" in preserve:
            limit = float(centred @ centred) * (1.0 / min_correlation**2 - 1.0)
            limits.append(QuadraticLimit(f"correlation >= {min_correlation:g} ({name})",
                                         cells, limit))
    matrix = sp.csr_array(sp.vstack(rows, format="csr")) if rows else sp.csr_array((0, n))
    return matrix, names, limits


def covariance_rows(
    values: Sequence[np.ndarray], groups: Groups, offsets: np.ndarray
) -> tuple[sp.csr_array, list[str]]:
    """Rows over stacked adjustments keeping the covariance of every pair of tables.

    Parameters
    ----------
    values : sequence of ndarray
        Original values of each table (same structure, same cell order).
    groups : list of (name, positions)
        Positions within one table.
    offsets : ndarray of int
        Position of each table's first cell in the stacked problem.

    Returns
    -------
    rows : scipy.sparse.csr_array, shape (pairs * groups, total cells)
    names : list of str
    """
    n = int(offsets[-1])
    rows, names = [], []
    for t in range(len(values)):
        for u in range(t + 1, len(values)):
            for name, cells in groups:
                ct = values[t][cells] - values[t][cells].mean()
                cu = values[u][cells] - values[u][cells].mean()
                positions = np.concatenate([cells + offsets[u], cells + offsets[t]])
                rows.append(_scaled_row(positions, np.concatenate([ct, cu]), n))
                names.append(f"covariance of tables {t} and {u} ({name})")
    matrix = sp.csr_array(sp.vstack(rows, format="csr")) if rows else sp.csr_array((0, n))
    return matrix, names


def cut_rows(problem: CTAProblem, y: np.ndarray) -> tuple[sp.csr_array, np.ndarray]:
    """Outer-approximation cuts for every violated quadratic limit at ``y``.

    A limit ``sum_G y**2 <= K`` violated at ``y0`` gets the supporting hyperplane of the
    ball at the radial projection of ``y0``: ``(y0_G / |y0_G|) . y_G <= sqrt(K)``.

    Returns
    -------
    rows : scipy.sparse.csr_array, shape (c, n)
    upper : ndarray, shape (c,)
        Right-hand sides (the rows are ``<=`` constraints).
    """
    rows, upper = [], []
    for limit in problem.quadratic:
        part = y[limit.cells]
        squares = float(part @ part)
        if squares <= limit.limit * (1 + CUT_TOLERANCE):
            continue
        norm = np.sqrt(squares)
        rows.append(sp.csr_array((part / norm, (np.zeros(len(part), dtype=int), limit.cells)),
                                 shape=(1, problem.n)))
        upper.append(np.sqrt(limit.limit))
    if not rows:
        return sp.csr_array((0, problem.n)), np.zeros(0)
    return sp.csr_array(sp.vstack(rows, format="csr")), np.array(upper)


def solve_with_cuts(
    problem: CTAProblem,
    solve: Callable[[], object],
    add_cuts: Callable[[sp.csr_array, np.ndarray], None],
    adjustment: Callable[[object], np.ndarray],
) -> tuple[object, int]:
    """Solve, then add cuts for violated quadratic limits and re-solve until they hold.

    Parameters
    ----------
    problem : CTAProblem
    solve : callable
        ``solve() -> SolveResult`` of the current model.
    add_cuts : callable
        ``add_cuts(rows over y, upper bounds)`` adds the cuts to the model.
    adjustment : callable
        ``adjustment(result) -> y``.

    Returns
    -------
    result : SolveResult
        The last solve (its ``y`` may still violate a limit after :data:`MAX_CUT_ROUNDS`).
    cuts : int
        Number of cuts added.
    """
    result = solve()
    added = 0
    if not problem.quadratic:
        return result, added
    for _ in range(MAX_CUT_ROUNDS):
        if result.x is None or interrupts.stopping():  # keep the solution found so far
            break
        rows, upper = cut_rows(problem, adjustment(result))
        if rows.shape[0] == 0:
            break
        add_cuts(rows, upper)
        added += rows.shape[0]
        result = solve()
    return result, added
