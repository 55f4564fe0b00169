"""A table's relations as a network: the relations are its nodes, a cell in two relations
an arc between them.

:func:`neighbourhood` walks that graph: the cells within ``k`` relations of a cell, where the
attacker's local LPs (suppression) look.

A relation ``sum_j a_uj x_j = b_u`` with coefficients +-1 multiplied by a sign ``sigma_u``
becomes a flow-conservation row when every cell in two relations u, v enters one and leaves
the other: ``sigma_u a_uj = -sigma_v a_vj``. :func:`relation_signs` finds such signs for all
relations at once (a spanning forest of the relation graph, signs by pointer jumping), so
that both the network method of suppression and controlled rounding by network flows read
the same orientation; each then checks every cell against the signs (an odd cycle of signs
means the relations are no network).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components


def relation_signs(csc: sp.csc_array, counts: np.ndarray) -> np.ndarray:
    """Signs ``sigma`` (one per relation) with ``sigma_u a_u = -sigma_v a_v`` on a spanning
    forest of the relation graph (cells in two relations are its edges).

    Parameters
    ----------
    csc : sparse matrix in CSC form, shape (k, n)
        The relations (rows) over the cells (columns), coefficients +-1.
    counts : ndarray of int, shape (n,)
        Relations of each cell (``np.diff(csc.indptr)``).

    Returns
    -------
    ndarray, shape (k,)
        +1 or -1 per relation; 0 where two relations are linked by cells of both signs
        (then no signing makes the relations a network, which the caller's check finds).

    Examples
    --------
    Two relations ``-T + a + b = 0`` and ``-T + c = 0`` share the cell T (coefficient -1 in
    both): opposite signs make T leave one node and enter the other.

    >>> A = sp.csc_array(np.array([[-1, 1, 1, 0], [-1, 0, 0, 1]], dtype=float))
    >>> relation_signs(A, np.diff(A.indptr)).tolist()
    [1.0, -1.0]
    """
    k = csc.shape[0]
    two = np.flatnonzero(counts == 2)
    start = csc.indptr[:-1][two]
    u, v = csc.indices[start], csc.indices[start + 1]
    edge_sign = -csc.data[start] * csc.data[start + 1]
    ends = (np.concatenate([u, v]), np.concatenate([v, u]))
    signs = sp.coo_array((np.concatenate([edge_sign, edge_sign]), ends),
                         shape=(k + 1, k + 1)).tocsr()
    pattern = sp.coo_array((np.ones(2 * len(two)), ends), shape=(k + 1, k + 1)).tocsr()
    _, labels = connected_components(pattern[:k, :k], directed=False)
    _, representative = np.unique(labels, return_index=True)
    # a virtual root (node k) joined to one relation of each component spans them all at once
    root = k
    pattern = pattern + sp.coo_array(
        (np.ones(len(representative)), (np.full(len(representative), root), representative)),
        shape=(k + 1, k + 1)).tocsr()
    _, predecessor = breadth_first_order(pattern, root, directed=False,
                                         return_predecessors=True)
    parent = predecessor.astype(np.int64)
    parent[root] = root
    step = np.ones(k + 1)
    inner = np.flatnonzero(parent != root)
    # a pair of relations linked by cells of both signs gets sign 0 here and fails the check
    if inner.size:  # (scipy returns a sparse array, not an ndarray, for empty indices)
        step[inner] = np.sign(np.asarray(signs[parent[inner], inner]).ravel())
    # pointer jumping: sigma(v) = product of the edge signs on v's path to the root
    while np.any(parent != root):
        step = step * step[parent]
        parent = parent[parent]
    return step[:k]


def neighbourhood(by_column: sp.csc_array, by_row: sp.csr_array, cell: int,
                  hops: int = 3) -> np.ndarray:
    """Cells reachable from ``cell`` through at most ``hops`` relations (sorted).

    ``k`` hops hold the smallest protecting structures of k-dimensional tables (the ``2^k``
    corners of a box: the opposite corner is k relations away), so callers use
    ``max(3, k)``. ``by_column``/``by_row``: the relations matrix compressed both ways.
    """
    cells = np.array([cell])
    for _ in range(hops):
        rows = np.unique(by_column[:, cells].indices)
        if len(rows) == 0:
            break
        cells = np.unique(by_row[rows].indices)
    return cells
