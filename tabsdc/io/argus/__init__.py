"""tau-ARGUS jobs: metadata, data, hierarchies, codelists, recodes, a-priori and batch files,
read into the toolkit's objects and written back (see ``docs/tau-argus.md``).

One module per file format: :mod:`~tabsdc.io.argus.metadata` (``.rda``),
:mod:`~tabsdc.io.argus.microdata` (``.asc``, ``.csv``, ``.tab`` lines),
:mod:`~tabsdc.io.argus.hrc`, :mod:`~tabsdc.io.argus.cdl`, :mod:`~tabsdc.io.argus.grc`,
:mod:`~tabsdc.io.argus.apriori` (``.hst``), :mod:`~tabsdc.io.argus.tab` (writing ``.tab``),
:mod:`~tabsdc.io.argus.output` (WRITETABLE files); :mod:`~tabsdc.io.argus.safety` (safety
rules), :mod:`~tabsdc.io.argus.tables` (tables of a job), :mod:`~tabsdc.io.argus.protect`
(SUPPRESS methods) and :mod:`~tabsdc.io.argus.batch` (the ``.arb`` runner).
"""

from tabsdc.io.argus.apriori import apply_apriori, read_hst, write_hst
from tabsdc.io.argus.batch import BatchResult, format_arb, parse_arb, run_batch
from tabsdc.io.argus.cdl import read_cdl
from tabsdc.io.argus.grc import read_grc
from tabsdc.io.argus.hrc import read_hrc, write_hrc
from tabsdc.io.argus.metadata import Metadata, Variable, read_rda, write_rda
from tabsdc.io.argus.microdata import read_data
from tabsdc.io.argus.safety import parse_safety_rule
from tabsdc.io.argus.syntax import ArgusFormatError
from tabsdc.io.argus.tab import write_tab
from tabsdc.io.argus.tables import microdata_table, parse_table_spec, tabular_table

__all__ = [
    "ArgusFormatError", "BatchResult", "Metadata", "Variable", "apply_apriori", "format_arb",
    "microdata_table", "parse_arb", "parse_safety_rule", "parse_table_spec", "read_cdl",
    "read_data", "read_grc", "read_hrc", "read_hst", "read_rda", "run_batch",
    "tabular_table", "write_hrc", "write_hst", "write_rda", "write_tab",
]
