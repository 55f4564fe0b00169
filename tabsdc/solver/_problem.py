"""An LP/MILP held as arrays, and the result every backend returns for it.

The problem is

    min (or max)  c @ x + offset
    subject to    row_lower <= A @ x <= row_upper
                  col_lower <=   x   <= col_upper
                  x_j integer for every j with integrality[j]

with ``A`` a :mod:`scipy.sparse` matrix. Infinite bounds are ``-inf`` / ``+inf``; an equality
row has ``row_lower == row_upper``; a row with both bounds infinite is free. A binary variable
is an integer variable with bounds 0 and 1.

Status of a solve (:attr:`SolveResult.status`), one of :data:`STATUSES`:

``"optimal"``
    proven optimal: an LP solved to optimality, or a MIP whose best bound meets the incumbent
    within the solvers' default termination tolerances (an absolute gap of
    :data:`PROOF_ABS_GAP` or a relative gap of :data:`PROOF_REL_GAP`). Only this status sets
    ``optimal=True``.
``"feasible"``
    stopped with a feasible solution that is not proven optimal: time, iteration or node
    limit, or a MIP stopped at the relative gap target the caller asked for.
``"infeasible"``, ``"unbounded"``, ``"infeasible_or_unbounded"``
    proven properties of the problem (the last when the solver could not tell which).
``"no_solution"``
    stopped by a limit before any feasible solution was found.
``"error"``
    the solver failed (numerical trouble, a solver error, a missing executable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._statuses import SolveStatus
from tabsdc._errors import InputError, SolverError
from tabsdc.solver._checks import as_csr, as_vector, check_bounds, check_finite

if TYPE_CHECKING:
    from sdcreport import Section

#: Every value :attr:`SolveResult.status` can take (the words of
#: :class:`~sdcreport._statuses.SolveStatus`).
STATUSES = tuple(map(str, SolveStatus))

#: A MIP is proven optimal when ``|objective - bound|`` is at most this (HiGHS's default
#: ``mip_abs_gap``) ...
PROOF_ABS_GAP = 1e-6
#: ... or the relative gap is at most this; a larger gap means the solve stopped early.
PROOF_REL_GAP = 1e-9


def relative_gap(objective: float, bound: float) -> float:
    """Relative MIP gap ``|objective - bound| / |objective|`` (HiGHS's and Gurobi's convention).

    Parameters
    ----------
    objective : float
        Objective value of the incumbent (primal bound).
    bound : float
        Best proven (dual) bound.

    Returns
    -------
    float
        The gap; 0 when both are 0 and ``inf`` when only the objective is 0.

    Examples
    --------
    >>> relative_gap(200.0, 190.0)
    0.05
    """
    difference = abs(objective - bound)
    if difference == 0.0:
        return 0.0
    return difference / abs(objective) if objective != 0.0 else float("inf")


@dataclass(frozen=True, eq=False)
class LinearProgram:
    """A linear or mixed-integer linear program in matrix form.

    All arrays are copied (and ``A`` converted once to a canonical CSR array) when the problem
    is made, so later changes to the caller's arrays do not reach it and the problem never
    changes the caller's arrays.

    Parameters
    ----------
    c : array-like, shape (n,)
        Objective coefficients.
    A : scipy.sparse matrix or array (any format) or 2-D array-like, shape (m, n)
        Constraint matrix; stored as ``scipy.sparse.csr_array`` of float64 with sorted
        indices, duplicates summed and explicit zeros removed.
    row_lower, row_upper : array-like, shape (m,)
        Row bounds; ``-inf`` / ``+inf`` for a missing side.
    col_lower, col_upper : array-like, shape (n,)
        Column (variable) bounds; ``-inf`` / ``+inf`` for a missing side.
    integrality : array-like of bool, shape (n,), optional
        True marks an integer variable. None: all continuous.
    sense : {"min", "max"}
        Direction of optimisation.
    offset : float
        Constant added to the objective.

    Raises
    ------
    InputError
        An array of the wrong shape (the message names it and gives both shapes), a NaN, an
        infinite objective coefficient or matrix entry, a lower bound of ``+inf`` or an upper
        bound of ``-inf``, a lower bound above its upper bound (naming the first index), a
        problem with no columns, or an unknown ``sense``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> lp = LinearProgram(c=[3, 5], A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
    ...                    row_lower=[-np.inf] * 3, row_upper=[4, 12, 18],
    ...                    col_lower=[0, 0], col_upper=[np.inf, np.inf], sense="max")
    >>> lp.n_rows, lp.n_cols, lp.is_mip
    (3, 2, False)
    """

    c: np.ndarray
    A: sp.csr_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray | None = None
    sense: Literal["min", "max"] = "min"
    offset: float = 0.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.sense not in ("min", "max"):
            raise InputError(f"sense must be 'min' or 'max', got {self.sense!r}")
        A = as_csr("A", self.A)
        m, n = A.shape
        if n == 0:
            raise InputError(f"A has shape {A.shape}: the problem has no columns")
        set_(self, "A", A)
        rows, columns = f"A has {m} rows", f"A has {n} columns"
        set_(self, "c", as_vector("c", self.c, n, columns))
        check_finite("c", self.c)
        for name, length, what in (
            ("row_lower", m, rows),
            ("row_upper", m, rows),
            ("col_lower", n, columns),
            ("col_upper", n, columns),
        ):
            set_(self, name, as_vector(name, getattr(self, name), length, what))
        check_bounds("row_lower", self.row_lower, "row_upper", self.row_upper)
        check_bounds("col_lower", self.col_lower, "col_upper", self.col_upper)
        if self.integrality is not None:
            integrality = np.array(self.integrality)
            if integrality.shape != (n,):
                raise InputError(
                    f"integrality has shape {integrality.shape}, expected ({n},) ({columns})"
                )
            if integrality.dtype != np.bool_:
                raise InputError(f"integrality must be boolean, got dtype {integrality.dtype}")
            integrality.flags.writeable = False
            set_(self, "integrality", integrality)
        offset = float(self.offset)
        if not np.isfinite(offset):
            raise InputError(f"offset = {offset} is not finite")
        set_(self, "offset", offset)

    @property
    def n_rows(self) -> int:
        """Number of constraint rows m."""
        return self.A.shape[0]

    @property
    def n_cols(self) -> int:
        """Number of variables n."""
        return self.A.shape[1]

    @property
    def is_mip(self) -> bool:
        """True when at least one variable is integer."""
        return self.integrality is not None and bool(self.integrality.any())

    def objective_value(self, x: np.ndarray) -> float:
        """Objective ``c @ x + offset`` at a point ``x`` (in the problem's own sense)."""
        return float(self.c @ x) + self.offset


@dataclass(frozen=True, eq=False)
class SolveResult(ResultBase):
    """What a backend reports for one solve.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES` (see the module docstring for their meaning).
    optimal : bool
        True exactly when ``status == "optimal"``.
    objective : float or None
        Objective of the returned solution including the offset, in the problem's own sense;
        None without a solution.
    bound : float or None
        Best proven bound on the optimum (the dual bound: a lower bound for "min", an upper
        bound for "max"). An LP solved to optimality has ``bound == objective``; a MIP has
        the solver's dual bound (HiGHS), or ``objective`` when proven optimal by a solver
        that reports no bound (PuLP's solvers). None when no bound is known (PuLP's solvers
        for a MIP not proven optimal, an LP not solved to optimality, an infeasible problem).
    gap : float or None
        Relative gap ``|objective - bound| / |objective|`` (:func:`relative_gap`): 0 for an
        optimal LP, at most the proof tolerances for a proven optimal MIP; None when
        ``bound`` or ``objective`` is None.
    x : numpy.ndarray or None
        Values of the variables, shape (n,); None without a feasible solution.
    row_duals : numpy.ndarray or None
        LP only: ``d objective / d (active row bound)`` for each row, in the problem's own
        sense (HiGHS's convention; a "min" problem has ``y >= 0`` on a binding lower bound and
        ``y <= 0`` on a binding upper bound). None for a MIP or an LP not solved to optimality.
    col_duals : numpy.ndarray or None
        LP only: reduced costs ``c - A.T @ row_duals``.
    seconds : float
        Wall-clock seconds of the solve.
    solver : str
        Short name of the solver (see :func:`tabsdc.solver.available_solvers`).
    message : str
        The solver's own status text, with a note where the status was derived from it.
    iterations : int or None
        LP iterations, when the solver reports them.
    nodes : int or None
        Branch-and-bound nodes, when the solver reports them.
    """

    status: str
    optimal: bool
    objective: float | None
    bound: float | None
    gap: float | None
    x: np.ndarray | None
    row_duals: np.ndarray | None
    col_duals: np.ndarray | None
    seconds: float
    solver: str
    message: str
    iterations: int | None = None
    nodes: int | None = None

    statuses = SolveStatus

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")
        super().__post_init__()
        if self.optimal != (self.status == "optimal"):
            raise ValueError(f"optimal={self.optimal} contradicts status {self.status!r}")

    @classmethod
    def without_solution(cls, status: str, seconds: float, solver: str,
                         message: str) -> SolveResult:
        """A result that carries no solution, bound or duals (e.g. infeasible, error)."""
        return cls(status, False, None, None, None, None, None, None, seconds, solver, message)

    @property
    def has_solution(self) -> bool:
        """True when a feasible solution ``x`` was returned."""
        return self.x is not None

    def require_solution(self) -> SolveResult:
        """Return ``self`` if it holds a solution, else raise.

        Raises
        ------
        SolverError
            The solve ended without a feasible solution; the message gives the solver, the
            status and the solver's own text.
        """
        if self.x is None:
            raise SolverError(
                f"solver {self.solver!r} returned no solution: status {self.status!r} "
                f"({self.message})"
            )
        return self

    def _metrics(self) -> dict[str, object]:
        return {
            "solver": self.solver,
            "status": self.status,
            "optimal": self.optimal,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "time [s]": round(self.seconds, 4),
            "iterations": self.iterations,
            "nodes": self.nodes,
        }

    def summary(self) -> str:
        """A few lines: solver, status, objective, bound, gap, time and the solver's text."""
        lines = [f"Solve with {self.solver}: {self.status} ({self.message})"]
        for name, value in self._metrics().items():
            if name not in ("solver", "status") and value is not None:
                lines.append(f"  {name:<11} {value}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """The solution: one row per variable with its value and, for an LP, reduced cost."""
        if self.x is None:
            return pd.DataFrame({"x": pd.Series(dtype=float)}).rename_axis("column")
        frame = pd.DataFrame({"x": self.x})
        if self.col_duals is not None:
            frame["reduced_cost"] = self.col_duals
        return frame.rename_axis("column")

    def _dict_fields(self) -> dict[str, Any]:
        """The key figures as plain JSON values (``optimal``, ``objective``,
        ``bound``, ``gap``, ...; the solution itself is in :meth:`to_frame`)."""
        from sdcreport._report import jsonable

        return jsonable({"optimal": self.optimal,
                         "objective": self.objective, "bound": self.bound, "gap": self.gap,
                         "solver": self.solver,
                         "message": self.message, "iterations": self.iterations,
                         "nodes": self.nodes})

    def to_report(self) -> Section:
        """A report section with the key figures of the solve."""
        from sdcreport import Section

        return (
            Section(f"Solve ({self.solver})")
            .add_text(f"Status {self.status}: {self.message}.")
            .add_metrics({k: v for k, v in self._metrics().items() if v is not None})
        )
