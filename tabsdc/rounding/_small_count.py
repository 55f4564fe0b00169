"""Small-count rounding: round the inner cells so that no small published count is left.

Langsrud and Heldal (2018) round frequency tables by changing the *inner* cells (the finest
cross-classification of the microdata, one count per combination of codes) and publishing
every cell as the sum of its rounded inner cells, ``y_publish = X' y_inner`` with ``X`` the
0/1 matrix of which inner cell lies in which published cell. The published tables are
therefore additive, and every table cut from the same inner cells agrees with every other
on the cells they share.

The algorithm (after the R package SmallCountRounding, ``RoundViaDummy``; written anew):

1. **Which inner cells.** With base ``b`` and ``M = max_round`` (default ``b - 1``): every
   inner cell whose count is at most ``M`` and not a multiple of ``b`` and that lies in a
   published cell whose count is in ``1..M``.
2. **How many up.** Each chosen cell keeps its multiple of ``b`` and rounds its remainder
   ``r = y mod b`` to 0 or ``b``; ``n_up = round((sum r + sum y_exact - sum y_now) / b)``
   of them go up, so that the grand total stays within about ``b/2`` of the original.
3. **Which go up** (the PLS-inspired greedy step): with ``X_s`` the rows of the chosen cells
   and the columns they split (in some but not all of them), the target is
   ``t = X_s' r + (z_exact - z_now)`` over those columns; cells go up one at a time, each the
   one whose row has the largest inner product with the part of ``t`` not yet met (ties
   broken at random), then pairs are swapped (the up cell with the smallest product down,
   the best other cell up) while the squared error ``||t - X_s' u||^2`` falls.
4. **New small cells.** Published cells now at most ``M`` that are not multiples of ``b``
   (new ones may appear) choose their inner cells again (step 1 with the rounded counts),
   until none is left. At most ``max_rows`` inner cells are rounded at once.
5. **Exact disclosure.** A published cell that holds a single unknown inner cell reveals it
   (peeling: cells of a zero published cell are 0; a cell alone in a published cell, once
   the others are known, is known). Inner cells revealed this way with a count at most
   ``M`` that is not a multiple of ``b`` are rounded too (SmallCountRounding's
   ``easyCheck``), and the steps repeat.

What it promises (tested against an independent check): every published cell whose
rounded count is at most ``M`` is 0 or a multiple of ``b``; every published cell whose
original count was in ``1..M`` is a multiple of ``b``; published cells are sums of inner
cells, so totals add up; an inner cell moves only to one of its two adjacent multiples of
``b``. Cells with large counts keep them unless an inner cell below them was rounded.

Sources: Ø. Langsrud, J. Heldal (2018), *An algorithm for small count rounding of
tabular data*, UNECE/Eurostat work session on statistical data confidentiality, Skopje;
SmallCountRounding 1.2.5 (Ø. Langsrud, J. Heldal; MIT), ``RoundViaDummy``, ``PLSrounding``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse

import tabsdc._structure as structure
from sdcreport._contract import ResultBase
from sdcreport._statuses import RoundingStatus
from tabsdc._errors import InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import code_positions
from tabsdc._table import Table
from tabsdc.rounding._rules import check_base

if TYPE_CHECKING:
    from sdcreport import Section

#: Most inner cells rounded in one iteration (SmallCountRounding's ``maxIterRows``).
MAX_ROWS = 1000


@dataclass(frozen=True, eq=False)
class SmallCountOutcome:
    """What :func:`small_count_rounding` did.

    Attributes
    ----------
    rounded : ndarray of int64
        The rounded inner counts.
    iterations : int
        Rounds of steps 1-5 of the module text.
    checked : int
        Inner cells added by the exact-disclosure check (step 5).
    """

    rounded: np.ndarray
    iterations: int
    checked: int


def small_count_rounding(
    inner: np.ndarray,
    membership: sparse.spmatrix,
    base: int = 3,
    max_round: int | None = None,
    *,
    max_rows: int = MAX_ROWS,
    seed: int | np.random.Generator | None = None,
) -> SmallCountOutcome:
    """Round inner counts so that no published count is small (module text).

    Parameters
    ----------
    inner : ndarray of int
        The inner counts (>= 0).
    membership : sparse matrix, shape (n_inner, n_published)
        ``X``: 1 where an inner cell lies in a published cell.
    base : int
        ``b`` (>= 2).
    max_round : int, optional
        ``M``: published counts up to ``M`` are rounded (default ``b - 1``; at least
        ``b - 1``).
    max_rows : int
        Most inner cells rounded per iteration.
    seed : int or numpy.random.Generator, optional
        Breaks ties between equally good cells (keyword only).

    Returns
    -------
    SmallCountOutcome

    Examples
    --------
    A 2 x 2 table (regions a, b by m, f) published with its margins: the inner cells 1 and
    2 of region a are published, so one goes to 0 and the other to 3 (the one whose margins
    the rounding of both serves best); every published cell is their sum.

    >>> X = sparse.hstack([sparse.identity(4, dtype=int), sparse.csr_matrix(np.array(
    ...     [[1, 0, 1, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 1], [0, 1, 0, 1, 1]]))])
    >>> out = small_count_rounding(np.array([1, 2, 6, 9]), X, 3, seed=1)
    >>> out.rounded.tolist(), (X.T @ out.rounded).tolist()
    ([0, 3, 6, 9], [0, 3, 6, 9, 3, 15, 6, 12, 18])
    """
    base = check_base(base)
    max_round = base - 1 if max_round is None else int(max_round)
    if max_round < base - 1:
        raise InputError(f"max_round must be at least base - 1 = {base - 1}, not {max_round}")
    y = np.asarray(inner)
    if (y < 0).any() or (y != np.round(y)).any():
        raise InputError("inner counts must be whole numbers >= 0")
    y = y.astype(np.int64).copy()
    X = sparse.csr_matrix(membership, dtype=np.int64)
    if X.shape[0] != len(y):
        raise InputError(f"the membership matrix has {X.shape[0]} rows for {len(y)} inner "
                         "cells")
    rng = np.random.default_rng(seed)
    XT = X.T.tocsr()
    exact_total = int(y.sum())
    z_exact = XT @ y
    limit = max_round + 1
    small = (z_exact > 0) & (z_exact < limit)
    forced = _in_published(XT, small) & (y < limit) & (y % base > 0)
    iterations = checked = 0
    while True:
        iterations += 1
        z = XT @ y
        small = (z < limit) & (z % base > 0)
        chosen = forced | (_in_published(XT, small) & (y < limit) & (y % base > 0))
        if not chosen.any():
            revealed = revealed_inner(X, z) & (y < limit) & (y % base > 0)
            if not revealed.any():
                return SmallCountOutcome(y, iterations, checked)
            checked += int(revealed.sum())
            forced = revealed
            continue
        rows = np.flatnonzero(chosen)
        if len(rows) > max_rows:
            rows = np.sort(rng.choice(rows, max_rows, replace=False))
        remainder = y[rows] % base
        n_up = round((remainder.sum() + exact_total - y.sum()) / base)
        n_up = min(max(n_up, 0), len(rows))
        up = _choose_up(X[rows], remainder, (z_exact - z), base, n_up, rng)
        y[rows] += np.where(up, base - remainder, -remainder)
        forced[rows] = False


def _in_published(XT: sparse.csr_matrix, published: np.ndarray) -> np.ndarray:
    """Inner cells that lie in any of the marked published cells."""
    return (XT[np.flatnonzero(published)].sum(axis=0).A1 > 0) if published.any() \
        else np.zeros(XT.shape[1], bool)


def _choose_up(Xs: sparse.csr_matrix, remainder: np.ndarray, correction: np.ndarray,
               base: int, n_up: int, rng: np.random.Generator) -> np.ndarray:
    """Which of the chosen cells round up (step 3 of the module text)."""
    n = Xs.shape[0]
    if n_up == 0 or n_up == n:
        return np.full(n, n_up == n)
    colsum = Xs.sum(axis=0).A1
    split = np.flatnonzero((colsum > 0) & (colsum < n))
    if not len(split):
        up = np.zeros(n, bool)
        up[rng.choice(n, n_up, replace=False)] = True
        return up
    A = Xs[:, split].astype(float)
    target = A.T @ remainder + correction[split]
    gram = (base * (A @ A.T)).tocsc()
    coe = A @ target                 # inner product of each row with the unmet target
    order = rng.permutation(n)       # ties: the first in a random order
    up = np.zeros(n, bool)

    def move(k: int, sign: int) -> None:
        up[k] = sign > 0
        column = gram[:, k]
        coe[column.indices] -= sign * column.data

    for _ in range(n_up):
        free = order[~up[order]]
        move(int(free[np.argmax(coe[free])]), +1)
    for _ in range(n_up + 100):
        taken, free = order[up[order]], order[~up[order]]
        out = int(taken[np.argmin(coe[taken])])
        best_in = int(free[np.argmax(coe[free])])
        # fall of ||t - b A' u||^2 when `out` goes down and `best_in` up (gram = b A A')
        g = gram[:, [out, best_in]].toarray()
        gain = 2 * base * (coe[best_in] - coe[out]) - base * (g[out, 0] + g[best_in, 1]) \
            + 2 * base * g[best_in, 0]
        if gain <= 1e-9:
            break
        move(out, -1)
        move(best_in, +1)
    return up


def revealed_inner(membership: sparse.spmatrix, published: np.ndarray) -> np.ndarray:
    """Inner cells that the published counts determine by peeling (module text, step 5).

    A published cell with count 0 reveals all its inner cells (0); a published cell with a
    single inner cell not yet known reveals it (its count minus the known ones); repeated
    until nothing new is known.

    Examples
    --------
    >>> X = sparse.csr_matrix(np.array([[1, 1], [1, 0], [0, 1]]))   # a total and two cells
    >>> revealed_inner(X[[0, 1]], np.array([5, 2])).tolist()        # inner 0 is its cell
    [True, True]
    """
    X = sparse.csr_matrix(membership, dtype=np.int64)
    XT = X.T.tocsr()
    published = np.asarray(published)
    known = _in_published(XT, published == 0)
    while True:
        unknown_per_cell = XT @ (~known).astype(np.int64)
        single = unknown_per_cell == 1
        new = _in_published(XT, single) & ~known
        if not new.any():
            return known
        known |= new


def contribution_matrix(codes: pd.DataFrame, table: Table) -> sparse.csr_matrix:
    """``X`` of a table: which inner cells (rows of ``codes``, leaf codes of at least the
    table's dimensions) lie in which cell of the table.

    Raises
    ------
    HierarchyError
        A code that is not in its dimension's hierarchy.
    """
    hier = list(table.hierarchies.values())
    indexer = structure.CellIndexer(tuple(len(h) for h in hier))
    coords = code_positions(codes[list(table.dims)].astype(str), list(table.dims),
                            table.hierarchies)
    source = np.arange(len(coords))
    for dim, hierarchy in enumerate(hier):
        step, coords = structure.expand_to_ancestors(coords, dim, hierarchy)
        source = source[step]
    cell_keys = indexer.keys(table.cell_coords())
    order = np.argsort(cell_keys)
    position = np.searchsorted(cell_keys[order], indexer.keys(coords))
    column = order[np.minimum(position, len(order) - 1)]
    found = cell_keys[column] == indexer.keys(coords)
    return sparse.csr_matrix((np.ones(found.sum(), np.int64), (source[found], column[found])),
                             shape=(len(codes), table.n_cells))


def inner_cells(table: Table) -> np.ndarray:
    """Positions of a table's inner cells: every code a leaf of its hierarchy."""
    index = table.cells.index
    frame = index.to_frame(index=False) if isinstance(index, pd.MultiIndex) else \
        pd.DataFrame({table.dims[0]: index})
    leaf = np.ones(len(frame), bool)
    for dim, hierarchy in table.hierarchies.items():
        leaf &= frame[dim].astype(str).isin(hierarchy.leaves).to_numpy()
    return np.flatnonzero(leaf)


def round_table_small_counts(
    table: Table, base: int, max_round: int | None = None, *,
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, SmallCountOutcome]:
    """Small-count rounding of one count table: its inner cells (every code a leaf) are
    rounded and every cell is published as the sum of its rounded inner cells.

    Returns
    -------
    rounded : ndarray
        Every cell's published count, in cell order.
    outcome : SmallCountOutcome

    Raises
    ------
    InputError
        Inner values that are not whole numbers >= 0 (naming the first such cell).
    """
    inner = inner_cells(table)
    values = table.values[inner]
    bad = (values < 0) | (values != np.round(values))
    if bad.any():
        label = table.cell_labels(inner[np.flatnonzero(bad)[:1]])[0]
        raise InputError(f"small-count rounding needs counts; cell {label} holds "
                         f"{values[bad][0]:g}")
    index = table.cells.index[inner]
    codes = (index.to_frame(index=False) if isinstance(index, pd.MultiIndex)
             else pd.DataFrame({table.dims[0]: index}))
    membership = contribution_matrix(codes, table)
    outcome = small_count_rounding(values, membership, base, max_round, seed=seed)
    return (membership.T @ outcome.rounded).astype(float), outcome


@dataclass(frozen=True, eq=False)
class SmallCountResult(ResultBase):
    """Outcome of :func:`round_small_counts`: linked count tables rounded consistently.

    Attributes
    ----------
    originals : tuple of Table
        The count tables.
    tables : tuple of Table
        The rounded tables (``value`` the rounded counts; each a sum of rounded inner
        cells).
    inner : pandas.DataFrame
        The inner cells: the codes of every dimension, ``original`` and ``rounded``.
    outcome : SmallCountOutcome
    base, max_round : int
    seed : object
    seconds : float
    """

    originals: tuple[Table, ...]
    tables: tuple[Table, ...]
    inner: pd.DataFrame
    outcome: SmallCountOutcome
    base: int
    max_round: int
    seed: object = None
    seconds: float = 0.0

    statuses = RoundingStatus

    @property
    def status(self) -> RoundingStatus:
        """``"rounded"``."""
        return RoundingStatus.ROUNDED

    def utility(self) -> pd.DataFrame:
        """Per table: cells, cells changed, sum and largest ``|deviation|``, root mean square
        deviation, and the Hellinger distance of the interior counts (the figures
        SmallCountRounding's ``HDutility`` reports)."""
        rows = []
        for name, original, rounded in zip(self.names, self.originals, self.tables,
                                           strict=True):
            rows.append({"table": name, **deviation_figures(original, rounded.values)})
        return pd.DataFrame(rows).set_index("table")

    @property
    def names(self) -> list[str]:
        return [" x ".join(t.dims) for t in self.originals]

    def summary(self) -> str:
        changed = int((self.inner["original"] != self.inner["rounded"]).sum())
        lines = [f"Small-count rounding to base {self.base} (counts up to {self.max_round}): "
                 f"{len(self.tables)} tables, consistent and additive",
                 f"  inner cells {len(self.inner)}, changed {changed}, iterations "
                 f"{self.outcome.iterations}, added by the disclosure check "
                 f"{self.outcome.checked}"]
        lines += ["  " + line for line in self.utility().to_string().splitlines()]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """The inner cells, original and rounded."""
        return self.inner.copy()

    def _dict_fields(self) -> dict:
        return {"base": self.base,
                "max_round": self.max_round, "iterations": self.outcome.iterations,
                "checked": self.outcome.checked,
                "seed": self.seed if isinstance(self.seed, int) else None,
                "utility": self.utility().reset_index().to_dict("records")}

    def to_report(self) -> Section:
        from sdcreport import Section

        section = Section(f"Small-count rounding to base {self.base}")
        section.add_text(
            "The inner cells (one count per combination of codes) are rounded so that no "
            f"published count from 1 to {self.max_round} is left unless it is a multiple of "
            f"{self.base}; every table is the sum of the rounded inner cells, so the tables "
            "are additive and agree on every cell they share.")
        section.add_metrics({"inner cells": len(self.inner),
                             "inner cells changed": int((self.inner["original"]
                                                         != self.inner["rounded"]).sum()),
                             "iterations": self.outcome.iterations,
                             "added by the disclosure check": self.outcome.checked})
        section.add_table(self.utility().reset_index(), "Deviations per table")
        return section


def deviation_figures(original: Table, rounded: np.ndarray) -> dict:
    """Cells, cells changed, sum and largest ``|deviation|``, root mean square deviation,
    and the Hellinger distance ``sqrt(sum (sqrt(p) - sqrt(q))^2 / 2)`` between the inner
    counts as proportions."""
    x = original.values
    d = np.asarray(rounded, dtype=float) - x
    inner = inner_cells(original)
    p, q = x[inner], np.asarray(rounded, dtype=float)[inner]
    hellinger = (np.sqrt(np.sum((np.sqrt(p / p.sum()) - np.sqrt(q / q.sum())) ** 2) / 2)
                 if p.sum() > 0 and q.sum() > 0 else 0.0)
    return {"cells": original.n_cells, "cells changed": int(np.count_nonzero(d)),
            "sum |deviation|": float(np.abs(d).sum()),
            "max |deviation|": float(np.abs(d).max(initial=0.0)),
            "rmse": float(np.sqrt(np.mean(d**2))) if len(d) else 0.0,
            "hellinger": float(hellinger)}


def round_small_counts(
    data: pd.DataFrame,
    dims: Sequence[Sequence[str]],
    *,
    base: int = 3,
    max_round: int | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total: str = DEFAULT_TOTAL,
    max_rows: int = MAX_ROWS,
    progress: Callable[[str], None] | None = None,
    seed: int | np.random.Generator | None = None,
) -> SmallCountResult:
    """Count tables from microdata, all rounded from the same rounded inner cells.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per unit.
    dims : sequence of sequences of str
        The dimensions of each table (``[["region", "age"], ["region", "sex"]]``); the inner
        cells cross every dimension of every table.
    base, max_round, max_rows
        Of :func:`small_count_rounding`.
    hierarchies : mapping of str to Hierarchy, optional
        As :meth:`tabsdc.Table.from_microdata`.
    progress : callable, optional
    seed : int or numpy.random.Generator, optional
        Keyword only.

    Returns
    -------
    SmallCountResult

    Examples
    --------
    >>> data = pd.DataFrame({"r": list("aaabbbbbbc"), "s": list("mfmmfmfmfm")})
    >>> result = round_small_counts(data, [["r"], ["r", "s"]], base=3, seed=1)
    >>> result.tables[0].cells["value"].to_dict()
    {'Total': 9.0, 'a': 3.0, 'b': 6.0, 'c': 0.0}
    """
    started = perf_counter()
    if not dims or any(not list(d) for d in dims):
        raise InputError("dims must list the dimensions of at least one table")
    union = list(dict.fromkeys(d for table in dims for d in table))
    full = Table.from_microdata(data, union, hierarchies=hierarchies, top=1,
                                keep_empty=False, total=total, progress=progress)
    hier = full.hierarchies
    positions = inner_cells(full)
    index = full.cells.index[positions]
    codes = (index.to_frame(index=False) if isinstance(index, pd.MultiIndex)
             else pd.DataFrame({union[0]: index}))
    counts = np.round(full.values[positions]).astype(np.int64)
    originals = tuple(
        Table.from_microdata(codes.assign(_n=counts), list(d), "_n",
                             hierarchies={k: hier[k] for k in d}, top=1, total=total)
        for d in dims)
    membership = sparse.hstack([contribution_matrix(codes, t) for t in originals]).tocsr()
    if progress is not None:
        progress(f"{len(counts):,} inner cells, {membership.shape[1]:,} published cells")
    outcome = small_count_rounding(counts, membership, base, max_round, max_rows=max_rows,
                                   seed=seed)
    tables = tuple(t.with_columns(value=(contribution_matrix(codes, t).T @ outcome.rounded)
                                  .astype(float)) for t in originals)
    inner = codes.assign(original=counts, rounded=outcome.rounded)
    return SmallCountResult(originals, tables, inner, outcome, check_base(base),
                            base - 1 if max_round is None else int(max_round),
                            seed=seed if isinstance(seed, int) else None,
                            seconds=perf_counter() - started)
