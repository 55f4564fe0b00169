"""Tabular statistical disclosure limitation.

The core object is :class:`Table` (cells plus the additivity system ``A x = b``);
:mod:`tabsdc.rules` finds the sensitive cells, :mod:`tabsdc.solver` solves the LPs/MILPs the
protection methods need, and :mod:`tabsdc.io.jj` reads and writes tau-ARGUS's JJ format.
"""

from tabsdc.errors import (
    AdditivityError,
    HierarchyError,
    InputError,
    JJFormatError,
    NoSolutionError,
    RuleError,
    SolverError,
    TabSDCError,
)
from tabsdc.hierarchy import Hierarchy
from tabsdc.rules import (
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    RulesResult,
    apply_rules,
)
from tabsdc.table import Table
from tabsdc.tableset import TableSet

__all__ = [
    "Table",
    "TableSet",
    "Hierarchy",
    "apply_rules",
    "RulesResult",
    "FrequencyRule",
    "DominanceRule",
    "PPercentRule",
    "PQRule",
    "TabSDCError",
    "InputError",
    "AdditivityError",
    "HierarchyError",
    "RuleError",
    "JJFormatError",
    "SolverError",
    "NoSolutionError",
]
