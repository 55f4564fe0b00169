"""The parts of the noise of magnitude tables: the flex function ``m(z)`` of the noise
coefficient, and the noise of every cell (:mod:`tabsdc.ckm._magnitude` adds the noise)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabsdc._errors import InputError


@dataclass(frozen=True)
class FlexFunction:
    """The noise coefficient ``m(z)`` (:mod:`tabsdc.ckm._magnitude`).

    Attributes
    ----------
    small : float
        ``sigma_1``: the coefficient of small values (cellKey's ``p[1]``).
    large : float, optional
        ``sigma_0``: the coefficient that large values tend to; None for a constant
        coefficient (tau-ARGUS's ``<SCALING> N``, cellKey's ``ck_simpleparams``).
    flex_point : float, optional
        ``z_f``, where ``m`` starts to fall from ``sigma_1`` (needed with ``large``).
    q : float
        The flex function's exponent (>= 1).
    epsilon : tuple of float
        Weights of the largest contributions, the first 1, not increasing; their number is
        the ``k`` of the top-``k`` noise.

    Examples
    --------
    >>> flex = FlexFunction(0.3, 0.03, 1000.0, q=3.0)
    >>> [round(float(m), 6) for m in flex(np.array([10.0, 1000.0, 10**6]))]
    [0.3, 0.3, 0.030002]
    """

    small: float
    large: float | None = None
    flex_point: float | None = None
    q: float = 3.0
    epsilon: tuple[float, ...] = (1.0,)

    def __post_init__(self) -> None:
        eps = tuple(float(e) for e in self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        if not 0 < self.small <= 1:
            raise InputError(f"sigma_1 (small) must lie in (0, 1], not {self.small!r}")
        if self.large is not None:
            if not 0 < self.large <= self.small:
                raise InputError(f"sigma_0 (large) must lie in (0, sigma_1 = {self.small}], "
                                 f"not {self.large!r}")
            if self.flex_point is None or not self.flex_point > 0:
                raise InputError(f"the flex point z_f must be a number > 0, not "
                                 f"{self.flex_point!r}")
        if not self.q >= 1:
            raise InputError(f"q must be >= 1, not {self.q!r}")
        if not eps or eps[0] != 1 or any(not 0 <= e <= 1 for e in eps) or \
                any(b > a for a, b in zip(eps, eps[1:], strict=False)):
            raise InputError(f"epsilon must start with 1 and not increase within [0, 1], not "
                             f"{list(eps)}")

    @property
    def top_k(self) -> int:
        """``k``: how many of the largest contributions make noise."""
        return len(self.epsilon)

    @property
    def energy(self) -> float:
        """``E = sum_j epsilon_j^2``."""
        return float(np.sum(np.square(self.epsilon)))

    def __call__(self, z: np.ndarray, separation: float = 0.0) -> np.ndarray:
        """``m(z)`` for ``z >= 0`` (see :mod:`tabsdc.ckm._magnitude`)."""
        z = np.asarray(z, dtype=float)
        out = np.where(z > separation, self.small, 0.0)
        if self.large is not None:
            zf, s0, s1 = self.flex_point, self.large, self.small
            big = z >= zf
            with np.errstate(over="ignore"):
                falling = s0 * (1 + (s1 * z - s0 * zf) / (s0 * zf) * (2 * zf / (z + zf)) ** self.q)
            out = np.where(big, falling, out)
        return out


@dataclass(frozen=True, eq=False)
class MagnitudeNoise:
    """The noise of every cell (output of :func:`tabsdc.ckm._magnitude.magnitude_noise`).

    Attributes
    ----------
    published : ndarray
        The perturbed values.
    delta : ndarray, shape (n_cells, k)
        The noise unit ``delta_j`` of each step taken (NaN where a step was not taken).
    v : ndarray, shape (n_cells, k)
        The p-table noise ``V_j`` of each step taken (NaN where not taken).
    small : ndarray of bool
        Step 1 read the small-value p-table.
    mu : ndarray
        The extra ``mu_c`` each cell got in step 1.
    separation : float
        ``z_s``.
    """

    published: np.ndarray
    delta: np.ndarray
    v: np.ndarray
    small: np.ndarray
    mu: np.ndarray
    separation: float
