"""One vocabulary at the public boundary: time_limit, seed, solver, cost and unknown choices
are checked once, the same way, by every entry point; former names still work, with a
deprecation warning."""

from inspect import Parameter

import numpy as np
import pandas as pd
import pytest

from microsdc.errors import DataError
from microsdc.masking import additive_noise
from microsdc.utility import information_loss
from tabsdc import InputError, Table
from tabsdc.audit import audit
from tabsdc.cta import adjust, adjust_multivariate
from tabsdc.rounding import round_table
from tabsdc.solver import LinearProgram, solve
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


@pytest.mark.parametrize(("call", "message"), [
    (lambda t: suppress(t, "simplex"), "method 'simplex'; choose one of auto, optimal"),
    (lambda t: suppress(t, "optimal", "relative"),
     "cost 'relative'; choose one of value, count, entropy, or a cell column or an array"),
    (lambda t: suppress(t, "optimal", prior="exact"), "prior 'exact'; choose one of table, pq"),
    (lambda t: round_table(t, 5, "stochastic"), "method 'stochastic'; choose one of "
                                                "conventional"),
    (lambda t: round_table(t, 5, objective="near"), "objective 'near'; choose one of deviation"),
    (lambda t: round_table(t, 5, engine="simplex"), "engine 'simplex'; choose one of auto"),
    (lambda t: adjust(t, "simplex"), "method 'simplex'; choose one of milp, heuristic"),
    (lambda t: adjust(t, "milp", "relative"),
     "cost 'relative'; choose one of unit, inverse, cost, or an array"),
    (lambda t: adjust(t, "milp", preserve="median"),
     "statistic to preserve 'median'; choose one of mean"),
    (lambda t: adjust_multivariate([t, t], "mdi"), "method 'mdi'; choose one of milp"),
    (lambda t: audit(t, prior="exact"), "prior 'exact'; choose one of table, pq"),
    (lambda t: solve(LinearProgram(c=[1.0], A=np.ones((1, 1)), row_lower=[0.0],
                                   row_upper=[1.0], col_lower=[0.0], col_upper=[1.0]),
                     "simplex"), "solver 'simplex'; choose one of highs, cbc"),
])
def test_unknown_choices_are_input_errors_worded_alike(call, message):
    with pytest.raises(InputError) as raised:
        call(cycle_table())
    assert str(raised.value).startswith(f"unknown {message}")


def test_microdata_choices_are_worded_as_the_tables_ones():
    x = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(DataError, match="^unknown ties 'last'; choose one of random, first$"):
        information_loss(x, x, ties="last")
    with pytest.raises(DataError, match="^unknown method 'gauss'; choose one of sdcmicro"):
        additive_noise(x, method="gauss")


def public_functions():
    """(name, signature) of every public function and method of tabsdc and microsdc (the
    ``__all__`` of their modules); a method is named ``Class.method``."""
    import importlib
    import inspect
    import pkgutil

    import microsdc
    import tabsdc

    seen, found = set(), []
    for package in (tabsdc, microsdc):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            parts = module.name.split(".")
            if parts[1] in ("ui", "cli") or any(p.startswith("_") for p in parts):
                continue
            loaded = importlib.import_module(module.name)
            for name in getattr(loaded, "__all__", ()):
                value = getattr(loaded, name, None)
                members = [(name, value)] if inspect.isfunction(value) else [
                    (f"{name}.{k}", v) for k, v in vars(value).items()
                    if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__")
                ] if inspect.isclass(value) else []
                for label, function in members:
                    if id(function) not in seen:
                        seen.add(id(function))
                        found.append((label, inspect.signature(function)))
    return found


def test_seed_is_keyword_only_in_every_public_function():
    functions = public_functions()
    assert len(functions) > 100  # the walk found the API
    positional = [name for name, signature in functions if "seed" in signature.parameters
                  and signature.parameters["seed"].kind is not Parameter.KEYWORD_ONLY
                  and not name.endswith(".__init__")]  # a result's field
    assert positional == []


#: Where ``weight``/``weights`` is a keyword of a public function: sampling weights, or a
#: former name kept for one release with a deprecation warning.
SAMPLING_WEIGHTS = {"cells_from_microdata", "Table.from_microdata", "TableSet.from_microdata",
                    "RecordSpec.__init__", "gini", "gini_comparison", "perturb_magnitudes",
                    "perturb_job"}
FORMER_NAMES = {"adjust", "adjust_multivariate", "build_problem", "cell_weights",
                "information_loss", "matrix_discrepancy", "renamed_component_weights"}


def test_weight_means_a_sampling_weight_only():
    with_weights = {name for name, signature in public_functions()
                    if {"weight", "weights"} & set(signature.parameters)}
    assert with_weights <= SAMPLING_WEIGHTS | FORMER_NAMES, \
        with_weights - SAMPLING_WEIGHTS - FORMER_NAMES


def test_progress_has_one_signature():
    annotations = {str(signature.parameters["progress"].annotation)
                   for _, signature in public_functions() if "progress" in signature.parameters}
    assert annotations <= {"Progress | None", "Callable[[str], None] | None"}, annotations


def test_the_ipf_starting_table_is_start_and_seed_still_works():
    import scipy.sparse as sp

    from tabsdc.mdi import ipf

    margins = sp.csr_array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
    targets = np.array([3.0, 7.0, 4.0, 6.0])
    new = ipf(start=np.ones(4), margins=margins, targets=targets)
    with pytest.warns(DeprecationWarning, match=r"ipf\(seed=\.\.\.\) is now ipf\(start="):
        old = ipf(seed=np.ones(4), margins=margins, targets=targets)
    np.testing.assert_array_equal(old.fitted, new.fitted)
    np.testing.assert_allclose(new.fitted, [1.2, 1.8, 2.8, 4.2])
    with pytest.raises(TypeError, match="both start= and its former name seed="):
        ipf(start=np.ones(4), margins=margins, targets=targets, seed=np.ones(4))


def test_multivariate_adjustment_takes_the_same_solver_progress_and_time_limit():
    table = cycle_table()
    lines = []
    result = adjust_multivariate([table, table], "milp", preserve=None, progress=lines.append,
                                 time_limit=30)
    assert result.passed and lines and lines[0].startswith("joint adjustment (milp)")
    with pytest.raises(InputError, match="solver must be 'highs', not 'glpk'"):
        adjust_multivariate([table, table], solver="glpk")
    with pytest.raises(InputError, match="time_limit must be a positive number of seconds"):
        adjust_multivariate([table, table], time_limit=-1)


def test_a_tau_argus_job_shares_one_total_time_limit(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from tabsdc.io.argus import batch

    job = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "data" / "argus" / "tableinput", job)
    arb = job / "TestTable.arb"
    arb.write_text(arb.read_text().replace(
        "<GOINTERACTIVE>", "<SUPPRESS> CTA(1)\n<SUPPRESS> CTA(1)\n<GOINTERACTIVE>"))
    given = []

    def recorded(*args, **kwargs):
        given.append(kwargs["time_limit"])
        return protect(*args, **kwargs)

    protect = batch.protect
    monkeypatch.setattr(batch, "protect", recorded)
    result = batch.run_batch(arb, time_limit=600)
    assert result.passed and len(given) == 2
    assert 600 >= given[0] > given[1] >= 600 - result.seconds
    with pytest.raises(InputError, match="time_limit must be a positive number of seconds"):
        batch.run_batch(arb, time_limit=0)


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


def _lp():
    return LinearProgram(c=[1.0, 1.0], A=np.array([[1.0, 1.0]]), row_lower=[1.0],
                         row_upper=[np.inf], col_lower=[0.0, 0.0], col_upper=[5.0, 5.0])


def _problem():
    from tabsdc.cta.problem import build_problem

    return build_problem(cycle_table(), "unit")


def _mcd():
    from microsdc.utility import mcd

    return mcd(np.random.default_rng(0).normal(size=(60, 2)), n_starts=10, seed=0)


def _former_names():
    """(former name, its value with a deprecation warning, the value under the new name)."""
    import tabsdc.cta
    from microsdc.utility import information_loss
    from tabsdc.cta.problem import COSTS, adjustment_costs, build_problem, cell_weights
    from tabsdc.solver import HighsModel

    x = np.random.default_rng(1).lognormal(size=(40, 3))
    return [
        ("SolveResult.time", lambda: solve(_lp()).time, lambda: None),
        ("CTAProblem.weights", lambda: _problem().weights, lambda: _problem().cost),
        ("cell_weights", lambda: cell_weights(cycle_table(), "inverse"),
         lambda: adjustment_costs(cycle_table(), "inverse")),
        ("build_problem(weights=)", lambda: build_problem(cycle_table(), weights="unit").cost,
         lambda: build_problem(cycle_table(), cost="unit").cost),
        ("tabsdc.cta.WEIGHTS", lambda: tabsdc.cta.WEIGHTS, lambda: COSTS),
        ("AdjustmentResult.adjusted", lambda: adjust(cycle_table(), "milp").adjusted.values,
         lambda: adjust(cycle_table(), "milp").table.values),
        ("MCDEstimate.weights", lambda: _mcd().weights, lambda: _mcd().kept),
        ("information_loss(weights=)",
         lambda: information_loss(x, x * 1.1, seed=0, weights="equal").matrix,
         lambda: information_loss(x, x * 1.1, seed=0, component_weights="equal").matrix),
        ("HighsModel.column_extremes(progress=)",
         lambda: HighsModel(_lp()).column_extremes(progress=lambda *a: None)[:2],
         lambda: HighsModel(_lp()).column_extremes(on_bound=lambda *a: None)[:2]),
    ]


@pytest.mark.parametrize("index", range(9))
def test_every_former_name_warns_and_gives_what_the_new_name_gives(index):
    name, old, new = _former_names()[index]
    with pytest.warns(DeprecationWarning):
        before = old()
    after = new()
    if name == "SolveResult.time":
        assert isinstance(before, float) and before >= 0
    elif isinstance(after, pd.DataFrame):
        pd.testing.assert_frame_equal(before, after)
    else:
        np.testing.assert_array_equal(np.asarray(before, dtype=object),
                                      np.asarray(after, dtype=object))
