"""One vocabulary at the public boundary: time_limit, seed, solver, cost and unknown choices
are checked once, the same way, by every entry point; the same cost has the same name."""

from inspect import Parameter

import numpy as np
import pandas as pd
import pytest

from microsdc._errors import DataError
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
     "cost 'relative'; choose one of count, inverse, cost, or an array"),
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


#: Where ``weight``/``weights`` is a keyword of a public function: sampling weights.
SAMPLING_WEIGHTS = {"cells_from_microdata", "Table.from_microdata", "TableSet.from_microdata",
                    "RecordSpec.__init__", "gini", "gini_comparison", "perturb_magnitudes",
                    "perturb_job"}


def test_weight_means_a_sampling_weight_only():
    with_weights = {name for name, signature in public_functions()
                    if {"weight", "weights"} & set(signature.parameters)}
    assert with_weights <= SAMPLING_WEIGHTS, with_weights - SAMPLING_WEIGHTS


def test_progress_has_one_signature():
    annotations = {str(signature.parameters["progress"].annotation)
                   for _, signature in public_functions() if "progress" in signature.parameters}
    assert annotations <= {"Progress | None", "Callable[[str], None] | None"}, annotations


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

    import tabsdc.io.argus._batch as batch

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


def test_count_is_one_per_cell_for_suppression_and_adjustment_alike():
    table = cycle_table()
    ones = np.ones(table.n_cells)
    assert adjust(table, "milp", "count").objective == adjust(table, "milp", ones).objective
    assert (suppress(table, "optimal", "count").totals()
            == suppress(table, "optimal", ones).totals())
    with pytest.raises(InputError, match="^unknown cost 'unit'; choose one of count, inverse"):
        adjust(table, "milp", "unit")
