"""MDAV multivariate microaggregation, grouping exactly as sdcMicro's ``mdav`` does.

Every step works on whole arrays: the distances of all remaining records to one point are one
vectorised pass per variable, so the total cost is O(n^2 p / k) like sdcMicro's C++ code, with
no Python loop over records.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from microsdc.masking._frame import check_number, input_values, same_type


def mdav(X: Any, k: int = 3) -> Any:
    """Microaggregate the records with MDAV: groups of k to 2k-1 similar records, each record
    replaced by its group's mean.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n, p)
        Numeric data without missing values; every column takes part in the distances.
    k : int, default 3
        Minimum group size (sdcMicro's ``aggr``).

    Returns
    -------
    pandas.DataFrame or numpy.ndarray
        Same type and shape as ``X`` (a DataFrame keeps its columns and index), float values.

    Raises
    ------
    DataError
        A non-numeric column or a missing value (naming the column and record), ``k`` not a
        whole number >= 1, or fewer than ``k`` records.

    See Also
    --------
    mdav_groups : the group of every record.

    Notes
    -----
    MDAV (maximum distance to average vector; Domingo-Ferrer and Mateo-Sanz 2002, Sect. 4;
    Domingo-Ferrer and Torra 2005, Algorithm MDAV-generic), in the variant of sdcMicro's
    C++ ``Mdav`` (``microaggregation(method = "mdav")``), reproduced decision for decision:

    * Distances are weighted squared Euclidean, :math:`d(a, b) = \\sum_j (a_j - b_j)^2 / v_j`,
      where :math:`v_j = \\overline{x_j^2} - \\bar x_j^2` is the *population* variance of
      column j over all records (weight 1 for a column with :math:`v_j = 0`). Each term is
      rounded to single precision and the terms are added in single precision, in column
      order, as sdcMicro does; exact ties in these distances are therefore common with
      integer data and are broken as below.
    * While at least 2k records remain: c = the mean of the remaining records; r = the record
      farthest from c; the group of r is the k remaining records nearest to r; s = the record
      farthest from r (among those remaining before r's group was formed); if at least 3k
      records remained at the start of the step, the group of s is the k records nearest to s
      among those still remaining. "Farthest" takes the lowest record number among equal
      distances; "nearest" sorts by distance and, among equal distances, takes the *highest*
      record numbers first (the insertion order of sdcMicro's bucket sort).
    * The last k to 2k-1 records (all records when n < 2k) form the last group.
    * Group means are on the original scale, summed in the order the records were chosen
      (sdcMicro's order, so the means agree bit for bit).

    Values equal to sdcMicro's missing-value code (-999) are ordinary values here: missing
    values are rejected instead.

    Cost: O(n^2 p / k), as sdcMicro, but every step is a few whole-array operations. The mean
    c is first summed pairwise (fast) and the choice of r checked against a bound on the
    rounding difference to sdcMicro's left-to-right sum; it is summed left to right only when
    that bound leaves the choice open.

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. (2002). Practical data-oriented microaggregation
    for statistical disclosure control. IEEE TKDE 14(1), 189-201.

    Domingo-Ferrer, J. and Torra, V. (2005). Ordinal, continuous and heterogeneous
    k-anonymity through microaggregation. Data Mining and Knowledge Discovery 11, 195-212.

    Templ, M., Meindl, B. and Kowarik, A. (2015). Statistical disclosure control for
    micro-data using the R package sdcMicro. Journal of Statistical Software 67(4).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10], [2, 11], [3, 12], [10, 50], [11, 52], [12, 54]])
    >>> mdav(X, k=3)
    array([[ 2., 11.],
           [ 2., 11.],
           [ 2., 11.],
           [11., 52.],
           [11., 52.],
           [11., 52.]])
    """
    k = check_number("k", k, low=1, integer=True)
    labels, means = _mdav(input_values(X, min_records=k, what=f"MDAV with k={k}"), k)
    return same_type(X, means[labels])


def mdav_groups(X: Any, k: int = 3) -> np.ndarray:
    """The MDAV group of every record (numbered 0, 1, ... in the order groups are formed).

    Parameters and errors as :func:`mdav`.

    Returns
    -------
    numpy.ndarray of int, shape (n,)

    Examples
    --------
    >>> mdav_groups([[1.0], [9.0], [2.0], [8.0]], k=2)
    array([0, 1, 0, 1])
    """
    k = check_number("k", k, low=1, integer=True)
    return _mdav(input_values(X, min_records=k, what=f"MDAV with k={k}"), k)[0]


def _mdav(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels (n,) and group means (groups, p) of MDAV on the validated matrix ``x``."""
    pool = _Pool(x)
    labels = np.empty(x.shape[0], dtype=np.intp)
    means: list[np.ndarray] = []

    def take(group: np.ndarray) -> None:
        labels[pool.rows[group]] = len(means)
        means.append(_sequential_sum(pool.data[:, group]) / group.size)
        pool.remove(group)

    while pool.size >= 2 * k:
        groups_now = 2 if pool.size >= 3 * k else 1
        point = pool.column(pool.farthest_from_centre())
        for _ in range(groups_now):
            dist = pool.distances(point)
            farthest = pool.column(pool.argmax(dist))
            take(pool.nearest(dist, k))
            point = farthest
    if pool.size:
        take(pool.live())
    return labels, np.array(means)


class _Pool:
    """The records not yet grouped, one contiguous row per variable, in record order (so
    "lowest position" means "lowest record number", as in sdcMicro's linked list).

    Grouped records stay in the store, listed in ``dead``, until they make up a quarter of
    it; then the store is copied without them. Their columns of ``summand`` are zero, so
    sums over all stored columns equal sums over the live ones (adding +0.0 changes no
    double).
    """

    def __init__(self, x: np.ndarray):
        n, p = x.shape
        self.weights = _inverse_population_variance(x)[:, None]
        self.data = np.array(x.T, order="C")
        self.summand = self.data.copy()
        self.rows = np.arange(n)
        self.size = n
        self._dead = np.empty(n, dtype=np.intp)
        self.dead = self._dead[:0]
        self._terms_store = np.empty((p, n))
        self._single_store = np.empty((p, n), dtype=np.float32)
        self._views()
        # For the fast centre (see farthest_from_centre): largest |value|, range, and whether
        # the error bound holds (it assumes positive weights, i.e. non-negative terms).
        self._abs_max = np.abs(x).max(axis=0)
        self._span = np.ptp(x, axis=0)
        self._bounded = bool((self.weights > 0).all())

    def _views(self) -> None:
        """Work arrays sized to the store (made once per copy of the store, not per step)."""
        m = self.rows.size
        self._terms = self._terms_store[:, :m]
        self._single = self._single_store[:, :m]
        self._single_rows = list(self._single)

    def column(self, position: int) -> np.ndarray:
        """The record at ``position`` as a (p, 1) column."""
        return self.data[:, [position]]

    def live(self) -> np.ndarray:
        keep = np.ones(self.rows.size, dtype=bool)
        keep[self.dead] = False
        return np.flatnonzero(keep)

    def remove(self, positions: np.ndarray) -> None:
        dead = self.dead.size + positions.size
        self._dead[self.dead.size: dead] = positions
        self.dead = self._dead[:dead]
        self.size -= positions.size
        self.summand[:, positions] = 0.0
        if 4 * dead > self.rows.size and self.size:
            keep = self.live()
            self.data = np.take(self.data, keep, axis=1)
            self.summand = self.data.copy()
            self.rows = self.rows[keep]
            self.dead = self._dead[:0]
            self._views()

    def distances(self, point: np.ndarray) -> np.ndarray:
        """sdcMicro's single-precision weighted squared distances of every stored record to
        ``point``: each term (a_j - b_j)^2 w_j in double rounded to single, the terms added
        in single precision in variable order."""
        terms = self._terms
        np.subtract(self.data, point, out=terms)
        np.square(terms, out=terms)
        np.multiply(terms, self.weights, out=terms)
        np.copyto(self._single, terms, casting="same_kind")
        first, *others = self._single_rows
        total = first.copy()
        for row in others:  # loop over the p variables
            total += row
        return total

    def argmax(self, dist: np.ndarray) -> int:
        """Lowest live position of the largest distance (grouped records get -inf)."""
        dist[self.dead] = -np.inf
        return int(np.argmax(dist))

    def nearest(self, dist: np.ndarray, k: int) -> np.ndarray:
        """Live positions of the k smallest distances, by distance and, among equal
        distances, highest position first (the order of sdcMicro's bucket sort)."""
        dist[self.dead] = np.inf
        # The k-th smallest of any sample of k or more values bounds the k-th smallest of
        # all from above: only positions at or below it can be among the k nearest.
        sample = dist[:: max(1, dist.size // (32 * k))]
        cut = np.partition(sample, k - 1)[k - 1]
        candidates = np.flatnonzero(dist <= cut)
        order = np.lexsort((-candidates, dist[candidates]))[:k]
        return candidates[order]

    def farthest_from_centre(self) -> int:
        """The live record farthest from the mean of the live records (lowest position among
        equals), decided exactly as with sdcMicro's left-to-right summed mean.

        The mean is first taken with numpy's fast (pairwise) sum. Both sums are within
        gamma_m * sum|x| of the exact one (Higham 2002, Sect. 4.2), which bounds how far the
        two means, and so the two single-precision distances of any record, can differ. When
        no record other than copies of the farthest one comes within twice that bound of the
        largest distance, both means pick the same record; otherwise (or if the bound does not
        apply) the mean is recomputed left to right.
        """
        m, p = self.rows.size, self.data.shape[0]
        dist = self.distances(self.summand.sum(axis=1, keepdims=True) / self.size)
        best = self.argmax(dist)
        shift = 4.0 * (m + 2) * 2.0**-53 * self._abs_max
        bound = np.sum(self.weights[:, 0] * shift * (2.0 * self._span + 3.0 * shift))
        bound += (p + 2) * 2.0**-23 * float(dist[best])
        if self._bounded and np.isfinite(bound):
            near = np.flatnonzero(dist >= dist[best] - 2.0 * bound)
            if near.size == 1 or (self.data[:, near] == self.data[:, [best]]).all():
                return best
        return self.argmax(self.distances(_sequential_sum(self.summand)[:, None] / self.size))


def _inverse_population_variance(x: np.ndarray) -> np.ndarray:
    """1 / (mean of squares - squared mean), both summed in record order; 1 where zero."""
    n = x.shape[0]
    variance = _sequential_sum(x * x, axis=0) / n - np.square(_sequential_sum(x, axis=0) / n)
    safe = np.where(variance != 0, variance, 1.0)
    return np.where(variance != 0, 1.0 / safe, 1.0)


def _sequential_sum(a: np.ndarray, axis: int = 1) -> np.ndarray:
    """Left-to-right sums (numpy's ``sum`` adds pairwise, which rounds differently)."""
    return np.cumsum(a, axis=axis)[(slice(None),) * axis + (-1,)]
