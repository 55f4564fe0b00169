"""The cell key method (CKM): consistent noise for frequency tables.

Entry points: :func:`build_ptable` and :func:`read_ptable` (perturbation tables, as the
ptable package builds them and tau-ARGUS reads them) and :func:`perturb_counts` (returns a
:class:`CKMResult`), :func:`perturb_magnitudes` (returns a :class:`MagnitudeResult`). The parts:

* :mod:`~tabsdc.ckm._entropy`: the maximum-entropy problem of a p-table row;
* :mod:`~tabsdc.ckm._ptable`: p-tables, their tau-ARGUS files;
* :mod:`~tabsdc.ckm._keys`: record keys and cell keys in exact decimal arithmetic;
* :mod:`~tabsdc.ckm._counts`: the noise of each cell of a count table;
* :mod:`~tabsdc.ckm._magnitude`: the noise of each cell of a magnitude table (top-k
  contributions, the flex function, separation, parity, ``mu_c``, scrambled keys);
* :mod:`~tabsdc.ckm._quality`: distances, deviations by cell size, the posterior
  probability of an original count given the published one;
* :mod:`~tabsdc.ckm._plots`, :mod:`~tabsdc.ckm._result`: figures and the result.

References: ptable 1.0.0 and cellKey 1.0.2 (sdcTools); tau-ARGUS 4.2; S. Giessing (2016),
LNCS 9867, pp. 237-251.
"""

from tabsdc.ckm._counts import count_noise, perturb_counts
from tabsdc.ckm._flex import FlexFunction
from tabsdc.ckm._keys import cell_key_units, draw_record_keys, key_fraction, record_key_units
from tabsdc.ckm._magnitude import magnitude_noise, perturb_magnitudes
from tabsdc.ckm._ptable import PTable, build_ptable, read_ptable
from tabsdc.ckm._quality import PerturbationStatistics, perturbation_statistics, posterior_matrix
from tabsdc.ckm._result import CKMResult, MagnitudeResult

__all__ = [
    "PTable", "build_ptable", "read_ptable", "perturb_counts", "count_noise", "CKMResult",
    "draw_record_keys", "record_key_units", "cell_key_units", "key_fraction",
    "PerturbationStatistics", "perturbation_statistics", "posterior_matrix",
    "perturb_magnitudes", "magnitude_noise", "FlexFunction", "MagnitudeResult",
]
