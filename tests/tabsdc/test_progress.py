"""The deadline and the progress lines (driven by a fake clock: no wall-clock assertions)."""

import itertools

import pytest

from tabsdc._errors import InputError
from tabsdc._progress import Deadline, ProgressReporter, format_seconds


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_deadline_counts_from_its_start_and_records_that_it_was_hit():
    clock = FakeClock()
    deadline = Deadline(30.0, clock=clock)
    clock.now += 10.0
    assert deadline.remaining() == pytest.approx(20.0)
    assert not deadline.expired and not deadline.hit
    assert deadline.solver_limit() == pytest.approx(20.0)
    assert deadline.solver_limit(cap=5.0) == pytest.approx(5.0)
    clock.now += 25.0
    assert deadline.remaining() == 0.0 and deadline.expired and deadline.hit
    assert deadline.solver_limit() == pytest.approx(0.01)  # a solver still returns its best


def test_no_limit_never_expires_and_gives_solvers_no_limit():
    clock = FakeClock()
    deadline = Deadline(None, clock=clock)
    clock.now += 1e9
    assert not deadline.expired and deadline.solver_limit() is None
    assert deadline.share(0.5).solver_limit() is None


def test_share_is_a_fraction_of_what_is_left():
    clock = FakeClock()
    deadline = Deadline(100.0, clock=clock)
    clock.now += 40.0
    part = deadline.share(0.5)
    assert part.remaining() == pytest.approx(30.0)
    clock.now += 31.0
    assert part.expired and not deadline.expired


@pytest.mark.parametrize("bad", [0, -5.0, float("nan")])
def test_a_non_positive_limit_is_refused(bad):
    with pytest.raises(InputError, match="time_limit"):
        Deadline(bad)


def test_lines_come_at_once_then_by_time_with_rate_and_time_left():
    clock = FakeClock()
    lines: list[str] = []
    reporter = ProgressReporter(lines.append, "routing", 1000, unit="requirements",
                                clock=clock)
    assert lines == ["routing: 0 of 1,000 requirements"]
    for step in range(1, 320):  # one item every 0.125 s (exact in binary): 40 s in all
        clock.now += 0.125
        reporter.update(step, "5 cells suppressed")
    # a line after 2 s, then every 10 s: at 2, 12, 22, 32 s
    assert len(lines) == 5
    assert lines[1] == ("routing: 16 of 1,000 requirements (2 %), 8/s, about 2 min 3 s "
                        "left; 5 cells suppressed")
    assert lines[-1].startswith("routing: 256 of 1,000 requirements (26 %), 8/s, about "
                                "1 min 33 s left")
    reporter.finish(320, "time limit reached")
    assert lines[-1] == ("routing: 320 of 1,000 requirements done in 40 s (stopped early); "
                         "time limit reached")


def test_an_empty_loop_says_nothing():
    lines: list[str] = []
    reporter = ProgressReporter(lines.append, "routing", 0)
    reporter.update(0)
    reporter.finish()
    assert lines == []


def test_nothing_is_computed_without_a_receiver():
    ticks = itertools.count()
    reporter = ProgressReporter(None, "x", 10, clock=lambda: float(next(ticks)))
    reporter.update(5)
    reporter.finish()
    assert next(ticks) == 0  # the clock was never read


@pytest.mark.parametrize("seconds, text", [(4.4, "4 s"), (200, "3 min 20 s"), (120, "2 min"),
                                           (7500, "2 h 5 min"), (float("inf"), "unknown")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_long_solves_report_while_they_run():
    """Controlled rounding and CTA (one long solve each) send a line at once, lines while
    they run and one when done, through the toolkit's one progress signature."""
    import pandas as pd

    from tabsdc import Table
    from tabsdc._progress import heartbeat
    from tabsdc.cta import adjust
    from tabsdc.rounding import round_table

    cells = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["1", "2", "1", "2"],
                          "value": [10.0, 5.0, 7.0, 8.0]})
    table = Table.from_aggregated(cells, ["r", "c"])
    table = table.with_columns(status=["s"] * 4 + ["u"] + ["s"] * 4,
                               lpl=[0.0] * 4 + [2.0] + [0.0] * 4,
                               upl=[0.0] * 4 + [2.0] + [0.0] * 4)
    lines: list[str] = []
    round_table(table, 5, time_limit=30, progress=lines.append)
    assert lines[0] == "controlled rounding: started (time limit 30 s)"
    assert any(line.startswith("controlled rounding: done in") for line in lines)
    lines.clear()
    adjust(table, "milp", progress=lines.append)
    assert lines[0] == "adjustment (milp): started" and "done in" in lines[-1]
    ticks = []
    with heartbeat(ticks.append, "long solve", 60, first=0.01, interval=0.01):
        import time

        time.sleep(0.2)
    middle = ticks[1:-1]
    assert len(middle) >= 3 and "so far, at most" in middle[0] and "left" in middle[0]


def test_remaining_of_a_share_counts_from_the_start():
    ticks = iter([0.0, 20.0, 20.0, 70.0])
    deadline = Deadline(60.0, clock=lambda: next(ticks))
    assert deadline.remaining(0.5) == 10.0            # half of 60 s, 20 s used
    assert deadline.solver_limit(share=0.5) == 10.0
    assert deadline.remaining(0.5) == 0.0             # never below 0
    assert Deadline(None).remaining(0.5) == float("inf")
