"""Tables of a tau-ARGUS job: ``<SPECIFYTABLE>`` applied to microdata or to tabular input.

``"Size""Region"|"Var2"|"Var3"|"Var3"|1`` names the spanning variables, the response, the
shadow variable (the one the safety rules look at), the cost variable (``-1`` frequency,
``-2`` unity, ``-3`` distance) and lambda, the power applied to the cost (manual 5.7, 4.4.4;
lambda 0 is a log transform, here ``log(1 + cost)`` so that costs stay positive). The
response ``<freq>`` makes a frequency (count) table.

* From microdata (:func:`microdata_table`): the cells are aggregated with
  :meth:`Table.from_microdata` (weighted with ``WGT(1)``), holding-level rules look at
  holdings (:class:`~tabsdc.io.argus._metadata.Variable` ``role="holding"``), the request rule
  at the request codes, and the primary cells and protection levels come from
  :func:`tabsdc._rules.apply_rules`.
* From a ``.tab`` file (:func:`tabular_table`): every line is a cell, totals included
  (``<TOTCODE>``); the status column (``<SAFE>``/``<UNSAFE>``/``<PROTECT>``, ``E`` empty,
  ``M`` secondary) gives the primary cells, with ``<LOWERPL>``/``<UPPERPL>`` or the manual
  margin as protection levels; frequencies and ``<MAXSCORE>`` columns let safety rules run
  as well. Totals that disagree with their parts raise
  :class:`~tabsdc.AdditivityError`.

Hierarchies come from the metadata (:func:`variable_hierarchy`); missing codes sit under the
total; a code in the data that the hierarchy does not know raises
:class:`~tabsdc.HierarchyError` naming code, variable and file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tabsdc._errors import AdditivityError, HierarchyError, InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._rules import apply_rules
from tabsdc._table import Table
from tabsdc.io.argus._hrc import hierarchy_from_levels, read_hrc, with_missing_codes
from tabsdc.io.argus._metadata import Metadata, Variable
from tabsdc.io.argus._safety import RequestRule, SafetySpec
from tabsdc.io.argus._syntax import resolve_path

#: Response name of a frequency (count) table.
FREQUENCY_RESPONSE = "<freq>"
_COST_CODES = {"-1": "frequency", "-2": "unity", "-3": "distance"}


@dataclass(frozen=True)
class TableSpec:
    """One ``<SPECIFYTABLE>``: spanning variables, response, shadow, cost, lambda."""

    dims: tuple[str, ...]
    response: str
    shadow: str = ""
    cost: str = ""
    cost_lambda: float = 1.0

    def __post_init__(self) -> None:
        if _COST_CODES.get(self.cost) == "distance":
            raise InputError(f"table {self.label}: cost -3 (distance function) is not "
                             "supported: it gives each secondary a cost per primary cell, and "
                             "the methods here take one cost per cell; use -1, -2 or a "
                             "variable")

    @property
    def shadow_variable(self) -> str:
        return self.shadow or self.response

    @property
    def cost_variable(self) -> str:
        return self.cost or self.response

    @property
    def label(self) -> str:
        """``Size x Region | Var2`` as tau-ARGUS's log names a table."""
        return " x ".join(self.dims) + f" | {self.response}"


def parse_table_spec(text: str) -> TableSpec:
    """Parse the argument of ``<SPECIFYTABLE>``.

    Raises
    ------
    InputError
        Without spanning variables or response, or with a lambda that is not a number.

    Examples
    --------
    >>> spec = parse_table_spec('"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"')
    >>> spec.dims, spec.response, spec.shadow, spec.cost
    (('Size', 'Region'), 'Var2', 'Var2_Shadow', 'Var2')
    >>> parse_table_spec('"Size""Region"|"Var2"||').cost_variable
    'Var2'
    """
    fields = [f.strip() for f in text.split("|")]
    dims = tuple(d for d in (p.strip() for p in fields[0].split('"')) if d)
    if not dims:
        raise InputError(f"<SPECIFYTABLE> {text}: no spanning variables (\"A\"\"B\"|...)")
    names = [f.strip('"').strip() for f in fields[1:]] + ["", "", "", ""]
    if not names[0]:
        raise InputError(f"<SPECIFYTABLE> {text}: no response variable")
    try:
        cost_lambda = float(names[3]) if names[3] else 1.0
    except ValueError:
        raise InputError(f"<SPECIFYTABLE> {text}: lambda {names[3]!r} is not a number") \
            from None
    return TableSpec(dims, names[0], names[1], names[2], cost_lambda)


def variable_hierarchy(variable: Variable, codes: Sequence[str], folder: Path) -> Hierarchy:
    """The hierarchy of a spanning variable over the codes found in the data.

    Flat variables: the codes found, sorted as tau-ARGUS sorts them (right-aligned text);
    ``<HIERLEVELS>``: parents are prefixes; ``<HIERCODELIST>``: the ``.hrc`` file (found
    next to the metadata). Missing codes go directly under the total.

    Raises
    ------
    HierarchyError
        A code of the data that the ``.hrc`` file does not list (nor is a missing code).
    """
    total = variable.total_code
    codes = [c for c in dict.fromkeys(codes) if c != total]
    if variable.hier_levels:
        return hierarchy_from_levels(codes, variable.hier_levels, total, variable.missing)
    if variable.hierarchical:
        path = resolve_path(variable.hierarchy_file, folder)
        if not path.exists():
            raise InputError(f"hierarchy file {variable.hierarchy_file} of {variable.name} "
                             f"not found (looked in {folder})")
        hierarchy = with_missing_codes(read_hrc(path, variable.lead_string, total),
                                       [c for c in codes if c in variable.missing])
        unknown = [c for c in codes if c not in hierarchy]
        if unknown:
            raise HierarchyError(f"{variable.name}: code {unknown[0]!r} is not in hierarchy "
                                 f"{path.name} ({len(unknown)} unknown code(s))")
        return hierarchy
    width = max((len(c) for c in codes), default=0)
    return Hierarchy.flat(sorted(codes, key=lambda c: c.rjust(width)), total)


# -- microdata ----------------------------------------------------------------------------------
def microdata_table(
    data: pd.DataFrame,
    metadata: Metadata,
    spec: TableSpec,
    safety: SafetySpec | None,
    hierarchies: Mapping[str, Hierarchy],
) -> Table:
    """Aggregate microdata into the table ``spec`` describes and mark its primary cells.

    ``data`` holds the records with the codes already recoded; ``hierarchies`` one
    hierarchy per spanning variable (see :func:`variable_hierarchy`).
    """
    safety = safety or SafetySpec()
    dims = list(spec.dims)
    weight = _weight_variable(metadata) if safety.weighted else None
    holding = metadata.with_role("holding")
    common = dict(hierarchies=dict(hierarchies), top=safety.top)
    response = None if spec.response == FREQUENCY_RESPONSE else spec.response
    table = Table.from_microdata(data, dims, response, weight=weight, **common)
    shadow = spec.shadow_variable
    rules_table = table
    if shadow != spec.response and shadow != FREQUENCY_RESPONSE:
        rules_table = Table.from_microdata(data, dims, shadow, weight=weight, **common)
    rules_table = _with_requests(rules_table, data, metadata, spec, safety, common)
    table = table.with_columns(cost=_microdata_cost(data, table, spec, weight, common))
    if safety.individual or safety.holding:
        marked = _apply(rules_table, safety.individual)
        if safety.holding:
            if not holding:
                raise InputError(f"table {spec.label}: holding-level rules need a <HOLDING> "
                                 "variable in the metadata")
            held = Table.from_microdata(data, dims, shadow if response else None,
                                        holding=holding[0].name, weight=weight, **common)
            held = _with_requests(held, data, metadata, spec, safety, common)
            marked = _strongest(marked, _apply(held, safety.holding))
        table = _take_status(table, marked)
    return _missing_safe(table, metadata, safety)


def _weight_variable(metadata: Metadata) -> str:
    weights = metadata.with_role("weight")
    if not weights:
        raise InputError(f"{metadata.path}: WGT(1) asks for weights but no variable is "
                         "<WEIGHT>")
    return weights[0].name


def _with_requests(table: Table, data: pd.DataFrame, metadata: Metadata, spec: TableSpec,
                   safety: SafetySpec, common: dict) -> Table:
    """Add ``request_top_1/2`` and ``requests`` when a request rule is in force."""
    rules = (*safety.individual, *safety.holding)
    if not any(isinstance(rule, RequestRule) for rule in rules):
        return table
    requests = metadata.with_role("request")
    if not requests:
        raise InputError(f"table {spec.label}: REQ needs a <REQUEST> variable in the metadata")
    request = requests[0]
    codes = data[request.name].astype(str).str.strip()
    value = spec.shadow_variable
    dims = list(spec.dims)
    columns = {}
    common = {**common, "top": 1}
    for number, code in enumerate(request.request_codes[:2], start=1):
        masked = data.assign(_value=np.where(codes == code, data[value], 0.0))
        columns[f"request_top_{number}"] = Table.from_microdata(
            masked, dims, "_value", **common).cells["x1"].to_numpy()
    for number in (1, 2):
        columns.setdefault(f"request_top_{number}", np.zeros(table.n_cells))
    flagged = data.assign(_flag=codes.isin(request.request_codes[:2]).astype(float))
    columns["requests"] = Table.from_microdata(flagged, dims, "_flag", **common).values
    return table.with_columns(**columns)


def _microdata_cost(data: pd.DataFrame, table: Table, spec: TableSpec, weight: str | None,
                    common: dict) -> np.ndarray:
    kind = _COST_CODES.get(spec.cost_variable)
    if kind == "frequency":
        cost = table.cells["freq"].to_numpy(float)
    elif kind == "unity":
        cost = np.ones(table.n_cells)
    elif spec.cost_variable in (spec.response, FREQUENCY_RESPONSE):
        cost = np.abs(table.values)
    else:
        cost = np.abs(Table.from_microdata(data, list(spec.dims), spec.cost_variable,
                                           weight=weight, **common).values)
    return _transformed(cost, spec.cost_lambda)


def _transformed(cost: np.ndarray, cost_lambda: float) -> np.ndarray:
    if cost_lambda == 1:
        return cost
    if cost_lambda == 0:
        return np.log1p(cost)
    return np.power(cost, cost_lambda)


def _apply(table: Table, rules: Sequence) -> Table:
    return apply_rules(table, list(rules)).table if rules else table


def _strongest(first: Table, second: Table) -> Table:
    """Primary where either table is, with the larger protection levels."""
    a, b = first.cells, second.cells
    primary = (a["status"] == "u").to_numpy() | (b["status"] == "u").to_numpy()
    return first.with_columns(
        status=np.where(primary, "u", a["status"]),
        upl=np.maximum(a["upl"], b["upl"]), lpl=np.maximum(a["lpl"], b["lpl"]),
        spl=np.maximum(a["spl"], b["spl"]))


def _take_status(table: Table, marked: Table) -> Table:
    cells = marked.cells
    extra = {"rules": cells["rules"]} if "rules" in cells.columns else {}
    return table.with_columns(status=cells["status"].to_numpy(), lpl=cells["lpl"].to_numpy(),
                              upl=cells["upl"].to_numpy(), spl=cells["spl"].to_numpy(),
                              **{k: v.to_numpy() for k, v in extra.items()})


def _missing_safe(table: Table, metadata: Metadata, safety: SafetySpec) -> Table:
    if not safety.missing_safe:
        return table
    index = table.cells.index
    missing = np.zeros(table.n_cells, dtype=bool)
    for level, dim in enumerate(table.dims):
        codes = index.get_level_values(level) if index.nlevels > 1 else index
        missing |= np.asarray(codes.isin(metadata.variable(dim).missing))
    primary = missing & (table.cells["status"] == "u").to_numpy()
    cells = table.cells
    return table.with_columns(status=np.where(primary, "s", cells["status"]),
                              lpl=np.where(primary, 0.0, cells["lpl"]),
                              upl=np.where(primary, 0.0, cells["upl"]))


# -- tabular input ------------------------------------------------------------------------------
def tabular_table(
    frame: pd.DataFrame,
    metadata: Metadata,
    spec: TableSpec,
    safety: SafetySpec | None,
    hierarchies: Mapping[str, Hierarchy],
    *,
    compute_totals: bool = False,
    keep_status: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Table:
    """The table of a ``.tab`` file (see the module docstring).

    ``compute_totals`` (``<READTABLE> 1``): the totals are computed from the interior lines
    (totals of the file that differ are replaced, and ``progress`` says how many);
    ``keep_status`` (``1T``) keeps the statuses and levels of the file's total lines.
    Without ``compute_totals`` totals that disagree with their parts raise
    :class:`~tabsdc.AdditivityError`.
    """
    safety = safety or SafetySpec()
    dims = list(spec.dims)
    frame = _only_this_table(frame, metadata, dims)
    columns = _tabular_columns(frame, metadata, spec)
    data = pd.concat([frame[dims].reset_index(drop=True), columns], axis=1)
    totals = {d: metadata.variable(d).total_code for d in dims}
    for dim, hierarchy in hierarchies.items():
        data[dim] = data[dim].where(data[dim] != totals[dim], hierarchy.root)
    extra = [c for c in columns.columns if c != "value"]
    if compute_totals:
        table = _with_computed_totals(data, dims, extra, hierarchies, keep_status, progress)
        if spec.cost_variable == spec.response:
            table = table.with_columns(cost=_transformed(np.abs(table.values),
                                                           spec.cost_lambda))
    else:
        table = Table.from_frame(data, dims, "value", hierarchies=dict(hierarchies),
                                 columns={c: c for c in extra})
    has_status = "status_file" in table.cells.columns
    table = _file_status(table, metadata, safety)
    if safety.individual:
        table = (_rules_then_file(table, safety) if has_status
                 else _take_status(table, _apply(table, safety.individual)))
    if safety.holding:
        raise InputError(f"table {spec.label}: holding-level rules need microdata (a table "
                         "file has no holdings)")
    return _missing_safe(table, metadata, safety)


def _only_this_table(frame: pd.DataFrame, metadata: Metadata, dims: list[str]) -> pd.DataFrame:
    """Lines of the table's own dimensions: other spanning variables at their total."""
    keep = np.ones(len(frame), dtype=bool)
    for variable in metadata.variables:
        if variable.explanatory and variable.name not in dims:
            keep &= (frame[variable.name] == variable.total_code).to_numpy()
    for dim in dims:
        metadata.variable(dim)
    return frame[keep]


def _tabular_columns(frame: pd.DataFrame, metadata: Metadata, spec: TableSpec) -> pd.DataFrame:
    def column(name: str) -> np.ndarray:
        return frame[metadata.variable(name).name].to_numpy(float)

    freq = metadata.with_role("frequency")
    out = {"value": column(spec.response) if spec.response != FREQUENCY_RESPONSE
           else frame[freq[0].name].to_numpy(float)}
    out["value"] = np.nan_to_num(out["value"])
    if freq:
        out["freq"] = np.nan_to_num(frame[freq[0].name].to_numpy(float))
    for position, top in enumerate(metadata.with_role("top"), start=1):
        out[f"x{position}"] = np.nan_to_num(frame[top.name].to_numpy(float))
    if spec.shadow_variable not in (spec.response, FREQUENCY_RESPONSE):
        # the rules compare the largest contributions with the shadow variable's total
        out["contrib_total"] = np.nan_to_num(column(spec.shadow_variable))
    kind = _COST_CODES.get(spec.cost_variable)
    if kind == "frequency":
        if not freq:
            raise InputError(f"table {spec.label}: cost -1 (frequency) needs a <FREQUENCY> "
                             "variable")
        cost = out["freq"]
    elif kind == "unity":
        cost = np.ones(len(frame))
    else:
        cost = np.abs(np.nan_to_num(column(spec.cost_variable)))
    out["cost"] = _transformed(cost, spec.cost_lambda)
    for role, name in (("lower_pl", "file_lpl"), ("upper_pl", "file_upl")):
        found = metadata.with_role(role)
        if found:
            out[name] = frame[found[0].name].to_numpy(float)
    status = metadata.with_role("status")
    if status:
        out["status_file"] = _status_numbers(frame[status[0].name], metadata)
    return pd.DataFrame(out)


#: Toolkit status of each number of the ``status_file`` column (numeric, so that it passes
#: through the table builders with the other cell columns).
_FILE_STATUS = np.array(["s", "u", "z", "m"])


def _status_numbers(codes: pd.Series, metadata: Metadata) -> np.ndarray:
    """tau-ARGUS status codes as positions in :data:`_FILE_STATUS`."""
    code = codes.astype(str).str.strip().str.upper().to_numpy(dtype=str)
    meanings = {metadata.safe.upper(): 0, metadata.unsafe.upper(): 1,
                metadata.protect.upper(): 2, "E": 2, "": 2, "M": 3}
    unknown = sorted(set(code) - set(meanings))
    if unknown:
        raise InputError(f"{metadata.path}: status {unknown[0]!r} in the data is none of "
                         f"<SAFE> {metadata.safe!r}, <UNSAFE> {metadata.unsafe!r}, "
                         f"<PROTECT> {metadata.protect!r}, E (empty), M (secondary)")
    return pd.Series(code).map(meanings).to_numpy(float)


def _with_computed_totals(data: pd.DataFrame, dims: list[str], extra: list[str],
                          hierarchies: Mapping[str, Hierarchy]) -> Table:
    leaves = np.ones(len(data), dtype=bool)
    for dim in dims:
        leaves &= data[dim].isin(hierarchies[dim].leaves).to_numpy()
    interior = data[leaves]
    tops = [c for c in extra if c.startswith("x")]
    table = Table.from_aggregated(interior, dims, "value",
                                  freq="freq" if "freq" in data.columns else None, top=tops,
                                  hierarchies=dict(hierarchies))
    given = data.set_index(dims)
    carried = [c for c in extra if c not in ("freq", *tops)]
    position = table.cells.index.get_indexer(given.index)
    values = table.values
    disagree = np.abs(values[position] - given["value"].to_numpy()) > 1e-6 * np.maximum(
        1.0, np.abs(values[position]))
    if disagree.any():
        row = np.flatnonzero(disagree)[0]
        raise AdditivityError(f"cell {given.index[row]}: the file gives "
                              f"{given['value'].iloc[row]:g} but its parts add up to "
                              f"{values[position][row]:g}")
    columns = {}
    for name in carried:
        fill = {"cost": np.abs(values), "status_file": 0.0, "file_lpl": np.nan,
                "file_upl": np.nan}[name]
        column = np.array(np.broadcast_to(fill, (table.n_cells,)), dtype=float)
        column[position] = given[name].to_numpy()
        columns[name] = column
    return table.with_columns(**columns)


def _with_computed_totals(data: pd.DataFrame, dims: list[str], extra: list[str],
                          hierarchies: Mapping[str, Hierarchy], keep_status: bool,
                          progress: Callable[[str], None] | None) -> Table:
    """Totals computed from the interior lines (tau-ARGUS's ``<READTABLE> 1``); the lines
    of totals in the file give statuses and levels only with ``keep_status``."""
    leaves = np.ones(len(data), dtype=bool)
    for dim in dims:
        leaves &= data[dim].isin(hierarchies[dim].leaves).to_numpy()
    tops = [c for c in extra if c.startswith("x")]
    table = Table.from_aggregated(data[leaves], dims, "value",
                                  freq="freq" if "freq" in data.columns else None, top=tops,
                                  hierarchies=dict(hierarchies))
    if "contrib_total" in extra:
        shadow = Table.from_aggregated(data[leaves], dims, "contrib_total",
                                       hierarchies=dict(hierarchies))
        table = table.with_columns(contrib_total=shadow.values)
    given = data.set_index(dims)
    position = table.cells.index.get_indexer(given.index)
    values = table.values
    differ = np.abs(values[position] - given["value"].to_numpy()) > 1e-9 * np.maximum(
        1.0, np.abs(values[position]))
    if differ.any() and progress:
        row = np.flatnonzero(differ)[0]
        progress(f"{int(differ.sum())} total(s) of the file differ from the sum of their "
                 f"parts and were recomputed, first {given.index[row]}: "
                 f"{given['value'].iloc[row]:g} -> {values[position][row]:g}")
    columns = {}
    rows = position if keep_status else position[leaves]
    source = given if keep_status else given[leaves]
    for name in (c for c in extra if c not in ("freq", "contrib_total", *tops)):
        fill = {"cost": np.abs(values), "status_file": 0.0}.get(name, np.nan)
        column = np.array(np.broadcast_to(fill, (table.n_cells,)), dtype=float)
        column[rows] = source[name].to_numpy(float)
        columns[name] = column
    return table.with_columns(**columns)


def _file_status(table: Table, metadata: Metadata, safety: SafetySpec) -> Table:
    """Statuses and protection levels of the status column (tau-ARGUS's manual statuses:
    unsafe -> ``u``, protected and empty -> ``z``, ``M`` -> ``m``)."""
    cells = table.cells
    if "status_file" not in cells.columns:
        return table
    status = _FILE_STATUS[cells["status_file"].to_numpy(int)]
    value = np.abs(cells["value"].to_numpy(float))
    default = np.minimum(safety.manual_margin / 100 * value, value)
    lpl = _level(cells, "file_lpl", default)
    upl = _level(cells, "file_upl", default)
    primary = status == "u"
    table = table.with_columns(status=status, lpl=np.where(primary, lpl, 0.0),
                               upl=np.where(primary, upl, 0.0))
    used = [c for c in ("status_file", "file_lpl", "file_upl") if c in cells.columns]
    return table.with_cells(table.cells.drop(columns=used))


def _level(cells: pd.DataFrame, column: str, default: np.ndarray) -> np.ndarray:
    if column not in cells.columns:
        return default
    given = cells[column].to_numpy(float)
    return np.where(np.isnan(given), default, given)


def _rules_then_file(table: Table, safety: SafetySpec) -> Table:
    """Safety rules on a table with a status column: the file's unsafe, protected, empty
    and secondary cells keep their status; the rules decide the cells the file calls safe."""
    file_status = table.cells["status"].to_numpy()
    ruled = _take_status(table, _apply(table.with_columns(status="s"), safety.individual))
    keep = file_status != "s"
    cells, before = ruled.cells, table.cells
    return ruled.with_columns(
        status=np.where(keep, file_status, cells["status"]),
        lpl=np.where(keep, before["lpl"], cells["lpl"]),
        upl=np.where(keep, before["upl"], cells["upl"]))
