"""Hypercube suppression for large hierarchical tables: protecting structures without an LP.

In a table that is the cross product of hierarchies, a deviation that is a product of one
vector per dimension, ``d(x_1, ..., x_k) = t * f_1(x_1) * ... * f_k(x_k)``, satisfies every
relation of the table exactly when each ``f_d`` satisfies the one-dimensional relations of
its hierarchy ``H_d f_d = 0`` (a relation along dimension d at fixed other codes reads
``(H_d f_d)_P * prod_{e != d} f_e(y_e) = 0``). The smallest such vectors through a code
``x`` are

* a **sibling pair**: ``+1`` on ``x`` and ``-1`` on a sibling ``b`` (same parent), each
  continued down a chain of children to a leaf (a code with children must move with one of
  them);
* a **vertical path**: ``+1`` on every ancestor of ``x``, on ``x`` and on a chain of
  children below it (the total moves with its part).

Their product is the hypercube of tau-ARGUS's GHMITER (Repsilber; de Wolf, *Hypercube*,
tau-ARGUS manual section 4.2.3) generalised to hierarchies: its corners are suppressed, and
the deviation ``t`` along it is an attack in the sense of
:mod:`tabsdc.suppression._attacker` as long as every corner can move by ``t`` in its sign's
direction (``U`` up, ``L`` down). A primary is protected upward (downward) by a hypercube
whose corners all have that room for ``t = upl`` (``lpl``): the hypercube is its certificate,
so the pattern is protected by construction and no LP is solved.

Primaries are taken largest protection level first; each gets the hypercube that adds the
least cost to the pattern so far (already suppressed corners are free). All candidates of a
primary are evaluated at once without listing their corners: what a hypercube adds and how
many of its corners lack room are sums over a product of codes, so they are matrix products
on the small grid of cells the primary's candidates use (:meth:`HypercubeSearch.evaluate`),
and primaries whose candidates have the same shape are evaluated together, a batch at a
time (:func:`hypercube_pattern`). A requirement no hypercube can meet (not enough room on
any candidate) is tried again with every chain down to a leaf and more candidates; what is
still unmet is left to the caller, which routes it by LP. A clean-up pass then publishes
again, most expensive first, every secondary whose primaries all find another hypercube
among the cells still hidden.

The candidate search, the cover of chosen hypercubes and the hypercubes clear of the
respondents are shared with the audit's witness search and live below both
(:mod:`tabsdc._hypercubes`); this package holds the method's own phases, one idea per module:

* :mod:`.greedy`: a least-cost hypercube per primary, largest level first, and the wider
  search;
* :mod:`.boxes`: routing within a box around the primary of what no hypercube meets;
* :mod:`.cleanup`: the clean-up against the hypercubes;
* :mod:`.certify`: the independent check of the certificates;
* :mod:`.method`: the method, its phases in order.
"""

from tabsdc._hypercubes import WIDE_COMBINATIONS, HypercubeSearch, line_vectors
from tabsdc.suppression._hypercube.boxes import BOX_CELLS, route_in_boxes
from tabsdc.suppression._hypercube.certify import uncertified
from tabsdc.suppression._hypercube.cleanup import clean_up_hypercubes
from tabsdc.suppression._hypercube.greedy import hypercube_pattern, widen_cover
from tabsdc.suppression._hypercube.method import hypercube_method, hypercube_phases

#: The method's phases, and the search names its callers use with them.
__all__ = ["hypercube_method", "hypercube_phases", "hypercube_pattern", "widen_cover",
           "route_in_boxes",
           "clean_up_hypercubes", "uncertified", "BOX_CELLS", "HypercubeSearch",
           "line_vectors", "WIDE_COMBINATIONS"]
