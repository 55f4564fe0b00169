"""What a CTA method hands back before it is checked and reported: the adjustment, its
directions, objective and certified bound; and the rule that decides "optimal"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tabsdc._errors import InputError
from tabsdc.solver._problem import PROOF_ABS_GAP, PROOF_REL_GAP, relative_gap

#: Largest relative excess of a lower bound over a verified objective still put down to the
#: solver's tolerances (more, and the bound is false).
BOUND_TOLERANCE = 1e-6


@dataclass
class CTASolution:
    """An adjustment found by one method.

    Attributes
    ----------
    y : ndarray, shape (n,)
        Adjustment of every cell (published value ``a + y``).
    up : ndarray of bool, shape (s,)
        Protection direction of each sensitive cell (True = up).
    objective : float
        The method's objective at ``y``.
    bound : float or None
        Best proven lower bound on the method's optimum (None when none is known).
    status : {"optimal", "feasible"}
        ``"optimal"`` only when ``bound`` proves it (see :func:`certify`).
    gap : float or None
        Certified relative gap ``(objective - bound) / objective``.
    message : str
        How the solution was found and stopped.
    details : dict
        Method-specific figures (solver times, bounds of each kind, moves tried, ...).
    interrupted : bool
        A Ctrl-C stopped the search (:mod:`tabsdc._interrupts`): the best adjustment found
        so far.
    """

    y: np.ndarray
    up: np.ndarray
    objective: float
    bound: float | None
    status: str
    gap: float | None
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False


def certify(objective: float, bounds: list[float | None], *, scale: float = 1.0
            ) -> tuple[float | None, float | None, str]:
    """The best of several lower bounds, the certified gap and the status it proves.

    ``objective`` is that of a verified adjustment, so a bound above it is false beyond the
    solver's tolerances: a bound exceeding it by more than :data:`BOUND_TOLERANCE`
    (relative) or ``PROOF_ABS_GAP * scale`` is discarded; one above it within them is
    lowered to it. The status is ``"optimal"`` exactly when the gap is within the proof
    tolerances of the solver layer (:data:`~tabsdc.solver._problem.PROOF_ABS_GAP` times
    ``scale``, :data:`~tabsdc.solver._problem.PROOF_REL_GAP`), i.e. when the bound proves
    that no better adjustment exists; else ``"feasible"``.

    Parameters
    ----------
    objective : float
    bounds : list of float or None
    scale : float
        Objective units of the solved model (:class:`~tabsdc.cta._scaling.Scaling`): the
        absolute tolerances apply in those units.

    Examples
    --------
    >>> bound, gap, status = certify(105.0, [104.6, None, 104.9])
    >>> bound, round(gap, 6), status
    (104.9, 0.000952, 'feasible')
    >>> certify(2.0, [2.0])
    (2.0, 0.0, 'optimal')

    A bound that the adjustment contradicts is no certificate:

    >>> certify(0.4625, [37.8])
    (None, None, 'feasible')
    """
    slack = max(PROOF_ABS_GAP * scale, BOUND_TOLERANCE * abs(objective))
    known = [b for b in bounds if b is not None and np.isfinite(b) and b <= objective + slack]
    if not known:
        return None, None, "feasible"
    bound = min(max(known), objective)
    gap = relative_gap(objective, bound)
    proven = objective - bound <= PROOF_ABS_GAP * scale or gap <= PROOF_REL_GAP
    return bound, gap, "optimal" if proven else "feasible"


def infeasible(proof: str) -> InputError:
    """The error for a CTA problem without any adjustment; ``proof`` says which model showed
    it (e.g. ``"the CTA MILP is infeasible"``)."""
    return InputError("no adjustment satisfies the relations, the fixed cells, the capacities "
                      f"and the preserved statistics together ({proof})")
