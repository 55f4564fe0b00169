"""The core object: a table of cells (interior and every total) and its additivity system.

See ``docs/architecture.md``: ``Table.cells`` is a DataFrame with one row per cell and the
columns ``value``, ``freq``, the largest contributions ``x1, x2, ...`` when known, ``cost``
(of suppressing or adjusting the cell), ``status``, a-priori bounds ``lb``/``ub`` and
protection levels ``lpl``/``upl``/``spl``; ``Table.A`` and ``Table.b`` hold ``A @ value == b``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

import tabsdc._structure as structure
from tabsdc._cellstatus import STATUS_CODES
from tabsdc._codes import code_columns
from tabsdc._decimals import checked_decimals, decimals_of
from tabsdc._errors import AdditivityError, HierarchyError, InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import (
    cell_index,
    code_positions,
    require_columns,
    require_numeric,
    resolve_hierarchies,
)
from tabsdc._microdata import TableParts, cells_from_interior, cells_from_microdata
from tabsdc._units import LARGEST_VALUE, too_large, working_unit
from tabsdc.io._jj_text import read_jj_parts, write_jj_parts

if TYPE_CHECKING:
    from sdcreport import Section

#: Relative tolerance of additivity checks: |A x - b| <= tol * max(1, |largest term|).
DEFAULT_TOLERANCE = 1e-9

_DEFAULTS = {
    "freq": np.nan,
    "cost": np.nan,  # filled with |value| (cost = value) when not given
    "status": "s",
    "lb": np.nan,  # filled with 0 for non-negative tables, -inf otherwise
    "ub": np.inf,
    "lpl": 0.0,
    "upl": 0.0,
    "spl": 0.0,
}


@dataclass(frozen=True, eq=False)
class Table:
    """Cells plus the sparse additivity system ``A @ cells["value"] == b``.

    Build tables with :meth:`from_microdata`, :meth:`from_aggregated`, :meth:`from_frame` or
    :meth:`from_jj`; the constructor takes the parts as they are and validates them.

    Parameters
    ----------
    cells : DataFrame
        One row per cell. Index: a MultiIndex over the dimensions (or a plain index for JJ
        tables). Must have ``value``; missing standard columns get their defaults.
    A : scipy.sparse matrix, shape (m, n)
        Relation coefficients (-1 for a total, +1 for its parts in built tables).
    b : ndarray, shape (m,)
        Right-hand sides.
    hierarchies : mapping of dimension name to Hierarchy
        Empty for tables without dimensions (JJ).
    decimals : int, optional
        Decimals of the table's values as given, with which a publishable file shows them
        (:mod:`tabsdc._release`). Default: the fewest that write every value exactly, up to
        the float error of the totals (:func:`tabsdc._decimals.decimals_of`); a table derived
        from this one (:meth:`with_cells`, :meth:`with_columns` but for new values, the
        results of suppression and adjustment) keeps them.
    """

    cells: pd.DataFrame
    A: sp.csr_array
    b: np.ndarray
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    decimals: int | None = None

    def __post_init__(self) -> None:
        cells = _with_default_columns(self.cells)
        A = sp.csr_array(self.A, dtype=float)
        b = np.asarray(self.b, dtype=float).reshape(-1)
        n = len(cells)
        if A.shape != (len(b), n):
            raise InputError(
                f"A has shape {A.shape} but the table has {n} cells and b has {len(b)} entries"
            )
        if cells.index.has_duplicates:
            dup = cells.index[cells.index.duplicated()][0]
            raise InputError(f"duplicate cell {dup!r}")
        bad_status = ~cells["status"].isin(STATUS_CODES)
        if bad_status.any():
            first = cells.index[bad_status.to_numpy()][0]
            raise InputError(
                f"cell {first!r} has status {cells['status'][bad_status].iloc[0]!r}; "
                f"allowed: {', '.join(STATUS_CODES)}"
            )
        for column in ("value", "cost", "lb", "ub", "lpl", "upl", "spl"):
            if cells[column].isna().any():
                first = cells.index[cells[column].isna().to_numpy()][0]
                raise InputError(f"cell {first!r} has a missing {column}")
        _require_finite_levels(cells)
        object.__setattr__(self, "decimals", checked_decimals(self.decimals) if self.decimals
                           is not None else decimals_of(cells["value"].to_numpy(dtype=float)))
        object.__setattr__(self, "cells", cells)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "hierarchies", dict(self.hierarchies))

    # -- basic facts ---------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        """Dimension names (empty for JJ tables)."""
        return tuple(self.hierarchies)

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def n_relations(self) -> int:
        return self.A.shape[0]

    @property
    def values(self) -> np.ndarray:
        """Cell values as a float array (a copy)."""
        return self.cells["value"].to_numpy(dtype=float, copy=True)

    def cell_coords(self) -> np.ndarray:
        """Each cell as positions in its hierarchies' codes, shape (n_cells, n_dims).

        Examples
        --------
        >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "value": [1.0, 2.0]}),
        ...                           ["r"])
        >>> t.cell_coords().ravel().tolist()   # Total, a, b
        [0, 1, 2]
        """
        index = self.cells.index
        levels = ([(level, codes) for level, codes in zip(index.levels, index.codes,
                                                           strict=True)]
                  if isinstance(index, pd.MultiIndex) else [(index, np.arange(len(index)))])
        return np.column_stack([
            pd.Index(h.codes).get_indexer(level)[codes]
            for h, (level, codes) in zip(self.hierarchies.values(), levels, strict=True)
        ]).astype(np.int64)

    @property
    def total_cells(self) -> np.ndarray:
        """Boolean mask of cells that are the total (negative coefficient) of some relation."""
        totals = np.zeros(self.n_cells, dtype=bool)
        coo = self.A.tocoo()
        totals[coo.col[coo.data < 0]] = True
        return totals

    def residuals(self, values: np.ndarray | None = None) -> np.ndarray:
        """``A @ values - b`` (the table's own values by default)."""
        x = self.values if values is None else np.asarray(values, dtype=float)
        return self.A @ x - self.b

    def failing_relations(self, tol: float = DEFAULT_TOLERANCE, values=None) -> np.ndarray:
        """Rows of the relations that do not hold for ``values`` (the table's by default).

        A relation holds when ``|sum_j a_ij x_j - b_i| <= tol * max(s, sum_j |a_ij x_j| +
        |b_i|)``, with ``s`` the working unit of the values (:func:`tabsdc._units.
        working_unit`: 1 for tables whose largest value lies in [1, 1e6]), so that the check
        is relative to the table's magnitude, for values of 1e-9 as for values of 1e12.
        """
        x = self.values if values is None else np.asarray(values, dtype=float)
        scale = np.maximum(working_unit(x), abs(self.A) @ np.abs(x) + np.abs(self.b))
        return np.flatnonzero(np.abs(self.A @ x - self.b) > tol * scale)

    def check_additivity(self, tol: float = DEFAULT_TOLERANCE, values=None) -> None:
        """Raise :class:`AdditivityError` naming the first relation that does not hold
        (:meth:`failing_relations`)."""
        bad = self.failing_relations(tol, values)
        if len(bad):
            res = self.residuals(values)
            raise AdditivityError(
                f"{len(bad)} relation(s) do not hold; first: {self.describe_relation(bad[0])} "
                f"(residual {res[bad[0]]:.10g})"
            )

    def describe_relation(self, row: int) -> str:
        """``"relation 3: Total x FR1 = FR10 + FR11"`` with cell labels and values."""
        start, stop = self.A.indptr[row], self.A.indptr[row + 1]
        cols, coefs = self.A.indices[start:stop], self.A.data[start:stop]
        labels = self.cell_labels(cols)
        value = self.cells["value"].to_numpy()
        lhs = [f"{lab} ({value[c]:.10g})" for lab, c, a in zip(labels, cols, coefs, strict=True)
               if a < 0]
        rhs = [
            f"{'' if a == 1 else f'{a:g}*'}{lab} ({value[c]:.10g})"
            for lab, c, a in zip(labels, cols, coefs, strict=True)
            if a > 0
        ]
        text = f"{' + '.join(lhs)} = {' + '.join(rhs)}"
        if self.b[row] != 0:
            text += f" - {self.b[row]:g}"
        return f"relation {row}: {text}"

    def cell_labels(self, positions: np.ndarray | Sequence[int]) -> list[str]:
        """Readable labels of cells at the given positions (``"A10=BE x NUTS1=FR1"``)."""
        index = self.cells.index[np.asarray(positions, dtype=int)]
        if not self.dims:
            return [f"cell {i}" for i in index]
        if len(self.dims) == 1:
            return [f"{self.dims[0]}={code}" for code in index]
        return [" x ".join(f"{d}={c}" for d, c in zip(self.dims, key, strict=True))
                for key in index]

    def code_ranks(self, dim: str) -> np.ndarray:
        """The rank of each cell's code of ``dim`` in the hierarchy's order
        (:attr:`Hierarchy.sorted_codes <tabsdc._hierarchy.Hierarchy.sorted_codes>`)."""
        order = pd.Index(self.hierarchies[dim].sorted_codes)
        index = self.cells.index
        if isinstance(index, pd.MultiIndex):
            level = self.dims.index(dim)
            return order.get_indexer(index.levels[level])[index.codes[level]]
        return order.get_indexer(index)

    def hierarchy_order(self) -> np.ndarray:
        """Positions of the cells in hierarchy order: by the first dimension's code in its
        hierarchy's order (totals before their parts, the codes under a parent sorted), then
        by the second's, ...; table order for a table without dimensions. Publishable files,
        reports and status maps list cells in this order.

        Examples
        --------
        >>> cells = pd.DataFrame({"r": ["S1", "S2", "S4", "S3"], "v": [1.0, 2.0, 3.0, 4.0]})
        >>> t = Table.from_aggregated(cells, ["r"], "v")
        >>> t.cells.index[t.hierarchy_order()].tolist()
        ['Total', 'S1', 'S2', 'S3', 'S4']
        """
        if not self.dims:
            return np.arange(self.n_cells)
        return np.lexsort([self.code_ranks(dim) for dim in reversed(self.dims)])

    def in_hierarchy_order(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``frame`` (indexed by cells of this table, as ``cells`` is) in
        :meth:`hierarchy_order`."""
        rank = np.empty(self.n_cells, dtype=np.int64)
        rank[self.hierarchy_order()] = np.arange(self.n_cells)
        positions = self.cells.index.get_indexer(frame.index)
        return frame.iloc[np.argsort(rank[positions], kind="stable")]

    # -- derived tables ------------------------------------------------------------------------
    def with_cells(self, cells: pd.DataFrame) -> Table:
        """A new table with the same structure and the given cells frame."""
        return replace(self, cells=cells)

    def with_decimals(self, decimals: int) -> Table:
        """The same table, its values published with at most ``decimals`` decimals.

        Examples
        --------
        >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "v": [1.5, 2.25]}),
        ...                           ["r"], "v")
        >>> t.decimals, t.with_decimals(1).decimals
        (2, 1)
        """
        return replace(self, decimals=decimals)

    def with_columns(self, **columns) -> Table:
        """A new table with some cell columns replaced or added (arrays in cell order).

        New values (``value=``) bring their own :attr:`decimals` (those of a count column, of
        rounded values); a table with other columns replaced keeps the table's.
        """
        cells = self.cells.copy()
        for name, column in columns.items():
            cells[name] = np.asarray(column) if not isinstance(column, pd.Series) else column
        return replace(self, cells=cells, decimals=None if "value" in columns else self.decimals)

    # -- views ---------------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: one row per cell, dimensions as columns (``cell`` for JJ tables)."""
        frame = self.cells.copy()
        if not self.dims:
            frame.index.name = frame.index.name or "cell"
        return frame.reset_index()

    def pivot(
        self,
        rows: str | None = None,
        columns: str | None = None,
        values: str = "value",
        fixed: Mapping[str, str] | None = None,
    ) -> pd.DataFrame:
        """A 2-D view: ``rows`` x ``columns`` of one cell column, other dimensions fixed.

        Dimensions not shown are fixed at their total unless ``fixed`` names a code.
        Rows and columns are in hierarchy order (:attr:`Hierarchy.sorted_codes
        <tabsdc._hierarchy.Hierarchy.sorted_codes>`: totals first, codes under a parent
        sorted).
        """
        if len(self.dims) < 1:
            raise InputError("pivot needs a table with dimensions")
        rows = rows or self.dims[0]
        columns = columns if columns is not None else (self.dims[1] if len(self.dims) > 1 else None)
        for dim in (rows, columns):
            if dim is not None and dim not in self.dims:
                raise InputError(f"unknown dimension {dim!r}; the table has {self.dims}")
        fixed = dict(fixed or {})
        frame = self.cells[values].reset_index() if len(self.dims) > 1 else self.cells[
            values].rename_axis(self.dims[0]).reset_index()
        for dim in self.dims:
            if dim in (rows, columns):
                continue
            code = fixed.get(dim, self.hierarchies[dim].root)
            if code not in self.hierarchies[dim]:
                raise HierarchyError(f"unknown code {code!r} in dimension {dim!r}")
            frame = frame[frame[dim] == code]
        if columns is None:
            view = frame.set_index(rows)[[values]]
        else:
            view = frame.pivot(index=rows, columns=columns, values=values)
            view = view.reindex(columns=[c for c in self.hierarchies[columns].sorted_codes
                                         if c in view.columns])
        return view.reindex([c for c in self.hierarchies[rows].sorted_codes
                             if c in view.index])

    def to_report(self, max_depth: int = 2) -> Section:
        """A report section: size, dimensions, and the values of the first two dimensions
        down to ``max_depth`` levels (other dimensions at their totals)."""
        from sdcreport import Section

        section = Section("Table")
        counts = self.cells["status"].value_counts()
        section.add_metrics({
            "cells": self.n_cells,
            "relations": self.n_relations,
            "dimensions": " x ".join(f"{d} ({len(h)} codes)" for d, h in self.hierarchies.items())
            or "none (JJ table)",
            **{f"status {k}": int(v) for k, v in counts.items()},
        })
        if self.dims:
            view = self.pivot()
            rows, columns = self.dims[0], (self.dims[1] if len(self.dims) > 1 else None)
            shallow = {c for c in self.hierarchies[rows].codes
                       if self.hierarchies[rows].depth(c) <= max_depth}
            view = view.loc[[c for c in view.index if c in shallow]]
            if columns is not None:
                shallow = {c for c in self.hierarchies[columns].codes
                           if self.hierarchies[columns].depth(c) <= max_depth}
                view = view[[c for c in view.columns if c in shallow]]
            section.add_table(view.round(2), f"Values down to level {max_depth}")
        return section

    def __repr__(self) -> str:
        dims = " x ".join(f"{d}({len(h)})" for d, h in self.hierarchies.items()) or "no dimensions"
        counts = self.cells["status"].value_counts().to_dict()
        return f"Table({self.n_cells} cells, {self.n_relations} relations, {dims}, status {counts})"

    # -- builders ------------------------------------------------------------------------------
    @classmethod
    def from_microdata(
        cls,
        data: pd.DataFrame,
        dims: Sequence[str],
        value: str | None = None,
        *,
        holding: str | None = None,
        weight: str | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        top: int = 3,
        negative: Literal["keep", "absolute"] = "keep",
        keep_empty: bool = True,
        total: str = DEFAULT_TOTAL,
        progress: Callable[[str], None] | None = None,
    ) -> Table:
        """Aggregate contributions (one row per record; pandas or dask) into a table.

        See :func:`tabsdc._microdata.cells_from_microdata` for the parameters.

        Examples
        --------
        >>> data = pd.DataFrame({"region": ["A", "A", "B"], "turnover": [10.0, 5.0, 7.0]})
        >>> t = Table.from_microdata(data, ["region"], "turnover")
        >>> t.cells[["value", "freq", "x1", "x2"]].to_dict("index")["Total"]
        {'value': 22.0, 'freq': 3.0, 'x1': 10.0, 'x2': 7.0}
        """
        if isinstance(data, pd.DataFrame) and data.empty:
            raise InputError("the data has no records")
        return cls.from_parts(cells_from_microdata(
            data, dims, value, holding=holding, weight=weight, hierarchies=hierarchies,
            top=top, negative=negative, keep_empty=keep_empty, total=total, progress=progress,
        ))

    @classmethod
    def from_aggregated(
        cls,
        frame: pd.DataFrame,
        dims: Sequence[str],
        value: str = "value",
        *,
        freq: str | None = None,
        top: Sequence[str] = (),
        hierarchies: Mapping[str, Hierarchy] | None = None,
        keep_empty: bool = True,
        total: str = DEFAULT_TOTAL,
    ) -> Table:
        """From interior cells (one row per leaf-code combination); totals are computed.

        Parameters
        ----------
        frame : DataFrame
            Interior cells with the dimension columns and ``value``.
        dims : sequence of str
            Dimension columns, most significant first.
        value, freq : str
            Columns with the cell value and (optional) number of contributors.
        top : sequence of str
            Columns with the largest contributions, largest first (e.g. ``["max1", "max2"]``);
            they become ``x1, x2, ...``; for totals they are merged from the cells below,
            which is right when no contributor appears in two interior cells.
        hierarchies : mapping, optional
            Hierarchy per dimension; a dimension without one gets a flat total ``total``.
        keep_empty : bool
            Keep every code combination (empty ones get value 0, status ``z``).
        """
        require_columns(frame, [*dims, value, *([freq] if freq else []), *top])
        require_numeric(frame, [value, *([freq] if freq else []), *top])
        payload = pd.DataFrame({"value": frame[value].to_numpy(float)}, index=frame.index)
        if freq:
            payload["freq"] = frame[freq].to_numpy(float)
        tops = frame[list(top)].to_numpy(float) if top else None
        return cls.from_parts(cells_from_interior(
            frame[list(dims)], payload, tops, hierarchies=hierarchies, keep_empty=keep_empty,
            total=total,
        ))

    @classmethod
    def from_parts(cls, parts: TableParts) -> Table:
        """The table of built parts (:class:`tabsdc._microdata.TableParts`): its cells, the
        relations ``A @ value == 0`` and the hierarchies."""
        return cls(parts.cells, parts.A, np.zeros(parts.A.shape[0]), parts.hierarchies)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        dims: Sequence[str],
        value: str = "value",
        *,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        total: str = DEFAULT_TOTAL,
        tol: float = DEFAULT_TOLERANCE,
        columns: Mapping[str, str] | None = None,
    ) -> Table:
        """From a frame that already holds every cell, totals included.

        Total codes must be the hierarchies' roots (``total`` for flat dimensions). Other
        columns named in ``columns`` (``{"freq": "N_OBS", "x1": "MAX"}``) are carried over.

        Raises
        ------
        AdditivityError
            Naming the first relation whose total differs from the sum of its parts by
            more than ``tol`` (relative).
        InputError
            For duplicate cells, missing or non-numeric values, or missing total cells.
        """
        columns = dict(columns or {})
        require_columns(frame, [*dims, value, *columns.values()])
        require_numeric(frame, [value, *columns.values()])
        codes = code_columns(frame, dims)
        hier = resolve_hierarchies(codes, dims, hierarchies, total, leaves_only=False)
        coords = code_positions(codes, dims, hier)
        indexer = structure.CellIndexer(tuple(len(h) for h in hier.values()))
        keys = indexer.keys(coords)
        dup = pd.Series(keys).duplicated().to_numpy()
        if dup.any():
            raise InputError(f"duplicate cell {tuple(codes.iloc[np.flatnonzero(dup)[0]])}")
        order = np.argsort(keys)
        all_coords = structure.closed_cells(coords, list(hier.values()))
        if len(all_coords) != len(coords):
            present = set(keys.tolist())
            missing = indexer.coords(
                np.array([k for k in indexer.keys(all_coords) if k not in present][:1])
            )[0]
            label = tuple(h.codes[i] for h, i in zip(hier.values(), missing, strict=True))
            raise InputError(f"total cell {label} is missing from the frame")
        cells = pd.DataFrame(
            {"value": frame[value].to_numpy(float)[order],
             **{k: frame[c].to_numpy()[order] for k, c in columns.items()}},
            index=cell_index(coords[order], hier),
        )
        A, _, _ = structure.relations(coords[order], list(hier.values()))
        table = cls(cells, A, np.zeros(A.shape[0]), hier)
        table.check_additivity(tol)
        return table

    @classmethod
    def from_jj(cls, path: str | Path) -> Table:
        """Read a JJ file (see :mod:`tabsdc.io._jj`)."""
        return cls(*read_jj_parts(path))

    def to_jj(self, path: str | Path, **options) -> Path:
        """Write a JJ file; ``options`` are those of :func:`tabsdc.io._jj_text.format_jj_parts`
        (see :mod:`tabsdc.io._jj`)."""
        return write_jj_parts(self.cells, self.A, self.b, path, cell_label=self.cell_labels,
                              positional=not self.dims, **options)


# -- helpers shared by the builders -----------------------------------------------------------
def _with_default_columns(cells: pd.DataFrame) -> pd.DataFrame:
    if "value" not in cells.columns:
        raise InputError("the cells frame has no 'value' column")
    cells = cells.copy()
    cells["value"] = pd.to_numeric(cells["value"], errors="coerce").astype(float)
    if cells["value"].isna().any():
        first = cells.index[cells["value"].isna().to_numpy()][0]
        raise InputError(f"cell {first!r} has a missing or non-numeric value")
    for column, default in _DEFAULTS.items():
        if column not in cells.columns:
            cells[column] = default
    if cells["cost"].isna().all():
        cells["cost"] = cells["value"].abs()
    if cells["lb"].isna().all():
        cells["lb"] = 0.0 if (cells["value"] >= 0).all() else -np.inf
    cells["status"] = cells["status"].astype(str)
    for column in ("cost", "lb", "ub", "lpl", "upl", "spl", "freq"):
        cells[column] = pd.to_numeric(cells[column], errors="coerce").astype(float)
    return cells


def _require_finite_levels(cells: pd.DataFrame) -> None:
    """Values, costs and protection levels are finite and within
    :data:`tabsdc._units.LARGEST_VALUE`, levels not negative (the bounds are checked by
    :func:`tabsdc._validation.validate_table`, before a method uses them)."""
    checks = [
        (column, ~np.isfinite(cells[column].to_numpy(float)), "is not finite")
        for column in ("value", "cost", "lpl", "upl", "spl")
    ]
    checks += [(column, cells[column].to_numpy(float) < 0, "is negative")
               for column in ("lpl", "upl", "spl")]
    for column, bad, what in checks:
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise InputError(f"cell {cells.index[first]!r}: {column} "
                             f"{cells[column].iloc[first]:g} {what}")
    for column in ("value", "cost", "lpl", "upl", "spl"):
        values = cells[column].to_numpy(float)
        beyond = np.flatnonzero(np.abs(values) > LARGEST_VALUE)
        if beyond.size:
            raise InputError(f"cell {cells.index[beyond[0]]!r}: "
                             f"{too_large(values[beyond[0]], column)}")
