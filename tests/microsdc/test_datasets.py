"""Shipped reference data: byte for byte the published sdcMicro conversions, integer columns."""

import hashlib
import io
from importlib.resources import files

import pandas as pd
import pytest

from microsdc._datasets import load_casc, load_tarragona
from microsdc.masking import mdav

SHA256 = {  # of the CSV conversions of sdcMicro 5.8.1's data sets, as published with them
    "Tarragona.csv": "d5f719a134a3476b2157d9675d1a2b211dbc06ad6109685ad1e4b7847cfa45a4",
    "CASCrefmicrodata.csv": "40fb91564d4379274610e941161fd38729adb471bddb9c71d7c01ef142fd0f5b",
}


@pytest.mark.parametrize("name", sorted(SHA256))
def test_package_files_are_the_published_conversions(name):
    content = files("microsdc").joinpath("data", name).read_bytes()
    assert hashlib.sha256(content).hexdigest() == SHA256[name]


@pytest.mark.parametrize("load, name, shape, first, last", [
    (load_tarragona, "Tarragona.csv", (834, 13), "FIXED.ASSETS", "NET.PROFIT"),
    (load_casc, "CASCrefmicrodata.csv", (1080, 13), "AFNLWGT", "ERNVAL"),
])
def test_loaders(load, name, shape, first, last):
    data = load()
    assert data.shape == shape
    assert data.columns[0] == first and data.columns[-1] == last
    assert all(pd.api.types.is_integer_dtype(t) for t in data.dtypes)
    content = files("microsdc").joinpath("data", name).read_bytes()  # checked above
    pd.testing.assert_frame_equal(data, pd.read_csv(io.BytesIO(content)))
    data.iloc[0, 0] = -1  # every call gives a fresh frame
    assert load().iloc[0, 0] != -1


def test_tarragona_sdcmicro_columns_5_to_7_microaggregate():
    # sdcMicro's examples use Tarragona[, 5:7]; MDAV keeps their column totals.
    x = load_tarragona().iloc[:, 4:7]
    assert x.columns.tolist() == ["PAID.UP.CAPITAL", "SHORT.TERM.DEBT", "SALES"]
    masked = mdav(x, k=3)
    pd.testing.assert_series_equal(masked.sum(), x.sum().astype(float), rtol=1e-12)
