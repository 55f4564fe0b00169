"""Microdata information loss, disclosure risk and masking.

* :mod:`microsdc.masking`: MDAV microaggregation, additive and correlated noise, rank
  swapping (to produce masked data);
* :mod:`microsdc.utility`: information-loss measures (:func:`information_loss`);
* :mod:`microsdc.risk`: record linkage and interval disclosure (:func:`disclosure_risk`);
* :mod:`microsdc.studies`: perturbation studies of the measures (:func:`run_study`);
* :mod:`microsdc.plots`: figures comparing original and masked data;
* :mod:`microsdc.datasets`: the Tarragona and CASC reference files.

The names below are imported from their modules when first used (``from microsdc import
mdav`` works as usual), so that ``microsdc --help`` and :mod:`microsdc.errors` load no
method.
"""

from __future__ import annotations

from tabsdc.lazy import lazy_names

#: Each public name and the module that defines it.
_SOURCES = {
    "MicroSDCError": "microsdc.errors",
    "DataError": "microsdc.errors",
    "mdav": "microsdc.masking",
    "mdav_groups": "microsdc.masking",
    "additive_noise": "microsdc.masking",
    "correlated_noise": "microsdc.masking",
    "rank_swap": "microsdc.masking",
    "information_loss": "microsdc.utility",
    "UtilityReport": "microsdc.utility",
    "disclosure_risk": "microsdc.risk",
    "record_linkage": "microsdc.risk",
    "sd_interval_disclosure": "microsdc.risk",
    "rank_interval_disclosure": "microsdc.risk",
    "RiskReport": "microsdc.risk",
    "run_study": "microsdc.studies",
    "StudyResult": "microsdc.studies",
    "load_tarragona": "microsdc.datasets",
    "load_casc": "microsdc.datasets",
}

__all__ = list(_SOURCES)

__getattr__, __dir__ = lazy_names(__name__, _SOURCES)
