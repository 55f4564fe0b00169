"""Regenerate every figure of the user guide from the data shipped with the package.

Usage (from the repository root)::

    .venv/bin/python docs/figures/make_figures.py            # all figures, about a minute
    .venv/bin/python docs/figures/make_figures.py choosing   # one section only

Sections and the figures they write into ``docs/figures/``:

* ``rules``: ``rules_status.png``, primary cells of turnover by A88 x NUTS3;
* ``suppression``: ``suppression_status.png`` (heuristic pattern, A88 x NUTS3) and
  ``audit_intervals.png`` (the interval attack on that pattern);
* ``rounding``: ``rounding_posterior.png`` (posterior probabilities, bases 3 and 5) and
  ``rounding_deviations.png`` (controlled rounding of the company counts, A21 x NUTS2);
* ``cta``: ``cta_scatter.png`` (L1 CTA of turnover, A21 x NUTS2 with subtotals) and
  ``cta_mdi_scatter.png`` (MDI-CTA of turnover, A21 x NUTS2 without subtotals);
* ``microdata``: ``microdata_ru_map.png`` (risk-utility map of masking methods on Tarragona);
* ``choosing``: ``choosing.png`` and ``choosing.csv``: suppression, controlled rounding and
  CTA of the same table (turnover, A21 x NUTS2, p% rule p = 10 and frequency 3), with their
  information loss and the protection an intruder is left with.

Each section prints what it computed; the numbers quoted in the guide come from this output.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from tabsdc import FrequencyRule, Hierarchy, PPercentRule, Table, apply_rules  # noqa: E402
from tabsdc._datasets import load_business_survey  # noqa: E402

HERE = Path(__file__).resolve().parent


def save(fig: Figure, name: str) -> None:
    """Write a figure next to this script."""
    path = HERE / name
    fig.savefig(path, dpi=100, bbox_inches="tight")
    print(f"  wrote {path.relative_to(HERE.parent.parent)}")


def survey_table(activity: list[str], region: list[str], counts: bool = False) -> Table:
    """Turnover (or the number of companies) by the finest activity x region level."""
    data = load_business_survey()
    hierarchies = {activity[-1]: Hierarchy.from_levels(data[activity]),
                   region[-1]: Hierarchy.from_levels(data[region])}
    table = Table.from_microdata(data, [activity[-1], region[-1]], "TURNOVER",
                                 hierarchies=hierarchies)
    if counts:
        table = table.with_columns(value=table.cells["freq"].to_numpy(dtype=float))
    return table


def ruled_table(activity: list[str], region: list[str]) -> Table:
    """The table with the p% rule (p = 10) and the minimum frequency 3 applied."""
    return apply_rules(survey_table(activity, region),
                       [PPercentRule(10), FrequencyRule(3)]).table


FINE = (["A10", "A21", "A88"], ["NUTS1", "NUTS2", "NUTS3"])
SMALL = (["A10", "A21"], ["NUTS1", "NUTS2"])


def rules() -> None:
    from tabsdc._plots import status_map

    start = time.perf_counter()
    result = apply_rules(survey_table(*FINE), [PPercentRule(10), FrequencyRule(3)])
    print(f"  table + rules in {time.perf_counter() - start:.2f} s")
    print("  " + result.summary().replace("\n", "\n  "))
    save(status_map(result.table, max_codes=45), "rules_status.png")


def suppression() -> None:
    from tabsdc.audit._plots import interval_figure
    from tabsdc._plots import status_map
    from tabsdc.suppression import suppress

    table = ruled_table(*FINE)
    result = suppress(table, "heuristic", "value")
    print("  " + result.summary().replace("\n", "\n  "))
    save(status_map(result.table, max_codes=45), "suppression_status.png")
    save(interval_figure(result.audit.frame, result.audit.table, max_cells=30),
         "audit_intervals.png")


def rounding() -> None:
    from tabsdc.rounding import posterior_figure, round_table
    from tabsdc.rounding._plots import deviation_figure

    save(posterior_figure([3, 5]), "rounding_posterior.png")
    counts = survey_table(*SMALL, counts=True)
    result = round_table(counts, 5, "controlled")
    print("  " + result.summary().replace("\n", "\n  "))
    save(deviation_figure(result.deviations, 5), "rounding_deviations.png")


def cta() -> None:
    from tabsdc.cta import adjust

    result = adjust(ruled_table(*SMALL), "milp", "inverse")
    print("  " + result.summary().replace("\n", "\n  "))
    save(result.scatter_figure(), "cta_scatter.png")
    flat = apply_rules(survey_table(["A21"], ["NUTS2"]), [PPercentRule(10), FrequencyRule(3)])
    mdi = adjust(flat.table, "mdi", seed=0)
    print("  " + mdi.summary().replace("\n", "\n  "))
    save(mdi.scatter_figure(), "cta_mdi_scatter.png")


def microdata() -> None:
    from microsdc._datasets import load_tarragona
    from microsdc.masking import additive_noise, mdav, rank_swap
    from microsdc._plots import ru_map
    from microsdc._risk import record_linkage
    from microsdc.utility import brmae

    X = load_tarragona()
    methods = {
        "MDAV (k)": (lambda k: mdav(X, k=int(k)), (3, 5, 10, 20)),
        "additive noise (% of sd)": (lambda a: additive_noise(X, a, seed=1), (10, 50, 100, 150)),
        "rank swap (p % of records)": (lambda p: rank_swap(X, p, seed=1), (1, 5, 10, 15)),
    }
    rows = []
    for name, (mask, parameters) in methods.items():
        for parameter in parameters:
            masked = mask(parameter)
            rows.append({"method": name, "parameter": parameter,
                         "loss": brmae(X, masked, seed=1), "risk": record_linkage(X, masked)})
    frame = pd.DataFrame(rows)
    print(frame.round(4).to_string(index=False))
    fig = ru_map(frame)
    fig.axes[0].set_xlabel("information loss: brMAE")
    fig.axes[0].set_ylabel("disclosure risk: record linkage (DBRL)")
    save(fig, "microdata_ru_map.png")


def protection_ratio(values, lower, upper, lpl, upl) -> np.ndarray:
    """Achieved over required protection, the worse side: min((a-l)/lpl, (u-a)/upl)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        down = np.where(lpl > 0, (values - lower) / lpl, np.inf)
        up = np.where(upl > 0, (upper - values) / upl, np.inf)
    return np.minimum(down, up)


def choosing() -> None:
    from tabsdc.cta import adjust
    from tabsdc.rounding import round_table
    from tabsdc.suppression import suppress

    table = ruled_table(*SMALL)
    cells = table.cells
    values = table.values
    sensitive = (cells["status"] == "u").to_numpy()
    lpl, upl = cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float)
    grand = int(np.argmax(np.abs(values)))
    rows = []

    start = time.perf_counter()
    sup = suppress(table, "optimal", "value", time_limit=60)
    frame = sup.audit.frame.reindex(cells.index)
    lower, upper = frame["lower"].to_numpy(float), frame["upper"].to_numpy(float)
    hidden = np.asarray(sup.suppressed, dtype=bool)
    ratio = protection_ratio(values, lower, upper, lpl, upl)[sensitive]
    width = (upper - lower)[sensitive] / np.abs(values[sensitive])
    rows.append({
        "method": "suppression (optimal, cost = value)", "status": sup.stats.status,
        "cells hidden or changed": int(hidden.sum()),
        "value hidden or L1 change": float(np.abs(values[hidden]).sum()),
        "L1 change / grand total": float(np.abs(values[hidden]).sum() / values[grand]),
        "grand total change": "hidden" if hidden[grand] else 0.0,
        "every relation holds": True,
        "narrowest sensitive interval / value": float(width.min()),
        "min achieved / required protection": float(ratio.min()),
        "audit": "protected" if sup.audit.protected else "NOT protected",
        "seconds": time.perf_counter() - start,
    })

    base = int(10 ** np.ceil(np.log10(2 * max(lpl.max(), upl.max()))))
    start = time.perf_counter()
    rnd = round_table(table, base, "controlled")
    change = rnd.deviations
    audit = rnd.audit.frame.reindex(cells.index)
    lower, upper = audit["lower"].to_numpy(float), audit["upper"].to_numpy(float)
    ratio = protection_ratio(values, lower, upper, lpl, upl)[sensitive]
    width = (upper - lower)[sensitive] / np.abs(values[sensitive])
    rows.append({
        "method": f"controlled rounding (base {base})", "status": rnd.status,
        "cells hidden or changed": int(np.count_nonzero(change)),
        "value hidden or L1 change": float(np.abs(change).sum()),
        "L1 change / grand total": float(np.abs(change).sum() / values[grand]),
        "grand total change": float(change[grand] / values[grand]),
        "every relation holds": bool(rnd.additive),
        "narrowest sensitive interval / value": float(width.min()),
        "min achieved / required protection": float(ratio.min()),
        "audit": f"{rnd.audit.n_exact} exact, {rnd.audit.n_narrow} narrow",
        "seconds": time.perf_counter() - start,
    })

    start = time.perf_counter()
    adj = adjust(table, "milp", "inverse", preserve="mean,variance")
    change = adj.adjustment
    moved = np.abs(change)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(change > 0, moved / upl, moved / lpl)[sensitive]
    rows.append({
        "method": "CTA (L1 MILP, mean and variance kept)", "status": adj.status,
        "cells hidden or changed": int(np.count_nonzero(np.abs(change) > 1e-9)),
        "value hidden or L1 change": float(adj.l1_distance),
        "L1 change / grand total": float(adj.l1_distance / values[grand]),
        "grand total change": float(change[grand] / values[grand]),
        "every relation holds": bool(adj.verification.passed),
        "narrowest sensitive interval / value": np.nan,
        "min achieved / required protection": float(ratio.min()),
        "audit": "checks passed" if adj.verification.passed else "checks FAILED",
        "seconds": time.perf_counter() - start,
    })

    result = pd.DataFrame(rows)
    result.to_csv(HERE / "choosing.csv", index=False)
    print(f"  {table.n_cells} cells, {int(sensitive.sum())} sensitive, grand total "
          f"{values[grand]:.0f}")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(result.T.to_string())

    fig = Figure(figsize=(9, 3.2))
    labels = ["suppression", f"rounding (B={base})", "CTA"]
    colours = ["#4c72b0", "#dd8452", "#55a868"]
    panels = [("cells hidden or changed", "cells hidden or changed"),
              ("L1 change / grand total", "value hidden or changed\n/ grand total"),
              ("min achieved / required protection",
               "smallest achieved / required\nprotection of a sensitive cell")]
    for k, (column, title) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.bar(labels, result[column].to_numpy(float), color=colours)
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=8, rotation=15)
        if column.startswith("min achieved"):
            ax.axhline(1.0, color="red", lw=1, ls="--")
    fig.suptitle("Turnover by A21 x NUTS2: the same primary cells protected three ways",
                 fontsize=10)
    fig.tight_layout()
    save(fig, "choosing.png")


SECTIONS = {"rules": rules, "suppression": suppression, "rounding": rounding, "cta": cta,
            "microdata": microdata, "choosing": choosing}


def main(argv: list[str]) -> None:
    names = argv or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    total = time.perf_counter()
    for name in names:
        start = time.perf_counter()
        print(f"[{name}]")
        SECTIONS[name]()
        print(f"  ({time.perf_counter() - start:.1f} s)")
    print(f"all done in {time.perf_counter() - total:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
