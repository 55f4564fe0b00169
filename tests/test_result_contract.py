"""Every result class of the toolkit keeps the contract of :mod:`sdcreport._contract`: the
classes are found as the subclasses of :class:`sdcreport.ResultBase`."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from sdcreport import Check, Report, Result, ResultBase, Section, TableResult
from sdcreport._statuses import Status
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


def ckm_result():
    from tabsdc.ckm import build_ptable, perturb_counts

    rng = np.random.default_rng(3)
    records = pd.DataFrame({"r": rng.choice(list("abc"), 60), "c": rng.choice(list("xy"), 60)})
    return perturb_counts(records, ["r", "c"], build_ptable(3, 2.0, js=1), seed=2)


def perturbation_statistics():
    return ckm_result().statistics


def base_choice():
    from tabsdc.rounding import choose_base

    table = small_table()
    return choose_base(table.with_columns(value=table.cells["freq"].to_numpy(float)), (2, 3))


def small_count_result():
    from tabsdc.rounding import round_small_counts

    rng = np.random.default_rng(3)
    records = pd.DataFrame({"r": rng.choice(list("abcd"), 60), "c": rng.choice(list("xy"), 60),
                            "s": rng.choice(list("mf"), 60)})
    return round_small_counts(records, [["r", "c"], ["r", "s"]], base=3, seed=1)


def differencing_check():
    from tabsdc._differencing import differencing_check as check

    return check(hidden_table().with_columns(value=hidden_table().cells["freq"].to_numpy(float)),
                 1)


def magnitude_result():
    from tabsdc.ckm import FlexFunction, build_ptable, perturb_magnitudes

    rng = np.random.default_rng(3)
    records = pd.DataFrame({"r": rng.choice(list("abc"), 60), "c": rng.choice(list("xy"), 60),
                            "value": rng.lognormal(3, 1, 60)})
    return perturb_magnitudes(records, ["r", "c"], "value",
                              build_ptable(3, 1.0, kind="magnitude"),
                              FlexFunction(0.2, epsilon=(1, 0.5)), rules=PPercentRule(20),
                              mu_c=1.0, seed=2)


def adjustment_result():
    from tabsdc.cta import adjust

    return adjust(rules_result().table, "milp")


def multivariate_result():
    from tabsdc.cta import adjust_multivariate

    table = rules_result().table
    scaled = table.with_columns(value=table.values * 1.1)
    return adjust_multivariate([table, scaled], "milp", preserve="mean")


def verification():
    return adjustment_result().verification


def ipf_result():
    import scipy.sparse as sp

    from tabsdc.mdi import ipf

    margins = sp.csr_array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
    return ipf(np.ones(4), margins, np.array([3.0, 7.0, 4.0, 6.0]))


def table_set_result():
    from tabsdc import TableSet
    from tabsdc.suppression import suppress

    records = pd.DataFrame({"act": list("AAABCBABBCCCAC"), "reg": list("NSNNSNSNNESEEE"),
                            "size": list("11222221111112"),
                            "v": [37.0, 27, 10, 16, 13, 17, 7, 6, 3, 5, 23, 11, 40, 9]})
    tables = [apply_rules(Table.from_microdata(records, dims, "v"), FrequencyRule(3)).table
              for dims in (["act", "reg"], ["act", "size"])]
    return suppress(TableSet.from_tables(tables), "optimal")


def rounding_audit():
    return rounding_result().audit


def table_statistics():
    return rounding_result().statistics


def batch_result(tmp_path):
    import shutil
    from pathlib import Path

    from tabsdc.io.argus import run_batch

    job = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "data" / "argus" / "tableinput", job)
    arb = job / "TestTable.arb"
    arb.write_text(arb.read_text().replace("<GOINTERACTIVE>", "<SUPPRESS> CTA(1)\n"
                                           "<GOINTERACTIVE>"))
    return run_batch(arb)


def solve_result():
    import scipy.sparse as sp

    from tabsdc.solver import LinearProgram, solve

    return solve(LinearProgram(c=[3, 5], A=sp.csr_array([[1, 0], [0, 2], [3, 2]]),
                               row_lower=[-np.inf] * 3, row_upper=[4, 12, 18],
                               col_lower=[0, 0], col_upper=[np.inf, np.inf], sense="max"))


def microdata() -> tuple[pd.DataFrame, pd.DataFrame]:
    """200 seeded records of three skewed variables, and the same with 10 % noise."""
    rng = np.random.default_rng(3)
    x = pd.DataFrame(rng.lognormal(size=(200, 3)), columns=["a", "b", "c"])
    return x, x * (1 + 0.1 * rng.normal(size=x.shape))


def utility_report():
    from microsdc import information_loss

    return information_loss(*microdata(), seed=1)


def risk_report():
    from microsdc import disclosure_risk

    return disclosure_risk(*microdata(), seed=1)


def pil_result():
    from microsdc.utility import probabilistic_information_loss

    return probabilistic_information_loss(*microdata())


def ctbil_result():
    from microsdc.utility import ctbil

    x = pd.DataFrame({"a": ["u", "u", "v", "v"], "b": ["p", "q", "q", "p"]})
    return ctbil(x, x.assign(a=["u", "v", "v", "v"]))


def gini_comparison():
    from microsdc.utility import gini_comparison

    x, masked = microdata()
    return gini_comparison(x["a"], masked["a"], n_boot=50, seed=1)


def regression_comparison():
    from microsdc.utility import regression_comparison

    x, masked = microdata()
    return regression_comparison(x, masked, "a", ["b", "c"])


def study_result():
    from microsdc import run_study

    return run_study(microdata()[0], grid={"noise": (10.0, 100.0)}, replications=1, seed=1,
                     measures=("MAE", "brMAE"))


def mcd_estimate():
    from microsdc.utility import mcd

    return mcd(microdata()[0], n_starts=20, seed=1)


#: (name, builder, what ``original``/``table`` hold: a Table, a TableSet, tables or nothing,
#: is a check)
RESULTS = [
    ("RulesResult", rules_result, "table", False),
    ("AuditResult", audit_result, "table", True),
    ("DifferencingCheck", differencing_check, None, True),
    ("PQAttackResult", pq_attack_result, None, True),
    ("SuppressionResult", suppression_result, "table", True),
    ("RoundingResult", rounding_result, "table", False),
    ("RoundingAudit", rounding_audit, None, True),
    ("BaseChoice", base_choice, None, False),
    ("SmallCountResult", small_count_result, None, False),
    ("CKMResult", ckm_result, "table", False),
    ("PerturbationStatistics", perturbation_statistics, None, False),
    ("MagnitudeResult", magnitude_result, "table", False),
    ("TableStatistics", table_statistics, None, False),
    ("AdjustmentResult", adjustment_result, "table", True),
    ("MultivariateAdjustmentResult", multivariate_result, "tables", True),
    ("Verification", verification, None, True),
    ("IPFResult", ipf_result, None, False),
    ("TableSetResult", table_set_result, "table set", True),
    ("BatchResult", batch_result, None, True),
    ("SolveResult", solve_result, None, False),
    ("UtilityReport", utility_report, None, False),
    ("RiskReport", risk_report, None, False),
    ("PILResult", pil_result, None, False),
    ("CTBILResult", ctbil_result, None, False),
    ("GiniComparison", gini_comparison, None, False),
    ("RegressionComparison", regression_comparison, None, False),
    ("StudyResult", study_result, None, False),
    ("MCDEstimate", mcd_estimate, None, False),
]

#: Public classes that read like results (a ``summary()`` or ``to_dict()``) but are none
#: (the reason is the value).
NOT_RESULTS = {
    "Result": "the contract itself (sdcreport._contract)",
    "TableResult": "the contract itself (sdcreport._contract)",
    "Report": "the report that holds the results' sections",
    "Check": "the contract of a check (sdcreport._contract)",
    "Table": "the table, an input of every method",
    "PTable": "an input of the cell key method (built or read from a file), not the outcome "
              "of an operation",
}

#: Public classes named like results that are parts of a result, read through it, not
#: results of an entry point of their own (the reason is the value).
PARTS = {
    "Intervals": "the raw bounds inside AuditResult.intervals (status is per cell)",
    "ControlledOutcome": "controlled rounding's engine output, wrapped by round_table in a "
                         "RoundingResult",
    "SmallCountOutcome": "small-count rounding's engine output, inside SmallCountResult and "
                         "summarised in RoundingResult.note",
    "CutLoopStats": "the cut loop's figures inside SuppressionResult.stats",
    "MethodOutcome": "one suppression method's pattern, statistics and witnesses, turned by "
                     "suppress into a SuppressionResult",
    "ProtectionOutcome": "one tau-ARGUS protection inside BatchResult.tables (its result's "
                         "to_dict() is kept as details)",
    "AprioriOutcome": "what an a-priori file changed, logged by the tau-ARGUS runner",
}

#: Results that wrap another result and read through it (not a ResultBase of their own).
WRAPPERS = {"TableSetResult": "a method's result on a set's combined table, every attribute "
                              "read from that result (a ResultBase)"}



def build(builder, tmp_path):
    return builder(tmp_path) if builder is batch_result else builder()


@pytest.mark.parametrize(("name", "builder", "holds", "is_check"), RESULTS,
                         ids=[r[0] for r in RESULTS])
def test_result_keeps_the_contract(name, builder, holds, is_check, tmp_path):
    from tabsdc import TableSet

    result = build(builder, tmp_path)
    assert type(result).__name__ == name
    assert isinstance(result, Result)
    assert isinstance(result.status, str) and result.status
    if name not in WRAPPERS:
        assert isinstance(result, ResultBase)
        family = type(result).statuses
        assert issubclass(family, Status) and family is not Status and len(family) >= 1
        assert isinstance(result.status, family) and result.status == family(result.status)
    assert isinstance(result.seconds, float) and result.seconds >= 0
    assert isinstance(result.summary(), str) and result.summary()
    assert isinstance(result.to_frame(), pd.DataFrame)
    data = result.to_dict()
    assert data["status"] == result.status and data["seconds"] == pytest.approx(result.seconds)
    assert list(data)[:2] == ["status", "seconds"] and type(data["status"]) is str
    assert json.loads(json.dumps(data))["status"] == result.status  # JSON-ready
    section = result.to_report()
    assert isinstance(section, Section)
    assert Report("contract").add(section).to_text()
    if holds is not None:
        assert isinstance(result, TableResult)
        kind = {"table": Table, "table set": TableSet, "tables": tuple}[holds]
        assert isinstance(result.original, kind) and isinstance(result.table, kind)
        if holds == "tables":
            assert all(isinstance(t, Table) for t in (*result.original, *result.table))
    if is_check:
        assert isinstance(result, Check) and isinstance(result.passed, bool)
    assert dataclasses.is_dataclass(result)
    field = dataclasses.fields(result)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, field, None)


def public_classes():
    """Every class in the ``__all__`` of a package of tabsdc, microsdc and sdcreport (the
    public API, docs/api.md; importing every module, so that every subclass of ResultBase is
    defined)."""
    return {name: cls for name, cls, public in every_class() if public}


def every_class():
    """(name, class, public) of every class the modules of tabsdc, microsdc and sdcreport
    define; public when a package's ``__all__`` gives it."""
    import importlib
    import inspect
    import pkgutil

    import microsdc
    import sdcreport
    import tabsdc

    found, given = {}, set()
    for package in (tabsdc, microsdc, sdcreport):
        names = [package.__name__] + [
            m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
        for name in names:
            if name.split(".")[1:2] in (["ui"], ["cli"]) or name.endswith("__main__"):
                continue
            loaded = importlib.import_module(name)
            given.update(id(getattr(loaded, n, None)) for n in getattr(loaded, "__all__", ()))
            for value in vars(loaded).values():
                if inspect.isclass(value) and value.__module__ == loaded.__name__:
                    found[value.__name__] = value
            for n in getattr(loaded, "__all__", ()):
                value = getattr(loaded, n, None)
                if inspect.isclass(value):
                    found[value.__name__] = value
    return [(name, cls, id(cls) in given) for name, cls in found.items()]


def result_classes() -> dict[str, type]:
    """Every subclass of ResultBase, at any depth."""
    found, todo = {}, [ResultBase]
    while todo:
        for cls in todo.pop().__subclasses__():
            found[cls.__name__] = cls
            todo.append(cls)
    return found


#: How result classes are named.
RESULT_NAMES = ("Result", "Report", "Verification", "Audit", "Statistics", "Comparison",
                "Estimate", "Outcome", "Stats", "Intervals", "Choice", "Check")


def test_every_result_class_is_run_through_the_contract():
    """Every subclass of ResultBase is built and checked above, and is public."""
    public = public_classes()
    subclasses = {name: cls for name, cls in result_classes().items()
                  if cls.__module__.split(".")[0] in ("tabsdc", "microsdc", "sdcreport")}
    assert len(subclasses) >= 27
    assert sorted(set(subclasses) - {r[0] for r in RESULTS}) == []
    assert sorted(n for n, cls in subclasses.items() if public.get(n) is not cls) == []


def test_every_public_class_shaped_or_named_like_a_result_is_a_result_base():
    """A public class with ``to_dict`` or ``to_report``, or named like a result, inherits
    ResultBase unless it is a part of a result, a wrapper of one or no result at all."""
    public = public_classes()
    like = {name for name, cls in public.items() if name.endswith(RESULT_NAMES)
            or hasattr(cls, "to_dict") or hasattr(cls, "to_report")}
    outside = {name for name in like if not issubclass(public[name], ResultBase)}
    assert sorted(outside - set(PARTS) - set(WRAPPERS) - set(NOT_RESULTS)) == []
    defined = {name: cls for name, cls, _ in every_class()}
    assert [n for n in {*PARTS, *WRAPPERS}
            if n not in defined or issubclass(defined[n], ResultBase)] == []


def test_a_status_field_becomes_its_family_member_and_a_stranger_is_refused():
    from sdcreport._statuses import RoundingStatus, SolveStatus
    from tabsdc.solver import SolveResult

    result = rounding_result()
    assert type(result).statuses is RoundingStatus and result.status is RoundingStatus.OPTIMAL
    assert dataclasses.replace(result, status="feasible").status is RoundingStatus.FEASIBLE
    with pytest.raises(ValueError, match="'found' is not a valid RoundingStatus"):
        dataclasses.replace(result, status="found")
    solved = SolveResult.without_solution("infeasible", 0.5, "highs", "no point")
    assert solved.status is SolveStatus.INFEASIBLE and solved.to_dict()["status"] == "infeasible"
    assert json.dumps({"status": solved.status}) == '{"status": "infeasible"}'


def test_the_verification_of_an_adjustment_is_a_check_with_a_summary_and_a_frame():
    verification = adjustment_result().verification
    assert isinstance(verification, Check) and verification.passed
    assert verification.status == "passed" and verification.to_dict()["passed"]
    assert verification.summary().startswith("Verification of the adjustment: every check")
    frame = verification.to_frame()
    assert frame["passed"].all() and "protection" in frame.index
    json.dumps(verification.to_dict())
