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
least cost to the pattern so far (already suppressed corners are free). All candidates of a
primary are evaluated at once without listing their corners: what a hypercube adds and how
many of its corners lack room are sums over a product of codes, so they are matrix products
on the small grid of cells the primary's candidates use (:meth:`HypercubeSearch.evaluate`),
and primaries whose candidates have the same shape are evaluated together, a batch at a
time (:func:`hypercube_pattern`). A requirement no hypercube can meet (not enough room on
any candidate) is tried again with every chain down to a leaf and more candidates; what is
still unmet is left to the caller, which routes it by LP. A clean-up pass then publishes
again, most expensive first, every secondary whose primaries all find another hypercube
among the cells still hidden.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from tabsdc.audit.insider import Insiders
from tabsdc.errors import SolverError
from tabsdc.hierarchy import Hierarchy
from tabsdc.progress import Deadline, ProgressReporter, heartbeat
from tabsdc.suppression.attacker import DOWN, UP, Requirement, local_flow
from tabsdc.suppression.heuristic import FlowRouter, heuristic_pattern
from tabsdc.suppression.modular import cell_coordinates
from tabsdc.suppression.problem import (
    MethodOptions,
    MethodOutcome,
    SuppressionProblem,
    certified_bound,
    no_pattern,
    pattern_stats,
    route_and_clean,
)
from tabsdc.table import Table

__all__ = ["Cover", "Evaluation", "Hypercube", "HypercubeSearch", "Pattern",
           "avoid_insiders", "choose_hypercubes", "clean_up_hypercubes", "deviation_columns",
           "hypercube_method", "hypercube_pattern", "line_vectors", "route_in_boxes", "uncertified",
           "widen_cover", "WIDE_COMBINATIONS"]

#: At most this many candidate hypercubes of one primary are evaluated (the vectors of
#: each dimension are pruned by the cost of their own line through the primary when the
#: product is larger).
MAX_COMBINATIONS = 8192
#: Candidates per primary of the wider search (every chain) for the requirements left unmet.
WIDE_COMBINATIONS = 16384
#: The largest box of cells :func:`route_in_boxes` routes a requirement in.
BOX_CELLS = 50_000
#: Relative tolerance of the room a corner needs.
ROOM_TOLERANCE = 1e-9


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
    """One dimension's candidate vectors through one code: padded rows (``codes``, -1 =
    padding; ``signs``, 0 = padding) and the same as matrices over ``union``, the codes any
    of them uses (``members[u, i] = 1`` when vector ``i`` uses ``union[u]``, ``signed`` its
    sign there); ``offsets``: ``(union - code) * stride``, the key offsets from a cell at the
    code; ``own``: the code's position in ``union``."""

    codes: np.ndarray  # (C, S)
    signs: np.ndarray  # (C, S)
    union: np.ndarray  # (U,)
    offsets: np.ndarray  # (U,)
    own: int
    members: np.ndarray  # (U, C) of 0.0/1.0
    signed: np.ndarray  # (U, C) of 0.0/+-1.0


def _candidates(options: list[tuple[list, list]], stride: int, code: int) -> _Candidates:
    width = max(len(codes) for codes, _ in options)
    codes = np.full((len(options), width), -1, dtype=np.int64)
    signs = np.zeros((len(options), width), dtype=np.int8)
    for i, (c, s) in enumerate(options):
        codes[i, :len(c)] = c
        signs[i, :len(s)] = s
    union = np.unique(codes[codes >= 0])
    signed = np.zeros((len(union), len(options)))
    rows = np.repeat(np.arange(len(options)), width)
    used = codes.ravel() >= 0
    signed[np.searchsorted(union, codes.ravel()[used]), rows[used]] = signs.ravel()[used]
    return _Candidates(codes, signs, union, (union - code) * stride,
                       int(np.searchsorted(union, code)), np.abs(signed), signed)


class _Kind(NamedTuple):
    """The candidates of the codes of one dimension whose candidates have the same shape,
    stacked (one row per code): ``offsets``, ``members``, ``signed`` of
    :class:`_Candidates`, the code's position in its union (``own``), and each vector's
    codes as key offsets from the code's (``corner_offsets``) with their signs
    (``corner_signs``, 0 = padding)."""

    offsets: np.ndarray  # (n, U)
    own: np.ndarray  # (n,)
    members: np.ndarray  # (n, U, C)
    signed: np.ndarray  # (n, U, C)
    corner_offsets: np.ndarray  # (n, C, S)
    corner_signs: np.ndarray  # (n, C, S)


class _Kinds(NamedTuple):
    """A dimension's codes grouped by the shape of their candidates: the code is row
    ``index[code]`` of ``kinds[of[code]]``."""

    kinds: list[_Kind]
    of: np.ndarray
    index: np.ndarray


def _kinds(lines: list[_Candidates], stride: int) -> _Kinds:
    groups: dict[tuple[int, ...], list[int]] = {}
    for code, o in enumerate(lines):
        groups.setdefault((*o.members.shape, o.codes.shape[1]), []).append(code)
    of = np.zeros(len(lines), dtype=np.int64)
    index = np.zeros(len(lines), dtype=np.int64)
    kinds = []
    for number, codes in enumerate(groups.values()):
        of[codes] = number
        index[codes] = np.arange(len(codes))
        vectors = [lines[c] for c in codes]
        kinds.append(_Kind(
            np.stack([o.offsets for o in vectors]), np.array([o.own for o in vectors]),
            np.stack([o.members for o in vectors]),
            np.stack([o.signed for o in vectors]),
            np.stack([np.where(o.codes >= 0, (o.codes - c) * stride, 0)
                      for c, o in zip(codes, vectors, strict=True)]),
            np.stack([o.signs for o in vectors])))
    return _Kinds(kinds, of, index)


class Evaluation(NamedTuple):
    """Candidate hypercubes through ``cell``: the vectors tried in each dimension
    (``rows[d]``: rows of that dimension's candidates; candidate ``i`` is the product of
    the vectors at ``np.unravel_index(i, [len(r) for r in rows])``), the cost each adds to
    the pattern, whether it meets both levels of the primary, and whether it meets the
    upward and the downward level alone (when some candidate meets both, and the
    evaluation is not ``free_only``, these are not evaluated and equal ``meets_both``)."""

    cell: int
    rows: tuple[np.ndarray, ...]
    added: np.ndarray
    meets_both: np.ndarray
    meets_up: np.ndarray
    meets_down: np.ndarray


class _Group(NamedTuple):
    """Primaries whose candidates have the same shape, stacked (first axis): their kinds
    and rows in them per dimension, their keys, the slots of their grids, their levels
    (shaped for the grids), the matrices of the vectors tried (``rows`` of each
    dimension, ``keep`` per dimension) and whether that is fewer than all."""

    kinds: list[_Kind]
    index: list[np.ndarray]
    base: np.ndarray
    slots: np.ndarray
    upl: np.ndarray
    lpl: np.ndarray
    members: list[np.ndarray]
    signed: list[np.ndarray]
    rows: list[np.ndarray]
    keep: list[int]
    pruned: bool


class _Proposal(NamedTuple):
    """A primary's cheapest hypercube on the pattern at the start of a batch, the cost it
    adds, the slots of the primary's grid (a cell hidden there since may make another
    hypercube cheaper), the vectors tried per dimension (``rows``; ``pruned``: not all of
    them), and what each candidate adds and whether it meets both levels."""

    cube: Hypercube
    added: float
    grid: np.ndarray
    rows: tuple[np.ndarray, ...]
    pruned: bool
    every_added: np.ndarray
    every_meets: np.ndarray


class Hypercube(NamedTuple):
    """One chosen structure: its corner cells, their signs (+1 moves with the primary) and
    the directions (``UP``, ``DOWN``) of the primary's requirements it certifies."""

    cells: np.ndarray
    signs: np.ndarray
    directions: tuple[int, ...]


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

    Cells are addressed by their key ``sum_d code_d * stride_d`` on the product of the
    hierarchies; a :class:`Pattern` keeps, per key, what each cell adds and its room.
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
        keys = self.keys = self.coords @ self.strides
        total = int(np.prod(self.sizes))
        # key -> cell: dense when the table is (nearly) the full cross product; the
        # pattern's arrays are then indexed by key (slot = key), otherwise by cell (slot =
        # cell, and one slot more for keys that are no cell)
        self._dense = total <= 4 * max(len(keys), 1)
        if self._dense:
            self._where = np.full(total, -1, dtype=np.int64)
            self._where[keys] = np.arange(len(keys))
            self.n_slots, self.cell_slots = total, keys
        else:
            self._order = np.argsort(keys)
            self._sorted = keys[self._order]
            self.n_slots, self.cell_slots = len(keys) + 1, np.arange(len(keys))
        self.down, self.up, self.cost, self.allowed = down, up, cost, allowed
        values = np.abs(table.values)
        self.roots = np.array([int(np.flatnonzero(h.parent_positions() < 0)[0])
                               for h in hierarchies], dtype=np.int64)
        self.lines = []
        for d, h in enumerate(hierarchies):
            preferred = self._preferred_children(d, h, values)
            self.lines.append([_candidates(options, int(self.strides[d]), code)
                               for code, options
                               in enumerate(line_vectors(h, preferred, every_chain))])
        self._kinds: list[_Kinds] | None = None  # for batch_cheapest, made on first use

    def cells(self, keys: np.ndarray) -> np.ndarray:
        """Cell position of each key (-1 where no such cell)."""
        if self._dense:
            return self._where[keys]
        at = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        return np.where(self._sorted[at] == keys, self._order[at], -1)

    def slots(self, keys: np.ndarray) -> np.ndarray:
        """Where a :class:`Pattern` keeps each key's figures."""
        if self._dense:
            return keys
        cells = self.cells(keys)
        return np.where(cells >= 0, cells, len(self.cell_slots))

    def pattern(self, suppressed: np.ndarray) -> Pattern:
        """The hidden cells ``suppressed`` as this search reads them."""
        return Pattern(self, suppressed)

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

    def evaluate(self, cell: int, pattern: Pattern, levels: tuple[float, float],
                 free_only: bool = False) -> Evaluation:
        """The candidate hypercubes through ``cell`` (``levels = (upl, lpl)``; at most
        ``max_combinations``, those of cheapest lines first), evaluated on ``pattern``
        without listing their corners. With ``free_only`` only those whose lines through
        ``cell`` are hidden already, and ``added`` counts the corners still published
        (0: every corner hidden, whatever the cells cost).

        The cells any candidate can use form a small grid, the product of each
        dimension's ``union`` of codes. On it: ``c`` (the cost a cell adds: 0 when
        hidden) and ``a`` (1 when the cell cannot serve as a ``+1`` corner: not a cell,
        not allowed, or too little room in the direction that corner moves) and ``b``
        (the same as a ``-1`` corner). A hypercube's corners are the product of its
        vectors' codes and its corner signs the product of theirs, so its added cost is
        the contraction ``sum c[u_1..u_k] prod_d members_d[u_d, i_d]`` and its number of
        failing corners

            ``1/2 sum (a + b) prod_d members_d + 1/2 sum (a - b) prod_d signed_d``

        (a corner of sign ``s`` counts ``(1 + s)/2 a + (1 - s)/2 b``): one matrix product
        per dimension for all candidates at once, the same figures as summing each
        candidate's corners (tested). For both levels at once ``a`` says that the cell
        lacks room up for ``upl`` or down for ``lpl``; when ``upl == lpl`` then ``a == b``
        and the signs do not matter. Each direction alone is evaluated only when no
        candidate meets both levels or with ``free_only`` (otherwise ``meets_up`` and
        ``meets_down`` are ``meets_both``).
        """
        options = [self.lines[d][code] for d, code in enumerate(self.coords[cell])]
        line = self.slots(self.keys[cell] + np.concatenate([o.offsets for o in options]))
        rows = []
        start = 0
        for o in options:
            at = line[start:start + len(o.union)]
            start += len(o.union)
            if free_only:  # a free hypercube has only hidden lines
                rows.append(np.flatnonzero((~pattern.hidden_slots[at]).astype(float)
                                           @ o.members == 0))
            else:
                rows.append(_line_costs(pattern.cost_slots[at], pattern.room_slots[at],
                                        o.members))
        if not free_only:
            rows = _capped(rows, self.max_combinations)
        if min(len(r) for r in rows) == 0:
            none = np.zeros(0, dtype=bool)
            return Evaluation(int(cell), tuple(rows), np.zeros(0), none, none, none)
        members, signed, keys = [], [], np.int64(self.keys[cell])
        for o, r in zip(options, rows, strict=True):
            used = np.flatnonzero(o.members[:, r].any(axis=1))
            members.append(o.members[used][:, r])
            signed.append(o.signed[used][:, r])
            keys = np.add.outer(keys, o.offsets[used])
        slots = self.slots(keys)
        cost = ((~pattern.hidden_slots[slots]).astype(float) if free_only
                else pattern.cost_slots[slots])
        up, down = pattern.up_slots[slots], pattern.down_slots[slots]
        upl, lpl = (level * (1 - ROOM_TOLERANCE) for level in levels)
        if free_only and upl == lpl:  # all at once; see _directions for the signs
            a_up, b_up = up < upl, down < upl
            added, failing, plain = _contract(members, [cost, a_up | b_up,
                                                        a_up + b_up.astype(float)])
            (signs,) = _contract(signed, [a_up - b_up.astype(float)])
            return Evaluation(int(cell), tuple(rows), added, failing < 0.5,
                              plain + signs < 1, plain - signs < 1)
        added, both = _meets(members, signed, cost, up, down, upl, lpl)
        if both.any() and not free_only:
            return Evaluation(int(cell), tuple(rows), added, both, both, both)
        return Evaluation(int(cell), tuple(rows), added, both,
                          *_directions(members, signed, up, down, upl, lpl))

    def _groups(self, cells: np.ndarray, pattern: Pattern, levels: np.ndarray):
        """The primaries ``cells`` whose candidates have the same shape in every dimension,
        group by group, stacked: their positions in ``cells`` and :class:`_Group`."""
        if self._kinds is None:
            self._kinds = [_kinds(lines, int(stride))
                           for lines, stride in zip(self.lines, self.strides, strict=True)]
        x = self.coords[cells]
        k = x.shape[1]
        which = np.column_stack([self._kinds[d].of[x[:, d]] for d in range(k)])
        _, group = np.unique(which, axis=0, return_inverse=True)
        group = group.ravel()
        for g in range(int(group.max(initial=-1)) + 1):
            at = np.flatnonzero(group == g)
            n = len(at)
            kinds = [self._kinds[d].kinds[which[at[0], d]] for d in range(k)]
            index = [self._kinds[d].index[x[at, d]] for d in range(k)]
            base = self.keys[cells[at]]
            slots = self.slots(_grid_keys(base, [kind.offsets[i] for kind, i
                                                 in zip(kinds, index, strict=True)]))
            upl, lpl = (levels[at, c].reshape(n, *(1,) * k) * (1 - ROOM_TOLERANCE)
                        for c in (0, 1))
            members = [kind.members[i] for kind, i in zip(kinds, index, strict=True)]
            signed = [kind.signed[i] for kind, i in zip(kinds, index, strict=True)]
            counts = [m.shape[2] for m in members]
            keep = _keep_counts(counts, self.max_combinations)
            rows = [np.broadcast_to(np.arange(c), (n, c)) for c in counts]
            if keep != counts:  # the vectors of the cheapest lines through each primary
                own = [kind.own[i] for kind, i in zip(kinds, index, strict=True)]
                for d in range(k):
                    if keep[d] < counts[d]:
                        line = _grid_line(slots, own, d)
                        lower = _line_costs(pattern.cost_slots[line][:, None, :],
                                            pattern.room_slots[line][:, None, :],
                                            members[d])[:, 0, :]
                        lower[:, 0] = -np.inf  # the vertical path is always kept
                        rows[d] = np.argsort(lower, axis=1, kind="stable")[:, :keep[d]]
                        members[d] = np.take_along_axis(members[d], rows[d][:, None, :], 2)
                        signed[d] = np.take_along_axis(signed[d], rows[d][:, None, :], 2)
            yield at, _Group(kinds, index, base, slots, upl, lpl, members, signed, rows,
                             keep, keep != counts)

    def batch_cheapest(self, cells: np.ndarray, pattern: Pattern, levels: np.ndarray
                       ) -> list[_Proposal | None]:
        """The cheapest hypercube meeting both levels of each of ``cells`` (``levels``:
        one ``(upl, lpl)`` row each) among its candidates, on ``pattern`` as it is: the
        choice :meth:`evaluate` gives, for many primaries at once.

        Primaries whose candidates have the same shape in every dimension are evaluated
        together (stacked matrix products); when they have more than
        ``max_combinations`` candidates each keeps the same number of vectors per
        dimension, those of its cheapest lines. None for a primary with no candidate
        meeting both levels."""
        out: list[_Proposal | None] = [None] * len(cells)
        k = self.coords.shape[1]
        for at, group in self._groups(cells, pattern, levels):
            n = len(at)
            (kinds, index, base, slots, upl, lpl, members, signed, rows, keep,
             pruned) = group
            if np.array_equal(upl, lpl):  # a corner of either sign needs the same room
                grid = pattern.pairs[slots]  # (cost, room) of each cell
                np.less(grid[..., 1], upl, out=grid[..., 1])
                added, failing = _batch_contract(members, grid)
            else:
                up, down = pattern.up_slots[slots], pattern.down_slots[slots]
                a, b = (up < upl) | (down < lpl), (down < upl) | (up < lpl)
                added, twice = _batch_contract(members, np.stack(
                    [pattern.cost_slots[slots], a + b.astype(float)], axis=-1))
                failing = 0.5 * (twice + _batch_contract(
                    signed, (a - b.astype(float))[..., None])[0])
            both = failing < 0.5
            choice = np.argmin(np.where(both, added, np.inf), axis=1)
            number = np.arange(n)
            found, best = both[number, choice], added[number, choice]
            vector = np.unravel_index(choice, keep)
            corner_keys = base.reshape(n, *(1,) * k)
            signs = np.ones((n,) + (1,) * k, dtype=np.int8)
            for d, (kind, i) in enumerate(zip(kinds, index, strict=True)):
                shape = _axis(n, k, d, kind.corner_offsets.shape[2])
                row = rows[d][number, vector[d]]
                corner_keys = corner_keys + kind.corner_offsets[i, row].reshape(shape)
                signs = signs * kind.corner_signs[i, row].reshape(shape)
            signs = signs.reshape(n, -1)
            corner_cells = self.cells(np.where(signs != 0, corner_keys.reshape(n, -1),
                                               base[:, None]))
            slots = slots.reshape(n, -1)
            for m in np.flatnonzero(found).tolist():
                used = signs[m] != 0
                out[int(at[m])] = _Proposal(
                    Hypercube(corner_cells[m][used], signs[m][used], (UP, DOWN)),
                    float(best[m]), slots[m], tuple(r[m] for r in rows), pruned,
                    added[m], both[m])
        return out

    def corners(self, evaluation: Evaluation, index: int) -> tuple[np.ndarray, np.ndarray]:
        """The corner cells and signs of candidate ``index`` of ``evaluation``."""
        at = np.unravel_index(index, [len(r) for r in evaluation.rows])
        return self.vector_corners(evaluation.cell, [int(r[i]) for r, i
                                                     in zip(evaluation.rows, at, strict=True)])

    def vector_corners(self, cell: int, vectors: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The corner cells and signs of the hypercube through ``cell`` made of vector
        ``vectors[d]`` of each dimension."""
        x = self.coords[cell]
        keys = np.full(1, self.keys[cell])
        signs = np.ones(1, dtype=np.int8)
        for d, row in enumerate(vectors):
            o = self.lines[d][x[d]]
            used = o.codes[row] >= 0
            keys = np.add.outer(keys, (o.codes[row][used] - x[d]) * self.strides[d]).ravel()
            signs = np.multiply.outer(signs, o.signs[row][used]).ravel()
        return self.cells(keys), signs

    def corner_sums(self, evaluation: Evaluation, cells: np.ndarray,
                    amounts: np.ndarray) -> np.ndarray:
        """``sum_c amounts[c]`` over the ``cells`` each candidate of ``evaluation`` has as
        a corner (one product of masks per dimension, for the cells on its grid)."""
        inside, at = self._on_grid(evaluation.cell, cells)
        x = self.coords[evaluation.cell]
        masks = np.ones((int(inside.sum()), 1))
        for d, r in enumerate(evaluation.rows):
            used = self.lines[d][x[d]].members[at[d][inside]][:, r]
            masks = (masks[:, :, None] * used[:, None, :]).reshape(len(masks), -1)
        return amounts[inside] @ masks

    def hits(self, cell: int, vectors: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Which of the hypercubes through ``cell`` given by ``vectors`` (one column per
        hypercube: its vector in each dimension) have each of ``cells`` as a corner
        (cells x hypercubes)."""
        inside, at = self._on_grid(cell, cells)
        x = self.coords[cell]
        hit = np.zeros((len(cells), vectors.shape[1]), dtype=bool)
        part = np.ones((int(inside.sum()), vectors.shape[1]), dtype=bool)
        for d in range(len(x)):
            part &= self.lines[d][x[d]].members[at[d][inside]][:, vectors[d]] > 0
        hit[inside] = part
        return hit

    def _on_grid(self, cell: int, cells: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Which of ``cells`` lie on the grid of ``cell``'s candidates, and the position
        of each one's codes in the candidates' ``union`` of every dimension."""
        x, y = self.coords[cell], self.coords[cells]
        inside = np.ones(len(y), dtype=bool)
        at = []
        for d in range(len(x)):
            union = self.lines[d][x[d]].union
            at.append(np.minimum(np.searchsorted(union, y[:, d]), len(union) - 1))
            inside &= union[at[-1]] == y[:, d]
        return inside, at


class Pattern:
    """The cells hidden during a search (``hidden``, per cell) and, per slot of the
    search's keys (:meth:`HypercubeSearch.slots`), what each cell adds when hidden
    (``cost_slots``: 0 if hidden already), its room up and down as a corner (``up_slots``,
    ``down_slots``: ``-inf`` when it cannot be one: not a cell, or published and not
    allowed), the smaller of the two (``room_slots``) and whether it is hidden
    (``hidden_slots``); ``pairs`` holds cost and room side by side. :meth:`hide` and
    :meth:`publish` keep them up to date, so a grid of cells is read with a few gathers."""

    def __init__(self, search: HypercubeSearch, suppressed: np.ndarray):
        self.search = search
        self.hidden = suppressed.copy()
        self.cost_slots = np.zeros(search.n_slots)
        self.up_slots = np.full(search.n_slots, -np.inf)
        self.down_slots = np.full(search.n_slots, -np.inf)
        self.room_slots = np.full(search.n_slots, -np.inf)
        self.hidden_slots = np.zeros(search.n_slots, dtype=bool)
        self.pairs = np.zeros((search.n_slots, 2))  # cost_slots and room_slots side by side
        self.pairs[:, 1] = -np.inf
        self._update(np.arange(len(suppressed)))

    def hide(self, cells: np.ndarray) -> None:
        self.hidden[cells] = True
        self._update(cells)

    @contextmanager
    def excluding(self, cells: np.ndarray) -> Iterator[Pattern]:
        """Within the block ``cells`` cannot be corners (no room either way)."""
        slots = self.search.cell_slots[cells]
        for figures in (self.up_slots, self.down_slots, self.room_slots):
            figures[slots] = -np.inf
        self.pairs[slots, 1] = -np.inf
        try:
            yield self
        finally:
            self._update(cells)

    def publish(self, cells: np.ndarray) -> None:
        self.hidden[cells] = False
        self._update(cells)

    def _update(self, cells: np.ndarray) -> None:
        s = self.search
        slots, hidden = s.cell_slots[cells], self.hidden[cells]
        usable = s.allowed[cells] | hidden
        self.cost_slots[slots] = np.where(hidden, 0.0, s.cost[cells])
        self.up_slots[slots] = up = np.where(usable, s.up[cells], -np.inf)
        self.down_slots[slots] = down = np.where(usable, s.down[cells], -np.inf)
        self.room_slots[slots] = np.minimum(up, down)
        self.hidden_slots[slots] = hidden
        self.pairs[slots, 0] = self.cost_slots[slots]
        self.pairs[slots, 1] = self.room_slots[slots]


def _axis(n: int, k: int, d: int, size: int) -> list[int]:
    """The shape ``(n, 1, .., size, .., 1)`` placing ``size`` on dimension ``d`` of ``k``."""
    shape = [n] + [1] * k
    shape[d + 1] = size
    return shape


def _contract(matrices: list[np.ndarray], grids: list[np.ndarray]) -> list[np.ndarray]:
    """``sum g[u_1..u_k] prod_d matrices_d[u_d, i_d]`` for each grid array ``g``: one flat
    array per grid, candidates in C order of ``(i_1, ..., i_k)``."""
    value = np.stack(grids, axis=-1).astype(float, copy=False)
    for matrix in matrices:
        value = value.reshape(len(matrix), -1).T @ matrix
    return list(value.reshape(len(grids), -1))


def _batch_contract(matrices: list[np.ndarray], grids: np.ndarray) -> list[np.ndarray]:
    """:func:`_contract` for a stack of primaries: ``grids`` of shape ``(n, U_1..U_k, g)``
    (``g`` arrays per primary), ``matrices[d]`` of shape ``(n, U_d, C_d)``; one
    ``(n, C_1 * ... * C_k)`` per grid array."""
    n, g = len(matrices[0]), grids.shape[-1]
    value = grids
    for matrix in matrices:
        value = value.reshape(n, matrix.shape[1], -1).transpose(0, 2, 1) @ matrix
    value = value.reshape(n, g, -1)
    return [value[:, c] for c in range(g)]


def _grid_keys(base: np.ndarray, offsets: list[np.ndarray]) -> np.ndarray:
    """``base[p] + offsets[0][p, u_1] + ... + offsets[k-1][p, u_k]`` of shape
    ``(n, U_1, ..., U_k)``: the keys of each primary's grid (the dimensions summed in two
    halves first, so that the last sum runs over long rows)."""
    n = len(base)
    half = (len(offsets) + 1) // 2
    parts = []
    for group in (offsets[:half], offsets[half:]):
        part = np.zeros((n, 1), dtype=np.int64)
        for off in group:
            part = (part[:, :, None] + off[:, None, :]).reshape(n, -1)
        parts.append(part)
    keys = (parts[0] + base[:, None])[:, :, None] + parts[1][:, None, :]
    return keys.reshape(n, *(off.shape[1] for off in offsets))


def _meets(members: list[np.ndarray], signed: list[np.ndarray], cost: np.ndarray,
           up: np.ndarray, down: np.ndarray, upl: float, lpl: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """What each candidate adds and whether it meets both levels (see
    :meth:`HypercubeSearch.evaluate`), from the grid's ``cost`` and room."""
    a = (up < upl) | (down < lpl)
    if upl == lpl:  # a corner of either sign needs the same room
        added, failing = _contract(members, [cost, a])
        return added, failing < 0.5
    b = (down < upl) | (up < lpl)
    added, twice = _contract(members, [cost, a + b.astype(float)])
    return added, twice + _contract(signed, [a - b.astype(float)])[0] < 1


def _directions(members: list[np.ndarray], signed: list[np.ndarray], up: np.ndarray,
                down: np.ndarray, upl: float, lpl: float) -> tuple[np.ndarray, np.ndarray]:
    """Whether each candidate meets the upward level and the downward one alone (a ``+1``
    corner moves up in the upward attack and down in the downward one; a ``-1`` corner the
    other way). With ``upl == lpl`` the downward figures are the upward ones with the signs
    turned: one signed contraction serves both."""
    a_up, b_up = up < upl, down < upl
    if upl == lpl:
        plain, = _contract(members, [a_up + b_up.astype(float)])
        signs, = _contract(signed, [a_up - b_up.astype(float)])
        return plain + signs < 1, plain - signs < 1
    a_down, b_down = down < lpl, up < lpl
    up_plain, down_plain = _contract(members, [a_up + b_up.astype(float),
                                               a_down + b_down.astype(float)])
    up_signed, down_signed = _contract(signed, [a_up - b_up.astype(float),
                                                a_down - b_down.astype(float)])
    return up_plain + up_signed < 1, down_plain + down_signed < 1


def _line_costs(cost: np.ndarray, room: np.ndarray, members: np.ndarray) -> np.ndarray:
    """What each vector's line through the primary adds (``cost`` and ``room`` of the
    line's cells, in the order of ``members``' rows), ``inf`` where a cell of it cannot be
    a corner."""
    lower = cost @ members
    lower[(room == -np.inf).astype(float) @ members > 0] = np.inf
    return lower  # (stacks of lines and matrices alike)


def _grid_line(slots: np.ndarray, own: list[np.ndarray], d: int) -> np.ndarray:
    """Per primary (first axis of ``slots``), the slots of its grid along dimension ``d``
    through the primary (at ``own[e]`` in every other dimension ``e``)."""
    n = len(slots)
    at: list[np.ndarray | slice] = [np.arange(n)]
    for e, position in enumerate(own):
        at.append(slice(None) if e == d else position)
    return slots[tuple(at)]


def _keep_counts(counts: list[int], max_combinations: int) -> list[int]:
    """How many vectors per dimension :func:`_capped` keeps: all, or, while the product
    exceeds ``max_combinations``, one fewer in the widest dimension."""
    keep = list(counts)
    while math.prod(keep) > max_combinations:
        widest = int(np.argmax(keep))
        keep[widest] = max(1, keep[widest] - 1)
    return keep


def _capped(lower: list[np.ndarray], max_combinations: int) -> list[np.ndarray]:
    """The vectors to try per dimension: all, or, when the product of the counts exceeds
    ``max_combinations``, those of least ``lower`` (the cost of their line through the
    primary; ``inf``: ruled out) per dimension (:func:`_keep_counts` of them).

    The first vector of each dimension, the vertical path down the preferred chain, is
    always kept: for a primary on leaves of a table of non-negative values their product
    (the primary and the totals above it, all moving up or all down together) has room in
    both directions whenever the primary's own bounds do."""
    counts = [len(low) for low in lower]
    keep = _keep_counts(counts, max_combinations)
    if keep == counts:
        return [np.arange(n) for n in counts]
    ranked = []
    for low in lower:
        low = low.copy()
        low[0] = -np.inf
        ranked.append(np.argsort(low, kind="stable"))
    return [r[:m] for r, m in zip(ranked, keep, strict=True)]


@dataclass
class Cover:
    """The hypercubes chosen for the primaries.

    ``pattern``: the cells hidden; ``unmet``: requirements no hypercube meets (to be
    routed); ``complete``: every primary treated before the deadline; ``structures``: the
    corner cells of each primary's hypercubes (its certificates); ``levels``: each
    primary's ``(upl, lpl)``; ``routes``: the requirements no hypercube meets that a flow
    within a box proves (:func:`route_in_boxes`), by ``(cell, direction)``, with the cells
    carrying it.
    """

    pattern: np.ndarray
    unmet: list[Requirement]
    complete: bool
    structures: dict[int, list[Hypercube]]
    levels: dict[int, tuple[float, float]]
    routes: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    def by_hypercubes(self) -> dict[int, tuple[float, float]]:
        """Each primary's levels, 0 for the directions its hypercubes do not certify (left
        unmet or routed)."""
        other = {(r.cell, r.direction) for r in self.unmet} | set(self.routes)
        return {cell: (0.0 if (cell, UP) in other else upl,
                       0.0 if (cell, DOWN) in other else lpl)
                for cell, (upl, lpl) in self.levels.items()}

    def deviations(self, n_cells: int) -> tuple[list[int], list[Hypercube], sp.csc_array]:
        """Every chosen hypercube as a column of signs (a deviation over ``n_cells``
        cells), with the primary it serves: the witnesses the audit checks
        (:func:`tabsdc.audit.witnesses.witness_bounds`)."""
        owners, cubes = [], []
        for cell, chosen in self.structures.items():
            owners += [cell] * len(chosen)
            cubes += chosen
        return owners, cubes, deviation_columns(cubes, n_cells)


def deviation_columns(cubes: list[Hypercube], n_cells: int) -> sp.csc_array:
    """The hypercubes ``cubes`` as columns of signs over ``n_cells`` cells (cells x cubes).

    >>> cube = Hypercube(np.array([0, 2]), np.array([1, -1]), (UP,))
    >>> deviation_columns([cube], 3).toarray().ravel().tolist()
    [1.0, 0.0, -1.0]
    """
    if not cubes:
        return sp.csc_array((n_cells, 0))
    which = np.repeat(np.arange(len(cubes)), [len(c.cells) for c in cubes])
    cells = np.concatenate([c.cells for c in cubes])
    signs = np.concatenate([c.signs for c in cubes]).astype(float)
    return sp.csc_array((signs, (cells, which)), shape=(n_cells, len(cubes)))


def choose_hypercubes(search: HypercubeSearch, cell: int, pattern: Pattern,
            levels: tuple[float, float]) -> tuple[list[Hypercube], list[int]]:
    """The cheapest hypercube meeting both levels of ``cell`` (or one per direction when
    none meets both): their corners, and the directions no hypercube meets."""
    return _pick(search, search.evaluate(cell, pattern, levels), levels)


def _pick(search: HypercubeSearch, evaluation: Evaluation, levels: tuple[float, float],
          usable: np.ndarray | None = None) -> tuple[list[Hypercube], list[int]]:
    """Among the candidates of ``evaluation`` (those ``usable`` only), the cheapest meeting
    both levels, or one per direction; and the directions none meets."""
    added = evaluation.added
    meets = [evaluation.meets_both, evaluation.meets_up, evaluation.meets_down]
    if usable is not None:
        meets = [m & usable for m in meets]
    both, meets_up, meets_down = meets
    if both.any():
        chosen = [(np.flatnonzero(both)[np.argmin(added[both])], (UP, DOWN))]
        missing = []
    else:
        chosen, missing = [], []
        for meets_one, level, direction in ((meets_up, levels[0], UP),
                                            (meets_down, levels[1], DOWN)):
            if level <= 0:
                continue
            if meets_one.any():
                chosen.append((np.flatnonzero(meets_one)[np.argmin(added[meets_one])],
                               (direction,)))
            else:
                missing.append(direction)
    return [Hypercube(*search.corners(evaluation, int(c)), served)
            for c, served in chosen], missing


def hypercube_pattern(
    search: HypercubeSearch,
    reqs: list[Requirement],
    suppressed: np.ndarray,
    progress: Callable[[str], None] | None = None,
    deadline: Deadline | None = None,
    *,
    batch: int = 128,
) -> Cover:
    """Add a least-cost hypercube per primary (largest level first).

    The primaries are taken in that order, ``batch`` at a time: every candidate of each is
    evaluated on the pattern as the batch found it (:meth:`HypercubeSearch.batch_cheapest`),
    then they are taken in order. For a primary whose grid received cells hidden for a
    primary before it in the batch, the candidates with such a cell as a corner add its
    cost less (:meth:`HypercubeSearch.corner_sums`), and the cheapest is chosen again
    (:func:`_now`). So every primary gets the cheapest hypercube on the pattern all
    primaries before it left, as one at a time would. Primaries with none meeting both
    levels, and those whose candidates were pruned by their lines (which such a cell may
    change), are evaluated again one at a time (:meth:`HypercubeSearch.evaluate`)."""
    pattern = search.pattern(suppressed)
    hidden = int(suppressed.sum())
    levels: dict[int, list[float]] = {}
    for req in reqs:
        levels.setdefault(req.cell, [0.0, 0.0])[0 if req.direction == UP else 1] = req.level
    order = np.array(sorted(levels, key=lambda i: (-max(levels[i]), i)), dtype=np.int64)
    level_rows = np.array([levels[int(i)] for i in order]).reshape(-1, 2)
    reporter = ProgressReporter(progress, "hypercubes", len(order), unit="primaries")
    unmet: list[Requirement] = []
    structures: dict[int, list[Hypercube]] = {}
    as_tuples = {cell: (up, down) for cell, (up, down) in levels.items()}
    touched = np.zeros(search.n_slots, dtype=bool)  # hidden during the current batch
    for start in range(0, len(order), batch):
        reporter.update(start, f"{hidden:,} cells suppressed")
        cells = order[start:start + batch]
        proposals = search.batch_cheapest(cells, pattern, level_rows[start:start + batch])
        new: list[np.ndarray] = []
        for done, (cell, proposal) in enumerate(zip(cells.tolist(), proposals, strict=True),
                                                start=start):
            if deadline is not None and deadline.expired:
                reporter.finish(done, deadline.why)
                return Cover(pattern.hidden, unmet, False, structures, as_tuples)
            changed = bool(new) and touched[proposal.grid].any() if proposal else False
            if proposal is None or (changed and proposal.pruned):
                # (a pruned primary's vectors are those of its cheapest lines: chosen again)
                chosen, missing = choose_hypercubes(search, cell, pattern, as_tuples[cell])
                unmet += [Requirement(cell, d, as_tuples[cell][0 if d == UP else 1])
                          for d in missing]
            elif changed and proposal.added > 0:
                chosen = [_now(search, cell, proposal, np.concatenate(new))]
            else:
                chosen = [proposal.cube]
            structures[cell] = chosen
            for cube in chosen:
                added = cube.cells[~pattern.hidden[cube.cells]]
                if len(added):
                    pattern.hide(added)
                    touched[search.cell_slots[added]] = True
                    new.append(added)
                    hidden += len(added)
        for added in new:
            touched[search.cell_slots[added]] = False
    reporter.finish(len(order), f"{hidden:,} cells suppressed, "
                                f"{len(unmet):,} requirements left to routing")
    return Cover(pattern.hidden, unmet, True, structures, as_tuples)


def _now(search: HypercubeSearch, cell: int, proposal: _Proposal, new: np.ndarray
         ) -> Hypercube:
    """``proposal``'s choice with the cells ``new`` hidden since it was made: a candidate
    adds the cost of the new cells among its corners less (they could be corners before,
    so whether a candidate meets the levels does not change), and the cheapest (the first
    of equal ones, as :func:`_pick`) may now be another one."""
    meets = proposal.every_meets
    evaluation = Evaluation(cell, proposal.rows, proposal.every_added, meets, meets, meets)
    now = np.maximum(proposal.every_added
                     - search.corner_sums(evaluation, new, search.cost[new]), 0.0)
    best = int(np.flatnonzero(meets)[np.argmin(now[meets])])
    return Hypercube(*search.corners(evaluation, best), (UP, DOWN))


def widen_cover(search: HypercubeSearch, cover: Cover) -> Cover:
    """Try the requirements ``cover`` left unmet again with a wider ``search`` (every chain,
    more candidates); the ones met get their hypercube added, the others stay unmet."""
    pattern = search.pattern(cover.pattern)
    structures = dict(cover.structures)
    unmet = []
    for req in cover.unmet:
        levels = (req.level, 0.0) if req.direction == UP else (0.0, req.level)
        chosen, missing = choose_hypercubes(search, req.cell, pattern, levels)
        if missing:
            unmet.append(req)
            continue
        structures[req.cell] = structures.get(req.cell, []) + chosen
        for cube in chosen:
            pattern.hide(cube.cells)
    return Cover(pattern.hidden, unmet, cover.complete, structures, cover.levels,
                 cover.routes)


def avoid_insiders(search: HypercubeSearch, cover: Cover, insiders: Insiders,
                   suppressed: np.ndarray, progress: Callable[[str], None] | None = None,
                   deadline: Deadline | None = None) -> tuple[np.ndarray, list[Requirement]]:
    """Make each primary's hypercubes clear of every respondent they rely on.

    The respondent of a single-contributor cell knows its value (:mod:`tabsdc.audit.insider`):
    a hypercube with one of its cells as a corner does not move in that scenario. A
    primary's direction is proven against a respondent when one of its hypercubes serving
    that direction has none of the respondent's cells as a corner. For every primary whose
    hypercubes all have some respondent's cell as a corner (in a direction), the cheapest
    hypercube with none of those respondents' cells as a corner is added (those cells
    excluded as corners, :meth:`Pattern.excluding`); so its first hypercube serves every
    other respondent and the new one these. The primaries are taken in the cover's order.

    Returns the pattern with the new hypercubes' corners hidden (they are added to
    ``cover.structures``, so they travel to the audit as witnesses) and the requirements
    no such hypercube meets (or that the deadline left), for routing with the respondent
    fixed (:meth:`tabsdc.suppression.attacker.Attacker.proof`).
    """
    pattern = search.pattern(suppressed)
    other = {(r.cell, r.direction) for r in cover.unmet} | set(cover.routes)
    left: list[Requirement] = []
    reporter = ProgressReporter(progress, "hypercubes clear of respondents", len(cover.levels),
                                unit="primaries")
    added = 0
    for done, cell in enumerate(list(cover.structures)):
        reporter.update(done, f"{added:,} hypercubes added")
        levels = cover.levels[cell]
        open_groups: dict[int, np.ndarray] = {}
        for direction, level in ((UP, levels[0]), (DOWN, levels[1])):
            serving = [c for c in cover.structures[cell] if direction in c.directions]
            if level <= 0 or (cell, direction) in other or not serving:
                continue
            groups = insiders.groups_in(serving[0].cells, cell)
            for cube in serving[1:]:
                groups = np.intersect1d(groups, insiders.groups_in(cube.cells, cell))
            if len(groups):
                open_groups[direction] = groups
        if not open_groups:
            continue
        if deadline is not None and deadline.expired:
            left += [Requirement(cell, d, levels[0 if d == UP else 1]) for d in open_groups]
            continue
        avoided = np.concatenate([insiders.members(int(g)) for groups in open_groups.values()
                                  for g in groups])
        wanted = tuple(levels[k] if d in open_groups else 0.0
                       for k, d in enumerate((UP, DOWN)))
        with pattern.excluding(avoided):
            chosen, missing = choose_hypercubes(search, cell, pattern, wanted)
        for cube in chosen:
            served = tuple(d for d in cube.directions if d in open_groups)
            cover.structures[cell].append(Hypercube(cube.cells, cube.signs, served))
            pattern.hide(cube.cells)
            added += 1
        left += [Requirement(cell, d, levels[0 if d == UP else 1]) for d in missing]
    reporter.finish(len(cover.structures), f"{added:,} hypercubes added, {len(left):,} "
                                           "requirements left to routing")
    return pattern.hidden, left


def route_in_boxes(search: HypercubeSearch, A: sp.sparray, cover: Cover, cost: np.ndarray,
                   deadline: Deadline | None = None, max_cells: int = BOX_CELLS) -> Cover:
    """Route the requirements ``cover`` left unmet (no hypercube meets them) by the
    least-cost deviation flow within a box of the table around the primary, every cell
    outside it held at zero (:func:`tabsdc.suppression.attacker.local_flow`; such a flow
    satisfies every relation of the table, so it is an attack proving the requirement).

    A hypercube moves each code by the whole deviation; a flow may split it, e.g. a total
    whose every chain down to a leaf ends in a cell too small for the level. The box is
    first the product, over the dimensions, of the codes of the primary's vertical paths
    (``search`` with every chain: its ancestors and every code below it), then, when no
    flow lies in it and it has at most ``max_cells`` cells, the product of the codes of all
    its candidate vectors. Returns the cover with the routed requirements moved from
    ``unmet`` to ``routes`` and their carrying cells hidden; the others stay unmet (for
    routing on the whole table).
    """
    by_column = sp.csc_array(A)
    pattern = cover.pattern.copy()
    routes = dict(cover.routes)
    unmet = []
    scale = max(float(np.max(cost, initial=0.0)), 1.0)
    for req in cover.unmet:
        options = [search.lines[d][code] for d, code in enumerate(search.coords[req.cell])]
        vertical = [np.unique(o.codes[(o.signs >= 0).all(axis=1) & (o.codes >= 0).any(axis=1)]
                              ) for o in options]
        boxes = [[v[v >= 0] for v in vertical], [o.union for o in options]]
        carrying = None
        for codes in boxes:
            if carrying is not None or math.prod(len(c) for c in codes) > max_cells:
                continue
            if deadline is not None and deadline.expired:
                break
            keys = np.zeros(1, dtype=np.int64)
            for d, c in enumerate(codes):
                keys = np.add.outer(keys, c * search.strides[d]).ravel()
            cells = np.sort(search.cells(keys))
            cells = cells[cells >= 0]
            movable = search.allowed[cells] | pattern[cells]
            w = np.where(pattern[cells], 1e-6 * scale, cost[cells]) / req.level
            carrying = local_flow(by_column, cells, req, np.where(movable, search.up[cells], 0.0),
                                  np.where(movable, search.down[cells], 0.0), w,
                                  None if deadline is None else deadline.solver_limit())
        if carrying is None:
            unmet.append(req)
        else:
            routes[(req.cell, req.direction)] = carrying
            pattern[carrying] = True
    return Cover(pattern, unmet, cover.complete, cover.structures, cover.levels, routes)


class _Free(NamedTuple):
    """A primary's hypercubes whose corners are all hidden and that certify at least one
    of its directions: their vectors (dimensions x hypercubes), whether each meets both
    levels, the upward one, the downward one; and how many publications it has seen."""

    vectors: np.ndarray
    both: np.ndarray
    up: np.ndarray
    down: np.ndarray
    seen: int


class _FreeStructures:
    """Each primary's hypercubes whose corners are all hidden, kept up to date while cells
    are published again (the hidden set only shrinks during the clean-up).

    A primary's free hypercubes are evaluated once (:meth:`HypercubeSearch.evaluate` with
    ``free_only``) and kept as their vectors; a cell published since then rules out the
    ones that have it as a corner (:meth:`HypercubeSearch.hits`), so the evaluation is not
    repeated for every secondary the primary's structure uses (only after :data:`STALE`
    publications, when evaluating afresh is cheaper than checking them). The corners of its
    structure that every free alternative needs (:meth:`essential`) are found at once; as
    the hidden set only shrinks they stay essential while the structure is kept, so a
    secondary essential to one of its primaries is refused without a search.
    """

    STALE = 2048

    def __init__(self, search: HypercubeSearch, pattern: Pattern,
                 levels: dict[int, tuple[float, float]], most: int):
        self.search, self.pattern, self.levels = search, pattern, levels
        self._published = np.zeros(most, dtype=np.int64)  # in order, the first ``count``
        self.count = 0
        self._free: dict[int, _Free] = {}
        self._essential: dict[int, set[int]] = {}

    def publish(self, cell: int, renewed: list[int]) -> None:
        """``cell`` is published again and the structures of ``renewed`` were replaced."""
        self.pattern.publish(np.array([cell]))
        self._published[self.count] = cell
        self.count += 1
        for primary in renewed:
            self._essential.pop(primary, None)

    def _current(self, primary: int) -> _Free:
        free = self._free.get(primary)
        if free is None or self.count - free.seen > self.STALE:
            evaluation = self.search.evaluate(primary, self.pattern, self.levels[primary],
                                              free_only=True)
            keep = (evaluation.added == 0) & (evaluation.meets_both | evaluation.meets_up
                                              | evaluation.meets_down)
            index = np.flatnonzero(keep)
            at = np.unravel_index(index, [len(r) for r in evaluation.rows])
            vectors = np.array([r[i] for r, i in zip(evaluation.rows, at, strict=True)]
                               ).reshape(len(evaluation.rows), -1)
            free = _Free(vectors, evaluation.meets_both[index], evaluation.meets_up[index],
                         evaluation.meets_down[index], self.count)
        elif free.seen < self.count:
            kept = ~self.search.hits(primary, free.vectors,
                                     self._published[free.seen:self.count]).any(axis=0)
            free = _Free(free.vectors[:, kept], free.both[kept], free.up[kept],
                         free.down[kept], self.count)
        self._free[primary] = free
        return free

    def _certified(self, primary: int, free: _Free, usable: np.ndarray) -> np.ndarray:
        """Per row of ``usable`` (cells x free hypercubes): do the usable ones certify
        every direction of ``primary`` (one meeting both, or one per direction)."""
        upl, lpl = self.levels[primary]
        return ((free.both & usable).any(axis=1)
                | (((free.up & usable).any(axis=1) | (upl <= 0))
                   & ((free.down & usable).any(axis=1) | (lpl <= 0))))

    def essential(self, primary: int, structure: list[Hypercube]) -> set[int]:
        """The corners of ``structure`` (the primary's hypercubes) without which no free
        hypercube certifies ``primary``: they cannot be published while it is kept."""
        essential = self._essential.get(primary)
        if essential is None:
            free = self._current(primary)
            corners = np.unique(np.concatenate([c.cells for c in structure]))
            usable = ~self.search.hits(primary, free.vectors, corners)
            certified = self._certified(primary, free, usable)
            self._essential[primary] = essential = set(corners[~certified].tolist())
        return essential

    def alternative(self, primary: int, without: int) -> list[Hypercube] | None:
        """Hypercubes certifying ``primary`` whose corners are all hidden and avoid
        ``without`` (a hidden cell about to be published); None if there are none (the
        first of the free ones meeting both levels, or one per direction)."""
        free = self._current(primary)
        usable = ~self.search.hits(primary, free.vectors, np.array([without]))[0]
        if not self._certified(primary, free, usable[None, :])[0]:
            return None
        if (free.both & usable).any():
            chosen = [(int(np.flatnonzero(free.both & usable)[0]), (UP, DOWN))]
        else:
            chosen = [(int(np.flatnonzero(meets & usable)[0]), (direction,))
                      for meets, level, direction in zip(
                          (free.up, free.down), self.levels[primary], (UP, DOWN), strict=True)
                      if level > 0]
        return [Hypercube(*self.search.vector_corners(primary, free.vectors[:, i].tolist()),
                          served) for i, served in chosen]


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

    A cell essential to one of its primaries (:class:`_FreeStructures`) is refused at
    once; otherwise each primary's free hypercubes avoiding it are looked up. Each step
    keeps every primary covered, so the pass may stop at any time (``deadline``).
    """
    pattern = search.pattern(suppressed)
    users: dict[int, set[int]] = {}
    for cell, cubes in cover.structures.items():
        for cube in cubes:
            for j in cube.cells.tolist():
                users.setdefault(j, set()).add(cell)
    candidates = np.flatnonzero(suppressed & removable)
    candidates = candidates[np.argsort(-search.cost[candidates], kind="stable")]
    reporter = ProgressReporter(progress, "clean-up", len(candidates), unit="secondaries tried")
    free = _FreeStructures(search, pattern, cover.by_hypercubes(), len(candidates))
    published = 0
    for done, j in enumerate(candidates.tolist()):
        if deadline is not None and deadline.expired:
            reporter.finish(done, f"{published:,} published again; time limit reached")
            return pattern.hidden
        reporter.update(done, f"{published:,} published again")
        primaries = sorted(users.get(j, ()))
        if any(j in free.essential(cell, cover.structures[cell]) for cell in primaries):
            continue
        renewed = {}
        for cell in primaries:
            chosen = free.alternative(cell, j)
            if chosen is None:
                break
            renewed[cell] = chosen
        else:
            free.publish(j, list(renewed))
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
    return pattern.hidden


def uncertified(A: sp.sparray, cover: Cover, pattern: np.ndarray, down: np.ndarray,
                up: np.ndarray) -> list[Requirement]:
    """The requirements of ``cover`` whose hypercubes do not prove them on ``pattern``.

    An independent check of the certificates, on the relations themselves: a hypercube
    with signs ``s`` proves its primary's upward requirement when ``A s = 0`` (it is a
    deviation the relations allow), every corner is hidden in ``pattern``, and every corner
    has room ``upl`` in its sign's direction (``U`` where ``s = +1``, ``L`` where
    ``s = -1``); downward likewise with ``lpl`` and the directions swapped. All hypercubes
    are checked at once (one sparse product). Requirements the cover left unmet or routed in
    a box (proven by flows, their own certificates) are not checked here.

    Examples
    --------
    >>> A = sp.csr_array([[1.0, 1.0, -1.0]])          # x0 + x1 = x2
    >>> cube = Hypercube(np.array([0, 1]), np.array([1, -1]), (UP,))
    >>> cover = Cover(np.ones(3, bool), [], True, {0: [cube]}, {0: (2.0, 0.0)})
    >>> uncertified(A, cover, np.ones(3, bool), np.full(3, 5.0), np.full(3, 5.0))
    []
    >>> uncertified(A, cover, np.ones(3, bool), np.array([5.0, 1, 5]), np.full(3, 5.0))
    [Requirement(cell=0, direction=1, level=2.0, fixed=())]
    """
    owners, cubes, deviations = cover.deviations(A.shape[1])
    unmet = {(r.cell, r.direction) for r in cover.unmet} | set(cover.routes)
    wanted = [(cell, direction) for cell, (upl, lpl) in cover.levels.items()
              for direction, level in ((UP, upl), (DOWN, lpl))
              if level > 0 and (cell, direction) not in unmet]
    if not cubes:
        return [Requirement(c, d, cover.levels[c][0 if d == UP else 1]) for c, d in wanted]
    # the corners as the audit reads them: the nonzeros of each column
    cells, signs = deviations.indices, deviations.data
    which = np.repeat(np.arange(len(cubes)), np.diff(deviations.indptr))
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


def hypercube_method(problem: SuppressionProblem, options: MethodOptions) -> MethodOutcome:
    """The hypercube method: a least-cost hypercube per primary (:func:`hypercube_pattern`),
    a wider search and routing within boxes for the requirements no hypercube meets
    (:func:`widen_cover`, :func:`route_in_boxes`), routing on the whole table of what is
    left and of the boxes' requirements against the respondents, clean-up of the cells no
    route uses against the hypercubes (:func:`clean_up_hypercubes`), hypercubes clear of
    the respondents (:func:`avoid_insiders`) and the check of every certificate
    (:func:`uncertified`). The hypercubes are the witnesses of the audit.

    Local neighbourhoods are one relation wider than the other methods': the requirements
    left to routing are those no box around the primary meets.
    """
    deadline, progress, labels = options.deadline, options.progress, problem.labels
    table, c, fixed_on, fixed_off = problem.table, problem.cost, problem.fixed_on, \
        problem.fixed_off
    room = (problem.down, problem.up)
    bound = certified_bound(problem, options, extra_hops=1)
    attacker = problem.attacker(deadline, extra_hops=1)
    search = HypercubeSearch(table, *room, c, ~fixed_off)
    cover = hypercube_pattern(search, problem.reqs, fixed_on, progress, deadline)
    if not cover.complete:
        return MethodOutcome(None, no_pattern(deadline), bound=bound)
    if cover.unmet:  # a wider search, then flows within boxes around the primaries
        wide = HypercubeSearch(table, *room, c, ~fixed_off, every_chain=True,
                               max_combinations=WIDE_COMBINATIONS)
        with heartbeat(progress, f"routing in boxes: {len(cover.unmet):,} requirements "
                       "no hypercube meets", quiet=True):
            cover = route_in_boxes(wide, table.A, widen_cover(wide, cover), c, deadline)
    # the requirements routed in boxes are proved against the respondents with the rest
    failing = cover.unmet + [
        Requirement(cell, direction, cover.levels[cell][0 if direction == UP else 1])
        for cell, direction in cover.routes]
    router = problem.router(FlowRouter, deadline, extra_hops=1)
    routed = route_and_clean(problem, options, attacker, router, cover.pattern, failing,
                             np.zeros(table.n_cells, dtype=bool))
    if routed is None:
        return MethodOutcome(None, no_pattern(deadline, attacker_solves=attacker.n_solves),
                             bound=bound)
    pattern, certificates = routed
    keep = np.zeros(table.n_cells, dtype=bool)  # the routes' certificates keep their cells
    for cells in [*(c for family in certificates.values() for c in family),
                  *cover.routes.values()]:
        keep[cells] = True
    pattern = clean_up_hypercubes(search, cover, pattern, ~fixed_on & ~keep, progress,
                                  deadline)
    witnesses = cover.deviations(table.n_cells)[2]
    # a secondary in no final hypercube and no route protects nothing (a clean-up cut
    # short by the time limit leaves such cells): publish them all at once
    orphans = pattern & ~fixed_on & ~keep & (witnesses.count_nonzero(axis=1) == 0)
    pattern = pattern & ~orphans
    if progress is not None and orphans.any():
        progress(f"clean-up: {int(orphans.sum()):,} secondaries no hypercube or route "
                 "uses published again")
    if attacker.insiders is not None:  # hypercubes clear of the respondents they rely on
        pattern, left = avoid_insiders(search, cover, attacker.insiders, pattern,
                                       progress, deadline)
        pattern, _, complete = heuristic_pattern(left, attacker, router, c, pattern,
                                                 labels, progress, deadline)
        if not complete:
            return MethodOutcome(None, no_pattern(deadline,
                                                  attacker_solves=attacker.n_solves),
                                 bound=bound)
        witnesses = cover.deviations(table.n_cells)[2]
    with heartbeat(progress, "certificates: checking the hypercubes", quiet=True):
        unproven = uncertified(table.A, cover, pattern, *room)
    if unproven:  # never expected: the audit would report it too
        raise SolverError(f"{len(unproven)} hypercube certificates do not hold, e.g. "
                          f"{labels(unproven[0].cell)}")
    if progress is not None:
        progress(f"certificates: all {sum(len(c) for c in cover.structures.values()):,} "
                 "hypercubes checked against the relations")
    return MethodOutcome(pattern, pattern_stats(problem, pattern, deadline, attacker),
                         witnesses, bound)
