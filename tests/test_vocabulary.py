"""One vocabulary at the public boundary: time_limit, seed, solver, cost and unknown choices
are checked once, the same way, by every entry point; former names still work, with a
deprecation warning."""

import numpy as np
import pandas as pd
import pytest

from tabsdc import InputError, Table
from tabsdc.audit import audit
from tabsdc.cta import adjust
from tabsdc.rounding import round_table
from tabsdc.suppression import suppress


def cycle_table() -> Table:
    """Cox's 2x2 cycle with totals, cell (1, 1) sensitive with levels 2."""
    cells = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["1", "2", "1", "2"],
                          "value": [10.0, 5.0, 7.0, 8.0]})
    table = Table.from_aggregated(cells, ["r", "c"])
    status = ["s"] * 9
    status[4] = "u"
    levels = [0, 0, 0, 0, 2, 0, 0, 0, 0]
    return table.with_columns(status=status, lpl=levels, upl=levels)


ENTRY_POINTS = {
    "suppress": lambda table, **kw: suppress(table, "optimal", **kw),
    "adjust": lambda table, **kw: adjust(table, "milp", **kw),
    "round_table": lambda table, **kw: round_table(table, 5, "controlled", **kw),
    "audit": lambda table, **kw: audit(table.with_columns(
        status=np.where(np.isin(np.arange(9), [4, 5, 7, 8]), "u", "s")), **kw),
}


@pytest.mark.parametrize("name", ENTRY_POINTS)
@pytest.mark.parametrize("bad", ["5", -1, 0, float("nan"), True])
def test_every_entry_point_refuses_a_bad_time_limit_alike(name, bad):
    with pytest.raises(InputError, match=r"time_limit must be a positive number of seconds"):
        ENTRY_POINTS[name](cycle_table(), time_limit=bad)


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_takes_a_total_time_limit(name):
    result = ENTRY_POINTS[name](cycle_table(), time_limit=30)
    assert result.status and result.seconds < 30


@pytest.mark.parametrize("name", ["suppress", "adjust"])
def test_methods_that_keep_highs_models_say_so_for_other_solvers(name):
    with pytest.raises(InputError, match="solver must be 'highs', not 'glpk'"):
        ENTRY_POINTS[name](cycle_table(), solver="glpk")


def test_seed_is_keyword_only():
    with pytest.raises(TypeError):
        round_table(cycle_table(), 5, "unbiased", 3)
    same = [round_table(cycle_table(), 5, "unbiased", seed=3).table.values for _ in range(2)]
    np.testing.assert_array_equal(*same)


@pytest.mark.parametrize(("call", "choice"), [
    (lambda t: suppress(t, "simplex"), "method"),
    (lambda t: round_table(t, 5, "stochastic"), "method"),
    (lambda t: adjust(t, "simplex"), "method"),
    (lambda t: adjust(t, "milp", "relative"), "cost"),
    (lambda t: suppress(t, "optimal", "relative"), "cost"),
])
def test_unknown_choices_are_input_errors_naming_the_choices(call, choice):
    with pytest.raises(InputError, match=rf"(?i)(unknown|{choice}).*(choose|one of|use)"):
        call(cycle_table())


def test_former_names_still_work_with_a_deprecation_warning():
    table = cycle_table()
    with pytest.warns(DeprecationWarning, match="adjust\\(cost=...\\)"):
        old = adjust(table, "milp", weights="unit", fix_totals=True)
    new = adjust(table, "milp", cost="unit", fix_totals=True)
    assert old.objective == new.objective == 8.0
    with pytest.warns(DeprecationWarning, match="'jj' is now called 'cost'"):
        adjust(table, "milp", "jj")
    with pytest.warns(DeprecationWarning, match="now called 'cost'"):
        legacy = Table(table.cells.rename(columns={"cost": "weight"}), table.A, table.b,
                       table.hierarchies)
    np.testing.assert_array_equal(legacy.cells["cost"], table.cells["cost"])
    with pytest.warns(DeprecationWarning, match="use cost='cost'"):
        by_old_name = suppress(table, "optimal", "weight")
    assert by_old_name.totals() == suppress(table, "optimal", "cost").totals()
