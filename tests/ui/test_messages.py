"""Every bad request gets a 4xx and a sentence in the page's words: no HTTP 500, no
Python error text, no server path, and a refused step blocks the steps after it."""

from __future__ import annotations

import json

import pytest

from tests.ui.conftest import SURVEY
from tests.ui.test_app import call, new_session
from tests.ui.test_session import wait

#: Words of Python or of the server that a statistician should never read.
PYTHON_WORDS = ("invalid literal", "None", "nan", "Traceback", "/tmp", "Error:", "KeyError",
                "cancelled: cancelled", "negative='absolute'", "float()", "int()")
SMALL = b"region,size,turnover\nN,s,5\nN,m,-7\nS,s,9\nS,m,1\nS,m,4\nN,s,6\n"


def sentence(status: int, data: dict) -> str:
    assert 400 <= status < 500, (status, data)
    message = data["error"]
    assert len(message.split()) >= 4 and not any(w in message for w in PYTHON_WORDS), message
    return message


@pytest.mark.parametrize("name", ["..", ".", "x" * 300 + ".csv", "a/../../b.csv", "\\..\\x.csv",
                                  "con.csv\x00.txt", " "])
def test_any_upload_name_gets_a_sentence_never_500(served, name):
    from urllib.parse import quote

    base = new_session(served)
    status, data = call(f"{base}/upload?name={quote(name)}", b"a,b\n1,2\n")
    if status == 200:
        assert data["rows"] == 1
        session = served.sessions[base.rsplit("/", 1)[1]]
        assert [p.parent for p in (session.folder / "uploads").iterdir()] == [
            session.folder / "uploads"]
    else:
        sentence(status, data)


def ruled(served, body: bytes = SMALL, negative: str = "keep") -> str:
    base = new_session(served)
    assert call(base + "/upload?name=small.csv", body)[0] == 200
    status, data = call(base + "/table", {"data": {"dims": ["region", "size"],
                                                   "value": "turnover",
                                                   "negative": negative}})
    assert status == 200, data
    return base


@pytest.mark.parametrize("path,body,expected", [
    ("/protect", {"method": "rounding", "rule": "controlled"},
     "rounding base: the box is empty; type a whole number of at least 2"),
    ("/protect", {"method": "rounding", "base": "five"},
     "rounding base: 'five' is not a number; type a whole number of at least 2"),
    ("/protect", {"method": "suppression", "time_limit": "-1"},
     "time limit (s): '-1' cannot be used; type a number above 0, or leave the box empty"),
    ("/protect", {"method": "cta", "seed": "1.5"},
     "seed: '1.5' cannot be used; type a whole number, or leave the box empty"),
    ("/protect", {"method": "suppression", "algorithm": "simplex"},
     "unknown suppression method 'simplex'; choose one of"),
    ("/protect", {"method": "magic"}, "unknown protection 'magic'; choose one of"),
    ("/rules", {"rules": {"freq": ""}},
     "minimum frequency: n: the box is empty; type a whole number of at least 1"),
    ("/rules", {"rules": {"p": "ten"}}, "p% rule: p: 'ten' is not a number; type a number"),
    ("/rules", {"rules": {"nk": [9, 80]}}, "(n,k) rule: n = 9 is larger than 5"),
    ("/rules", {"rules": "p=10"}, "the request's 'rules' must be a JSON object"),
    ("/bases", {"candidates": ["2", "x"]}, "candidate bases: 'x' is not a number"),
    ("/download/everything", None, "unknown download 'everything'; choose one of"),
])
def test_bad_choices_get_a_sentence(served, path, body, expected):
    base = ruled(served)
    call(base + "/rules", {"rules": {"freq": 3}})
    status, data = call(base + path, body)
    assert expected in sentence(status, data)


def test_negative_contributions_are_a_choice_of_the_page(served):
    base = ruled(served)
    status, data = call(base + "/rules", {"rules": {"p": 10}})
    message = sentence(status, data)
    assert message.endswith("on step 1 Data, set Negative contributions to 'use their "
                            "absolute values for the rules', then build the table again")
    base = ruled(served, negative="absolute")
    status, data = call(base + "/rules", {"rules": {"p": 10}})
    assert status == 200 and data["primary"] > 0
    status, script = call(base + "/script")
    assert status == 200 and "negative='absolute'" in script["text"]


def test_refused_rules_block_protection_until_corrected(served):
    base = ruled(served, negative="absolute")
    assert call(base + "/rules", {"rules": {"p": 10}})[0] == 200
    status, data = call(base + "/rules", {"rules": {"p": 110}})
    assert sentence(status, data) == "p % rule needs 0 < p <= 100, not 110.0"
    status, data = call(base + "/protect", {"method": "suppression", "algorithm": "heuristic"})
    assert sentence(status, data) == ("the rules are not valid (p % rule needs 0 < p <= 100, "
                                      "not 110.0): correct them on step 3 Rules first")
    assert "rules = apply_rules(" not in call(base + "/script")[1]["text"]
    assert call(base + "/rules", {"rules": {"p": 20}})[0] == 200
    status, data = call(base + "/protect", {"method": "suppression", "algorithm": "heuristic"})
    assert status == 200
    session = served.sessions[base.rsplit("/", 1)[1]]
    assert wait(session)["state"] == "done"
    assert "PPercentRule(p=20.0)" in call(base + "/script")[1]["text"]


def test_a_table_that_cannot_be_built_leaves_none(served):
    base = ruled(served)
    assert call(base + "/rules", {"rules": {"freq": 3}})[0] == 200
    status, data = call(base + "/table", {"data": {"dims": ["region"], "value": "region"}})
    first = sentence(status, data)
    status, data = call(base + "/rules", {"rules": {"freq": 3}})
    assert sentence(status, data).startswith(f"the table could not be built ({first})")


def test_a_cancelled_job_says_so_once(served):
    base = new_session(served)
    assert call(base + "/upload?name=survey.csv", SURVEY.read_bytes())[0] == 200
    call(base + "/table", {"data": {"dims": ["A88", "NUTS3"], "value": "TURNOVER"},
                           "hierarchies": {"A88": {"kind": "levels", "columns": ["A10", "A21"]},
                                           "NUTS3": {"kind": "levels",
                                                     "columns": ["NUTS1", "NUTS2"]}}})
    call(base + "/rules", {"rules": {"p": 10, "freq": 3}})
    status, job = call(base + "/protect", {"method": "suppression", "algorithm": "optimal",
                                           "time_limit": "600"})
    assert status == 200 and job["state"] == "running"
    status, job = call(base + "/cancel", {})
    assert (job["state"], job["error"]) == ("cancelled", None)
    status, data = call(base + "/check")
    assert sentence(status, data) == "protect the table first (step 4 Protect)"


def test_an_internal_failure_is_a_500_with_a_sentence(served, monkeypatch):
    from tabsdc.ui._session import Session

    def broken(self):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(Session, "job_state", broken)
    status, data = call(new_session(served) + "/job")
    assert status == 500
    assert data["error"].startswith("the app failed (ZeroDivisionError: division by zero); "
                                    "the session is kept")


def test_the_json_of_every_answer_is_an_object(served):
    base = new_session(served)
    for path in ("/state", "/job", "/ping"):
        status, data = call(base + path)
        assert status == 200 and isinstance(data, dict), json.dumps(data)
