"""Microdata information loss, disclosure risk and masking.

* :mod:`microsdc.masking`: MDAV microaggregation, additive and correlated noise, rank
  swapping (to produce masked data);
* :mod:`microsdc.utility`: information-loss measures (:func:`information_loss`);
* :mod:`microsdc.risk`: record linkage and interval disclosure (:func:`disclosure_risk`);
* :mod:`microsdc.studies`: perturbation studies of the measures (:func:`run_study`);
* :mod:`microsdc.plots`: figures comparing original and masked data;
* :mod:`microsdc.datasets`: the Tarragona and CASC reference files.
"""

from microsdc.datasets import load_casc, load_tarragona
from microsdc.errors import DataError, MicroSDCError
from microsdc.masking import additive_noise, correlated_noise, mdav, mdav_groups, rank_swap
from microsdc.risk import (
    RiskReport,
    disclosure_risk,
    rank_interval_disclosure,
    record_linkage,
    sd_interval_disclosure,
)
from microsdc.studies import StudyResult, run_study
from microsdc.utility import UtilityReport, information_loss

__all__ = [
    "MicroSDCError",
    "DataError",
    "mdav",
    "mdav_groups",
    "additive_noise",
    "correlated_noise",
    "rank_swap",
    "information_loss",
    "UtilityReport",
    "disclosure_risk",
    "record_linkage",
    "sd_interval_disclosure",
    "rank_interval_disclosure",
    "RiskReport",
    "run_study",
    "StudyResult",
    "load_tarragona",
    "load_casc",
]
