"""Microdata information loss, disclosure risk and masking.

* :mod:`microsdc.masking`: MDAV microaggregation, additive and correlated noise, rank
  swapping (to produce masked data);
* :mod:`microsdc.utility`: information-loss measures (:func:`information_loss`);
* :mod:`microsdc._risk`: record linkage and interval disclosure (:func:`disclosure_risk`);
* :mod:`microsdc._studies`: perturbation studies of the measures (:func:`run_study`);
* :mod:`microsdc._plots`: figures comparing original and masked data;
* :mod:`microsdc._datasets`: the Tarragona and CASC reference files.

The names below are imported from their modules when first used (``from microsdc import
mdav`` works as usual), so that ``microsdc --help`` and :mod:`microsdc._errors` load no
method.
"""

from __future__ import annotations

from tabsdc._lazy import lazy_names

#: Each public name and the module that defines it.
_SOURCES = {
    "MicroSDCError": "microsdc._errors",
    "DataError": "microsdc._errors",
    "mdav": "microsdc.masking",
    "mdav_groups": "microsdc.masking",
    "additive_noise": "microsdc.masking",
    "correlated_noise": "microsdc.masking",
    "rank_swap": "microsdc.masking",
    "information_loss": "microsdc.utility",
    "UtilityReport": "microsdc.utility",
    "disclosure_risk": "microsdc._risk",
    "record_linkage": "microsdc._risk",
    "sd_interval_disclosure": "microsdc._risk",
    "rank_interval_disclosure": "microsdc._risk",
    "RiskReport": "microsdc._risk",
    "run_study": "microsdc._studies",
    "StudyResult": "microsdc._studies",
    "default_grid": "microsdc._studies",
    "quick_grid": "microsdc._studies",
    "histogram_comparison": "microsdc._plots",
    "density_comparison": "microsdc._plots",
    "boxplot_comparison": "microsdc._plots",
    "mosaic_plot": "microsdc._plots",
    "ru_map": "microsdc._plots",
    "measures_by_parameter": "microsdc._plots",
    "spearman_boxplot": "microsdc._plots",
    "measure_pairs": "microsdc._plots",
    "load_tarragona": "microsdc._datasets",
    "load_casc": "microsdc._datasets",
}

__all__ = list(_SOURCES)

__getattr__, __dir__ = lazy_names(__name__, _SOURCES)
