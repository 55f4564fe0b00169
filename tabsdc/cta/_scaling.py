"""Solve CTA in units where the solver's tolerances mean what they say.

HiGHS judges feasibility and optimality by *absolute* tolerances (``1e-7`` on row
residuals and reduced costs, ``1e-6`` on integrality and on the MIP gap). A table of values
near ``1e7`` with inverse costs has costs near ``1e-7`` per unit: every reduced cost is
"zero", so any basis looks optimal and any branch-and-bound node looks pruned; its big-M rows
(``p <= m I`` with ``m`` the sum of all protection levels) let ``1e-6 m`` leak through an
indicator that is "zero". The same table in units of ``1e-7`` is solved correctly.

:class:`Scaling` therefore solves the problem in units chosen from the problem itself,

    y = V y',        w = W w',        so that   f(y) = W V^p f'(y')
                                                 (p = 1 for L1, p = 2 for L2),

with ``V`` the typical protection level and ``W`` the typical cost of a sensitive cell,
each rounded to a power of two (multiplying by it is exact in floating point, so the scaled
model is the original one to the last bit, only in other units). The solution is brought
back (``y = V y'``), its objective recomputed from the original data, each bound multiplied
by ``W V^p``, and the status re-decided in the original units by
:func:`~tabsdc.cta._solution.certify`, which also discards any bound above the verified
objective (a bound that a feasible adjustment contradicts is false, whatever the solver
said).

Scaling a table by ``10^k`` (values, bounds, protection levels) thus gives the same scaled
model up to a factor in ``[1/sqrt(2), sqrt(2)]``: the adjustment scales with the table and
its cost with ``10^k`` (cost ``"count"``) or not at all (inverse costs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tabsdc.cta._problem import CTAProblem, QuadraticLimit
from tabsdc.cta._solution import CTASolution, certify

#: Entries of :attr:`CTASolution.details` that are objective values or bounds in the units of
#: the solved model (multiplied back by :meth:`Scaling.objective_factor`).
OBJECTIVE_DETAILS = ("milp_objective", "milp_bound", "lp_relaxation_bound",
                     "lp_relaxation_objective", "lagrangian_bound",
                     "relaxation_bound", "initial_objective", "search_objective", "mass_bound")


def _power_of_two(x: np.ndarray) -> float:
    """``2**round(log2(median(x)))`` over the positive finite entries of ``x`` (1 if none)."""
    x = x[np.isfinite(x) & (x > 0)]
    if x.size == 0:
        return 1.0
    return float(np.ldexp(1.0, int(np.round(np.log2(np.median(x))))))


@dataclass(frozen=True)
class Scaling:
    """Units of value ``V`` and of cost ``W`` (powers of two); see the module docstring.

    Examples
    --------
    One relation ``y_0 = y_1 + y_2`` with values near ``1e8``, cell 1 sensitive with levels
    ``2e7``, inverse costs: in the scaled problem its level and its cost are near 1.

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> from tabsdc.cta._problem import build_problem
    >>> cells = pd.DataFrame({"value": [10e7, 4e7, 6e7], "status": ["s", "u", "s"],
    ...                       "lpl": [0, 2e7, 0], "upl": [0, 2e7, 0]})
    >>> problem = build_problem(Table(cells, [[-1, 1, 1]], [0]), "inverse")
    >>> scaling = Scaling.of(problem)
    >>> scaled = scaling.apply(problem)
    >>> float(scaled.upl[0]), float(scaled.cost[1])
    (1.1920928955078125, 0.8388608)
    >>> scaling.objective_factor("l1") == scaling.value * scaling.cost
    True
    """

    value: float
    cost: float

    @classmethod
    def of(cls, problem: CTAProblem) -> Scaling:
        """``V`` from the protection levels, ``W`` from the costs of the sensitive cells
        (every cost when those are all zero)."""
        levels = np.maximum(problem.upl, problem.lpl)
        costs = problem.cost[problem.sensitive]
        if not np.any(costs > 0):
            costs = problem.cost
        return cls(value=_power_of_two(levels), cost=_power_of_two(costs))

    def objective_factor(self, kind: str) -> float:
        """``W V`` (``kind="l1"``) or ``W V**2`` (``"l2"``): original over scaled objective."""
        return self.cost * self.value ** (1 if kind == "l1" else 2)

    def apply(self, problem: CTAProblem) -> CTAProblem:
        """The problem in the scaled units (relations and extra rows are homogeneous in
        ``y`` and stay as they are)."""
        v = self.value
        quadratic = tuple(QuadraticLimit(q.name, q.cells, q.limit / v**2)
                          for q in problem.quadratic)
        return replace(problem, values=problem.values / v, cost=problem.cost / self.cost,
                       down=problem.down / v, up=problem.up / v, lpl=problem.lpl / v,
                       upl=problem.upl / v, quadratic=quadratic)

    def restore(self, solution: CTASolution, problem: CTAProblem, kind: str) -> CTASolution:
        """The solution of the scaled problem in the units of ``problem``, re-certified.

        The adjustment is multiplied by ``V``, its objective recomputed on ``problem``, the
        bounds multiplied by :meth:`objective_factor` and the status decided again by
        :func:`~tabsdc.cta._solution.certify` (absolute tolerances in the scaled units).
        """
        factor = self.objective_factor(kind)
        y = solution.y * self.value
        objective = problem.objective(y, kind)
        claimed = None if solution.bound is None else solution.bound * factor
        bound, gap, status = certify(objective, [claimed], scale=factor)
        details = {key: (value * factor if key in OBJECTIVE_DETAILS and value is not None
                         else value) for key, value in solution.details.items()}
        details["units"] = {"value": self.value, "cost": self.cost}
        message = solution.message
        if claimed is not None and bound is None:
            message += (f"; the solver's bound {claimed:.6g} exceeds the verified objective "
                        f"{objective:.6g} and was discarded")
        return replace(solution, y=y, objective=objective, bound=bound, status=status, gap=gap,
                       message=message, details=details)
