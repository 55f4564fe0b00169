"""The long calls of the web app, as the worker process runs them.

Each entry of :data:`TASKS` is a public function of the toolkit, or a thin adapter where the
function's progress callback is not the one-line kind (:func:`release_attack`). The worker
(:mod:`tabsdc.ui._jobs`) preloads this module, so every method's code is imported once.
"""

from __future__ import annotations

from collections.abc import Callable

from tabsdc._table import Table
from tabsdc.audit import AuditResult, audit
from tabsdc.cta import adjust
from tabsdc.rounding import choose_base, round_table
from tabsdc.suppression import suppress


def release_attack(table: Table, q: float, progress: Callable[[str], None] | None = None
                   ) -> AuditResult:
    """The audit under the p/q prior (every value known within ``q`` %) with the
    p/q-interval attack on the intervals, as if they were published.

    Progress: a line ``bounds done/total`` every twentieth of the bounds.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["1", "2", "1", "2"],
    ...                       "value": [10.0, 5.0, 7.0, 8.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> hidden = ["s", "s", "s", "s", "u", "m", "s", "m", "m"]
    >>> result = release_attack(t.with_columns(status=hidden), q=50)
    >>> result.prior, result.pq_attack is not None
    ('every value known within q = 50 %', True)
    """
    return audit(table, prior="pq", q=q, release_intervals=True, progress=progress)


#: What the page may start, by name.
TASKS: dict[str, Callable] = {
    "suppression": suppress,
    "rounding": round_table,
    "cta": adjust,
    "bases": choose_base,
    "attack": release_attack,
}
