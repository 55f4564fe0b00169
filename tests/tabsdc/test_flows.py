"""Least-deviation flows on a kept model: one requirement after another, each solved from
the slack basis, gives each the least flow that ``scipy.optimize.linprog`` finds on its own
model, and the kept bounds come back after every solve."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tabsdc._flows import DOWN, UP, Requirement, flow_and_status, flow_model
from tests.tabsdc.test_modular import hierarchical_survey


def least_flow(A: sp.csr_array, up: np.ndarray, down: np.ndarray, w: np.ndarray,
               req: Requirement) -> float | None:
    """The least ``w``-weighted deviation meeting ``req``, by linprog on ``d = p - q``."""
    n = A.shape[1]
    upper, lower = up.copy(), down.copy()
    upper[list(req.fixed)] = lower[list(req.fixed)] = 0.0
    moved = req.direction * req.level  # the cell's own room is not asked (as the model)
    bounds = [(0.0, u) for u in upper] + [(0.0, d) for d in lower]
    bounds[req.cell] = (max(moved, 0.0),) * 2
    bounds[n + req.cell] = (max(-moved, 0.0),) * 2
    found = linprog(np.concatenate([w, w]), A_eq=sp.hstack([A, -A]).toarray(),
                    b_eq=np.zeros(A.shape[0]), bounds=bounds, method="highs")
    return found.fun if found.status == 0 else None


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_a_kept_model_gives_every_requirement_its_least_flow(seed):
    rng = np.random.default_rng(seed)
    table = hierarchical_survey(seed % 50, records=80)
    hidden = np.flatnonzero(rng.random(table.n_cells) < 0.6)
    block = sp.csr_array(table.A)[:, hidden]
    A = block[np.diff(block.tocsr().indptr) > 0]
    up, down = rng.uniform(0, 50, len(hidden)), rng.uniform(0, 50, len(hidden))
    w = rng.uniform(0.5, 2.0, len(hidden))
    model = flow_model(A, up, down)
    for _ in range(12):
        i = int(rng.integers(len(hidden)))
        others = np.setdiff1d(np.arange(len(hidden)), [i])
        fixed = tuple(sorted(rng.choice(others, size=min(2, len(others)), replace=False)
                             .tolist())) if rng.random() < 0.5 else ()
        req = Requirement(i, UP if rng.random() < 0.5 else DOWN,
                          float(rng.uniform(1, 30)), fixed=fixed)
        held = np.asarray(fixed, dtype=np.int64)
        deviation, status = flow_and_status(model, req, i, w, restore=(up[i], down[i]),
                                            fixed=(held, up[held], down[held]))
        expected = least_flow(A, up, down, w, req)
        if expected is None:
            assert deviation is None and status == "infeasible"
            continue
        assert deviation is not None, (req, status)
        assert abs(A @ deviation).max() <= 1e-6 * max(1.0, req.level)
        assert deviation[i] == req.direction * req.level
        others = np.arange(len(hidden)) != i
        assert (deviation[others] <= up[others] + 1e-6).all()
        assert (-deviation[others] <= down[others] + 1e-6).all()
        assert (deviation[held] == 0).all()
        assert abs(w @ np.abs(deviation) - expected) <= 1e-6 * max(1.0, expected)
