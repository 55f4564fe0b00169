"""Perturbation tables (p-tables) of the cell key method, as the ptable package builds them
and tau-ARGUS reads them.

A p-table gives, for each original value ``i`` (a row), the probability ``p`` of each
perturbed value ``j = i + v``. Row ``i`` of a count p-table holds the targets
``max(i - D, 0) <= j <= i + D`` except the blocked counts ``1..js`` (a published count is
never 1..js), zero stays zero (row 0 is ``j = 0`` with probability 1), and the last row
(``i = D`` without blocking, ``D + js + 1`` with) serves every larger count: it is symmetric.
Each row's probabilities maximise the entropy under unbiasedness, the variance ``V`` and the
bounds of :mod:`tabsdc.ckm._entropy`; ``pstay`` is a lower bound on ``P[j = i]``, lowered by
0.05 at a time (at most 19 times) while the variance cannot reach ``V`` (ptable 1.0.0's
rule). The cumulated probabilities are rounded to 8 digits (``p_int_lb``, ``p_int_ub``) and
``p`` is taken as their difference, so that every row's intervals tile [0, 1] exactly.

A magnitude p-table (``kind="magnitude"``) has rows ``0`` and ``icat`` (which holds 1 and
``D``) and targets on a grid of ``1/step``; its ``type`` column says whether it serves every
cell (``all``) or the cells of even or odd parity (:mod:`tabsdc.ckm._magnitude`).

File format (tau-ARGUS 4.2, ptable's ``pt_export``): ``;``-separated with a header,
``i;j;p;v;p_int_ub`` for counts and ``i;j;p;v;p_int_ub;type`` for magnitudes.

Source: ptable 1.0.0 (T. Enderle, S. Giessing, B. Meindl; EUPL), ``create_cnt_ptable`` and
``create_num_ptable``; S. Giessing (2016), LNCS 9867, pp. 237-251.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import atomic_write
from tabsdc._errors import InputError
from tabsdc._validation import check_choice
from tabsdc.ckm._entropy import EntropyProblem, max_entropy

#: Digits of the cumulated probabilities (ptable's ``ndigits``).
DIGITS = 8

#: ``"at-most"``: ``sum v^2 p <= V`` (ptable's ``optim = 1``); ``"exact"``: ``= V``
#: (``optim = 4``).
VARIANCE_RULES = ("at-most", "exact")

#: Count p-tables (frequency tables) and magnitude p-tables.
KINDS = ("counts", "magnitude")

#: Smallest probability a target may get (ptable's ``epsilon``).
EPSILON = 1e-8


@dataclass(frozen=True, eq=False)
class PTable:
    """A perturbation table.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per transition, in row order and, within a row, by increasing ``j``:
        columns ``i``, ``j``, ``p``, ``v``, ``p_int_lb``, ``p_int_ub``, ``type``.
    upper_units : ndarray of int64
        ``p_int_ub`` exactly, in units of ``10**-decimals`` (the cell-key lookup compares
        integers, so no key lands on the wrong side of a boundary).
    decimals : int
        Digits of ``p_int_ub``.
    kind : {"counts", "magnitude"}
    parameters : dict
        How it was built (``D``, ``V``, ``js``, ``pstay``, ...) or the file it was read from.
    """

    frame: pd.DataFrame
    upper_units: np.ndarray
    decimals: int
    kind: str = "counts"
    parameters: dict = field(default_factory=dict)

    @property
    def rows(self) -> np.ndarray:
        """The original values ``i`` with a row, increasing."""
        return np.unique(self.frame["i"].to_numpy(float))

    @property
    def max_noise(self) -> float:
        """``D``: the largest ``|v|``."""
        return float(np.abs(self.frame["v"]).max())

    def variance(self) -> pd.Series:
        """``sum v^2 p`` per row."""
        f = self.frame
        return (f["v"] ** 2 * f["p"]).groupby(f["i"]).sum()

    def matrix(self) -> pd.DataFrame:
        """The transition matrix: rows ``i``, columns ``j``, entries ``p`` (0 elsewhere)."""
        return self.frame.pivot_table(index="i", columns="j", values="p", fill_value=0.0)

    def lookup(self, row: np.ndarray, key_units: np.ndarray, key_decimals: int,
               type_: str | None = None) -> np.ndarray:
        """The index (into :attr:`frame`) of the transition each cell takes.

        tau-ARGUS's rule: in the cell's row, the first transition whose ``p_int_ub`` is
        above the cell key. ``row`` holds the row values ``i`` (already capped at the
        largest row), ``key_units`` the cell keys in units of ``10**-key_decimals``.
        ``type_`` restricts to the transitions of one ``type`` (magnitude p-tables).
        """
        select = (np.ones(len(self.frame), bool) if type_ is None
                  else (self.frame["type"] == type_).to_numpy())
        index = np.flatnonzero(select)
        rows = self.frame["i"].to_numpy(float)[index]
        known = np.unique(rows)
        row = np.asarray(row, dtype=float)
        absent = ~np.isin(row, known)
        if absent.any():
            raise InputError(f"the p-table has no row i = {row[absent][0]:g}")
        scale = max(self.decimals, key_decimals)
        upper = self.upper_units[index] * 10 ** (scale - self.decimals)
        keys = np.asarray(key_units, dtype=np.int64) * 10 ** (scale - key_decimals)
        width = 10**scale + 1
        order = np.lexsort((upper, np.searchsorted(known, rows)))
        sorted_keys = np.searchsorted(known, rows)[order] * width + upper[order]
        position = np.searchsorted(sorted_keys, np.searchsorted(known, row) * width + keys,
                                   side="right")
        return index[order[position]]

    def to_frame(self) -> pd.DataFrame:
        """The transitions (a copy of :attr:`frame`)."""
        return self.frame.copy()

    def summary(self) -> str:
        f = self.frame
        head = (f"{self.kind} p-table: rows i = {', '.join(f'{i:g}' for i in self.rows)}; "
                f"maximum noise {self.max_noise:g}; {len(f)} transitions")
        variance = self.variance()
        lines = [head, "row   P[stay]   variance"]
        for i, var in variance.items():
            stay = f.loc[(f["i"] == i) & (f["v"] == 0), "p"]
            lines.append(f"{i:>4g}  {float(stay.sum()):8.4f}  {var:9.4f}")
        return "\n".join(lines)

    def text(self) -> str:
        """The tau-ARGUS file text (see the module text)."""
        f = self.frame
        columns = ["i", "j", "p", "v", "p_int_ub"] + (["type"] if self.kind == "magnitude"
                                                      else [])
        out = pd.DataFrame({c: _format(f[c].to_numpy(float)) for c in columns[:5]})
        if self.kind == "magnitude":
            out["type"] = f["type"].to_numpy()
        buffer = io.StringIO()
        out.to_csv(buffer, sep=";", index=False, lineterminator="\n")
        return buffer.getvalue()

    def write(self, path: str | Path) -> Path:
        """Write the tau-ARGUS file (whole or not at all); returns its path."""
        with atomic_write(path, encoding="utf-8", newline="") as stream:
            stream.write(self.text())
        return Path(path)


def build_ptable(
    max_noise: int,
    variance: float,
    *,
    js: int = 0,
    pstay: float | Sequence[float] | None = None,
    variance_rule: str = "at-most",
    monotone: bool | Sequence[bool] = True,
    kind: str = "counts",
    step: int = 2,
    icat: Sequence[float] | None = None,
    type_: str = "all",
) -> PTable:
    """Build a p-table as ptable 1.0.0's ``create_cnt_ptable`` / ``create_num_ptable``.

    Parameters
    ----------
    max_noise : int
        ``D``, the largest absolute noise.
    variance : float
        ``V``, the variance of the noise.
    js : int
        Counts: the blocked counts ``1..js`` (no published count takes them).
    pstay : float or sequence of float, optional
        Counts: lower bound of ``P[j = i]``, one for all rows or one per row ``i >= 1``.
    variance_rule : {"at-most", "exact"}
        ``sum v^2 p <= V`` (ptable's ``optim = 1``) or ``= V`` (``optim = 4``).
    monotone : bool or sequence of bool
        ptable's ``mono``: probabilities non-decreasing towards ``v = 0`` on the left.
    kind : {"counts", "magnitude"}
    step : int
        Magnitudes: targets on a grid of ``1/step``.
    icat : sequence of float, optional
        Magnitudes: the rows (must hold 1 and ``D``; default ``[1, D]``).
    type_ : str
        The ``type`` column (``all``, ``even`` or ``odd``).

    Returns
    -------
    PTable

    Raises
    ------
    InputError
        A parameter out of range, or a variance no unbiased noise can have.

    Examples
    --------
    >>> table = build_ptable(1, 0.5)   # row 1: v = -1, 0, 1 with variance 0.5
    >>> columns = ["i", "j", "p", "v", "p_int_ub"]
    >>> table.frame[columns].to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'i': [0, 1, 1, 1], 'j': [0, 0, 1, 2], 'p': [1.0, 0.25, 0.5, 0.25], 'v': [0, -1, 0, 1],
     'p_int_ub': [1.0, 0.25, 0.75, 1.0]}
    """
    check_choice("variance_rule", variance_rule, VARIANCE_RULES)
    check_choice("kind", kind, KINDS)
    if int(max_noise) != max_noise or max_noise < 1:
        raise InputError(f"the maximum noise D must be a whole number >= 1, not {max_noise!r}")
    if not np.isfinite(variance) or variance <= 0:
        raise InputError(f"the variance V must be a number > 0, not {variance!r}")
    if int(js) != js or js < 0:
        raise InputError(f"js must be a whole number >= 0, not {js!r}")
    D, js = int(max_noise), int(js)
    if kind == "counts":
        rows = np.arange(1, D + (js + 1 if js else 0) + 1, dtype=float)
        width = 1.0
    else:
        if int(step) != step or step < 1:
            raise InputError(f"step must be a whole number >= 1, not {step!r}")
        rows = np.unique(np.asarray(icat if icat is not None else [1, D], dtype=float))
        if 1 not in rows or D not in rows or rows.max() > D:
            raise InputError(f"icat must hold 1 and D = {D} and nothing above D, not "
                             f"{rows.tolist()}")
        width, js, pstay = 1.0 / step, 0, None
    stay = _per_row(pstay, len(rows), "pstay", None)
    mono = _per_row(monotone, len(rows), "monotone", True)
    for p in stay:
        if p is not None and not 0 < p < 1:
            raise InputError(f"pstay must lie strictly between 0 and 1, not {p!r}")
    frames = [pd.DataFrame({"i": [0.0], "j": [0.0], "v": [0.0], "p": [1.0]})]
    for i, p_stay, mono_i in zip(rows, stay, mono, strict=True):
        j = np.round(np.arange(max(i - D, 0.0), i + D + width / 2, width), 4)
        j = j[~np.isin(j, np.arange(1, js + 1))]
        v = np.round(j - i, 4)
        frames.append(pd.DataFrame({"i": i, "j": j, "v": v,
                                    "p": _row(v, variance, p_stay, variance_rule, bool(mono_i),
                                              blocked=bool(js) and i <= js)}))
    frame = pd.concat(frames, ignore_index=True)
    cumulated = frame.groupby("i")["p"].cumsum().to_numpy()
    upper = np.round(cumulated, DIGITS)
    lower = np.round(cumulated - frame["p"].to_numpy(), DIGITS)
    frame["p"] = np.round(upper - lower, DIGITS)
    frame["p_int_lb"], frame["p_int_ub"] = lower, upper
    frame["type"] = type_
    if kind == "counts":
        frame[["i", "j", "v"]] = frame[["i", "j", "v"]].astype(np.int64)
    frame = frame[["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]]
    parameters = {"D": D, "V": float(variance), "js": js, "pstay": pstay,
                  "variance_rule": variance_rule, "monotone": monotone, "kind": kind,
                  "step": step if kind == "magnitude" else 1, "type": type_}
    return PTable(frame, np.round(upper * 10**DIGITS).astype(np.int64), DIGITS, kind,
                  parameters)


def read_ptable(path: str | Path) -> PTable:
    """Read a p-table in tau-ARGUS's format (see the module text).

    The columns are taken by position (``i;j;p;v;p_int_ub[;type]``), whatever the header
    calls them (``p_ij``, ``p_ij_ub``, quoted or not); ``p_int_ub`` is read exactly as
    decimal text, however many digits it has.

    Raises
    ------
    InputError
        A missing file, too few columns, a value that is not a number (naming the line),
        a row whose last ``p_int_ub`` is not 1, or a row whose ``p_int_ub`` decreases.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such p-table file") from None
    raw = pd.read_csv(io.StringIO(text), sep=";", dtype=str, header=0, skipinitialspace=True)
    if raw.shape[1] < 5:
        raise InputError(f"{path}: a p-table needs the columns i;j;p;v;p_int_ub, found "
                         f"{';'.join(raw.columns)}")
    names = ["i", "j", "p", "v", "p_int_ub"] + (["type"] if raw.shape[1] > 5 else [])
    raw = raw.iloc[:, :len(names)].set_axis(names, axis=1)
    raw.index = pd.RangeIndex(2, len(raw) + 2)
    numbers = {}
    for column in names[:4]:
        values = pd.to_numeric(raw[column].str.strip(), errors="coerce")
        if values.isna().any():
            line = values.index[values.isna()][0]
            raise InputError(f"{path}, line {line}: {column} = {raw.at[line, column]!r} is not "
                             "a number")
        numbers[column] = values.to_numpy(float)
    units, decimals = _exact_units(raw["p_int_ub"], path)
    frame = pd.DataFrame(numbers)
    frame["p_int_ub"] = units / 10.0**decimals
    frame["p_int_lb"] = frame["p_int_ub"] - frame["p"]
    frame["type"] = raw["type"].str.strip().to_numpy() if "type" in raw else "all"
    kind = "magnitude" if "type" in raw or not np.all(frame["j"] == np.round(frame["j"])) \
        else "counts"
    if kind == "counts":
        frame[["i", "j", "v"]] = frame[["i", "j", "v"]].astype(np.int64)
    frame.index = raw.index
    for (i, type_), group in frame.groupby(["i", "type"], sort=False):
        row_units = units[frame.index.get_indexer(group.index)]
        if np.any(np.diff(row_units) < 0):
            raise InputError(f"{path}, line {group.index[0]}: p_int_ub decreases in row "
                             f"i = {i:g}")
        if row_units[-1] != 10**decimals:
            raise InputError(f"{path}, line {group.index[-1]}: the last p_int_ub of row "
                             f"i = {i:g} ({type_}) is not 1")
    frame = frame[["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]].reset_index(drop=True)
    return PTable(frame, units, decimals, kind, {"file": str(path)})


def _per_row(value, n: int, name: str, default) -> list:
    if value is None:
        return [default] * n
    if np.ndim(value) == 0:
        return [value] * n
    values = list(value)
    if len(values) != n:
        raise InputError(f"{name} has {len(values)} values; give one, or one per row "
                         f"({n})")
    return values


def _row(v: np.ndarray, variance: float, pstay: float | None, rule: str, monotone: bool,
         blocked: bool) -> np.ndarray:
    """One row's probabilities, lowering ``pstay`` while the variance misses ``V``."""
    lower = np.full(len(v), EPSILON)
    stay = v == 0
    if pstay is not None:
        lower[stay] = pstay
    for _ in range(20):
        p = max_entropy(EntropyProblem(v, variance, lower, rule == "exact", monotone))
        reached = round(float(v**2 @ p), 3) == round(variance, 3)
        if reached or blocked or not stay.any() or lower[stay][0] <= EPSILON:
            return p
        lower[stay] = np.maximum(lower[stay] - 0.05, EPSILON)
    return p


def _exact_units(text: pd.Series, path: Path) -> tuple[np.ndarray, int]:
    """Decimal strings as integers in units of ``10**-decimals`` (the most any has)."""
    values = []
    for line, item in text.str.strip().items():
        try:
            values.append(Decimal(item))
        except (InvalidOperation, TypeError):
            raise InputError(f"{path}, line {line}: p_int_ub = {item!r} is not a number") \
                from None
    decimals = max(0, *(-d.as_tuple().exponent for d in values))
    if decimals > 15:
        raise InputError(f"{path}: p_int_ub has {decimals} decimals; at most 15 are read")
    return np.array([int(d.scaleb(decimals)) for d in values], dtype=np.int64), decimals


def _format(values: np.ndarray) -> np.ndarray:
    """Numbers with up to 8 decimals, trailing zeros dropped (``0.0185844``, ``1``)."""
    text = np.char.mod(f"%.{DIGITS}f", np.round(values, DIGITS) + 0.0)
    text = np.char.rstrip(np.char.rstrip(text, "0"), ".")
    return np.where(text == "-0", "0", text)
