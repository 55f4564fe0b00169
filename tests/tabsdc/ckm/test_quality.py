"""Quality and risk of perturbed counts: the posterior against a simulation of the intruder's
view, the distances against hand computations."""

import numpy as np
import pandas as pd

from tabsdc.ckm import build_ptable, perturbation_statistics, posterior_matrix
from tabsdc.ckm._quality import distance_summary


def test_posterior_agrees_with_simulated_publications():
    """Draw originals from the prior and noise from the p-table rows (numpy's sampler, not
    the cell keys); the share of each original among the draws published as y is P[x | y]."""
    table = build_ptable(3, 2.0, js=1)
    prior = np.array([5.0, 3.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    rng = np.random.default_rng(0)
    n = 400_000
    x = rng.choice(len(prior), n, p=prior / prior.sum())
    y = np.empty(n, dtype=np.int64)
    top = table.rows.max()
    for original in range(len(prior)):
        row = table.frame[table.frame["i"] == min(original, top)]
        chosen = x == original
        y[chosen] = original + rng.choice(row["v"].to_numpy(), chosen.sum(),
                                          p=row["p"].to_numpy() / row["p"].sum())
    simulated = pd.crosstab(y, x, normalize="index")
    exact = posterior_matrix(table, prior)
    common = simulated.index.intersection(exact.index)
    assert len(common) >= 8
    difference = (simulated.loc[common] - exact.loc[common].reindex(
        columns=simulated.columns, fill_value=0)).abs().to_numpy()
    assert difference.max() < 0.01
    assert np.allclose(exact.sum(axis=1), 1)
    assert 1 not in exact.index  # js = 1: nobody is published as 1


def test_distances_and_false_zeros_by_hand():
    x = np.array([0, 1, 3, 4, 10, 25])
    y = np.array([0, 0, 4, 4, 8, 25])
    d = distance_summary(x, y)  # cells published as 0 left out: 3->4, 4->4, 10->8, 25->25
    assert d.at["Max", "d1"] == 2 and d.at["Mean", "d1"] == 0.75
    assert d.at["Max", "d2"] == 1 / 3 and np.isclose(d.at["Mean", "d2"], (1 / 3 + 0.2) / 4)
    assert np.isclose(d.at["Max", "d3"], np.sqrt(10) - np.sqrt(8))
    stats = perturbation_statistics(x, y, build_ptable(3, 2.0))
    assert stats.false_zeros == 1 and stats.false_nonzeros == 0
    assert stats.noise.set_index("noise")["cells"].to_dict() == {-2: 1, -1: 1, 0: 3, 1: 1}
    by_size = stats.by_size
    assert by_size.loc["0", "cells"] == 1 and by_size.loc["10-19", "max_abs_deviation"] == 2
    assert stats.cumulative["d2"].set_index("upto").loc[0.2, "cells"] == 3
