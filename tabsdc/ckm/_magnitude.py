"""The cell key method for magnitude tables (tau-ARGUS 4.2, cellKey's numeric variables).

Every cell of a magnitude table (interior cells and every total) with value ``X`` gets a
noise scaled by its largest contributions ``x_1 >= x_2 >= ... >= x_k`` (by absolute value):

1. **Step 1.** The cell key ``ck`` (the sum of the records' keys modulo 1,
   :mod:`tabsdc.ckm._keys`) is scrambled: its first decimal is moved to the end
   (``0.d1 d2 ... dn`` becomes ``0.d2 ... dn d1``, with ``n`` the record keys' decimals).
   With ``z_s`` the separation point (below), the noise unit is
   ``delta_1 = x_1 m(|x_1|)`` when ``|x_1| >= z_s`` and 1 otherwise; when ``|X| < |delta_1|``,
   ``delta_1 = X`` and ``x_1 = X / sigma_1`` (and ``delta_1 = 1`` again if now
   ``|x_1| < z_s``). The noise ``V_1`` is read from the p-table at ``a = |X / delta_1|``
   (below) with the scrambled key, from the small-value p-table when ``|x_1| <= z_s``, and

       X' = X + sign(X) |delta_1| sign(V_1) (mu + |V_1|),

   where ``mu = mu_c`` for a sensitive cell whose ``|x_1| >= z_s`` and 0 otherwise; a
   negative ``V_1`` never takes ``X'`` across zero (it stops at 0).
2. **Steps j = 2..k** (``k`` the number of ``epsilon`` weights, at most the cell's number of
   contributions): when ``|x_j| >= z_s``, ``delta_j = x_j epsilon_j m(|x_j|)`` (``delta_j = X'``
   and ``x_j = X' / (epsilon_j sigma_1)`` when ``|X'| < |delta_j|``); if still
   ``|x_j| >= z_s``, the key is scrambled once more and ``X' += sign(X') |delta_j| V_j`` with
   ``V_j`` read at ``a = |X' / delta_j|``. No ``mu_c`` after step 1.

**The flex function** (:class:`FlexFunction`; Giessing and Tent 2019; cellKey's
``ck_flexparams``, tau-ARGUS's ``<SCALING> F``): for ``z >= z_f``

    m(z) = sigma_0 (1 + (sigma_1 z - sigma_0 z_f) / (sigma_0 z_f) (2 z_f / (z + z_f))^q),

which equals ``sigma_1`` at ``z = z_f`` and falls to ``sigma_0`` for large ``z``; below ``z_f``
(and always without ``sigma_0``, tau-ARGUS's ``<SCALING> N``) ``m(z) = sigma_1`` when
``z > z_s`` and 0 otherwise.

**Reading a magnitude p-table at a** (tau-ARGUS's rule): the rows ``i`` of a magnitude
p-table are few (0, 1, ..., D). For ``a`` at or above the last row, the noise of the last
row; otherwise, with ``a_0 <= a < a_1`` the rows around ``a`` and ``lambda = (a - a_0) /
(a_1 - a_0)``, ``V = (1 - lambda) v_0 + lambda v_1``, each ``v`` being the noise of the first
transition of its row whose ``p_int_ub`` is above the key (``v_1`` is 0 when ``a`` is within
1e-8 of ``a_0``). Row 0 holds only ``v = 0``, so ``0 <= a < 1`` gives ``V = a v_1``.

**Separation** (``small_ptable``): small values are perturbed like counts. With ``m_1^2``
the variance of the last row of the small-value p-table and ``E = sum_j epsilon_j^2``, the
separation point is ``z_s = m_1 / (sigma_1 sqrt(E))`` (0 without separation).

**Parity**: with ``parity=True`` cells of an even number of contributors read the
p-table's ``even`` transitions and the others its ``odd`` ones (otherwise ``all``).

Empty cells and cells whose value and largest contribution are 0 stay 0. What the noise is
scaled by (tau-ARGUS's ``<CKM>``): the largest contributions (``"top"``, ``T(k)``), the mean
contribution (``"mean"``, ``M``), the spread ``x_max - x_min`` (``"range"``, ``D``) or the cell
value (``"value"``, ``V``); only ``"top"`` takes more than one step.

Where tau-ARGUS and cellKey 1.0.2 differ, this module follows tau-ARGUS 4.2 (its
``SetCellKeyValuesCont``): the key is scrambled before step 1 (cellKey's ``same_key =
FALSE``) and once per step actually taken; ``mu_c`` and the floor at zero only in step 1;
steps ``j >= 2`` below ``z_s`` add nothing; the first decimal moves within the keys' fixed
number of decimals. The contributions are ordered by absolute value, as cellKey orders them
(tau-ARGUS keeps the largest signed values: the same for non-negative data).

Sources: S. Giessing, R. Tent (2019), *Concepts for generalising tools implementing the
cell key method to the case of continuous variables*, UNECE/Eurostat work session on
statistical data confidentiality; tau-ARGUS 4.2 user's manual, section 4.5 (the cell key
method for magnitude tables); cellKey 1.0.2 (B. Meindl), ``ck_params_nums``,
``ck_flexparams``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tabsdc._errors import InputError
from tabsdc._hierarchy import DEFAULT_TOTAL, Hierarchy
from tabsdc._inputs import require_columns, require_numeric
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.ckm._flex import FlexFunction, MagnitudeNoise
from tabsdc.ckm._keys import (
    MAX_DIGITS,
    cell_key_units,
    draw_record_keys,
    record_key_units,
)
from tabsdc.ckm._ptable import PTable
from tabsdc.ckm._result import MagnitudeResult

if TYPE_CHECKING:
    from tabsdc._rules import SensitivityRule

#: What the noise is scaled by (tau-ARGUS's ``<CKM>`` T(k), M, D, V).
NOISE_BASES = ("top", "mean", "range", "value")

#: Distance below which ``a`` counts as lying on a p-table row (tau-ARGUS's 1e-8).
ON_ROW = 1e-8

#: A contribution this small (in absolute value) leaves its record key out of the key of
#: its cell when ``include_zeros=False`` (tau-ARGUS's 1e-8).
ZERO = 1e-8


def scramble_keys(units: np.ndarray, digits: int) -> np.ndarray:
    """Move each key's first decimal to the end (tau-ARGUS's ``ShiftFirstDigit``).

    Keys are integers in units of ``10**-digits``: ``0.d1 d2 ... dn`` becomes
    ``0.d2 ... dn d1``.

    Examples
    --------
    >>> scramble_keys(np.array([12345678, 5, 90000000]), 8)
    array([23456781,       50,        9])
    """
    units = np.asarray(units, dtype=np.int64)
    head = 10 ** (digits - 1)
    return (units % head) * 10 + units // head


def separation_point(small_ptable: PTable | None, flex: FlexFunction) -> float:
    """``z_s = m_1 / (sigma_1 sqrt(E))``, ``m_1^2`` the variance of the small-value p-table's
    last row (0 without a small-value p-table).

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> small = build_ptable(1, 0.5, kind="magnitude", step=1)   # last row: variance 0.5
    >>> round(float(separation_point(small, FlexFunction(0.5, epsilon=(1.0, 0.5)))), 6)
    1.264911
    """
    if small_ptable is None:
        return 0.0
    frame = small_ptable.frame[small_ptable.frame["type"] == "all"]
    if frame.empty:
        raise InputError("the small-value p-table has no transitions of type 'all'")
    last = frame[frame["i"] == frame["i"].max()]
    m1 = float(np.sqrt(np.sum(last["v"].to_numpy() ** 2 * last["p"].to_numpy())))
    return float(m1 / (flex.small * np.sqrt(flex.energy)))


def interpolated_noise(ptable: PTable, a: np.ndarray, keys: np.ndarray, digits: int,
                       type_: str = "all") -> np.ndarray:
    """The noise ``V`` read at ``a`` with the given keys (tau-ARGUS's rule, module text).

    Not-a-number ``a`` (a zero cell with a zero unit) reads 0.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> table = build_ptable(2, 0.5, kind="magnitude", step=1)   # rows 0, 1, 2
    >>> # at the key 0.22 row 1 gives v = -1 (p_int_ub 0.236) and row 2 v = 0
    >>> interpolated_noise(table, np.array([0.5, 1.0, 1.5, 9.0]), np.full(4, 22000000), 8)
    array([-0.5, -1. , -0.5,  0. ])
    """
    frame = ptable.frame
    rows = np.unique(frame.loc[frame["type"] == type_, "i"].to_numpy(float))
    if not len(rows):
        raise InputError(f"the p-table has no transitions of type {type_!r}")
    a = np.asarray(a, dtype=float)
    keys = np.asarray(keys, dtype=np.int64)
    v = frame["v"].to_numpy(float)
    out = np.zeros(len(a))
    known = np.isfinite(a) & (a >= rows[0])
    last = known & (a >= rows[-1])
    if last.any():
        out[last] = v[ptable.lookup(np.full(last.sum(), rows[-1]), keys[last], digits, type_)]
    inside = np.flatnonzero(known & ~last)
    if len(inside):
        upper = np.searchsorted(rows, a[inside], side="right")
        a0, a1 = rows[upper - 1], rows[upper]
        share = (a[inside] - a0) / (a1 - a0)
        v0 = v[ptable.lookup(a0, keys[inside], digits, type_)]
        v1 = v[ptable.lookup(a1, keys[inside], digits, type_)]
        v1 = np.where(np.abs(a0 - a[inside]) > ON_ROW, v1, 0.0)
        out[inside] = (1 - share) * v0 + share * v1
    return out


def magnitude_noise(
    values: np.ndarray,
    contributions: np.ndarray,
    cell_keys: np.ndarray,
    ptable: PTable,
    flex: FlexFunction,
    *,
    digits: int = 8,
    small_ptable: PTable | None = None,
    counts: np.ndarray | None = None,
    parity: bool = False,
    sensitive: np.ndarray | None = None,
    mu_c: float = 0.0,
) -> MagnitudeNoise:
    """The noise of every cell of a magnitude table (the steps of the module text).

    Parameters
    ----------
    values : ndarray
        ``X``, the cell values.
    contributions : ndarray, shape (n_cells, k)
        ``x_1, ..., x_k`` per cell, largest in absolute value first (NaN where a cell has
        fewer contributors); for the mean, range or value bases one column.
    cell_keys : ndarray of int64
        The cell keys in units of ``10**-digits`` (before scrambling).
    ptable : PTable
        The magnitude p-table (types ``all``, or ``even`` and ``odd`` with ``parity``).
    flex : FlexFunction
        ``m(z)`` and the ``epsilon`` weights (steps beyond ``flex.top_k`` are not taken).
    small_ptable : PTable, optional
        The small-value p-table (separation); without it ``z_s = 0``.
    counts : ndarray, optional
        Contributors per cell: cells with none stay 0, parity and the number of steps.
    parity : bool
        Even and odd cells read the ``even`` and ``odd`` transitions.
    sensitive : ndarray of bool, optional
        Cells that get ``mu_c`` in step 1.
    mu_c : float
        The extra protection of sensitive cells (>= 0), in units of ``delta_1``.

    Returns
    -------
    MagnitudeNoise

    Examples
    --------
    One cell of value 100 with one contribution, the p-table's noise +1 at its key: the
    unit is 0.3 x 100 = 30, ``a = 100 / 30`` lies between rows 1 and 5, so ``V`` is the
    interpolation of the two rows' noise at that key.

    >>> from tabsdc.ckm._ptable import build_ptable
    >>> table = build_ptable(5, 1.0, kind="magnitude", step=2)
    >>> out = magnitude_noise(np.array([100.0]), np.array([[100.0]]), np.array([0]), table,
    ...                       FlexFunction(0.3))
    >>> float(out.delta[0, 0]), bool(out.published[0] == 100 + 30 * out.v[0, 0])
    (30.0, True)
    """
    if ptable.kind != "magnitude":
        raise InputError("a magnitude table needs a magnitude p-table, not a count one")
    if not np.isfinite(mu_c) or mu_c < 0:
        raise InputError(f"mu_c must be a number >= 0, not {mu_c!r}")
    x = np.asarray(values, dtype=float).copy()
    n = len(x)
    tops = np.asarray(contributions, dtype=float).reshape(n, -1)[:, :flex.top_k]
    counts = (np.full(n, tops.shape[1]) if counts is None
              else np.asarray(counts, dtype=np.int64))
    sensitive = np.zeros(n, bool) if sensitive is None else np.asarray(sensitive, bool)
    keys = np.asarray(cell_keys, dtype=np.int64).copy()
    zs = separation_point(small_ptable, flex)
    types = np.full(n, "all", dtype=object)
    if parity:
        types = np.where(counts % 2 == 0, "even", "odd")
    delta = np.full(tops.shape, np.nan)
    v = np.full(tops.shape, np.nan)
    mu = np.zeros(n)
    small = np.zeros(n, bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        # step 1
        step = np.flatnonzero(counts > 0)
        keys[step] = scramble_keys(keys[step], digits)
        xj = np.nan_to_num(tops[step, 0])
        xs = x[step]
        mu[step] = np.where(sensitive[step] & (np.abs(xj) >= zs), mu_c, 0.0)
        unit = np.where(np.abs(xj) >= zs, xj * flex(np.abs(xj), zs), 1.0)
        shrink = np.abs(xs) < np.abs(unit)
        unit = np.where(shrink, xs, unit)
        xj = np.where(shrink, xs / flex.small, xj)
        unit = np.where(shrink & (np.abs(xj) < zs), 1.0, unit)
        small[step] = ~(np.abs(xj) > zs)
        a = np.abs(xs / unit)
        noise = np.zeros(len(step))
        for table, type_, use in _readings(ptable, small_ptable, types[step], small[step]):
            noise[use] = interpolated_noise(table, a[use], keys[step][use], digits, type_)
        change = _sign(xs) * np.abs(unit) * _sign(noise) * (mu[step] + np.abs(noise))
        floor = np.where(xs < 0, np.minimum(change, -xs), np.maximum(change, -xs))
        x[step] = xs + np.where(noise >= 0, change, floor)
        delta[step, 0], v[step, 0] = unit, noise
        # steps 2..k
        for j in range(1, tops.shape[1]):
            step = np.flatnonzero((counts > j) & np.isfinite(tops[:, j]))
            xj = tops[step, j]
            eps = flex.epsilon[j]
            go = np.abs(xj) >= zs
            unit = xj * eps * flex(np.abs(xj), zs)
            shrink = go & (np.abs(x[step]) < np.abs(unit))
            unit = np.where(shrink, x[step], unit)
            xj = np.where(shrink, x[step] / (eps * flex.small), xj)
            step, unit = step[go & (np.abs(xj) >= zs)], unit[go & (np.abs(xj) >= zs)]
            keys[step] = scramble_keys(keys[step], digits)
            noise = np.zeros(len(step))
            for table, type_, use in _readings(ptable, None, types[step],
                                               np.zeros(len(step), bool)):
                noise[use] = interpolated_noise(table, np.abs(x[step] / unit)[use],
                                                keys[step][use], digits, type_)
            x[step] += _sign(x[step]) * np.abs(unit) * noise
            delta[step, j], v[step, j] = unit, noise
    return MagnitudeNoise(x, delta, v, small, mu, zs)


def perturb_magnitudes(
    data: pd.DataFrame,
    dims: Sequence[str],
    value: str,
    ptable: PTable,
    flex: FlexFunction,
    *,
    record_key: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    digits: int = 8,
    base: str = "top",
    small_ptable: PTable | None = None,
    parity: bool = False,
    include_zeros: bool = True,
    rules: SensitivityRule | Sequence[SensitivityRule] | None = None,
    sensitive: pd.Series | None = None,
    mu_c: float = 0.0,
    weight: str | None = None,
    keep_empty: bool = True,
    total: str = DEFAULT_TOTAL,
    progress: Callable[[str], None] | None = None,
    seed: int | np.random.Generator | None = None,
) -> MagnitudeResult:
    """Sum a magnitude per cell and publish every cell with its cell-key noise.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per contribution (enterprise, person, ...).
    dims : sequence of str
        The dimension columns (leaf codes), as :meth:`tabsdc.Table.from_microdata`.
    value : str
        The magnitude column.
    ptable : PTable
        A magnitude p-table (:func:`~tabsdc.ckm._ptable.build_ptable` with
        ``kind="magnitude"``, :func:`~tabsdc.ckm._ptable.read_ptable`).
    flex : FlexFunction
        The noise coefficient and the ``epsilon`` weights of the top-``k`` contributions.
    record_key : str, optional
        The column of the record keys (numbers in [0, 1) with at most ``digits``
        decimals); without it keys are drawn with ``seed`` (``result.record_keys``).
    hierarchies : mapping of str to Hierarchy, optional
    digits : int
        Decimals of the record keys (the scrambling moves digits within them).
    base : {"top", "mean", "range", "value"}
        What scales the noise (module text); ``"top"`` takes ``flex.top_k`` steps.
    small_ptable : PTable, optional
        The small-value p-table (separation).
    parity : bool
        Even and odd numbers of contributors read the ``even`` and ``odd`` transitions.
    include_zeros : bool
        The keys of records contributing 0 count in their cells' keys (tau-ARGUS's
        ``<INCLUDEZEROS>``).
    rules : rule or sequence of rules, optional
        Sensitivity rules (:mod:`tabsdc._rules`) on the original table; the cells they flag
        get ``mu_c``.
    sensitive : pandas.Series of bool, optional
        More cells that get ``mu_c``, by cell label (those already known to be sensitive,
        as tau-ARGUS's unsafe cells).
    mu_c : float
        The extra protection of sensitive cells.
    weight : str, optional
        Sampling weight: cell values are weighted totals and ``x_j`` the weighted largest
        contributions (ordered by their unweighted size, as tau-ARGUS and cellKey do).
    keep_empty : bool
        Keep empty combinations of codes (published as 0).
    progress : callable, optional
    seed : int or numpy.random.Generator, optional
        Seed of drawn record keys (keyword only).

    Returns
    -------
    MagnitudeResult

    Raises
    ------
    InputError
        A missing or non-numeric column, a bad record key (naming the row), a count
        p-table, an unknown base.

    Examples
    --------
    >>> from tabsdc.ckm._ptable import build_ptable
    >>> data = pd.DataFrame({"sex": list("mmmf"), "income": [100.0, 250.0, 40.0, 900.0],
    ...                      "key": [0.1, 0.2, 0.35, 0.9]})
    >>> result = perturb_magnitudes(data, ["sex"], "income",
    ...                             build_ptable(5, 1.0, kind="magnitude"),
    ...                             FlexFunction(0.1), record_key="key")
    >>> result.to_frame()["original"].to_dict()
    {'Total': 1290.0, 'm': 390.0, 'f': 900.0}
    """

    started = perf_counter()

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    check_choice("base", base, NOISE_BASES)
    dims = list(dims)
    require_columns(data, [*dims, value, *(c for c in (record_key, weight) if c)])
    require_numeric(data, [value, *([weight] if weight else [])])
    if not 1 <= digits <= MAX_DIGITS:
        raise InputError(f"digits must be a whole number from 1 to {MAX_DIGITS}, not "
                         f"{digits!r}")
    keys = (record_key_units(data[record_key], digits, name=record_key)
            if record_key is not None else draw_record_keys(len(data), seed=seed,
                                                            digits=digits))
    x = data[value].to_numpy(float)
    k = flex.top_k if base == "top" else 1
    original = Table.from_microdata(data, dims, value, weight=weight, hierarchies=hierarchies,
                                    top=max(k, 3), keep_empty=keep_empty, total=total,
                                    progress=progress)
    say(f"{original.n_cells:,} cells summed; the largest contributions and the cell keys")
    hier = original.hierarchies
    w = np.ones(len(data)) if weight is None else data[weight].to_numpy(float)
    first = _ranked(data[dims], np.abs(x), hier, k, keep_empty, total, original)
    tops = np.where(first >= 0, (w * x)[np.maximum(first, 0)], np.nan)
    counts = np.round(original.cells["freq"].to_numpy()).astype(np.int64)
    if base == "mean":
        weights = (counts if weight is None else
                   Table.from_microdata(data, dims, weight, hierarchies=hier, top=1,
                                        keep_empty=keep_empty, total=total).values)
        tops = np.divide(original.values, weights, out=np.zeros(len(counts)),
                         where=weights > 0)[:, None]
    elif base == "range":
        low = _ranked(data[dims], -x, hier, 1, keep_empty, total, original)[:, 0]
        high = _ranked(data[dims], x, hier, 1, keep_empty, total, original)[:, 0]
        tops = np.where(high >= 0, x[np.maximum(high, 0)] - x[np.maximum(low, 0)], 0.0)[:, None]
    elif base == "value":
        tops = original.values[:, None]
    key_of = keys if include_zeros else np.where(np.abs(x) > ZERO, keys, 0)
    cell_keys = cell_key_units(data[dims], key_of, hier, original.cell_coords(), digits)
    flagged = np.zeros(original.n_cells, bool)
    if rules is not None:
        from tabsdc._rules import apply_rules

        flagged |= (apply_rules(original, rules).table.cells["status"] == "u").to_numpy()
    if sensitive is not None:
        flagged |= sensitive.reindex(original.cells.index, fill_value=False).to_numpy(bool)
    noise = magnitude_noise(original.values, tops, cell_keys, ptable, flex, digits=digits,
                            small_ptable=small_ptable, counts=counts, parity=parity,
                            sensitive=flagged, mu_c=mu_c)
    published = original.with_columns(value=noise.published)
    say(f"{int(np.count_nonzero(noise.published != original.values)):,} of "
        f"{original.n_cells:,} cells perturbed")
    return MagnitudeResult(
        original=original, table=published, ptable=ptable, flex=flex, noise=noise,
        cell_keys=cell_keys, digits=digits, base=base, small_ptable=small_ptable,
        parity=parity, include_zeros=include_zeros, mu_c=mu_c,
        sensitive=flagged,
        record_keys=None if record_key is not None else keys, record_key=record_key,
        seed=seed, seconds=perf_counter() - started)


def _sign(x: np.ndarray) -> np.ndarray:
    """tau-ARGUS's sign: +1 for ``x >= 0`` (zero included), -1 otherwise."""
    return np.where(x >= 0, 1.0, -1.0)


def _readings(ptable: PTable, small_ptable: PTable | None, types: np.ndarray,
              small: np.ndarray):
    """(p-table, type, cells) for each p-table the cells of a step read."""
    if small_ptable is not None and small.any():
        yield small_ptable, "all", small
    for type_ in np.unique(types[~small]) if (~small).any() else ():
        yield ptable, str(type_), ~small & (types == type_)


def _ranked(codes: pd.DataFrame, size: np.ndarray, hierarchies: Mapping[str, Hierarchy],
            k: int, keep_empty: bool, total: str, like: Table) -> np.ndarray:
    """The records with the ``k`` largest ``size`` in each cell of ``like`` (-1 where a cell
    has fewer), by the largest ranks per cell (ties broken by record order)."""
    order = np.lexsort((-np.arange(len(size)), size))
    rank = np.empty(len(size))
    rank[order] = np.arange(1, len(size) + 1)
    frame = codes.assign(_rank=rank)
    ranks = Table.from_microdata(frame, list(codes.columns), "_rank", hierarchies=hierarchies,
                                 top=k, keep_empty=keep_empty, total=total)
    if not ranks.cells.index.equals(like.cells.index):
        raise AssertionError("the rank table's cells differ from the value table's")
    top = ranks.cells[[f"x{j + 1}" for j in range(k)]].to_numpy()
    return np.where(top > 0, order[np.maximum(top.astype(np.int64) - 1, 0)], -1)
