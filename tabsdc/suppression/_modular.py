"""Modular suppression of hierarchical tables: HiTaS's sub-tables, solved wave by wave.

A hierarchical table splits into small non-hierarchical sub-tables: one for every choice of a
parent code per dimension (the total for a flat dimension), holding that parent and its direct
children in every dimension, with the relations among those cells. Every relation of the table
lies in a sub-table; a relation along one dimension at a code that is both a child and a parent
in another dimension lies in two (they share that margin).

Every cell has one *home*: the coarsest sub-table holding it (in each dimension the parent of
its code, or the code itself at the top of a hierarchy). Its depth is the sum of the depths of
its parent codes. HiTaS (de Wolf 2002; tau-ARGUS manual 2.10) protects the sub-tables top-down:
a sub-table may hide only the cells whose home it is; its other cells are margins decided by
coarser sub-tables and are fixed there: a hidden margin is protected like a primary (a cell
hidden as a secondary with the smallest primary level of the sub-table that hid it, at most
its value), a published margin stays published. Two sub-tables of the same depth then never
hide the same cell, so each depth is one *wave* of independent sub-tables, solved in parallel
(``n_jobs``, a Dask ``client``: :func:`tabsdc._parallel.parallel_map`), each by the optimal
method with its own time limit (tau-ARGUS's ``MOD(t, minutes)``: the minutes are per
sub-table). A sub-table stopped by its limit keeps its best protecting pattern; one without a
pattern by then is routed on its own cells (the heuristic on that sub-table only).

When fixed margins leave a sub-table no protecting pattern (empty cells, or levels its
interior cannot carry), it is solved again with its published margins free (backtracking);
every sub-table already solved that holds a cell hidden that way is queued again, in the wave
of its depth, until nothing changes. Cells are only ever added, so this ends.

Identical sub-tables (the same relations, values, bounds, statuses, levels and costs) have
the same pattern: each is solved once per call (a cache keyed on a hash of those arrays).
Sub-tables ignore each other's slack, so the caller checks every requirement of the whole
table at the end and routes what fails (:func:`tabsdc.suppression._methods.modular_method`);
:func:`publish_unneeded` then publishes again the routed cells that no requirement needs,
tested one at a time against fresh certificates.

Examples
--------
>>> import pandas as pd
>>> from tabsdc import Hierarchy
>>> regions = Hierarchy.from_parent_child({"N": "Total", "S": "Total", "N1": "N", "N2": "N",
...                                        "S1": "S", "S2": "S"})
>>> data = pd.DataFrame({"reg": ["N1", "N2", "S1", "S2"] * 2, "act": ["a"] * 4 + ["b"] * 4,
...                      "value": [5.0, 9, 7, 4, 6, 8, 3, 10]})
>>> table = Table.from_aggregated(data, ["reg", "act"], hierarchies={"reg": regions})
>>> sorted(table.cell_labels(subtables(table)[(1, 0)].tolist()))[:3]
['reg=N x act=Total', 'reg=N x act=a', 'reg=N x act=b']
>>> [(key, subtable_depth(table, key)) for key in subtables(table)]
[((0, 0), 0), ((1, 0), 1), ((4, 0), 1)]
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from time import perf_counter
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._parallel import parallel_map, worker_count
from tabsdc._progress import Deadline, ProgressReporter, heartbeat
from tabsdc._structure import CellIndexer
from tabsdc._table import Table
from tabsdc.audit._insider import insider_proofs
from tabsdc.suppression._attacker import Attacker, Requirement

#: Seconds between two progress lines while sub-tables are being solved (at most).
PROGRESS_INTERVAL = 10.0
#: Seconds :func:`publish_unneeded` takes at most when the call has no time limit (each
#: try re-proves the requirements the cell serves: on the 3,162-cell 3-D benchmark job
#: 4 s for the first certificates, then about 3 cells a second, a fifth of them published:
#: 1.7 % of the routed pattern's cost in 12 s, 2.0 % in 20 s, 2.2 % in 2 minutes).
CLEAN_UP_SECONDS = 12.0
#: Relative gap at which the optimal method stops on a sub-table (:func:`modular_pattern`'s
#: ``solve``). The sub-tables' optima are not the table's (the requirements they leave
#: failing are routed on the whole table after them), and most of a sub-table's rounds
#: only prove an incumbent found early: on the 3,162-cell benchmark job
#: (``MOD(1,5,1,1,1)``, docs/performance.md) one 120-cell sub-table took 12 rounds, 11 s,
#: to prove optimal a pattern 0.4 % cheaper than its first routed one.
SUBTABLE_GAP = 0.05


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


def _parent_choices(table: Table) -> list[np.ndarray]:
    """Per dimension, each cell's two possible sub-table parents: its own code when that
    code has children (the cell as the sub-table's margin), and its code's parent (the cell
    as a child); -1 where there is none."""
    coords = cell_coordinates(table)
    options = []
    for d, h in enumerate(table.hierarchies.values()):
        is_parent = np.isin(np.arange(len(h)), [h.codes.index(c) for c in h.parent_codes])
        code = coords[:, d]
        options.append(np.column_stack([np.where(is_parent[code], code, -1),
                                        h.parent_positions()[code]]))
    return options


def subtables(table: Table) -> dict[tuple[int, ...], np.ndarray]:
    """Cells (positions) of every sub-table, keyed by its parent code per dimension."""
    hierarchies = list(table.hierarchies.values())
    options = _parent_choices(table)
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


def home_subtables(table: Table) -> np.ndarray:
    """Each cell's home sub-table (cells x dimensions of parent positions): the coarsest
    sub-table holding it, the one that decides whether it is hidden."""
    return np.column_stack([np.where(choice[:, 1] >= 0, choice[:, 1], choice[:, 0])
                            for choice in _parent_choices(table)])


def subtable_depth(table: Table, key: tuple[int, ...]) -> int:
    """A sub-table's depth: the sum of its parent codes' depths (its wave)."""
    return sum(h.depth(h.codes[p]) for h, p in zip(table.hierarchies.values(), key,
                                                   strict=True))


@dataclass(frozen=True)
class SubtableTask:
    """One sub-table to protect: statuses ``u`` (protect: primaries and hidden margins, with
    their levels), ``z`` (stays published: empty cells and published margins), ``s`` (may be
    hidden); ``cost`` per cell; ``seconds``, its own time limit (None: none), on ``clock``;
    ``singletons``: protect against the respondents of its single-contributor primaries too
    (as :func:`tabsdc.suppression.suppress`); ``until``: the wall-clock time
    (:func:`time.time`) at which the sub-tables' share of the time ends, for a task that
    waits in a pool's queue (None: none)."""

    table: Table
    cost: np.ndarray
    seconds: float | None
    prior: str = "table"
    q: float | None = None
    singletons: bool = False
    clock: Callable[[], float] = perf_counter
    until: float | None = None

    def fingerprint(self) -> str:
        """Hash of everything the pattern depends on: relations, values, bounds, statuses,
        levels and costs (not the codes, nor the time limit)."""
        table = self.table
        cells = table.cells
        A = sp.csr_array(table.A)
        digest = hashlib.blake2b(digest_size=20)
        for array in (A.indptr, A.indices, A.data, table.b, table.values, self.cost,
                      *(cells[c].to_numpy(float) for c in ("lb", "ub", "lpl", "upl")),
                      cells["status"].to_numpy().astype("U1")):
            data = np.ascontiguousarray(array)
            digest.update(str(data.shape).encode() + str(data.dtype).encode())
            digest.update(data.tobytes())
        digest.update(f"{self.prior} {self.q} {self.singletons}".encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class SubtableOutcome:
    """The pattern of one sub-table (boolean, in its cell order; None: none), how it was
    found (``"optimal"``; ``"near-optimal"``: within :data:`SUBTABLE_GAP` of its bound;
    ``"feasible"``: the best at its time limit; ``"routed"``: none by then, routed on its
    own cells; ``"none"``: its routing ran out of time too; ``"infeasible"``: no pattern of
    its own cells protects it; ``"not started"``: its task's ``until`` had passed) and the
    seconds its optimisation took on the task's clock."""

    pattern: np.ndarray | None
    how: str
    seconds: float


@dataclass
class ModularStats:
    """What the sub-tables did: how many there are, distinct solves, solves saved by
    identical sub-tables, how many stopped within :data:`SUBTABLE_GAP` of their bound, at
    their time limit (best pattern kept) or were routed on their own cells, how many needed
    their margins freed (backtracking) or had no pattern within their own cells, the waves,
    and each solve's seconds (task clock)."""

    subtables: int = 0
    solved: int = 0
    reused: int = 0
    near_optimal: int = 0
    time_limited: int = 0
    routed: int = 0
    margins_freed: int = 0
    without_pattern: int = 0
    waves: int = 0
    seconds: list[float] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the progress log."""
        return (f"{self.solved:,} solved, {self.reused:,} reused from identical sub-tables, "
                f"{self.near_optimal:,} stopped within {SUBTABLE_GAP:.0%} of their bound, "
                f"{self.time_limited:,} stopped at their time limit (best pattern kept), "
                f"{self.routed:,} routed on their own cells, {self.margins_freed:,} with "
                f"margins freed, {self.waves:,} waves")


class _SubtableProgress:
    """Progress lines while sub-tables are solved: done/total, rate and time left after each
    one (at most every ``PROGRESS_INTERVAL`` seconds); a long sub-table or wave runs inside a
    quiet :func:`~tabsdc._progress.heartbeat`, which speaks every 10 s while it lasts."""

    def __init__(self, progress: Callable[[str], None] | None, total: int) -> None:
        self.progress = progress
        self.reporter = ProgressReporter(progress, "sub-tables", total, unit="sub-tables",
                                         interval=PROGRESS_INTERVAL)
        self.done = 0
        self.note = ""

    def tick(self, done: int = 0) -> None:
        self.done += done
        self.reporter.update(self.done, self.note)

    def step(self, task: str) -> contextlib.AbstractContextManager:
        return heartbeat(self.progress, task, quiet=True, interval=PROGRESS_INTERVAL)

    def finish(self, note: str) -> None:
        self.reporter.finish(self.done, note)


@dataclass
class _Layout:
    """The sub-tables of a table: their cells, relations, depths and homes."""

    parts: dict[tuple[int, ...], np.ndarray]
    rows: dict[tuple[int, ...], np.ndarray]
    depth: dict[tuple[int, ...], int]
    home: np.ndarray  # per cell, the key id of its home sub-table
    key_id: dict[tuple[int, ...], int]
    pair_key: np.ndarray  # (sub-table, cell) pairs: the sub-table's id ...
    pair_cell: np.ndarray  # ... and the cell

    @classmethod
    def of(cls, table: Table) -> _Layout:
        parts = subtables(table)
        A = sp.csr_array(table.A)
        absA, row_size = abs(A), np.diff(A.indptr)
        rows = {}
        for key, cells in parts.items():
            inside = np.zeros(table.n_cells)
            inside[cells] = 1.0
            rows[key] = np.flatnonzero(absA @ inside == row_size)
        key_id = {key: k for k, key in enumerate(parts)}
        sizes = CellIndexer(tuple(len(h) for h in table.hierarchies.values()))
        code_of = dict(zip(sizes.keys(np.array(list(parts))).tolist(), range(len(parts)),
                           strict=True))
        home = np.array([code_of.get(k, -1) for k in sizes.keys(home_subtables(table))
                         .tolist()], dtype=np.int64)
        pair_key = np.concatenate([np.full(len(c), key_id[k]) for k, c in parts.items()])
        pair_cell = np.concatenate(list(parts.values()))
        depth = {key: subtable_depth(table, key) for key in parts}
        return cls(parts, rows, depth, home, key_id, pair_key, pair_cell)

    def holders(self, cells: np.ndarray) -> set[tuple[int, ...]]:
        """The sub-tables holding any of ``cells``."""
        keys = list(self.parts)
        return {keys[k] for k in np.unique(self.pair_key[np.isin(self.pair_cell, cells)])}


def modular_pattern(
    table: Table,
    cost: np.ndarray,
    primary_levels: tuple[np.ndarray, np.ndarray],
    solve: Callable[[SubtableTask], SubtableOutcome],
    *,
    subtable_limit: float | None = None,
    prior: str = "table",
    q: float | None = None,
    singletons: bool = False,
    deadline: Deadline | None = None,
    progress: Callable[[str], None] | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
    clock: Callable[[], float] = perf_counter,
) -> tuple[np.ndarray, ModularStats]:
    """Protect the sub-tables of ``table`` wave by wave (module text); returns the hidden
    cells and what the sub-tables did.

    Parameters
    ----------
    table : Table
        A hierarchical table; status ``u`` primaries, ``m`` hidden, ``z`` never hidden.
    cost : ndarray
        Cost per cell.
    primary_levels : (ndarray, ndarray)
        Lower and upper protection levels per cell.
    solve : callable
        Protects one :class:`SubtableTask` (:func:`tabsdc.suppression._methods.protect_subtable`;
        module level, so that it pickles).
    subtable_limit : float, optional
        Seconds each sub-table's optimisation may take (None: no limit of its own).
    prior, q, singletons
        The intruder's a-priori knowledge and the respondents of single-contributor
        primaries, as in :func:`tabsdc.suppression.suppress` (within each sub-table).
    deadline : Deadline, optional
        The sub-tables together stop when it expires (those left are not protected here).
    progress : callable, optional
        Progress lines: sub-tables done of total, rate and time left, at least every 10 s.
    n_jobs, client
        Sub-tables of a wave solved in parallel (:func:`tabsdc._parallel.parallel_map`); the
        pattern does not depend on them.
    clock : callable
        The sub-tables' clock (a test's deterministic clock; with ``n_jobs=1`` only).
    """
    deadline = deadline or Deadline(None)
    lpl, upl = primary_levels
    status = table.cells["status"].to_numpy().copy()
    values = table.values
    hidden = np.isin(status, HIDDEN_STATUSES)
    forced_level = np.zeros(table.n_cells)
    layout = _Layout.of(table)
    A = sp.csr_array(table.A)
    stats = ModularStats(subtables=len(layout.parts))
    cache: dict[str, SubtableOutcome] = {}
    reporter = _SubtableProgress(progress, len(layout.parts))
    solved_once: set[tuple[int, ...]] = set()

    def task_of(key: tuple[int, ...], margins_free: bool) -> SubtableTask | None:
        cells = layout.parts[key]
        own = layout.home[cells] == layout.key_id[key]
        sub_status = np.where(hidden[cells], "u", "s")
        sub_status[(status[cells] == "z") | ~(own | margins_free | hidden[cells])] = "z"
        primary = status[cells] == "u"
        level_low = np.where(primary, lpl[cells], forced_level[cells])
        level_up = np.where(primary, upl[cells], forced_level[cells])
        if not ((sub_status == "u") & ((level_low > 0) | (level_up > 0))).any():
            return None
        rows = layout.rows[key]
        sub = Table(table.cells.iloc[cells].assign(status=sub_status, lpl=level_low,
                                                   upl=level_up),
                    A[rows][:, cells], table.b[rows])
        return SubtableTask(sub, cost[cells], subtable_limit, prior, q, singletons, clock)

    def fair_limit(queued: int, workers: int) -> float | None:
        """Seconds for each of the next solves: at most ``subtable_limit``; under a time
        limit also at most the time left, times ``workers``, over the solves still to come
        (``queued`` of this wave, and each pending sub-table counted as often as the
        sub-tables were solved on average so far: backtracking solves some again)."""
        if not deadline.limited:
            return subtable_limit
        again = max(stats.solved / max(len(solved_once), 1), 1.0)
        share = deadline.remaining() * workers / (queued + again * len(pending))
        return deadline.solver_limit(share if subtable_limit is None
                                     else min(share, subtable_limit))

    def solve_wave(keys: list[tuple[int, ...]], tasks: list[SubtableTask]
                   ) -> dict[tuple[int, ...], SubtableOutcome]:
        """Solve the distinct ones of ``tasks`` not in the cache; the outcome per key."""
        prints = [task.fingerprint() for task in tasks]
        fresh = {p: t for p, t in zip(prints, tasks, strict=True) if p not in cache}
        stats.reused += len(tasks) - len(fresh)
        order = list(fresh)
        # how many sub-tables, seen for the first time, each solve completes
        first = [p for key, p in zip(keys, prints, strict=True) if key not in solved_once]
        reporter.tick(sum(p not in fresh for p in first))
        owners = [first.count(p) for p in order]
        workers = worker_count(n_jobs, client)
        if workers <= 1:
            for k, (p, n) in enumerate(zip(order, owners, strict=True)):
                if deadline.expired:
                    break
                task = replace(fresh[p], seconds=fair_limit(len(order) - k, 1))
                with reporter.step(f"sub-table {stats.solved + k + 1} "
                                   f"({task.table.n_cells:,} cells)"):
                    cache[p] = solve(task)
                reporter.tick(n)
        else:  # a task waiting for a worker starts late: it also stops at ``until``
            until = deadline.wall_clock_end()
            seconds = fair_limit(len(order), workers)
            limited = [replace(fresh[p], seconds=seconds, until=until) for p in order]
            with reporter.step(f"{len(limited):,} sub-tables in parallel"):
                outcomes = parallel_map(solve, limited, n_jobs=n_jobs, client=client,
                                        on_result=lambda k: reporter.tick(owners[k]),
                                        fresh_workers=True)
            cache.update((p, outcome) for p, outcome in zip(order, outcomes, strict=True)
                         if outcome.how != "not started")
        for p in order:
            if p in cache:
                outcome = cache[p]
                stats.solved += 1
                stats.seconds.append(outcome.seconds)
                stats.near_optimal += outcome.how == "near-optimal"
                stats.time_limited += outcome.how in ("feasible", "routed", "none")
                stats.routed += outcome.how == "routed"
        return {key: cache[p] for key, p in zip(keys, prints, strict=True) if p in cache}

    def _hide(key: tuple[int, ...], pattern: np.ndarray, sub: Table) -> np.ndarray:
        """Hide the sub-table's new cells (secondaries) with their forced level: the
        smallest positive level of the cells it protected, at most their value."""
        cells = layout.parts[key]
        new = cells[pattern & ~hidden[cells]]
        if len(new):
            protected = (sub.cells["status"] == "u").to_numpy()
            levels = np.concatenate([sub.cells["lpl"].to_numpy()[protected],
                                     sub.cells["upl"].to_numpy()[protected]])
            hidden[new] = True
            status[new] = "m"
            forced_level[new] = np.minimum(np.abs(values[new]), levels[levels > 0].min())
        return new

    pending = set(layout.parts)
    try:
        while pending and not deadline.expired:
            depth = min(layout.depth[key] for key in pending)
            wave = sorted(key for key in pending if layout.depth[key] == depth)
            pending.difference_update(wave)
            stats.waves += 1
            reporter.note = f"wave {stats.waves} (depth {depth}): {len(wave):,} sub-tables"
            tasks = {key: task_of(key, False) for key in wave}
            todo = [key for key in wave if tasks[key] is not None]
            reporter.tick(sum(key not in solved_once and tasks[key] is None for key in wave))
            outcomes = solve_wave(todo, [tasks[key] for key in todo])
            solved_once.update(wave)
            stuck = [key for key in todo
                     if key in outcomes and outcomes[key].how == "infeasible"]
            if stuck:  # backtracking: these sub-tables' published margins become free
                tasks.update({key: task_of(key, True) for key in stuck})
                outcomes.update(solve_wave(stuck, [tasks[key] for key in stuck]))
                stats.margins_freed += len(stuck)
            for key in todo:
                outcome = outcomes.get(key)
                if outcome is None or outcome.pattern is None:
                    stats.without_pattern += outcome is not None
                    continue
                new = _hide(key, outcome.pattern, tasks[key].table)
                pending.update((layout.holders(new) - {key}) & solved_once)
    finally:
        reporter.finish(f"{deadline.why}; {stats.summary()}" if deadline.hit
                        else stats.summary())
    return hidden, stats


def publish_unneeded(
    reqs: Sequence[Requirement],
    attacker: Attacker,
    cost: np.ndarray,
    pattern: np.ndarray,
    removable: np.ndarray,
    *,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> np.ndarray:
    """Publish again the ``removable`` hidden cells that the requirements ``reqs`` do not
    need; every other requirement must hold without the removable cells (the modular
    method: ``reqs`` are those the sub-tables failed, ``removable`` the cells routing added).

    Every requirement gets fresh certificates on ``pattern``: a least-deviation attack of
    its own against the outside intruder and one per respondent every such attack moves
    (:func:`tabsdc.audit._insider.insider_proofs`; none borrowed from other requirements,
    so each one is small and a cell is used by few). Removable cells no certificate moves
    are published at once. The others are tried one at a time, most expensive first (most of
    them are needed, so batches would mostly fail and be tried again in halves): a cell is
    published when every requirement whose certificates move it is proved again without it
    (fresh certificates), else it stays hidden. Every step keeps the pattern protecting,
    so when ``deadline`` expires (without a limit: after :data:`CLEAN_UP_SECONDS`) the
    pattern so far is returned.

    Examples
    --------
    ``x0 + x1 + x2 = x3``: x0 needs 2 up; with x1 and x2 both hidden x0 moves against
    x1 alone, so x2 is published again (x3, the total, is not removable).

    >>> import scipy.sparse as sp
    >>> from tabsdc.suppression._attacker import UP
    >>> attacker = Attacker(sp.csr_array([[1.0, 1, 1, -1]]), np.full(4, 5.0), np.full(4, 5.0))
    >>> pattern = np.array([True, True, True, False])
    >>> removable = np.array([False, True, True, False])
    >>> publish_unneeded([Requirement(0, UP, 2.0)], attacker, np.array([1.0, 1, 3, 9]),
    ...                  pattern, removable).tolist()
    [True, True, False, False]
    """
    deadline = deadline or Deadline(None)
    if not deadline.limited:
        deadline = Deadline(CLEAN_UP_SECONDS, clock=deadline.clock)
    pattern = np.asarray(pattern, dtype=bool).copy()
    candidates = removable & pattern
    if not reqs or not candidates.any():
        return pattern

    failures = np.zeros(len(reqs), dtype=np.int64)  # tries each requirement has failed

    def certify(ks: Sequence[int]) -> dict[int, np.ndarray] | None:
        """The cells every certificate of each requirement moves, or None when one fails
        (those that failed before are tried first: most tries fail, and on few of them)."""
        out = {}
        for k in sorted(ks, key=lambda k: -failures[k]):
            proofs, failed = insider_proofs(reqs[k], attacker.insiders, attacker.certificate,
                                            stop_at_failure=True, split=True)
            if failed:
                failures[k] += 1
                return None
            out[k] = np.unique(np.concatenate(proofs))
        return out

    attacker.set_pattern(pattern)
    with heartbeat(progress, f"clean-up: certificates of {len(reqs):,} requirements",
                   quiet=True):
        moved = certify(range(len(reqs)))
    if moved is None:  # the deadline came first: keep the pattern
        return pattern
    users: dict[int, set[int]] = {}
    for k, cells in moved.items():
        for j in cells.tolist():
            users.setdefault(j, set()).add(k)
    unused = candidates.copy()
    unused[list(users)] = False
    pattern[unused] = False
    tried = np.flatnonzero(candidates & ~unused)
    queue = tried[np.argsort(-cost[tried], kind="stable")].tolist()
    reporter = ProgressReporter(progress, "clean-up", len(tried), unit="secondaries tried")
    done = 0
    while done < len(queue) and not deadline.expired:
        cell = queue[done]
        reporter.update(done, f"{int(unused.sum()):,} used by no certificate published")
        affected = sorted(users.get(cell, set()))
        pattern[cell] = False
        attacker.set_pattern(pattern)
        renewed = certify(affected)
        done += 1
        if renewed is None:
            pattern[cell] = True
            continue
        for k, fresh in renewed.items():
            for j in moved[k].tolist():
                users[j].discard(k)
            for j in fresh.tolist():
                users.setdefault(j, set()).add(k)
            moved[k] = fresh
    reporter.finish(done, deadline.why if done < len(queue) else
                    f"{int(candidates.sum() - pattern[candidates].sum()):,} of "
                    f"{int(candidates.sum()):,} published again")
    attacker.set_pattern(pattern)
    return pattern
