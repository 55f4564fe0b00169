"""time_limit and progress in every suppression method.

The deadline is driven by a clock that advances one second per reading, so where each
method stops is deterministic (no wall-clock assertions).
"""

import itertools

import numpy as np
import pandas as pd
import pytest

from tabsdc import Table
from tabsdc._progress import Deadline
from tabsdc.suppression import METHODS, choose_method, suppress
from tests.tabsdc.test_parallel import (
    small_hierarchical_table,
    small_table_run,
    suppressed_small_table,
)


def ticking(seconds: float) -> Deadline:
    """A deadline of ``seconds`` on a clock that moves one second per reading."""
    ticks = itertools.count()
    return Deadline(seconds, clock=lambda: float(next(ticks)))


def grid_with_primaries(size: int = 8, seed: int = 1) -> Table:
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    frame = pd.DataFrame({"r": r.ravel().astype(str), "c": c.ravel().astype(str),
                          "value": rng.integers(1, 100, size * size).astype(float)})
    table = Table.from_aggregated(frame, ["r", "c"])
    chosen = rng.choice(np.flatnonzero(~table.total_cells), size, replace=False)
    status = np.full(table.n_cells, "s", dtype=object)
    status[chosen] = "u"
    level = np.zeros(table.n_cells)
    level[chosen] = 0.2 * table.values[chosen]
    return table.with_columns(status=status, lpl=level, upl=level)


@pytest.fixture(scope="module")
def table() -> Table:
    return small_hierarchical_table(4)


@pytest.mark.parametrize("method", [m for m in METHODS if m not in ("auto", "network")])
def test_every_method_says_when_the_limit_came_before_any_pattern(table, method):
    result = suppress(table, method, time_limit=ticking(3))
    assert result.status == "no pattern" and result.stats.time_limited
    assert result.audit is None and not result.protected
    assert not result.secondary.any()
    assert result.suppressed.all()  # fail safe: writing the table out publishes nothing
    assert "no protecting pattern was complete yet: every cell is withheld" in result.summary()
    assert result.to_dict()["status"] == "no pattern" and result.to_frame().empty


def test_network_method_stops_too():
    result = suppress(grid_with_primaries(), "network", time_limit=ticking(3))
    assert result.status == "no pattern" and result.stats.time_limited


def test_heuristic_cut_during_clean_up_keeps_a_protecting_pattern(table):
    # routing needs about 190 clock readings here, the whole run about 370
    limited = suppress(table, "heuristic", time_limit=ticking(280))
    full = suppressed_small_table(4, "heuristic")  # the same table, without a limit
    assert limited.status == "feasible" and limited.stats.time_limited
    assert limited.protected and full.protected and not full.stats.time_limited
    assert limited.secondary.sum() > full.secondary.sum()  # the clean-up was cut short
    assert "the best protecting pattern found so far" in limited.summary()
    assert "of the certified lower bound" in limited.summary()


def test_optimal_under_the_limit_is_never_called_optimal(table):
    result = suppress(table, "optimal", time_limit=ticking(1000))
    assert result.status == "feasible" and result.stats.time_limited and result.protected
    assert 0 < result.stats.gap < 1 and result.stats.bound < result.stats.objective


def test_a_real_time_limit_on_a_table_that_needs_longer_is_reported():
    result = suppress(small_hierarchical_table(seed=9), "optimal", time_limit=0.05)
    assert result.stats.time_limited and result.status in ("feasible", "no pattern")


def test_progress_lines_name_the_phase_and_close_with_the_count(table):
    result, lines = small_table_run(4, "heuristic")  # the module's table
    n_reqs = sum(1 for lev in ("lpl", "upl")
                 for x in table.cells.loc[table.cells["status"] == "u", lev] if x > 0)
    assert lines[0].startswith("lower bound: ")  # the certified bound comes first
    assert f"routing: 0 of {n_reqs:,} requirements" in lines
    assert any(line.startswith(f"routing: {n_reqs:,} of {n_reqs:,} requirements done in")
               for line in lines)
    assert any(line.startswith("clean-up: 0 of ") for line in lines)
    assert result.protected


def test_auto_picks_by_size_and_says_so(table):
    lines: list[str] = []
    result = suppress(table, progress=lines.append, time_limit=ticking(1000))
    assert result.method == "optimal" and "260 cells <= 2,000" in result.reason
    assert lines[0].startswith("method auto: 260 cells")
    assert "method chosen by auto" in result.summary()
    assert choose_method(grid_with_primaries(60))[0] == "guided"  # 3,721 cells
    assert choose_method(grid_with_primaries(150))[0] == "guided"  # 22,801 cells, 2-D
    codes = [f"c{i}" for i in range(12)]
    grid = pd.MultiIndex.from_product([codes] * 4, names=list("abcd")).to_frame(index=False)
    four_d = Table.from_aggregated(grid.assign(value=1.0), list("abcd"))  # 13^4 cells
    method, reason = choose_method(four_d)
    assert method == "hypercube" and "28,561 cells > 20,000 in 4 dimensions" in reason


def test_optimal_speaks_at_once_then_through_its_incumbent():
    """The optimal method's first line comes before any work (its incumbent by routing can
    take half a minute on a large table), then the routing's own lines, then the rounds."""
    table = grid_with_primaries()
    lines: list[str] = []
    result = suppress(table, "optimal", progress=lines.append)
    n_reqs = sum(1 for lev in ("lpl", "upl")
                 for x in table.cells.loc[table.cells["status"] == "u", lev] if x > 0)
    assert lines[0] == (f"optimal: {n_reqs} protection requirements on {table.n_cells} cells; "
                        "first a protecting pattern by routing (the incumbent)")
    assert lines[1] == f"routing: 0 of {n_reqs:,} requirements"
    incumbent = next(i for i, line in enumerate(lines) if line.startswith("incumbent: cost "))
    first_round = next(i for i, line in enumerate(lines) if "round 1" in line)
    assert 1 < incumbent < first_round
    assert result.protected and result.status == "optimal"
