"""Figures of the cell key method: the noise distribution, the posterior P[x | y], a p-table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tabsdc.ckm._ptable import PTable


def noise_figure(noise: pd.DataFrame) -> Figure:
    """Bars of the share of cells per noise value (columns ``noise`` and ``share``)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(noise["noise"], noise["share"], width=0.8, color="tab:blue")
    ax.set_xlabel("noise v = published - original")
    ax.set_ylabel("share of cells")
    fig.tight_layout()
    return fig


def posterior_figure(posterior: pd.DataFrame, largest: int = 6) -> Figure:
    """``P[x | y]`` for the published counts ``y = 0..largest``: one line per ``y``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for y in [y for y in posterior.index if y <= largest]:
        ax.plot(posterior.columns, posterior.loc[y].to_numpy(), marker="o", markersize=3,
                label=f"y = {y:g}")
    ax.set_xlabel("original count x")
    ax.set_ylabel("P[x | y]")
    if ax.get_legend_handles_labels()[0]:  # no line when no published count is that small
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def ptable_figure(ptable: PTable) -> Figure:
    """The transition matrix as an image: rows ``i``, columns ``j``, shade ``p``."""
    import matplotlib.pyplot as plt

    matrix = ptable.matrix()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    image = ax.imshow(matrix.to_numpy(), aspect="auto", cmap="Blues", vmin=0, vmax=1)
    ax.set_yticks(np.arange(len(matrix.index)), [f"{i:g}" for i in matrix.index])
    step = max(1, len(matrix.columns) // 12)
    ax.set_xticks(np.arange(len(matrix.columns))[::step],
                  [f"{j:g}" for j in matrix.columns[::step]])
    ax.set_xlabel("perturbed value j")
    ax.set_ylabel("original value i")
    fig.colorbar(image, ax=ax, label="p")
    fig.tight_layout()
    return fig
