"""``<SUPPRESS>``: tau-ARGUS's protection methods mapped to the toolkit's.

==========================================  ================================================
tau-ARGUS                                   here
==========================================  ================================================
``OPT(t, minutes)``                         :func:`~tabsdc.suppression.suppress`
                                            ``method="optimal"``
``MOD(t, minutes, ss, sm, mf[, ...])``      ``method="modular"``; singleton protection on
                                            unless ss = sm = mf = 0
``GH(t, bounds %, model size, singleton)``  ``method="hypercube"``: the toolkit's own
                                            hypercube method; the a-priori bounds
                                            percentage and model size have no counterpart
                                            and are logged
``NET(t)``                                  ``method="network"`` (two-dimensional tables)
``RND(t, base, steps, minutes, part, stop)`` :func:`~tabsdc.rounding.round_table`
                                            ``method="controlled"``, ``max_steps = steps``
``CTA(t)``                                  :func:`~tabsdc.cta.adjust` ``method="milp"``
==========================================  ================================================

**Time limits** mean what they mean in tau-ARGUS (manual 5.7, SUPPRESS; 4.4):

* ``OPT(t, minutes)``, the maximum computing time: the whole search of the optimal method
  for the table (:func:`time_limits`);
* ``MOD(t, minutes, ...)``, the maximum time per sub-table: each sub-table's optimisation
  (``suppress(subtable_limit=)``); the protection as a whole has no limit of its own;
* ``RND(t, base, steps, minutes, ...)``, the maximum time (10 minutes when not given): the
  controlled rounding;
* ``GH``, ``NET`` and ``CTA`` take no time limit.

The job's own limit (``run_batch(time_limit=)``, ``tabsdc argus --time-limit``) caps each
protection by what is left of it. The log says what the limit of each protection meant.
The audit that follows every protection is not counted in its limit (as everywhere in the
toolkit); the log gives its time. A time-limited search reports its gap and is never called
optimal.

**Linked tables.** Table number 0 (``GH(0, ...)``, ``MOD(0, ...)``, ``OPT(0, ...)``; what
rtauargus writes for ``linked = TRUE``) protects every table of the job at once
(:func:`protect_linked`): the tables become one :class:`~tabsdc._tableset.TableSet`, in which a
cell the tables share is one cell with one status, and the audit attacks all their
relations together. tau-ARGUS links tables for GH and MOD only; OPT is accepted here too.

Suppression costs are the table's ``cost`` column (the SPECIFYTABLE cost variable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._table import Table
from tabsdc._tableset import TableSet
from tabsdc.audit import audit
from tabsdc.cta import adjust
from tabsdc.rounding import round_table
from tabsdc.suppression import SUBTABLE_SECONDS, suppress

#: Methods that protect linked tables (table number 0).
LINKED_METHODS = ("GH", "MOD", "OPT")
#: tau-ARGUS's default maximum time of RND, in minutes.
RND_MINUTES = 10.0
_SUPPRESSION = {"OPT": "optimal", "MOD": "modular", "GH": "hypercube", "NET": "network"}
#: Position of the time limit (minutes) among the numbers after the table number.
_MINUTES_AT = {"OPT": 0, "MOD": 0, "RND": 2}


@dataclass(frozen=True)
class ProtectionOutcome:
    """The protected table, the original for rounded or adjusted tables, the method, whether
    the release passed its check (audit, additivity, verification) and the result's
    ``to_dict()``."""

    table: Table
    original: Table | None
    method: str
    passed: bool
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TimeLimits:
    """What a SUPPRESS command's time limit means here.

    Attributes
    ----------
    total : float or None
        Seconds for the method's whole search (None: no limit).
    subtable : float or None
        Seconds for each sub-table of the modular method (None: the method's default).
    meaning : str
        The sentence the log gives.
    """

    total: float | None
    subtable: float | None
    meaning: str


def parse_parameters(name: str, parameters: Sequence[str]) -> tuple[float, ...]:
    """The numbers after the table number of ``<SUPPRESS> name(t, ...)``.

    Raises
    ------
    InputError
        A parameter that is not a number, a time limit that is not positive, a rounding
        base that is not a whole number >= 2.

    Examples
    --------
    >>> parse_parameters("MOD", ["5", "1", "1", "0"])
    (5.0, 1.0, 1.0, 0.0)
    """
    numbers = tuple(_number(name, p) for p in parameters if p != "")
    if name == "RND" and (not numbers or numbers[0] < 2 or numbers[0] != int(numbers[0])):
        raise InputError("RND needs a whole rounding base >= 2 after the table number")
    position = _MINUTES_AT.get(name)
    if position is not None and len(numbers) > position and not numbers[position] > 0:
        raise InputError(f"{name}: the time limit must be a positive number of minutes, not "
                         f"{numbers[position]:g}")
    return numbers



def time_limits(name: str, numbers: Sequence[float], job_left: float | None) -> TimeLimits:
    """The time limits of ``<SUPPRESS> name(t, numbers...)`` with ``job_left`` seconds left
    of the job's own limit (None: none), as tau-ARGUS means them (module text).

    Examples
    --------
    >>> time_limits("OPT", [3], None).total
    180.0
    >>> limits = time_limits("MOD", [5], 100.0)
    >>> limits.total, limits.subtable
    (100.0, 300.0)
    >>> print(limits.meaning)  # doctest: +NORMALIZE_WHITESPACE
    time limit: 5 min per sub-table (tau-ARGUS's maximum time per sub-table);
    the job's time limit leaves 100 s for the whole protection
    """
    position = _MINUTES_AT.get(name)
    minutes = numbers[position] if position is not None and len(numbers) > position else None
    if name == "RND" and minutes is None:
        minutes = RND_MINUTES
    job = ("" if job_left is None else
           f"; the job's time limit leaves {job_left:.4g} s for the whole protection")
    if minutes is None:
        what = {"OPT": "OPT without a maximum computing time",
                "MOD": f"MOD without a maximum time per sub-table (each sub-table at most "
                       f"{SUBTABLE_SECONDS:g} s, the method's default)"
                }.get(name, f"{name} takes no time limit")
        return TimeLimits(job_left, None, f"time limit: none ({what}){job}")
    seconds = 60.0 * minutes
    if name == "MOD":
        return TimeLimits(job_left, seconds, f"time limit: {minutes:g} min per sub-table "
                          f"(tau-ARGUS's maximum time per sub-table){job}")
    total = seconds if job_left is None else min(seconds, job_left)
    meaning = {"OPT": "the optimal method's whole search (tau-ARGUS's maximum computing "
                      "time)", "RND": "the controlled rounding (tau-ARGUS's maximum time)"}
    return TimeLimits(total, None, f"time limit: {minutes:g} min for {meaning[name]}{job}")


def protect(table: Table, name: str, numbers: Sequence[float], *,
            time_limit: float | None = None, progress: Callable[[str], None] | None = None,
            label: str = "", n_jobs: int | None = 1) -> ProtectionOutcome:
    """Run tau-ARGUS method ``name`` (``OPT``, ``MOD``, ``GH``, ``NET``, ``RND``, ``CTA``) on
    ``table`` with its parameters after the table number (:func:`parse_parameters`);
    ``time_limit`` is what is left of the job's limit; ``progress`` receives the log lines;
    ``n_jobs``: processes for a suppression's independent work (``suppress(n_jobs=)``).
    """
    say = progress or (lambda line: None)
    limits = time_limits(name, numbers, time_limit)
    if name in _SUPPRESSION:
        return _suppression(table, name, numbers, limits, say, f"table {label}", n_jobs=n_jobs)
    say(limits.meaning)
    if name == "RND":
        return _rounding(table, numbers, limits.total, say, label)
    return _adjustment(table, limits.total, say, label)


def protect_linked(tables: Sequence[Table], labels: Sequence[str], name: str,
                   numbers: Sequence[float], *, time_limit: float | None = None,
                   progress: Callable[[str], None] | None = None, n_jobs: int | None = 1
                   ) -> tuple[ProtectionOutcome, ...]:
    """Protect ``tables`` together (table number 0): one outcome per table, each with the
    verdict of the audit of all the tables' relations at once (the parameters as
    :func:`protect`'s).

    Raises
    ------
    InputError
        A method that does not link tables (not GH, MOD or OPT); tables that disagree on a
        shared cell; a spanning variable with different hierarchies in two tables.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc._rules import FrequencyRule, apply_rules
    >>> data = pd.DataFrame({"act": list("AABBC"), "reg": list("NSNSS"),
    ...                      "size": list("12121"), "v": [5.0, 3.0, 4.0, 6.0, 2.0]})
    >>> one, two = (apply_rules(Table.from_microdata(data, dims, "v"), FrequencyRule(2)).table
    ...             for dims in (["act", "reg"], ["reg", "size"]))
    >>> outcomes = protect_linked([one, two], ["act x reg", "reg x size"], "OPT", [1])
    >>> [outcome.passed for outcome in outcomes]
    [True, True]
    """
    if name not in LINKED_METHODS:
        raise InputError(f"table number 0 (linked tables) is possible with "
                         f"{', '.join(LINKED_METHODS)}, not {name}")
    names = [f"table {n} ({label})" for n, label in enumerate(labels, start=1)]
    linked = TableSet.from_tables(list(tables), names=names)
    say = progress or (lambda line: None)
    say(f"linked tables: {len(tables)} tables protected together, {linked.n_cells} distinct "
        f"cells (a shared cell is one cell), {linked.n_relations} relations")
    outcome = _suppression(linked, name, numbers, time_limits(name, numbers, time_limit), say,
                           "the linked tables", audit_of="the linked tables together",
                           n_jobs=n_jobs)
    return tuple(replace(outcome, table=table) for table in outcome.table.tables)


def audit_together(tables: Sequence[Table], labels: Sequence[str]) -> tuple[bool, str]:
    """Audit tables protected one by one as their reader sees them: all published together.

    The tables are linked (:class:`~tabsdc._tableset.TableSet`): a cell published by any of
    them is published (a primary published by one table is disclosed), a cell hidden by all
    of them is hidden, and the interval attack runs on the relations of all the tables at
    once. Returns the verdict and the sentence the log gives.

    Raises
    ------
    TabSDCError
        Tables that cannot be linked (shared cells that disagree, a spanning variable with
        two hierarchies).

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc._rules import FrequencyRule, apply_rules
    >>> data = pd.DataFrame({"act": list("AABB"), "reg": list("NSNS"), "v": [5.0, 3, 4, 6]})
    >>> one = apply_rules(Table.from_microdata(data, ["act", "reg"], "v"), FrequencyRule(2))
    >>> two = Table.from_microdata(data, ["act"], "v")  # publishes the activity margin
    >>> hidden = one.table.with_columns(status="u")  # the first table hides every cell
    >>> audit_together([hidden, two], ["act x reg", "act"])[0]
    False
    """
    names = [f"table {n} ({label})" for n, label in enumerate(labels, start=1)]
    linked = TableSet.from_tables(list(tables), names=names)
    combined = linked.combined
    published = np.zeros(combined.n_cells, dtype=bool)
    for table, position in zip(tables, linked.positions, strict=True):
        published[position] |= ~table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    status = combined.cells["status"].to_numpy()
    disclosed = published & (status == "u")
    verdict = audit(combined.with_columns(status=np.where(published, "s", status)))
    failing = int(disclosed.sum()) + len(verdict.failures)
    tables_named = ", ".join(str(n) for n in range(1, len(tables) + 1))
    if not failing:
        return True, (f"tables {tables_named} (one response, protected one by one) audited "
                      "together: every primary cell protected")
    examples = combined.cell_labels(np.flatnonzero(disclosed)[:3].tolist()) if disclosed.any() \
        else combined.cell_labels(combined.cells.index.get_indexer(verdict.failures.index[:3]))
    return False, (f"tables {tables_named} were protected one by one; published together "
                   f"they leave {failing} primary cell(s) NOT protected (e.g. "
                   f"{'; '.join(examples)}): protect them together with table number 0, "
                   "e.g. <SUPPRESS> GH(0,100)")


def _number(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{name}: parameter {text!r} is not a number") from None


def _suppression(table: Table | TableSet, name: str, numbers: Sequence[float],
                 limits: TimeLimits, say: Callable[[str], None], what: str,
                 audit_of: str = "", n_jobs: int | None = 1) -> ProtectionOutcome:
    method = _SUPPRESSION[name]
    singletons = True
    if name == "MOD" and len(numbers) > 1:
        singletons = any(x == 1 for x in numbers[1:4])
    if name == "GH":
        say("GH runs the toolkit's hypercube method (protecting hypercubes through the "
            "hierarchies, then routing and clean-up), audited like every method")
        if numbers:
            say(f"GH's a-priori bounds percentage ({numbers[0]:g}) and model size have "
                "no counterpart: the protection model uses the table's own bounds")
        if len(numbers) > 2:
            singletons = numbers[2] == 1
    say(f"Start of the {method} protection for {what}")
    say(limits.meaning)
    result = suppress(table, method, "cost", time_limit=limits.total, singletons=singletons,
                      subtable_limit=limits.subtable, progress=say, n_jobs=n_jobs)
    totals = result.totals()
    s = result.stats
    say(f"End of {method} protection ({result.seconds:.2f} s, search {s.seconds:.2f} s): "
        f"status {s.status}; {totals['secondary cells']} cells have been suppressed "
        f"(secondaries), cost {totals['objective (cost of secondaries)']:.6g}")
    if method == "optimal":
        say(f"  objective {s.objective:.10g}, bound {s.bound:.10g}, gap "
            f"{100 * s.gap:.4g} %" + ("" if s.status == "optimal" else
                                     " (time limit: NOT proven optimal)"))
    elif result.audit is not None:  # a heuristic pattern is never shown without its bound
        say("  " + result.quality())
    on = f" of {audit_of}" if audit_of else ""
    if result.audit is None:
        say("  no protecting pattern within the time limit: every cell withheld")
    else:
        say(f"  audit{on}: " + ("every primary cell protected" if result.audit.protected
                                else f"{len(result.audit.failures)} primary cells NOT "
                                "protected"))
    return ProtectionOutcome(result.table, None, method, result.protected, result.to_dict())


def _rounding(table: Table, numbers: Sequence[float], time_limit: float | None,
              say: Callable[[str], None], label: str) -> ProtectionOutcome:
    base = int(numbers[0])
    steps = int(numbers[1]) if len(numbers) > 1 else 0
    say(f"Start of controlled rounding (base {base}) for table {label}")
    if len(numbers) > 3:
        say("RND partitions and stopping rule have no counterpart: controlled "
            "rounding here solves one model to optimality within the time limit")
    result = round_table(table, base, "controlled", time_limit=time_limit, max_steps=steps)
    solve = f", rounding {result.solve.seconds:.2f} s" if result.solve is not None else ""
    say(f"End of controlled rounding ({result.seconds:.2f} s{solve}): status {result.status}, "
        f"{result.n_changed} cells changed, largest change {result.max_abs_deviation:g}, "
        f"additive {result.additive}")
    if result.audit is not None:
        say("  audit: " + result.audit.summary())
    return ProtectionOutcome(result.table, table, "controlled rounding", result.additive,
                             result.to_dict())


def _adjustment(table: Table, time_limit: float | None, say: Callable[[str], None],
                label: str) -> ProtectionOutcome:
    say(f"Start of controlled tabular adjustment for table {label}")
    result = adjust(table, "milp", time_limit=time_limit)
    say(f"End of controlled tabular adjustment: status {result.status}, objective "
        f"{result.objective:.6g}, gap {result.gap if result.gap is not None else 'n/a'}")
    say("  verification: " + ("passed" if result.verification.passed else "FAILED"))
    return ProtectionOutcome(result.table, table, "controlled tabular adjustment",
                             result.verification.passed, result.to_dict())
