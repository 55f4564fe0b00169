"""Maximum-entropy transition probabilities: the convex problem behind a p-table row.

One row of a perturbation table (:mod:`tabsdc.ckm._ptable`) is the distribution ``p`` over the
noise values ``v`` of an original count that maximises the entropy ``-sum p log p`` subject to

* ``sum p = 1`` and ``sum v p = 0`` (unbiased noise),
* ``sum v^2 p <= V`` (``variance="at-most"``, ptable's ``optim = 1``) or ``= V``
  (``variance="exact"``, ptable's ``optim = 4``),
* ``p >= lower`` (``1e-8`` for every value, or ``pstay`` for ``v = 0``),
* optionally monotone on the left, ``p_k <= p_{k+1}`` for every ``v_k < 0`` (ptable's
  ``mono``: the probability grows towards ``v = 0``).

Source: S. Giessing (2016), *Computational issues in the design of transition probabilities
and disclosure risk estimation for additive noise*, PSD 2016, LNCS 9867, pp. 237-251; the
ptable package (T. Enderle, S. Giessing) states the same problem and solves it with SLSQP.

Here it is solved by a barrier method (Boyd and Vandenberghe, *Convex Optimization*,
section 11.3): a strictly feasible start from one linear program (phase I, HiGHS), then
Newton's method with the equality constraints on ``t f(p) - sum log(h - G p)`` for
``t = 1, 10, 100, ...`` until the duality gap ``m / t`` is below ``1e-13``. The problems are
tiny (at most ``2 D / step + 1`` values), so every Newton system is solved densely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from tabsdc._errors import InputError

#: Duality gap at which the barrier method stops.
GAP = 1e-13


@dataclass(frozen=True)
class EntropyProblem:
    """One row's problem: maximise ``-sum p log p`` under the constraints of the module text.

    Attributes
    ----------
    v : ndarray
        Noise values, increasing.
    variance : float
        ``V``.
    lower : ndarray
        Lower bound of each probability.
    exact_variance : bool
        ``sum v^2 p = V`` instead of ``<= V``.
    monotone : bool
        ``p_k <= p_{k+1}`` left of ``v = 0``.
    """

    v: np.ndarray
    variance: float
    lower: np.ndarray
    exact_variance: bool = False
    monotone: bool = True

    def constraints(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``E p = e`` and ``G p <= h`` as dense arrays."""
        v, n = self.v, len(self.v)
        rows_e, rhs_e = [np.ones(n), v], [1.0, 0.0]
        rows_g, rhs_g = [], []
        if self.exact_variance:
            rows_e.append(v**2)
            rhs_e.append(self.variance)
        else:
            rows_g.append(v**2)
            rhs_g.append(self.variance)
        rows_g += list(-np.eye(n))
        rhs_g += list(-self.lower)
        zero = np.flatnonzero(v == 0)
        if self.monotone and zero.size:
            for k in range(int(zero[0])):
                row = np.zeros(n)
                row[k], row[k + 1] = 1.0, -1.0
                rows_g.append(row)
                rhs_g.append(0.0)
        return np.array(rows_e), np.array(rhs_e), np.array(rows_g), np.array(rhs_g)


def max_entropy(problem: EntropyProblem) -> np.ndarray:
    """The maximum-entropy probabilities of ``problem`` (see the module text).

    Returns
    -------
    ndarray
        ``p``, to within a duality gap of ``1e-13``.

    Raises
    ------
    InputError
        The constraints leave no distribution with every probability strictly above its
        lower bound (the variance is too small for the noise values, as ptable says).

    Examples
    --------
    >>> p = max_entropy(EntropyProblem(np.array([-1.0, 0.0, 1.0]), 0.5, np.full(3, 1e-8)))
    >>> np.round(p, 6).tolist()
    [0.25, 0.5, 0.25]
    """
    E, e, G, h = problem.constraints()
    p = _strictly_feasible(E, e, G, h, problem)
    m = len(h)
    t = 1.0
    while True:
        p = _centre(p, t, E, G, h)
        if m / t < GAP:
            return p
        t *= 10.0


def _strictly_feasible(E: np.ndarray, e: np.ndarray, G: np.ndarray, h: np.ndarray,
                       problem: EntropyProblem) -> np.ndarray:
    """Phase I: maximise the smallest slack ``s`` of ``G p + s <= h`` with ``E p = e``."""
    n = G.shape[1]
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    solution = linprog(cost, A_ub=np.hstack([G, np.ones((len(h), 1))]), b_ub=h,
                       A_eq=np.hstack([E, np.zeros((len(e), 1))]), b_eq=e,
                       bounds=[(None, None)] * n + [(None, 1.0)], method="highs")
    if solution.status != 0 or solution.x[-1] <= 1e-12:
        what = "equal to" if problem.exact_variance else "at most"
        raise InputError(
            f"no unbiased noise on the values {problem.v.min():g}..{problem.v.max():g} has a "
            f"variance {what} {problem.variance:g} with every probability above its lower "
            "bound: the variance is too small (or too large) for this maximum noise")
    return solution.x[:n]


def _centre(p: np.ndarray, t: float, E: np.ndarray, G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Newton's method with equality constraints on ``t sum p log p - sum log(h - G p)``."""
    n, k = len(p), len(E)

    def value(x: np.ndarray) -> float:
        slack = h - G @ x
        if (slack <= 0).any() or (x <= 0).any():
            return np.inf
        return float(t * np.sum(x * np.log(x)) - np.sum(np.log(slack)))

    E_pinv = np.linalg.pinv(E)
    current = value(p)
    for _ in range(200):
        slack = h - G @ p
        gradient = t * (np.log(p) + 1.0) + G.T @ (1.0 / slack)
        hessian = t * np.diag(1.0 / p) + G.T @ (G / slack[:, None] ** 2)
        kkt = np.block([[hessian, E.T], [E, np.zeros((k, k))]])
        rhs = np.concatenate([-gradient, np.zeros(k)])
        try:
            step = np.linalg.solve(kkt, rhs)[:n]
        except np.linalg.LinAlgError:  # dependent equality rows (variance = V exactly met)
            step = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:n]
        # kept on E p = e: an ill-conditioned system's step drifts off it (a row of D = 6,
        # V = 3.3906 summed to 0.949)
        step -= E_pinv @ (E @ step)
        decrement = float(-gradient @ step)
        if decrement / 2 <= 1e-14:
            return p
        size = 1.0
        while value(p + size * step) > current - 0.25 * size * decrement:
            size /= 2
            if size < 1e-20:
                return p
        p = p + size * step
        current = value(p)
    return p
