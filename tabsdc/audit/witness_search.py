"""Witnesses found in a published pattern: hypercubes whose corners are all hidden.

The audit of a large table is fast when it has witnesses (:mod:`tabsdc.audit.witnesses`):
deviations that move only hidden cells and satisfy every relation. A pattern from the
hypercube method brings its own; a pattern from anywhere else (another method, another
tool, a table published years ago) does not. This module finds them in the pattern alone.

In a table that is the cross product of hierarchies, the product of one vector per
dimension (a sibling pair or a vertical path, each continued down to a leaf) is a
deviation the relations allow (:mod:`tabsdc.suppression.hypercube`). Through each
sensitive hidden cell the search evaluates every such candidate on the pattern at once,
with **only hidden cells allowed as corners** and the room of each corner from the
intruder's a-priori bounds (``L = a - lb``, ``U = ub - a``), and keeps the candidate
that meets both protection levels (``upl`` with the cell moving up, ``lpl`` moving down),
or one per direction. What it returns is only a proposal: :func:`tabsdc.audit.audit`
checks every column on the table (relations, pattern, bounds) before it uses it, and gives
the cells no witness settles local or exact LPs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import scipy.sparse as sp

from tabsdc.errors import InputError
from tabsdc.progress import Deadline, ProgressReporter
from tabsdc.table import Table

__all__ = ["search_witnesses"]


def search_witnesses(
    table: Table,
    hidden: np.ndarray,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    batch: int = 128,
) -> sp.csc_array:
    """Hypercubes of hidden cells through the sensitive hidden cells, as witnesses.

    Parameters
    ----------
    table : Table
        A table with dimensions and hierarchies (its cells the cross product of their
        codes; a corner that is not a cell rules its hypercube out).
    hidden : ndarray of bool
        The cells the intruder does not see.
    prior, q
        The intruder's a-priori bounds, as in :func:`tabsdc.audit.audit`: each corner's
        room (``L = a - lb``, ``U = ub - a``, :func:`tabsdc.suppression.attacker.capacities`).
    progress : callable, optional
        Receives progress lines (within seconds, then at least every 10 s) and at the end
        how many sensitive cells a hypercube serves.
    deadline : Deadline, optional
        The search stops when it expires; the cells not reached have no witness (the
        audit then bounds them by LP, within the same deadline).
    batch : int
        Sensitive cells evaluated together (their grids held in memory at once).

    Returns
    -------
    sparse matrix (cells x hypercubes)
        One column of corner signs per hypercube found (at most two per sensitive cell).

    Raises
    ------
    InputError
        The table has no dimensions (e.g. read from a JJ file: relations only).

    Examples
    --------
    A 2 x 2 table with its margins; the four inner cells hidden form the hypercube of the
    sensitive cell ``(a, x)``: ``+1`` on ``(a, x)`` and ``(b, y)``, ``-1`` on the others.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"),
    ...                       "value": [5.0, 6, 7, 8]})
    >>> table = Table.from_aggregated(cells, ["r", "c"])
    >>> hidden = table.cells.index.isin([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
    >>> status = table.cells["status"].to_numpy().copy()
    >>> status[hidden] = "m"
    >>> status[table.cells.index.get_loc(("a", "x"))] = "u"
    >>> table = table.with_columns(status=status, upl=2.0, lpl=2.0)
    >>> found = search_witnesses(table, np.asarray(hidden))
    >>> column = found.toarray()[:, 0].tolist()
    >>> {label: sign for label, sign in zip(table.cells.index, column) if sign}
    {('a', 'x'): 1.0, ('a', 'y'): -1.0, ('b', 'x'): -1.0, ('b', 'y'): 1.0}
    """
    # the hypercube search and the rooms live with the methods that build patterns
    from tabsdc.suppression.attacker import capacities
    from tabsdc.suppression.hypercube import (
        HypercubeSearch,
        choose_hypercubes,
        deviation_columns,
    )

    if not table.dims:
        raise InputError("searching witnesses needs a table with dimensions and hierarchies "
                         "(this one has relations only, e.g. read from a JJ file); audit it "
                         "without witnesses")
    hidden = np.asarray(hidden, dtype=bool)
    cells = table.cells
    sensitive = np.flatnonzero(hidden & (cells["status"].to_numpy() == "u"))
    levels = cells[["upl", "lpl"]].to_numpy(float)[sensitive]
    search = HypercubeSearch(table, *capacities(table, prior, q), np.zeros(table.n_cells),
                             hidden)
    pattern = search.pattern(hidden)
    deadline = deadline or Deadline(None)
    reporter = ProgressReporter(progress, "witness search", len(sensitive), unit="cells")
    cubes: list = []
    both = searched = 0
    for start in range(0, len(sensitive), batch):  # a batch's grids held at a time
        if deadline.expired:
            break
        reporter.update(start, f"{len(cubes):,} hypercubes of hidden cells")
        cells, rows = sensitive[start:start + batch], levels[start:start + batch]
        proposals = search.batch_cheapest(cells, pattern, rows)
        cubes += [p.cube for p in proposals if p is not None]
        both += sum(p is not None for p in proposals)
        # no candidate meets both levels: one hypercube per direction where there is one
        for k in (k for k, p in enumerate(proposals) if p is None):
            cubes += choose_hypercubes(search, int(cells[k]), pattern,
                                       (float(rows[k, 0]), float(rows[k, 1])))[0]
        searched = start + len(cells)
    reporter.finish(searched, f"{len(cubes):,} hypercubes of hidden cells; {both:,} of the "
                    f"{len(sensitive):,} sensitive hidden cells have one meeting both levels")
    return deviation_columns(cubes, table.n_cells)
