"""The controlled tabular adjustment problem as arrays, built once from a table.

Every CTA method works on the adjustment ``y`` of the cell values ``a`` (published values
``a + y``). A :class:`CTAProblem` holds what the methods need:

* the relations ``A`` (``A y = 0`` keeps every relation of the table, since ``A a = b``) and
  extra equality rows ``E y = 0`` (quality-preserving constraints,
  :mod:`tabsdc.cta._constraints`);
* per cell a cost ``w`` per unit of change (the literature's weight) and the largest
  decrease ``down`` and increase ``up`` allowed (``up = down = 0`` fixes a cell);
* per sensitive cell its protection levels and which of the two protection directions is
  possible: upward ``y >= upl`` needs ``a + upl <= ub`` (and ``upl <= up``), downward
  ``y <= -lpl`` needs ``a - lpl >= lb``.

Cox, *Towards a quality assessment of disclosure-limited statistical data*, slide 26: the
capacities ``e_i`` of non-sensitive cells and ``m_i`` of sensitive cells are ``up``/``down``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tabsdc._errors import InputError
from tabsdc._validation import check_choice

if TYPE_CHECKING:
    from tabsdc._table import Table

#: Named costs ``w_i`` of the L1 objective ``sum w_i |y_i|``.
COSTS = ("count", "inverse", "cost")


@dataclass(frozen=True)
class QuadraticLimit:
    """The convex constraint ``sum_{i in cells} y_i**2 <= limit`` (kept by outer cuts).

    Attributes
    ----------
    name : str
        What the limit keeps (e.g. ``"correlation (interior)"``).
    cells : ndarray of int
        Positions of the cells in the sum.
    limit : float
        Right-hand side (>= 0).
    """

    name: str
    cells: np.ndarray
    limit: float


@dataclass(frozen=True, eq=False)
class CTAProblem:
    """A CTA instance in arrays; see the module docstring.

    Attributes
    ----------
    values, cost, down, up : ndarray, shape (n,)
        Cell values ``a``, costs ``w >= 0`` per unit of change, largest decrease and
        increase (``>= 0``, ``inf`` for no limit). For sensitive cells ``up``/``down`` are
        the finite capacities ``m_i`` of the protected move.
    A : scipy.sparse.csr_array, shape (m, n)
        Relations; the adjustment satisfies ``A y = 0``.
    sensitive : ndarray of int, shape (s,)
        Positions of the sensitive cells.
    lpl, upl : ndarray, shape (s,)
        Their lower and upper protection levels.
    can_up, can_down : ndarray of bool, shape (s,)
        Which protection directions are possible.
    rows : scipy.sparse.csr_array, shape (k, n)
        Extra equality rows ``E y = 0``; ``row_names`` says what each keeps.
    quadratic : tuple of QuadraticLimit
        Convex limits on sums of squared adjustments.
    labels : callable
        ``labels(positions) -> list of str``: readable cell names for messages.
    """

    values: np.ndarray
    cost: np.ndarray
    A: sp.csr_array
    down: np.ndarray
    up: np.ndarray
    sensitive: np.ndarray
    lpl: np.ndarray
    upl: np.ndarray
    can_up: np.ndarray
    can_down: np.ndarray
    labels: Callable[[np.ndarray], list[str]]
    rows: sp.csr_array = field(default=None)
    row_names: tuple[str, ...] = ()
    quadratic: tuple[QuadraticLimit, ...] = ()

    def __post_init__(self) -> None:
        if self.rows is None:
            object.__setattr__(self, "rows", sp.csr_array((0, self.n)))

    @property
    def n(self) -> int:
        """Number of cells."""
        return len(self.values)

    @property
    def s(self) -> int:
        """Number of sensitive cells."""
        return len(self.sensitive)

    @property
    def constraint_matrix(self) -> sp.csr_array:
        """``[A; E]``: every equality row on ``y``."""
        return sp.csr_array(sp.vstack([self.A, self.rows], format="csr"))

    @property
    def free_direction(self) -> np.ndarray:
        """Sensitive cells (mask over ``sensitive``) that can move either way."""
        return self.can_up & self.can_down

    def with_rows(
        self, rows: sp.sparray, names: Sequence[str], quadratic: Sequence[QuadraticLimit] = ()
    ) -> CTAProblem:
        """A copy with more equality rows and quadratic limits."""
        stacked = sp.csr_array(sp.vstack([self.rows, sp.csr_array(rows)], format="csr"))
        return replace(self, rows=stacked, row_names=(*self.row_names, *names),
                       quadratic=(*self.quadratic, *quadratic))

    def bounds(self, up: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of ``y`` when the directions are fixed.

        Parameters
        ----------
        up : ndarray of bool, shape (s,), or None
            True where a sensitive cell moves up; None gives the bounds of non-sensitive
            cells only (sensitive cells span both directions).
        """
        lower, upper = -self.down.copy(), self.up.copy()
        if up is not None:
            k = self.sensitive
            lower[k] = np.where(up, self.upl, -self.down[k])
            upper[k] = np.where(up, self.up[k], -self.lpl)
        return lower, upper

    def check_directions(self, up: np.ndarray) -> np.ndarray:
        """``up`` as a boolean array, checked against the possible directions."""
        up = np.asarray(up, dtype=bool)
        if up.shape != (self.s,):
            raise InputError(f"directions have shape {up.shape}, the table has {self.s} "
                             "sensitive cells")
        bad = np.flatnonzero((up & ~self.can_up) | (~up & ~self.can_down))
        if bad.size:
            label = self.labels(self.sensitive[bad[:1]])[0]
            raise InputError(f"{label} cannot be protected in the requested direction "
                             f"({'up' if up[bad[0]] else 'down'})")
        return up

    def objective(self, y: np.ndarray, kind: str = "l1") -> float:
        """``sum w |y|`` (``kind="l1"``) or ``sum w y**2`` (``"l2"``)."""
        terms = np.abs(y) if kind == "l1" else y * y
        return float(self.cost @ terms)

    @classmethod
    def stack(cls, problems: Sequence[CTAProblem]) -> CTAProblem:
        """One problem holding several independent ones (cells concatenated in order).

        Used for multivariate CTA: each table keeps its own relations and limits; coupling
        rows are added afterwards with :meth:`with_rows`.
        """
        offsets = np.cumsum([0, *(p.n for p in problems)])

        def labels(positions: np.ndarray) -> list[str]:
            positions = np.asarray(positions, dtype=int)
            table = np.searchsorted(offsets, positions, side="right") - 1
            return [f"table {t}: {problems[t].labels(np.array([p - offsets[t]]))[0]}"
                    for t, p in zip(table, positions, strict=True)]

        cat = np.concatenate
        quadratic = tuple(
            QuadraticLimit(f"table {t}: {q.name}", q.cells + offsets[t], q.limit)
            for t, p in enumerate(problems) for q in p.quadratic
        )
        return cls(
            values=cat([p.values for p in problems]),
            cost=cat([p.cost for p in problems]),
            A=sp.csr_array(sp.block_diag([p.A for p in problems], format="csr")),
            down=cat([p.down for p in problems]),
            up=cat([p.up for p in problems]),
            sensitive=cat([p.sensitive + o for p, o in zip(problems, offsets, strict=False)]),
            lpl=cat([p.lpl for p in problems]),
            upl=cat([p.upl for p in problems]),
            can_up=cat([p.can_up for p in problems]),
            can_down=cat([p.can_down for p in problems]),
            labels=labels,
            rows=sp.csr_array(sp.block_diag([p.rows for p in problems], format="csr")),
            row_names=tuple(f"table {t}: {name}" for t, p in enumerate(problems)
                            for name in p.row_names),
            quadratic=quadratic,
        )


# -- building from a table --------------------------------------------------------------------
def smallest_magnitude(values: np.ndarray) -> float:
    """The smallest non-zero ``|a|`` of a table (1 when every value is 0): the floor, in the
    table's own units, of inverse costs and of the tolerances of the checks.

    Examples
    --------
    >>> smallest_magnitude(np.array([0.0, 3e6, -2e6, 5e7]))
    2000000.0
    """
    magnitude = np.abs(values)
    nonzero = magnitude[magnitude > 0]
    return float(nonzero.min()) if nonzero.size else 1.0


def adjustment_costs(table: Table, cost: str | Sequence[float] | np.ndarray) -> np.ndarray:
    """Costs ``w_i`` per unit of change of the objective ``sum w_i |y_i|``.

    Parameters
    ----------
    table : Table
    cost : {"count", "inverse", "cost"} or array-like of shape (n,)
        ``"count"``: 1 (the number of cells changed, as the suppression cost ``"count"``);
        ``"inverse"``: ``1 / max(|a_i|, a_min)`` with ``a_min`` the smallest non-zero
        ``|a|`` of the table (relative changes; the floor keeps zero cells finite and, being
        in the table's own units, makes the costs - and the optimal adjustment - independent
        of the unit of the values: a table in euros and the same table in thousands of
        euros are adjusted alike. On count tables holding a 1 it is the ``1 / max(a_i, 1)``
        of Castro's CTA instances, whose quadratic terms are ``2 / max(a_i, 1)``);
        ``"cost"``: the table's ``cost`` column (JJ's weight field); or one non-negative
        number per cell.

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    InputError
        An unknown name, an array of the wrong length, or a negative or non-finite cost
        (naming the cell).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> table = Table(pd.DataFrame({"value": [10.0, 4.0, 6.0]}), [[-1, 1, 1]], [0])
    >>> adjustment_costs(table, "inverse").round(4).tolist()
    [0.1, 0.25, 0.1667]
    """
    a = table.values
    if isinstance(cost, str):
        check_choice("cost", cost, COSTS, also="an array of one cost per cell")
        if cost == "count":
            return np.ones(table.n_cells)
        if cost == "inverse":
            return 1.0 / np.maximum(np.abs(a), smallest_magnitude(a))
        w = table.cells["cost"].to_numpy(dtype=float)
    else:
        w = np.asarray(cost, dtype=float)
        if w.shape != (table.n_cells,):
            raise InputError(f"cost has shape {w.shape}, the table has {table.n_cells} cells")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise InputError(f"{table.cell_labels(bad[:1])[0]} has cost {w[bad[0]]}; costs "
                         "must be finite and non-negative")
    return w


def cell_mask(table: Table, cells: object, what: str) -> np.ndarray:
    """A boolean mask over the cells from a mask or a sequence of cell labels (index values).

    Raises
    ------
    InputError
        A mask of the wrong length or an unknown label (named, with ``what``).
    """
    if cells is None:
        return np.zeros(table.n_cells, dtype=bool)
    array = np.asarray(cells) if not isinstance(cells, pd.Index) else cells.to_numpy()
    if array.dtype == bool:
        if array.shape != (table.n_cells,):
            raise InputError(f"{what} mask has shape {array.shape}, the table has "
                             f"{table.n_cells} cells")
        return array.copy()
    labels = list(cells)
    position = table.cells.index.get_indexer(labels)
    if (position < 0).any():
        raise InputError(f"{what}: unknown cell {labels[int(np.flatnonzero(position < 0)[0])]!r}")
    mask = np.zeros(table.n_cells, dtype=bool)
    mask[position] = True
    return mask


def sensitive_mask(table: Table) -> np.ndarray:
    """Cells to protect: status ``u`` with a positive ``lpl`` or ``upl``."""
    cells = table.cells
    levels = np.maximum(cells["lpl"].to_numpy(dtype=float), cells["upl"].to_numpy(dtype=float))
    return (cells["status"].to_numpy() == "u") & (levels > 0)


def fixed_cells(table: Table, fixed: object = None, fix_totals: bool = False) -> np.ndarray:
    """Cells the user exempts from adjustment: ``fixed`` and, with ``fix_totals``, every total
    that is not sensitive (status ``z`` cells are fixed besides these)."""
    mask = cell_mask(table, fixed, "fixed")
    if fix_totals:
        mask |= table.total_cells & ~sensitive_mask(table)
    return mask


def _per_cell(value: object, n: int, what: str) -> np.ndarray:
    array = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy() if np.ndim(value) == 0 \
        else np.asarray(value, dtype=float)
    if array.shape != (n,):
        raise InputError(f"{what} has shape {array.shape}, expected a number or ({n},)")
    if np.isnan(array).any() or (array < 0).any():
        raise InputError(f"{what} must be non-negative numbers")
    return array


def build_problem(
    table: Table,
    cost: str | Sequence[float] | np.ndarray = "inverse",
    *,
    capacity: float | Sequence[float] | None = None,
    relative_capacity: float | None = None,
    sensitive_capacity: float | Sequence[float] | None = None,
    fixed: object = None,
    fix_totals: bool = False,
) -> CTAProblem:
    """The CTA problem of a table (see :func:`tabsdc.cta.adjust` for the parameters).

    Sensitive cells are those with status ``u`` and a positive protection level; cells with
    status ``z``, the cells in ``fixed`` and (with ``fix_totals``) every total are fixed.
    Non-sensitive cells may move within their a-priori bounds ``lb <= a + y <= ub``,
    further limited by ``capacity`` (absolute) and ``relative_capacity`` (fraction of
    ``|a|``). A sensitive cell moves by at most ``sensitive_capacity`` (default: the sum of
    the protection levels of all sensitive cells, and never beyond its a-priori bounds).
    ``cost`` is as in :func:`adjustment_costs`.

    Raises
    ------
    InputError
        A sensitive cell that is also fixed, or that can be protected in neither direction
        (``a - lpl < lb`` and ``a + upl > ub`` or above its capacity), naming the cell; bad
        costs or capacities.
    """
    cells = table.cells
    a = table.values
    n = table.n_cells
    w = adjustment_costs(table, cost)
    lb = cells["lb"].to_numpy(dtype=float)
    ub = cells["ub"].to_numpy(dtype=float)
    lpl_all = np.maximum(cells["lpl"].to_numpy(dtype=float), 0.0)
    upl_all = np.maximum(cells["upl"].to_numpy(dtype=float), 0.0)
    sensitive = sensitive_mask(table)
    fixed_mask = (cells["status"].to_numpy() == "z") | fixed_cells(table, fixed, fix_totals)
    clash = np.flatnonzero(sensitive & fixed_mask)
    if clash.size:
        raise InputError(f"{table.cell_labels(clash[:1])[0]} is sensitive and cannot be fixed")
    with np.errstate(invalid="ignore"):
        down = np.where(np.isfinite(lb), a - lb, np.inf)
        up = np.where(np.isfinite(ub), ub - a, np.inf)
    outside = np.flatnonzero((down < 0) | (up < 0))
    if outside.size:
        raise InputError(f"{table.cell_labels(outside[:1])[0]} has value {a[outside[0]]} "
                         "outside its bounds lb/ub")
    plain = ~sensitive
    if capacity is not None:
        cap = _per_cell(capacity, n, "capacity")
        down[plain], up[plain] = np.minimum(down, cap)[plain], np.minimum(up, cap)[plain]
    if relative_capacity is not None:
        if not (np.isfinite(relative_capacity) and relative_capacity >= 0):
            raise InputError(f"relative_capacity must be a non-negative fraction, got "
                             f"{relative_capacity!r}")
        cap = relative_capacity * np.abs(a)
        down[plain], up[plain] = np.minimum(down, cap)[plain], np.minimum(up, cap)[plain]
    down[fixed_mask] = 0.0
    up[fixed_mask] = 0.0
    sensitive = np.flatnonzero(sensitive)
    lpl, upl = lpl_all[sensitive], upl_all[sensitive]
    if sensitive_capacity is None:
        m = np.full(len(sensitive), float(np.sum(np.maximum(lpl, upl))))
    else:
        m = _per_cell(sensitive_capacity, n, "sensitive_capacity")[sensitive]
    up[sensitive] = np.minimum(up[sensitive], m)
    down[sensitive] = np.minimum(down[sensitive], m)
    can_up = upl <= up[sensitive]
    can_down = lpl <= down[sensitive]
    stuck = np.flatnonzero(~can_up & ~can_down)
    if stuck.size:
        k = stuck[0]
        room_up, room_down = up[sensitive[k]], down[sensitive[k]]
        closest = (f"upl to {room_up:g}" if upl[k] - room_up <= lpl[k] - room_down
                   else f"lpl to {room_down:g}")
        raise InputError(
            f"{table.cell_labels(sensitive[stuck[:1]])[0]} (value {a[sensitive[k]]:g}) cannot "
            f"be protected: a - lpl = {a[sensitive[k]] - lpl[k]:g} is below its lower bound and "
            f"a + upl = {a[sensitive[k]] + upl[k]:g} above its upper bound or capacity; the "
            f"closest protectable levels: lower {closest} (the room the cell has that way)"
            + ("" if stuck.size == 1 else f"; {stuck.size} sensitive cells are in this case")
        )
    return CTAProblem(values=a, cost=w, A=table.A, down=down, up=up, sensitive=sensitive,
                      lpl=lpl, upl=upl, can_up=can_up, can_down=can_down,
                      labels=table.cell_labels)
