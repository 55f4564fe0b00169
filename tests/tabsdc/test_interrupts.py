"""Ctrl-C during a search (tabsdc._interrupts): the search stops as at its time limit and the
method keeps its best result, audited; or, in mode "raise" and without any result, the
interrupt goes on. Interrupts are simulated deterministically: a SIGINT raised by the test
itself (``signal.raise_signal``) at a chosen progress line or step, or an interrupt marked
before a solve (``interrupts.request``)."""

import signal
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import tabsdc._interrupts as interrupts
from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules
from tabsdc._errors import InputError
from tabsdc._progress import Deadline
from tabsdc.audit import audit
from tabsdc.solver import LinearProgram, SolveOptions
from tabsdc.solver._highs import WATCHED_NONZEROS, HighsModel
from tabsdc.solver._isolated import solve_isolated
from tabsdc.suppression import suppress


@pytest.fixture(autouse=True)
def python_handles_ctrl_c():
    """Python's own Ctrl-C handler, as in a terminal: a process started in the background
    by a shell without job control inherits SIGINT ignored."""
    kept = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, kept)


def sigint() -> None:
    """A Ctrl-C, delivered to this process's handler before the next line of Python runs."""
    signal.raise_signal(signal.SIGINT)


def interrupt_after(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> None:
    """Make ``module.name`` send this process a Ctrl-C once it has returned."""
    real = getattr(module, name)

    def then_interrupted(*args, **kwargs):
        found = real(*args, **kwargs)
        sigint()
        return found

    monkeypatch.setattr(module, name, then_interrupted)


def hard_milp() -> LinearProgram:
    """A 0-1 multi-knapsack HiGHS does not solve in a minute (400 columns, 200 rows)."""
    rng = np.random.default_rng(0)
    n, m = 400, 200
    A = sp.random(m, n, density=0.1, random_state=1,
                  data_rvs=lambda k: rng.integers(1, 30, k)).tocsr()
    return LinearProgram(c=-rng.integers(1, 50, n).astype(float), A=A,
                         row_lower=np.full(m, -np.inf),
                         row_upper=rng.integers(50, 200, m).astype(float),
                         col_lower=np.zeros(n), col_upper=np.ones(n),
                         integrality=np.ones(n, dtype=bool))


def ruled_table(records: int = 3000, a: int = 25, b: int = 20) -> Table:
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"a": rng.integers(0, a, records).astype(str),
                         "b": rng.integers(0, b, records).astype(str),
                         "v": rng.lognormal(3, 1.5, records).round(1)})
    return apply_rules(Table.from_microdata(data, ["a", "b"], "v"),
                       [PPercentRule(15), FrequencyRule(3)]).table


def interrupt_at(prefix: str, lines: list[str]):
    """A progress callable that sends one Ctrl-C at the first line starting with ``prefix``."""
    def progress(line: str) -> None:
        lines.append(line)
        if line.startswith(prefix) and "SIGINT" not in lines:
            lines.append("SIGINT")
            sigint()
    return progress


# -- the mechanism ------------------------------------------------------------------------------


def test_an_unknown_mode_is_an_input_error_worded_as_every_choice():
    with pytest.raises(InputError, match="^unknown mode 'ignore'; choose one of keep, raise$"):
        with interrupts.on_interrupt("ignore"):
            pass


def test_a_ctrl_c_in_a_search_expires_its_deadlines_and_is_read_afterwards():
    with interrupts.on_interrupt("keep"):
        with interrupts.stoppable() as search:
            deadline = Deadline(3600.0)
            assert not deadline.expired and deadline.solver_limit() > 3000
            sigint()
            assert deadline.expired and deadline.remaining() == 0.0
            assert deadline.solver_limit() == 0.01 and deadline.why.startswith("interrupted")
            with interrupts.unstoppable():  # e.g. the audit of a sub-table: runs normally
                assert not Deadline(3600.0).expired
        assert search.interrupted
        assert not interrupts.stopping()  # the search is over: nothing else is stopped
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not interrupts.interrupted()


def test_mode_raise_raises_once_the_search_has_stopped():
    reached = []
    with interrupts.on_interrupt("raise"), pytest.raises(KeyboardInterrupt):
        with interrupts.stoppable():
            sigint()
            reached.append("after the Ctrl-C, the search winds down")
    assert reached


def test_a_second_ctrl_c_or_one_outside_a_search_raises_at_once():
    with interrupts.on_interrupt("keep"):
        with pytest.raises(KeyboardInterrupt):
            sigint()  # no search running
        with pytest.raises(KeyboardInterrupt), interrupts.stoppable():
            sigint()
            sigint()


def test_an_error_after_the_interrupt_is_reported_as_the_interrupt():
    with interrupts.on_interrupt("keep"), pytest.raises(KeyboardInterrupt) as caught:
        with interrupts.stoppable():
            sigint()
            raise RuntimeError("no solution")
    assert "no solution" in str(caught.value)


def test_sigterm_and_sighup_are_ctrl_c_when_asked_for_and_the_signal_is_told():
    handlers = {signum: signal.getsignal(signum) for signum in interrupts.STOP_SIGNALS}
    assert set(interrupts.STOP_SIGNALS) == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    with interrupts.on_interrupt("keep", signals=interrupts.STOP_SIGNALS):
        with interrupts.stoppable() as search:
            signal.raise_signal(signal.SIGTERM)  # stops the search, raises nothing
            assert Deadline(3600.0).expired
        assert search.interrupted and interrupts.received() == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):  # outside a search: at once
            signal.raise_signal(signal.SIGHUP)
    assert interrupts.received() == signal.SIGTERM  # the first, kept after the block
    assert {signum: signal.getsignal(signum) for signum in handlers} == handlers
    with interrupts.on_interrupt("keep"):  # by default only Ctrl-C is taken
        assert signal.getsignal(signal.SIGTERM) == handlers[signal.SIGTERM]
        assert interrupts.received() is None


def test_other_threads_and_foreign_handlers_are_left_alone():
    seen = []

    def work():
        with interrupts.stoppable() as search:
            seen.append(interrupts.watching())
        seen.append(search.interrupted)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [False, False]
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append("mine"))
    try:
        with interrupts.stoppable() as search:
            assert not interrupts.watching()
            sigint()
        assert seen[-1] == "mine" and not search.interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


# -- HiGHS, in this process and in the worker ---------------------------------------------------


def test_an_interrupted_highs_solve_returns_at_once_with_its_state():
    milp = hard_milp()
    with interrupts.on_interrupt("keep"), interrupts.stoppable() as search:
        interrupts.request()
        result = HighsModel(milp, time_limit=120.0).solve()
    assert search.interrupted
    assert result.message == "Interrupted by user"  # HiGHS's kInterrupt, not its time limit
    assert not result.optimal and result.status in ("feasible", "no_solution")


def test_only_lps_that_may_take_long_carry_the_callbacks():
    rng = np.random.default_rng(0)
    n, m = 5000, 2000  # 40,000 nonzeros: HiGHS takes thousands of iterations
    A = sp.random(m, n, density=0.004, random_state=1,
                  data_rvs=lambda k: rng.integers(1, 30, k)).tocsr()
    large = LinearProgram(c=-rng.integers(1, 50, n).astype(float), A=A,
                          row_lower=np.full(m, -np.inf),
                          row_upper=rng.integers(50, 200, m).astype(float),
                          col_lower=np.zeros(n), col_upper=np.ones(n))
    small = LinearProgram(c=[-1.0, -2.0], A=np.array([[1.0, 1.0]]), row_lower=[-np.inf],
                          row_upper=[1.0], col_lower=[0, 0], col_upper=[1, 1])
    assert A.nnz >= WATCHED_NONZEROS
    with interrupts.on_interrupt("keep"), interrupts.stoppable():
        interrupts.request()
        stopped = HighsModel(large).solve()
        quick = HighsModel(small).solve()
    assert stopped.message == "Interrupted by user" and stopped.iterations == 0
    assert quick.optimal and quick.objective == -2.0


def test_a_solve_in_the_worker_is_not_started_after_the_interrupt():
    with interrupts.on_interrupt("keep"), interrupts.stoppable():
        interrupts.request()
        result = solve_isolated(hard_milp(), SolveOptions(time_limit=120.0))
    assert result.status == "no_solution" and "interrupted" in result.message


def test_a_ctrl_c_reaches_the_worker_which_answers_with_its_incumbent():
    """The worker is in its own process group: the caller tells it to stop."""
    milp = hard_milp()
    timer = threading.Timer(3.0, sigint)
    with interrupts.on_interrupt("keep"), interrupts.stoppable() as search:
        timer.start()
        result = solve_isolated(milp, SolveOptions(time_limit=120.0))
    timer.join()
    assert search.interrupted
    assert result.message == "Interrupted by user", result.message
    assert result.status == "feasible" and result.x is not None
    x = result.x
    assert np.all(milp.A @ x <= milp.row_upper + 1e-6)  # the incumbent is feasible
    assert np.allclose(x, np.round(x))
    # the worker serves the next solve as usual
    small = LinearProgram(c=[-1.0, -1.0], A=np.array([[2.0, 2.0]]), row_lower=[-np.inf],
                          row_upper=[3.0], col_lower=[0, 0], col_upper=[5, 5],
                          integrality=[True, True])
    assert solve_isolated(small, SolveOptions(time_limit=30.0)).objective == -1.0


# -- suppression --------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "line"), [("optimal", "LP round 1"),
                                               ("heuristic", "clean-up")])
def test_suppression_keeps_its_best_audit_clean_pattern(method, line):
    table = ruled_table()
    lines: list[str] = []
    result = interrupt_for(table, method, line, lines)
    assert "SIGINT" in lines and result.interrupted
    assert result.stats.time_limited and result.status == "feasible"
    assert result.protected
    assert audit(result.table).protected  # an independent audit of the kept pattern
    assert result.to_dict()["interrupted"] and "INTERRUPTED" in result.summary()
    said = lines.index("interrupted (Ctrl-C): auditing the best pattern found so far")
    assert all(line.startswith("audit") for line in lines[said + 1:])  # then the audit
    if method == "optimal":
        assert result.stats.rounds == 0 and result.stats.gap > 0  # stopped before the master
    complete = interrupt_for(table, method, "no such line", [])
    assert not complete.interrupted and complete.protected
    assert complete.stats.objective <= result.stats.objective + 1e-9


def interrupt_for(table, method, line, lines):
    with interrupts.on_interrupt("keep"):
        return suppress(table, method, progress=interrupt_at(line, lines))


def test_without_on_interrupt_a_ctrl_c_is_pythons_keyboard_interrupt():
    # a script looping over tables stops at the first Ctrl-C, as any Python program
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        suppress(ruled_table(), "heuristic", progress=interrupt_at("clean-up", lines))
    assert "SIGINT" in lines and not interrupts.interrupted()


def test_suppression_without_a_complete_pattern_raises_the_interrupt():
    with pytest.raises(KeyboardInterrupt, match="no protecting pattern was complete"):
        interrupt_for(ruled_table(), "heuristic", "routing: 0 of", [])


def test_mode_raise_stops_before_the_audit(monkeypatch):
    import tabsdc.suppression as suppression

    audits = []
    monkeypatch.setattr(suppression, "audit", lambda *a, **k: audits.append(1))
    with interrupts.on_interrupt("raise"), pytest.raises(KeyboardInterrupt):
        suppression.suppress(ruled_table(), "heuristic", progress=interrupt_at("clean-up", []))
    assert audits == []


def test_a_second_ctrl_c_during_the_audit_loses_the_result(monkeypatch):
    import tabsdc.suppression as suppression

    def audit_interrupted(*args, **kwargs):
        sigint()
        raise AssertionError("the second Ctrl-C did not stop the audit")

    monkeypatch.setattr(suppression, "audit", audit_interrupted)
    with interrupts.on_interrupt("keep"), pytest.raises(KeyboardInterrupt):
        suppression.suppress(ruled_table(), "heuristic", progress=interrupt_at("clean-up", []))


# -- controlled tabular adjustment --------------------------------------------------------------


def cta_table() -> Table:
    return ruled_table(400, 10, 8)


def test_the_cta_heuristic_keeps_its_incumbent(monkeypatch):
    import tabsdc.cta._heuristic as heuristic
    from tabsdc.cta import adjust

    real = heuristic.improve

    def interrupted_improve(*args, **kwargs):  # Ctrl-C once the first adjustment exists
        sigint()
        return real(*args, **kwargs)

    monkeypatch.setattr(heuristic, "improve", interrupted_improve)
    with interrupts.on_interrupt("keep"):
        result = adjust(cta_table(), "heuristic", seed=0, time_limit=60)
    assert result.interrupted and result.verification.passed
    assert result.details["trials"] == 0  # no flip was tried after the Ctrl-C
    assert result.to_dict()["interrupted"] and "INTERRUPTED" in result.summary()


def test_the_cta_milp_keeps_its_solution_and_polishes_it(monkeypatch):
    import tabsdc.cta._milp as milp
    from tabsdc.cta import adjust

    interrupt_after(monkeypatch, milp, "solve_with_cuts")
    with interrupts.on_interrupt("keep"):
        result = adjust(cta_table(), "milp")
    assert result.interrupted and result.verification.passed
    assert "interrupted (Ctrl-C)" in result.message


# -- controlled rounding ------------------------------------------------------------------------


def counts_table() -> Table:
    table = ruled_table(400, 10, 8)
    return table.with_columns(value=table.cells["freq"].to_numpy(float))


def test_controlled_rounding_keeps_the_milps_rounding(monkeypatch):
    import tabsdc.rounding._controlled as controlled
    from tabsdc.rounding import round_table

    interrupt_after(monkeypatch, controlled, "solve")
    with interrupts.on_interrupt("keep"):
        result = round_table(counts_table(), 5, engine="milp", audit=False)
    assert result.interrupted and result.additive and result.exists
    assert np.all(result.rounded % 5 == 0)
    assert result.to_dict()["interrupted"] and "INTERRUPTED" in result.summary()


def test_controlled_rounding_without_a_rounding_raises_the_interrupt(monkeypatch):
    import tabsdc.rounding._controlled as controlled
    from tabsdc.rounding import round_table

    real = controlled.solve

    def interrupted_first(*args, **kwargs):
        sigint()
        return real(*args, **kwargs)  # in the worker (time limit): not even started

    monkeypatch.setattr(controlled, "solve", interrupted_first)
    with interrupts.on_interrupt("keep"), \
            pytest.raises(KeyboardInterrupt, match="no controlled rounding was found"):
        round_table(counts_table(), 5, engine="milp", time_limit=60, audit=False)
