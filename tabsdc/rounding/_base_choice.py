"""Choosing the rounding base: the largest base whose expected distortion is not significant.

Cox (*Towards a quality assessment of disclosure-limited statistical data*, slide 9): "NSO
can select B so that the expected conditional Chi-square value is not statistically
significant". For each candidate base the conditional chi-square ``U`` of the method on
the table is compared with ``chi2.ppf(1 - alpha, df)``; the chosen base is the largest one
that is not significant (a larger base protects more).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from sdcreport._contract import ResultBase
from sdcreport._statuses import BaseChoiceStatus
from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.rounding._api import round_table
from tabsdc.rounding._rules import check_base
from tabsdc.rounding._statistics import (
    chi_square_bound,
    degrees_of_freedom,
    expected_chi_square,
    method_rule,
)

if TYPE_CHECKING:
    from sdcreport import Section

#: What is compared with the critical value.
CRITERIA = ("expected", "bound")


@dataclass(frozen=True)
class BaseChoice(ResultBase):
    """Outcome of :func:`choose_base`.

    Attributes
    ----------
    base : int or None
        The largest candidate whose U is not significant (None if every one is).
    frame : DataFrame
        One row per candidate: ``base``, ``U`` (the compared value), ``E[U|x]``,
        ``slides' bound``, ``df``, ``critical`` and ``significant``.
    method, criterion : str
    alpha : float
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"chosen"``, or
    ``"none acceptable"`` when every candidate is significant).
    """

    base: int | None
    frame: pd.DataFrame
    method: str
    criterion: str
    alpha: float
    seconds: float

    statuses = BaseChoiceStatus

    @property
    def status(self) -> BaseChoiceStatus:
        """``"chosen"``, or ``"none acceptable"`` when U is significant for every candidate."""
        return BaseChoiceStatus.NONE_ACCEPTABLE if self.base is None else BaseChoiceStatus.CHOSEN

    def summary(self) -> str:
        chosen = "none is acceptable" if self.base is None else f"base {self.base}"
        return (f"Base choice for {self.method} rounding ({self.criterion} U, alpha "
                f"{self.alpha:g}): {chosen}\n" + self.frame.to_string(index=False))

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def _dict_fields(self) -> dict[str, Any]:
        """The chosen base, the method, criterion and level, one record per candidate."""
        from sdcreport._report import jsonable

        return jsonable({"base": self.base, "method": self.method, "criterion": self.criterion,
                         "alpha": self.alpha, "candidates": self.frame.to_dict("records")})

    def to_report(self) -> Section:
        from sdcreport import Section

        return (Section("Choice of the rounding base")
                .add_text(__doc__.split("\n\n")[1].replace("\n", " "))
                .add_metrics({"chosen base": self.base, "method": self.method,
                              "criterion": self.criterion, "alpha": self.alpha})
                .add_table(self.frame, "Conditional chi-square per candidate base"))


def choose_base(
    table: Table,
    candidates: Sequence[int] = (2, 3, 4, 5, 10),
    method: str = "fifty-fifty",
    *,
    alpha: float = 0.05,
    criterion: str = "expected",
    df: int | None = None,
) -> BaseChoice:
    """The largest candidate base for which U is not significant at level ``alpha``.

    Parameters
    ----------
    table : Table
    candidates : sequence of int
        Bases to try (each an integer >= 2).
    method : str
        The rounding method (see :func:`tabsdc.rounding.round_table`).
    alpha : float
        Significance level, in (0, 1).
    criterion : {"expected", "bound"}
        ``"expected"``: ``E[U | x]``, exact given the table (for optimal controlled
        rounding, which is deterministic, the U of the optimal rounding, computed for each
        base); ``"bound"``: the slides' bound on E[U] under the uniform-residue model (not
        available for optimal controlled rounding).
    df : int, optional
        Degrees of freedom (default
        :func:`~tabsdc.rounding._statistics.degrees_of_freedom`).

    Returns
    -------
    BaseChoice

    Raises
    ------
    InputError
        No candidates, a bad base, alpha or criterion, or ``"bound"`` with ``"controlled"``.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"c": [f"k{i}" for i in range(20)],
    ...                       "value": [float(v) for v in range(100, 120)]})
    >>> choice = choose_base(Table.from_aggregated(cells, ["c"]), (2, 5, 10, 50))
    >>> choice.base, choice.status
    (10, 'chosen')
    """
    start = perf_counter()
    check_choice("criterion", criterion, CRITERIA)
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha!r}")
    bases = sorted({check_base(b) for b in candidates})
    if not bases:
        raise InputError("choose_base needs at least one candidate base")
    rule = method_rule(method)
    if rule is None and criterion == "bound":
        raise InputError("the slides' bound needs a rule; optimal controlled rounding has "
                         "none (use criterion='expected')")
    values = table.values
    df = degrees_of_freedom(values, table.total_cells, method) if df is None else int(df)
    critical = float(stats.chi2.ppf(1 - alpha, df))
    rows = []
    for base in bases:
        if rule is None:
            expected = round_table(table, base, method, audit=False).statistics.u
            bound = np.nan
        else:
            expected = expected_chi_square(values, base, rule)
            bound = chi_square_bound(values, base, rule)[0]
        compared = expected if criterion == "expected" else bound
        rows.append({"base": base, "U": compared, "E[U|x]": expected, "slides' bound": bound,
                     "df": df, "critical": critical, "significant": compared > critical})
    frame = pd.DataFrame(rows)
    acceptable = frame.loc[~frame["significant"], "base"]
    chosen = int(acceptable.max()) if len(acceptable) else None
    return BaseChoice(chosen, frame, method, criterion, alpha, perf_counter() - start)
