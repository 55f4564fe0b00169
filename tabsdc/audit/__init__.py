"""Audit of published tables: the interval attack, protection verification, the insider
attack and the p/q-interval attack.

See :func:`audit` (verdicts per cell and for the table), :class:`IntervalAttack` (the exact
intervals alone), :func:`insider_attack` (what the respondent of a single-contributor cell
learns) and :func:`pq_interval_attack` (what published intervals reveal).
"""

from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._respondents import Insiders, insider_groups
from tabsdc.audit._insider import InsiderAttack, insider_attack, insider_proofs
from tabsdc.audit._intervals import IntervalAttack, Intervals
from tabsdc.audit._pq_attack import PQAttackResult, cycle_pq_attack, pq_interval_attack
from tabsdc.audit._verify import AuditResult, audit, print_progress

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
