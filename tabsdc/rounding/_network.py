"""A table whose additivity system is a network, and flows on it.

Controlled rounding of a two-dimensional table is a flow problem (Cox & Ernst 1982): each
cell is an arc, each relation a node, and a rounding that keeps every relation is an
integral circulation between the cell's two adjacent multiples of the base. This module
finds that network in a :class:`~tabsdc._table.Table`, solves min-cost flows on it and draws
unbiased roundings from it.

Which tables are networks
-------------------------
A system ``A x = b`` is a network when, after dropping relations that the others imply and
multiplying some rows by -1, every cell appears in at most two relations, with coefficient +1
in one and -1 in the other (a node-arc incidence matrix; a cell in one relation only becomes
an arc to an extra node whose equation is minus the sum of all others, so it is implied too).
Node-arc incidence matrices are totally unimodular, so the polytope
``{y : A y = b/B, floor(x/B) <= y <= ceil(x/B)}``, which contains ``x/B``, has integral
vertices: a zero-restricted controlled rounding always exists and a simplex method finds an
optimal one (Hoffman's circulation theorem; Cox & Ernst 1982).

:func:`table_network` recognises:

* one-dimensional tables (a hierarchy is a tree of relations: a network as it is);
* complete two-dimensional tables with flat dimensions (Cox & Ernst's network: the relation
  of each row and of each column is a node);
* complete two-dimensional tables with a hierarchy in *one* dimension (rows, say) and a flat
  other dimension. The relation ``x(r, Total) = sum_j x(r, j)`` of a *non-leaf* row code r
  is implied by the others: ``x(r, Total) = sum_k x(k, Total)`` over the children k of r
  (the hierarchy relation in the total column) ``= sum_k sum_j x(k, j)`` (the children's
  relations, by induction from the leaves up) ``= sum_j x(r, j)`` (the hierarchy relations in
  every column j). Without those relations each cell is in exactly two relations: ``(r, j)``
  for a leaf r in its row relation and in the hierarchy relation of column j under r's
  parent; for an inner code r in the hierarchy relations of column j at r and at r's parent;
  the grand total column's cells likewise. Rows in the total column and in the columns
  j >= 1 then carry opposite signs, and the table is a network. This is exact: the dropped
  relations hold for every solution of the kept ones, and the check after solving confirms
  every relation of the original table;
* tables without dimensions (JJ files) whose relations already form a network.

Two hierarchical dimensions, three or more dimensions, or incomplete tables are not
recognised; :mod:`tabsdc.rounding._controlled` solves those as a MILP.

References
----------
L. H. Cox and L. R. Ernst, "Controlled rounding", *INFOR* 20(4), 423-432, 1982.
L. H. Cox, "A constructive procedure for unbiased controlled rounding", *JASA* 82(398),
520-524, 1987.
R. Gandhi, S. Khuller, S. Parthasarathy and A. Srinivasan, "Dependent rounding and its
applications to approximation algorithms", *J. ACM* 53(3), 324-360, 2006.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

import numpy as np
import pandas as pd
import scipy.sparse as sp

import tabsdc._interrupts as interrupts
from tabsdc._errors import InputError, SolverError
from tabsdc._network import relation_signs
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.solver import SolveResult

#: Engines of :func:`min_cost_flow`.
FLOW_ENGINES = ("highs", "networkx")


@dataclass(frozen=True)
class TableNetwork:
    """The relations of a table as a network: one arc per cell, one node per kept relation.

    Attributes
    ----------
    tail, head : ndarray of int, shape (n_cells,)
        Nodes each cell's arc leaves and enters; -1 for a cell in no relation (isolated).
    n_nodes : int
        Nodes, the last one being the extra node whose equation the others imply.
    rhs : ndarray, shape (n_nodes,)
        Net inflow each node must receive (the signed right-hand sides).
    kept_rows, dropped_rows : ndarray of int
        Relations of the table that are nodes, and relations implied by them.
    """

    tail: np.ndarray
    head: np.ndarray
    n_nodes: int
    rhs: np.ndarray
    kept_rows: np.ndarray
    dropped_rows: np.ndarray

    @property
    def isolated(self) -> np.ndarray:
        """Mask of cells in no relation."""
        return self.tail < 0

    def incidence(self) -> sp.csr_array:
        """Node-arc incidence matrix (n_nodes x n_cells): +1 at the head, -1 at the tail."""
        arcs = np.flatnonzero(~self.isolated)
        rows = np.concatenate([self.head[arcs], self.tail[arcs]])
        cols = np.concatenate([arcs, arcs])
        data = np.concatenate([np.ones(len(arcs)), -np.ones(len(arcs))])
        return sp.csr_array((data, (rows, cols)), shape=(self.n_nodes, len(self.tail)))


def table_network(table: Table) -> tuple[TableNetwork | None, str]:
    """The table's relations as a network, or None and the reason why they are not one.

    Parameters
    ----------
    table : Table

    Returns
    -------
    network : TableNetwork or None
    reason : str
        Empty when a network was found, else why not (e.g. "hierarchies in two
        dimensions").

    Notes
    -----
    See the module docstring for the tables recognised and why dropping the relations of
    inner codes over the flat dimension is exact. Signs are found by propagating
    ``sigma_v = -sigma_u a_u a_v`` over a spanning forest of the relations (cells in two
    relations are edges), then checked on every cell.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.DataFrame({"r": ["a", "a", "b", "b"], "c": ["x", "y", "x", "y"],
    ...                       "value": [1.0, 2.0, 3.0, 4.0]})
    >>> network, reason = table_network(Table.from_aggregated(cells, ["r", "c"]))
    >>> network.n_nodes, reason
    (7, '')
    """
    rows, reason = _kept_rows(table)
    if rows is None:
        return None, reason
    A = table.A
    A_kept = A[rows]
    csc = A_kept.tocsc()
    counts = np.diff(csc.indptr)
    if counts.size and counts.max() > 2:
        cell = int(np.argmax(counts > 2))
        return None, (f"{table.cell_labels([cell])[0]} is in {int(counts[cell])} "
                      "independent relations")
    if csc.nnz and not np.all(np.abs(csc.data) == 1.0):
        return None, "a relation has a coefficient other than +1 or -1"
    k = len(rows)
    sigma = relation_signs(csc, counts)
    signed = csc.data * sigma[csc.indices]
    start = csc.indptr[:-1]
    two, one = np.flatnonzero(counts == 2), np.flatnonzero(counts == 1)
    if two.size and np.any(signed[start[two]] + signed[start[two] + 1] != 0):
        return None, "the relations cannot be signed as a network (an odd cycle of signs)"
    super_node = k
    tail = np.full(table.n_cells, -1, dtype=np.int64)
    head = np.full(table.n_cells, -1, dtype=np.int64)
    first, second = csc.indices[start[two]], csc.indices[start[two] + 1]
    first_out = signed[start[two]] < 0
    tail[two] = np.where(first_out, first, second)
    head[two] = np.where(first_out, second, first)
    node = csc.indices[start[one]]
    out = signed[start[one]] < 0
    tail[one] = np.where(out, node, super_node)
    head[one] = np.where(out, super_node, node)
    rhs = sigma * table.b[rows]
    rhs = np.append(rhs, -rhs.sum())
    dropped = np.setdiff1d(np.arange(table.n_relations), rows)
    return TableNetwork(tail, head, k + 1, rhs, rows, dropped), ""


def _kept_rows(table: Table) -> tuple[np.ndarray | None, str]:
    """Relations that form the network (all but the implied ones), or None and why not."""
    everything = np.arange(table.n_relations)
    dims = table.dims
    if not dims:
        return everything, ""
    if len(dims) > 2:
        return None, f"the table has {len(dims)} dimensions"
    hierarchies = [table.hierarchies[d] for d in dims]
    if table.n_cells != int(np.prod([len(h) for h in hierarchies])):
        return None, "not every combination of codes is a cell of the table"
    deep = [i for i, h in enumerate(hierarchies) if any(
        parent != h.root for parent in h.parents.values())]
    if len(deep) > 1:
        return None, "both dimensions have a hierarchy with subtotals"
    if len(dims) == 1 or not deep:
        return everything, ""
    coords = _coordinates(table)
    coo = table.A.tocoo()
    negative = coo.data < 0
    per_row = np.bincount(coo.row[negative], minlength=table.n_relations)
    if np.any(per_row != 1):
        return None, "a relation does not have exactly one total"
    total = np.empty(table.n_relations, dtype=np.int64)
    total[coo.row[negative]] = coo.col[negative]
    positive = ~negative
    part_rows, first = np.unique(coo.row[positive], return_index=True)
    if len(part_rows) != table.n_relations:
        return None, "a relation has no parts"
    part = np.empty(table.n_relations, dtype=np.int64)
    part[part_rows] = coo.col[positive][first]
    summed = np.argmax(coords[total] != coords[part], axis=1)
    deep_dim = deep[0]
    hierarchy = hierarchies[deep_dim]
    leaf = np.isin(np.array(hierarchy.codes, dtype=object), np.array(hierarchy.leaves,
                                                                      dtype=object))
    drop = (summed != deep_dim) & ~leaf[coords[total, deep_dim]]
    return everything[~drop], ""


def _coordinates(table: Table) -> np.ndarray:
    """Code positions (in each hierarchy's order) of every cell, shape (n_cells, n_dims)."""
    index = table.cells.index
    columns = []
    for level, dim in enumerate(table.dims):
        codes = index.get_level_values(level) if isinstance(index, pd.MultiIndex) else index
        columns.append(pd.Categorical(codes, categories=table.hierarchies[dim].codes).codes)
    return np.column_stack(columns).astype(np.int64)


def min_cost_flow(
    network: TableNetwork,
    lower: np.ndarray,
    capacity: np.ndarray,
    cost: np.ndarray,
    *,
    engine: str = "highs",
    time_limit: float | None = None,
) -> tuple[np.ndarray, SolveResult]:
    """Integral flow ``z`` (``0 <= z <= capacity``) of least ``cost @ z`` on the network,
    where arc values are ``lower + z``.

    Parameters
    ----------
    network : TableNetwork
    lower : ndarray
        Lower bound of every arc (``floor(x/B)``); nodes must balance ``lower + z``.
    capacity : ndarray
        0 or 1 per arc (0 for multiples of the base: zero-restriction).
    cost : ndarray
        Cost of one unit of flow per arc.
    engine : {"highs", "networkx"}
        ``"highs"``: the flow LP (incidence matrix, one row per node but the implied one)
        by HiGHS's simplex, whose optimal vertex is integral (total unimodularity).
        ``"networkx"``: :func:`networkx.network_simplex`; integer costs only.
    time_limit : float, optional
        Seconds (``"highs"`` only).

    Returns
    -------
    z : ndarray of float
        Integral flow (0 or 1 per arc).
    result : SolveResult
        Status, objective ``cost @ z``, time.

    Raises
    ------
    InputError
        An unknown engine, or non-integer costs for ``"networkx"``.
    SolverError
        The flow problem is infeasible (the right-hand sides are not multiples of the base)
        or the solve stopped without an optimal integral solution.
    """
    check_choice("engine", engine, FLOW_ENGINES)
    demand = network.rhs - network.incidence() @ lower
    if engine == "networkx":
        return _networkx_flow(network, demand, capacity, cost)
    return _highs_flow(network, demand, capacity, cost, time_limit)


#: Arcs per node (cheapest first) in the first restricted flow LP of :func:`_highs_flow`.
FIRST_ARCS_PER_NODE = 4


def _highs_flow(
    network: TableNetwork,
    demand: np.ndarray,
    capacity: np.ndarray,
    cost: np.ndarray,
    time_limit: float | None,
) -> tuple[np.ndarray, SolveResult]:
    """The flow LP by pricing: solve it over a few arcs, add the arcs that price out, repeat.

    Every arc starts at its cheaper bound (``z = 1`` where the cost is negative). The
    restricted LP frees, for every node, its ``k`` arcs that are cheapest to move away from
    that bound (``k`` doubles while the restricted LP is infeasible); every other arc stays
    at its bound. With the restricted LP's node potentials ``y`` (its row duals; 0 at the
    implied node), an arc fixed at 0 with reduced cost ``c - (y_head - y_tail) < 0``, or
    fixed at 1 with reduced cost ``> 0``, is freed and the LP solved again. When no arc
    prices out, the solution meets the optimality conditions of the full LP; it is a vertex
    of the restricted polytope with every other arc at a bound, hence a vertex of the full
    network polytope, hence integral. On a 1,000 x 1,000 table this is a few restricted LPs
    of a fifth of the 10^6 arcs instead of one LP over all of them.
    """
    start = perf_counter()
    incidence = network.incidence()
    movable = capacity > 0
    preferred = np.where(movable & (cost < 0), capacity, 0.0)
    per_node = FIRST_ARCS_PER_NODE
    free = _cheapest_per_node(network, movable, np.abs(cost), per_node)
    rounds = 0
    while True:
        if interrupts.stopping():  # no integral flow before the last restricted LP
            raise KeyboardInterrupt("the flow LP had not reached its optimum")
        rounds += 1
        columns = np.flatnonzero(free)
        fixed = np.where(free, 0.0, preferred)
        rhs = (demand - incidence @ fixed)[:-1]
        sub = incidence[:-1][:, columns]
        remaining = None if time_limit is None else time_limit - (perf_counter() - start)
        result = _restricted_lp(cost[columns], sub, rhs, capacity[columns], remaining)
        if result.status == "infeasible" and not np.all(free[movable]):
            per_node *= 2
            free |= _cheapest_per_node(network, movable, np.abs(cost), per_node)
            continue
        if not result.optimal:
            raise SolverError(
                f"the flow problem of the table stopped with status {result.status!r} "
                f"({result.message}); are the right-hand sides multiples of the base?")
        z = fixed.copy()
        z[columns] = result.x
        potential = np.append(result.row_duals, 0.0)
        reduced = cost - (incidence.T @ potential)
        prices_out = movable & ~free & (
            ((preferred == 0) & (reduced < -1e-9)) | ((preferred > 0) & (reduced > 1e-9)))
        if not prices_out.any():
            break
        free |= prices_out
    rounded = np.round(z)
    if np.max(np.abs(z - rounded), initial=0.0) > 1e-6:
        raise SolverError("the flow LP returned a fractional vertex; the relations are not a "
                          "network")
    objective = float(cost @ rounded)
    elapsed = perf_counter() - start
    return rounded, SolveResult(
        "optimal", True, objective, objective, 0.0, rounded, potential, reduced, elapsed,
        "highs", f"optimal flow by pricing: {rounds} restricted LP(s) over "
        f"{int(free.sum())} of {len(cost)} arcs")


def _restricted_lp(
    cost: np.ndarray, A: sp.csr_array, rhs: np.ndarray, capacity: np.ndarray,
    time_limit: float | None,
) -> SolveResult:
    """One flow LP by HiGHS's dual simplex without presolve (through SciPy's binding).

    HiGHS's presolve costs about twenty times the simplex itself on these network LPs, and
    the solver layer does not switch it off, so the restricted LPs go to
    :func:`scipy.optimize.linprog` (``method="highs-ds"``, ``presolve=False``), which runs
    the same HiGHS. Its result is mapped to a :class:`~tabsdc.solver.SolveResult`.
    """
    from scipy.optimize import linprog

    start = perf_counter()
    if time_limit is not None and time_limit <= 0:
        return SolveResult.without_solution("no_solution", 0.0, "highs", "time limit reached")
    if cost.size == 0:
        ok = np.allclose(rhs, 0.0)
        return (SolveResult("optimal", True, 0.0, 0.0, 0.0, np.zeros(0), np.zeros(len(rhs)),
                            np.zeros(0), 0.0, "highs", "no arc to move") if ok else
                SolveResult.without_solution("infeasible", 0.0, "highs", "no arc to move"))
    options = {"presolve": False, **({} if time_limit is None else {"time_limit": time_limit})}
    outcome = linprog(cost, A_eq=A, b_eq=rhs, bounds=np.column_stack([np.zeros_like(capacity),
                                                                       capacity]),
                      method="highs-ds", options=options)
    elapsed = perf_counter() - start
    if outcome.status == 0:
        objective = float(outcome.fun)
        return SolveResult("optimal", True, objective, objective, 0.0, outcome.x,
                           outcome.eqlin.marginals, None, elapsed, "highs", outcome.message)
    status = {1: "no_solution", 2: "infeasible", 3: "unbounded"}.get(outcome.status, "error")
    return SolveResult.without_solution(status, elapsed, "highs", outcome.message)


def _cheapest_per_node(
    network: TableNetwork, movable: np.ndarray, price: np.ndarray, k: int
) -> np.ndarray:
    """Mask of the movable arcs that are among the ``k`` cheapest at their tail or head."""
    arcs = np.flatnonzero(movable)
    chosen = np.zeros(len(movable), dtype=bool)
    for end in (network.tail, network.head):
        order = arcs[np.lexsort((arcs, price[arcs], end[arcs]))]
        nodes = end[order]
        first = np.searchsorted(nodes, nodes)  # start of each node's run (sorted by node)
        rank = np.arange(len(order)) - first
        chosen[order[rank < k]] = True
    return chosen


def _networkx_flow(
    network: TableNetwork, demand: np.ndarray, capacity: np.ndarray, cost: np.ndarray
) -> tuple[np.ndarray, SolveResult]:
    import networkx as nx

    if not np.all(cost == np.round(cost)) or not np.all(demand == np.round(demand)):
        raise InputError("the networkx engine needs integer costs and demands (integer data "
                         "and the 'deviation' or 'far' objective); use engine='highs'")
    start = perf_counter()
    graph = nx.MultiDiGraph()
    graph.add_nodes_from((node, {"demand": int(d)}) for node, d in enumerate(demand))
    arcs = np.flatnonzero(~network.isolated)
    graph.add_edges_from(
        (int(network.tail[a]), int(network.head[a]), int(a),
         {"capacity": int(capacity[a]), "weight": int(cost[a])}) for a in arcs)
    try:
        objective, flow = nx.network_simplex(graph)
    except nx.NetworkXUnfeasible as error:
        raise SolverError(f"the flow problem of the table is infeasible ({error})") from None
    z = np.zeros(len(cost))
    for a in arcs:
        z[a] = flow[int(network.tail[a])][int(network.head[a])][int(a)]
    isolated = np.flatnonzero(network.isolated)
    z[isolated] = (cost[isolated] < 0) & (capacity[isolated] > 0)
    objective = float(objective) + float(cost[isolated] @ z[isolated])
    elapsed = perf_counter() - start
    return z, SolveResult("optimal", True, objective, objective, 0.0, z, None, None, elapsed,
                          "networkx", "network simplex")


def unbiased_flow(
    network: TableNetwork,
    residues: np.ndarray,
    base: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Random integral rounding of the residues with ``E[z_k] = r_k / B`` for every arc.

    The state ``s`` starts at the residues ``r`` (``0 <= r < B``, arc values ``q + s/B``
    balance every node). While some arc is fractional (``0 < s < B``), the fractional arcs
    form a graph in which no node has exactly one (the others at the node are 0 or B, and
    the node balances modulo B), so a walk that never turns back along the arc it came by
    closes a cycle. Along the cycle (arcs oriented by the walk, ``d = +1`` forward, -1
    backward) the state moves by ``+alpha d`` with probability ``beta / (alpha + beta)`` or
    by ``-beta d`` otherwise, where ``alpha`` and ``beta`` are the largest steps that keep
    ``0 <= s <= B``. Each move keeps every node balanced, has mean zero, and makes at least
    one more arc integral; at the end ``z = s / B`` is 0 or 1 and ``E[z] = r / B``: unbiased
    controlled rounding (the property of Cox 1987; the cycle moves are Gandhi et al.'s
    dependent rounding). Cells in no relation are rounded up with probability ``r / B``.

    For integer data every state is an integer, so all arithmetic is exact.

    Parameters
    ----------
    network : TableNetwork
    residues : ndarray
        ``r`` per cell, ``0 <= r < B`` (0 for multiples, which never move).
    base : int
    rng : numpy Generator

    Returns
    -------
    ndarray of float
        0/1 per cell: round up or not.
    """
    eps = 1e-9 * base
    state = np.asarray(residues, dtype=float).copy()
    z = np.zeros(len(state))
    isolated = np.flatnonzero(network.isolated)
    z[isolated] = rng.random(len(isolated)) < state[isolated] / base
    fractional = np.flatnonzero(~network.isolated & (state > eps) & (state < base - eps))
    tail, head = network.tail.tolist(), network.head.tolist()
    values = state.tolist()
    adjacency: list[set[int]] = [set() for _ in range(network.n_nodes)]
    for arc in fractional.tolist():
        adjacency[tail[arc]].add(arc)
        adjacency[head[arc]].add(arc)
    active = [node for node in range(network.n_nodes) if adjacency[node]]
    draw = rng.random
    nodes: list[int] = []  # the walk: nodes[i] -> nodes[i + 1] along path[i]
    path: list[int] = []
    seen: dict[int, int] = {}
    while True:
        if not nodes:
            while active and not adjacency[active[-1]]:
                active.pop()
            if not active:
                break
            nodes, path, seen = [active[-1]], [], {active[-1]: 0}
        here = nodes[-1]
        came_by = path[-1] if path else -1
        arc = next((a for a in adjacency[here] if a != came_by), -1)
        if arc < 0:
            if came_by >= 0:  # only float noise leaves a node with one fractional arc
                _settle(came_by, values, base, adjacency, tail, head)
            nodes = []
            continue
        there = head[arc] if tail[arc] == here else tail[arc]
        begin = seen.get(there)
        if begin is None:
            seen[there] = len(nodes)
            nodes.append(there)
            path.append(arc)
            continue
        _move(path[begin:] + [arc], nodes[begin:], values, base, eps, draw, adjacency, tail,
              head)
        for node in nodes[begin + 1:]:
            del seen[node]
        # the walk up to the cycle was not moved: its arcs are still fractional
        nodes, path = nodes[:begin + 1], path[:begin]
    moved = np.flatnonzero(~network.isolated)
    z[moved] = np.asarray(values)[moved] >= base / 2
    return z


def _move(cycle, cycle_nodes, values, base, eps, draw, adjacency, tail, head) -> None:
    """Shift the state along one cycle (see :func:`unbiased_flow`)."""
    direction = [1.0 if tail[a] == n else -1.0 for a, n in zip(cycle, cycle_nodes, strict=True)]
    up = min(base - values[a] if d > 0 else values[a] for a, d in zip(cycle, direction,
                                                                       strict=True))
    down = min(values[a] if d > 0 else base - values[a] for a, d in zip(cycle, direction,
                                                                         strict=True))
    step = up if draw() < down / (up + down) else -down
    for a, d in zip(cycle, direction, strict=True):
        value = values[a] + step * d
        if value <= eps or value >= base - eps:
            values[a] = 0.0 if value <= eps else float(base)
            adjacency[tail[a]].discard(a)
            adjacency[head[a]].discard(a)
        else:
            values[a] = value


def _settle(arc, values, base, adjacency, tail, head) -> None:
    """Round an arc that float noise left fractional to its nearer end."""
    values[arc] = 0.0 if values[arc] < base / 2 else float(base)
    adjacency[tail[arc]].discard(arc)
    adjacency[head[arc]].discard(arc)
