"""Modular suppression of hierarchical tables: sub-tables solved one by one (the HiTaS idea).

A hierarchical table splits into small non-hierarchical sub-tables: one for every choice of a
parent code per dimension (the total for a flat dimension), holding that parent and its direct
children in every dimension, with the relations among those cells. Every relation of the table
lies in a sub-table; a relation along one dimension at a code that is both a child and a parent
in another dimension lies in two (they share that margin). Sub-tables are protected top-down
(coarsest parents first), each by the optimal method: primary cells keep their protection
levels and cells suppressed earlier are treated as primaries of the sub-tables they appear in
(with the smallest primary level of the sub-table that suppressed them, at most their value),
as tau-ARGUS's modular method does. When a sub-table suppresses a cell it shares with a sub-
table already done, that sub-table is queued again (backtracking) until nothing changes.

Sub-tables ignore each other's slack, so every requirement of the whole table is checked
at the end; any requirement that still fails is repaired by routing on the whole table (then
cleaned up), so the result always passes the audit. Under a deadline the sub-tables stop
when it expires and the routing repairs what they left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._progress import Deadline, ProgressReporter, heartbeat
from tabsdc._structure import CellIndexer
from tabsdc._table import Table


def cell_coordinates(table: Table) -> np.ndarray:
    """Position of every cell's code in each dimension's hierarchy (cells x dimensions)."""
    if not table.dims:
        raise InputError("this method needs a table with dimensions and hierarchies")
    hierarchies = list(table.hierarchies.values())
    index = table.cells.index
    if len(hierarchies) == 1:
        return pd.Categorical(index, categories=hierarchies[0].codes).codes[:, None] \
            .astype(np.int64)
    return np.column_stack([
        pd.Categorical(index.get_level_values(d), categories=h.codes).codes
        for d, h in enumerate(hierarchies)]).astype(np.int64)


def subtables(table: Table) -> dict[tuple[int, ...], np.ndarray]:
    """Cells (positions) of every sub-table, keyed by its parent code per dimension."""
    hierarchies = list(table.hierarchies.values())
    coords = cell_coordinates(table)
    options = []
    for d, h in enumerate(hierarchies):
        is_parent = np.isin(np.arange(len(h)), [h.codes.index(c) for c in h.parent_codes])
        parent = h.parent_positions()
        code = coords[:, d]
        own = np.where(is_parent[code], code, -1)  # the cell as the sub-table's total
        above = parent[code]  # the cell as a child of its parent
        options.append(np.column_stack([own, above]))
    keys, cells = [], []
    sizes = CellIndexer(tuple(len(h) for h in hierarchies))
    for choice in np.ndindex(*(2,) * len(hierarchies)):
        parents = np.column_stack([options[d][:, c] for d, c in enumerate(choice)])
        valid = (parents >= 0).all(axis=1)
        keys.append(sizes.keys(parents[valid]))
        cells.append(np.flatnonzero(valid))
    keys, cells = np.concatenate(keys), np.concatenate(cells)
    order = np.lexsort((cells, keys))
    keys, cells = keys[order], cells[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    bounds = np.r_[starts, len(keys)]
    out = {}
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        key = tuple(int(x) for x in sizes.coords(keys[a:a + 1])[0])
        out[key] = np.unique(cells[a:b])
    return out


def modular_pattern(
    table: Table,
    solve_subtable: Callable[[Table, np.ndarray], np.ndarray | None],
    primary_levels: tuple[np.ndarray, np.ndarray],
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> tuple[np.ndarray, int]:
    """Suppress sub-table by sub-table; returns the pattern and the number of sub-table solves.

    ``solve_subtable`` takes a sub-Table and its cells' positions in ``table`` and returns
    its protected pattern (boolean, in the sub-table's cell order), or None when it found
    none in time. The loop stops when ``deadline`` expires or a sub-table finds no pattern.
    """
    deadline = deadline or Deadline(None)
    lpl, upl = primary_levels
    status = table.cells["status"].to_numpy().copy()
    values = table.values
    hidden = np.isin(status, HIDDEN_STATUSES)
    forced_level = np.zeros(table.n_cells)
    parts = subtables(table)
    depth = {key: sum(h.depth(h.codes[p]) for h, p in zip(table.hierarchies.values(), key,
                                                            strict=True))
             for key in parts}
    order = sorted(parts, key=lambda key: (depth[key], key))
    done: set[tuple[int, ...]] = set()
    membership: dict[int, list[tuple[int, ...]]] = {}
    for key, cells in parts.items():
        for j in cells.tolist():
            membership.setdefault(j, []).append(key)
    A = sp.csr_array(table.A)
    absA = abs(A)
    row_size = np.diff(A.indptr)
    queue = deque(order)
    queued = set(order)
    solves = 0
    reporter = ProgressReporter(progress, "sub-tables", len(order), unit="sub-tables solved")
    while queue and not deadline.expired:
        key = queue.popleft()
        queued.discard(key)
        cells = parts[key]
        inside = np.zeros(table.n_cells)
        inside[cells] = 1.0
        rows = np.flatnonzero(absA @ inside == row_size)
        sub_status = np.where(hidden[cells], "u", status[cells])
        sub_status = np.where(status[cells] == "z", "z", sub_status)
        level_low = np.where(status[cells] == "u", lpl[cells], forced_level[cells])
        level_up = np.where(status[cells] == "u", upl[cells], forced_level[cells])
        sub = Table(
            table.cells.iloc[cells].assign(status=sub_status, lpl=level_low, upl=level_up),
            A[rows][:, cells], table.b[rows])
        if not (sub_status == "u").any():
            done.add(key)
            continue
        with heartbeat(progress, f"sub-table {solves + 1} ({len(cells):,} cells)", quiet=True):
            pattern = solve_subtable(sub, cells)
        if pattern is None:
            break
        solves += 1
        reporter.update(len(done), f"{len(queue):,} queued")
        done.add(key)
        new = cells[pattern & ~hidden[cells]]
        if len(new) == 0:
            continue
        primaries = sub_status == "u"
        positive = np.concatenate([level_low[primaries], level_up[primaries]])
        positive = positive[positive > 0]
        level = positive.min() if len(positive) else 0.0
        hidden[new] = True
        status[new] = "m"
        forced_level[new] = np.minimum(np.abs(values[new]), level)
        for j in new.tolist():  # backtrack into sub-tables already done that share the cell
            for other in membership[j]:
                if other != key and other not in queued and other in done:
                    queue.append(other)
                    queued.add(other)
    reporter.finish(len(done), "" if not queue else deadline.why)
    return hidden, solves
