"""Disclosure by differencing for counts (k-disclosure): a rule and a check.

A published cell ``c`` that lies inside a larger published cell ``p`` (every code of ``c``
at or below the code of ``p`` in its hierarchy, and ``p`` not the same set of inner cells)
tells, by the difference ``d = n_p - n_c`` of their counts, how many units of ``p`` are
not in ``c``. When ``n_c > 0`` and ``d <= k``, a coalition of ``k`` units of ``p`` (or, for
``d = 0``, anyone) learns that every other unit of ``p`` belongs to ``c``: an attribute
disclosure by differencing (Lupp and Langsrud, k-disclosure; GaussSuppression's
``SuppressKDisclosure``, whose ``coalition`` is ``k``). Nesting is read from the hierarchies (what
an attacker knows), not from which inner cells happen to be empty (GaussSuppression reads
its data's rows: without zero rows it also pairs cells that only the data nest). In a
:class:`~tabsdc._tableset.TableSet` the rule and the check run on the combined table, so a
cell hidden in one table but published in another counts as published, and hidden cells
are bounded with the relations of every table.

* :class:`KDisclosureRule` is a sensitivity rule (:func:`tabsdc._rules.apply_rules`): the
  inner cell ``c`` of every such pair is primary with ``upl = k + 1 - d`` (the smallest
  ``d`` when ``c`` is in several pairs). Hiding ``c`` so that the attacker cannot exclude
  ``n_c - upl`` leaves ``n_p - n_c`` possibly above ``k``.
* :func:`differencing_check` checks a release: with ``[lo, hi]`` the interval of each cell
  an attacker can compute (the published value, or the interval attack's bounds for hidden
  cells, :func:`tabsdc.audit.audit`), a pair discloses when ``n_c > 0`` (``n_c`` at most
  ``upper_bound``) and ``hi_p - lo_c <= k``: the attacker then knows the difference is at
  most ``k``.

Sources: D. P. Lupp, Ø. Langsrud (2021), *Suppression of small counts via k-disclosure*,
UNECE/Eurostat work session on statistical data confidentiality; GaussSuppression 1.2.3
(Ø. Langsrud, D. P. Lupp; MIT), ``SuppressKDisclosure``, ``KDisclosurePrimary``.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

import tabsdc._structure as structure
from sdcreport._contract import ResultBase
from sdcreport._statuses import DifferencingStatus
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError, RuleError
from tabsdc._table import Table
from tabsdc._tableset import TableSet

if TYPE_CHECKING:
    from sdcreport import Section


def subcell_pairs(table: Table) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (inner ``c``, outer ``p``) of cells of a table with ``c`` strictly inside
    ``p``: in every dimension the leaves below the code of ``c`` are among those below the
    code of ``p``, and in some dimension ``p`` has more.

    Returns
    -------
    child, parent : ndarray of int
        Cell positions.

    Examples
    --------
    >>> t = Table.from_aggregated(pd.DataFrame({"r": ["a", "b"], "value": [1.0, 2.0]}),
    ...                           ["r"])
    >>> [x.tolist() for x in subcell_pairs(t)]   # a and b inside Total
    [[1, 2], [0, 0]]
    """
    hier = list(table.hierarchies.values())
    if not hier:
        raise InputError("differencing needs a table with dimensions and hierarchies")
    indexer = structure.CellIndexer(tuple(len(h) for h in hier))
    coords = table.cell_coords()
    keys = indexer.keys(coords)
    order = np.argsort(keys)
    source, expanded = np.arange(len(coords)), coords
    leaves = []
    for dim, hierarchy in enumerate(hier):
        code, container, count = _containers(hierarchy)
        leaves.append(count)
        step, expanded = structure.expand_by_pairs(expanded, dim, code, container,
                                                   len(hierarchy))
        source = source[step]
    wanted = indexer.keys(expanded)
    position = np.minimum(np.searchsorted(keys[order], wanted), len(order) - 1)
    parent = order[position]
    found = (keys[parent] == wanted) & (parent != source)
    child, parent = source[found], parent[found]
    larger = np.zeros(len(child), bool)
    for dim, count in enumerate(leaves):
        larger |= count[coords[parent, dim]] > count[coords[child, dim]]
    return child[larger], parent[larger]


def _containers(hierarchy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code, container) for every pair whose leaves nest, and each code's leaf count.

    In a tree the leaves of ``a`` lie below ``b`` when ``b`` is ``a`` or an ancestor of it,
    or a descendant of ``a`` with the same leaves (a chain of single children)."""
    code, ancestor = hierarchy.ancestor_pairs()
    leaf = np.isin(np.asarray(hierarchy.codes), hierarchy.leaves)[code]
    count = np.bincount(ancestor[leaf], minlength=len(hierarchy))
    same = (code != ancestor) & (count[code] == count[ancestor])
    return (np.concatenate([code, ancestor[same]]), np.concatenate([ancestor, code[same]]),
            count)


def difference_pairs(table: Table, k: int = 1, *, upper_bound: float = np.inf,
                     lower: np.ndarray | None = None,
                     upper: np.ndarray | None = None) -> pd.DataFrame:
    """The pairs that disclose by differencing (module text).

    Parameters
    ----------
    table : Table
        Counts in ``freq`` (the contributors of each cell), else in ``value``.
    k : int
        The coalition size (>= 0).
    upper_bound : float
        Inner cells with a count above this are not considered.
    lower, upper : ndarray, optional
        What the attacker knows of each cell's count (default: the counts themselves).

    Returns
    -------
    pandas.DataFrame
        One row per disclosing pair: ``child``, ``parent`` (cell labels), their positions,
        counts and ``difference``, sorted by difference.
    """
    if int(k) != k or k < 0:
        raise InputError(f"k must be a whole number >= 0, not {k!r}")
    counts = (table.cells["freq"] if "freq" in table.cells else table.cells["value"]) \
        .to_numpy(float)
    lo = counts if lower is None else np.asarray(lower, float)
    hi = counts if upper is None else np.asarray(upper, float)
    child, parent = subcell_pairs(table)
    bad = (counts[child] > 0) & (counts[child] <= upper_bound) & (hi[parent] - lo[child] <= k)
    child, parent = child[bad], parent[bad]
    frame = pd.DataFrame({
        "child": list(table.cells.index[child]), "parent": list(table.cells.index[parent]),
        "child_position": child, "parent_position": parent,
        "child_count": counts[child], "parent_count": counts[parent],
        "difference": counts[parent] - counts[child]})
    return frame.sort_values(["difference", "child_position", "parent_position"],
                             ignore_index=True)


@dataclass(frozen=True)
class KDisclosureRule:
    """k-disclosure as a sensitivity rule: the inner cell of every disclosing pair is
    primary with ``upl = k + 1 - difference`` (module text).

    Unlike the other rules it reads the table's structure, so :func:`tabsdc._rules.apply_rules`
    calls :meth:`evaluate_table`.

    Examples
    --------
    >>> from tabsdc._rules import apply_rules
    >>> data = pd.DataFrame({"region": list("aaaab"), "sex": list("mmmfm")})
    >>> table = Table.from_microdata(data, ["region", "sex"])
    >>> flagged = apply_rules(table, KDisclosureRule(1)).table.cells
    >>> flagged.loc[flagged["status"] == "u", "upl"].to_dict()  # (b, m) = b: difference 0
    {('Total', 'm'): 1.0, ('a', 'Total'): 1.0, ('a', 'm'): 1.0, ('a', 'f'): 2.0, ('b', 'm'): 2.0}
    """

    k: int = 1
    upper_bound: float = np.inf

    def __post_init__(self) -> None:
        if int(self.k) != self.k or self.k < 0:
            raise RuleError(f"k-disclosure needs a whole k >= 0, not {self.k!r}")

    @property
    def name(self) -> str:
        return f"k-disclosure(k={self.k})"

    def evaluate(self, cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        raise RuleError(f"{self.name} reads the table's hierarchies: apply it with "
                        "tabsdc._rules.apply_rules, which passes the table")

    def evaluate_table(self, table: Table) -> tuple[np.ndarray, np.ndarray]:
        """(sensitive mask, upper protection level) per cell."""
        pairs = difference_pairs(table, self.k, upper_bound=self.upper_bound)
        upl = np.zeros(table.n_cells)
        np.maximum.at(upl, pairs["child_position"].to_numpy(),
                      self.k + 1 - pairs["difference"].to_numpy())
        return upl > 0, upl


@dataclass(frozen=True, eq=False)
class DifferencingCheck(ResultBase):
    """Outcome of :func:`differencing_check`.

    Attributes
    ----------
    original : Table
        The release checked.
    pairs : pandas.DataFrame
        The disclosing pairs (:func:`difference_pairs`); empty when the release passes.
    k : int
    hidden : int
        Cells the attacker does not see.
    seconds : float
    """

    original: Table
    pairs: pd.DataFrame
    k: int
    hidden: int
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """No pair discloses."""
        return self.pairs.empty

    statuses = DifferencingStatus

    @property
    def status(self) -> DifferencingStatus:
        return DifferencingStatus.PASSED if self.passed else DifferencingStatus.DISCLOSED

    def summary(self) -> str:
        head = (f"Differencing check (k = {self.k}): {self.status}; "
                f"{len(self.pairs)} disclosing pair(s), {self.hidden} hidden cell(s)")
        rows = [f"  {c} inside {p}: {cc:g} of {pc:g} (difference {d:g})"
                for c, p, cc, pc, d in self.pairs[["child", "parent", "child_count",
                                                   "parent_count", "difference"]]
                .head(10).itertuples(index=False)]
        return "\n".join([head, *rows])

    def to_frame(self) -> pd.DataFrame:
        return self.pairs.copy()

    def _dict_fields(self) -> dict:
        return {"passed": self.passed, "k": self.k, "hidden": self.hidden,
                "pairs": [{"child": str(c), "parent": str(p), "child_count": float(cc),
                           "parent_count": float(pc), "difference": float(d)}
                          for c, p, cc, pc, d in self.pairs[
                              ["child", "parent", "child_count", "parent_count",
                               "difference"]].itertuples(index=False)]}

    def to_report(self) -> Section:
        from sdcreport import Section

        section = Section(f"Disclosure by differencing (k = {self.k})")
        section.add_text(
            "A cell inside a larger one discloses when the attacker can tell that at most "
            f"{self.k} unit(s) of the larger cell lie outside it (the difference of their "
            "counts, from published values and the intervals of hidden cells).")
        section.add_metrics({"status": self.status, "disclosing pairs": len(self.pairs),
                             "hidden cells": self.hidden})
        if not self.pairs.empty:
            section.add_table(self.pairs.drop(columns=["child_position", "parent_position"]),
                              "Disclosing pairs")
        return section


def differencing_check(table: Table | TableSet, k: int = 1, *, upper_bound: float = np.inf,
                       solver: str = "highs") -> DifferencingCheck:
    """Check a release for disclosure by differencing (module text).

    Hidden cells (status ``u``, ``m``, ``x``, ``w``) are known to the attacker only through
    the interval attack (:func:`tabsdc.audit.audit`, which solves two LPs per hidden
    cell); published cells by their value. A :class:`~tabsdc._tableset.TableSet` is checked
    as its combined table: a cell hidden in one table but published in another is known,
    and the intervals use every table's relations.

    Examples
    --------
    >>> data = pd.DataFrame({"region": list("aaaab"), "sex": list("mmmfm")})
    >>> check = differencing_check(Table.from_microdata(data, ["region", "sex"]), 1)
    >>> check.passed, len(check.pairs)
    (False, 6)
    """
    started = perf_counter()
    if isinstance(table, TableSet):
        table = table.combined
    counts_column = "freq" if "freq" in table.cells else "value"
    counts = table.cells[counts_column].to_numpy(float)
    hidden = table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    lower, upper = counts.copy(), counts.copy()
    if hidden.any():
        from tabsdc.audit import audit

        counted = table.with_columns(value=counts) if counts_column == "freq" else table
        frame = audit(counted, solver=solver).frame
        positions = table.cells.index.get_indexer(frame.index)
        lower[positions] = frame["lower"].to_numpy(float)
        upper[positions] = frame["upper"].to_numpy(float)
    pairs = difference_pairs(table, k, upper_bound=upper_bound, lower=lower, upper=upper)
    return DifferencingCheck(table, pairs, int(k), int(hidden.sum()),
                             perf_counter() - started)
