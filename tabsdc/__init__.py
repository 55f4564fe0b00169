"""Tabular statistical disclosure limitation.

The core object is :class:`Table` (cells plus the additivity system ``A x = b``);
:mod:`tabsdc._rules` finds the sensitive cells, :mod:`tabsdc.solver` solves the LPs/MILPs the
protection methods need, and :mod:`tabsdc.io._jj` reads and writes tau-ARGUS's JJ format.

The names below are imported from their modules when first used (``from tabsdc import
Table`` works as usual), so that importing a light module such as :mod:`tabsdc._errors`, or
running ``tabsdc --help``, does not load pandas and SciPy.
"""

from __future__ import annotations

from tabsdc._lazy import lazy_names

#: Each public name and the module that defines it.
_SOURCES = {
    "Table": "tabsdc._table",
    "TableSet": "tabsdc._tableset",
    "Hierarchy": "tabsdc._hierarchy",
    "apply_rules": "tabsdc._rules",
    "RulesResult": "tabsdc._rules",
    "FrequencyRule": "tabsdc._rules",
    "DominanceRule": "tabsdc._rules",
    "PPercentRule": "tabsdc._rules",
    "PQRule": "tabsdc._rules",
    "TabSDCError": "tabsdc._errors",
    "InputError": "tabsdc._errors",
    "AdditivityError": "tabsdc._errors",
    "HierarchyError": "tabsdc._errors",
    "RuleError": "tabsdc._errors",
    "JJFormatError": "tabsdc._errors",
    "SolverError": "tabsdc._errors",
    "NoSolutionError": "tabsdc._errors",
    "KDisclosureRule": "tabsdc._differencing",
    "differencing_check": "tabsdc._differencing",
    "DifferencingCheck": "tabsdc._differencing",
    "write_release": "tabsdc._release",
    "write_publishable": "tabsdc._release",
    "write_publishable_set": "tabsdc._release",
    "publishable_frame": "tabsdc._release",
    "write_internal_table": "tabsdc._release",
    "load_business_survey": "tabsdc._datasets",
    "business_survey_hierarchies": "tabsdc._datasets",
    "load_sdctable_microdata1": "tabsdc._datasets",
}

__all__ = list(_SOURCES)

__getattr__, __dir__ = lazy_names(__name__, _SOURCES)
