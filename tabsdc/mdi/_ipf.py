"""Iterative proportional fitting (IPF) with fixed cells, vectorised over blocks of margins.

Among all non-negative tables ``x`` with given margins ``G x = t`` and some cells fixed, the
one closest to a starting table ``p`` in minimum discrimination information,
``sum x log(x / p)``, is the limit of IPF started at ``p`` (Ireland and Kullback 1968;
Bishop, Fienberg and Holland 1975, ch. 3): each margin ``k`` in turn is matched by scaling
the free cells it covers,

    x_j <- x_j (t_k - sum_{fixed j in k} x_j) / (sum_{free j in k} x_j),

and the sweeps repeat until every margin holds. Margins are processed in blocks of margins
with disjoint cells (all row totals, then all column totals, ...), so one sweep is a few
sparse matrix products. Fixed cells are never scaled; a margin whose fixed cells exceed it,
or that needs mass where all its free cells are zero, cannot be met (:class:`FitError`).
Zero cells stay zero: IPF only scales.

References
----------
Ireland, C. T. and Kullback, S. "Contingency tables with given marginals", *Biometrika* 55,
179-188, 1968.
Bishop, Y. M. M., Fienberg, S. E. and Holland, P. W. *Discrete Multivariate Analysis*, MIT
Press, 1975.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._statuses import FitStatus
from tabsdc._errors import InputError

if TYPE_CHECKING:
    from sdcreport import Section

#: IPF gives up when ``STALL_SWEEPS`` sweeps do not reduce the largest margin residual below
#: ``STALL_FACTOR`` times its value (margins that fixed cells and zeros make inconsistent:
#: the sweeps then oscillate instead of converging).
STALL_SWEEPS = 50
STALL_FACTOR = 0.9


class FitError(InputError):
    """The margins cannot be met with the fixed cells (names the margin)."""


@dataclass(frozen=True)
class IPFResult(ResultBase):
    """Outcome of :func:`ipf`; keeps the result contract of :mod:`sdcreport._contract`.

    Attributes
    ----------
    fitted : ndarray
        The fitted cell values.
    sweeps : int
        Sweeps over all margins.
    max_residual : float
        ``max |G x - t| / max(1, |t|)`` at the end.
    converged : bool
        ``max_residual <= tol``.
    seconds : float
        Time taken.
    """

    fitted: np.ndarray
    sweeps: int
    max_residual: float
    converged: bool
    seconds: float = 0.0

    statuses = FitStatus

    @property
    def status(self) -> FitStatus:
        """``"converged"`` (every margin within the tolerance) or ``"not converged"``
        (stopped at ``max_sweeps`` or stalled)."""
        return FitStatus.CONVERGED if self.converged else FitStatus.NOT_CONVERGED

    def summary(self) -> str:
        """One line: status, sweeps, largest margin residual, time."""
        return (f"IPF: {self.status} after {self.sweeps} sweeps, largest relative margin "
                f"residual {self.max_residual:.2e}, {len(self.fitted)} cells, "
                f"{self.seconds:.2f} s")

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: the fitted value."""
        return pd.DataFrame({"fitted": self.fitted}).rename_axis("cell")

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: ``sweeps``, ``max_residual``, ``converged``
        and the ``fitted`` values."""
        from sdcreport._report import jsonable

        return jsonable({"sweeps": self.sweeps,
                         "max_residual": self.max_residual, "converged": self.converged,
                         "fitted": self.fitted})

    def to_report(self) -> Section:
        """A report section with the key figures."""
        from sdcreport import Section

        return (Section("Iterative proportional fitting")
                .add_text("The table closest to the starting table in discrimination "
                          "information among those with the given margins and fixed cells "
                          "(Ireland and Kullback 1968).")
                .add_metrics({"status": self.status, "sweeps": self.sweeps,
                              "largest relative margin residual": self.max_residual,
                              "cells": len(self.fitted), "seconds": round(self.seconds, 3)}))


def _disjoint_blocks(margins: sp.csr_array) -> list[np.ndarray]:
    """Split margin rows into blocks whose rows share no cell (largest rows first)."""
    sizes = np.diff(margins.indptr)
    blocks: list[list[int]] = []
    covered: list[np.ndarray] = []
    for row in np.argsort(-sizes, kind="stable"):
        cells = margins.indices[margins.indptr[row]:margins.indptr[row + 1]]
        for block, mask in zip(blocks, covered, strict=True):
            if not mask[cells].any():
                block.append(int(row))
                mask[cells] = True
                break
        else:
            mask = np.zeros(margins.shape[1], dtype=bool)
            mask[cells] = True
            blocks.append([int(row)])
            covered.append(mask)
    return [np.array(sorted(b)) for b in blocks]


def ipf(
    start: np.ndarray,
    margins: sp.sparray,
    targets: np.ndarray,
    fixed: np.ndarray | None = None,
    *,
    tol: float = 1e-10,
    max_sweeps: int = 10_000,
    labels: Sequence[str] | None = None,
) -> IPFResult:
    """Fit ``start`` to the margins ``margins @ x = targets``, fixed cells held.

    Parameters
    ----------
    start : ndarray, shape (c,)
        Starting table (non-negative; fixed cells already at their fixed values).
    margins : sparse matrix, shape (k, c)
        0/1 rows: which cells each margin sums.
    targets : ndarray, shape (k,)
        The margin values.
    fixed : ndarray of bool, shape (c,), optional
        Cells never scaled.
    tol : float
        Relative tolerance on every margin.
    max_sweeps : int
        Sweeps at most (IPF also stops when it stalls, see :data:`STALL_SWEEPS`).
    labels : sequence of str, optional
        Names of the margins, for error messages.

    Returns
    -------
    IPFResult

    Raises
    ------
    FitError
        A margin smaller than its fixed cells, or one needing mass where every free cell is
        zero (named).
    InputError
        Negative starting values or targets, margins with entries other than 0/1, shape mismatch.

    Examples
    --------
    The classical 2 x 2 fit to row totals (3, 7) and column totals (4, 6):

    >>> import numpy as np, scipy.sparse as sp
    >>> G = sp.csr_array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
    >>> result = ipf(np.ones(4), G, np.array([3.0, 7.0, 4.0, 6.0]))
    >>> np.round(result.fitted, 6).tolist(), result.converged
    ([1.2, 1.8, 2.8, 4.2], True)
    """
    begin = perf_counter()
    x = np.array(start, dtype=float)
    margins = sp.csr_array(margins, dtype=float)
    targets = np.asarray(targets, dtype=float)
    if margins.shape != (len(targets), len(x)):
        raise InputError(f"margins have shape {margins.shape}, expected ({len(targets)}, "
                         f"{len(x)})")
    if (x < 0).any() or (targets < 0).any():
        raise InputError("IPF needs non-negative cells and margins")
    if margins.nnz and not np.all(margins.data == 1.0):
        raise InputError("margin rows must be 0/1 (each margin sums cells once)")
    fixed = np.zeros(len(x), dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    free = (~fixed).astype(float)
    names = labels if labels is not None else [f"margin {k}" for k in range(len(targets))]
    left = targets - margins @ (x * ~free.astype(bool))
    scale = np.maximum(1.0, np.abs(targets))
    short = np.flatnonzero(left < -tol * scale)
    if short.size:
        k = short[0]
        raise FitError(f"{names[k]} = {targets[k]:g} is smaller than its fixed cells "
                       f"({targets[k] - left[k]:g})")
    left = np.maximum(left, 0.0)
    blocks = [(b, sp.csr_array(margins[b])) for b in _disjoint_blocks(margins)]
    residual = checkpoint = np.inf
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        for rows, block in blocks:
            current = block @ (x * free)
            want = left[rows]
            empty = current <= 0
            impossible = np.flatnonzero(empty & (want > tol * scale[rows]))
            if impossible.size:
                k = rows[impossible[0]]
                raise FitError(f"{names[k]} needs {want[impossible[0]]:g} more but all its "
                               "free cells are zero")
            factor = np.where(empty, 1.0, want / np.where(empty, 1.0, current))
            x *= 1.0 + free * (block.T @ (factor - 1.0))
        residual = float(np.max(np.abs(margins @ x - targets) / scale)) if len(targets) else 0.0
        if residual <= tol:
            break
        if sweeps % STALL_SWEEPS == 0:
            if residual > STALL_FACTOR * checkpoint:
                break
            checkpoint = residual
    return IPFResult(fitted=x, sweeps=sweeps, max_residual=residual, converged=residual <= tol,
                     seconds=perf_counter() - begin)


