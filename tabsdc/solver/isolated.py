"""A HiGHS MILP solve that ends at its time limit whatever HiGHS is doing.

HiGHS compares its clock with ``time_limit`` between the steps of a MIP solve, but some
steps (cut generation at the root node of a large MILP) run tens of seconds past it, and
cancelling from another thread does not reach them. :func:`solve_isolated` runs the solve in
a child process forked from a clean server process (``multiprocessing``'s ``forkserver``,
``tabsdc.solver`` preloaded there, so a child starts in milliseconds). The child gets the
time limit as usual and nearly always answers in time, incumbent and bound included; a child
that has not answered ``grace`` seconds after the limit is ended, and the result is
``"no_solution"`` with a message saying so. A time limit is then a promise: the call returns
within ``time_limit + grace`` seconds.
"""

from __future__ import annotations

import multiprocessing
from functools import cache
from time import perf_counter

from tabsdc.solver.options import SolveOptions
from tabsdc.solver.problem import LinearProgram, SolveResult

__all__ = ["solve_isolated", "grace_seconds"]


def grace_seconds(time_limit: float) -> float:
    """How long after its time limit a child may still answer: 2 s plus 5 % of the limit.

    Examples
    --------
    >>> grace_seconds(60.0)
    5.0
    """
    return 2.0 + 0.05 * time_limit


@cache
def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if "forkserver" in methods:
        context.set_forkserver_preload(["tabsdc.solver.highs"])
    return context


def _child(problem: LinearProgram, options: SolveOptions, connection) -> None:
    from tabsdc.solver.highs import solve_highs

    try:
        connection.send(solve_highs(problem, options))
    except BaseException as error:  # reported to the parent, which raises it there
        connection.send(error)
    finally:
        connection.close()


def solve_isolated(problem: LinearProgram, options: SolveOptions) -> SolveResult:
    """Solve ``problem`` with HiGHS in a child process ended ``grace_seconds`` after the
    time limit of ``options`` (which must have one).

    Examples
    --------
    >>> import numpy as np
    >>> milp = LinearProgram(c=[-1.0, -1.0], A=np.array([[2.0, 2.0]]), row_lower=[-np.inf],
    ...                      row_upper=[3.0], col_lower=[0, 0], col_upper=[5, 5],
    ...                      integrality=[True, True])
    >>> result = solve_isolated(milp, SolveOptions(time_limit=10.0))
    >>> result.status, result.objective
    ('optimal', -1.0)
    """
    context = _context()
    receive, send = context.Pipe(duplex=False)
    start = perf_counter()
    child = context.Process(target=_child, args=(problem, options, send), daemon=True)
    child.start()
    send.close()
    try:
        if receive.poll(options.time_limit + grace_seconds(options.time_limit)):
            answer = receive.recv()
            if isinstance(answer, BaseException):
                raise answer
            return answer
    except EOFError:
        pass  # the child died without answering: treated as a solve that did not return
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    return SolveResult(
        status="no_solution", optimal=False, objective=None, bound=None, gap=None, x=None,
        row_duals=None, col_duals=None, time=perf_counter() - start, solver="highs",
        message=f"HiGHS did not return within its time limit of {options.time_limit:g} s "
                "(it was stopped)")
