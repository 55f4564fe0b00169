"""Reference microdata of the microsdc tests (``tests/data/microsdc``, see its README.md)."""

import pandas as pd
import pytest

from ..conftest import DATA

MICRODATA = DATA / "microsdc"


@pytest.fixture
def testdata_100() -> pd.DataFrame:
    """sdcMicro's ``testdata[1:100, c("expend", "income", "savings")]``, as in its examples."""
    data = pd.read_csv(MICRODATA / "testdata_first100.csv")
    return data[["expend", "income", "savings"]]


@pytest.fixture
def micro_data() -> pd.DataFrame:
    """sdcMicro's ``microData`` toy set (13 records x 5 columns), without its row names."""
    return pd.read_csv(MICRODATA / "microData.csv").drop(columns="rowname")
