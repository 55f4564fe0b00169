"""Code hierarchies of a table dimension and the additivity relations they induce.

A hierarchy is a rooted tree of codes: the root is the dimension's grand total, every other
code has one parent. Each parent gives one relation with its *direct* children
(``parent = sum(children)``), as tau-ARGUS and sdcTable do; deeper codes are reached through
the parent's children.

Builders
--------
* :meth:`Hierarchy.flat`: a total over a list of codes;
* :meth:`Hierarchy.from_parent_child`: a parent/child frame or mapping;
* :meth:`Hierarchy.from_levels`: one column per level, e.g. NACE ``A10 > A21 > A88`` or
  ``NUTS1 > NUTS2 > NUTS3`` as found in microdata;
* :meth:`Hierarchy.from_paths`: level-coded strings such as ``"FR1>FR10>FR105"``;
* :meth:`Hierarchy.from_prefixes`: codes whose parent is a prefix (NUTS ``FR1``, ``FR10``,
  ``FR105``), given the code length of each level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tabsdc._codes import code_column, code_columns, normal_code
from tabsdc._errors import HierarchyError

#: Code given to the grand total of a dimension when the user names none.
DEFAULT_TOTAL = "Total"


@dataclass(frozen=True)
class Hierarchy:
    """A rooted tree of codes of one dimension.

    Parameters
    ----------
    parents : Mapping[str, str]
        Parent of every non-root code.
    root : str
        The grand-total code.

    Attributes
    ----------
    codes : tuple of str
        Every code in depth-first order, root first, children in the order first seen
        (tau-ARGUS's order of codes in a hierarchical dimension).
    sorted_codes : tuple of str
        Every code in depth-first order, root first, the children of each code sorted
        (``01`` before ``02`` before ``10``, whatever the order of the data): the order in
        which publishable files, reports, status maps and the browser app list codes.
    """

    parents: Mapping[str, str]
    root: str = DEFAULT_TOTAL
    codes: tuple[str, ...] = field(init=False, repr=False)
    sorted_codes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _children: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        root, parents = normal_code(self.root), _normal_parents(self.parents)
        if not root:
            raise HierarchyError("the total code is empty; name the total (e.g. 'Total')")
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "parents", parents)
        children: dict[str, list[str]] = {}
        for code, parent in self.parents.items():
            if code == self.root:
                raise HierarchyError(f"the total code {self.root!r} cannot have a parent")
            if code == parent:
                raise HierarchyError(f"code {code!r} is its own parent")
            children.setdefault(parent, []).append(code)
        known = set(self.parents) | {self.root}
        orphans = sorted(set(children) - known)
        if orphans:
            raise HierarchyError(
                f"parent code {orphans[0]!r} is neither the total {self.root!r} "
                "nor a child of another code"
            )
        order = _depth_first(self.root, children)
        if len(order) != len(known):
            cyclic = sorted(known - set(order))
            raise HierarchyError(f"codes {cyclic[:5]} do not lead to the total (a cycle)")
        object.__setattr__(self, "codes", order)
        object.__setattr__(self, "sorted_codes", _depth_first(
            self.root, {code: sorted(under) for code, under in children.items()}))
        object.__setattr__(self, "_children", {k: tuple(v) for k, v in children.items()})

    # -- builders --------------------------------------------------------------------------
    @classmethod
    def flat(cls, codes: Iterable[str], total: str = DEFAULT_TOTAL) -> Hierarchy:
        """A one-level hierarchy: ``total = sum(codes)``.

        Raises
        ------
        HierarchyError
            For an empty code.
        """
        unique = list(dict.fromkeys(map(normal_code, codes)))
        return cls(dict.fromkeys(unique, total), root=total)

    @classmethod
    def from_parent_child(
        cls,
        pairs: pd.DataFrame | Mapping[str, str],
        parent: str = "parent",
        child: str = "child",
    ) -> Hierarchy:
        """From a frame with ``parent`` and ``child`` columns, or a ``{child: parent}`` map.

        The root is the one parent that is nobody's child.

        Raises
        ------
        HierarchyError
            When a child has two parents, there is not exactly one root, or a code is
            missing or empty (naming the column and row).
        """
        if isinstance(pairs, Mapping):
            frame = pd.DataFrame({child: list(pairs), parent: list(pairs.values())},
                                 dtype=object)
        else:
            missing = [c for c in (parent, child) if c not in pairs.columns]
            if missing:
                raise HierarchyError(f"parent/child frame has no column {missing[0]!r}")
            frame = pairs
        codes = code_columns(frame, [parent, child], error=HierarchyError)
        return cls._from_edges(codes[child], codes[parent])

    @classmethod
    def from_levels(cls, levels: pd.DataFrame, total: str = DEFAULT_TOTAL) -> Hierarchy:
        """From one column per level, coarsest first (e.g. ``df[["A10", "A21", "A88"]]``).

        A code repeated at the next level (a level with a single child of the same name) is
        kept once.

        Raises
        ------
        HierarchyError
            When a code sits under two different parents, or a code is missing or empty
            (naming the column and row).
        """
        if levels.shape[1] == 0:
            raise HierarchyError("from_levels needs at least one level column")
        distinct = code_columns(levels.drop_duplicates(), list(levels.columns),
                                error=HierarchyError).drop_duplicates()
        columns = list(distinct.columns)
        child_parts, parent_parts = [distinct[columns[0]]], [pd.Series(total, index=distinct.index)]
        for upper, lower in zip(columns, columns[1:], strict=False):
            child_parts.append(distinct[lower])
            parent_parts.append(distinct[upper])
        child = pd.concat(child_parts, ignore_index=True)
        parent = pd.concat(parent_parts, ignore_index=True)
        keep = child != parent
        return cls._from_edges(child[keep], parent[keep], root=total)

    @classmethod
    def from_paths(
        cls, paths: Iterable[str], sep: str = ">", total: str = DEFAULT_TOTAL
    ) -> Hierarchy:
        """From level-coded strings such as ``"FR1>FR10>FR105"`` (coarsest level first).

        Raises
        ------
        HierarchyError
            For a path with an empty code (``"FR1>>FR101"``, a trailing ``>``), naming the
            path and the level; and as :meth:`from_levels`.

        Examples
        --------
        >>> Hierarchy.from_paths(["FR1>FR10>FR101", "FR1>FR10>FR102"]).codes
        ('Total', 'FR1', 'FR10', 'FR101', 'FR102')
        >>> Hierarchy.from_paths(["FR1>>FR101"])
        Traceback (most recent call last):
        tabsdc.HierarchyError: path 1 'FR1>>FR101' has an empty code at level 2
        """
        listed = pd.Series(list(paths), dtype=object)
        text = code_column(listed, "paths", error=HierarchyError)
        split = text.str.split(sep, expand=True)
        split = split.apply(lambda col: col.str.strip())
        empty = (split == "").to_numpy()
        if empty.any():
            row, level = (int(k[0]) for k in np.nonzero(empty))
            raise HierarchyError(f"path {row + 1} {text.iloc[row]!r} has an empty code at "
                                 f"level {level + 1}")
        if split.isna().any().any():
            # paths of unequal depth: pad each with its own last code (a trivial level)
            split = split.T.ffill().T
        return cls.from_levels(split, total=total)

    @classmethod
    def from_prefixes(
        cls, codes: Iterable[str], lengths: Sequence[int], total: str = DEFAULT_TOTAL
    ) -> Hierarchy:
        """From codes whose parent is their prefix, e.g. NUTS with ``lengths=(3, 4, 5)``.

        Every prefix of every code at the given lengths becomes a code of the hierarchy.

        Raises
        ------
        HierarchyError
            When a code's length is not one of ``lengths``.
        """
        lengths = sorted(lengths)
        series = pd.Series(list(dict.fromkeys(map(normal_code, codes))), dtype=str)
        bad = series[~series.str.len().isin(lengths)]
        if len(bad):
            raise HierarchyError(
                f"code {bad.iloc[0]!r} has length {len(bad.iloc[0])}, not one of {lengths}"
            )
        levels = pd.DataFrame({n: series.str[:n] for n in lengths})
        # a shorter code stands for itself at the deeper levels
        for shorter, longer in zip(lengths, lengths[1:], strict=False):
            short_codes = series.str.len() <= shorter
            levels.loc[short_codes, longer] = levels.loc[short_codes, shorter]
        return cls.from_levels(levels, total=total)

    @classmethod
    def _from_edges(
        cls, child: pd.Series, parent: pd.Series, root: str | None = None
    ) -> Hierarchy:
        edges = pd.DataFrame({"child": child.to_numpy(), "parent": parent.to_numpy()})
        edges = edges.drop_duplicates()
        twice = edges["child"].duplicated(keep=False)
        if twice.any():
            bad = edges[twice].sort_values("child").head(2)
            raise HierarchyError(
                f"code {bad['child'].iloc[0]!r} has two parents: "
                f"{bad['parent'].iloc[0]!r} and {bad['parent'].iloc[1]!r}"
            )
        if root is None:
            roots = pd.unique(edges.loc[~edges["parent"].isin(edges["child"]), "parent"])
            if len(roots) != 1:
                raise HierarchyError(f"a hierarchy needs exactly one root, found {list(roots)}")
            root = str(roots[0])
        return cls(dict(zip(edges["child"], edges["parent"], strict=True)), root=root)

    # -- queries ---------------------------------------------------------------------------
    def children(self, code: str) -> tuple[str, ...]:
        """Direct children of ``code`` (empty for a leaf)."""
        self._check(code)
        return self._children.get(code, ())

    @property
    def leaves(self) -> tuple[str, ...]:
        """Codes without children, in hierarchy order."""
        return tuple(c for c in self.codes if c not in self._children)

    @property
    def parent_codes(self) -> tuple[str, ...]:
        """Codes with children (each gives one relation), in hierarchy order."""
        return tuple(c for c in self.codes if c in self._children)

    def depth(self, code: str) -> int:
        """0 for the root, 1 for its children, ..."""
        self._check(code)
        level = 0
        while code != self.root:
            code = self.parents[code]
            level += 1
        return level

    def ancestor_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions (in :attr:`codes`) of every (code, ancestor-or-self) pair."""
        position = {c: i for i, c in enumerate(self.codes)}
        parent_pos = np.array(
            [position[self.parents[c]] if c != self.root else -1 for c in self.codes]
        )
        code_idx = np.arange(len(self.codes))
        codes, ancestors = [code_idx], [code_idx]
        current = parent_pos.copy()
        while (current >= 0).any():
            has = current >= 0
            codes.append(code_idx[has])
            ancestors.append(current[has])
            current = np.where(has, parent_pos[np.maximum(current, 0)], -1)
        return np.concatenate(codes), np.concatenate(ancestors)

    def parent_positions(self) -> np.ndarray:
        """Position of each code's parent in :attr:`codes` (-1 for the root)."""
        position = {c: i for i, c in enumerate(self.codes)}
        return np.array([position[self.parents[c]] if c != self.root else -1 for c in self.codes])

    def _check(self, code: str) -> None:
        if code != self.root and code not in self.parents:
            raise HierarchyError(f"unknown code {code!r}")

    def __len__(self) -> int:
        return len(self.codes)

    def __contains__(self, code: object) -> bool:
        return code == self.root or code in self.parents

    def to_frame(self) -> pd.DataFrame:
        """One row per code: code, parent (None for the root), depth, leaf."""
        parent = [self.parents.get(c) for c in self.codes]
        position = {c: i for i, c in enumerate(self.codes)}
        depth = np.zeros(len(self.codes), dtype=int)
        for i, p in enumerate(parent):  # codes are depth-first: a parent precedes its children
            if p is not None:
                depth[i] = depth[position[p]] + 1
        leaf = [c not in self._children for c in self.codes]
        return pd.DataFrame({"code": self.codes, "parent": parent, "depth": depth, "leaf": leaf})


def _depth_first(root: str, children: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Every code under ``root`` (itself first), depth first, children in the given order."""
    order: list[str] = []
    stack = [root]
    while stack:
        code = stack.pop()
        order.append(code)
        stack.extend(reversed(children.get(code, ())))
    return tuple(order)


def _normal_parents(parents: Mapping[object, object]) -> dict[str, str]:
    """``{code: parent}`` with every code as text in NFC (:mod:`tabsdc._codes`); an empty code,
    or two spellings of one code with different parents, refused."""
    normal: dict[str, str] = {}
    for code, parent in parents.items():
        code, parent = normal_code(code), normal_code(parent)
        if not code or not parent:
            raise HierarchyError(f"empty code in the hierarchy: child {code!r} of parent "
                                 f"{parent!r}; every code needs at least one character")
        if normal.setdefault(code, parent) != parent:
            raise HierarchyError(f"code {code!r} has two parents: {normal[code]!r} and "
                                 f"{parent!r}")
    return normal
