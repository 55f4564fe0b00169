"""Figures: types, panels, inputs untouched, no pyplot state."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from microsdc._errors import DataError
from microsdc._plots import (
    boxplot_comparison,
    density_comparison,
    histogram_comparison,
    measure_pairs,
    measures_by_parameter,
    mosaic_plot,
    ru_map,
    spearman_boxplot,
)

rng = np.random.default_rng(0)
NUMERIC = pd.DataFrame(rng.lognormal(size=(300, 3)), columns=["income", "expend", "savings"])
CATEGORICAL = pd.DataFrame({"roof": rng.choice(["tin", "tile", "straw"], 200),
                            "water": rng.choice(["pipe", "well"], 200)})
VALUES = pd.DataFrame({"method": ["mdav"] * 4 + ["noise"] * 4, "parameter": [1, 2, 3, 4] * 2,
                       "replication": 0, "brMAE": [0, .1, .2, .3, .1, .2, .25, .4],
                       "MAE": [0, 1, 2, 3, 1, 3, 2, 5], "DBRL": [1, .6, .4, .3, .9, .7, .5, .2]})


@pytest.mark.parametrize("plot", [histogram_comparison, density_comparison,
                                  boxplot_comparison])
def test_numeric_comparisons(plot):
    before = NUMERIC.copy()
    masked = NUMERIC * 1.3
    fig = plot(NUMERIC, masked)
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    assert [ax.get_title() for ax in fig.axes] == ["income", "expend", "savings"]
    assert len(plot(NUMERIC, masked, columns=["expend"]).axes) == 1
    pd.testing.assert_frame_equal(NUMERIC, before)
    assert plt.get_fignums() == []  # nothing registered with pyplot, nothing shown
    with pytest.raises(DataError, match="'wealth'"):
        plot(NUMERIC, masked, columns=["wealth"])


def test_histogram_draws_both_data_sets_on_common_bins():
    fig = histogram_comparison(NUMERIC, NUMERIC + 0.5, columns=["income"], bins=12)
    patches = fig.axes[0].patches
    assert len(patches) == 2  # one filled and one step outline
    assert len(fig.legends) == 1


def test_density_of_a_constant_masked_column_is_a_line():
    fig = density_comparison(NUMERIC, NUMERIC.assign(income=1.0), columns=["income"])
    assert len(fig.axes[0].lines) == 2


def test_mosaic_plot():
    masked = CATEGORICAL.copy()
    masked.loc[:30, "roof"] = None
    fig = mosaic_plot(CATEGORICAL, masked, ["roof", "water"])
    assert len(fig.axes) == 2
    # masked panel has one more column of tiles: the NA category
    heights = [sum(p.get_width() > 0 and p.get_height() > 0 for p in ax.patches)
               for ax in fig.axes]
    assert heights[1] > heights[0]
    assert len(mosaic_plot(CATEGORICAL, masked, "roof").axes) == 2
    with pytest.raises(DataError, match="one or two"):
        mosaic_plot(CATEGORICAL, masked, ["roof", "water", "roof"])


def test_ru_map():
    fig = ru_map(VALUES, risk="DBRL", loss="brMAE")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("brMAE", "DBRL")
    assert len(ax.lines) == 2 and [t.get_text() for t in ax.get_legend().get_texts()] == [
        "mdav", "noise"]
    with pytest.raises(DataError, match="'risk'"):
        ru_map(VALUES)


def test_study_figures():
    fig = measures_by_parameter(VALUES, ["brMAE", "MAE"])
    assert len(fig.axes) == 4 and fig.axes[0].get_title() == "mdav: brMAE (r = 1.00)"
    assert len(measure_pairs(VALUES, "brMAE", ["MAE"]).axes) == 2
    correlations = pd.DataFrame({"method": ["mdav"] * 4, "measure": ["A", "A", "B", "B"],
                                 "rho": [0.9, 0.95, 0.8, 0.85]})
    assert len(spearman_boxplot(correlations).axes) == 1
    with pytest.raises(DataError, match="'MSE'"):
        measures_by_parameter(VALUES, ["MSE"])
