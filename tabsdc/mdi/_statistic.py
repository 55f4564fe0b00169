"""The MDI (Kullback-Leibler) discrimination between two tables and its chi-square test.

    I(Q : P) = sum_w Q(w) log(Q(w) / P(w))

over the cells, each table normalised to a distribution (Cox, *Towards a quality assessment
of disclosure-limited statistical data*, slide 29). ``2 N I(Q : P)`` (``N`` the adjusted
total) is, under the hypothesis that the original table satisfies the constraints of the fit,
asymptotically chi-square with degrees of freedom equal to the number of linearly
independent constraints the original table does not satisfy (Kullback 1959, ch. 8; Gokhale
and Kullback 1978): :func:`constraint_degrees_of_freedom` computes them exactly from ranks.
As in the slides, cell values are treated as counts; for magnitude data the statistic
depends on the unit of measurement.

References
----------
Kullback, S. *Information Theory and Statistics*, Wiley, 1959.
Gokhale, D. V. and Kullback, S. *The Information in Contingency Tables*, Dekker, 1978.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.stats import chi2

from tabsdc._errors import InputError

#: Constraint rows up to which the degrees of freedom are computed from exact ranks.
EXACT_RANK_ROWS = 4000


def mdi_statistic(original: np.ndarray, adjusted: np.ndarray) -> tuple[float, float]:
    """``I(Q : P)`` and ``2 N I(Q : P)`` of two non-negative tables (see the module docstring).

    Parameters
    ----------
    original, adjusted : ndarray
        Cell values ``P`` and ``Q`` (e.g. interior cells), normalised here; ``N`` is the sum
        of ``adjusted``.

    Returns
    -------
    information : float
        ``sum q log(q / p)`` over the normalised tables (0 log 0 = 0; ``inf`` where
        ``q > 0 = p``).
    statistic : float
        ``2 N information``.

    Raises
    ------
    InputError
        Negative values, or a table that sums to zero.

    Examples
    --------
    >>> information, statistic = mdi_statistic(np.array([10.0, 30.0]), np.array([20.0, 20.0]))
    >>> round(information, 6), round(statistic, 4)
    (0.143841, 11.5073)
    """
    p = np.asarray(original, dtype=float)
    q = np.asarray(adjusted, dtype=float)
    if (p < 0).any() or (q < 0).any():
        raise InputError("the MDI needs non-negative tables")
    if p.sum() <= 0 or q.sum() <= 0:
        raise InputError("the MDI needs tables with a positive total")
    total = q.sum()
    pn, qn = p / p.sum(), q / total
    positive = qn > 0
    if np.any(positive & (pn == 0)):
        return float("inf"), float("inf")
    information = float(np.sum(qn[positive] * np.log(qn[positive] / pn[positive])))
    information = max(information, 0.0)
    return information, float(2.0 * total * information)


def mdi_p_value(statistic: float, df: int) -> float:
    """Upper-tail chi-square probability of ``statistic`` with ``df`` degrees of freedom.

    With ``df = 0`` the constraints do not move the table: 1 when the statistic is 0.

    Examples
    --------
    >>> round(mdi_p_value(3.841458820694124, 1), 6)
    0.05
    """
    if df <= 0:
        return 1.0 if statistic <= 1e-12 else 0.0
    return float(chi2.sf(statistic, df))


def _rank(matrix: sp.csr_array) -> int:
    if matrix.shape[0] == 0 or matrix.nnz == 0:
        return 0
    gram = (matrix @ matrix.T).toarray()
    eig = np.linalg.eigvalsh(gram)
    return int(np.sum(eig > eig.max() * max(gram.shape) * 1e-12))


def constraint_degrees_of_freedom(
    margins: sp.csr_array, moved_margins: sp.csr_array, kept_fixed: np.ndarray,
    moved_cells: np.ndarray,
) -> tuple[int, bool]:
    """Independent constraints the original table does not satisfy (the test's df).

    Parameters
    ----------
    margins : csr, (k, c)
        MSS rows (hold in both tables).
    moved_margins : csr, (h, c)
        Rows of totals held at safe values.
    kept_fixed : ndarray of bool, (c,)
        Cells fixed at their original values (zeros, status ``z``, user-fixed).
    moved_cells : ndarray of bool, (c,)
        Cells fixed at safe values.

    Returns
    -------
    df : int
        ``|moved cells| + rank([G; H] on free cells) - rank(G on cells not kept fixed)``:
        fixing a set F of cells adds ``|F|`` to the rank, and eliminates their columns.
    exact : bool
        False when there are more than :data:`EXACT_RANK_ROWS` rows; ``df`` is then the
        number of moved cells and moved totals (an upper bound).
    """
    rows = margins.shape[0] + moved_margins.shape[0]
    moved = int(moved_cells.sum())
    if rows > EXACT_RANK_ROWS:
        return moved + moved_margins.shape[0], False
    free = ~(kept_fixed | moved_cells)
    all_rows = sp.csr_array(sp.vstack([margins, moved_margins], format="csr"))
    df = moved + _rank(all_rows[:, free]) - _rank(margins[:, ~kept_fixed])
    return int(df), True
