"""The network-flow router for two-dimensional tables.

A 2-D table with its margins is a network: every cell lies in exactly two relations, and after
flipping the signs of some relations each cell has +1 in one and -1 in the other, so cells are
arcs between relation nodes and a deviation ``d`` with ``A d = 0`` is a circulation (Cox,
slides 17-21: protection of a cell is a flow cycle through it). The cheapest way to protect a
cell upward by ``level`` is then a min-cost flow of ``level`` units from the arc's head back to
its tail, each other cell usable forward (increase, capacity ``U``) or backward (decrease,
capacity ``L``) at cost ``c / level`` when published and almost nothing when already
suppressed. The flow is solved by :func:`networkx.network_simplex` on integers: capacities are
rounded down and the demand up after scaling, so every flow found is a valid attack.

:class:`NetworkRouter` has the interface of :class:`~tabsdc.suppression._heuristic.FlowRouter`;
the ``"network"`` method is the routing heuristic with this router.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError
from tabsdc._flows import Requirement
from tabsdc._network import relation_signs

#: Integer scale of capacities and of costs in the network simplex.
SCALE = 10**9


def arc_orientation(A: sp.sparray) -> tuple[np.ndarray, np.ndarray]:
    """Tail and head relation of every cell, or InputError when the table is no network.

    Relation signs ``s`` (:func:`tabsdc._network.relation_signs`) make
    ``s_a A[a, j] = -s_b A[b, j]`` for the two relations a, b of every cell j.
    """
    A = sp.csc_array(A)
    counts = np.diff(A.indptr)
    if (counts != 2).any() or not np.all(np.abs(A.data) == 1):
        raise InputError("the network method needs a two-dimensional table without "
                         "hierarchies: every cell in exactly two relations, coefficients +-1")
    signed = A.data * relation_signs(A, counts)[A.indices]
    start = A.indptr[:-1]
    if np.any(signed[start] + signed[start + 1] != 0):
        raise InputError("the table's relations do not form a network; use the heuristic or "
                         "optimal method")
    first, second = A.indices[start], A.indices[start + 1]
    out = signed[start] < 0
    return np.where(out, first, second), np.where(out, second, first)


class NetworkRouter:
    """Least-cost protecting flows on the table's network (see module docstring)."""

    #: Every flow is the whole network's (the router interface's
    #: :attr:`~tabsdc.suppression._heuristic.FlowRouter.whole_first`: no slower phase).
    whole_first = False

    def __init__(self, A: sp.sparray, down: np.ndarray, up: np.ndarray, movable: np.ndarray,
                 deadline: object = None, hops: int = 3):
        """``deadline`` and ``hops`` are accepted for the router interface (each network
        simplex is one short step between the routing loop's checks of the deadline)."""
        self.tail, self.head = arc_orientation(A)
        self.down = np.where(movable, down, 0.0)
        self.up = np.where(movable, up, 0.0)
        self.unit = SCALE / max(float(np.max(np.concatenate([self.down, self.up]),
                                             initial=0.0)), 1e-12)
        cap_up = np.floor(self.up * self.unit).astype(np.int64)
        cap_down = np.floor(self.down * self.unit).astype(np.int64)
        cells = np.arange(len(self.tail))
        arcs = [(int(t), int(h), (int(j), 1), {"capacity": int(c), "weight": 0})
                for t, h, j, c in zip(self.tail, self.head, cells, cap_up, strict=True) if c > 0]
        arcs += [(int(h), int(t), (int(j), -1), {"capacity": int(c), "weight": 0})
                 for t, h, j, c in zip(self.tail, self.head, cells, cap_down, strict=True)
                 if c > 0]
        self.arcs: dict[int, list[tuple[int, int, tuple[int, int]]]] = {}
        for u, v, key, _ in arcs:
            self.arcs.setdefault(key[0], []).append((u, v, key))
        self.graph = nx.MultiDiGraph()
        self.graph.add_nodes_from(range(A.shape[0]), demand=0)
        self.graph.add_edges_from(arcs)
        self._weight = np.zeros(len(self.tail), dtype=np.int64)

    def route(
        self, req: Requirement, cost: np.ndarray, suppressed: np.ndarray
    ) -> np.ndarray | None:
        """Cells carrying the cheapest flow of ``req.level`` through ``req.cell`` (the
        requirement's ``fixed`` cells carry none)."""
        e = req.cell
        scale = max(float(np.max(cost, initial=0.0)), 1e-12)
        weight = np.where(suppressed, 1.0, 1.0 + np.round(cost / scale * 1e6)).astype(np.int64)
        graph = self.graph
        for j in np.flatnonzero(weight != self._weight):  # only cells whose cost changed
            for u, v, key in self.arcs.get(int(j), ()):
                graph.edges[u, v, key]["weight"] = int(weight[j])
        self._weight = weight
        # the cell's own arcs (its flow is the demand) and those of the cells held fixed
        removed = [(u, v, key, graph.edges[u, v, key])
                   for cell in (e, *req.fixed) for u, v, key in self.arcs.get(cell, ())]
        graph.remove_edges_from([(u, v, key) for u, v, key, _ in removed])
        source, sink = (self.head[e], self.tail[e]) if req.direction > 0 else \
            (self.tail[e], self.head[e])
        demand = int(np.ceil(req.level * self.unit))
        graph.nodes[int(source)]["demand"] = -demand
        graph.nodes[int(sink)]["demand"] = demand
        try:
            _, flows = nx.network_simplex(graph)
        except nx.NetworkXUnfeasible:
            flows = None
        finally:
            graph.nodes[int(source)]["demand"] = 0
            graph.nodes[int(sink)]["demand"] = 0
            graph.add_edges_from((u, v, k, d) for u, v, k, d in removed)
        if flows is None:
            return None
        carries = np.zeros(len(self.tail), dtype=bool)
        carries[e] = True
        for targets in flows.values():
            for keyed in targets.values():
                for key, amount in keyed.items():
                    if amount > 0:
                        carries[key[0]] = True
        return carries
