"""Iterative proportional fitting with fixed cells, the MDI statistic and its test.

* :mod:`tabsdc.mdi._ipf`: IPF of a table to margins with fixed cells and structural zeros;
* :mod:`tabsdc.mdi._margins`: the totals of a table as margins over its interior cells;
* :mod:`tabsdc.mdi._statistic`: the discrimination information ``I(Q : P)``, ``2 N I`` and the
  chi-square test with its degrees of freedom;
MDI-CTA (Cox, Orelien and Shah 2006), an adjustment method built on these, is
:func:`tabsdc.cta._mdi.mdi_cta` (also ``tabsdc.cta.adjust(table, "mdi")``); this package
imports nothing of :mod:`tabsdc.cta`.
"""

from tabsdc.mdi._ipf import FitError, IPFResult, ipf
from tabsdc.mdi._margins import aggregation_matrix, margin_mask
from tabsdc.mdi._statistic import constraint_degrees_of_freedom, mdi_p_value, mdi_statistic

__all__ = [
    "IPFResult",
    "FitError",
    "ipf",
    "aggregation_matrix",
    "margin_mask",
    "mdi_statistic",
    "mdi_p_value",
    "constraint_degrees_of_freedom",
]

