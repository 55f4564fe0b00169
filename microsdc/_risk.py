"""Disclosure risk of masked continuous microdata: distance-based record linkage and interval
disclosure (standard-deviation based, as sdcMicro's ``dRisk``, and rank based).

Every measure is a proportion in [0, 1]: 1 means the masked file discloses every record (or
value), as the original file itself does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from microsdc._data import NumericPair, Seed, generator, numeric_pair, shown
from microsdc._errors import DataError
from sdcreport import Section
from sdcreport._contract import ResultBase
from sdcreport._statuses import MeasureStatus

#: Interval widths over which SDID_avg and RID are averaged: 1 %, 2 %, ..., 10 %.
PERCENTS = tuple(range(1, 11))


def record_linkage(X: Any, X_masked: Any, *, sample: int | None = None, seed: Seed = None,
                   rtol: float = 1e-9) -> float:
    """Distance-based record linkage (DBRL): the share of original records an intruder links
    to their own masked record.

    Parameters
    ----------
    X, X_masked : pandas.DataFrame or array-like of shape (n, p)
        Original and masked data, record i of ``X_masked`` masking record i of ``X``. When
        both are DataFrames the columns are matched by name.
    sample : int, optional
        Link only this many original records, drawn at random without replacement (every
        masked record is still searched); None links all n. For very large files.
    seed : int, numpy.random.Generator or None
        Random source of ``sample``.
    rtol : float, default 1e-9
        Relative tolerance within which masked records count as equally near.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    DataError
        Non-numeric or missing values (naming column and record), different columns or
        numbers of records, fewer than two records, or a bad ``sample``.

    Notes
    -----
    Domingo-Ferrer and Torra (2001), Sect. 4.1 (DLD), with ties shared. Both files are
    standardised with the *original* column means and sample standard deviations (a
    constant column is only centred), so distances are in the original's standard units.
    For each original record i, let :math:`d_i` be the Euclidean distance to its nearest
    masked record and :math:`T_i` the masked records within :math:`d_i (1 + \\text{rtol})`
    (plus 1e-12 for exact duplicates). Record i scores :math:`1 / |T_i|` if its own masked
    record is in :math:`T_i`, else 0: an intruder who picks one of the tied candidates at
    random is right with that probability (so k-fold microaggregated records score at most
    1/k). DBRL is the mean score. The nearest neighbours come from a k-d tree
    (``scipy.spatial.cKDTree``), never an n x n distance matrix.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. (2001). A quantitative comparison of disclosure control
    methods for microdata. In Doyle et al. (eds.), Confidentiality, Disclosure and Data
    Access, 111-133. North-Holland.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0], [1, 1], [5, 5], [6, 7]])
    >>> record_linkage(X, X)
    1.0
    >>> record_linkage(X, X[[1, 0, 2, 3]])
    0.5
    """
    data = numeric_pair(X, X_masked, min_records=2)
    rows = _sample_rows(data.n, sample, seed)
    return float(_linkage_scores(data, rows, rtol).mean())


def sd_interval_disclosure(X: Any, X_masked: Any, k: float = 0.05) -> float:
    """Standard-deviation-based interval disclosure (SDID), sdcMicro's ``dRisk``.

    Parameters
    ----------
    X, X_masked
        As in :func:`record_linkage`.
    k : float, default 0.05
        Interval half-width as a fraction of the masked column's standard deviation.

    Returns
    -------
    float
        The share of records at risk, in [0, 1].

    Raises
    ------
    DataError
        As :func:`record_linkage`, or a negative ``k``.

    Notes
    -----
    Mateo-Sanz, Sebe and Domingo-Ferrer (2004), Sect. 3 (SDID), as sdcMicro 5.8.1's
    ``dRisk(x, xm, k)``. With :math:`s'_j` the sample standard deviation (n - 1 in the
    denominator) of masked column j, record i is at risk when every one of its original
    values lies in its interval:

    .. math:: x'_{ij} - k s'_j \\le x_{ij} \\le x'_{ij} + k s'_j
              \\quad\\text{for all } j = 1, \\dots, p

    (bounds included). SDID is the share of records at risk. sdcMicro releases before 5.6.0
    also counted a record with one value outside its interval; that rule is not used.

    References
    ----------
    Mateo-Sanz, J. M., Sebe, F. and Domingo-Ferrer, J. (2004). Outlier protection in
    continuous microdata masking. In Privacy in Statistical Databases, LNCS 3050, 201-215.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10, 100], [2, 20, 200], [3, 30, 300], [4, 40, 400]])
    >>> sd_interval_disclosure(X, X)
    1.0
    >>> sd_interval_disclosure(X, X[::-1])
    0.0

    One value outside its interval is enough to leave a record out:

    >>> sd_interval_disclosure(X, X + [[0.0, 0, 0], [0, 0, 100], [0, 0, 0], [0, 0, 0]])
    0.75
    """
    k = _nonnegative("k", k)
    data = numeric_pair(X, X_masked, min_records=2)
    return float(_sdid(data, np.array([k]))[0])


def rank_interval_disclosure(X: Any, X_masked: Any, p: float | None = None) -> float:
    """Rank-based interval disclosure (RID): the share of original values that fall in a rank
    interval around their masked value.

    Parameters
    ----------
    X, X_masked
        As in :func:`record_linkage`.
    p : float, optional
        Interval width in percent of the number of records; None (default) averages over
        p = 1, 2, ..., 10, as in the literature.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    DataError
        As :func:`record_linkage`, or a negative ``p``.

    Notes
    -----
    Domingo-Ferrer and Torra (2001), Sect. 4.1 (interval disclosure). For column j, let
    :math:`o_{(1)} \\le \\dots \\le o_{(n)}` be the sorted original values and, for masked
    value :math:`x'_{ij}`, :math:`c` = the rank of the first original value not below it
    (the number of original values below it, plus 1, but at most n). With
    :math:`h = \\lfloor p n / 200 \\rfloor` the interval is
    :math:`[o_{(\\max(1, c - h))},\\; o_{(\\min(n, c + h))}]`: ranks within it differ by at
    most p % of n and it is centred on the masked value's rank. Value (i, j) is disclosed
    when :math:`x_{ij}` lies in its interval; RID is the share of disclosed values among
    the n p.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(100.0).reshape(50, 2)
    >>> rank_interval_disclosure(X, X)
    1.0
    >>> rank_interval_disclosure(X, X[::-1], p=10)
    0.04
    """
    percents = np.array(PERCENTS if p is None else [_nonnegative("p", p)], dtype=float)
    data = numeric_pair(X, X_masked, min_records=1)
    return float(_rid(data, percents).mean())


@dataclass(frozen=True)
class RiskReport(ResultBase):
    """Disclosure risk of a masked file: the four measures and how they were computed.

    Attributes
    ----------
    dbrl, sdid, sdid_avg, rid : float
        Distance-based record linkage, SD-based interval disclosure at ``k`` (sdcMicro's
        ``dRisk``), its average over k = 1 %, ..., 10 %, rank-based interval disclosure
        averaged over p = 1 %, ..., 10 %.
    n, p : int
        Records and variables.
    k : float
        SDID interval half-width (fraction of the masked standard deviation).
    linked : int
        Original records linked for DBRL (n unless a sample was drawn).
    by_width : pandas.DataFrame
        SDID and RID at each width 1 %, ..., 10 %.
    seconds : float
        Time taken.

    Keeps the result contract of :mod:`sdcreport._contract` (``status`` is ``"computed"``).
    """

    dbrl: float
    sdid: float
    sdid_avg: float
    rid: float
    n: int
    p: int
    k: float
    linked: int
    by_width: pd.DataFrame = field(repr=False)
    seconds: float = 0.0

    statuses = MeasureStatus

    @property
    def status(self) -> MeasureStatus:
        """``"computed"``: a measurement, with no verdict of its own."""
        return MeasureStatus.COMPUTED

    def measures(self) -> dict[str, float]:
        """``{"DBRL", "SDID", "SDID_avg", "RID"}``."""
        return {"DBRL": self.dbrl, "SDID": self.sdid, "SDID_avg": self.sdid_avg,
                "RID": self.rid}

    def _dict_fields(self) -> dict[str, Any]:
        """The :meth:`measures`, how they were computed (``n``, ``p``, ``k``, ``linked``)."""
        return {**self.measures(), "n": self.n, "p": self.p, "k": self.k,
                "linked": self.linked}

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: value and meaning."""
        meanings = {
            "DBRL": "records linked to their own masked record (ties shared)",
            "SDID": f"records with every value inside its SD interval (k = {self.k:g}, "
                    "sdcMicro dRisk)",
            "SDID_avg": "SDID averaged over k = 1 %, ..., 10 %",
            "RID": "values inside rank intervals, averaged over p = 1 %, ..., 10 %",
        }
        values = self.measures()
        return pd.DataFrame({"value": [values[m] for m in meanings],
                             "meaning": list(meanings.values())},
                            index=pd.Index(list(meanings), name="measure"))

    def summary(self) -> str:
        """The four measures, one per line."""
        lines = [f"Disclosure risk ({self.n} records, {self.p} variables)"]
        lines += [f"  {name:<9} {value:.4f}" for name, value in self.measures().items()]
        return "\n".join(lines)

    def to_report(self) -> Section:
        """An ``sdcreport`` section: the measures and the interval widths."""
        sample = "" if self.linked == self.n else f" (DBRL on a sample of {self.linked})"
        return (Section("Disclosure risk")
                .add_text("Share of records (DBRL, SDID) or values (RID) an intruder "
                          "discloses from the masked file; 1 = as disclosive as the original "
                          f"file, 0 = nothing disclosed.{sample}")
                .add_metrics(self.measures())
                .add_table(self.to_frame(), "Measures")
                .add_table(self.by_width, "Interval disclosure by interval width"))


def disclosure_risk(X: Any, X_masked: Any, *, seed: Seed = None, k: float = 0.05,
                    sample: int | None = None, rtol: float = 1e-9) -> RiskReport:
    """All disclosure risk measures of a masked file.

    Parameters
    ----------
    X, X_masked
        As in :func:`record_linkage`.
    seed, sample, rtol
        As in :func:`record_linkage` (``seed`` only matters with ``sample``).
    k : float, default 0.05
        SDID interval half-width, as in :func:`sd_interval_disclosure`.

    Returns
    -------
    RiskReport

    Raises
    ------
    DataError
        As the single measures.

    See Also
    --------
    record_linkage, sd_interval_disclosure, rank_interval_disclosure

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(40.0).reshape(20, 2) ** 1.5
    >>> disclosure_risk(X, X).measures()
    {'DBRL': 1.0, 'SDID': 1.0, 'SDID_avg': 1.0, 'RID': 1.0}
    """
    start = perf_counter()
    k = _nonnegative("k", k)
    data = numeric_pair(X, X_masked, min_records=2)
    rows = _sample_rows(data.n, sample, seed)
    widths = np.array(PERCENTS, dtype=float)
    sdid = _sdid(data, np.concatenate([[k], widths / 100.0]))
    rid = _rid(data, widths)
    by_width = pd.DataFrame({"SDID": sdid[1:], "RID": rid},
                            index=pd.Index([f"{w:g} %" for w in widths], name="width"))
    return RiskReport(
        dbrl=float(_linkage_scores(data, rows, rtol).mean()),
        sdid=float(sdid[0]), sdid_avg=float(sdid[1:].mean()), rid=float(rid.mean()),
        n=data.n, p=data.p, k=k, linked=rows.size, by_width=by_width,
        seconds=perf_counter() - start)


def _nonnegative(name: str, value: Any) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value < 0:
        raise DataError(f"{name} must be a finite number >= 0; got {shown(value)}")
    return float(value)


def _sample_rows(n: int, sample: int | None, seed: Seed) -> np.ndarray:
    if sample is None:
        return np.arange(n)
    if isinstance(sample, bool) or not isinstance(sample, int | np.integer) or \
            not 1 <= sample <= n:
        raise DataError(f"sample must be a whole number in [1, {n}]; got {shown(sample)}")
    return np.sort(generator(seed).choice(n, size=int(sample), replace=False))


def _linkage_scores(data: NumericPair, rows: np.ndarray, rtol: float) -> np.ndarray:
    """1 / (number of equally near masked records) if the own record is among them, else 0."""
    centre = data.x.mean(axis=0)
    sd = data.x.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    original = (data.x[rows] - centre) / sd
    masked = (data.xm - centre) / sd
    tree = cKDTree(masked)
    nearest, _ = tree.query(original, k=1)
    radius = nearest * (1.0 + rtol) + 1e-12
    tied = tree.query_ball_point(original, radius, return_length=True)
    own = np.sqrt(np.square(original - masked[rows]).sum(axis=1))
    return np.where(own <= radius, 1.0 / np.maximum(tied, 1), 0.0)


def _sdid(data: NumericPair, ks: np.ndarray) -> np.ndarray:
    """sdcMicro dRisk at each half-width in ``ks``: share of records with every original value
    inside its interval (bounds computed as sdcMicro does, ``x' - k s'`` and ``x' + k s'``)."""
    sd = data.xm.std(axis=0, ddof=1)
    out = np.empty(ks.size)
    for i, k in enumerate(ks):  # loop over the (few) widths
        inside = (data.x >= data.xm - k * sd) & (data.x <= data.xm + k * sd)
        out[i] = np.mean(inside.all(axis=1))
    return out


def _rid(data: NumericPair, percents: np.ndarray) -> np.ndarray:
    """Share of original values inside their rank interval, for each width in ``percents``."""
    n = data.n
    ranked = np.sort(data.x, axis=0)
    columns = np.arange(data.p)
    centre = np.empty(data.xm.shape, dtype=np.intp)
    for j in columns:  # loop over variables
        centre[:, j] = np.searchsorted(ranked[:, j], data.xm[:, j], side="left")
    centre = np.minimum(centre, n - 1)
    out = np.empty(percents.size)
    for i, percent in enumerate(percents):  # loop over the (few) widths
        half = int(np.floor(percent * n / 200.0))
        low = ranked[np.maximum(centre - half, 0), columns]
        high = ranked[np.minimum(centre + half, n - 1), columns]
        out[i] = np.mean((data.x >= low) & (data.x <= high))
    return out
