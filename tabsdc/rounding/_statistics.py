"""Quality and disclosure statistics of rounding (Cox, *Towards a quality assessment of
disclosure-limited statistical data*, slides 7-10; Cox & Kim 2006).

Notation of the slides: ``x = qB + r``, rounded ``R(x) = qB + R(r)`` with ``R(r)`` in
{0, B}; the residue r is uniform on {0, ..., B-1} and independent of q (slide 7). With
``p(r) = P[R(r) = B | r]`` (:func:`~tabsdc.rounding._rules.up_probability`) and ``pbar`` its
mean over r:

* ``E[R(r)] = B pbar`` and ``V[R(r)] = B^2 pbar (1 - pbar)``, against ``E[r] = (B-1)/2`` and
  ``V[r] = (B^2-1)/12`` unrounded (slide 8). For zero-restricted 50/50 rounding
  ``pbar = (B-1)/(2B)``, so ``E[R(r)] = (B-1)/2`` and ``V[R(r)] = (B^2-1)/4``;
  ``V[x] = B^2 V[q] + V[r]`` and ``V[R(x)] = B^2 V[q] + V[R(r)]``: rounding adds
  ``V[R(r)] - V[r]`` to the variance;
* the increase in mean squared error per cell, ``E[(R(r) - r)^2] =
  (1/B) sum_r [p(r) (B-r)^2 + (1-p(r)) r^2]`` (50/50: ``(B-1)(2B-1)/6``, slide 9); over a
  table of d cells the total mean squared error grows by d times this;
* the conditional chi-square ``U = sum_{x > 0} (R(x) - x)^2 / x`` (slide 9). Given the table,
  ``E[U | x] = sum_{x>0} [p(r)(B-r)^2 + (1-p(r)) r^2] / x`` exactly. Under the slides'
  assumptions, with ``d`` cells, ``e = #{x < B}`` and ``E[1/q | q >= 1]`` estimated from the
  cells with ``x >= B`` (for those ``x >= qB``):

      E[U] <= e E[(R(r)-r)^2 / r] + (d - e) E[(R(r)-r)^2] / B  E[1/q | q >= 1],

  where ``E[(R(r)-r)^2/r] = (1/B) sum_{s=1}^{B-1} [p(s)(B-s)^2 + (1-p(s)) s^2] / s``; for
  50/50 rounding ``(B/2) sum_{s=1}^{B-1} 1/s - (B-1)/2`` and ``(B-1)(2B-1)/6``: the slide's
  bound. (The slide's text is partly garbled in the source; the bound is re-derived here
  from its stated ingredients, and coincides with them for 50/50 rounding.)
* posterior probabilities of the original given the rounded value under a uniform prior on
  the residue (slide 10): ``P[x = t | R(x) = 0] = (1 - p(t)) / sum_s (1 - p(s))`` for
  ``t = 0..B-1`` (50/50: ``2/(B+1)`` for t = 0 and ``1/(B+1)`` otherwise), and for
  ``R(x) = mB > 0`` the original is ``mB + t``, ``-(B-1) <= t <= B-1``, with weight
  ``1 - p(t)`` for ``t >= 0`` and ``p(B + t)`` for ``t < 0``.

Degrees of freedom of U (slide 9: "determined by the tabular structure"): the number of
cells with ``x > 0`` whose deviation is free, i.e. every such cell for cell-by-cell rules
and the non-total ones for controlled rounding (totals' deviations are sums of the interior
ones). Pass ``df`` to override.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from sdcreport._contract import ResultBase
from sdcreport._statuses import SignificanceStatus
from tabsdc._errors import InputError
from tabsdc._validation import check_choice
from tabsdc.rounding._rules import RULES, check_base, check_rule, decompose, up_probability

if TYPE_CHECKING:
    from sdcreport import Section

#: Controlled rounding methods (every relation kept).
CONTROLLED_METHODS = ("controlled", "unbiased-controlled")

#: Small-count rounding (:mod:`tabsdc.rounding._small_count`): inner cells rounded, every
#: relation kept, large cells left alone.
SMALL_COUNT = "small-count"

#: Every rounding method of :func:`tabsdc.rounding.round_table`.
METHODS = (*RULES, *CONTROLLED_METHODS, SMALL_COUNT)

#: The methods whose releases the interval audit reads (every cell rounded to a multiple).
AUDITED_METHODS = (*RULES, *CONTROLLED_METHODS)


def method_rule(method: str) -> str | None:
    """The cell-by-cell rule whose per-cell distribution ``method`` has, if any.

    Unbiased controlled rounding rounds each cell up with probability ``r/B``, as the
    unbiased rule does; optimal controlled rounding is a deterministic optimum and
    small-count rounding leaves large cells alone: no such rule (None).

    Examples
    --------
    >>> method_rule("unbiased-controlled"), method_rule("controlled")
    ('unbiased', None)
    """
    check_choice("method", method, METHODS)
    return {"unbiased-controlled": "unbiased", "controlled": None,
            SMALL_COUNT: None}.get(method, method)


def rule_statistics(bases: int | list[int], rules: tuple[str, ...] = RULES) -> pd.DataFrame:
    """The slides' expected quality and disclosure figures for each rule and base.

    Parameters
    ----------
    bases : int or list of int
    rules : tuple of str
        Rule names (default all four).

    Returns
    -------
    DataFrame
        One row per (rule, base): ``P[R(r)=B]`` (``pbar``), ``E[r]``, ``E[R(r)]``, ``bias``
        (``E[R(r)] - E[r]``), ``V[r]``, ``V[R(r)]``, ``variance increase``, ``MSE increase``
        (``E[(R(r)-r)^2]``), ``E[(R(r)-r)^2/r]`` (the x < B term of the bound on E[U]) and
        ``P[x=0|R(x)=0]`` (module docstring).

    Examples
    --------
    >>> row = rule_statistics(10, ("fifty-fifty",)).iloc[0]
    >>> [round(float(row[k]), 10) for k in ("E[R(r)]", "V[R(r)]", "V[r]", "P[x=0|R(x)=0]")]
    [4.5, 24.75, 8.25, 0.1818181818]
    """
    rows = []
    for base in np.atleast_1d(bases):
        base = check_base(int(base))
        r = np.arange(base, dtype=float)
        for rule in rules:
            p = up_probability(r, base, check_rule(rule))
            pbar = p.mean()
            squared = p * (base - r) ** 2 + (1 - p) * r**2
            expected_r, variance_r = (base - 1) / 2, (base**2 - 1) / 12
            mean_rounded, variance_rounded = base * pbar, base**2 * pbar * (1 - pbar)
            rows.append({
                "rule": rule, "base": base, "P[R(r)=B]": pbar,
                "E[r]": expected_r, "E[R(r)]": mean_rounded, "bias": mean_rounded - expected_r,
                "V[r]": variance_r, "V[R(r)]": variance_rounded,
                "variance increase": variance_rounded - variance_r,
                "MSE increase": squared.mean(),
                "E[(R(r)-r)^2/r]": (squared[1:] / r[1:]).sum() / base,
                "P[x=0|R(x)=0]": (1 - p[0]) / (1 - p).sum(),
            })
    return pd.DataFrame(rows)


def expected_squared_error(values: np.ndarray, base: int, rule: str) -> np.ndarray:
    """``E[(R(x) - x)^2 | x] = p(r)(B-r)^2 + (1-p(r)) r^2`` per value under ``rule``.

    Examples
    --------
    >>> expected_squared_error(np.array([0.0, 1.0, 5.0, 7.0]), 5, "fifty-fifty").tolist()
    [0.0, 8.5, 0.0, 6.5]
    """
    _, r = decompose(values, base)
    p = up_probability(r, base, rule)
    return p * (base - r) ** 2 + (1 - p) * r**2


def conditional_chi_square(original: np.ndarray, rounded: np.ndarray) -> float:
    """The observed ``U = sum_{x > 0} (R(x) - x)^2 / x`` (slide 9; cells with x <= 0 add 0).

    Examples
    --------
    >>> conditional_chi_square(np.array([0.0, 2.0, 4.0]), np.array([0.0, 0.0, 5.0]))
    2.25
    """
    x = np.asarray(original, dtype=float)
    positive = x > 0
    return float(np.sum((np.asarray(rounded, dtype=float)[positive] - x[positive]) ** 2
                        / x[positive]))


def expected_chi_square(values: np.ndarray, base: int, rule: str) -> float:
    """``E[U | x]``: the exact expectation of U over the rule's randomness, given the table.

    Examples
    --------
    >>> round(expected_chi_square(np.array([1.0, 7.0]), 5, "fifty-fifty"), 4)
    9.4286
    """
    x = np.asarray(values, dtype=float)
    positive = x > 0
    return float(np.sum(expected_squared_error(x[positive], base, rule) / x[positive]))


def chi_square_bound(values: np.ndarray, base: int, rule: str) -> tuple[float, dict]:
    """The slides' bound on ``E[U]`` (module docstring) and its ingredients.

    Parameters
    ----------
    values : ndarray
        The table's values (negative values are left out).
    base : int
    rule : str

    Returns
    -------
    bound : float
    parts : dict
        ``d``, ``e``, ``E[1/q|q>=1]`` (estimated from the cells with ``x >= B``; 0 when
        there are none), ``E[(R(r)-r)^2/r]`` and ``E[(R(r)-r)^2]``.

    Examples
    --------
    Base 2, 50/50: ``E[(R(r)-r)^2/r] = 1/2``, ``E[(R(r)-r)^2] = 1/2``; one cell below 2
    and one with q = 2:

    >>> chi_square_bound(np.array([1.0, 4.0]), 2, "fifty-fifty")[0]
    0.625
    """
    x = np.asarray(values, dtype=float)
    x = x[x >= 0]
    q, _ = decompose(x, base)
    row = rule_statistics(base, (rule,)).iloc[0]
    d, e = len(x), int((x < base).sum())
    inverse_q = float(np.mean(1.0 / q[q >= 1])) if np.any(q >= 1) else 0.0
    small, mse = float(row["E[(R(r)-r)^2/r]"]), float(row["MSE increase"])
    bound = e * small + (d - e) * mse / base * inverse_q
    return bound, {"d": d, "e": e, "E[1/q|q>=1]": inverse_q, "E[(R(r)-r)^2/r]": small,
                   "E[(R(r)-r)^2]": mse}


def degrees_of_freedom(values: np.ndarray, totals: np.ndarray, method: str) -> int:
    """Cells with ``x > 0`` whose deviation is free (module docstring), at least 1.

    Parameters
    ----------
    values : ndarray
    totals : ndarray of bool
        Cells that are the total of some relation (:attr:`Table.total_cells`).
    method : str
    """
    positive = np.asarray(values, dtype=float) > 0
    if method in (*CONTROLLED_METHODS, SMALL_COUNT):
        positive &= ~np.asarray(totals, dtype=bool)
    return max(1, int(positive.sum()))


def posterior_table(bases: int | Sequence[int], rules: tuple[str, ...] = RULES) -> pd.DataFrame:
    """Posterior probabilities of the original value given the rounded one (slide 10).

    Parameters
    ----------
    bases : int or sequence of int
    rules : tuple of str

    Returns
    -------
    DataFrame
        Long format: ``base``, ``rule``, ``rounded`` (``"0"`` or ``"mB > 0"``), ``offset``
        ``t = x - R(x)`` and ``probability``; under a uniform prior on the residue (module
        docstring).

    Examples
    --------
    Zero-restricted 50/50 rounding, base 4: ``P[x = 0 | R(x) = 0] = 2/(B+1)``, and
    ``1/(B+1)`` for each r != 0:

    >>> table = posterior_table(4, ("fifty-fifty",))
    >>> table[table["rounded"] == "0"]["probability"].tolist()
    [0.4, 0.2, 0.2, 0.2]
    """
    frames = []
    for base in dict.fromkeys(check_base(b) for b in np.atleast_1d(bases)):  # each base once
        r = np.arange(base, dtype=float)
        for rule in rules:
            p = up_probability(r, base, check_rule(rule))
            down = 1 - p
            frames.append(pd.DataFrame({"base": base, "rule": rule, "rounded": "0",
                                        "offset": np.arange(base),
                                        "probability": down / down.sum()}))
            # R(x) = mB: x = mB + t, down-rounded residue t >= 0 or up-rounded residue B + t
            weight = np.concatenate([p[1:], down])
            frames.append(pd.DataFrame({"base": base, "rule": rule, "rounded": "mB > 0",
                                        "offset": np.arange(-(base - 1), base),
                                        "probability": weight / weight.sum()}))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class TableStatistics(ResultBase):
    """Observed quality figures of one rounding beside their expectations.

    Attributes
    ----------
    base, method : int, str
    rule : str or None
        The rule whose per-cell distribution the method has (:func:`method_rule`).
    frame : DataFrame
        Rows ``mean``, ``variance`` (sample, n-1), ``sum of squared deviations``, ``U``;
        columns ``observed`` (original and rounded), ``expected given x`` (exact, over the
        method's randomness; equal to the observed value for deterministic methods) and
        ``expected (slides)`` (under the uniform-residue model; for U the slides' bound).
    df : int
        Degrees of freedom of U.
    alpha : float
        Significance level.
    critical : float
        ``chi2.ppf(1 - alpha, df)``.
    p_value : float
        ``P[chi2_df >= U observed]``.
    bound_parts : dict
        Ingredients of the slides' bound (empty without a rule).
    seconds : float
        Time taken.
    """

    base: int
    method: str
    rule: str | None
    frame: pd.DataFrame
    df: int
    alpha: float
    critical: float
    p_value: float
    bound_parts: dict
    seconds: float = 0.0

    statuses = SignificanceStatus

    @property
    def status(self) -> SignificanceStatus:
        """``"significant"`` when the expected U exceeds the chi-square critical value, else
        ``"not significant"``."""
        return (SignificanceStatus.SIGNIFICANT if self.significant
                else SignificanceStatus.NOT_SIGNIFICANT)

    @property
    def u(self) -> float:
        """The observed conditional chi-square."""
        return float(self.frame.loc["U", "rounded"])

    @property
    def expected_u(self) -> float:
        """``E[U | x]`` (the observed U for deterministic methods)."""
        return float(self.frame.loc["U", "expected given x"])

    @property
    def significant(self) -> bool:
        """Whether the expected U exceeds the chi-square critical value."""
        return self.expected_u > self.critical

    def summary(self) -> str:
        lines = [f"Quality of {self.method} rounding, base {self.base} (df = {self.df}, "
                 f"alpha = {self.alpha:g}, critical chi-square {self.critical:.4g})"]
        for name, row in self.frame.iterrows():
            lines.append(f"  {name:<26} original {row['original']:>12.6g}  rounded "
                         f"{row['rounded']:>12.6g}  expected {row['expected given x']:>12.6g}")
        lines.append(f"  U p-value {self.p_value:.4g}; E[U|x] "
                     f"{'is' if self.significant else 'is not'} significant")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def _dict_fields(self) -> dict:
        return {"df": self.df, "alpha": self.alpha, "critical": self.critical,
                "U": self.u, "expected_U": self.expected_u, "p_value": self.p_value,
                "significant": self.significant,
                "table": {name: {k: _json_number(v) for k, v in row.items()}
                          for name, row in self.frame.iterrows()},
                "bound": {k: _json_number(v) for k, v in self.bound_parts.items()}}

    def to_report(self) -> Section:
        from sdcreport import Section

        return (Section(f"Quality statistics ({self.method}, base {self.base})")
                .add_text("Observed values on this table beside their expectations: exact "
                          "given the table (over the method's randomness) and under the "
                          "slides' model (residue uniform on 0..B-1; for U the slides' bound "
                          "on E[U]).")
                .add_metrics({"U observed": self.u, "E[U | x]": self.expected_u,
                              "df": self.df, f"critical chi-square ({1 - self.alpha:g})":
                              self.critical, "p-value of U": self.p_value,
                              "E[U | x] significant": self.significant})
                .add_table(self.frame.reset_index(names="quantity"),
                           "Mean, variance, squared error and U"))


def _json_number(value: object) -> object:
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def table_statistics(
    original: np.ndarray,
    rounded: np.ndarray,
    base: int,
    method: str,
    totals: np.ndarray,
    *,
    alpha: float = 0.05,
    df: int | None = None,
) -> TableStatistics:
    """Quality figures of one rounding of a table (module docstring).

    Parameters
    ----------
    original, rounded : ndarray
        Values before and after rounding, in cell order.
    base : int
    method : str
        One of :data:`METHODS`.
    totals : ndarray of bool
        Total cells (for the degrees of freedom).
    alpha : float
        Significance level of the chi-square comparison, in (0, 1).
    df : int, optional
        Degrees of freedom of U (default :func:`degrees_of_freedom`).

    Returns
    -------
    TableStatistics

    Examples
    --------
    >>> s = table_statistics(np.array([1.0, 7.0]), np.array([0.0, 10.0]), 5, "conventional",
    ...                      np.array([False, False]))
    >>> round(s.u, 4), s.df
    (2.2857, 2)
    """
    start = perf_counter()
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha!r}")
    rule = method_rule(method)
    x = np.asarray(original, dtype=float)
    R = np.asarray(rounded, dtype=float)
    df = degrees_of_freedom(x, totals, method) if df is None else int(df)
    if df < 1:
        raise InputError(f"df must be a positive integer, got {df}")
    sse, u = float(np.sum((R - x) ** 2)), conditional_chi_square(x, R)
    nan = float("nan")
    if rule is None:  # a deterministic optimum: the expectation given x is what happened
        expected_mean, expected_sse, expected_u = R.mean(), sse, u
        slides, parts = {"mean": nan, "variance": nan, "sse": nan, "U": nan}, {}
    else:
        q, r = decompose(x, base)
        expected_mean = float(np.mean(base * (q + up_probability(r, base, rule))))
        expected_sse = float(expected_squared_error(x, base, rule).sum())
        expected_u = expected_chi_square(x, base, rule)
        row = rule_statistics(base, (rule,)).iloc[0]
        bound, parts = chi_square_bound(x, base, rule)
        slides = {"mean": x.mean() + row["bias"],
                  "variance": _variance(x) + row["variance increase"],
                  "sse": len(x) * row["MSE increase"], "U": bound}
    frame = pd.DataFrame(
        {"original": [x.mean(), _variance(x), 0.0, 0.0],
         "rounded": [R.mean(), _variance(R), sse, u],
         "expected given x": [expected_mean, nan, expected_sse, expected_u],
         "expected (slides)": [slides["mean"], slides["variance"], slides["sse"], slides["U"]]},
        index=["mean", "variance", "sum of squared deviations", "U"])
    critical = float(stats.chi2.ppf(1 - alpha, df))
    return TableStatistics(base, method, rule, frame, df, alpha, critical,
                           float(stats.chi2.sf(u, df)), parts, perf_counter() - start)


def _variance(values: np.ndarray) -> float:
    return float(np.var(values, ddof=1)) if len(values) > 1 else 0.0
