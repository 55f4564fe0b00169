"""Errors raised by :mod:`tabsdc`; every one names the offending cell, code, column or relation."""


class TabSDCError(Exception):
    """Base class of every error raised by :mod:`tabsdc`."""


class InputError(TabSDCError, ValueError):
    """Missing, non-numeric, duplicate or otherwise unusable input."""


class AdditivityError(TabSDCError, ValueError):
    """A table whose totals do not equal the sum of their parts within tolerance."""


class HierarchyError(TabSDCError, ValueError):
    """A code hierarchy that is malformed or a code that is not in it."""


class RuleError(TabSDCError, ValueError):
    """A sensitivity rule that cannot be applied to the data as given."""


class JJFormatError(TabSDCError, ValueError):
    """A malformed JJ file; the message gives the line number."""


class SolverError(TabSDCError, RuntimeError):
    """A solver that is missing, or that stopped without a usable solution."""


class NoSolutionError(SolverError):
    """A method that stopped (its time limit, the solver) without any result it could
    verify: not the input's fault (the command lines' exit status 1, not 2)."""


# Tracebacks and reprs name the errors where users find them (``tabsdc.InputError``), not
# the private module that defines them.
for _error in (TabSDCError, InputError, AdditivityError, HierarchyError, RuleError,
               JJFormatError, SolverError, NoSolutionError):
    _error.__module__ = "tabsdc"
del _error
