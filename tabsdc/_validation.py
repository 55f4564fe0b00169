"""What every method checks before it works on a table, and the table's working unit.

Two ideas, used together by every entry point (audit, suppression, adjustment, rounding):

* :func:`validate_table`: one validation, shared, so that every entry point accepts and
  rejects the same tables with the same message: values inside their a-priori bounds and
  relations that hold (the first failure is named, by cell or relation).
* :func:`check_choice`: the one check of a named choice (``method``, ``cost``, ``prior``,
  ``engine``, ...): every entry point refuses an unknown choice with an :class:`InputError`
  worded alike, ``unknown method 'simplex'; choose one of optimal, heuristic, ...``.
* :func:`in_working_units`: the table in its working unit (:mod:`tabsdc._units`), so that
  tolerances are relative to the table's magnitude.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from tabsdc._errors import InputError
from tabsdc._units import working_unit  # public here too

if TYPE_CHECKING:
    from tabsdc._table import Table

#: Cell columns measured in the unit of the values (divided by the working unit).
SCALED_COLUMNS = ("value", "cost", "lb", "ub", "lpl", "upl", "spl")

#: Relative tolerance with which a value may lie outside its bounds (float noise).
_BOUND_TOLERANCE = 1e-9


def check_choice(name: str, value: object, choices: Sequence[str], *, also: str = "",
                 error: type[Exception] = InputError) -> str:
    """The toolkit's one check of a named choice: ``value`` if it is one of ``choices``.

    Parameters
    ----------
    name : str
        What is chosen, as the keyword says it (``"method"``, ``"cost"``, ``"engine"``).
    value : object
        The choice made.
    choices : sequence of str
        The names accepted.
    also : str
        What else is accepted besides the names, said after them (``"a cell column or an
        array"``).
    error : exception class
        What is raised: :class:`~tabsdc.InputError`, or the error of the package
        that checks (:class:`microsdc.DataError` in :mod:`microsdc`).

    Raises
    ------
    InputError
        ``unknown <name> <value>; choose one of <choices>`` (the same wording in every
        entry point), or ``error`` when given.

    Examples
    --------
    >>> check_choice("method", "optimal", ("optimal", "heuristic"))
    'optimal'
    >>> check_choice("method", "simplex", ("optimal", "heuristic"))
    Traceback (most recent call last):
    tabsdc.InputError: unknown method 'simplex'; choose one of optimal, heuristic
    """
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(map(str, choices)) + (f", or {also}" if also else "")
    raise error(f"unknown {name} {value!r}; choose one of {listed}")


def in_working_units(table: Table) -> tuple[Table, float]:
    """The table with every value-measured column and ``b`` divided by its working unit.

    Returns
    -------
    (Table, float)
        The scaled table (the same object when the unit is 1) and the unit ``s``; a result
        computed on it is multiplied by ``s`` to return to the table's units.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": ["a", "b"], "value": [2e-9, 3e-9]})
    >>> scaled, unit = in_working_units(Table.from_aggregated(cells, ["r"]))
    >>> unit, scaled.values.round(6).tolist()
    (1e-12, [5000.0, 2000.0, 3000.0])
    """
    unit = working_unit(table.values)
    if unit == 1.0:
        return table, unit
    # dividing by 1e-12 is multiplying by the exactly representable 1e12
    factor = round(1.0 / unit) if unit < 1.0 else 1.0 / unit
    cells = table.cells.copy()
    for column in SCALED_COLUMNS:
        cells[column] = cells[column].to_numpy(float) * factor
    return table.__class__(cells, table.A, table.b * factor, table.hierarchies), unit


def validate_table(table: Table) -> None:
    """Check a table before a method works on it; raise naming the first offending cell.

    Checked: the table has a cell, ``lb <= ub``, every value lies inside its a-priori bounds
    ``[lb, ub]`` (within a relative 1e-9) and every relation holds
    (:meth:`tabsdc.Table.check_additivity`, relative to the table's magnitude). Non-finite
    values and negative protection levels are rejected when the table is built
    (:class:`tabsdc.Table`).

    Raises
    ------
    InputError
        A table without cells; crossed bounds or a value outside its bounds, naming the
        cell.
    AdditivityError
        A relation that does not hold, naming it with its cells and values.

    Examples
    --------
    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": ["Total", "a", "b"], "value": [17.0, 8.0, 8.0]})
    >>> try:
    ...     validate_table(Table.from_frame(cells, ["r"], tol=1.0))
    ... except ValueError as error:
    ...     print(error)
    1 relation(s) do not hold; first: relation 0: r=Total (17) = r=a (8) + r=b (8) (residual -1)
    """
    if table.n_cells == 0:
        raise InputError("the table has no cells: there is nothing to protect, audit, round "
                         "or adjust")
    cells = table.cells
    values = cells["value"].to_numpy(float)
    lb, ub = cells["lb"].to_numpy(float), cells["ub"].to_numpy(float)
    slack = _BOUND_TOLERANCE * np.maximum(np.abs(values), working_unit(values))
    crossed = lb > ub
    if crossed.any():
        first = int(np.flatnonzero(crossed)[0])
        raise InputError(f"{table.cell_labels([first])[0]} has a lower bound {lb[first]:.10g} "
                         f"above its upper bound {ub[first]:.10g}")
    outside = (values < lb - slack) | (values > ub + slack)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise InputError(
            f"{table.cell_labels([first])[0]} has value {values[first]:.10g} outside its "
            f"a-priori bounds [{lb[first]:.10g}, {ub[first]:.10g}]"
        )
    table.check_additivity()
