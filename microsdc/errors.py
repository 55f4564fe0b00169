"""Errors raised by :mod:`microsdc`; every one names the offending column or record."""

__all__ = ["MicroSDCError", "DataError"]


class MicroSDCError(Exception):
    """Base class of every error raised by :mod:`microsdc`."""


class DataError(MicroSDCError, ValueError):
    """Unusable microdata: missing, non-numeric or misaligned columns or records."""
