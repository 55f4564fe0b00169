"""Reference microdata shipped with the package (the CASC test files, as distributed with the
R package sdcMicro 5.8.1, GPL-2; values unchanged).

``Tarragona``: 834 companies of the Tarragona area in 1995, 13 financial variables
(``FIXED.ASSETS``, ..., ``NET.PROFIT``).

``CASC`` (``CASCrefmicrodata``, the "Census" file): 1,080 records from the U.S. Current
Population Survey 1995, 13 income and tax variables (``AFNLWGT``, ``AGI``, ..., ``ERNVAL``);
the data set of Domingo-Ferrer and Torra (2001) and Mateo-Sanz et al. (2005).

Reference: Brand, R., Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Reference data sets to
test and compare SDC methods for protection of numerical microdata. CASC project.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

#: The data sets as files (``microsdc sample NAME --out FILE``): name -> file of
#: ``microsdc/data``.
SAMPLE_FILES = {"tarragona": "Tarragona.csv", "casc": "CASCrefmicrodata.csv"}


def _read(name: str) -> pd.DataFrame:
    with files("microsdc").joinpath("data", name).open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle)


def load_tarragona() -> pd.DataFrame:
    """The Tarragona companies: 834 records x 13 integer columns.

    Examples
    --------
    >>> load_tarragona().shape
    (834, 13)
    """
    return _read(SAMPLE_FILES["tarragona"])


def load_casc() -> pd.DataFrame:
    """The CASC "Census" reference file: 1,080 records x 13 integer columns.

    Examples
    --------
    >>> load_casc().shape
    (1080, 13)
    """
    return _read(SAMPLE_FILES["casc"])
