"""Cost of handing an LP in matrix form to a solver: HiGHS (one ``passModel``) vs PuLP.

Instance: a random sparse LP with n columns, n/2 rows and 5n nonzeros (n = 200,000, about
1,000,000 nonzeros; ``--quick``: n = 20,000), bounds on every column and ranged rows on a
tenth of the rows. Methods, all from the same :class:`tabsdc.solver.LinearProgram`:

* ``pulp build`` (baseline): :func:`tabsdc.solver._pulp_backend.build_pulp_problem`, the
  PuLP problem every PuLP solver (CBC, GLPK, ...) starts from;
* ``HighsModel``: :class:`tabsdc.solver.HighsModel`, the arrays passed to HiGHS in one call;
* ``LinearProgram``: validating the arrays and converting the matrix to CSR, which both
  backends start from.

Below the table the script prints microseconds per variable for each method.

Usage: ``python benchmarks/bench_solver_build.py [--quick]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).parent))
from harness import measure, print_table  # noqa: E402

from tabsdc.solver import HighsModel, LinearProgram  # noqa: E402
from tabsdc.solver._pulp_backend import build_pulp_problem  # noqa: E402


def random_lp(n: int, seed: int = 0) -> dict[str, object]:
    """Arrays of a random feasible sparse LP: n columns, n // 2 rows, about 5 n nonzeros.

    Rows are built around a point ``x0`` of the column box, so the LP is feasible; a tenth of
    the rows are ranged.
    """
    rng = np.random.default_rng(seed)
    m = n // 2
    A = sp.random_array(
        (m, n), density=5 * n / (m * n), format="csr", rng=rng, data_sampler=rng.standard_normal
    )
    col_upper = rng.uniform(1, 5, n)
    activity = A @ rng.uniform(0, col_upper)
    return {
        "c": rng.normal(size=n),
        "A": A,
        "row_lower": np.where(rng.random(m) < 0.1, activity - rng.uniform(0, 1, m), -np.inf),
        "row_upper": activity + rng.uniform(0, 1, m),
        "col_lower": np.zeros(n),
        "col_upper": col_upper,
    }


def main(quick: bool) -> None:
    n = 20_000 if quick else 200_000
    arrays = random_lp(n)
    problem = LinearProgram(**arrays)
    label = f"n={n:,} m={problem.n_rows:,} nnz={problem.A.nnz:,}"
    methods = {
        "pulp build": lambda: build_pulp_problem(problem),
        "HighsModel": lambda: HighsModel(problem),
        "LinearProgram": lambda: LinearProgram(**arrays),
    }
    rows = [
        measure(label, method, fn, baseline=None if method == "pulp build" else "pulp build")
        for method, fn in methods.items()
    ]
    print_table(rows, "Building a solver model from arrays")
    print("\nmicroseconds per variable")
    for row in rows:
        print(f"{row.method:<14} {row.seconds / n * 1e6:8.2f}")
    # the HiGHS model is complete: it holds every row, column and nonzero of the problem
    highs = rows[1].result
    assert (highs.n_rows, highs.n_cols) == (problem.n_rows, problem.n_cols)


if __name__ == "__main__":
    main("--quick" in sys.argv)
