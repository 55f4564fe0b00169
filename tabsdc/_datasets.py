"""Sample data shipped with the package.

``business_survey``: 9,786 fictitious companies from the R package rtauargus (INSEE, MIT
licence; ``indiv_dt``): activity codes A10 > A21 > A88 (NACE-like), region codes
NUTS1 > NUTS2 > NUTS3, size, legal form, sampling WEIGHT, TURNOVER and PRODUCTION.

``sdctable_microdata1``: 100 synthetic records from the R package sdcTable (GPL >= 2):
region (A-D), gender, val.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

from tabsdc._hierarchy import Hierarchy

#: The data sets as files (``tabsdc sample NAME --out FILE``): name -> file of ``tabsdc/data``.
SAMPLE_FILES = {"business-survey": "business_survey.csv",
                "sdctable-microdata1": "sdcTable_microdata1.csv"}


def _read(name: str, **kwargs) -> pd.DataFrame:
    with files("tabsdc").joinpath("data", name).open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, **kwargs)


def load_business_survey() -> pd.DataFrame:
    """The rtauargus ``indiv_dt`` companies (codes read as strings)."""
    codes = ["A10", "A21", "A88", "TYPE", "SIZE", "CJ", "NUTS1", "NUTS2", "NUTS3"]
    return _read(SAMPLE_FILES["business-survey"], dtype=dict.fromkeys(codes, str))


def business_survey_hierarchies(data: pd.DataFrame | None = None) -> dict[str, Hierarchy]:
    """Hierarchies of the sample's activity (leaf ``A88``) and region (leaf ``NUTS3``)."""
    data = load_business_survey() if data is None else data
    return {
        "A88": Hierarchy.from_levels(data[["A10", "A21", "A88"]]),
        "NUTS3": Hierarchy.from_levels(data[["NUTS1", "NUTS2", "NUTS3"]]),
    }


def load_sdctable_microdata1() -> pd.DataFrame:
    """sdcTable's ``microdata1``: region, gender, val."""
    return _read(SAMPLE_FILES["sdctable-microdata1"], dtype={"region": str, "gender": str})
