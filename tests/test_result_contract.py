"""Every result class of the toolkit keeps the contract of :mod:`sdcreport.contract`."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from sdcreport import Check, Report, Result, Section, TableResult
from tabsdc import FrequencyRule, PPercentRule, Table, apply_rules
from tabsdc.audit import audit, pq_interval_attack


def small_table() -> Table:
    """A 3x3 table (with totals) from 30 seeded records: some cells small, some dominated."""
    rng = np.random.default_rng(7)
    records = pd.DataFrame({"r": rng.choice(list("abc"), 30), "c": rng.choice(list("xyz"), 30),
                            "value": rng.pareto(1.5, 30) * 100})
    return Table.from_microdata(records, ["r", "c"], "value")


def hidden_table() -> Table:
    table = apply_rules(small_table(), FrequencyRule(2)).table
    status = table.cells["status"].to_numpy().copy()
    labels = table.cells.index
    for key in [("a", "x"), ("b", "x"), ("a", "y"), ("b", "y")]:
        status[labels.get_loc(key)] = "u" if key == ("a", "x") else "m"
    return table.with_columns(status=status)


def rules_result():
    return apply_rules(small_table(), [PPercentRule(10), FrequencyRule(2)])


def audit_result():
    return audit(hidden_table())


def pq_attack_result():
    table = hidden_table()
    check = audit(table, prior="pq", q=20)
    return pq_interval_attack(table, check.frame["lower"].to_numpy(),
                              check.frame["upper"].to_numpy())


def suppression_result():
    from tabsdc.suppression import suppress

    return suppress(rules_result().table, "optimal")


def rounding_result():
    from tabsdc.rounding import round_table

    table = small_table()
    return round_table(table.with_columns(value=table.cells["freq"].to_numpy(float)), 2)


def adjustment_result():
    from tabsdc.cta import adjust

    return adjust(rules_result().table, "milp")


#: (name, builder, is a result on a table, is a check)
RESULTS = [
    ("RulesResult", rules_result, True, False),
    ("AuditResult", audit_result, True, True),
    ("PQAttackResult", pq_attack_result, False, True),
    ("SuppressionResult", suppression_result, True, False),
    ("RoundingResult", rounding_result, True, False),
    ("AdjustmentResult", adjustment_result, True, True),
]


@pytest.mark.parametrize(("name", "build", "on_table", "is_check"), RESULTS,
                         ids=[r[0] for r in RESULTS])
def test_result_keeps_the_contract(name, build, on_table, is_check):
    result = build()
    assert type(result).__name__ == name
    assert isinstance(result, Result)
    assert isinstance(result.status, str) and result.status
    assert isinstance(result.seconds, float) and result.seconds >= 0
    assert isinstance(result.summary(), str) and result.summary()
    assert isinstance(result.to_frame(), pd.DataFrame)
    data = result.to_dict()
    assert data["status"] == result.status
    json.dumps(data)  # JSON-ready
    section = result.to_report()
    assert isinstance(section, Section)
    assert Report("contract").add(section).to_text()
    if on_table:
        assert isinstance(result, TableResult)
        assert isinstance(result.original, Table) and isinstance(result.table, Table)
    if is_check:
        assert isinstance(result, Check) and isinstance(result.passed, bool)
    assert dataclasses.is_dataclass(result)
    field = dataclasses.fields(result)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, field, None)


def test_the_verification_of_an_adjustment_is_a_check_with_a_summary_and_a_frame():
    verification = adjustment_result().verification
    assert isinstance(verification, Check) and verification.passed
    assert verification.summary().startswith("Verification of the adjustment: every check")
    frame = verification.to_frame()
    assert frame["passed"].all() and "protection" in frame.index
    json.dumps(verification.to_dict())
