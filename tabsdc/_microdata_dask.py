"""Tables from microdata that do not fit in memory: ``dask.dataframe`` partition by partition.

The records are never gathered. Each partition is reduced where it lies to one row per cell
(:func:`tabsdc._aggregation.aggregate_records`: vectorised ``np.unique``/``np.bincount`` work,
the same code as the in-memory build) and the partial aggregates are merged batch by batch
(:func:`tabsdc._aggregation.merge_partials`), so memory holds the table's cells, never the
records. Sums add; the largest contributions of a cell are the largest of the partitions'
largest. With a holding id the records are first shuffled on it so that every holding lies in
one partition: a holding's contributions to a cell are then summed before the rules see them,
exactly as in memory.

The computation runs on the active ``dask.distributed`` client when there is one (else on
dask's default scheduler). Dask is an optional dependency: ``pip install sdctoolkit[dask]``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from tabsdc._aggregation import (
    Partial,
    RecordSpec,
    aggregate_records,
    codes_in_order,
    merge_partials,
)
from tabsdc._errors import TabSDCError
from tabsdc._hierarchy import Hierarchy

_T = TypeVar("_T")


def codes_seen(data: Any, dims: Sequence[str]) -> dict[str, np.ndarray]:
    """The distinct codes of each column as text, in the order first seen (one pass that
    reads only these columns)."""
    import dask

    parts = data[list(dims)].to_delayed()
    found = _compute([dask.delayed(codes_in_order)(part, list(dims)) for part in parts],
                     "reading the codes", 0, len(parts))
    return {dim: pd.unique(np.concatenate([f[dim] for f in found]).astype(object))
            for dim in dims}


def aggregate_dask(
    data: Any,
    spec: RecordSpec,
    hierarchies: dict[str, Hierarchy],
    progress: Callable[[str], None] | None = None,
) -> Partial:
    """Aggregate a ``dask.dataframe.DataFrame`` into one :class:`~tabsdc._aggregation.Partial`
    (:func:`reduce_partitions` with :func:`~tabsdc._aggregation.aggregate_records`)."""
    frame = data[spec.columns]
    if spec.holding is not None:
        frame = frame.shuffle(on=spec.holding)
    merged = reduce_partitions(
        frame, functools.partial(aggregate_records, spec=spec, hier=hierarchies),
        merge_partials, doing="aggregating", done="aggregated", progress=progress,
        describe=lambda partial: f"{len(partial.keys):,} cells so far")
    if merged is None:  # a frame without partitions
        return aggregate_records(frame._meta, spec, hierarchies)
    return merged


def reduce_partitions(
    frame: Any,
    reduce: Callable[[pd.DataFrame], _T],
    merge: Callable[[list[_T]], _T],
    *,
    doing: str,
    done: str,
    progress: Callable[[str], None] | None = None,
    describe: Callable[[_T], str] | None = None,
) -> _T | None:
    """``reduce`` every partition where it lies and ``merge`` the results batch by batch.

    Partitions are reduced in batches of twice the number of worker threads; ``progress``
    receives a line after each batch (``partitions 4/10 {done}: {describe(merged)}``); a
    failure of the cluster is named with ``doing``. Returns None for a frame without
    partitions.
    """
    import dask

    parts = frame.to_delayed()
    batch = _batch_size()
    merged: list = []
    for start in range(0, len(parts), batch):
        stop = min(start + batch, len(parts))
        reduced = _compute([dask.delayed(reduce)(part) for part in parts[start:stop]], doing,
                           start, len(parts))
        merged = [merge([*merged, *reduced])]
        if progress is not None:
            progress(f"partitions {stop}/{len(parts)} {done}"
                     + (f": {describe(merged[0])}" if describe else ""))
    return merged[0] if merged else None


def _compute(tasks: list, what: str, start: int, n_parts: int) -> tuple:
    """``dask.compute`` with failures of the cluster itself named as such."""
    import dask

    try:
        return dask.compute(*tasks)
    except TabSDCError:
        raise
    except Exception as exc:  # a dead worker or client, a lost connection, a bad file
        raise TabSDCError(
            f"the dask computation failed while {what} (partitions {start + 1}-"
            f"{start + len(tasks)} of {n_parts}): {type(exc).__name__}: {exc}") from exc


def _batch_size() -> int:
    """Partitions per batch: twice the threads of the active client, else of this machine."""
    try:
        from distributed import default_client

        threads = sum(default_client().nthreads().values())
    except (ImportError, ValueError):
        threads = os.cpu_count() or 1
    return max(2, 2 * threads)
