"""The respondents of single-contributor cells and the cells each one knows.

The respondent of a cell with one contributor (``freq == 1``) knows that cell's value, and
so the value of every cell whose one contributor it is too (:func:`insider_groups`). The
insider attack of the audit (:mod:`tabsdc.audit._insider`) and the suppression methods,
which protect against it, share these groups (:class:`Insiders`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

#: Weight of a respondent's cell in a certificate's least-deviation flow (other cells: 1).
RESPONDENT_WEIGHT = 10.0


@dataclass(frozen=True)
class Insiders:
    """Respondents of single-contributor cells: one group of cells per respondent.

    ``group[i]`` is the group of cell i (-1: none); a group holds every cell whose one
    contributor is that respondent. ``insider[g]`` is the single-contributor primary that
    names group g in reports (its first). ``parents[i]`` lists the totals cell i is a part
    of (-1 padding: one column per relation at most). Build with :func:`insider_groups`.
    """

    group: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    insider: np.ndarray
    parents: np.ndarray
    # each group's cells and every total above them (filled when first asked), and a
    # scratch mask over the cells for finding them (all False between uses)
    _above: dict[int, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _seen: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_seen", np.zeros(len(self.group), dtype=bool))

    @property
    def n_groups(self) -> int:
        return len(self.insider)

    def members(self, g: int) -> np.ndarray:
        """The cells of group ``g`` (sorted)."""
        return self.order[self.starts[g]:self.starts[g + 1]]

    def fixed(self, g: int) -> tuple[int, ...]:
        """The cells respondent ``g`` knows, as a requirement's ``fixed``."""
        return tuple(self.members(g).tolist())

    def weights(self, cells: np.ndarray, other: float = 1.0) -> np.ndarray:
        """Weights of ``cells`` in a certificate's flow: ``other``, and
        :data:`RESPONDENT_WEIGHT` for a respondent's cell (a certificate moving it proves
        nothing against that respondent; flows that avoid such cells where they can need
        fewer scenarios). ``other=0`` asks only that: the audit's certificates, which need
        not be small (:mod:`tabsdc.audit._insider`).

        >>> from tabsdc._respondents import insider_groups
        >>> A = sp.csc_array([[-1.0, 1, 1]])
        >>> groups = insider_groups(A, np.array([2.0, 1, 1]), np.array([False, True, False]))
        >>> groups.weights(np.arange(3)), groups.weights(np.arange(3), other=0.0)
        (array([ 1., 10.,  1.]), array([ 0., 10.,  0.]))
        """
        return np.where(self.group[cells] >= 0, RESPONDENT_WEIGHT, other)

    def groups_in(self, cells: np.ndarray, own: int) -> np.ndarray:
        """The groups with a cell among ``cells`` whose respondents attack cell ``own``:
        not its own group, nor a group of cells ``own`` contains (:meth:`contributes`)."""
        found = self.group[np.asarray(cells, dtype=np.int64)]
        found = np.unique(found[found >= 0])
        return self.attacking(found, own)

    def attacking(self, groups: np.ndarray, cell: int) -> np.ndarray:
        """The ``groups`` whose respondents attack ``cell`` (see :meth:`groups_in`)."""
        groups = groups[groups != self.group[cell]]
        return groups[[not self.contributes(int(g), cell) for g in groups]]

    def contributes(self, g: int, cell: int) -> bool:
        """Whether respondent ``g`` contributes to ``cell``: the cell is a total above one
        of the group's cells (through any number of relations). Its attack on such a cell
        is the coalition of the cell's own contributors that the cell's rule and levels
        speak about (the p % rule: a contributor estimating another), not an insider's."""
        above = self._above.get(g)
        if above is None:
            seen = self._seen
            found = [frontier := self.members(g)]
            seen[frontier] = True
            while len(frontier):
                frontier = self.parents[frontier].ravel()
                frontier = np.unique(frontier[(frontier >= 0) & ~seen[frontier]])
                seen[frontier] = True
                found.append(frontier)
            above = self._above[g] = np.sort(np.concatenate(found))
            seen[above] = False
        at = np.searchsorted(above, cell)
        return bool(at < len(above) and above[at] == cell)


def insider_groups(A: sp.sparray | sp.spmatrix, freq: np.ndarray,
                   insiders: np.ndarray) -> Insiders | None:
    """The respondents whose attacks matter and the cells each knows.

    A cell with ``freq == 1`` has one contributor. In a relation the total is the term
    whose sign differs from the others' (``-1`` against ``+1`` parts); a total with one
    contributor shares it with every part that has one (that contributor is in the total,
    and alone there). Cells linked so, through any number of relations, are one group; the
    groups holding a cell of ``insiders`` (the single-contributor primaries) are returned.
    Single-contributor cells that are not linked are taken as different respondents (with
    holdings, two cells of one holding under no common single-contributor total are checked
    against each other: a cautious error).

    Parameters
    ----------
    A : sparse matrix (relations x cells)
    freq : ndarray
        Contributors per cell (NaN when unknown).
    insiders : ndarray of bool
        The cells whose respondents attack (hidden primaries with ``freq == 1``).

    Returns
    -------
    Insiders or None
        None when no cell of ``insiders`` is given.

    Examples
    --------
    ``T = x + y`` and ``x = x1 + x2``; x, y and x1 have one contributor each (x2 none):
    x and x1 share theirs, y is another respondent.

    >>> A = sp.csr_array([[-1.0, 1, 1, 0, 0], [0, -1, 0, 1, 1]])  # T, x, y, x1, x2
    >>> groups = insider_groups(A, np.array([2.0, 1, 1, 1, 0]),
    ...                         np.array([False, True, True, True, False]))
    >>> groups.group.tolist(), [groups.members(g).tolist() for g in range(groups.n_groups)]
    ([-1, 0, 1, 0, -1], [[1, 3], [2]])
    """
    insiders = np.asarray(insiders, dtype=bool)
    if not insiders.any():
        return None
    A = sp.csr_array(A)
    m, n = A.shape
    single = np.nan_to_num(np.asarray(freq, dtype=float), nan=-1.0) == 1
    coo = A.tocoo()
    row, col, sign = coo.row, coo.col, np.sign(coo.data)
    negative = np.bincount(row, weights=sign < 0, minlength=m)
    positive = np.bincount(row, weights=sign > 0, minlength=m)
    is_total = ((sign < 0) & (negative[row] == 1)) | \
        ((sign > 0) & (positive[row] == 1) & (negative[row] > 1))
    total_of = np.full(m, -1, dtype=np.int64)
    total_of[row[is_total]] = col[is_total]
    part = ~is_total & (total_of[row] >= 0)
    total, member = total_of[row[part]], col[part]
    linked = single[total] & single[member]
    graph = sp.coo_array((np.ones(int(linked.sum())), (total[linked], member[linked])),
                         shape=(n, n))
    _, label = connected_components(graph, directed=False)
    chosen = np.unique(label[insiders])
    group = np.full(n, -1, dtype=np.int64)
    inside = np.isin(label, chosen) & (single | insiders)
    group[inside] = np.searchsorted(chosen, label[inside])
    order = np.flatnonzero(inside)
    order = order[np.argsort(group[order], kind="stable")]
    starts = np.searchsorted(group[order], np.arange(len(chosen) + 1))
    first = np.full(len(chosen), n, dtype=np.int64)
    at = np.flatnonzero(insiders)
    np.minimum.at(first, group[at], at)
    child, parent = col[part], total_of[row[part]]
    order_by_child = np.argsort(child, kind="stable")
    child, parent = child[order_by_child], parent[order_by_child]
    rank = np.arange(len(child)) - np.searchsorted(child, child)  # k-th total of the cell
    parents = np.full((n, int(rank.max(initial=-1)) + 1), -1, dtype=np.int64)
    parents[child, rank] = parent
    return Insiders(group, order, starts, first, parents)
