"""Cell status letters, those of tau-ARGUS and of the JJ format (see ``docs/concepts.md``).

Examples
--------
>>> "u" in HIDDEN_STATUSES, "z" in HIDDEN_STATUSES
(True, False)
"""

#: Cell status letters (tau-ARGUS / JJ): safe, primary, secondary, must publish; and the
#: sdcTable letters ``x`` (secondary) and ``w`` (never-published dummy) read from JJ files.
STATUS_CODES = ("s", "u", "m", "z", "x", "w")

#: Statuses of cells that are not published: primary (``u``), secondary (``m``, sdcTable's
#: ``x``) and never-published dummies (``w``).
HIDDEN_STATUSES = ("u", "m", "x", "w")
