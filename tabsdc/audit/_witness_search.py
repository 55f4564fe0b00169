"""Witnesses found in a published pattern: hypercubes whose corners are all hidden.

The audit of a large table is fast when it has witnesses (:mod:`tabsdc.audit._witnesses`):
deviations that move only hidden cells and satisfy every relation. A pattern from the
hypercube method brings its own; a pattern from anywhere else (another method, another
tool, a table published years ago) does not. This module finds them in the pattern alone.

In a table that is the cross product of hierarchies, the product of one vector per
dimension (a sibling pair or a vertical path, each continued down to a leaf) is a
deviation the relations allow (:mod:`tabsdc._hypercubes`). Through each
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
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from tabsdc._bounds import capacities
from tabsdc._errors import InputError
from tabsdc._hypercubes import (
    Cover,
    HypercubeSearch,
    avoid_insiders,
    choose_hypercubes,
    deviation_columns,
)
from tabsdc._parallel import parallel_map, resolve_jobs, worker_count
from tabsdc._progress import Deadline, ProgressReporter
from tabsdc._respondents import Insiders
from tabsdc._table import Table


def search_witnesses(
    table: Table,
    hidden: np.ndarray,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    insiders: Insiders | None = None,
    batch: int = 128,
    n_jobs: int | None = 1,
    client: Any = None,
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
        room (``L = a - lb``, ``U = ub - a``, :func:`tabsdc._bounds.capacities`).
    progress : callable, optional
        Receives progress lines (within seconds, then at least every 10 s) and at the end
        how many sensitive cells a hypercube serves.
    deadline : Deadline, optional
        The search stops when it expires; the cells not reached have no witness (the
        audit then bounds them by LP, within the same deadline).
    insiders : Insiders, optional
        The respondents of single-contributor cells (:mod:`tabsdc.audit._insider`): a cell
        whose hypercube has some respondent's cell as a corner also gets one clear of those
        respondents where there is one (as the hypercube method's own,
        :func:`tabsdc._hypercubes.avoid_insiders`), so that the insider attack
        finds its proofs among the witnesses too.
    batch : int
        Sensitive cells evaluated together (their grids held in memory at once).
    n_jobs, client
        Share the sensitive cells among processes or a Dask cluster
        (:func:`tabsdc._parallel.parallel_map`: one slice each, in order; each cell's
        hypercube does not depend on the others', so the witnesses are the same).

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
    if not table.dims:
        raise InputError("searching witnesses needs a table with dimensions and hierarchies "
                         "(this one has relations only, e.g. read from a JJ file); audit it "
                         "without witnesses")
    hidden = np.asarray(hidden, dtype=bool)
    sensitive = np.flatnonzero(hidden & (table.cells["status"].to_numpy() == "u"))
    deadline = deadline or Deadline(None)
    search = _Search(table, hidden, prior, q, batch, insiders)
    if client is None and resolve_jobs(n_jobs) <= 1:
        cubes, both = search.cubes(sensitive, deadline, progress)
    else:  # one slice per worker: each builds the search once
        workers = worker_count(n_jobs, client)
        slices = np.array_split(sensitive, max(1, min(len(sensitive), workers)))
        if progress is not None:
            progress(f"witness search: {len(sensitive):,} sensitive hidden cells in "
                     f"{len(slices)} parallel tasks")
        parts = parallel_map(search.task, [(part, deadline.solver_limit()) for part in slices],
                             n_jobs=n_jobs, client=client)
        cubes = [cube for part, _ in parts for cube in part]
        both = sum(n for _, n in parts)
        if progress is not None:
            progress(f"witness search: {_found(cubes, both, len(sensitive))}")
    return deviation_columns(cubes, table.n_cells)


def _found(cubes: list, both: int, sensitive: int) -> str:
    return (f"{len(cubes):,} hypercubes of hidden cells; {both:,} of the {sensitive:,} "
            "sensitive hidden cells have one meeting both levels")


@dataclass(frozen=True)
class _Search:
    """The search on one table and pattern (picklable, for parallel tasks)."""

    table: Table
    hidden: np.ndarray
    prior: str
    q: float | None
    batch: int
    insiders: Insiders | None

    def task(self, task: tuple[np.ndarray, float | None]) -> tuple[list, int]:
        cells, seconds = task
        return self.cubes(cells, Deadline(seconds), None)

    def cubes(self, sensitive: np.ndarray, deadline: Deadline,
              progress: Callable[[str], None] | None) -> tuple[list, int]:
        """The hypercubes through ``sensitive`` (in order) and how many cells have one
        meeting both levels."""
        table, hidden = self.table, self.hidden
        levels = table.cells[["upl", "lpl"]].to_numpy(float)[sensitive]
        search = HypercubeSearch(table, *capacities(table, self.prior, self.q),
                                 np.zeros(table.n_cells), hidden)
        pattern = search.pattern(hidden)
        reporter = ProgressReporter(progress, "witness search", len(sensitive), unit="cells")
        structures: dict[int, list] = {}
        both = searched = 0
        for start in range(0, len(sensitive), self.batch):  # a batch's grids at a time
            if deadline.expired:
                break
            reporter.update(start, f"{len(structures):,} cells with hypercubes of hidden cells")
            cells, rows = sensitive[start:start + self.batch], levels[start:start + self.batch]
            for cell, row, proposal in zip(cells.tolist(), rows.tolist(), search.batch_cheapest(
                    cells, pattern, rows), strict=True):
                if proposal is not None:
                    structures[cell] = [proposal.cube]
                    both += 1
                else:  # none meets both levels: one per direction where there is one
                    structures[cell] = choose_hypercubes(search, cell, pattern, tuple(row))[0]
            searched = start + len(cells)
        if self.insiders is not None and not deadline.expired:
            cover = Cover(hidden, [], True, structures, {
                cell: tuple(row) for cell, row in zip(sensitive.tolist(), levels.tolist(),
                                                      strict=True) if cell in structures})
            avoid_insiders(search, cover, self.insiders, hidden, progress, deadline)
        cubes = [cube for cell in sorted(structures) for cube in structures[cell]]
        reporter.finish(searched, _found(cubes, both, len(sensitive)))
        return cubes, both
