"""CTA in the units of the table: the same answer, the same certificate, whatever the unit of
the values (values near 1e9 or 1e-6), and no bound that a verified adjustment contradicts."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabsdc import Table
from tabsdc.cta import adjust, verify_adjustment
from tabsdc.cta._solution import certify
from tests.conftest import examples

from .test_cta import sensitive_tables

DATA = Path(__file__).resolve().parents[1] / "data" / "cta"

#: Optimum of the tau-ARGUS manual's example with inverse weights: 25/12 (checked by the
#: enumeration of every direction in test_cta, and by the MILP unscaled).
TAU_OPTIMUM = 25 / 12


def scaled(table: Table, factor: float) -> Table:
    """``table`` with values, bounds and protection levels multiplied by ``factor``."""
    cells = table.cells
    return table.with_columns(**{c: cells[c].to_numpy(dtype=float) * factor
                                 for c in ("value", "lb", "ub", "lpl", "upl", "spl")})


@pytest.fixture(scope="module")
def tau_example() -> Table:
    return Table.from_jj(DATA / "taumanual_audit_example.jj")


@pytest.fixture(scope="module")
def business() -> Table:
    return Table.from_jj(DATA / "business_survey_a21_nuts2.jj")


@pytest.mark.parametrize("factor", [3e6, 1e7, 1e9])
def test_large_values_have_the_optimum_of_the_unscaled_table(tau_example, factor):
    # before scaling the model: 2.78 at 3e6 and every cell set to 0, "optimal, objective 12",
    # at 1e7
    result = adjust(scaled(tau_example, factor), "milp", "inverse")
    assert result.objective == pytest.approx(TAU_OPTIMUM, rel=1e-9)
    assert result.status == "optimal" and result.bound == pytest.approx(TAU_OPTIMUM, rel=1e-9)
    assert result.verification.passed
    unscaled = adjust(tau_example, "milp", "inverse")
    np.testing.assert_allclose(result.table.values / factor, unscaled.table.values,
                               rtol=1e-9)


@pytest.mark.parametrize("method", ["milp", "heuristic"])
def test_business_table_in_cents_keeps_its_optimum_and_bound(business, method):
    # with a time limit the heuristic runs its MILP phase, which proves the optimum
    unscaled = adjust(business, method, "inverse", seed=0, time_limit=30)
    assert unscaled.status == "optimal" and unscaled.objective == pytest.approx(0.4256059, 1e-6)
    cents = scaled(business, 100.0)
    # the unscaled optimum, in cents, is a verified adjustment of the scaled table ...
    witness = verify_adjustment(cents, unscaled.table.values * 100)
    assert witness.passed
    # ... so no result may cost more and call itself optimal, nor claim a bound above it
    # (before: "optimal, gap 0" at 22.7)
    result = adjust(cents, method, "inverse", seed=0, time_limit=30)
    assert result.verification.passed
    assert result.objective == pytest.approx(unscaled.objective, rel=1e-6)
    assert result.bound is not None and result.bound <= unscaled.objective * (1 + 1e-6)
    assert result.status == "optimal"


def test_a_contradicted_bound_certifies_nothing():
    assert certify(0.4625, [53.99]) == (None, None, "feasible")
    # within the tolerances a bound above the objective is lowered to it
    assert certify(1.0, [1.0 + 1e-9]) == (1.0, 0.0, "optimal")
    # the absolute tolerance is in the units of the solved model
    assert certify(4e-6, [3e-6])[2] == "optimal"
    assert certify(4e-6, [3e-6], scale=1e-6)[2] == "feasible"


@settings(max_examples=examples(8, 100), deadline=None)
@given(table=sensitive_tables(), k=st.integers(-6, 9),
       cost=st.sampled_from(["count", "inverse"]),
       method=st.sampled_from(["milp", "heuristic"]))
def test_optimum_scales_with_the_table(table, k, cost, method):
    """Scaling by 10^k scales the optimum by 10^k (unit costs) or leaves it (inverse)."""
    reference = adjust(table, "milp", cost)
    result = adjust(scaled(table, 10.0 ** k), method, cost, seed=0)
    expected = reference.objective * (10.0 ** k if cost == "count" else 1.0)
    assert result.verification.passed
    assert result.objective >= expected * (1 - 1e-7)
    if result.status == "optimal":
        assert result.objective == pytest.approx(expected, rel=1e-7)
    if result.bound is not None:
        assert result.bound <= expected * (1 + 1e-7)
    if method == "milp":
        assert result.status == "optimal"
