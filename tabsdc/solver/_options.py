"""The options every backend takes: time limit, relative gap target, threads, log output."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

from tabsdc._errors import InputError


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class SolveOptions:
    """Limits and settings of a solve, validated once.

    Parameters
    ----------
    time_limit : float or None
        Wall-clock limit in seconds (> 0); None for no limit. A solve stopped by it is never
        reported as optimal.
    mip_gap : float or None
        Relative gap target for a MIP (>= 0): the solver may stop once
        ``|objective - bound| / |objective| <= mip_gap``. None asks for a proof of optimality
        (HiGHS then runs with ``mip_rel_gap = 0`` instead of its default 1e-4; PuLP's solvers
        use their own defaults, which for CBC is a proof). A solve stopped at a positive
        target is reported as ``"feasible"``, not optimal.
    threads : int or None
        Number of threads (>= 1); None lets the solver decide.
    verbose : bool
        Let the solver print its log.

    Raises
    ------
    InputError
        A non-positive or non-finite ``time_limit``, a negative or non-finite ``mip_gap``, or
        ``threads`` that is not a positive integer.

    Examples
    --------
    >>> SolveOptions(time_limit=10, mip_gap=0.01).gap_target
    0.01
    """

    time_limit: float | None = None
    mip_gap: float | None = None
    threads: int | None = None
    verbose: bool = False

    def __post_init__(self) -> None:
        if self.time_limit is not None and not (
            _is_number(self.time_limit) and self.time_limit > 0
        ):
            raise InputError(
                f"time_limit must be a positive number of seconds, got {self.time_limit!r}"
            )
        if self.mip_gap is not None and not (_is_number(self.mip_gap) and self.mip_gap >= 0):
            raise InputError(f"mip_gap must be a non-negative fraction, got {self.mip_gap!r}")
        if self.threads is not None and not (
            isinstance(self.threads, Integral)
            and not isinstance(self.threads, bool)
            and self.threads >= 1
        ):
            raise InputError(f"threads must be a positive integer, got {self.threads!r}")

    @property
    def gap_target(self) -> float:
        """The relative gap the solver may stop at (0 when none was given)."""
        return 0.0 if self.mip_gap is None else float(self.mip_gap)
