"""The p/q-interval attack: p/q-rule protection plus published exact intervals disclose.

Cox (*Towards a quality assessment of disclosure-limited statistical data*, slides 22-24;
Cox 2008) shows it on a suppressed cycle x, b, c, a (all > 0): when the releaser publishes the
exact intervals computed under the p/q assumption (every value known within q), the cell with
the smallest value, B, has ``l_B = (1 - q) b`` and ``u_B = (1 + q) b``, so
``q = (u_B - l_B) / (u_B + l_B)`` and then ``b = l_B / (1 - q)`` and ``a = l_A + q b``,
``c = l_C + q b``, ``x = l_X + q b``.

General version (any pattern). With the p/q prior every hidden value y_j lies in
``[(1 - q) a_j, (1 + q) a_j]``. Writing ``y = a + q e``, the attacker polytope is
``{a + q e : A_H e = 0, -a <= e <= a}``, and the set of feasible e is centrally symmetric
(e feasible => -e feasible). Hence for every hidden cell

    l_i = a_i - q N_i(a),   u_i = a_i + q N_i(a),   N_i(a) = max {e_i : A_H e = 0, |e| <= a},

so **the midpoint of every published interval is the true value**, and q follows from any
cell with ``N_i > 0`` as ``q = (u_i - l_i) / (2 N_i(a))`` with a = the midpoints. On the
slides' cycle N_B = b and this is the slides' formula.

When it applies: the published intervals were computed with the symmetric p/q bounds as the
only a-priori bounds on the hidden cells (q < 1, so that ``(1 - q) a_j >= 0`` and the
non-negativity bound never binds). When it does not: intervals computed with other
a-priori bounds (e.g. tau-ARGUS's default [0, 1.5 x total], or non-negativity alone), where
the interval of x is ``[x - a, x + b]`` and only ``b - a`` is known (slide 22); then the
attack reports nothing revealed unless midpoints happen to equal the values, which it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import AttackStatus
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._units import working_unit
from tabsdc.audit._intervals import IntervalAttack

if TYPE_CHECKING:
    from sdcreport import Section
    from tabsdc._table import Table


@dataclass(frozen=True)
class PQAttackResult(ResultBase):
    """What the p/q-interval attack recovers from published intervals.

    Attributes
    ----------
    estimates : Series
        Midpoints of the published intervals (the attacker's estimates), per hidden cell.
    revealed : Series of bool
        Hidden cells whose estimate equals the true value (within tolerance).
    q : float or None
        The q recovered (a fraction), when the cells give one consistent value.
    q_per_cell : Series
        q implied by each hidden cell with ``N_i > 0``.
    consistent : bool
        The estimates satisfy the relations and all cells imply the same q.
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract`; as a check, ``passed`` means
    that the intervals reveal no hidden value.
    """

    estimates: pd.Series
    revealed: pd.Series
    q: float | None
    q_per_cell: pd.Series
    consistent: bool
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """No hidden value is revealed by publishing the intervals."""
        return not bool(self.revealed.any())

    statuses = AttackStatus

    @property
    def status(self) -> AttackStatus:
        """``"nothing revealed"``, or ``"q and values revealed"`` / ``"values revealed"``."""
        if self.passed:
            return AttackStatus.NOTHING_REVEALED
        return (AttackStatus.Q_AND_VALUES_REVEALED if self.q is not None
                else AttackStatus.VALUES_REVEALED)

    def summary(self) -> str:
        """The headline, the q recovered and the revealed cells (at most ten named)."""
        lines = [self.headline(),
                 f"  hidden cells: {len(self.revealed)}, revealed: {int(self.revealed.sum())}, "
                 f"estimates consistent with one q: {'yes' if self.consistent else 'no'}"]
        named = [str(c) for c in self.revealed.index[self.revealed][:10]]
        if named:
            lines.append("  revealed: " + ", ".join(named)
                         + (" ..." if self.revealed.sum() > 10 else ""))
        return "\n".join(lines)

    def to_report(self) -> Section:
        """A report section: the headline and the per-cell estimates."""
        from sdcreport import Section

        section = Section("p/q-interval attack on the published intervals")
        section.add_text(self.headline())
        section.add_metrics({"status": self.status, "q recovered": self.q,
                             "revealed cells": int(self.revealed.sum()),
                             "hidden cells": len(self.revealed)})
        section.add_table(self.to_frame(), "Midpoint estimates", max_html_rows=1000)
        return section

    def headline(self) -> str:
        n = int(self.revealed.sum())
        if n == 0:
            return "p/q-interval attack: publishing these intervals reveals no hidden value."
        q_text = f"q = {100 * self.q:.6g} % and " if self.q is not None else ""
        return (f"p/q-interval attack: publishing these intervals reveals {q_text}"
                f"the values of {n} of {len(self.revealed)} hidden cells.")

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"estimate": self.estimates, "revealed": self.revealed,
                             "q_implied": self.q_per_cell})

    def _dict_fields(self) -> dict[str, Any]:
        return {"q": self.q,
                "consistent": self.consistent,
                "revealed_cells": [str(c) for c in self.revealed.index[self.revealed]],
                "n_revealed": int(self.revealed.sum())}


def pq_interval_attack(
    table: Table,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    hidden: np.ndarray | None = None,
    tol: float = 1e-6,
) -> PQAttackResult:
    """Recover q and the hidden values from published exact intervals (general version).

    Parameters
    ----------
    table : Table
        The published table (hidden cells' values are used only to judge what is revealed).
    lower, upper : ndarray
        The published intervals of the hidden cells, in the order of the hidden cells
        (``np.flatnonzero(hidden)``).
    hidden : ndarray of bool, optional
        Hidden cells (default: status ``u``, ``m``, ``x`` or ``w``).
    tol : float
        Relative tolerance for "revealed" and for the consistency of q.

    Returns
    -------
    PQAttackResult
    """
    start = perf_counter()
    if hidden is None:
        hidden = table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    cells = np.flatnonzero(hidden)
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if lower.shape != (len(cells),) or upper.shape != (len(cells),):
        raise InputError(f"lower/upper need one entry per hidden cell ({len(cells)})")
    index = table.cells.index[cells]
    finite = np.isfinite(lower) & np.isfinite(upper)
    estimates = np.where(finite, (lower + upper) / 2, np.nan)
    truth = table.values[cells]
    unit = working_unit(table.values)  # tolerances relative to the table's magnitude
    scale = tol * np.maximum(unit, np.abs(truth))
    revealed = finite & (np.abs(estimates - truth) <= scale)

    # N_i(a_hat): widest symmetric move of each cell, with the relations' homogeneous part
    # (solved in the table's working unit, as the audit is)
    a_hat = np.where(finite, np.abs(estimates), 0.0) / unit
    zero_table = np.zeros(table.n_cells)
    lb, ub = zero_table.copy(), zero_table.copy()
    lb[cells], ub[cells] = -a_hat, a_hat
    reach = unit * IntervalAttack(table.A, np.zeros(table.n_relations), zero_table, hidden, lb,
                                  ub).intervals().upper
    width = upper - lower
    usable = finite & (reach > scale)
    q_cells = np.where(usable, width / np.where(usable, 2 * reach, 1.0), np.nan)
    q = None
    consistent = False
    if usable.any():
        q_mid = float(np.median(q_cells[usable]))
        residual = table.A[:, cells] @ np.where(finite, estimates, 0.0) + \
            table.A[:, ~hidden] @ table.values[~hidden] - table.b
        additive = np.all(np.abs(residual) <= tol * max(unit, np.abs(table.values).max()))
        # q >= 1 means intervals as wide as non-negativity alone allows: nothing is implied
        consistent = bool(np.all(np.abs(q_cells[usable] - q_mid) <= tol * max(1.0, q_mid))
                          and additive and finite.all() and q_mid < 1 - tol)
        q = q_mid if consistent else None
    return PQAttackResult(
        estimates=pd.Series(estimates, index=index),
        revealed=pd.Series(revealed, index=index),
        q=q,
        q_per_cell=pd.Series(q_cells, index=index),
        consistent=consistent,
        seconds=perf_counter() - start,
    )


def cycle_pq_attack(lower: dict[str, float], upper: dict[str, float]) -> dict[str, float]:
    """The slides' closed form on a suppressed cycle (slide 24).

    The cell with the smallest lower bound is B: ``q = (u_B - l_B) / (u_B + l_B)``,
    ``b = l_B / (1 - q)``, and every other cell is ``l + q b``.

    Returns a dict with ``q`` and the recovered value of each cell.
    """
    smallest = min(lower, key=lower.get)
    l_b, u_b = lower[smallest], upper[smallest]
    q = (u_b - l_b) / (u_b + l_b)
    b = l_b / (1 - q)
    out = {"q": q}
    out.update({name: (b if name == smallest else lower[name] + q * b) for name in lower})
    return out
