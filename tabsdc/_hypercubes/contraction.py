"""Sums over the corners of many candidate hypercubes at once, as matrix products.

A hypercube's corners are the product of its vectors' codes, so a sum over its corners of
a figure on the grid of cells (``g[u_1..u_k]``) is the contraction
``sum g[u_1..u_k] prod_d members_d[u_d, i_d]``: one matrix product per dimension for every
candidate ``(i_1, ..., i_k)`` (:func:`contract`; :func:`batch_contract` for a stack of
primaries). :func:`meets_both` and :func:`meets_each` count the corners lacking room
(:meth:`tabsdc._hypercubes.HypercubeSearch.evaluate`); :func:`capped` prunes the
vectors when the candidates are too many.
"""

from __future__ import annotations

import math

import numpy as np


def axis_shape(n: int, k: int, d: int, size: int) -> list[int]:
    """The shape ``(n, 1, .., size, .., 1)`` placing ``size`` on dimension ``d`` of ``k``."""
    shape = [n] + [1] * k
    shape[d + 1] = size
    return shape


def contract(matrices: list[np.ndarray], grids: list[np.ndarray]) -> list[np.ndarray]:
    """``sum g[u_1..u_k] prod_d matrices_d[u_d, i_d]`` for each grid array ``g``: one flat
    array per grid, candidates in C order of ``(i_1, ..., i_k)``."""
    value = np.stack(grids, axis=-1).astype(float, copy=False)
    for matrix in matrices:
        value = value.reshape(len(matrix), -1).T @ matrix
    return list(value.reshape(len(grids), -1))


def batch_contract(matrices: list[np.ndarray], grids: np.ndarray) -> list[np.ndarray]:
    """:func:`contract` for a stack of primaries: ``grids`` of shape ``(n, U_1..U_k, g)``
    (``g`` arrays per primary), ``matrices[d]`` of shape ``(n, U_d, C_d)``; one
    ``(n, C_1 * ... * C_k)`` per grid array."""
    n, g = len(matrices[0]), grids.shape[-1]
    value = grids
    for matrix in matrices:
        value = value.reshape(n, matrix.shape[1], -1).transpose(0, 2, 1) @ matrix
    value = value.reshape(n, g, -1)
    return [value[:, c] for c in range(g)]


def grid_keys(base: np.ndarray, offsets: list[np.ndarray]) -> np.ndarray:
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


def meets_both(members: list[np.ndarray], signed: list[np.ndarray], cost: np.ndarray,
           up: np.ndarray, down: np.ndarray, upl: float, lpl: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """What each candidate adds and whether it meets both levels (see
    :meth:`HypercubeSearch.evaluate`), from the grid's ``cost`` and room."""
    a = (up < upl) | (down < lpl)
    if upl == lpl:  # a corner of either sign needs the same room
        added, failing = contract(members, [cost, a])
        return added, failing < 0.5
    b = (down < upl) | (up < lpl)
    added, twice = contract(members, [cost, a + b.astype(float)])
    return added, twice + contract(signed, [a - b.astype(float)])[0] < 1


def meets_each(members: list[np.ndarray], signed: list[np.ndarray], up: np.ndarray,
                down: np.ndarray, upl: float, lpl: float) -> tuple[np.ndarray, np.ndarray]:
    """Whether each candidate meets the upward level and the downward one alone (a ``+1``
    corner moves up in the upward attack and down in the downward one; a ``-1`` corner the
    other way). With ``upl == lpl`` the downward figures are the upward ones with the signs
    turned: one signed contraction serves both."""
    a_up, b_up = up < upl, down < upl
    if upl == lpl:
        plain, = contract(members, [a_up + b_up.astype(float)])
        signs, = contract(signed, [a_up - b_up.astype(float)])
        return plain + signs < 1, plain - signs < 1
    a_down, b_down = down < lpl, up < lpl
    up_plain, down_plain = contract(members, [a_up + b_up.astype(float),
                                               a_down + b_down.astype(float)])
    up_signed, down_signed = contract(signed, [a_up - b_up.astype(float),
                                                a_down - b_down.astype(float)])
    return up_plain + up_signed < 1, down_plain + down_signed < 1


def line_costs(cost: np.ndarray, room: np.ndarray, members: np.ndarray) -> np.ndarray:
    """What each vector's line through the primary adds (``cost`` and ``room`` of the
    line's cells, in the order of ``members``' rows), ``inf`` where a cell of it cannot be
    a corner."""
    lower = cost @ members
    lower[(room == -np.inf).astype(float) @ members > 0] = np.inf
    return lower  # (stacks of lines and matrices alike)


def grid_line(slots: np.ndarray, own: list[np.ndarray], d: int) -> np.ndarray:
    """Per primary (first axis of ``slots``), the slots of its grid along dimension ``d``
    through the primary (at ``own[e]`` in every other dimension ``e``)."""
    n = len(slots)
    at: list[np.ndarray | slice] = [np.arange(n)]
    for e, position in enumerate(own):
        at.append(slice(None) if e == d else position)
    return slots[tuple(at)]


def keep_counts(counts: list[int], max_combinations: int) -> list[int]:
    """How many vectors per dimension :func:`capped` keeps: all, or, while the product
    exceeds ``max_combinations``, one fewer in the widest dimension."""
    keep = list(counts)
    while math.prod(keep) > max_combinations:
        widest = int(np.argmax(keep))
        keep[widest] = max(1, keep[widest] - 1)
    return keep


def capped(lower: list[np.ndarray], max_combinations: int) -> list[np.ndarray]:
    """The vectors to try per dimension: all, or, when the product of the counts exceeds
    ``max_combinations``, those of least ``lower`` (the cost of their line through the
    primary; ``inf``: ruled out) per dimension (:func:`keep_counts` of them).

    The first vector of each dimension, the vertical path down the preferred chain, is
    always kept: for a primary on leaves of a table of non-negative values their product
    (the primary and the totals above it, all moving up or all down together) has room in
    both directions whenever the primary's own bounds do."""
    counts = [len(low) for low in lower]
    keep = keep_counts(counts, max_combinations)
    if keep == counts:
        return [np.arange(n) for n in counts]
    ranked = []
    for low in lower:
        low = low.copy()
        low[0] = -np.inf
        ranked.append(np.argsort(low, kind="stable"))
    return [r[:m] for r, m in zip(ranked, keep, strict=True)]
