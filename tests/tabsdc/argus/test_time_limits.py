"""Time limits of SUPPRESS commands mean what they mean in tau-ARGUS: OPT's minutes the whole
search, MOD's minutes each sub-table, RND's minutes the rounding; the log says which, and a
search stopped by its limit is never called optimal."""

import re

import pytest

from tabsdc.io.argus._batch import run_batch
from tests.tabsdc.argus.conftest import write_survey_job


def logged(result, text: str) -> bool:
    return any(text in line for line in result.log)


@pytest.mark.parametrize("command, meaning", [
    ("OPT(1,5)", "time limit: 5 min for the optimal method's whole search (tau-ARGUS's "
                 "maximum computing time)"),
    ("OPT(1)", "time limit: none (OPT without a maximum computing time)"),
    ("MOD(1,5,1,1,1)", "time limit: 5 min per sub-table (tau-ARGUS's maximum time per "
                       "sub-table)"),
    ("RND(1,10,0,2)", "time limit: 2 min for the controlled rounding (tau-ARGUS's maximum "
                      "time)"),
    ("RND(1,10)", "time limit: 10 min for the controlled rounding"),
    ("GH(1,100)", "time limit: none (GH takes no time limit)"),
])
def test_the_log_says_what_each_limit_means(job, command, meaning):
    result = run_batch(with_suppress(job, command))
    assert logged(result, meaning)


def test_the_job_limit_caps_each_protection_and_the_log_says_so(job):
    result = run_batch(with_suppress(job, "GH(1,100)"), time_limit=300)
    line = next(line for line in result.log if "time limit: none (GH" in line)
    left = float(re.search(r"leaves ([\d.]+) s for the whole protection", line).group(1))
    assert 0 < left <= 300


def test_opt_minutes_end_the_optimal_search_and_it_is_not_called_optimal(tmp_path):
    """OPT(1, 0.05): 3 s for a search that needs minutes (A88 x NUTS3, 2,420 cells)."""
    result = run_batch(write_survey_job(tmp_path, "<SUPPRESS> OPT(1,0.05)"))
    assert logged(result, "time limit: 0.05 min for the optimal method's whole search")
    details = result.tables[0].outcome.details
    assert details["status"] != "optimal" and details["time_limited"]
    assert logged(result, "NOT proven optimal") or logged(
        result, "no protecting pattern within the time limit")


@pytest.mark.slow
def test_mod_minutes_hold_for_each_subtable_not_the_whole_protection(tmp_path):
    """MOD(1, 0.01): 0.6 s per sub-table. Taken as the total, as it was, it stopped the
    modular method before any protecting pattern; per sub-table the method completes."""
    result = run_batch(write_survey_job(tmp_path, "<SUPPRESS> MOD(1,0.01,1,1,1)"))
    assert logged(result, "time limit: 0.01 min per sub-table")
    outcome = result.tables[0].outcome
    assert outcome.details["status"] == "feasible" and outcome.passed


def with_suppress(job, command):
    """TestTable.arb (pp.tab, 162 cells) protected by ``command``."""
    arb = job / "tableinput" / "TestTable.arb"
    arb.write_text(arb.read_text().replace("<GOINTERACTIVE>", f"<SUPPRESS> {command}"))
    return arb


class Called(Exception):
    """Raised by the spy once it has seen what SUPPRESS passes to the method."""


@pytest.mark.parametrize("numbers, singletons", [([0.05, 1, 0, 0], True),
                                                 ([0.05, 0, 0, 1], True),
                                                 ([0.05, 0, 0, 0], False)])
def test_mod_passes_its_minutes_per_subtable_and_its_singleton_options(monkeypatch, numbers,
                                                                       singletons):
    """MOD(t, minutes, ss, sm, mf): the minutes become each sub-table's limit in seconds
    (no limit for the whole protection unless the job has one); singleton protection unless
    all three singleton options are 0."""
    import tabsdc.io.argus._protect as protect_module
    from tests.tabsdc.test_modular import twin_table

    seen = {}

    def spy(table, method, cost, **options):
        seen.update(options, method=method)
        raise Called

    monkeypatch.setattr(protect_module, "suppress", spy)
    with pytest.raises(Called):
        protect_module.protect(twin_table(), "MOD", numbers)
    assert seen["method"] == "modular" and seen["subtable_limit"] == 3.0
    assert seen["time_limit"] is None and seen["singletons"] is singletons
    with pytest.raises(Called):
        protect_module.protect(twin_table(), "MOD", numbers, time_limit=40.0)
    assert seen["subtable_limit"] == 3.0 and seen["time_limit"] == 40.0
