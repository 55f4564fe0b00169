"""Errors raised by :mod:`microsdc`; every one names the offending column or record."""


class MicroSDCError(Exception):
    """Base class of every error raised by :mod:`microsdc`."""


class DataError(MicroSDCError, ValueError):
    """Unusable microdata: missing, non-numeric or misaligned columns or records."""


# Tracebacks and reprs name the errors where users find them (``microsdc.DataError``).
for _error in (MicroSDCError, DataError):
    _error.__module__ = "microsdc"
del _error
