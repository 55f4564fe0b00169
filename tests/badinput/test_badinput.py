"""The bad-input suite: every case of ``cases.py`` gets a clear answer and harms nothing."""

from pathlib import Path

import pytest

from microsdc._errors import MicroSDCError
from sdcreport._files import OutputPathError
from tabsdc._errors import TabSDCError

from .cases import CASES, CATEGORIES, Case, run_case, write_inputs

#: Error types of the toolkit an API case may raise.
TOOLKIT_ERRORS = (TabSDCError, MicroSDCError, OutputPathError)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def _params():
    for case in CASES:
        marks = ([pytest.mark.xfail(strict=case.strict, reason=case.xfail)] if case.xfail
                 else [])
        yield pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input_is_answered_clearly_and_harms_nothing(case: Case, tmp_path):
    write_inputs(tmp_path, case)
    before = _snapshot(tmp_path)
    outcome = run_case(case, tmp_path)
    after = _snapshot(tmp_path)
    assert not outcome.traceback, outcome.message
    if case.accepted:
        assert outcome.status in (0, 1) or (outcome.status is None and outcome.error is None)
        assert set(after) > set(before) or case.id.endswith("force")
    elif case.verdict:
        assert outcome.status == 1, outcome.message
        assert case.expect in outcome.message
        assert {name: after.get(name) for name in before} == before  # inputs unchanged
    if case.accepted or case.verdict:
        if case.check is not None:
            case.check(tmp_path, outcome)
        return
    if callable(case.run):
        assert outcome.error is not None, "no error raised"
        error_type = _error_class(outcome.error)
        assert issubclass(error_type, TOOLKIT_ERRORS), outcome.error
    else:
        assert outcome.status == 2, outcome.message
    assert case.expect in outcome.message
    assert after == before  # no output written, every input byte-identical


def _error_class(qualified: str) -> type:
    import importlib

    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_suite_has_a_hundred_distinct_cases_in_every_category():
    assert len({c.id for c in CASES}) == len(CASES) >= 100
    assert {c.category for c in CASES} == set(CATEGORIES)
    assert all(sum(c.category == name for c in CASES) >= 5 for name in CATEGORIES)
    assert len([c for c in CASES if not c.accepted and not c.verdict]) >= 80
