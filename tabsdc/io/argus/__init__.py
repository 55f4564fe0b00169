"""tau-ARGUS jobs: metadata, data, hierarchies, codelists, recodes, a-priori and batch files,
read into the toolkit's objects and written back (see ``docs/tau-argus.md``).

One module per file format: :mod:`~tabsdc.io.argus._metadata` (``.rda``),
:mod:`~tabsdc.io.argus._microdata` (``.asc``, ``.csv``, ``.tab`` lines),
:mod:`~tabsdc.io.argus._hrc`, :mod:`~tabsdc.io.argus._cdl`, :mod:`~tabsdc.io.argus._grc`,
:mod:`~tabsdc.io.argus._apriori` (``.hst``), :mod:`~tabsdc.io.argus._tab` (writing ``.tab``),
:mod:`~tabsdc.io.argus._output` (WRITETABLE files); :mod:`~tabsdc.io.argus._safety` (safety
rules), :mod:`~tabsdc.io.argus._tables` (tables of a job), :mod:`~tabsdc.io.argus._protect`
(SUPPRESS methods) and :mod:`~tabsdc.io.argus._batch` (the ``.arb`` runner).
"""

from tabsdc.io.argus._apriori import apply_apriori, read_hst, write_hst
from tabsdc.io.argus._batch import BatchResult, format_arb, run_batch
from tabsdc.io.argus._cdl import read_cdl
from tabsdc.io.argus._grc import read_grc
from tabsdc.io.argus._hrc import read_hrc, write_hrc
from tabsdc.io.argus._metadata import Metadata, Variable, read_rda, write_rda
from tabsdc.io.argus._microdata import read_data
from tabsdc.io.argus._plan import parse_arb
from tabsdc.io.argus._safety import parse_safety_rule
from tabsdc.io.argus._syntax import ArgusFormatError
from tabsdc.io.argus._tab import write_tab
from tabsdc.io.argus._tables import microdata_table, parse_table_spec, tabular_table

__all__ = [
    "ArgusFormatError", "BatchResult", "Metadata", "Variable", "apply_apriori", "format_arb",
    "microdata_table", "parse_arb", "parse_safety_rule", "parse_table_spec", "read_cdl",
    "read_data", "read_grc", "read_hrc", "read_hst", "read_rda", "run_batch",
    "tabular_table", "write_hrc", "write_hst", "write_rda", "write_tab",
]
