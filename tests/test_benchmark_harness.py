"""The benchmarks' harness times a run untraced and samples its resident memory."""

import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from harness import measure  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(),
                                reason="the resident memory is read from /proc")


def test_the_peak_holds_what_the_run_allocated_and_nothing_is_traced():
    def run():
        assert not tracemalloc.is_tracing()  # tracing slows small allocations
        block = np.ones(40_000_000)  # 305 MiB, written to, so resident
        time.sleep(0.3)  # held over many samples, on a loaded machine too
        return float(block.sum())

    threads = threading.active_count()
    row = measure("ones", "sum", run)
    assert row.result == 40_000_000.0
    assert 250 < row.peak_mib < 1_000
    assert row.seconds > 0
    assert threading.active_count() == threads  # the sampler has stopped


def test_a_run_that_allocates_nothing_has_a_peak_near_zero():
    assert measure("nothing", "pass", lambda: None).peak_mib < 50
