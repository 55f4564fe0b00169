"""Tabular statistical disclosure limitation.

The core object is :class:`Table` (cells plus the additivity system ``A x = b``);
:mod:`tabsdc.rules` finds the sensitive cells, :mod:`tabsdc.solver` solves the LPs/MILPs the
protection methods need, and :mod:`tabsdc.io.jj` reads and writes tau-ARGUS's JJ format.

The names below are imported from their modules when first used (``from tabsdc import
Table`` works as usual), so that importing a light module such as :mod:`tabsdc.errors`, or
running ``tabsdc --help``, does not load pandas and SciPy.
"""

from __future__ import annotations

from tabsdc.lazy import lazy_names

#: Each public name and the module that defines it.
_SOURCES = {
    "Table": "tabsdc.table",
    "TableSet": "tabsdc.tableset",
    "Hierarchy": "tabsdc.hierarchy",
    "apply_rules": "tabsdc.rules",
    "RulesResult": "tabsdc.rules",
    "FrequencyRule": "tabsdc.rules",
    "DominanceRule": "tabsdc.rules",
    "PPercentRule": "tabsdc.rules",
    "PQRule": "tabsdc.rules",
    "TabSDCError": "tabsdc.errors",
    "InputError": "tabsdc.errors",
    "AdditivityError": "tabsdc.errors",
    "HierarchyError": "tabsdc.errors",
    "RuleError": "tabsdc.errors",
    "JJFormatError": "tabsdc.errors",
    "SolverError": "tabsdc.errors",
    "NoSolutionError": "tabsdc.errors",
}

__all__ = list(_SOURCES)

__getattr__, __dir__ = lazy_names(__name__, _SOURCES)
