"""Linked tables: several tables cut from one microdata file, protected as one system.

Tables built from the same contributions share cells: ``activity x region`` and
``activity x size`` both hold the activity margin and the grand total. Protecting them one
at a time is not enough: a cell hidden in one table may be published in the other, and the
relations of both tables together can then pin a primary cell down (de Wolf and Giessing,
*Adapting cell suppression to linked tables*, 2009; Hundepool et al., *Statistical
Disclosure Control*, 2012, section 4.4.3).

Every table of a linked set is a slice of the full cross-classification over the union of
the dimensions, in which each dimension the table lacks stands at its total code. A
:class:`TableSet` is therefore one combined :class:`~tabsdc._table.Table` over the union of
the dimensions, holding the union of the cells (a shared cell once, one variable of every
model) and the union of the relations, plus the position of each table's cells in it. Every
method runs on the combined table; :attr:`TableSet.tables` cuts the tables back out.

Entry points that accept a set (:func:`tabsdc._rules.apply_rules`,
:func:`tabsdc.suppression.suppress`, :func:`tabsdc.audit.audit`, :func:`tabsdc.cta.adjust`)
are decorated with :func:`accepts_table_set`; their result on a set is a
:class:`TableSetResult`. :func:`tabsdc._release.write_publishable` writes one file per table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

import tabsdc._structure as structure
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import HierarchyError, InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import cell_index
from tabsdc._microdata import resolve_microdata_hierarchies
from tabsdc._table import DEFAULT_TOLERANCE, Table

#: When the tables disagree on a shared cell's status, the status of the set: a primary
#: anywhere is primary; a cell published by any table is published; else hidden.
_STATUS_RANK = {"u": 0, "z": 1, "s": 2, "m": 3, "x": 4, "w": 5}

_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True, eq=False)
class TableSet:
    """Linked tables as one combined table whose shared cells appear once.

    Build sets with :meth:`from_microdata` or :meth:`from_tables`.

    Attributes
    ----------
    combined : Table
        Cells: the union of the tables' cells over the union of their dimensions (a
        dimension a table lacks stands at its total); relations: the union of the tables'
        relations, each once.
    members : tuple of Table
        The tables as given (their structure, cell order and hierarchies; their cell
        columns are superseded by ``combined``).
    positions : tuple of ndarray of int
        ``positions[i][j]``: the row in ``combined`` of cell ``j`` of table ``i``.
    names : tuple of str
        One name per table (default: its dimensions joined by ``" x "``).

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"act": ["A", "A", "B", "B"], "reg": ["N", "S", "N", "S"],
    ...                      "size": ["1", "2", "2", "1"], "v": [4.0, 3.0, 2.0, 1.0]})
    >>> linked = TableSet.from_microdata(data, [["act", "reg"], ["act", "size"]], "v")
    >>> linked
    TableSet(2 tables: act x reg (9 cells), act x size (9 cells); 15 cells, 11 relations)
    >>> float(linked.tables[1].cells.loc[("A", "Total"), "value"])
    7.0
    """

    combined: Table
    members: tuple[Table, ...]
    positions: tuple[np.ndarray, ...]
    names: tuple[str, ...]

    # -- builders ------------------------------------------------------------------------------
    @classmethod
    def from_microdata(
        cls,
        data: Any,
        dims: Sequence[Sequence[str]],
        value: str | None = None,
        *,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        holding: str | None = None,
        weight: str | None = None,
        top: int = 3,
        negative: Literal["keep", "absolute"] = "keep",
        keep_empty: bool = True,
        total: str = DEFAULT_TOTAL,
        names: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> TableSet:
        """Build each table from the same contributions and link them.

        Parameters
        ----------
        data : pandas or dask DataFrame
            One row per contribution (see :meth:`Table.from_microdata`).
        dims : sequence of sequences of str
            The dimensions of each table (``[["A88", "NUTS3"], ["A88", "SIZE"]]``).
        value : str, optional
            Response column; ``None`` makes frequency tables.
        hierarchies : mapping, optional
            Hierarchy per dimension, shared by every table that has the dimension.
        holding, weight, top, negative, keep_empty, total
            As for :meth:`Table.from_microdata`, the same for every table.
        names : sequence of str, optional
            One name per table.
        progress : callable, optional
            Receives one line per table built (and the build's own lines).

        Notes
        -----
        Each table is built as :meth:`Table.from_microdata` builds it alone (dask data is
        read once per table, plus once for the codes of dimensions without a hierarchy).
        """
        dims = [list(d) for d in dims]
        if not dims:
            raise InputError("a table set needs at least one table")
        union = list(dict.fromkeys(d for table_dims in dims for d in table_dims))
        shared = resolve_microdata_hierarchies(data, union, hierarchies, total)
        tables = []
        for i, table_dims in enumerate(dims):
            if progress is not None:
                progress(f"table {i + 1}/{len(dims)}: {' x '.join(table_dims)}")
            tables.append(Table.from_microdata(
                data, table_dims, value, holding=holding, weight=weight,
                hierarchies={d: shared[d] for d in table_dims}, top=top, negative=negative,
                keep_empty=keep_empty, total=total, progress=progress))
        return cls.from_tables(tables, names=names)

    @classmethod
    def from_tables(
        cls,
        tables: Sequence[Table],
        *,
        names: Sequence[str] | None = None,
        tol: float = DEFAULT_TOLERANCE,
    ) -> TableSet:
        """Link tables whose common cells are matched by their codes.

        A dimension must have the same hierarchy (codes and parents) in every table that
        has it; a table lacking a dimension holds the cells at that dimension's total.

        Parameters
        ----------
        tables : sequence of Table
            Tables with dimensions (built, not read from JJ).
        names : sequence of str, optional
            One name per table.
        tol : float
            Relative tolerance of the agreement of shared values:
            ``|a - b| <= tol * max(1, |a|, |b|)``.

        Raises
        ------
        InputError
            A table without dimensions, or a shared cell whose values disagree (naming the
            cell, both values and both tables).
        HierarchyError
            A dimension whose hierarchies differ between two tables (naming both tables).

        Notes
        -----
        Columns of a shared cell come from the first table that has it, except the
        protection levels (the largest) and the status: primary in any table makes it
        primary; published in any table makes it published.
        """
        tables = list(tables)
        if not tables:
            raise InputError("a table set needs at least one table")
        names = _names(tables, names)
        for table, name in zip(tables, names, strict=True):
            if not table.dims:
                raise InputError(f"table {name!r} has no dimensions: linked tables are "
                                 "matched by their codes")
        hier = _union_hierarchies(tables, names)
        indexer = structure.CellIndexer(tuple(len(h) for h in hier.values()))
        keys = [indexer.keys(_union_coords(t, hier)) for t in tables]
        union_keys, first = np.unique(np.concatenate(keys), return_index=True)
        positions = tuple(np.searchsorted(union_keys, k) for k in keys)
        cells = _merged_cells(tables, names, positions, len(union_keys), first, tol)
        coords = indexer.coords(union_keys)
        cells.index = cell_index(coords, hier)
        A, _, _ = structure.relations(coords, list(hier.values()))
        combined = Table(cells, A, np.zeros(A.shape[0]), hier)
        return cls(combined, tuple(tables), positions, tuple(names))

    # -- the tables ----------------------------------------------------------------------------
    @property
    def tables(self) -> tuple[Table, ...]:
        """Each table with its cells as they stand in the combined table."""
        return tuple(self.table(i) for i in range(len(self.members)))

    def table(self, i: int) -> Table:
        """Table ``i`` (cells in its own order, with its own index and hierarchies)."""
        member = self.members[i]
        cells = self.combined.cells.iloc[self.positions[i]]
        return member.with_cells(cells.set_axis(member.cells.index))

    def with_combined(self, combined: Table) -> TableSet:
        """The same set with the combined table replaced (e.g. by a protected one)."""
        if combined.n_cells != self.combined.n_cells or combined.dims != self.combined.dims:
            raise InputError(f"the table has {combined.n_cells} cells over {combined.dims}; "
                             f"the set has {self.combined.n_cells} over {self.combined.dims}")
        return replace(self, combined=combined)

    def run(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> TableSetResult:
        """``method(combined, *args, **kwargs)``, its result linked back to the tables."""
        return TableSetResult(method(self.combined, *args, **kwargs), self)

    @property
    def n_cells(self) -> int:
        """Distinct cells of the set (a shared cell counts once)."""
        return self.combined.n_cells

    @property
    def n_relations(self) -> int:
        return self.combined.n_relations

    def __len__(self) -> int:
        return len(self.members)

    def __repr__(self) -> str:
        parts = ", ".join(f"{n} ({len(p)} cells)" for n, p in zip(self.names, self.positions,
                                                                 strict=True))
        return (f"TableSet({len(self)} tables: {parts}; {self.n_cells} cells, "
                f"{self.n_relations} relations)")


@dataclass(frozen=True)
class TableSetResult:
    """A method's result on a set's combined table, linked back to the tables.

    Every attribute of the underlying ``result`` is available; tables in it come back as
    :class:`TableSet` (``result.table`` is the output set) and results with a ``table`` (such
    as a suppression's ``audit``) as :class:`TableSetResult`.

    Attributes
    ----------
    result : object
        What the method returned for the combined table.
    tableset : TableSet
        The set the method ran on.
    """

    result: Any
    tableset: TableSet

    @property
    def output(self) -> TableSet:
        """The output set: the method's output table, linked."""
        value = getattr(self.result, "table", None)
        if isinstance(value, Table):
            return self.tableset.with_combined(value)
        raise AttributeError(f"{type(self.result).__name__} holds no table")

    @property
    def tables(self) -> tuple[Table, ...]:
        """The output tables, one per table of the set."""
        return self.output.tables

    def summary(self) -> str:
        """The method's summary, then one line per table."""
        lines = [self.result.summary()]
        for name, table in zip(self.tableset.names, self.tables, strict=True):
            status = table.cells["status"].to_numpy()
            primary = status == "u"
            lines.append(f"  table {name}: {table.n_cells} cells, {int(primary.sum())} primary, "
                         f"{int((np.isin(status, HIDDEN_STATUSES) & ~primary).sum())} other "
                         "hidden")
        return "\n".join(lines)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("result", "tableset"):
            raise AttributeError(name)
        return _linked(getattr(self.result, name), self.tableset)


def accepts_table_set(function: _F) -> _F:
    """Let an entry point taking a table as first argument take a :class:`TableSet`.

    On a set, the function runs on the combined table and returns a :class:`TableSetResult`.
    """

    @functools.wraps(function)
    def entry(table: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(table, TableSet):
            return table.run(function, *args, **kwargs)
        return function(table, *args, **kwargs)

    return entry  # type: ignore[return-value]


# -- helpers -----------------------------------------------------------------------------------
def _linked(value: Any, tableset: TableSet) -> Any:
    """A combined table as a set; a result holding one as a linked result; else as it is."""
    if isinstance(value, Table) and value.n_cells == tableset.n_cells:
        return tableset.with_combined(value)
    if is_dataclass(value) and not isinstance(value, type) and any(
            f.name == "table" for f in fields(value)) and isinstance(value.table, Table):
        return TableSetResult(value, tableset)
    return value


def _names(tables: Sequence[Table], names: Sequence[str] | None) -> list[str]:
    if names is None:
        return [" x ".join(t.dims) or f"table {i + 1}" for i, t in enumerate(tables)]
    names = [str(n) for n in names]
    if len(names) != len(tables):
        raise InputError(f"{len(names)} names for {len(tables)} tables")
    return names


def _union_hierarchies(tables: Sequence[Table], names: Sequence[str]) -> dict[str, Hierarchy]:
    """The hierarchy of every dimension of the set, checked to agree across tables."""
    union: dict[str, Hierarchy] = {}
    owner: dict[str, str] = {}
    for table, name in zip(tables, names, strict=True):
        for dim, hierarchy in table.hierarchies.items():
            if dim not in union:
                union[dim], owner[dim] = hierarchy, name
            elif (hierarchy.root, dict(hierarchy.parents)) != (union[dim].root,
                                                              dict(union[dim].parents)):
                raise HierarchyError(
                    f"dimension {dim!r} has different hierarchies in tables {owner[dim]!r} "
                    f"and {name!r}: linked tables need one hierarchy per dimension")
    return union


def _union_coords(table: Table, hier: Mapping[str, Hierarchy]) -> np.ndarray:
    """Coordinates of a table's cells in the union's dimensions (totals where it lacks one)."""
    index = table.cells.index
    columns = []
    for dim, hierarchy in hier.items():
        if dim in table.dims:
            codes = index.get_level_values(dim) if index.nlevels > 1 else index
            columns.append(pd.Categorical(codes, categories=hierarchy.codes).codes)
        else:
            columns.append(np.full(len(index), hierarchy.codes.index(hierarchy.root)))
    return np.column_stack(columns).astype(np.int64)


def _merged_cells(
    tables: Sequence[Table],
    names: Sequence[str],
    positions: Sequence[np.ndarray],
    n_cells: int,
    first: np.ndarray,
    tol: float,
) -> pd.DataFrame:
    """One row per distinct cell: first table's columns, merged status and levels.

    Raises InputError on a shared cell whose values disagree.
    """
    stacked = pd.concat([t.cells.reset_index(drop=True) for t in tables], ignore_index=True)
    position = np.concatenate(positions)
    table_of_row = np.repeat(np.arange(len(tables)), [t.n_cells for t in tables])
    cells = stacked.iloc[first].reset_index(drop=True)
    value = stacked["value"].to_numpy(float)
    reference = cells["value"].to_numpy(float)[position]
    scale = np.maximum(1.0, np.maximum(np.abs(value), np.abs(reference)))
    bad = np.flatnonzero(np.abs(value - reference) > tol * scale)
    if len(bad):
        row = bad[0]
        one, other = table_of_row[first[position[row]]], table_of_row[row]
        cell = int(row - sum(t.n_cells for t in tables[:other]))
        raise InputError(
            f"the tables disagree on a shared cell: {tables[other].cell_labels([cell])[0]} is "
            f"{reference[row]:.10g} in table {names[one]!r} and {value[row]:.10g} in table "
            f"{names[other]!r}")
    for level in ("lpl", "upl", "spl"):
        largest = np.zeros(n_cells)
        np.maximum.at(largest, position, stacked[level].to_numpy(float))
        cells[level] = largest
    rank = stacked["status"].map(_STATUS_RANK).fillna(len(_STATUS_RANK)).to_numpy(int)
    best = np.full(n_cells, len(_STATUS_RANK) + 1)
    np.minimum.at(best, position, rank)
    chosen = np.full(n_cells, -1)
    chosen[position[rank == best[position]]] = np.flatnonzero(rank == best[position])
    cells["status"] = stacked["status"].to_numpy()[chosen]
    return cells
