"""Audit of published tables: the interval attack, protection verification, the insider
attack and the p/q-interval attack.

See :func:`audit` (verdicts per cell and for the table), :class:`IntervalAttack` (the exact
intervals alone), :func:`insider_attack` (what the respondent of a single-contributor cell
learns) and :func:`pq_interval_attack` (what published intervals reveal).
"""

from tabsdc.audit.insider import InsiderAttack, insider_attack, insider_proofs
from tabsdc.audit.intervals import IntervalAttack, Intervals
from tabsdc.audit.pq_attack import PQAttackResult, cycle_pq_attack, pq_interval_attack
from tabsdc.audit.verify import HIDDEN_STATUSES, AuditResult, audit, print_progress
from tabsdc.respondents import Insiders, insider_groups

__all__ = [
    "audit",
    "AuditResult",
    "IntervalAttack",
    "Intervals",
    "pq_interval_attack",
    "cycle_pq_attack",
    "PQAttackResult",
    "HIDDEN_STATUSES",
    "print_progress",
    "InsiderAttack",
    "Insiders",
    "insider_attack",
    "insider_groups",
    "insider_proofs",
]
