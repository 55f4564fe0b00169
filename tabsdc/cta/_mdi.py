"""MDI-CTA: safe values for the sensitive cells, iterative proportional fitting for the rest.

Cox, Orelien and Shah (2006); Cox, *Towards a quality assessment of disclosure-limited
statistical data*, slides 29-30. Each sensitive cell is held at a safe value ``a - lpl`` or
``a + upl`` (a sensitive total: its margin is held there); conditional on that choice and the
minimal sufficient statistics (the margins kept, :func:`~tabsdc.mdi._margins.margin_mask`),
IPF (:func:`~tabsdc.mdi._ipf.ipf`) gives the table of minimal MDI. The slides' heuristic then
updates the choice: a local search flips one safe value at a time (in random order) and keeps
a flip that lowers the MDI statistic, stopping as soon as it is statistically insignificant
(chi-square p-value ``>= alpha``, :mod:`tabsdc.mdi._statistic`) or when no flip improves.
The first choice balances the net change of each margin (greedy, random order).

Properties (slide 30), stated in every report: additivity is kept (totals are recomputed from
the fitted interior cells, and the kept margins equal the original ones); structural zeros
are exempt from adjustment, but so is every non-structural zero: a cell that is zero stays
zero (IPF only scales); and there is no control on the size of local changes: a
non-sensitive cell moves by whatever the margins demand.

References
----------
Cox, L. H., Orelien, J. G. and Shah, B. V. "A method for preserving statistical distributions
subject to controlled tabular adjustment", *PSD 2006*, LNCS 4302, 1-11.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError
from tabsdc.cta._problem import cell_mask, sensitive_mask
from tabsdc.cta._result import AdjustmentResult
from tabsdc.mdi._ipf import FitError, ipf
from tabsdc.mdi._margins import aggregation_matrix, margin_mask
from tabsdc.mdi._statistic import constraint_degrees_of_freedom, mdi_p_value, mdi_statistic

if TYPE_CHECKING:
    from tabsdc._table import Table

#: What MDI-CTA does and does not control (Cox, slide 30); reports print it.
MDI_PROPERTIES = (
    "MDI-CTA keeps additivity and the chosen marginal totals (minimal sufficient statistics) "
    "exactly, and stays as close as possible to the original distribution (minimum "
    "discrimination information). Structural zeros are exempt from adjustment, but so is "
    "every other zero: a zero cell stays zero, because iterative proportional fitting only "
    "scales cells. There is no control on the extent of local changes: a non-sensitive cell "
    "moves by whatever the margins require."
)


@dataclass
class _Setup:
    """The fitting problem of a table: interior cells, margins and the sensitive choices."""

    table: Table
    interior: np.ndarray
    totals: np.ndarray
    G: sp.csr_array
    mss: np.ndarray          # rows of G that are kept at original values
    moved_rows: np.ndarray   # rows of G that are sensitive totals
    kept_fixed: np.ndarray   # interior mask fixed at original values
    user_fixed: np.ndarray   # cells the user fixed (mask over all cells)
    sens_cells: np.ndarray   # interior positions (index into interior) of sensitive cells
    units_value: np.ndarray  # original value of each sensitive unit (cells, then totals)
    lpl: np.ndarray
    upl: np.ndarray
    can_up: np.ndarray
    can_down: np.ndarray
    labels: list[str]


def _setup(table: Table, margins: object, fixed: object) -> _Setup:
    cells = table.cells
    interior, totals, G = aggregation_matrix(table)
    a = table.values
    if (a < 0).any():
        first = np.flatnonzero(a < 0)[0]
        raise InputError(f"MDI-CTA needs non-negative values; {table.cell_labels([first])[0]} "
                         f"is {a[first]:g}")
    status = cells["status"].to_numpy()
    lpl_all = np.maximum(cells["lpl"].to_numpy(dtype=float), 0.0)
    upl_all = np.maximum(cells["upl"].to_numpy(dtype=float), 0.0)
    sensitive = sensitive_mask(table)
    in_mss = margin_mask(table, totals, margins)
    if margins is None:
        in_mss &= ~sensitive[totals]
    in_conflict = np.flatnonzero(sensitive[totals] & in_mss)
    if in_conflict.size:
        raise InputError(
            f"{table.cell_labels(totals[in_conflict[:1]])[0]} is a sensitive total but also a "
            "margin kept at its original value; leave it out of `margins` (MDI-CTA then holds "
            "it at a safe value) or use an L1 method"
        )
    user_fixed = cell_mask(table, fixed, "fixed")
    clash = np.flatnonzero(user_fixed & sensitive)
    if clash.size:
        raise InputError(f"{table.cell_labels(clash[:1])[0]} is sensitive and cannot be fixed")
    kept_fixed = ((status == "z") | user_fixed | (a == 0))[interior] & ~sensitive[interior]
    sens_cells = np.flatnonzero(sensitive[interior])
    moved_rows = np.flatnonzero(sensitive[totals])
    unit_positions = np.concatenate([interior[sens_cells], totals[moved_rows]])
    lb = cells["lb"].to_numpy(dtype=float)[unit_positions]
    ub = cells["ub"].to_numpy(dtype=float)[unit_positions]
    value = a[unit_positions]
    lpl, upl = lpl_all[unit_positions], upl_all[unit_positions]
    can_down = value - lpl >= np.maximum(lb, 0.0)
    can_up = value + upl <= ub
    stuck = np.flatnonzero(~can_up & ~can_down)
    if stuck.size:
        raise InputError(f"{table.cell_labels(unit_positions[stuck[:1]])[0]} cannot be "
                         "protected within its bounds")
    return _Setup(table, interior, totals, G, np.flatnonzero(in_mss), moved_rows, kept_fixed,
                  user_fixed, sens_cells, value, lpl, upl, can_up, can_down,
                  table.cell_labels(unit_positions))


class _Fitter:
    """IPF for one choice of directions; counts fits."""

    def __init__(self, setup: _Setup, tol: float) -> None:
        self.setup = setup
        self.tol = tol
        s = setup
        self.p = s.table.values[s.interior]
        self.rows = np.concatenate([s.mss, s.moved_rows])
        self.margins = sp.csr_array(s.G[self.rows])
        self.fixed = s.kept_fixed.copy()
        self.fixed[s.sens_cells] = True
        self.names = s.table.cell_labels(s.totals[self.rows])
        self.fits = 0

    def safe_values(self, up: np.ndarray) -> np.ndarray:
        s = self.setup
        return np.where(up, s.units_value + s.upl, s.units_value - s.lpl)

    def fit(self, up: np.ndarray) -> tuple[np.ndarray, float] | None:
        """Fitted interior and its MDI statistic, or None when the margins cannot be met."""
        s = self.setup
        self.fits += 1
        safe = self.safe_values(up)
        start = self.p.copy()
        start[s.sens_cells] = safe[: len(s.sens_cells)]
        targets = np.concatenate([s.table.values[s.totals[s.mss]], safe[len(s.sens_cells):]])
        try:
            result = ipf(start, self.margins, targets, self.fixed, tol=self.tol,
                         labels=self.names)
        except FitError:
            return None
        if not result.converged:
            return None
        return result.fitted, mdi_statistic(self.p, result.fitted)[1]


def _balanced_start(setup: _Setup, rng: np.random.Generator) -> np.ndarray:
    """Directions that keep the net change of each margin small (greedy, random order)."""
    s = setup
    units = len(s.units_value)
    up = np.where(s.can_up & s.can_down, rng.random(units) < 0.5, s.can_up)
    incidence = sp.csc_array(s.G[s.mss][:, s.sens_cells])
    net = np.zeros(len(s.mss))
    for i in rng.permutation(len(s.sens_cells)):
        rows = incidence.indices[incidence.indptr[i]:incidence.indptr[i + 1]]
        if s.can_up[i] and s.can_down[i]:
            up[i] = (np.abs(net[rows] + s.upl[i]).sum() < np.abs(net[rows] - s.lpl[i]).sum())
        net[rows] += s.upl[i] if up[i] else -s.lpl[i]
    return up


def mdi_cta(
    table: Table,
    *,
    margins: object = None,
    alpha: float = 0.05,
    fixed: object = None,
    seed: int | np.random.Generator | None = None,
    time_limit: float | None = None,
    max_passes: int = 20,
    tol: float = 1e-10,
) -> AdjustmentResult:
    """MDI-CTA: safe values for the sensitive cells, IPF for the rest (module docstring).

    Parameters
    ----------
    table : Table
        Non-negative values; relations of the form total = sum of parts.
    margins : None, "all", sequence of dimension sets, or boolean mask
        The minimal sufficient statistics kept at their original values: every total that
        is not sensitive (the default; sensitive totals are held at safe values), ``"all"``
        (an error if a total is sensitive), the totals over some dimensions only
        (``[("region",), ("activity",)]`` keeps the one-way margins, and everything they
        imply), or a mask over the cells.
    alpha : float
        Significance level of the chi-square test that ends the search.
    fixed : mask or labels, optional
        Further cells held at their original values.
    seed : int or numpy Generator, optional
        Order of the moves and the first choice of directions.
    time_limit : float, optional
        Seconds for the search (the best table so far is returned).
    max_passes : int
        Passes over the sensitive cells at most.
    tol : float
        Relative tolerance of IPF on every margin.

    Returns
    -------
    AdjustmentResult
        ``method="mdi"``; ``objective`` is the MDI statistic ``2 N I``; ``details`` hold the
        information ``I``, ``df``, the p-value, the stop reason and the counts of fits.

    Raises
    ------
    InputError
        Negative values, relations that are not totals of parts, a sensitive total kept as
        a margin, a sensitive cell that cannot be protected, or no choice of safe values
        that the margins admit.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": list("aabb"), "c": list("xyxy"),
    ...                       "value": [400.0, 600.0, 500.0, 500.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> status = ["s"] * 9; status[4] = "u"
    >>> t = t.with_columns(status=status, lpl=[0, 0, 0, 0, 20, 0, 0, 0, 0],
    ...                    upl=[0, 0, 0, 0, 20, 0, 0, 0, 0])
    >>> result = mdi_cta(t, seed=0)
    >>> result.verification.passed, result.details["stop"]
    (True, 'insignificant')
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    clock = time.perf_counter()
    rng = np.random.default_rng(seed)
    setup = _setup(table, margins, fixed)
    fitter = _Fitter(setup, tol)
    up = _balanced_start(setup, rng)
    best = fitter.fit(up)
    flippable = np.flatnonzero(setup.can_up & setup.can_down)
    if best is None:
        for i in rng.permutation(flippable):
            up[i] = ~up[i]
            best = fitter.fit(up)
            if best is not None:
                break
            up[i] = ~up[i]
    if best is None:
        raise InputError("no choice of safe values for the sensitive cells fits the margins "
                         "(try fewer margins, or an L1 method)")
    kept_fixed = setup.kept_fixed
    moved_cells = np.zeros(len(setup.interior), dtype=bool)
    moved_cells[setup.sens_cells] = True
    df, df_exact = constraint_degrees_of_freedom(
        sp.csr_array(setup.G[setup.mss]), sp.csr_array(setup.G[setup.moved_rows]),
        kept_fixed, moved_cells)
    start_statistic = best[1]
    stop, passes, moves = "no improving move", 0, 0

    def insignificant(statistic: float) -> bool:
        return mdi_p_value(statistic, df) >= alpha

    if insignificant(best[1]):
        stop = "insignificant"
    else:
        stop = "pass limit"
        while passes < max_passes:
            passes += 1
            improved = False
            for i in rng.permutation(flippable):
                if time_limit is not None and time.perf_counter() - clock > time_limit:
                    stop = "time limit"
                    break
                up[i] = ~up[i]
                trial = fitter.fit(up)
                if trial is not None and trial[1] < best[1] * (1 - 1e-12):
                    best, improved, moves = trial, True, moves + 1
                    if insignificant(best[1]):
                        stop = "insignificant"
                        break
                else:
                    up[i] = ~up[i]
            if stop in ("insignificant", "time limit"):
                break
            if not improved:
                stop = "no improving move"
                break
    fitted, statistic = best
    adjusted = table.values.copy()
    adjusted[setup.interior] = fitted
    adjusted[setup.totals] = setup.G @ fitted
    information = mdi_statistic(fitter.p, fitted)[0]
    p_value = mdi_p_value(statistic, df)
    details: dict[str, Any] = {
        "information": information, "statistic": statistic,
        "start_statistic": start_statistic, "df": df, "df_exact": df_exact,
        "p_value": p_value, "alpha": alpha, "significant": p_value < alpha, "stop": stop,
        "passes": passes, "moves": moves, "fits": fitter.fits,
        "margins": int(len(setup.mss)), "sensitive_totals": int(len(setup.moved_rows)),
        "properties": MDI_PROPERTIES,
    }
    sensitive = np.concatenate([setup.interior[setup.sens_cells], setup.totals[setup.moved_rows]])
    message = (f"MDI-CTA: IPF to {len(setup.mss)} margins, {moves} improving flips in "
               f"{fitter.fits} fits; stopped: {stop}")
    return AdjustmentResult.build(
        table, adjusted, method="mdi", status="feasible", objective=statistic, bound=None,
        gap=None, sensitive=sensitive, up=up, message=message,
        seconds=time.perf_counter() - clock, details=details,
        fixed=setup.user_fixed,
    )
