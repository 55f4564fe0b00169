"""The candidate hypercubes of a table's primaries and their evaluation on a pattern.

:class:`HypercubeSearch` holds each dimension's candidate vectors (:mod:`.lines`) and
addresses cells by their key on the product of the hierarchies; :class:`Pattern` keeps,
per key, what each cell adds when hidden and its room as a corner. All candidates of a
primary are evaluated at once without listing their corners (:meth:`HypercubeSearch.evaluate`,
by the contractions of :mod:`.contraction`), and primaries whose candidates have the same
shape are evaluated together (:meth:`HypercubeSearch.batch_cheapest`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from tabsdc._errors import InputError
from tabsdc._flows import DOWN, UP
from tabsdc._hierarchy import Hierarchy
from tabsdc._hypercubes.contraction import (
    axis_shape,
    batch_contract,
    capped,
    contract,
    grid_keys,
    grid_line,
    keep_counts,
    line_costs,
    meets_both,
    meets_each,
)
from tabsdc._hypercubes.lines import (
    Kind,
    Kinds,
    candidate_matrices,
    kinds_by_shape,
    line_vectors,
)
from tabsdc._table import Table

#: At most this many candidate hypercubes of one primary are evaluated (the vectors of
#: each dimension are pruned by the cost of their own line through the primary when the
#: product is larger).
MAX_COMBINATIONS = 8192
#: Candidates per primary of the wider search (every chain) for the requirements left unmet.
WIDE_COMBINATIONS = 16384
#: Relative tolerance of the room a corner needs.
ROOM_TOLERANCE = 1e-9


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

    kinds: list[Kind]
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


class Proposal(NamedTuple):
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
        if not table.dims:
            raise InputError("this method needs a table with dimensions and hierarchies")
        self.coords = table.cell_coords()
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
            self.lines.append([candidate_matrices(options, int(self.strides[d]), code)
                               for code, options
                               in enumerate(line_vectors(h, preferred, every_chain))])
        self._kinds: list[Kinds] | None = None  # for batch_cheapest, made on first use

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
                rows.append(line_costs(pattern.cost_slots[at], pattern.room_slots[at],
                                        o.members))
        if not free_only:
            rows = capped(rows, self.max_combinations)
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
        if free_only and upl == lpl:  # all at once; see meets_each for the signs
            a_up, b_up = up < upl, down < upl
            added, failing, plain = contract(members, [cost, a_up | b_up,
                                                        a_up + b_up.astype(float)])
            (signs,) = contract(signed, [a_up - b_up.astype(float)])
            return Evaluation(int(cell), tuple(rows), added, failing < 0.5,
                              plain + signs < 1, plain - signs < 1)
        added, both = meets_both(members, signed, cost, up, down, upl, lpl)
        if both.any() and not free_only:
            return Evaluation(int(cell), tuple(rows), added, both, both, both)
        return Evaluation(int(cell), tuple(rows), added, both,
                          *meets_each(members, signed, up, down, upl, lpl))

    def _groups(self, cells: np.ndarray, pattern: Pattern, levels: np.ndarray):
        """The primaries ``cells`` whose candidates have the same shape in every dimension,
        group by group, stacked: their positions in ``cells`` and :class:`_Group`."""
        if self._kinds is None:
            self._kinds = [kinds_by_shape(lines, int(stride))
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
            slots = self.slots(grid_keys(base, [kind.offsets[i] for kind, i
                                                 in zip(kinds, index, strict=True)]))
            upl, lpl = (levels[at, c].reshape(n, *(1,) * k) * (1 - ROOM_TOLERANCE)
                        for c in (0, 1))
            members = [kind.members[i] for kind, i in zip(kinds, index, strict=True)]
            signed = [kind.signed[i] for kind, i in zip(kinds, index, strict=True)]
            counts = [m.shape[2] for m in members]
            keep = keep_counts(counts, self.max_combinations)
            rows = [np.broadcast_to(np.arange(c), (n, c)) for c in counts]
            if keep != counts:  # the vectors of the cheapest lines through each primary
                own = [kind.own[i] for kind, i in zip(kinds, index, strict=True)]
                for d in range(k):
                    if keep[d] < counts[d]:
                        line = grid_line(slots, own, d)
                        lower = line_costs(pattern.cost_slots[line][:, None, :],
                                            pattern.room_slots[line][:, None, :],
                                            members[d])[:, 0, :]
                        lower[:, 0] = -np.inf  # the vertical path is always kept
                        rows[d] = np.argsort(lower, axis=1, kind="stable")[:, :keep[d]]
                        members[d] = np.take_along_axis(members[d], rows[d][:, None, :], 2)
                        signed[d] = np.take_along_axis(signed[d], rows[d][:, None, :], 2)
            yield at, _Group(kinds, index, base, slots, upl, lpl, members, signed, rows,
                             keep, keep != counts)

    def batch_cheapest(self, cells: np.ndarray, pattern: Pattern, levels: np.ndarray
                       ) -> list[Proposal | None]:
        """The cheapest hypercube meeting both levels of each of ``cells`` (``levels``:
        one ``(upl, lpl)`` row each) among its candidates, on ``pattern`` as it is: the
        choice :meth:`evaluate` gives, for many primaries at once.

        Primaries whose candidates have the same shape in every dimension are evaluated
        together (stacked matrix products); when they have more than
        ``max_combinations`` candidates each keeps the same number of vectors per
        dimension, those of its cheapest lines. None for a primary with no candidate
        meeting both levels."""
        out: list[Proposal | None] = [None] * len(cells)
        k = self.coords.shape[1]
        for at, group in self._groups(cells, pattern, levels):
            n = len(at)
            (kinds, index, base, slots, upl, lpl, members, signed, rows, keep,
             pruned) = group
            if np.array_equal(upl, lpl):  # a corner of either sign needs the same room
                grid = pattern.pairs[slots]  # (cost, room) of each cell
                np.less(grid[..., 1], upl, out=grid[..., 1])
                added, failing = batch_contract(members, grid)
            else:
                up, down = pattern.up_slots[slots], pattern.down_slots[slots]
                a, b = (up < upl) | (down < lpl), (down < upl) | (up < lpl)
                added, twice = batch_contract(members, np.stack(
                    [pattern.cost_slots[slots], a + b.astype(float)], axis=-1))
                failing = 0.5 * (twice + batch_contract(
                    signed, (a - b.astype(float))[..., None])[0])
            both = failing < 0.5
            choice = np.argmin(np.where(both, added, np.inf), axis=1)
            number = np.arange(n)
            found, best = both[number, choice], added[number, choice]
            vector = np.unravel_index(choice, keep)
            corner_keys = base.reshape(n, *(1,) * k)
            signs = np.ones((n,) + (1,) * k, dtype=np.int8)
            for d, (kind, i) in enumerate(zip(kinds, index, strict=True)):
                shape = axis_shape(n, k, d, kind.corner_offsets.shape[2])
                row = rows[d][number, vector[d]]
                corner_keys = corner_keys + kind.corner_offsets[i, row].reshape(shape)
                signs = signs * kind.corner_signs[i, row].reshape(shape)
            signs = signs.reshape(n, -1)
            corner_cells = self.cells(np.where(signs != 0, corner_keys.reshape(n, -1),
                                               base[:, None]))
            slots = slots.reshape(n, -1)
            for m in np.flatnonzero(found).tolist():
                used = signs[m] != 0
                out[int(at[m])] = Proposal(
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
