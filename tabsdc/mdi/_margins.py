"""The margins MDI-CTA fits: every total of a table as a sum of its interior cells.

IPF works on the interior (non-total) cells; a total is a margin ``G x`` with a 0/1 row of
``G`` over the interior cells, found by expanding the table's relations ``total = sum of
parts`` through every level of every hierarchy. :func:`margin_mask` picks the totals kept at
their original values (the minimal sufficient statistics of the fit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError

if TYPE_CHECKING:
    from tabsdc._table import Table


def aggregation_matrix(table: Table) -> tuple[np.ndarray, np.ndarray, sp.csr_array]:
    """Every total cell of ``table`` as a sum of interior cells.

    Returns
    -------
    interior : ndarray of int
        Positions of the interior (non-total) cells.
    totals : ndarray of int
        Positions of the total cells.
    G : scipy.sparse.csr_array, shape (len(totals), len(interior))
        0/1 rows: ``value[totals] = G @ value[interior]``.

    Raises
    ------
    InputError
        A relation that is not ``total = sum of parts`` (one coefficient -1, the others +1,
        right-hand side 0), relations that count a cell twice or form a cycle, or a table
        whose totals are not the sums of their interior cells.
    """
    A = table.A.tocsr()
    n = table.n_cells
    totals_mask = table.total_cells
    coo = A.tocoo()
    negative = np.bincount(coo.row[coo.data < 0], minlength=A.shape[0])
    bad = np.flatnonzero((negative != 1) | (np.abs(table.b) > 0))
    if bad.size or not np.all(np.isin(coo.data, (-1.0, 1.0))):
        row = int(bad[0]) if bad.size else int(coo.row[~np.isin(coo.data, (-1.0, 1.0))][0])
        raise InputError(f"MDI needs relations of the form total = sum of parts; "
                         f"{table.describe_relation(row)} is not")
    total_of_row = coo.col[coo.data < 0][np.argsort(coo.row[coo.data < 0])]
    totals, first = np.unique(total_of_row, return_index=True)
    parts = A[first]
    parts.data[parts.data < 0] = 0.0
    parts.eliminate_zeros()
    leaves = np.flatnonzero(~totals_mask)
    rows = np.concatenate([np.repeat(totals, np.diff(parts.indptr)), leaves])
    cols = np.concatenate([parts.indices, leaves])
    step = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    keep_interior = sp.diags_array((~totals_mask).astype(float), format="csr")
    expand_totals = step[totals_mask]
    expansion = step
    for _ in range(n + 1):
        through_totals = expansion[:, totals_mask]
        if through_totals.nnz == 0:
            break
        expansion = sp.csr_array(expansion @ keep_interior + through_totals @ expand_totals)
    else:
        raise InputError("the table's relations form a cycle: totals cannot be expanded")
    interior = np.flatnonzero(~totals_mask)
    G = sp.csr_array(expansion[totals][:, interior])
    G.eliminate_zeros()
    if G.nnz and G.data.max() > 1:
        raise InputError("the relations count an interior cell twice in one total")
    values = table.values
    expected = G @ values[interior]
    off = np.flatnonzero(np.abs(expected - values[totals])
                         > 1e-9 * np.maximum(1.0, np.abs(values[totals])))
    if off.size:
        raise InputError(f"{table.cell_labels(totals[off[:1]])[0]} is not the sum of its "
                         "interior cells")
    return interior, totals, G



def margin_mask(table: Table, totals: np.ndarray, margins: object) -> np.ndarray:
    """Which total cells are minimal sufficient statistics (kept at original values)."""
    if margins is None or (isinstance(margins, str) and margins == "all"):
        return np.ones(len(totals), dtype=bool)
    array = np.asarray(margins, dtype=object) if not isinstance(margins, np.ndarray) \
        else margins
    if array.dtype == bool:
        if array.shape != (table.n_cells,):
            raise InputError(f"margins mask has shape {array.shape}, the table has "
                             f"{table.n_cells} cells")
        interior_picked = np.flatnonzero(array & ~table.total_cells)
        if interior_picked.size:
            raise InputError(f"margins must be total cells; "
                             f"{table.cell_labels(interior_picked[:1])[0]} is interior")
        return array[totals]
    if not table.dims:
        raise InputError("margins as dimension sets need a table with dimensions; give a "
                         "boolean mask over the cells instead")
    index = table.cells.index[totals]
    codes = np.column_stack([index.get_level_values(d) if len(table.dims) > 1 else index
                             for d in table.dims]).astype(object)
    roots = np.array([table.hierarchies[d].root for d in table.dims], dtype=object)
    not_root = codes != roots[None, :]
    keep = np.zeros(len(totals), dtype=bool)
    for margin in margins:
        dims = (margin,) if isinstance(margin, str) else tuple(margin)
        unknown = [d for d in dims if d not in table.dims]
        if unknown:
            raise InputError(f"margin {margin!r}: unknown dimension {unknown[0]!r}")
        allowed = np.array([d in dims for d in table.dims])
        keep |= ~np.any(not_root & ~allowed[None, :], axis=1)
    return keep
