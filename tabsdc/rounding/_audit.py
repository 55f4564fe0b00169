"""Audit of a rounded release: what an intruder who knows the base and the method can infer.

Every published value ``R`` tells the intruder an interval for the original ``x``:

==========================================  ========================  ======================
method                                      real data                 integer data
==========================================  ========================  ======================
conventional (up when r >= B/2)             ``[R - B/2, R + B/2)``    ``ceil(R - B/2) ..
                                                                      ceil(R + B/2) - 1``
modified (r = B/2 either way)               ``[R - B/2, R + B/2]``    ``ceil(R - B/2) ..
                                                                      floor(R + B/2)``
50/50, unbiased, controlled (adjacent)      ``(R - B, R + B)``        ``R - B + 1 .. R + B - 1``
==========================================  ========================  ======================

intersected with the table's a-priori bounds ``lb``/``ub`` (0 <= x for non-negative tables).
A rounding that had to leave adjacency (the closest additive alternative when no controlled
rounding exists) widens every box by its largest extra step, which the publisher would have
to announce. The intruder also knows that the *original* table is additive, ``A x = b``;
the exact range of each cell over ``{x : A x = b, box}`` comes from the interval attack of
:mod:`tabsdc.audit` (two LPs per cell in one kept HiGHS model; Cox, slides 13-20). For
integer data the LP bounds are rounded inwards (ceil/floor), which is valid because x is
an integer; ``integer=True`` computes the integer hull's bounds by MILP instead (tighter in
three or more dimensions).

A cell whose range is a single value is *exact* (disclosed); one narrower than
``min_width`` is *narrow*. The default ``min_width`` is the width of the range adjacent
rounding leaves a published zero, ``{0, ..., B-1}`` (``B - 1`` for integer data, ``B``
otherwise): the slide-10 ideal of a posterior spread over every residue. A narrower range
means the rule or the additivity told the intruder more than the base alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._statuses import ProtectionStatus
from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.audit import IntervalAttack
from tabsdc.rounding._statistics import AUDITED_METHODS

if TYPE_CHECKING:
    from sdcreport import Section

#: Tolerance of the inward rounding of LP bounds on integer data, and of "exact".
BOUND_TOL = 1e-6


def release_box(
    rounded: np.ndarray, base: int, method: str, integer: bool, extra_steps: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The interval each published value gives for its original (module table).

    Parameters
    ----------
    rounded : ndarray
        Published values.
    base : int
    method : str
        One of :data:`~tabsdc.rounding._statistics.AUDITED_METHODS` (small-count rounding
        leaves large cells unrounded: its boxes are not these).
    integer : bool
        The original values are integers.
    extra_steps : int
        Multiples of the base by which the rounding may leave adjacency (widens the box).

    Returns
    -------
    lower, upper : ndarray
        Closed bounds (the closure of the open ends for real data).

    Examples
    --------
    >>> release_box(np.array([0.0, 10.0]), 5, "fifty-fifty", integer=True)
    (array([-4.,  6.]), array([ 4., 14.]))
    >>> release_box(np.array([10.0]), 4, "conventional", integer=True)
    (array([8.]), array([11.]))
    """
    check_choice("method", method, AUDITED_METHODS)
    R = np.asarray(rounded, dtype=float)
    if method in ("conventional", "modified"):
        lower, upper = R - base / 2, R + base / 2
        if integer:
            lower = np.ceil(lower)
            upper = np.ceil(upper) - 1 if method == "conventional" else np.floor(upper)
    else:
        lower, upper = R - base, R + base
        if integer:
            lower, upper = lower + 1, upper - 1
    return lower - extra_steps * base, upper + extra_steps * base


@dataclass(frozen=True)
class RoundingAudit(ResultBase):
    """Ranges of the original values an intruder can infer from a rounded release.

    A check in the sense of :mod:`sdcreport._contract`: ``passed`` when every range was
    computed and no cell is pinned to one value (narrow ranges are reported, not failed);
    ``status`` says it in words.

    Attributes
    ----------
    frame : DataFrame
        One row per cell (the table's index): ``value`` (original), ``rounded``, the box
        ``box_lower``/``box_upper`` the rounding rule alone gives, the range
        ``lower``/``upper`` after additivity, ``width``, ``exact`` and ``narrow``.
    base, method : int, str
    min_width : float
        A range narrower than this is flagged narrow.
    integer : bool
        Integer data (ranges hold integers).
    n_solves : int
        LPs (or MILPs) solved.
    seconds : float
    """

    frame: pd.DataFrame
    base: int
    method: str
    min_width: float
    integer: bool
    n_solves: int
    seconds: float

    @property
    def n_exact(self) -> int:
        return int(self.frame["exact"].sum())

    @property
    def n_narrow(self) -> int:
        return int(self.frame["narrow"].sum())

    @property
    def n_tightened(self) -> int:
        """Cells whose range additivity made narrower than the rule's box."""
        f = self.frame
        return int(((f["lower"] > f["box_lower"] + BOUND_TOL)
                    | (f["upper"] < f["box_upper"] - BOUND_TOL)).sum())

    @property
    def complete(self) -> bool:
        """Every range was computed (no time limit cut the attack short)."""
        return not self.frame[["lower", "upper"]].isna().to_numpy().any()

    @property
    def passed(self) -> bool:
        """No original value can be recovered exactly, and every range was computed."""
        return self.complete and self.n_exact == 0

    statuses = ProtectionStatus

    @property
    def status(self) -> ProtectionStatus:
        """``"protected"``, ``"not protected"`` (some cell is exact) or ``"time-limited"``
        (some ranges were not computed in time: the release is not shown safe)."""
        if not self.complete:
            return ProtectionStatus.TIME_LIMITED
        return ProtectionStatus.PROTECTED if self.passed else ProtectionStatus.NOT_PROTECTED

    def flagged(self) -> pd.DataFrame:
        """Cells that are exact or narrow."""
        return self.frame[self.frame["exact"] | self.frame["narrow"]]

    def summary(self) -> str:
        return (f"Audit of the rounded release (base {self.base}, {self.method}): "
                f"{len(self.frame)} cells, {self.n_tightened} narrowed by additivity, "
                f"{self.n_narrow} narrower than {self.min_width:g}, {self.n_exact} exact "
                f"({self.n_solves} bounds in {self.seconds:.2f} s)"
                + ("" if self.complete else "; time limit reached before every range was "
                   "computed"))

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def _dict_fields(self) -> dict:
        flagged = self.flagged().reset_index()
        return {"passed": self.passed, "min_width": self.min_width, "integer": self.integer,
                "cells": len(self.frame), "narrowed_by_additivity": self.n_tightened,
                "narrow": self.n_narrow, "exact": self.n_exact,
                "flagged": [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                            for row in flagged.to_dict(orient="records")]}

    def to_report(self) -> Section:
        from sdcreport import Section

        section = Section("Audit of the rounded release").add_text(
            f"An intruder who knows the base ({self.base}) and the method ({self.method}) "
            "places each original value in a box around its published value, and uses the "
            "additivity of the original table to narrow the boxes (interval attack, one LP "
            "per bound). Cells pinned to one value are exact; cells whose range is narrower "
            f"than {self.min_width:g} are narrow.")
        section.add_metrics({"verdict": self.status, "cells": len(self.frame),
                             "narrowed by additivity":
                             self.n_tightened, "narrow": self.n_narrow, "exact": self.n_exact})
        if self.n_exact or self.n_narrow:
            section.add_table(self.flagged(), "Exact or narrow cells", max_html_rows=500)
        return section


def audit_rounding(
    table: Table,
    rounded: np.ndarray,
    base: int,
    method: str,
    *,
    min_width: float | None = None,
    integer: bool | None = None,
    integer_bounds: bool = False,
    extra_steps: int = 0,
    solver: str = "highs",
    time_limit: float | None = None,
) -> RoundingAudit:
    """Ranges of every original value given a rounded release (module docstring).

    Parameters
    ----------
    table : Table
        The original table (its relations, a-priori bounds ``lb``/``ub`` and values).
    rounded : ndarray
        The published values, in cell order.
    base : int
    method : str
        The rounding method, known to the intruder.
    min_width : float, optional
        Ranges narrower than this are flagged (default: ``B - 1`` for integer data, ``B``
        otherwise; module docstring).
    integer : bool, optional
        Whether the original values are integers (default: detected from the table).
    integer_bounds : bool
        Bound by MILP over integer points instead of rounding the LP bounds inwards.
    extra_steps : int
        Largest extra step of a non-adjacent rounding (see :func:`release_box`).
    solver, time_limit
        Of the interval attack: the LP solver, and total seconds for every bound together
        (ranges not reached are left uncomputed: ``status`` is then ``"time-limited"``).

    Returns
    -------
    RoundingAudit

    Raises
    ------
    InputError
        ``rounded`` of the wrong length, or a non-positive ``min_width``.

    Examples
    --------
    The table 1 = 1 + 0 rounded 50/50 to base 2 (cell by cell, not additive) as 0, 2, 0:
    the boxes are 0..1, 1..3 and 0..1, and additivity pins every cell down.

    >>> import pandas as pd
    >>> t = Table.from_aggregated(pd.DataFrame({"c": ["a", "b"], "value": [1.0, 0.0]}), ["c"])
    >>> audit = audit_rounding(t, np.array([0.0, 2.0, 0.0]), 2, "fifty-fifty")
    >>> audit.frame[["lower", "upper"]].values.tolist(), audit.n_exact
    ([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]], 3)
    """
    from time import perf_counter

    start = perf_counter()
    R = np.asarray(rounded, dtype=float)
    if R.shape != (table.n_cells,):
        raise InputError(f"rounded has shape {R.shape}, the table has {table.n_cells} cells")
    values = table.values
    if integer is None:
        integer = bool(np.all(values == np.round(values)))
    if min_width is None:
        min_width = base - 1 if integer else base
    min_width = float(min_width)
    if not min_width > 0:
        raise InputError(f"min_width must be positive, got {min_width}")
    box_lower, box_upper = release_box(R, base, method, integer, extra_steps)
    lb = np.maximum(box_lower, table.cells["lb"].to_numpy(dtype=float))
    ub = np.minimum(box_upper, table.cells["ub"].to_numpy(dtype=float))
    if integer:  # (+ 0.0 turns the -0.0 of ceil(-tol) into 0.0)
        lb, ub = np.ceil(lb - BOUND_TOL) + 0.0, np.floor(ub + BOUND_TOL) + 0.0
    hidden = np.ones(table.n_cells, dtype=bool)
    attack = IntervalAttack(table.A, table.b, R, hidden, lb, ub, integer=integer_bounds,
                            solver=solver, time_limit=time_limit)
    intervals = attack.intervals()
    lower, upper = intervals.lower, intervals.upper
    if integer:
        lower, upper = np.ceil(lower - BOUND_TOL) + 0.0, np.floor(upper + BOUND_TOL) + 0.0
    width = upper - lower
    frame = pd.DataFrame({
        "value": values, "rounded": R, "box_lower": lb, "box_upper": ub,
        "lower": lower, "upper": upper, "width": width,
        "exact": width <= BOUND_TOL * np.maximum(1.0, np.abs(values)),
        "narrow": width < min_width - BOUND_TOL,
    }, index=table.cells.index)
    return RoundingAudit(frame, base, method, min_width, integer, intervals.n_solves,
                         perf_counter() - start)
