"""LP/MILP in matrix form and the backends that solve it.

A :class:`LinearProgram` holds the problem as arrays (objective, ``scipy.sparse`` constraint
matrix with row bounds, column bounds, integrality). :func:`solve` hands it to HiGHS
(``solver="highs"``, the default) or to any solver PuLP drives (``"cbc"``, ``"glpk"``,
``"cplex"``, ``"gurobi"``, ...; :func:`available_solvers` lists those present).
:class:`HighsModel` keeps a HiGHS model alive to re-solve it after changing the objective or
bounds or adding rows. Every solve returns a :class:`SolveResult`.
"""

from tabsdc.solver._backends import available_solvers, require_highs, solve
from tabsdc.solver._highs import HighsModel
from tabsdc.solver._options import SolveOptions
from tabsdc.solver._problem import STATUSES, LinearProgram, SolveResult

__all__ = [
    "LinearProgram",
    "SolveResult",
    "SolveOptions",
    "HighsModel",
    "solve",
    "available_solvers",
    "require_highs",
    "STATUSES",
]
