"""Reproducibility: every random method gives the same output for the same seed, in this
process and in a fresh one (another hash seed), and different outputs without a seed."""

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _grid():
    from tabsdc import Table

    values = np.random.default_rng(1).integers(0, 40, (5, 6)).astype(float)
    frame = pd.DataFrame([(f"r{i}", f"c{j}", v) for (i, j), v in np.ndenumerate(values)],
                         columns=["r", "c", "value"])
    return Table.from_aggregated(frame, ["r", "c"])


def _records() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    x = rng.normal(50, 10, 60)
    return pd.DataFrame({"x": x.round(0), "y": (2 * x + rng.normal(0, 5, 60)).round(0),
                         "z": rng.integers(0, 5, 60).astype(float)})  # ties for MDAV


def _sensitive():
    """The grid with its small interior cells sensitive (protection levels 30 % of value)."""
    table = _grid()
    interior = ~table.cells.index.to_frame().isin(["Total"]).any(axis=1).to_numpy()
    small = interior & (table.values < 12) & (table.values > 0)
    return table.with_columns(status=np.where(small, "u", "s"),
                              upl=np.where(small, 0.3 * table.values, 0.0),
                              lpl=np.where(small, 0.3 * table.values, 0.0))


def _methods() -> dict[str, Callable[[int | None], object]]:
    """Every random method (and MDAV, whose tie breaking must not depend on the run)."""
    from microsdc import masking
    from tabsdc.cta import adjust
    from tabsdc.rounding import round_table
    from tabsdc.rounding._rules import RANDOM_RULES

    methods: dict[str, Callable[[int | None], object]] = {
        f"round-{rule}": (lambda seed, rule=rule: round_table(_grid(), 4, rule, seed=seed,
                                                              audit=False).table.values)
        for rule in RANDOM_RULES}
    methods["round-unbiased-controlled"] = lambda seed: round_table(
        _grid(), 4, "unbiased-controlled", seed=seed, audit=False).table.values
    methods["noise"] = lambda seed: masking.additive_noise(_records(), 50, seed=seed)
    methods["correlated-noise"] = lambda seed: masking.correlated_noise(_records(), 50,
                                                                        seed=seed)
    methods["rankswap"] = lambda seed: masking.rank_swap(_records(), 15, seed=seed)
    methods["mdav"] = lambda seed: masking.mdav(_records(), k=3)
    methods["cta-heuristic"] = lambda seed: adjust(
        _sensitive(), "heuristic", "inverse", time_limit=30, seed=seed).table.values
    return methods


#: Methods that use no randomness (their output must still be the same in every process).
DETERMINISTIC = {"mdav"}

#: Methods whose randomness only breaks ties: the CTA heuristic reaches the same (proven
#: optimal) adjustment from any seed on this table, so only the same-seed half applies.
TIE_BREAKING = {"cta-heuristic"}

#: Methods whose output must differ between two runs without a seed.
RANDOM = [name for name in _methods() if name not in DETERMINISTIC | TIE_BREAKING]


def _digest(output: object) -> str:
    array = np.ascontiguousarray(np.asarray(output, dtype=float))
    return hashlib.sha256(array.tobytes()).hexdigest()


def digests(seed: int | None) -> dict[str, str]:
    """The digest of each method's output with ``seed``."""
    return {name: _digest(method(seed)) for name, method in _methods().items()}


def test_same_seed_same_output_in_this_and_a_fresh_process():
    here = digests(7)
    assert here == digests(7)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345",
           "MPLBACKEND": "Agg"}
    code = ("import json; from tests.tabsdc.test_cli_seeds import digests; "
            "print(json.dumps(digests(7)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300, check=True)
    there = json.loads(run.stdout.strip().splitlines()[-1])
    assert there == here
    assert digests(8) != here


@pytest.mark.parametrize("name", RANDOM)
def test_no_seed_different_outputs(name):
    method = _methods()[name]
    assert len({_digest(method(None)) for _ in range(3)}) > 1
