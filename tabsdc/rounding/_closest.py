"""The closest additive rounding when no controlled rounding exists: fewest extra steps
first, least total deviation second, each with its certificate.

With ``q = floor(x / B)``, ``r = x - B q`` and the adjacent choice in ``{0, [r > 0]}``, a
rounding ``R = B (q + D)`` is additive when ``A R = b``; a cell takes ``max(0, D - [r > 0],
-D)`` *extra steps* (multiples of ``B`` beyond its adjacent ones), at most ``L =
max_steps``, and a non-negative cell stays non-negative. The two objectives are solved one
after the other (lexicographically), never as one weighted sum - a weight large enough to
rank the steps first (``n B (L + 1)``) swamps the deviation and leaves HiGHS a bound it
cannot close:

1. **steps**: ``S* = min sum of extra steps``; HiGHS's dual bound (rounded up: ``S`` is
   integer) certifies it;
2. **deviation**: ``min sum |R - x| = sum |B D - r|`` among roundings with at most ``S``
   extra steps (``S`` those of the best rounding of phase 1).

Two formulations (:class:`CellFormulation`, :class:`ParametricFormulation`):

* over the cells: ``D = z + p - m`` with ``z`` in ``{0, [r > 0]}``, ``0 <= p, m <= L``
  integer and ``A D = b / B - A q``; the deviation is ``sum [(B - 2r) z + B (p + m)] + sum
  r`` (every combination off the canonical form ``q - m`` or ``q + 1 + p`` reaches the same
  ``R`` at a higher cost, so an optimum never uses one);
* over the table's integer solutions (:mod:`tabsdc.rounding._incumbent`: ``Y = G w + g``
  with ``w`` any integer vector, one parameter per free cell): ``D = G w + h`` with ``w``
  integer and the steps and deviations continuous (``s_up >= D - [r > 0]``, ``s_down >=
  -D``, ``e >= |B D - r|``). No equality row is left, the integer variables are the free
  cells only, and HiGHS's bound on the steps grows faster.

An additive rounding found without a MILP (:mod:`tabsdc.rounding._incumbent`: a tabu
search) starts both phases; phase 1 is skipped when it has no extra step. The parametric
formulation is used when the integer solutions were found and ``G`` is sparse (at most
:data:`PARAMETRIC_FILL` times the nonzeros of ``A``); the starting rounding is then first
improved by *neighbourhood search* (Shaw 1998's large neighbourhood search: the parameters
under a few cells that take extra steps, about :data:`NEIGHBOURHOOD` of them, are freed, all
others fixed, and the small MILP solved; the neighbourhood grows by half after
:data:`NEIGHBOURHOOD_PATIENCE` that bring nothing, and shrinks when HiGHS cannot solve one
in :data:`NEIGHBOURHOOD_SECONDS`), for :data:`NEIGHBOURHOOD_SHARE` of the time, or until the
neighbourhood would be every parameter (that is phase 1). Every phase
ends with a rounding at least as good as the one it started from, so the answer never
depends on HiGHS finding a first solution in time.

Time: ``time_limit`` seconds for all of it, :data:`FINISH_SHARE` of it kept at the end for
the answer; after the neighbourhood search, phase 1 gets :data:`STEPS_SHARE` of what is left
and phase 2 the rest, each asked to answer within it (``solve(..., within=)``). A phase is
not started with less than :data:`MIN_PHASE_SECONDS` left when a rounding is already at
hand (it is the answer).

Certificates. The fewest extra steps are bounded below by HiGHS's dual bound of phase 1
(rounded up), and by 1 when the exact MILP proved that no controlled rounding exists. That
bound is weak: ``x / B`` itself satisfies every relation with every cell inside its
adjacent pair, so the LP relaxation of phase 1 is 0 and only branching and HiGHS's cuts
(mod-k cuts find parity arguments such as the 2 x 2 x 2 cube of
:func:`closest_additive_rounding`) raise it. The total deviation is bounded below by ``sum
min(r, B - r)`` (every cell is at least that far from a multiple of the base) and by the
dual bound of phase 2: the least deviation of a rounding with at most ``S`` extra steps,
which is at most that of the lexicographic optimum (whose steps are at most ``S``).

References
----------
P. Shaw, "Using constraint programming and local search methods to solve vehicle routing
problems", *CP 1998*, LNCS 1520, 417-431.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tabsdc._errors import InputError, NoSolutionError, SolverError
from tabsdc._progress import Deadline
from tabsdc._table import Table
from tabsdc.rounding._incumbent import AdditiveRounding, IntegerSolutions, extra_steps
from tabsdc.solver import LinearProgram, SolveResult, solve
from tabsdc.solver._problem import relative_gap

#: Share of the time left after the neighbourhood search for phase 1 (fewest extra steps).
STEPS_SHARE = 0.6

#: Share of ``time_limit`` kept at its end to decode, check and report the answer (the last
#: phase's solve may answer at the very end of the time it is given).
FINISH_SHARE = 0.01

#: No phase is started with less time than this (seconds) unless a starting rounding
#: guarantees its answer: HiGHS's branch and cut can overrun a tiny limit by a whole round
#: of root cuts.
MIN_PHASE_SECONDS = 1.0

#: The parametric formulation is used when ``G`` has at most this many times the nonzeros
#: of the table's relations (else the cell formulation, which the starting rounding also
#: starts): a dense ``G`` makes both phases and the neighbourhoods large.
PARAMETRIC_FILL = 8

#: Parameters freed by the first neighbourhood of the neighbourhood search.
NEIGHBOURHOOD = 40

#: Neighbourhoods solved without fewer steps before the neighbourhood grows by half.
NEIGHBOURHOOD_PATIENCE = 8

#: Share of the time limit for the neighbourhood search.
NEIGHBOURHOOD_SHARE = 0.35

#: Time limit of one neighbourhood's MILP (seconds).
NEIGHBOURHOOD_SECONDS = 5.0


@dataclass(frozen=True)
class ClosestRounding:
    """The closest additive rounding and its certificates.

    Attributes
    ----------
    multiples : ndarray of int
        ``R / B`` per cell.
    steps : ndarray of int
        Extra multiples of the base per cell beyond its adjacent ones.
    steps_bound : int
        Proven lower bound on the fewest extra steps (``steps.sum()`` when proven minimal).
    deviation : SolveResult or None
        Phase 2 (objective: total absolute deviation, bound, gap); None when it was not run
        or found nothing in its time.
    stepping : SolveResult or None
        Phase 1 (objective: extra steps); None when it was not needed (the starting rounding
        had no extra step).
    report : SolveResult
        The figures of the answer: objective = its total absolute deviation, bound = the
        best proven lower bound on the deviation of the lexicographic optimum (module
        docstring), gap, status ``"optimal"`` only when both are proven.
    found_by : str
        ``"deviation MILP"``, ``"steps MILP"``, ``"neighbourhood search"`` or ``"tabu
        search"`` (what found the answer).
    neighbourhoods : int
        MILPs solved by the neighbourhood search.
    """

    multiples: np.ndarray
    steps: np.ndarray
    steps_bound: int
    deviation: SolveResult | None
    stepping: SolveResult | None
    report: SolveResult
    found_by: str
    neighbourhoods: int = 0

    @property
    def steps_proven(self) -> bool:
        """The number of extra steps is proven minimal."""
        return self.steps_bound >= int(self.steps.sum())

    @property
    def proven(self) -> bool:
        """Both phases proven optimal: the lexicographic optimum."""
        return self.report.optimal


def split_multiples(multiples: np.ndarray, q: np.ndarray, adjacent: np.ndarray) -> np.ndarray:
    """The canonical ``[z, p, m]`` of a rounding ``R / B = q + z + p - m`` (module docstring).

    Examples
    --------
    >>> split_multiples(np.array([3, 5, 1]), np.array([3, 3, 3]), np.array([1.0, 1.0, 0.0]))
    array([0., 1., 0., 0., 1., 0., 0., 0., 2.])
    """
    move = np.asarray(multiples, dtype=float) - q
    z = np.clip(move, 0.0, adjacent)
    return np.concatenate([z, np.maximum(0.0, move - adjacent), np.maximum(0.0, -move)]) + 0.0


class CellFormulation:
    """Phases 1 and 2 over the cells: ``[z, p, m]`` per cell (module docstring).

    Parameters
    ----------
    table : Table
    base, q, r, max_steps
        As :func:`closest_additive_rounding`.
    """

    def __init__(self, table: Table, base: int, q: np.ndarray, r: np.ndarray,
                 max_steps: int) -> None:
        n = len(q)
        self.n, self.q, self.adjacent = n, q, (r > 0).astype(float)
        self.rhs = table.b / base - table.A @ q
        self.matrix = sp.csr_array(sp.hstack([table.A, table.A, -table.A], format="csr"))
        down_room = np.where(table.values >= 0, np.minimum(max_steps, np.maximum(q, 0)),
                             max_steps)
        self.col_upper = np.concatenate([self.adjacent, np.full(n, float(max_steps)),
                                         down_room])
        self.steps_cost = np.concatenate([np.zeros(n), np.ones(2 * n)])
        self.deviation_cost = np.concatenate([base - 2 * r, np.full(2 * n, float(base))])
        self.offset = float(r.sum())

    def steps_program(self) -> LinearProgram:
        """Phase 1."""
        return LinearProgram(c=self.steps_cost, A=self.matrix, row_lower=self.rhs,
                             row_upper=self.rhs, col_lower=np.zeros(3 * self.n),
                             col_upper=self.col_upper, integrality=np.ones(3 * self.n, bool))

    def deviation_program(self, least: int) -> LinearProgram:
        """Phase 2 with at most ``least`` extra steps."""
        return LinearProgram(
            c=self.deviation_cost,
            A=sp.vstack([self.matrix, sp.csr_array(self.steps_cost[None, :])], format="csr"),
            row_lower=np.append(self.rhs, -np.inf), row_upper=np.append(self.rhs, least),
            col_lower=np.zeros(3 * self.n), col_upper=self.col_upper,
            integrality=np.ones(3 * self.n, bool), offset=self.offset)

    def encode(self, multiples: np.ndarray, deviation: bool) -> np.ndarray | None:
        """The variables of a rounding (None when outside the bounds)."""
        x = split_multiples(multiples, self.q, self.adjacent)
        return x if np.all(x <= self.col_upper) else None

    def decode(self, x: np.ndarray) -> np.ndarray:
        """``R / B`` from the variables."""
        z, up, down = np.round(x).reshape(3, self.n)
        return self.q + z + up - down


class ParametricFormulation:
    """Phases 1 and 2 over the table's integer solutions (module docstring).

    Variables ``[w, s_up, s_down]`` (phase 1) and ``[w, s_up, s_down, e]`` (phase 2), with
    ``D = G w + h``, ``w = Y[free] - q[free]``, ``h = G q[free] + g - q``.

    Parameters
    ----------
    solutions : IntegerSolutions
    base, q, r, max_steps
        As :func:`closest_additive_rounding`.
    values : ndarray
        The table's values (non-negative cells stay non-negative).
    """

    def __init__(self, solutions: IntegerSolutions, base: int, q: np.ndarray,
                 r: np.ndarray, max_steps: int, values: np.ndarray) -> None:
        G = sp.csr_array(solutions.G)
        n, k = G.shape
        free = solutions.free
        self.G, self.n, self.k, self.q, self.r, self.base = G, n, k, q, r, base
        self.free = free
        self.adjacent = (r > 0).astype(float)
        self.h = np.round(G @ q[free] + solutions.offset - q)
        self.max_steps = max_steps
        low = -np.full(k, float(max_steps))
        floor = (values >= 0) & (q < max_steps)          # rows D >= -q needed
        self.floor_rows = np.flatnonzero(floor)
        low[floor[free]] = np.maximum(low[floor[free]], -q[free][floor[free]])
        self.w_lower = low
        self.w_upper = self.adjacent[free] + max_steps
        identity = sp.identity(n, format="csr")
        empty = sp.csr_array((n, n))
        rows = [sp.hstack([G, -identity, empty]), sp.hstack([G, empty, identity])]
        lower = [np.full(n, -np.inf), -self.h]
        upper = [self.adjacent - self.h, np.full(n, np.inf)]
        if self.floor_rows.size:
            rows.append(sp.hstack([G[self.floor_rows], sp.csr_array((len(self.floor_rows),
                                                                     2 * n))]))
            lower.append(-q[self.floor_rows] - self.h[self.floor_rows])
            upper.append(np.full(len(self.floor_rows), np.inf))
        self.matrix = sp.csr_array(sp.vstack(rows, format="csr"))
        self.row_lower, self.row_upper = np.concatenate(lower), np.concatenate(upper)
        self.steps_cost = np.concatenate([np.zeros(k), np.ones(2 * n)])

    def _columns(self, extra: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, k = self.n, self.k
        lower = np.concatenate([self.w_lower, np.zeros(2 * n + extra)])
        upper = np.concatenate([self.w_upper, np.full(2 * n, float(self.max_steps)),
                                np.full(extra, np.inf)])
        integer = np.concatenate([np.ones(k, bool), np.zeros(2 * n + extra, bool)])
        return lower, upper, integer

    def steps_program(self) -> LinearProgram:
        """Phase 1."""
        lower, upper, integer = self._columns(0)
        return LinearProgram(c=self.steps_cost, A=self.matrix, row_lower=self.row_lower,
                             row_upper=self.row_upper, col_lower=lower, col_upper=upper,
                             integrality=integer)

    def neighbourhood_program(self, chosen: np.ndarray, w: np.ndarray
                              ) -> tuple[LinearProgram, np.ndarray]:
        """Phase 1 with only ``w[chosen]`` free, the others at ``w``: the rows of the cells
        that depend on a chosen parameter, the rest moved to the right-hand sides.

        Returns the program (variables ``[w[chosen], s_up, s_down]`` of those cells) and its
        starting solution.
        """
        G_chosen = sp.csc_array(self.G[:, chosen])
        cells = np.unique(G_chosen.indices)
        part = sp.csr_array(G_chosen[cells])
        m, k = len(cells), int(chosen.sum())
        moved = self.G[cells] @ np.where(chosen, 0.0, w) + self.h[cells]
        identity, empty = sp.identity(m, format="csr"), sp.csr_array((m, m))
        floor = np.isin(cells, self.floor_rows)
        matrix = sp.vstack([sp.hstack([part, -identity, empty]),
                            sp.hstack([part, empty, identity]),
                            sp.hstack([part[floor], sp.csr_array((int(floor.sum()), 2 * m))])],
                           format="csr")
        lower = np.concatenate([np.full(m, -np.inf), -moved,
                                -self.q[cells][floor] - moved[floor]])
        upper = np.concatenate([self.adjacent[cells] - moved, np.full(m, np.inf),
                                np.full(int(floor.sum()), np.inf)])
        program = LinearProgram(
            c=np.concatenate([np.zeros(k), np.ones(2 * m)]), A=matrix, row_lower=lower,
            row_upper=upper,
            col_lower=np.concatenate([self.w_lower[chosen], np.zeros(2 * m)]),
            col_upper=np.concatenate([self.w_upper[chosen], np.full(2 * m,
                                                                    float(self.max_steps))]),
            integrality=np.concatenate([np.ones(k, bool), np.zeros(2 * m, bool)]))
        move = part @ w[chosen] + moved
        start = np.concatenate([w[chosen], np.maximum(0.0, move - self.adjacent[cells]),
                                np.maximum(0.0, -move)])
        return program, start

    def deviation_program(self, least: int) -> LinearProgram:
        """Phase 2 with at most ``least`` extra steps: ``e >= |B (G w + h) - r|``."""
        n, k, B = self.n, self.k, float(self.base)
        lower, upper, integer = self._columns(n)
        zeros = sp.csr_array((self.matrix.shape[0], n))
        identity = sp.identity(n, format="csr")
        scaled = sp.hstack([B * self.G, sp.csr_array((n, 2 * n))])
        matrix = sp.vstack([sp.hstack([self.matrix, zeros]),
                            sp.hstack([scaled, -identity]), sp.hstack([scaled, identity]),
                            sp.csr_array(np.append(self.steps_cost, np.zeros(n))[None, :])],
                           format="csr")
        target = self.r - B * self.h
        return LinearProgram(
            c=np.concatenate([np.zeros(k + 2 * n), np.ones(n)]), A=matrix,
            row_lower=np.concatenate([self.row_lower, np.full(n, -np.inf), target,
                                      [-np.inf]]),
            row_upper=np.concatenate([self.row_upper, target, np.full(n, np.inf),
                                      [least]]),
            col_lower=lower, col_upper=upper, integrality=integer)

    def encode(self, multiples: np.ndarray, deviation: bool) -> np.ndarray | None:
        """The variables of a rounding (None when outside the bounds or not of this form)."""
        move = np.asarray(multiples, dtype=float) - self.q
        w = move[self.free]
        if np.any(w < self.w_lower) or np.any(w > self.w_upper) or not np.array_equal(
                self.G @ w + self.h, move):
            return None
        up, down = np.maximum(0.0, move - self.adjacent), np.maximum(0.0, -move)
        if np.any(up > self.max_steps) or np.any(down > self.max_steps) or np.any(
                move[self.floor_rows] < -self.q[self.floor_rows]):
            return None
        parts = [w, up, down] + ([np.abs(self.base * move - self.r)] if deviation else [])
        return np.concatenate(parts) + 0.0

    def decode(self, x: np.ndarray) -> np.ndarray:
        """``R / B`` from the variables."""
        return self.q + self.G @ np.round(x[:self.k]) + self.h


def closest_additive_rounding(
    table: Table,
    base: int,
    q: np.ndarray,
    r: np.ndarray,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float | None = None,
    max_steps: int = 2,
    incumbent: AdditiveRounding | None = None,
    steps_at_least: int = 0,
    seed: int = 0,
) -> ClosestRounding:
    """Solve the two phases of the module docstring.

    Parameters
    ----------
    table : Table
    base : int
    q, r : ndarray
        ``floor(x / B)`` and the residues (:func:`tabsdc.rounding._rules.decompose`).
    solver, mip_gap
        Of the MILPs (:func:`tabsdc.solver.solve`).
    time_limit : float, optional
        Seconds for all of it.
    max_steps : int
        ``L``: extra multiples of the base a cell may move. A non-negative cell is never
        rounded below 0.
    incumbent : AdditiveRounding, optional
        A starting rounding (:func:`tabsdc.rounding._incumbent.heuristic_rounding`); with it
        the parametric formulation is used, and the rounding starts the search when it
        keeps every cell within ``L`` steps and non-negative cells non-negative.
    steps_at_least : int
        A lower bound on the extra steps known beforehand (1 when the exact MILP proved
        that no controlled rounding exists).
    seed : int
        Of the neighbourhood search's choice of cells (keyword-only).

    Returns
    -------
    ClosestRounding

    Raises
    ------
    InputError
        ``max_steps`` not a positive integer.
    SolverError
        No additive rounding within ``max_steps`` (proven), or none found in the time.

    Examples
    --------
    The 2 x 2 x 2 parity cube (1 where ``i + j + k`` is even: every line sums to 1) has no
    controlled rounding to base 2; one cell moved one extra step is the closest. The 12
    lines and the four cells of value 1 are each 1 from a multiple of 2; the extra step
    adds 2:

    >>> import itertools
    >>> import pandas as pd
    >>> from tabsdc.rounding._rules import decompose
    >>> rows = [(str(i), str(j), str(k), float((i + j + k + 1) % 2))
    ...         for i, j, k in itertools.product(range(2), repeat=3)]
    >>> t = Table.from_aggregated(pd.DataFrame(rows, columns=["i", "j", "k", "value"]),
    ...                           ["i", "j", "k"])
    >>> q, r = decompose(t.values, 2)
    >>> closest = closest_additive_rounding(t, 2, q, r)
    >>> int(closest.steps.sum()), closest.proven, closest.report.objective
    (1, True, 18.0)
    """
    if not (isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps >= 1):
        raise InputError(f"max_steps must be a positive integer, got {max_steps!r}")
    deadline = Deadline(time_limit)
    adjacent = (r > 0).astype(float)
    form: CellFormulation | ParametricFormulation
    if incumbent is not None and incumbent.solutions.G.nnz <= PARAMETRIC_FILL * table.A.nnz:
        form = ParametricFormulation(incumbent.solutions, base, q, r, max_steps, table.values)
    else:
        form = CellFormulation(table, base, q, r, max_steps)
    best = None                                         # the best rounding's multiples
    found_by = "tabu search"
    if incumbent is not None and form.encode(incumbent.multiples, False) is not None and \
            not table.failing_relations(values=base * incumbent.multiples).size:
        best = incumbent.multiples.astype(float)
    first, neighbourhoods, steps_bound = None, 0, 0
    left = deadline.solver_limit(share=1 - FINISH_SHARE)
    if best is not None and not extra_steps(best, q, adjacent).any():
        pass                                            # no extra step: nothing to prove
    elif best is not None and left is not None and left < MIN_PHASE_SECONDS:
        pass                                            # no time: the start is the answer
    else:
        if best is not None and isinstance(form, ParametricFormulation):
            search = Deadline(None if time_limit is None else NEIGHBOURHOOD_SHARE * time_limit)
            improved, neighbourhoods = _neighbourhood_search(
                form, best, q, adjacent, solver, search, np.random.default_rng(seed))
            if _key(improved, q, adjacent, base, table.values) < \
                    _key(best, q, adjacent, base, table.values):
                best, found_by = improved, "neighbourhood search"
        left = deadline.solver_limit(share=1 - FINISH_SHARE)
        first = solve(form.steps_program(), solver, mip_gap=mip_gap,
                      start=None if best is None else form.encode(best, False),
                      time_limit=None if left is None else STEPS_SHARE * left, within=left)
        if first.has_solution:
            candidate = form.decode(first.x)
            if best is None or _key(candidate, q, adjacent, base, table.values) < \
                    _key(best, q, adjacent, base, table.values):
                best, found_by = candidate, "steps MILP"
        if best is None:
            proof = first.status in ("infeasible", "infeasible_or_unbounded")
            raise (SolverError if proof else NoSolutionError)(
                "no zero-restricted controlled rounding exists, and "
                + (f"no additive rounding moves every cell at most {max_steps} extra "
                   f"multiples of the base (proven); raise max_steps" if proof else
                   f"the search for an additive alternative found none before its time "
                   f"limit (status {first.status!r}); raise time_limit"))
        steps_bound = (int(round(first.objective)) if first.optimal and
                       first.objective <= extra_steps(best, q, adjacent).sum()
                       else int(np.ceil((first.bound or 0.0) - 1e-6)))
    least = int(extra_steps(best, q, adjacent).sum())
    steps_bound = max(0, steps_at_least, min(steps_bound, least))
    second = None
    left = deadline.solver_limit(share=1 - FINISH_SHARE)
    if left is None or left >= MIN_PHASE_SECONDS:
        second = solve(form.deviation_program(least), solver, within=left,
                       mip_gap=mip_gap, start=form.encode(best, True))
        if second.has_solution:
            candidate = form.decode(second.x)
            if _key(candidate, q, adjacent, base, table.values) < \
                    _key(best, q, adjacent, base, table.values):
                best, found_by = candidate, "deviation MILP"
        else:
            second = None
    multiples = np.round(best).astype(np.int64)
    steps = extra_steps(multiples, q, adjacent)
    deviation = float(np.abs(base * multiples - table.values).sum())
    report = _report(deviation, float(np.minimum(r, base - r).sum()), second,
                     steps_proven=steps_bound >= int(steps.sum()), first=first)
    return ClosestRounding(multiples=multiples, steps=steps, steps_bound=steps_bound,
                           deviation=second, stepping=first, report=report,
                           found_by=found_by, neighbourhoods=neighbourhoods)


def _key(multiples: np.ndarray, q: np.ndarray, adjacent: np.ndarray, base: int,
         values: np.ndarray) -> tuple[int, float]:
    """(extra steps, total absolute deviation): smaller is closer."""
    return (int(extra_steps(multiples, q, adjacent).sum()),
            round(float(np.abs(base * multiples - values).sum()), 6))


def _neighbourhood_search(form: ParametricFormulation, multiples: np.ndarray, q: np.ndarray,
                          adjacent: np.ndarray, solver: str, deadline: Deadline,
                          rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Large neighbourhood search on the extra steps (module docstring); returns the best
    multiples and the number of MILPs solved."""
    G = form.G
    w = multiples[form.free] - q[form.free]
    steps = extra_steps(multiples, q, adjacent)
    size, solved, idle = min(NEIGHBOURHOOD, form.k), 0, 0
    while steps.any() and size < form.k and deadline.remaining() > 0.5:
        chosen = np.zeros(form.k, dtype=bool)
        for cell in rng.permutation(np.flatnonzero(steps)):
            chosen[G.indices[G.indptr[cell]:G.indptr[cell + 1]]] = True
            if chosen.sum() >= size:
                break
        if chosen.sum() < size:                         # fill up at random
            rest = np.flatnonzero(~chosen)
            chosen[rng.choice(rest, min(size - int(chosen.sum()), len(rest)),
                              replace=False)] = True
        program, start = form.neighbourhood_program(chosen, w)
        result = solve(program, solver, time_limit=NEIGHBOURHOOD_SECONDS, start=start,
                       within=deadline.solver_limit())
        solved += 1
        if not result.has_solution:
            size = max(10, size // 2)
            continue
        candidate = w.copy()
        candidate[chosen] = np.round(result.x[:int(chosen.sum())])
        candidate_steps = extra_steps(q + G @ candidate + form.h, q, adjacent)
        if candidate_steps.sum() <= steps.sum():        # better, or a sideways move
            idle = 0 if candidate_steps.sum() < steps.sum() else idle + 1
            w, steps = candidate, candidate_steps
        if not result.optimal:
            size = max(10, (2 * size) // 3)             # too large to solve in its time
        elif idle >= NEIGHBOURHOOD_PATIENCE:
            size, idle = min(form.k, int(size * 1.5) + 1), 0
    return q + G @ w + form.h, solved


def _report(deviation: float, floor: float, second: SolveResult | None, *,
            steps_proven: bool, first: SolveResult | None) -> SolveResult:
    """The answer's deviation with the best proven lower bound (module docstring)."""
    bound = floor
    if second is not None and second.bound is not None:
        bound = max(bound, second.bound)
    bound = min(bound, deviation)
    proven = steps_proven and abs(deviation - bound) <= 1e-6 * max(1.0, deviation)
    parts = [p for p in (first, second) if p is not None]
    return SolveResult(
        status="optimal" if proven else "feasible", optimal=proven, objective=deviation,
        bound=bound, gap=relative_gap(deviation, bound), x=None, row_duals=None,
        col_duals=None, seconds=sum(p.seconds for p in parts),
        solver=parts[0].solver if parts else "tabu search",
        message="; ".join(f"{name}: {p.status} ({p.message})"
                          for name, p in (("steps", first), ("deviation", second))
                          if p is not None)
        or "the starting rounding has no extra step and no deviation phase was run",
        nodes=sum(p.nodes or 0 for p in parts) or None)
