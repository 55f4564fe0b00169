"""Rounding of tables: the four rounding rules, controlled rounding, their quality and
disclosure statistics, and the audit of rounded releases.

Entry point: :func:`round_table` (returns a :class:`RoundingResult`). The parts:

* :mod:`~tabsdc.rounding.rules`: conventional, modified conventional, zero-restricted 50/50
  and unbiased rounding, cell by cell;
* :mod:`~tabsdc.rounding.network` and :mod:`~tabsdc.rounding.controlled`: controlled
  rounding as a min-cost flow (two-dimensional tables, a hierarchy in at most one
  dimension), as a MILP (any table, with the closest additive alternative when none exists),
  and unbiased controlled rounding;
* :mod:`~tabsdc.rounding.small_count`: small-count rounding of the inner cells of count
  tables (Langsrud and Heldal 2018), one table or linked tables from the same microdata;
* :mod:`~tabsdc.rounding.statistics`: mean, variance, mean squared error, the conditional
  chi-square U with its expectation and bound, posterior probabilities;
  :mod:`~tabsdc.rounding.base_choice`: the largest acceptable base;
* :mod:`~tabsdc.rounding.audit`: what an intruder infers from a rounded release;
* :mod:`~tabsdc.rounding.plots`: the posterior probabilities and the deviations as figures;
  :mod:`~tabsdc.rounding.result`: :class:`RoundingResult` and its report.

References: L. H. Cox, *Towards a quality assessment of disclosure-limited statistical data*
(slides 5-10); Cox & Ernst (1982); Cox (1987); Cox & Kim (2006).
"""

from tabsdc.rounding.api import round_table
from tabsdc.rounding.audit import RoundingAudit, audit_rounding, release_box
from tabsdc.rounding.base_choice import BaseChoice, choose_base
from tabsdc.rounding.controlled import (
    ControlledOutcome,
    controlled_rounding,
    unbiased_controlled_rounding,
)
from tabsdc.rounding.network import TableNetwork, table_network
from tabsdc.rounding.plots import deviation_figure, posterior_figure
from tabsdc.rounding.result import RoundingResult
from tabsdc.rounding.rules import RULES, apply_rule, decompose, up_probability
from tabsdc.rounding.small_count import (
    SmallCountResult,
    round_small_counts,
    small_count_rounding,
)
from tabsdc.rounding.statistics import (
    METHODS,
    TableStatistics,
    chi_square_bound,
    conditional_chi_square,
    expected_chi_square,
    posterior_table,
    rule_statistics,
    table_statistics,
)

__all__ = [
    "round_table",
    "RoundingResult",
    "RULES",
    "METHODS",
    "apply_rule",
    "decompose",
    "up_probability",
    "controlled_rounding",
    "unbiased_controlled_rounding",
    "ControlledOutcome",
    "table_network",
    "TableNetwork",
    "rule_statistics",
    "table_statistics",
    "TableStatistics",
    "conditional_chi_square",
    "expected_chi_square",
    "chi_square_bound",
    "posterior_table",
    "posterior_figure",
    "deviation_figure",
    "choose_base",
    "BaseChoice",
    "audit_rounding",
    "RoundingAudit",
    "release_box",
    "round_small_counts",
    "small_count_rounding",
    "SmallCountResult",
]
