"""The one-dimensional vectors a hypercube is the product of, and their matrices.

Through a code ``x`` of a hierarchy the smallest vectors ``f`` with ``H f = 0`` are the
sibling pairs and the vertical path (:mod:`tabsdc._hypercubes`); a candidate
hypercube through a cell takes one per dimension. The search evaluates them as matrices
over the codes they use (:class:`Candidates`), stacked for the codes whose candidates have
the same shape (:class:`Kinds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tabsdc._hierarchy import Hierarchy


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


class Candidates:
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


def candidate_matrices(options: list[tuple[list, list]], stride: int, code: int) -> Candidates:
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
    return Candidates(codes, signs, union, (union - code) * stride,
                       int(np.searchsorted(union, code)), np.abs(signed), signed)


class Kind(NamedTuple):
    """The candidates of the codes of one dimension whose candidates have the same shape,
    stacked (one row per code): ``offsets``, ``members``, ``signed`` of
    :class:`Candidates`, the code's position in its union (``own``), and each vector's
    codes as key offsets from the code's (``corner_offsets``) with their signs
    (``corner_signs``, 0 = padding)."""

    offsets: np.ndarray  # (n, U)
    own: np.ndarray  # (n,)
    members: np.ndarray  # (n, U, C)
    signed: np.ndarray  # (n, U, C)
    corner_offsets: np.ndarray  # (n, C, S)
    corner_signs: np.ndarray  # (n, C, S)


class Kinds(NamedTuple):
    """A dimension's codes grouped by the shape of their candidates: the code is row
    ``index[code]`` of ``kinds[of[code]]``."""

    kinds: list[Kind]
    of: np.ndarray
    index: np.ndarray


def kinds_by_shape(lines: list[Candidates], stride: int) -> Kinds:
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
        kinds.append(Kind(
            np.stack([o.offsets for o in vectors]), np.array([o.own for o in vectors]),
            np.stack([o.members for o in vectors]),
            np.stack([o.signed for o in vectors]),
            np.stack([np.where(o.codes >= 0, (o.codes - c) * stride, 0)
                      for c, o in zip(codes, vectors, strict=True)]),
            np.stack([o.signs for o in vectors])))
    return Kinds(kinds, of, index)
