"""Which protection requirements a pattern fails, checked in parallel.

Given a pattern, the requirements are independent: each is checked by its own attacker LPs
(:meth:`~tabsdc.suppression._attacker.Attacker.proof`: least-deviation attacks that move the
primary by its level, against the outside intruder and every respondent of a
single-contributor primary, prove the requirement). The requirements are cut into
chunks and the chunks run through :func:`tabsdc._parallel.parallel_map`, so the answer is the
same with one process, several, or a Dask cluster. On tables above
:data:`~tabsdc.suppression._attacker.LOCAL_ABOVE` cells a local attack is tried first and the
whole pattern's only when none exists: a requirement reported as failing is routed again,
and a route adds cells even when the requirement holds through cells hidden far away (on
``4d_5k`` no requirement of the modular method's sub-tables had a local certificate; over
the whole pattern 2,019 of its 2,118 did). Once the attacker's deadline has expired, the
requirements not yet checked count as failing.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from tabsdc.suppression._attacker import Attacker, Requirement
>>> A = sp.csr_array([[1.0, 1.0, -1.0]])  # x0 + x1 = x2
>>> attacker = Attacker(A, np.array([5.0, 5, 10]), np.array([5.0, 5, 10]))
>>> reqs = [Requirement(0, 1, 2.0)]
>>> failing_requirements(attacker, reqs, np.array([True, False, False]))
[Requirement(cell=0, direction=1, level=2.0, fixed=(), sides=())]
>>> failing_requirements(attacker, reqs, np.array([True, True, False]))
[]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tabsdc._flows import Requirement
from tabsdc._parallel import parallel_map, resolve_jobs
from tabsdc._progress import Deadline, ProgressReporter, seconds_until
from tabsdc.suppression._attacker import Attacker

#: Requirements per task when the work is spread (enough to hide the cost of shipping the
#: table to a worker).
CHUNK = 500


def failing_requirements(
    attacker: Attacker,
    reqs: Sequence[Requirement],
    pattern: np.ndarray,
    *,
    n_jobs: int | None = 1,
    client: Any = None,
    progress: Callable[[str], None] | None = None,
    chunk: int = CHUNK,
) -> list[Requirement]:
    """The requirements ``pattern`` does not provably meet (in the order of ``reqs``);
    ``chunk`` requirements per parallel task. Once the attacker's deadline has expired (or a
    Ctrl-C has stopped the search) the requirements not yet checked count as failing (in
    every process: a task started late gets what is left on the wall clock)."""
    pattern = np.asarray(pattern, dtype=bool)
    jobs = resolve_jobs(n_jobs)
    parallel = client is not None or jobs > 1
    size = chunk if parallel else max(len(reqs), 1)
    chunks = [list(reqs[k:k + size]) for k in range(0, len(reqs), size)]
    reporter = ProgressReporter(progress, "checking", len(reqs), unit="requirements")
    if not parallel:
        verdicts = [_holds(attacker, pattern, chunks[0] if chunks else [], reporter)]
    else:
        until = attacker.deadline.wall_clock_end()
        tasks = [(attacker.A, attacker.L, attacker.U, attacker.insiders, pattern, chunk, until)
                 for chunk in chunks]
        verdicts = parallel_map(check_chunk, tasks, n_jobs=jobs, client=client)
    holds = [ok for chunk in verdicts for ok in chunk]
    reporter.finish(len(reqs), f"{holds.count(False):,} fail")
    return [req for req, ok in zip(reqs, holds, strict=True) if not ok]


def _holds(attacker: Attacker, pattern: np.ndarray, reqs: Sequence[Requirement],
           reporter: ProgressReporter | None = None) -> list[bool]:
    attacker.set_pattern(pattern)
    out = []
    for done, req in enumerate(reqs):
        if attacker.deadline.expired:  # time limit or Ctrl-C: the rest count as failing
            return out + [False] * (len(reqs) - done)
        if reporter is not None:
            reporter.update(done)
        out.append(attacker.proof(req, whole_pattern=True)[0] is not None)
    return out


def check_chunk(task: tuple) -> list[bool]:
    """One task of :func:`failing_requirements` (module level, so that it pickles):
    ``until`` is the wall-clock end of the check (None: no limit)."""
    A, down, up, insiders, pattern, reqs, until = task
    left = seconds_until(until)
    if left is not None and left <= 0:
        return [False] * len(reqs)
    return _holds(Attacker(A, down, up, Deadline(left), insiders=insiders), pattern, reqs)
