"""The cell key method for frequency tables (tau-ARGUS 4.2, cellKey ``perturb``).

For each cell of a count table (interior cells and every total):

1. the cell key ``ck`` is the fractional part of the sum of its records' keys
   (:mod:`tabsdc.ckm._keys`);
2. the p-table row is ``i = min(n, max i)``, ``n`` the cell's count;
3. the noise ``v`` is that of the first transition of the row whose ``p_int_ub`` is above
   ``ck`` (tau-ARGUS's rule; cellKey takes the same one), and the published count is
   ``n + v``.

Zero stays zero (row 0 holds only ``v = 0``), a count never becomes one of the blocked
values ``1..js`` or negative, and a cell made of the same records gets the same noise in
every table cut from the same microdata (its key and count do not depend on the table).
The published table is not additive: every cell, totals included, is perturbed on its own.

Source: tau-ARGUS 4.2 user's manual, section on the cell key method; Thompson, Broadfoot and
Elazar (2013), *Methodology for the automatic confidentialisation of statistical outputs
from remote servers at the Australian Bureau of Statistics*; cellKey 1.0.2 (B. Meindl).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from time import perf_counter

import numpy as np
import pandas as pd

from tabsdc._errors import InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import require_columns
from tabsdc._microdata import is_dask_frame
from tabsdc._table import Table
from tabsdc.ckm._keys import (
    dask_leaf_keys,
    draw_record_keys,
    leaf_keys,
    record_key_units,
    roll_up_keys,
)
from tabsdc.ckm._ptable import PTable
from tabsdc.ckm._result import CKMResult


def count_noise(ptable: PTable, counts: np.ndarray, cell_keys: np.ndarray,
                digits: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """The noise of each cell and the p-table transition it took (steps 2 and 3 above).

    Parameters
    ----------
    ptable : PTable
        A count p-table.
    counts : ndarray of int
        The original counts (>= 0).
    cell_keys : ndarray of int64
        The cell keys in units of ``10**-digits``.

    Returns
    -------
    noise : ndarray of int64
    transition : ndarray of int
        Row of ``ptable.frame`` each cell took.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> table = build_ptable(1, 0.5)   # row 1: v = -1 below 0.25, 0 below 0.75, else 1
    >>> count_noise(table, np.array([0, 1, 1, 1]), np.array([5, 24999999, 25000000, 99999999]))[0]
    array([ 0, -1,  0,  1])
    """
    if ptable.kind != "counts":
        raise InputError("a frequency table needs a count p-table, not a magnitude one")
    counts = np.asarray(counts)
    if (counts < 0).any() or (counts != np.round(counts)).any():
        raise InputError("counts must be whole numbers >= 0")
    row = np.minimum(counts, ptable.rows.max())
    transition = ptable.lookup(row, cell_keys, digits)
    return ptable.frame["v"].to_numpy()[transition].astype(np.int64), transition


def perturb_counts(
    data: pd.DataFrame,
    dims: Sequence[str],
    ptable: PTable,
    *,
    record_key: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    digits: int = 8,
    keep_empty: bool = True,
    total: str = DEFAULT_TOTAL,
    progress: Callable[[str], None] | None = None,
    seed: int | np.random.Generator | None = None,
) -> CKMResult:
    """Count the records per cell and publish every count with its cell-key noise.

    Parameters
    ----------
    data : pandas or dask DataFrame
        One row per record (person, household, ...). A ``dask.dataframe.DataFrame`` is
        counted and its record keys summed partition by partition, out of core
        (:mod:`tabsdc._microdata_dask`); it needs ``record_key``.
    dims : sequence of str
        The dimension columns (leaf codes), as :meth:`tabsdc.Table.from_microdata`.
    ptable : PTable
        A count p-table (:func:`~tabsdc.ckm._ptable.build_ptable`,
        :func:`~tabsdc.ckm._ptable.read_ptable`).
    record_key : str, optional
        The column holding the record keys (numbers in [0, 1) with at most ``digits``
        decimals). Without it keys are drawn with ``seed`` and returned in
        ``result.record_keys``: store them with the microdata, since only the same keys give
        the same noise in the next table.
    hierarchies : mapping of str to Hierarchy, optional
        As :meth:`tabsdc.Table.from_microdata`.
    digits : int
        Decimals of the record keys (8 as tau-ARGUS; at most 15).
    keep_empty : bool
        Keep the empty combinations of codes (published as 0).
    progress : callable, optional
        Receives a line per step.
    seed : int or numpy.random.Generator, optional
        Seed of the drawn record keys (keyword only; ignored with ``record_key``).

    Returns
    -------
    CKMResult
        ``original`` the count table, ``table`` the published one.

    Raises
    ------
    InputError
        A missing column, a bad record key (naming the row), a magnitude p-table.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> data = pd.DataFrame({"sex": list("mmmf"), "key": [0.1, 0.2, 0.35, 0.9]})
    >>> result = perturb_counts(data, ["sex"], build_ptable(1, 0.5), record_key="key")
    >>> result.to_frame()[["original", "cell_key", "published"]].to_dict("list")
    {'original': [4, 3, 1], 'cell_key': [0.55, 0.65, 0.9], 'published': [4, 3, 2]}
    """
    started = perf_counter()
    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    dims = list(dims)
    require_columns(data, [*dims, *([record_key] if record_key else [])])
    out_of_core = is_dask_frame(data)
    if out_of_core and record_key is None:
        raise InputError("dask data need stored record keys: give record_key= (keys drawn "
                         "here could not be stored with the records)")
    keys = None
    if record_key is not None and not out_of_core:
        keys = record_key_units(data[record_key], digits, name=record_key)
    elif record_key is None:
        keys = draw_record_keys(len(data), seed=seed, digits=digits)
    original = Table.from_microdata(data, dims, hierarchies=hierarchies, top=1,
                                    keep_empty=keep_empty, total=total, progress=progress)
    say(f"{original.n_cells:,} cells counted; summing the record keys")
    leaf = (dask_leaf_keys(data, dims, record_key, original.hierarchies, digits, progress)
            if out_of_core else leaf_keys(data[dims], keys, original.hierarchies, digits))
    cell_keys = roll_up_keys(leaf, original.hierarchies, original.cell_coords())
    counts = np.round(original.values).astype(np.int64)
    noise, transition = count_noise(ptable, counts, cell_keys, digits)
    published = original.with_columns(value=(counts + noise).astype(float))
    say(f"{int(np.count_nonzero(noise)):,} of {len(noise):,} cells perturbed")
    return CKMResult(
        original=original, table=published, ptable=ptable, cell_keys=cell_keys,
        noise=noise, transition=transition, digits=digits,
        record_keys=None if record_key is not None else keys,
        record_key=record_key, seed=seed, seconds=perf_counter() - started)

