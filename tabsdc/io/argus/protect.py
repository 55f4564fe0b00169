"""``<SUPPRESS>``: tau-ARGUS's protection methods mapped to the toolkit's.

==========================================  ================================================
tau-ARGUS                                   here
==========================================  ================================================
``OPT(t, minutes)``                         :func:`~tabsdc.suppression.suppress`
                                            ``method="optimal"``, ``time_limit = 60 minutes``
``MOD(t, minutes, ss, sm, mf[, ...])``      ``method="modular"`` (per sub-table limit);
                                            singleton protection on unless ss = sm = mf = 0
``GH(t, bounds %, model size, singleton)``  ``method="hypercube"``: the toolkit's own
                                            hypercube method; the a-priori bounds
                                            percentage and model size have no counterpart
                                            and are logged
``NET(t)``                                  ``method="network"`` (two-dimensional tables)
``RND(t, base, steps, minutes, part, stop)`` :func:`~tabsdc.rounding.round_table`
                                            ``method="controlled"``, ``max_steps = steps``
``CTA(t)``                                  :func:`~tabsdc.cta.adjust` ``method="milp"``
==========================================  ================================================

Suppression costs are the table's ``cost`` column (the SPECIFYTABLE cost variable).
Every result carries the audit of its release, and the log says whether it passed and, for
a time-limited optimal run, the gap (never called optimal without proof).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tabsdc.cta import adjust
from tabsdc.errors import InputError
from tabsdc.rounding import round_table
from tabsdc.suppression import suppress
from tabsdc.table import Table

__all__ = ["ProtectionOutcome", "protect"]


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


def protect(table: Table, name: str, parameters: Sequence[str], *,
            time_limit: float | None = None, progress: Callable[[str], None] | None = None,
            label: str = "") -> ProtectionOutcome:
    """Run tau-ARGUS method ``name`` (``OPT``, ``MOD``, ``GH``, ``NET``, ``RND``, ``CTA``) with
    its batch parameters after the table number; ``progress`` receives the log lines.

    Raises
    ------
    InputError
        For parameters that are not numbers or out of range (a rounding base below 2).
    """
    numbers = [_number(name, p) for p in parameters if p != ""]
    say = progress or (lambda line: None)
    if name in ("OPT", "MOD", "GH", "NET"):
        return _suppression(table, name, numbers, time_limit, say, label)
    if name == "RND":
        return _rounding(table, numbers, time_limit, say, label)
    return _adjustment(table, time_limit, say, label)


def _number(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{name}: parameter {text!r} is not a number") from None


def _limit(minutes: float | None, time_limit: float | None) -> float | None:
    limits = [x for x in (None if minutes is None else 60 * minutes, time_limit) if x]
    return min(limits) if limits else None


def _suppression(table: Table, name: str, numbers: list[float], time_limit: float | None,
                 say: Callable[[str], None], label: str) -> ProtectionOutcome:
    method = {"OPT": "optimal", "MOD": "modular", "GH": "hypercube", "NET": "network"}[name]
    singletons = True
    limit = time_limit
    if name in ("OPT", "MOD"):
        limit = _limit(numbers[0] if numbers else None, time_limit)
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
    say(f"Start of the {method} protection for table {label}")
    result = suppress(table, method, "cost", time_limit=limit, singletons=singletons,
                      progress=say)
    totals = result.totals()
    s = result.stats
    say(f"End of {method} protection ({result.seconds:.2f} s): status {s.status}; "
               f"{totals['secondary cells']} cells have been suppressed (secondaries), "
               f"cost {totals['objective (cost of secondaries)']:.6g}")
    if method == "optimal":
        say(f"  objective {s.objective:.10g}, bound {s.bound:.10g}, gap "
                   f"{100 * s.gap:.4g} %" + ("" if s.status == "optimal" else
                                            " (time limit: NOT proven optimal)"))
    if result.audit is None:
        say("  no protecting pattern within the time limit: every cell withheld")
    else:
        say("  audit: " + ("every primary cell protected" if result.audit.protected
                           else f"{len(result.audit.failures)} primary cells NOT protected"))
    return ProtectionOutcome(result.table, None, method, result.protected, result.to_dict())


def _rounding(table: Table, numbers: list[float], time_limit: float | None,
              say: Callable[[str], None], label: str) -> ProtectionOutcome:
    if not numbers or numbers[0] < 2 or numbers[0] != int(numbers[0]):
        raise InputError("RND needs a whole rounding base >= 2 after the table number")
    base = int(numbers[0])
    steps = int(numbers[1]) if len(numbers) > 1 else 0
    minutes = numbers[2] if len(numbers) > 2 else 10.0
    say(f"Start of controlled rounding (base {base}) for table {label}")
    if len(numbers) > 3:
        say("RND partitions and stopping rule have no counterpart: controlled "
                   "rounding here solves one model to optimality within the time limit")
    result = round_table(table, base, "controlled", time_limit=_limit(minutes, time_limit),
                         max_steps=steps)
    say(f"End of controlled rounding: status {result.status}, {result.n_changed} "
               f"cells changed, largest change {result.max_abs_deviation:g}, "
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
    say("  verification: " + ("passed" if result.verification.passed
                                     else "FAILED"))
    return ProtectionOutcome(result.table, table, "controlled tabular adjustment",
                             result.verification.passed, result.to_dict())
