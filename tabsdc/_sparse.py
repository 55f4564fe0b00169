"""Gathers over compressed sparse matrices, at once for many rows."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def row_entries(matrix: sp.csr_array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every stored entry of ``rows`` of ``matrix`` (CSR), row by row and each row's entries
    in order: their positions in ``matrix.indices`` and ``matrix.data``, and the position
    in ``rows`` of the row each belongs to.

    Examples
    --------
    >>> AT = sp.csr_array([[-1.0, 0.0], [1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> entries, owner = row_entries(AT, np.array([1, 3]))
    >>> AT.indices[entries].tolist(), owner.tolist()
    ([0, 1, 1], [0, 0, 1])
    """
    counts = np.diff(matrix.indptr)[rows]
    entries = (np.repeat(matrix.indptr[rows] - np.cumsum(counts) + counts, counts)
               + np.arange(counts.sum()))
    return entries, np.repeat(np.arange(len(rows)), counts)
