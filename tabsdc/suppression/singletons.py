"""Singletons: two single-contributor primaries in one relation.

If the only suppressed cells of a relation are two primaries that each have one contributor,
each of those respondents knows its own value and recovers the other's from the relation
(tau-ARGUS's "singleton" problem). Covered here: every relation whose parts include two or
more primary cells with ``freq == 1`` must have at least one more suppressed cell (a total with
one contributor is not counted: its contributor is that of its only non-empty part). Not
covered: coalitions
of respondents of different cells with more than one contributor (they are what the p% and
p/q rules' protection levels already assume away), and relations linked through several
steps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tabsdc.table import Table

__all__ = ["singleton_rows", "protect_singletons"]


def singleton_rows(table: Table) -> sp.csr_array | None:
    """Rows ``r`` with ``r @ z >= 1``: one per relation holding >= 2 singleton primaries,
    over that relation's other cells. None when the table has no such relation."""
    if "freq" not in table.cells.columns:
        return None
    singleton = ((table.cells["status"] == "u") & (table.cells["freq"] == 1)).to_numpy()
    pattern = (table.A != 0).astype(float)
    # count parts only: a total with one contributor shares it with its only non-empty part
    counts = (table.A > 0).astype(float) @ singleton.astype(float)
    chosen = np.flatnonzero(counts >= 2)
    if len(chosen) == 0:
        return None
    rows = sp.csr_array(pattern[chosen])
    return sp.csr_array(rows @ sp.diags_array((~singleton).astype(float)))


def protect_singletons(
    rows: sp.csr_array, pattern: np.ndarray, cost: np.ndarray, fixed_off: np.ndarray
) -> np.ndarray:
    """Add the cheapest allowed cell to every singleton relation without another suppression.

    Adding suppressions never weakens the protection of other cells.
    """
    pattern = pattern.copy()
    allowed = sp.csr_array(rows @ sp.diags_array((~fixed_off).astype(float)))
    for r in np.flatnonzero(rows @ pattern.astype(float) < 1):
        cells = allowed.indices[allowed.indptr[r]:allowed.indptr[r + 1]]
        if len(cells):
            pattern[cells[np.argmin(cost[cells])]] = True
    return pattern
