"""Checks and conversions of user frames that every table builder shares.

The builders (:meth:`tabsdc.Table.from_frame`, :meth:`~tabsdc.Table.from_aggregated`,
:meth:`tabsdc.Table.from_microdata`, :class:`tabsdc.TableSet`) read codes and numbers
from a user's DataFrame; these functions check them once, naming the column, row and code,
and turn codes into integer coordinates and cell indexes.

Examples
--------
>>> import pandas as pd
>>> from tabsdc._hierarchy import Hierarchy
>>> codes = pd.DataFrame({"region": ["N", "S", "N"]})
>>> hierarchies = resolve_hierarchies(codes, ["region"], None, "Total", leaves_only=True)
>>> coords = code_positions(codes, ["region"], hierarchies)
>>> cell_index(coords, hierarchies).tolist()
['N', 'S', 'N']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from tabsdc._errors import HierarchyError, InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._units import LARGEST_VALUE, too_large


def require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Every name in ``columns`` is a column of ``frame``, once; else name the first missing
    or repeated one (a frame with two columns of one name would give both)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"column {missing[0]!r} is not in the data (columns: {list(frame.columns)})"
        )
    repeated = [c for c in columns if (frame.columns == c).sum() > 1]
    if repeated:
        raise InputError(f"the data has two columns named {repeated[0]!r}; give each column "
                         "its own name")


def require_numeric(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Every entry of ``columns`` is a finite number within
    :data:`tabsdc._units.LARGEST_VALUE`; else name the column and the row (the frame's
    index label, called by the index's name: the CLI's readers index by ``line``)."""
    for column in columns:
        numeric = pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
        for bad, what in ((np.isnan(numeric), "a missing or non-numeric"),
                          (np.isinf(numeric), "an infinite"),
                          (np.abs(numeric) > LARGEST_VALUE, "a too large")):
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raw = frame[column].iloc[first]
                shown = str(raw) if isinstance(raw, float | np.floating) else repr(raw)
                why = f" ({too_large(numeric[first])})" if what == "a too large" else ""
                raise InputError(
                    f"column {column!r} has {what} value at {frame.index.name or 'row'} "
                    f"{frame.index[first]}: {shown}{why}"
                )


def resolve_hierarchies(
    codes: pd.DataFrame,
    dims: Sequence[str],
    hierarchies: Mapping[str, Hierarchy] | None,
    total: str,
    leaves_only: bool,
) -> dict[str, Hierarchy]:
    """The hierarchy of every dimension (flat over the codes seen when none is given)."""
    hierarchies = dict(hierarchies or {})
    unknown = set(hierarchies) - set(dims)
    if unknown:
        raise HierarchyError(
            f"hierarchy given for {sorted(unknown)[0]!r}, which is not a dimension"
        )
    if len(set(dims)) != len(dims):
        raise InputError(f"dimensions {list(dims)} name a column twice")
    resolved = {}
    for dim in dims:
        if dim in hierarchies:
            resolved[dim] = hierarchies[dim]
        else:
            seen = pd.unique(codes[dim])
            resolved[dim] = Hierarchy.flat([c for c in seen if c != total], total=total)
        if leaves_only:
            leaves = set(resolved[dim].leaves)
            bad = ~codes[dim].isin(leaves)
            if bad.any():
                code = codes[dim][bad].iloc[0]
                where = f"{codes.index.name or 'row'} {codes.index[bad.to_numpy()][0]}"
                kind = "a total" if code in resolved[dim] else "not in the hierarchy"
                raise HierarchyError(
                    f"code {code!r} of dimension {dim!r} is {kind} ({where}): interior cells "
                    "must use the hierarchy's leaf codes"
                )
    return resolved


def code_positions(
    codes: pd.DataFrame, dims: Sequence[str], hierarchies: Mapping[str, Hierarchy]
) -> np.ndarray:
    """Integer coordinates of each row (positions in each hierarchy's codes)."""
    columns = []
    for dim in dims:
        position = pd.Categorical(codes[dim], categories=hierarchies[dim].codes).codes
        if (position < 0).any():
            code = codes[dim].iloc[np.flatnonzero(position < 0)[0]]
            raise HierarchyError(f"unknown code {code!r} in dimension {dim!r}")
        columns.append(position.astype(np.int64))
    return np.column_stack(columns) if columns else np.zeros((len(codes), 0), dtype=np.int64)


def cell_index(coords: np.ndarray, hierarchies: Mapping[str, Hierarchy]) -> pd.Index:
    """The index of cells at integer ``coords``: a MultiIndex over the dimensions (a plain,
    named index for one dimension)."""
    levels = [pd.Index(h.codes, dtype=object) for h in hierarchies.values()]
    names = list(hierarchies)
    if len(names) == 1:
        return pd.Index(levels[0][coords[:, 0]], name=names[0])
    return pd.MultiIndex(levels=levels, codes=[coords[:, d] for d in range(len(names))],
                         names=names)
