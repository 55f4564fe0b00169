"""Hypercube suppression for large hierarchical tables: protecting structures without an LP.

In a table that is the cross product of hierarchies, a deviation that is a product of one
vector per dimension, ``d(x_1, ..., x_k) = t * f_1(x_1) * ... * f_k(x_k)``, satisfies every
relation of the table exactly when each ``f_d`` satisfies the one-dimensional relations of
its hierarchy ``H_d f_d = 0`` (a relation along dimension d at fixed other codes reads
``(H_d f_d)_P * prod_{e != d} f_e(y_e) = 0``). The smallest such vectors through a code
``x`` are

* a **sibling pair**: ``+1`` on ``x`` and ``-1`` on a sibling ``b`` (same parent), each
  continued down a chain of children to a leaf (a code with children must move with one of
  them);
* a **vertical path**: ``+1`` on every ancestor of ``x``, on ``x`` and on a chain of
  children below it (the total moves with its part).

Their product is the hypercube of tau-ARGUS's GHMITER (Repsilber; de Wolf, *Hypercube*,
tau-ARGUS manual section 4.2.3) generalised to hierarchies: its corners are suppressed, and
the deviation ``t`` along it is an attack in the sense of
:mod:`tabsdc.suppression.attacker` as long as every corner can move by ``t`` in its sign's
direction (``U`` up, ``L`` down). A primary is protected upward (downward) by a hypercube
whose corners all have that room for ``t = upl`` (``lpl``): the hypercube is its certificate,
so the pattern is protected by construction and no LP is solved.

Primaries are taken largest protection level first; each gets the hypercube that adds the
least cost to the pattern so far (already suppressed corners are free), all candidates of a
primary evaluated at once on arrays. A requirement no hypercube can meet (not enough room on
any candidate) is tried again with every chain down to a leaf and more candidates; what is
still unmet is left to the caller, which routes it by LP. A clean-up pass then publishes
again, most expensive first, every secondary whose primaries all find another hypercube
among the cells still hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from tabsdc.hierarchy import Hierarchy
from tabsdc.progress import Deadline, ProgressReporter
from tabsdc.suppression.attacker import DOWN, UP, Requirement
from tabsdc.suppression.modular import cell_coordinates
from tabsdc.table import Table

__all__ = ["Cover", "Hypercube", "HypercubeSearch", "clean_up_hypercubes",
           "hypercube_pattern", "line_vectors", "uncertified", "widen_cover",
           "WIDE_COMBINATIONS"]

#: At most this many candidate hypercubes per primary (per-dimension candidates are pruned
#: by the cost of their own line through the primary when the product is larger).
MAX_COMBINATIONS = 2048
#: Candidates per primary of the wider search (every chain) for the requirements left unmet.
WIDE_COMBINATIONS = 16384


def line_vectors(hierarchy: Hierarchy, preferred: np.ndarray, every_chain: bool = False
                 ) -> list[list[tuple[list, list]]]:
    """The one-dimensional protecting vectors through every code of a hierarchy.

    Returns, per code position, a list of ``(codes, signs)``: the sibling pairs and the
    vertical path of the module docstring. Chains continue down the ``preferred`` child of
    each code (a position, -1 for leaves); the code's own chain may also start with any
    other child, or with ``every_chain`` follow every path down to a leaf.

    Examples
    --------
    A flat dimension (total T = position 0, codes a, b, c): through ``a`` the vertical path
    (T and a move together) and the pairs with ``b`` and with ``c``:

    >>> h = Hierarchy.from_parent_child({"a": "T", "b": "T", "c": "T"})
    >>> h.codes
    ('T', 'a', 'b', 'c')
    >>> line_vectors(h, np.array([1, -1, -1, -1]))[1]
    [([0, 1], [1, 1]), ([1, 2], [1, -1]), ([1, 3], [1, -1])]
    """
    parent = hierarchy.parent_positions()
    n = len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    for code, up in enumerate(parent.tolist()):
        if up >= 0:
            children[up].append(code)

    def chain(code: int) -> list[int]:
        out = [code]
        while preferred[out[-1]] >= 0:
            out.append(int(preferred[out[-1]]))
        return out

    def paths(code: int) -> list[list[int]]:
        if not children[code]:
            return [[code]]
        return [[code, *below] for child in children[code] for below in paths(child)]

    def ancestors(code: int) -> list[int]:
        out = []
        while parent[code] >= 0:
            code = int(parent[code])
            out.append(code)
        return out

    vectors = []
    for code in range(n):
        # the code's own chain: down the preferred child, or first down any other child
        owns = [chain(code)] + [[code, *chain(child)] for child in children[code]
                                if child != preferred[code]]
        if every_chain:
            owns = paths(code)
        options = [(ancestors(code) + own, [1] * (len(own) + len(ancestors(code))))
                   for own in owns]
        if parent[code] >= 0:
            for sibling in children[int(parent[code])]:
                if sibling != code:
                    other = chain(sibling)
                    options += [(own + other, [1] * len(own) + [-1] * len(other))
                                for own in owns]
        vectors.append(options)
    return vectors


@dataclass
class _Candidates:
    """One dimension's candidate vectors through one code, padded to a common length."""

    codes: np.ndarray  # (C, S), -1 = padding
    signs: np.ndarray  # (C, S), 0 = padding


class HypercubeSearch:
    """The candidate hypercubes of a table's primaries and their evaluation.

    Parameters
    ----------
    table : Table
        A table with dimensions (the cross product of its hierarchies, empty cells kept or
        not: a corner that is not a cell rules its hypercube out).
    down, up : ndarray
        Room of every cell downward (``L``) and upward (``U``), finite.
    cost : ndarray
        Cost of suppressing each cell.
    allowed : ndarray of bool
        Cells that may be suppressed (already hidden cells included).
    every_chain, max_combinations
        Candidates with every chain down to a leaf (see :func:`line_vectors`), and the
        most candidates per primary (:data:`MAX_COMBINATIONS`): the wider search for the
        primaries the first one leaves unmet.
    """

    def __init__(self, table: Table, down: np.ndarray, up: np.ndarray, cost: np.ndarray,
                 allowed: np.ndarray, *, every_chain: bool = False,
                 max_combinations: int = MAX_COMBINATIONS):
        self.max_combinations = max_combinations
        self.coords = cell_coordinates(table)
        hierarchies = list(table.hierarchies.values())
        self.sizes = np.array([len(h) for h in hierarchies], dtype=np.int64)
        self.strides = np.ones(len(self.sizes), dtype=np.int64)
        for d in range(len(self.sizes) - 2, -1, -1):
            self.strides[d] = self.strides[d + 1] * self.sizes[d + 1]
        keys = self.coords @ self.strides
        total = int(np.prod(self.sizes))
        # key -> cell: dense when the table is (nearly) the full cross product
        self._dense = total <= 4 * max(len(keys), 1)
        if self._dense:
            self._where = np.full(total, -1, dtype=np.int64)
            self._where[keys] = np.arange(len(keys))
        else:
            self._order = np.argsort(keys)
            self._sorted = keys[self._order]
        self.down, self.up, self.cost, self.allowed = down, up, cost, allowed
        values = np.abs(table.values)
        self.roots = np.array([int(np.flatnonzero(h.parent_positions() < 0)[0])
                               for h in hierarchies], dtype=np.int64)
        self.lines = []
        for d, h in enumerate(hierarchies):
            preferred = self._preferred_children(d, h, values)
            self.lines.append([_pad(options)
                               for options in line_vectors(h, preferred, every_chain)])

    def cells(self, keys: np.ndarray) -> np.ndarray:
        """Cell position of each key (-1 where no such cell)."""
        if self._dense:
            return self._where[keys]
        at = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        return np.where(self._sorted[at] == keys, self._order[at], -1)

    def _preferred_children(self, d: int, h: Hierarchy, values: np.ndarray) -> np.ndarray:
        """Each code's child with the largest margin (every other dimension at its total):
        the chain most likely to have room."""
        parent = h.parent_positions()
        margin_coords = np.tile(self.roots, (len(parent), 1))
        margin_coords[:, d] = np.arange(len(parent))
        cells = self.cells(margin_coords @ self.strides)
        margin = np.where(cells >= 0, values[np.maximum(cells, 0)], -1.0)
        best = np.full(len(parent), -1, dtype=np.int64)
        for child in np.argsort(-margin, kind="stable"):
            up = parent[child]
            if up >= 0 and best[up] < 0:
                best[up] = child
        return best

    def evaluate(self, cell: int, suppressed: np.ndarray, levels: tuple[float, float]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every candidate hypercube through ``cell``: its corner cells (-1 padding), their
        signs, the cost it adds to ``suppressed``, and whether it meets the upward and the
        downward level (``levels = (upl, lpl)``)."""
        x = self.coords[cell]
        options = [self.lines[d][int(x[d])] for d in range(len(x))]
        options = _prune(options, self, x, suppressed)
        k = len(options)
        shape_c = [len(o.codes) for o in options]
        shape_s = [o.codes.shape[1] for o in options]
        key = np.zeros(shape_c + shape_s, dtype=np.int64)
        sign = np.ones(shape_c + shape_s, dtype=np.int8)
        pad = np.zeros(shape_c + shape_s, dtype=bool)
        for d, o in enumerate(options):
            shape = [1] * (2 * k)
            shape[d], shape[k + d] = o.codes.shape
            key = key + (np.maximum(o.codes, 0) * self.strides[d]).reshape(shape)
            sign = sign * o.signs.reshape(shape)
            pad = pad | (o.codes < 0).reshape(shape)
        n_comb = int(np.prod(shape_c))
        key, sign, pad = (a.reshape(n_comb, -1) for a in (key, sign, pad))
        corner = np.where(pad, -1, self.cells(key))
        active = ~pad
        exists = corner >= 0
        j = np.maximum(corner, 0)
        usable = exists & (self.allowed[j] | suppressed[j])
        added = np.where(active & exists & ~suppressed[j], self.cost[j], 0.0).sum(axis=1)
        upl, lpl = levels
        positive = sign > 0
        room_up = np.where(positive, self.up[j], self.down[j])  # the upward attack
        room_down = np.where(positive, self.down[j], self.up[j])
        fits = ~active | usable
        meets_up = (fits & (~active | (room_up >= upl * (1 - 1e-9)))).all(axis=1)
        meets_down = (fits & (~active | (room_down >= lpl * (1 - 1e-9)))).all(axis=1)
        return np.where(active, corner, -1), sign, added, meets_up, meets_down


def _pad(options: list[tuple[list, list]]) -> _Candidates:
    width = max(len(codes) for codes, _ in options)
    codes = np.full((len(options), width), -1, dtype=np.int64)
    signs = np.zeros((len(options), width), dtype=np.int8)
    for i, (c, s) in enumerate(options):
        codes[i, :len(c)] = c
        signs[i, :len(s)] = s
    return _Candidates(codes, signs)


def _prune(options: list[_Candidates], search: HypercubeSearch, x: np.ndarray,
           suppressed: np.ndarray) -> list[_Candidates]:
    """Keep the cheapest candidates per dimension (by the cost their own line through the
    primary adds) until the product of the counts is at most ``search.max_combinations``.

    The first candidate of each dimension, the vertical path down the preferred chain, is
    always kept: for a primary on leaves of a table of non-negative values their product
    (the primary and the totals above it, all moving up or all down together) has room in
    both directions whenever the primary's own bounds do."""
    counts = [len(o.codes) for o in options]
    if int(np.prod(counts)) <= search.max_combinations:
        return options
    ranked = []
    for d, o in enumerate(options):
        coords = np.tile(x, (o.codes.size, 1))
        coords[:, d] = np.maximum(o.codes.ravel(), 0)
        cells = search.cells(coords @ search.strides).reshape(o.codes.shape)
        j = np.maximum(cells, 0)
        line_cost = np.where((o.codes >= 0) & (cells >= 0) & ~suppressed[j],
                             search.cost[j], 0.0).sum(axis=1)
        line_cost[((o.codes >= 0) & (cells < 0)).any(axis=1)] = np.inf
        line_cost[0] = -np.inf  # the vertical path is always kept (see below)
        ranked.append(np.argsort(line_cost, kind="stable"))
    keep = counts[:]
    while int(np.prod(keep)) > search.max_combinations:
        widest = int(np.argmax(keep))
        keep[widest] = max(1, keep[widest] - 1)
    return [_Candidates(o.codes[r[:m]], o.signs[r[:m]])
            for o, r, m in zip(options, ranked, keep, strict=True)]


class Hypercube(NamedTuple):
    """One chosen structure: its corner cells, their signs (+1 moves with the primary) and
    the directions (``UP``, ``DOWN``) of the primary's requirements it certifies."""

    cells: np.ndarray
    signs: np.ndarray
    directions: tuple[int, ...]


@dataclass
class Cover:
    """The hypercubes chosen for the primaries.

    ``pattern``: the cells hidden; ``unmet``: requirements no hypercube meets (to be
    routed); ``complete``: every primary treated before the deadline; ``structures``: the
    corner cells of each primary's hypercubes (its certificates); ``levels``: each
    primary's ``(upl, lpl)``.
    """

    pattern: np.ndarray
    unmet: list[Requirement]
    complete: bool
    structures: dict[int, list[Hypercube]]
    levels: dict[int, tuple[float, float]]

    def deviations(self, n_cells: int) -> tuple[list[int], list[Hypercube], sp.csc_array]:
        """Every chosen hypercube as a column of signs (a deviation over ``n_cells``
        cells), with the primary it serves: the witnesses the audit checks
        (:func:`tabsdc.audit.witnesses.witness_bounds`)."""
        owners, cubes = [], []
        for cell, chosen in self.structures.items():
            owners += [cell] * len(chosen)
            cubes += chosen
        if not cubes:
            return owners, cubes, sp.csc_array((n_cells, 0))
        which = np.repeat(np.arange(len(cubes)), [len(c.cells) for c in cubes])
        cells = np.concatenate([c.cells for c in cubes])
        signs = np.concatenate([c.signs for c in cubes]).astype(float)
        return owners, cubes, sp.csc_array((signs, (cells, which)),
                                           shape=(n_cells, len(cubes)))


def _choose(search: HypercubeSearch, cell: int, suppressed: np.ndarray,
            levels: tuple[float, float], free_only: bool = False
            ) -> tuple[list[Hypercube], list[int]]:
    """The cheapest hypercube meeting both levels of ``cell`` (or one per direction when
    none meets both): their corners, and the directions no hypercube meets. With
    ``free_only`` only hypercubes whose corners are all hidden already count."""
    corners, signs, added, meets_up, meets_down = search.evaluate(cell, suppressed, levels)
    if free_only:
        free = added == 0
        meets_up, meets_down = meets_up & free, meets_down & free
    both = meets_up & meets_down
    if both.any():
        chosen = [(np.flatnonzero(both)[np.argmin(added[both])], (UP, DOWN))]
        missing = []
    else:
        chosen, missing = [], []
        for meets, level, direction in ((meets_up, levels[0], UP),
                                        (meets_down, levels[1], DOWN)):
            if level <= 0:
                continue
            if meets.any():
                chosen.append((np.flatnonzero(meets)[np.argmin(added[meets])], (direction,)))
            else:
                missing.append(direction)
    return [Hypercube(corners[c][corners[c] >= 0], signs[c][corners[c] >= 0], served)
            for c, served in chosen], missing


def hypercube_pattern(
    search: HypercubeSearch,
    reqs: list[Requirement],
    suppressed: np.ndarray,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> Cover:
    """Add a least-cost hypercube per primary (largest level first)."""
    suppressed = suppressed.copy()
    levels: dict[int, list[float]] = {}
    for req in reqs:
        levels.setdefault(req.cell, [0.0, 0.0])[0 if req.direction == UP else 1] = req.level
    order = sorted(levels, key=lambda i: (-max(levels[i]), i))
    reporter = ProgressReporter(progress, "hypercubes", len(order), unit="primaries")
    unmet: list[Requirement] = []
    structures: dict[int, list[np.ndarray]] = {}
    as_tuples = {cell: (up, down) for cell, (up, down) in levels.items()}
    for done, cell in enumerate(order):
        if deadline is not None and deadline.expired:
            reporter.finish(done, deadline.why)
            return Cover(suppressed, unmet, False, structures, as_tuples)
        reporter.update(done, f"{int(suppressed.sum()):,} cells suppressed")
        chosen, missing = _choose(search, cell, suppressed, as_tuples[cell])
        unmet += [Requirement(cell, d, as_tuples[cell][0 if d == UP else 1]) for d in missing]
        structures[cell] = chosen
        for cube in chosen:
            suppressed[cube.cells] = True
    reporter.finish(len(order), f"{int(suppressed.sum()):,} cells suppressed, "
                                f"{len(unmet):,} requirements left to routing")
    return Cover(suppressed, unmet, True, structures, as_tuples)


def widen_cover(search: HypercubeSearch, cover: Cover) -> Cover:
    """Try the requirements ``cover`` left unmet again with a wider ``search`` (every chain,
    more candidates); the ones met get their hypercube added, the others stay unmet."""
    pattern = cover.pattern.copy()
    structures = dict(cover.structures)
    unmet = []
    for req in cover.unmet:
        levels = (req.level, 0.0) if req.direction == UP else (0.0, req.level)
        chosen, missing = _choose(search, req.cell, pattern, levels)
        if missing:
            unmet.append(req)
            continue
        structures[req.cell] = structures.get(req.cell, []) + chosen
        for cube in chosen:
            pattern[cube.cells] = True
    return Cover(pattern, unmet, cover.complete, structures, cover.levels)


def clean_up_hypercubes(
    search: HypercubeSearch,
    cover: Cover,
    suppressed: np.ndarray,
    removable: np.ndarray,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
) -> np.ndarray:
    """Publish again, most expensive first, every removable hidden cell whose primaries all
    find another hypercube among the cells still hidden (their certificates are replaced).

    Each step keeps every primary covered, so the pass may stop at any time (``deadline``).
    """
    suppressed = suppressed.copy()
    users: dict[int, set[int]] = {}
    for cell, cubes in cover.structures.items():
        for cube in cubes:
            for j in cube.cells.tolist():
                users.setdefault(j, set()).add(cell)
    candidates = np.flatnonzero(suppressed & removable)
    candidates = candidates[np.argsort(-search.cost[candidates], kind="stable")]
    reporter = ProgressReporter(progress, "clean-up", len(candidates), unit="secondaries tried")
    published = 0
    for done, j in enumerate(candidates.tolist()):
        if deadline is not None and deadline.expired:
            reporter.finish(done, f"{published:,} published again; time limit reached")
            return suppressed
        reporter.update(done, f"{published:,} published again")
        suppressed[j] = False
        renewed = {}
        for cell in sorted(users.get(j, ())):
            chosen, missing = _choose(search, cell, suppressed, cover.levels[cell], True)
            if missing:
                suppressed[j] = True
                break
            renewed[cell] = chosen
        else:
            published += 1
            for cell, chosen in renewed.items():
                for cube in cover.structures[cell]:
                    for k in cube.cells.tolist():
                        users[k].discard(cell)
                for cube in chosen:
                    for k in cube.cells.tolist():
                        users.setdefault(k, set()).add(cell)
                cover.structures[cell] = chosen
    reporter.finish(len(candidates), f"{published:,} published again")
    return suppressed


def uncertified(A: sp.sparray, cover: Cover, pattern: np.ndarray, down: np.ndarray,
                up: np.ndarray) -> list[Requirement]:
    """The requirements of ``cover`` whose hypercubes do not prove them on ``pattern``.

    An independent check of the certificates, on the relations themselves: a hypercube
    with signs ``s`` proves its primary's upward requirement when ``A s = 0`` (it is a
    deviation the relations allow), every corner is hidden in ``pattern``, and every corner
    has room ``upl`` in its sign's direction (``U`` where ``s = +1``, ``L`` where
    ``s = -1``); downward likewise with ``lpl`` and the directions swapped. All hypercubes
    are checked at once (one sparse product). Requirements the cover left unmet (routed by
    LP, with their own certificates) are not checked here.

    Examples
    --------
    >>> A = sp.csr_array([[1.0, 1.0, -1.0]])          # x0 + x1 = x2
    >>> cube = Hypercube(np.array([0, 1]), np.array([1, -1]), (UP,))
    >>> cover = Cover(np.ones(3, bool), [], True, {0: [cube]}, {0: (2.0, 0.0)})
    >>> uncertified(A, cover, np.ones(3, bool), np.full(3, 5.0), np.full(3, 5.0))
    []
    >>> uncertified(A, cover, np.ones(3, bool), np.array([5.0, 1, 5]), np.full(3, 5.0))
    [Requirement(cell=0, direction=1, level=2.0)]
    """
    owners, cubes, deviations = cover.deviations(A.shape[1])
    unmet = {(r.cell, r.direction) for r in cover.unmet}
    wanted = [(cell, direction) for cell, (upl, lpl) in cover.levels.items()
              for direction, level in ((UP, upl), (DOWN, lpl))
              if level > 0 and (cell, direction) not in unmet]
    if not cubes:
        return [Requirement(c, d, cover.levels[c][0 if d == UP else 1]) for c, d in wanted]
    which = np.repeat(np.arange(len(cubes)), [len(c.cells) for c in cubes])
    cells = np.concatenate([c.cells for c in cubes])
    signs = np.concatenate([c.signs for c in cubes]).astype(float)
    residual = abs(sp.csr_array(A) @ deviations).max(axis=0).toarray().ravel()
    published_corners = np.bincount(which, weights=~pattern[cells], minlength=len(cubes))
    good = (residual == 0) & (published_corners == 0)
    proven = set()
    for direction in (UP, DOWN):
        level = np.array([cover.levels[o][0 if direction == UP else 1] for o in owners])
        serves = np.array([direction in c.directions for c in cubes])
        room = np.where((signs > 0) == (direction == UP), up[cells], down[cells])
        short = np.bincount(which, weights=room < level[which] * (1 - 1e-9),
                            minlength=len(cubes)) > 0
        for k in np.flatnonzero(good & serves & ~short).tolist():
            proven.add((owners[k], direction))
    return [Requirement(c, d, cover.levels[c][0 if d == UP else 1])
            for c, d in wanted if (c, d) not in proven]
