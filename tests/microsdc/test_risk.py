"""Disclosure risk: sdcMicro's published dRisk, dRisk written out record by record on masked
files where sdcMicro's old and new rules differ, hand-worked examples, a brute-force record
linkage, and properties (bounds, identity)."""

import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microsdc._datasets import load_tarragona
from microsdc._errors import DataError
from microsdc._risk import (
    RiskReport,
    disclosure_risk,
    rank_interval_disclosure,
    record_linkage,
    sd_interval_disclosure,
)
from microsdc.masking import additive_noise, mdav, rank_swap
from sdcreport import Section

from .conftest import MICRODATA


def drisk_by_definition(x, xm, k=0.05):
    """sdcMicro 5.8.1's dRisk written out record by record: the share of records whose every
    original value lies in [x'_ij - k s'_j, x'_ij + k s'_j], s'_j the sample sd of masked
    column j (exact arithmetic of ``statistics.stdev``)."""
    x, xm = np.asarray(x, float).tolist(), np.asarray(xm, float).tolist()
    sds = [statistics.stdev(column) for column in zip(*xm, strict=True)]
    at_risk = 0
    for row, masked in zip(x, xm, strict=True):
        at_risk += all(m - k * s <= v <= m + k * s
                       for v, m, s in zip(row, masked, sds, strict=True))
    return at_risk / len(x)


def drisk_before_sdcmicro_5_6(x, xm, k=0.05):
    """The rule sdcMicro used before 5.6.0: at most one value outside its interval."""
    x, xm = np.asarray(x, float), np.asarray(xm, float)
    sd = xm.std(axis=0, ddof=1)
    outside = (x < xm - k * sd) | (x > xm + k * sd)
    return np.mean(outside.sum(axis=1) <= 1)


def test_sdid_reproduces_sdcmicro_drisk_on_tarragona_mdav():
    # sdcMicro 5.8.1: dRisk(Tarragona, microaggregation(Tarragona, method = "mdav",
    # aggr = 3)$mx, k = 0.05) = 0.0455635491606715 (tests/data/microsdc/README.md).
    x = load_tarragona()
    masked = pd.read_csv(MICRODATA / "Tarragona__mdav_k3.csv")
    assert sd_interval_disclosure(x, masked) == pytest.approx(0.0455635491606715, abs=1e-12)
    assert disclosure_risk(x, masked).sdid == pytest.approx(0.0455635491606715, abs=1e-12)
    assert drisk_before_sdcmicro_5_6(x, masked) == pytest.approx(0.1067146, abs=1e-7)
    # our MDAV writes the same file
    np.testing.assert_array_equal(mdav(x, k=3).to_numpy(), masked.to_numpy())


MASKS = {
    "mdav k=3": lambda x: mdav(x, k=3),
    "mdav k=5": lambda x: mdav(x, k=5),
    "noise 2 %": lambda x: additive_noise(x, 2, seed=1),
    "noise 5 %": lambda x: additive_noise(x, 5, seed=1),
    "rank swap 5 %": lambda x: rank_swap(x, 5, seed=1),
    "rank swap 15 %": lambda x: rank_swap(x, 15, seed=1),
}


@pytest.mark.parametrize("data", ["Tarragona", "testdata"])
@pytest.mark.parametrize("method", sorted(MASKS))
def test_sdid_equals_drisk_written_out(data, method, testdata_100):
    x = load_tarragona() if data == "Tarragona" else testdata_100
    masked = MASKS[method](x)
    expected = drisk_by_definition(x, masked)
    # every file tells sdcMicro's old and new rules apart
    assert expected != drisk_before_sdcmicro_5_6(x, masked)
    assert sd_interval_disclosure(x, masked) == pytest.approx(expected, abs=1e-12)
    report = disclosure_risk(x, masked)
    assert report.sdid == pytest.approx(expected, abs=1e-12)
    by_width = [drisk_by_definition(x, masked, k=w / 100) for w in range(1, 11)]
    np.testing.assert_allclose(report.by_width["SDID"], by_width, rtol=0, atol=1e-12)
    assert report.sdid_avg == pytest.approx(np.mean(by_width), abs=1e-12)


def test_sdid_worked_example():
    # masked sds: a -> sd(0, 0, 10, 10) = 5.7735, b -> sd(0, 0, 0, 4) = 2; k = 0.1 gives
    # half-widths 0.57735 and 0.2.
    x = np.array([[0.5, 0.1], [0.7, 0.1], [10.0, 0.5], [10.0, 4.0]])
    xm = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0], [10.0, 4.0]])
    # record 1: both inside; 2: a outside (0.7 > 0.577); 3: b outside (0.5 > 0.2); 4: both
    # inside -> 2/4. With k = 0.01 (half-widths 0.0577 and 0.02) only record 4 stays: 1/4.
    assert sd_interval_disclosure(x, xm, k=0.1) == 0.5
    assert sd_interval_disclosure(x, xm, k=0.01) == 0.25
    # bounds are inclusive: an original value exactly on x' + k s' is inside
    x_edge = np.array([[1.0], [2.0], [3.0]])
    xm_edge = np.array([[0.0], [2.0], [4.0]])  # s' = 2, k = 0.5: half-width exactly 1
    assert sd_interval_disclosure(x_edge, xm_edge, k=0.5) == 1.0
    assert sd_interval_disclosure(x_edge, xm_edge, k=0.49) == 1 / 3


def test_sdid_is_zero_on_sdcmicro_testdata_mdav(testdata_100):
    # sdcMicro: dRisk of microaggregation(testdata[1:100, c('expend','income','savings')],
    # method='mdav', aggr=4) with the default k = 0.05 is 0.
    assert sd_interval_disclosure(testdata_100, mdav(testdata_100, k=4)) == 0.0


def test_rid_worked_example():
    # one column, n = 10, originals 1..10. p = 20 -> half-width h = floor(20*10/200) = 1.
    x = np.arange(1.0, 11.0).reshape(-1, 1)
    xm = x + np.array([0, 0.5, 2, 0, -1.5, 0, 0, 3, 0, 0]).reshape(-1, 1)
    # record 2: masked 2.5 -> first original not below it is 3 (rank 3), interval [2, 4]
    # holds 2; record 3: 5 -> [4, 6], 3 outside; record 5: 3.5 -> rank 4, [3, 5] holds 5;
    # record 8: 11 -> beyond the maximum, rank 10, [9, 10], 8 outside. 8 of 10 disclosed.
    assert rank_interval_disclosure(x, xm, p=20) == 0.8
    # p = 0: the interval is the single original value at the masked value's rank.
    assert rank_interval_disclosure(x, xm, p=0) == 0.6


def brute_force_linkage(x, xm):
    centre, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    sd = np.where(sd == 0, 1.0, sd)  # a constant column is only centred (documented)
    a, b = (x - centre) / sd, (xm - centre) / sd
    d = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))
    nearest = d.min(axis=1, keepdims=True)
    tied = np.isclose(d, nearest, rtol=1e-9, atol=1e-12)
    return np.mean(np.where(tied[np.arange(len(x)), np.arange(len(x))], 1 / tied.sum(axis=1), 0))


@given(st.integers(4, 60), st.integers(1, 4), st.integers(1, 4),
       st.sampled_from(["mdav", "noise", "swap"]), st.integers(0, 2**32 - 1))
def test_record_linkage_matches_brute_force(n, p, k, method, seed):
    x = np.round(np.exp(np.random.default_rng(seed).standard_normal((n, p))), 1)
    masks = {"mdav": lambda: mdav(x, k=min(k, n)), "noise": lambda: additive_noise(x, 20, seed=1),
             "swap": lambda: rank_swap(x, 30, seed=1)}
    xm = masks[method]()
    assert record_linkage(x, xm) == pytest.approx(brute_force_linkage(x, xm), abs=1e-12)


def test_record_linkage_shares_ties_within_microaggregation_groups():
    x = np.exp(np.random.default_rng(3).standard_normal((300, 3)))
    assert record_linkage(x, mdav(x, k=3)) <= 1 / 3 + 1e-12
    exact_copies = np.repeat(x[:100], 2, axis=0)  # every record has a twin
    assert record_linkage(exact_copies, exact_copies) == 0.5


@given(st.integers(2, 80), st.integers(1, 5), st.floats(0, 300), st.integers(0, 2**32 - 1))
def test_every_measure_is_a_proportion(n, p, noise, seed):
    x = np.random.default_rng(seed).standard_normal((n, p)) * 3 + 1
    xm = additive_noise(x, noise, seed=seed)
    values = disclosure_risk(x, xm).measures()
    assert all(0.0 <= v <= 1.0 for v in values.values())
    assert rank_interval_disclosure(x, xm, p=3) <= 1.0
    identical = disclosure_risk(x, x).measures()
    assert identical["SDID"] == identical["SDID_avg"] == identical["RID"] == 1.0
    distinct = len(np.unique(x, axis=0)) == n
    assert identical["DBRL"] == 1.0 or not distinct


def test_disclosure_risk_agrees_with_single_measures():
    x = np.exp(np.random.default_rng(8).standard_normal((500, 4)))
    xm = additive_noise(x, 30, seed=2)
    report = disclosure_risk(x, xm)
    assert report.dbrl == record_linkage(x, xm)
    assert report.sdid == sd_interval_disclosure(x, xm)
    assert report.sdid_avg == pytest.approx(np.mean(
        [sd_interval_disclosure(x, xm, k=w / 100) for w in range(1, 11)]))
    assert report.rid == pytest.approx(rank_interval_disclosure(x, xm))
    assert report.rid == pytest.approx(np.mean(
        [rank_interval_disclosure(x, xm, p=w) for w in range(1, 11)]))
    # more noise, less risk
    louder = disclosure_risk(x, additive_noise(x, 300, seed=2))
    assert louder.dbrl < report.dbrl and louder.rid < report.rid


def test_sampled_linkage_is_reproducible():
    x = np.exp(np.random.default_rng(1).standard_normal((2000, 3)))
    xm = additive_noise(x, 50, seed=1)
    one = record_linkage(x, xm, sample=400, seed=5)
    assert one == record_linkage(x, xm, sample=400, seed=5)
    assert record_linkage(x, xm, sample=2000, seed=9) == record_linkage(x, xm)
    report = disclosure_risk(x, xm, sample=400, seed=5)
    assert report.dbrl == one and report.linked == 400
    with pytest.raises(DataError, match="sample must be a whole number in"):
        record_linkage(x, xm, sample=0)


def test_report_renders():
    x = pd.DataFrame({"a": [1.0, 4, 2, 8, 5, 7], "b": [3.0, 1, 4, 1, 5, 9]})
    report = disclosure_risk(x, rank_swap(x, 40, seed=1))
    assert isinstance(report, RiskReport)
    assert list(report.measures()) == ["DBRL", "SDID", "SDID_avg", "RID"]
    data = report.to_dict()
    assert {k: data[k] for k in report.measures()} == report.measures()
    assert (data["n"], data["p"], data["linked"], data["status"]) == (6, 2, 6, "computed")
    frame = report.to_frame()
    assert frame.index.tolist() == ["DBRL", "SDID", "SDID_avg", "RID"]
    assert frame["value"].tolist() == list(report.measures().values())
    assert report.by_width.shape == (10, 2)
    section = report.to_report()
    assert isinstance(section, Section) and section.title == "Disclosure risk"
    assert "DBRL" in report.summary() and "6 records, 2 variables" in report.summary()


def test_input_errors_name_the_problem():
    x = pd.DataFrame({"a": [1.0, 2, 3], "b": [3.0, 1, 4]})
    with pytest.raises(DataError, match="different columns"):
        disclosure_risk(x, x.rename(columns={"b": "c"}))
    with pytest.raises(DataError, match="3 records, masked data 2"):
        record_linkage(x, x.iloc[:2])
    with pytest.raises(DataError, match="masked column 'b' has a missing"):
        sd_interval_disclosure(x, x.assign(b=[1.0, np.nan, 2]))
    with pytest.raises(DataError, match="k must be a finite number >= 0"):
        disclosure_risk(x, x, k=-0.1)
    with pytest.raises(DataError, match=r"k must be a finite number >= 0; got nan$"):
        sd_interval_disclosure(x, x, k=np.float64("nan"))
    labelled = x.set_axis(pd.Index([10, 20, 30]))
    with pytest.raises(DataError, match=r"original column 'a' has a missing or infinite value "
                                        r"in record 20$"):
        record_linkage(labelled.assign(a=[1.0, np.inf, 2]), labelled)
    # columns are matched by name, not position
    assert disclosure_risk(x, x[["b", "a"]]).to_dict()["DBRL"] == 1.0
