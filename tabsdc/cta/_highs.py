"""A kept HiGHS model with the extras CTA needs beyond :class:`~tabsdc.solver.HighsModel`
(whose MIP start and interior point switch it inherits).

* a diagonal Hessian, which turns the LP into the convex QP ``min c x + x' diag(h) x / 2``
  solved by HiGHS's QP solver (L2 CTA),
* an objective cutoff: the dual simplex stops as soon as its objective exceeds the cutoff, so
  a trial move that cannot beat the incumbent is rejected early (the result then carries no
  solution);
* a fresh start: basis cleared.
"""

from __future__ import annotations

import highspy
import numpy as np

from tabsdc._errors import InputError, SolverError
from tabsdc.solver import HighsModel


class CTAHighsModel(HighsModel):
    """:class:`~tabsdc.solver.HighsModel` with a diagonal Hessian, a cutoff and a basis reset.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from tabsdc.solver import LinearProgram
    >>> qp = LinearProgram(c=[0.0, 0.0], A=sp.csr_array([[1.0, 1.0]]), row_lower=[2.0],
    ...                    row_upper=[2.0], col_lower=[0, 0], col_upper=[np.inf, np.inf])
    >>> model = CTAHighsModel(qp)
    >>> model.set_hessian_diagonal(np.array([2.0, 6.0]))   # x0**2 + 3 x1**2
    >>> np.round(model.solve().x, 6).tolist()
    [1.5, 0.5]
    """

    def set_hessian_diagonal(self, diagonal: np.ndarray) -> None:
        """Make the objective ``c x + 0.5 x' diag(diagonal) x`` (diagonal >= 0)."""
        diagonal = np.ascontiguousarray(diagonal, dtype=np.float64)
        n = self.n_cols
        if diagonal.shape != (n,) or np.any(diagonal < 0) or not np.all(np.isfinite(diagonal)):
            raise InputError("the Hessian diagonal must be finite, non-negative, one per column")
        nonzero = np.flatnonzero(diagonal > 0).astype(np.int32)
        start = np.searchsorted(nonzero, np.arange(n + 1)).astype(np.int32)
        status = self._highs.passHessian(n, len(nonzero), int(highspy.HessianFormat.kTriangular),
                                         start, nonzero, diagonal[nonzero])
        if status == highspy.HighsStatus.kError:
            raise SolverError("HiGHS rejected the Hessian")

    def clear_basis(self) -> None:
        """Forget the basis and solution: the next solve starts afresh."""
        self._highs.clearSolver()

    def set_cutoff(self, value: float | None) -> None:
        """Stop the dual simplex once its objective exceeds ``value`` (None: no cutoff)."""
        self._highs.setOptionValue("objective_bound",
                                   highspy.kHighsInf if value is None else float(value))
