"""Figures of rounding: posterior probabilities of the original value, and deviations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tabsdc.rounding._rules import RULES
from tabsdc.rounding._statistics import posterior_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def posterior_figure(bases: int | Sequence[int], rules: tuple[str, ...] = RULES) -> Figure:
    """Bars of ``P[x = R(x) + t | R(x)]`` per rule, for ``R(x) = 0`` and ``R(x) = mB > 0``.

    One row of two panels per base. The dotted line is the uniform distribution over the
    possible originals, the ideal of slide 10 (Cox, *Towards a quality assessment of
    disclosure-limited statistical data*).

    Parameters and data are those of :func:`~tabsdc.rounding._statistics.posterior_table`.

    Returns
    -------
    matplotlib Figure
    """
    from matplotlib.figure import Figure

    table = posterior_table(bases, rules)
    chosen = table["base"].unique()
    fig = Figure(figsize=(11, 3.4 * len(chosen)))
    axes = fig.subplots(len(chosen), 2, sharey="row", squeeze=False)
    width = 0.8 / len(rules)
    for row, base in zip(axes, chosen, strict=True):
        for ax, (rounded, title) in zip(row, (("0", "R(x) = 0"), ("mB > 0", "R(x) = mB > 0")),
                                        strict=True):
            part = table[(table["base"] == base) & (table["rounded"] == rounded)]
            offsets = np.sort(part["offset"].unique())
            for k, rule in enumerate(rules):
                probabilities = part[part["rule"] == rule].set_index("offset")["probability"]
                ax.bar(offsets + (k - (len(rules) - 1) / 2) * width,
                       probabilities.reindex(offsets).to_numpy(), width, label=rule)
            ax.axhline(1 / len(offsets), color="black", linestyle=":", linewidth=1)
            ax.set_title(f"{title}, base {base}")
            ax.set_xlabel("t = x - R(x)")
        row[0].set_ylabel("posterior probability")
    axes[0, 1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def deviation_figure(deviations: np.ndarray, base: int) -> Figure:
    """Histogram of the deviations ``R(x) - x`` (all within ``(-B, B)`` when adjacent).

    Parameters
    ----------
    deviations : ndarray
    base : int

    Returns
    -------
    matplotlib Figure
    """
    from matplotlib.figure import Figure

    d = np.asarray(deviations, dtype=float)
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    low, high = min(-base, float(d.min(initial=0.0))), max(base, float(d.max(initial=0.0)))
    integer = np.all(d == np.round(d))
    bins = np.arange(np.floor(low) - 0.5, np.ceil(high) + 1.5) if integer and high - low <= 200 \
        else 40
    ax.hist(d, bins=bins, color="#4c72b0")
    for edge in (-base, base):
        ax.axvline(edge, color="black", linestyle=":", linewidth=1)
    ax.set_xlabel("R(x) - x")
    ax.set_ylabel("cells")
    ax.set_title(f"Deviations (base {base}; dotted: +-B)")
    fig.tight_layout()
    return fig
