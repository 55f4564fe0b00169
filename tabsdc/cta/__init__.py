"""Controlled tabular adjustment (CTA): publish every cell, sensitive ones at safe values.

CTA replaces each sensitive cell by a value outside its protection interval
``[a - lpl, a + upl]`` and adjusts other cells as little as possible so that every relation
of the table still holds (Cox, *Towards a quality assessment of disclosure-limited
statistical data*, slides 25-30). :func:`adjust` is the entry point (:mod:`tabsdc.cta._api`):

* ``method="milp"``: the L1 MILP of slide 26 solved by HiGHS (:mod:`tabsdc.cta._milp`); with a
  time limit started from the fixed-directions adjustment, which is kept when the MILP finds
  no better one in time (:mod:`tabsdc.cta._exact`);
* ``method="heuristic"``: fixed directions from the LP relaxation, block flips with warm
  re-solves, a MILP phase for the bound (:mod:`tabsdc.cta._heuristic`), for large tables;
* ``method="fixed-directions"``: directions from the LP relaxation, one LP for them (the
  heuristic's first steps alone): an answer in seconds, with its certified gap;
* ``method="l2"``: weighted least squares for fixed directions, a convex QP
  (:mod:`tabsdc.cta._l2`);
* ``method="mdi"``: MDI-CTA by iterative proportional fitting (:mod:`tabsdc.cta._mdi`, built
  on :mod:`tabsdc.mdi`).

Quality-preserving constraints (QP-CTA: means, variances, correlation of groups of cells) are
added with ``preserve=`` (:mod:`tabsdc.cta._constraints`); :func:`adjust_multivariate` adjusts
several tables of the same structure together and keeps their covariances. Every result is
checked (:mod:`tabsdc.cta._verify`) and carries a certified gap: a time-limited or heuristic
solution is reported ``"optimal"`` only when its lower bound proves it. The L1 methods' bounds
include the relation-mass LP of :mod:`tabsdc.cta._mass`, which pays for the compensation every
move needs in the relations of the moved cell (the LP relaxation does not).
"""

from tabsdc.cta._api import METHODS, adjust, adjust_multivariate
from tabsdc.cta._constraints import PRESERVABLE
from tabsdc.cta._mdi import MDI_PROPERTIES, mdi_cta
from tabsdc.cta._problem import COSTS
from tabsdc.cta._result import AdjustmentResult, MultivariateAdjustmentResult
from tabsdc.cta._verify import Verification, verify_adjustment

__all__ = [
    "adjust",
    "adjust_multivariate",
    "mdi_cta",
    "MDI_PROPERTIES",
    "AdjustmentResult",
    "MultivariateAdjustmentResult",
    "Verification",
    "verify_adjustment",
    "METHODS",
    "COSTS",
    "PRESERVABLE",
]

