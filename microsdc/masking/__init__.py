"""Masking methods that produce protected microdata: MDAV microaggregation, additive and
correlated noise, rank swapping.

Every method takes a DataFrame (or a 2-D array) of numeric columns without missing values and
returns the same type with the same columns, index and row order; random methods take
``seed``.
"""

from microsdc.masking._microaggregation import mdav, mdav_groups
from microsdc.masking._noise import additive_noise, correlated_noise
from microsdc.masking._swap import rank_swap

__all__ = ["mdav", "mdav_groups", "additive_noise", "correlated_noise", "rank_swap"]
