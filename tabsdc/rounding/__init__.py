"""Rounding of tables: the four rounding rules, controlled rounding, their quality and
disclosure statistics, and the audit of rounded releases.

Entry point: :func:`round_table` (returns a :class:`RoundingResult`). The parts:

* :mod:`~tabsdc.rounding._rules`: conventional, modified conventional, zero-restricted 50/50
  and unbiased rounding, cell by cell;
* :mod:`~tabsdc.rounding._network` and :mod:`~tabsdc.rounding._controlled`: controlled
  rounding as a min-cost flow (two-dimensional tables, a hierarchy in at most one
  dimension), as a MILP (any table, with the closest additive alternative when none exists),
  and unbiased controlled rounding;
* :mod:`~tabsdc.rounding._small_count`: small-count rounding of the inner cells of count
  tables (Langsrud and Heldal 2018), one table or linked tables from the same microdata;
* :mod:`~tabsdc.rounding._statistics`: mean, variance, mean squared error, the conditional
  chi-square U with its expectation and bound, posterior probabilities;
  :mod:`~tabsdc.rounding._base_choice`: the largest acceptable base;
* :mod:`~tabsdc.rounding._audit`: what an intruder infers from a rounded release;
* :mod:`~tabsdc.rounding._plots`: the posterior probabilities and the deviations as figures;
  :mod:`~tabsdc.rounding._result`: :class:`RoundingResult` and its report.

References: L. H. Cox, *Towards a quality assessment of disclosure-limited statistical data*
(slides 5-10); Cox & Ernst (1982); Cox (1987); Cox & Kim (2006).
"""

from tabsdc.rounding._api import round_table
from tabsdc.rounding._audit import RoundingAudit, audit_rounding, release_box
from tabsdc.rounding._base_choice import BaseChoice, choose_base
from tabsdc.rounding._controlled import (
    ControlledOutcome,
    controlled_rounding,
    unbiased_controlled_rounding,
)
from tabsdc.rounding._network import TableNetwork, table_network
from tabsdc.rounding._plots import deviation_figure, posterior_figure
from tabsdc.rounding._result import RoundingResult
from tabsdc.rounding._rules import RULES, apply_rule, decompose, up_probability
from tabsdc.rounding._small_count import (
    SmallCountResult,
    round_small_counts,
    small_count_rounding,
)
from tabsdc.rounding._statistics import (
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
