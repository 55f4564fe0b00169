"""Hypercubes of a hierarchical table: deviations the relations allow, found without an LP.

In a table that is the cross product of hierarchies, the product of one vector per
dimension (a sibling pair or a vertical path, each continued down to a leaf) is a deviation
that satisfies every relation (:mod:`tabsdc._hypercubes.lines`); when every corner has room
for the deviation in its sign's direction it proves a protection requirement of the cell it
goes through. The hypercube suppression method builds patterns from them
(:mod:`tabsdc.suppression._hypercube`) and the audit finds them in a published pattern as
witnesses (:mod:`tabsdc.audit._witness_search`); both use this search, which imports
neither.

* :mod:`.lines`: the one-dimensional vectors through each code, as matrices;
* :mod:`.contraction`: sums over the corners of every candidate as matrix products;
* :mod:`.search`: the candidates of the primaries and their evaluation on a pattern;
* :mod:`.cover`: the hypercubes chosen per primary, the choice for one primary, the
  hypercubes as columns of signs;
* :mod:`.insiders`: hypercubes clear of the respondents of single-contributor cells.
"""

from tabsdc._hypercubes.cover import Cover, choose_hypercubes, deviation_columns
from tabsdc._hypercubes.insiders import avoid_insiders
from tabsdc._hypercubes.lines import line_vectors
from tabsdc._hypercubes.search import (
    MAX_COMBINATIONS,
    WIDE_COMBINATIONS,
    Evaluation,
    Hypercube,
    HypercubeSearch,
    Pattern,
)

__all__ = ["Cover", "Evaluation", "Hypercube", "HypercubeSearch", "Pattern",
           "avoid_insiders", "choose_hypercubes", "deviation_columns", "line_vectors",
           "MAX_COMBINATIONS", "WIDE_COMBINATIONS"]
