"""Protection verification: does a published table protect every sensitive cell?

Protection (``docs/architecture.md``, Contracts): a sensitive cell i with value a_i is
protected when, over the attacker's polytope, ``min x_i <= a_i - lpl_i`` (lower),
``max x_i >= a_i + upl_i`` (upper) and ``max x_i - min x_i >= spl_i`` (sliding). A hidden cell
whose interval is a single point is exactly disclosed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from time import perf_counter
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdcreport._contract import ResultBase
from sdcreport._statuses import ProtectionStatus
from tabsdc._bounds import prior_bounds
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import InputError
from tabsdc._progress import Deadline, Progress, validate_time_limit
from tabsdc._respondents import Insiders, insider_groups
from tabsdc._tableset import accepts_table_set
from tabsdc._validation import check_choice, in_working_units, validate_table
from tabsdc.audit._insider import InsiderAttack, insider_attack
from tabsdc.audit._intervals import IntervalAttack, Intervals
from tabsdc.audit._settle import Settlement, settle_requirements
from tabsdc.audit._witness_search import search_witnesses
from tabsdc.audit._witnesses import (
    WitnessBounds,
    derived_cells,
    witness_bounds,
)

if TYPE_CHECKING:

    from sdcreport import Section
    from tabsdc._table import Table
    from tabsdc.audit._pq_attack import PQAttackResult



def print_progress(line: str) -> None:
    """A progress callable printing each line to standard error (the CLI's)."""
    print(f"  {line}", file=sys.stderr, flush=True)


@accepts_table_set
def audit(
    table: Table,
    *,
    hidden: np.ndarray | None = None,
    prior: Literal["table", "pq"] = "table",
    q: float | None = None,
    integer: bool = False,
    release_intervals: bool = False,
    witnesses: sp.sparray | sp.spmatrix | Literal["search"] | None = None,
    singletons: bool = True,
    solver: str = "highs",
    time_limit: float | None = None,
    tol: float = 1e-6,
    progress: Progress | None = None,
    n_jobs: int | None = 1,
    client: Any = None,
) -> AuditResult:
    """Run the interval attack on a table and check every sensitive cell's protection.

    Parameters
    ----------
    table : Table
        Cells with ``status`` (``u`` sensitive, ``m``/``x``/``w`` other hidden cells),
        ``lpl``/``upl``/``spl`` and a-priori bounds ``lb``/``ub``.
    hidden : ndarray of bool, optional
        Cells the intruder does not see (default: status ``u``, ``m``, ``x`` or ``w``).
    prior : {"table", "pq"}
        The intruder's a-priori knowledge: the table's ``lb``/``ub`` columns (set them per
        cell for user bounds), or the p/q assumption that every value is known within
        ``q`` percent (intersected with ``lb``/``ub``).
    q : float, optional
        Percentage for ``prior="pq"``.
    integer : bool
        Also compute integer bounds (a MILP per bound) and report where they are tighter
        than the LP bounds; the verdict then uses the integer bounds.
    release_intervals : bool
        The intervals are to be published: also run the p/q-interval attack
        (:func:`tabsdc.audit.pq_interval_attack`) on them.
    witnesses : sparse matrix (cells x k) or "search", optional
        Directions along which the published table allows the hidden cells to move (e.g.
        :attr:`tabsdc.suppression.SuppressionResult.witnesses`), or ``"search"`` to look
        for them in the pattern: hypercubes whose corners are all hidden, through every
        sensitive hidden cell (:func:`tabsdc.audit._witness_search.search_witnesses`; on a
        table without dimensions, e.g. read from a JJ file, none are looked for). Either way
        the audit then settles each sensitive cell's requirements instead of computing two
        exact LP bounds per hidden cell: a pattern of 10^4-10^5 cells from any source takes
        minutes, not hours. Each witness is checked on the table
        (:func:`tabsdc.audit._witnesses.witness_bounds`: relations, pattern, bounds); a
        hidden cell whose checked witnesses already prove its protection (and that it is not
        exactly disclosed) gets those inner bounds, status ``"witness"``: the exact interval
        contains them. A cell the relations give away by elimination gets ``[a, a]``, status
        ``"derived"``. The requirements left are settled by LPs
        (:func:`tabsdc.audit._settle.settle_requirements`): points of the attacker's polytope
        that reach them (status ``"witness"`` too), or outer bounds that miss them (status
        ``"exposed"``: the bound of each missed requirement is an outer bound, the exact
        interval lies within it; the other end is an inner bound). A sensitive cell they do
        not settle (spl beyond what the points show, an exposed cell no point moves) gets its
        exact LP bounds; one a time limit leaves open stays ``"not computed"`` (counted as not
        protected, listed in :attr:`AuditResult.not_settled`). A non-sensitive hidden cell
        nothing moves has status ``"unsettled"`` and NaN bounds: the verdict does not depend
        on it, and only an LP over the whole pattern would say whether it is disclosed.
        Ignored with ``integer`` or ``release_intervals`` (both need exact intervals).
    singletons : bool
        Also run the insider attack (:mod:`tabsdc.audit._insider`) where the table has
        frequencies: the respondent of each hidden single-contributor primary
        (``freq == 1``) knows its value, and every other sensitive cell must keep its
        protection levels over the polytope with that value fixed. Failing pairs are in
        :attr:`AuditResult.insider` and make the table not protected. The attack is on the
        LP polytope (also with ``integer``).
    solver, time_limit
        Solver name (``"highs"`` keeps one model per block of hidden cells) and the seconds
        the whole audit may take; bounds it does not reach stay uncomputed, their cells count
        as not protected and the status says ``"time-limited"``.
    tol : float
        Relative tolerance of the verdicts: a requirement is met when it is missed by at most
        ``tol * max(s, |a_i|)``, ``s`` the table's working unit
        (:func:`tabsdc._validation.working_unit`; 1 when its largest value lies in [1, 1e6]).
        The intervals are computed in that unit, so tables of 1e-9 and of 1e12 are judged
        alike.
    progress : callable, optional
        Receives progress lines (bounds done, rate, time left; within seconds, then at least
        every 10 s), e.g. :func:`print_progress`.
    n_jobs, client
        Share the LP bounds of each block (and the witness search, the settling of
        requirements: a group of blocks and a direction per task, and the insider attack's
        requirements) among ``n_jobs`` processes or the workers of a
        ``dask.distributed`` client (:func:`tabsdc._parallel.parallel_map`); the intervals
        and verdicts are the same.

    Returns
    -------
    AuditResult

    Raises
    ------
    InputError
        A bad prior, a value outside its bounds, or a table inconsistent with its bounds
        (no hidden values fit).
    AdditivityError
        A relation of the table does not hold (:func:`tabsdc._validation.validate_table`).

    Examples
    --------
    The 2x2 cycle of Cox's slides 18-20 (x = 10 sensitive with r = 2):

    >>> import pandas as pd
    >>> from tabsdc import Table
    >>> cells = pd.DataFrame({"r": ["1", "1", "2", "2"], "c": ["1", "2", "1", "2"],
    ...                       "value": [10.0, 5.0, 7.0, 8.0]})
    >>> t = Table.from_aggregated(cells, ["r", "c"])
    >>> status = ["s"] * 9
    >>> for i in (4, 5, 7, 8): status[i] = "m"
    >>> status[4] = "u"
    >>> t = t.with_columns(status=status, lpl=[0, 0, 0, 0, 2, 0, 0, 0, 0],
    ...                    upl=[0, 0, 0, 0, 2, 0, 0, 0, 0])
    >>> result = audit(t)
    >>> result.to_frame().loc[[("1", "1")], ["lower", "upper", "protected"]].values.tolist()
    [[2.0, 15.0, True]]
    """
    start = perf_counter()
    validate_table(table)
    validate_time_limit(time_limit)
    if hidden is None:
        hidden = table.cells["status"].isin(HIDDEN_STATUSES).to_numpy()
    hidden = np.asarray(hidden, dtype=bool)
    if hidden.shape != (table.n_cells,):
        raise InputError(f"hidden has shape {hidden.shape}, the table has {table.n_cells} cells")
    # integer bounds are only meaningful in the table's own units
    working, unit = (table, 1.0) if integer else in_working_units(table)
    values = working.values
    lb, ub = prior_bounds(working.cells, values, prior, q)
    deadline = Deadline(time_limit)
    hidden_cells = np.flatnonzero(hidden)
    settled = derived = np.zeros(len(hidden_cells), dtype=bool)
    groups = _respondents(working, hidden) if singletons else None
    proof = settlement = None
    if witnesses is not None and not integer and not release_intervals:
        if isinstance(witnesses, str):
            check_choice("witnesses", witnesses, ("search",))
            witnesses = (search_witnesses(working, hidden, prior, q, progress, deadline,
                                          insiders=groups, n_jobs=n_jobs, client=client)
                         if working.dims
                         else sp.csc_array((working.n_cells, 0)))  # relations only: no cubes
        proof, settled, derived = _witness_proof(working, hidden, lb, ub, witnesses, tol,
                                                 progress)
    attack = IntervalAttack(working.A, working.b, values, hidden, lb, ub, solver=solver)
    wanted = ~settled & ~derived
    if proof is not None:  # the verdict needs the sensitive cells only
        wanted &= (working.cells["status"].to_numpy() == "u")[hidden_cells]
        settlement = _settle(working, attack, proof, wanted, derived, tol, deadline,
                             progress, (n_jobs, client))
        proof = proof.widened(hidden_cells, settlement.lower, settlement.upper)
        settled = _settled(working.cells.iloc[hidden_cells], proof, hidden_cells, tol)
        shown = settlement.exposed & ~_maybe_disclosed(values[hidden_cells], proof,
                                                       settlement, hidden_cells, tol)
        wanted &= ~settled & ~shown & ~settlement.open
    attack.time_limit = deadline.solver_limit()
    lp = attack.intervals(progress, wanted=wanted, n_jobs=n_jobs, client=client)
    if proof is not None:
        lp = _with_witnesses(lp, proof, hidden_cells, settled, derived, settlement)
    lp = _in_units(lp, unit)
    integer_bounds = None
    if integer:
        _require_integers(table, hidden)
        integer_bounds = IntervalAttack(table.A, table.b, values, hidden, np.ceil(lb - 1e-9),
                                        np.floor(ub + 1e-9), integer=True, solver=solver,
                                        time_limit=time_limit).intervals(progress)
    frame = _verdicts(table, attack.hidden_cells, lp, integer_bounds, tol, unit)
    insider = None
    if groups is not None:
        insider = _insider_attack(working, attack, frame, groups, proof, tol, unit, deadline,
                                  progress, n_jobs, client)
    if insider is not None:
        frame = _with_insider(frame, insider.pairs, insider.unexamined, attack.hidden_cells,
                              table.n_cells)
    pq_attack = None
    if release_intervals:
        from tabsdc.audit._pq_attack import pq_interval_attack

        used = integer_bounds or lp
        pq_attack = pq_interval_attack(table, used.lower, used.upper, hidden=hidden, tol=tol)
    return AuditResult(table=table, frame=frame, intervals=lp, integer_intervals=integer_bounds,
                       prior=_describe_prior(prior, q), pq_attack=pq_attack,
                       seconds=perf_counter() - start,
                       witnesses=0 if proof is None else proof.n_valid, insider=insider,
                       lps=0 if settlement is None else settlement.n_lps)


@dataclass(frozen=True)
class AuditResult(ResultBase):
    """Intervals and protection verdicts of every hidden cell.

    Keeps the result contract of :mod:`sdcreport._contract`; as a check, ``passed`` (also
    called ``protected``) is its verdict and ``status`` says it in words.

    Attributes
    ----------
    table : Table
        The audited table (also ``original``: an audit changes nothing).
    frame : DataFrame
        One row per hidden cell (index: the table's cell index) with ``value``, ``status``,
        ``lower``, ``upper`` (the intervals the verdict uses), ``lpl``, ``upl``, ``spl``,
        ``lower_ok``, ``upper_ok``, ``sliding_ok``, shortfalls, ``exact`` and ``protected``;
        with integer bounds also ``lower_lp``/``upper_lp`` and ``integer_tighter``.
    intervals, integer_intervals : Intervals
        Raw LP (and integer) results with solver counts and time.
    prior : str
        The a-priori knowledge assumed.
    pq_attack : PQAttackResult or None
        The p/q-interval attack on the intervals, when they are to be released.
    seconds : float
        Time taken, validation and every bound included.
    witnesses : int
        Witnesses that passed the checks (cells they settle have ``solver_status ==
        "witness"`` in :attr:`frame`: their ``lower``/``upper`` are proven inner bounds,
        the exact interval is at least that wide).
    insider : InsiderAttack or None
        The insider attack (:mod:`tabsdc.audit._insider`; None when it did not run: no
        frequencies, no hidden single-contributor primary, or ``singletons=False``). Its
        failing pairs are :attr:`insider_failures`; a cell some respondent narrows has
        ``insider_ok`` False (and ``protected`` False) in :attr:`frame`, and so has a cell
        whose failing pairs or requirements a time limit left unbounded or unexamined,
        whose verdict is then open
        (``solver_status`` ``"not computed"``, :attr:`not_settled`).
    lps : int
        LPs an audit with witnesses solved to settle what they left (joint points,
        relaxations, exact extremes: :mod:`tabsdc.audit._settle`), besides the exact bounds
        of :attr:`intervals`.
    """

    table: Table
    frame: pd.DataFrame
    intervals: Intervals
    integer_intervals: Intervals | None
    prior: str
    pq_attack: PQAttackResult | None
    seconds: float = 0.0
    witnesses: int = 0
    insider: InsiderAttack | None = None
    lps: int = 0

    @property
    def original(self) -> Table:
        """The audited table (an audit changes nothing)."""
        return self.table

    @property
    def passed(self) -> bool:
        """The verdict (the contract's name for :attr:`protected`)."""
        return self.protected

    @property
    def complete(self) -> bool:
        """Every bound was computed (no time limit cut the audit short)."""
        return (self.intervals.complete
                and (self.integer_intervals is None or self.integer_intervals.complete)
                and (self.insider is None or self.insider.complete))

    statuses = ProtectionStatus

    @property
    def status(self) -> ProtectionStatus:
        """``"protected"``, ``"not protected"`` or ``"time-limited"`` (some bounds were not
        computed in time: those cells count as not protected)."""
        if not self.complete:
            return ProtectionStatus.TIME_LIMITED
        return ProtectionStatus.PROTECTED if self.protected else ProtectionStatus.NOT_PROTECTED

    @property
    def protected(self) -> bool:
        """True when every sensitive cell is protected, against the outside intruder and
        every single-contributor respondent (and, when intervals are to be released, the
        p/q-interval attack reveals nothing)."""
        revealed = self.pq_attack is not None and self.pq_attack.revealed.any()
        insiders_fail = self.insider is not None and not self.insider.passed
        return bool(self.frame["protected"].all()) and not revealed and not insiders_fail

    @property
    def failures(self) -> pd.DataFrame:
        """Sensitive cells that are not protected (exposed or not settled)."""
        return self.frame[~self.frame["protected"]]

    @property
    def insider_failures(self) -> pd.DataFrame:
        """The (respondent, sensitive cell) pairs the insider attack breaks: ``insider``
        (the respondent's single-contributor cell) and ``exposed`` as cell labels, the
        exposed cell's value, its interval with the respondent's cells fixed and its
        levels (empty when the attack did not run or found nothing)."""
        columns = ["insider", "exposed", "value", "lower", "upper", "lpl", "upl", "spl",
                   "status"]
        if self.insider is None:
            return pd.DataFrame(columns=columns)
        pairs = self.insider.pairs[columns].copy()
        for column in ("insider", "exposed"):
            pairs[column] = self._labels(pairs[column].to_numpy(np.int64))
        return pairs

    def _labels(self, positions: np.ndarray) -> list:
        if not self.table.dims:
            return self.table.cells.index[positions].tolist()
        return self.table.cell_labels(positions)

    @property
    def exposed(self) -> pd.DataFrame:
        """Sensitive cells shown not protected: an interval (exact, or an outer bound for
        ``solver_status == "exposed"``) misses a requirement, or the cell is disclosed."""
        f = self.frame
        return f[(f["status"] == "u") & ~f["protected"] & (f["solver_status"] != "not computed")]

    @property
    def not_settled(self) -> pd.DataFrame:
        """Sensitive cells whose verdict a time limit left open (``solver_status == "not
        computed"``): neither shown protected nor exposed, counted as not protected."""
        f = self.frame
        return f[(f["status"] == "u") & (f["solver_status"] == "not computed")]

    def why_not_protected(self) -> str:
        """Why the verdict is negative, in one sentence (``""`` when protected): how many
        sensitive cells miss which requirement, the first of them with its interval, and,
        when every failing cell has protection levels 0, that no level asked for a
        complementary suppression although the published cells give the cells away.

        Examples
        --------
        >>> import pandas as pd
        >>> from tabsdc import Table
        >>> from tabsdc.audit import audit
        >>> zeros = Table.from_frame(pd.DataFrame({"r": ["Total", "a", "b"], "value": 0.0}),
        ...                          ["r"]).with_columns(status=["s", "u", "u"])
        >>> import textwrap
        >>> print(textwrap.fill(audit(zeros).why_not_protected(), 88))
        2 sensitive cells not protected: 2 exactly disclosed (an interval of one point); first
        r=a = 0 in [0, 0]; their protection levels are all 0, so no complementary suppression
        was needed to meet them, yet the published cells and the a-priori bounds give their
        values away (each lies at its lower bound)
        """
        if self.protected:
            return ""
        f = self.failures
        f = f[~(f["lower_ok"] & f["upper_ok"] & f["sliding_ok"] & ~f["exact"])]  # outsider's
        insider = self._insider_sentence()
        if not len(f):
            return insider or (self.pq_attack.headline() if self.pq_attack is not None else "")
        shown = f["solver_status"] != "not computed"
        kinds = [(int(f["exact"].sum()), "exactly disclosed (an interval of one point)"),
                 (int((~f["lower_ok"] & shown).sum()), "below the lower protection level"),
                 (int((~f["upper_ok"] & shown).sum()), "below the upper protection level"),
                 (int((~f["sliding_ok"] & shown).sum()),
                  "narrower than the sliding protection level"),
                 (int((~shown).sum()), "not settled in time")]
        first = f.iloc[0]
        label = self.table.cell_labels(self.table.cells.index.get_indexer(f.index[:1]))[0]
        sentence = (f"{len(f)} sensitive cells not protected: "
                    + ", ".join(f"{n} {what}" for n, what in kinds if n)
                    + f"; first {label} = {first['value']:g} in [{first['lower']:g}, "
                      f"{first['upper']:g}]")
        levels = f[["lpl", "upl", "spl"]].to_numpy(float)
        if not levels.any():
            at_bound = np.allclose(f["value"].to_numpy(float), self.table.cells["lb"].reindex(
                f.index).to_numpy(float))
            sentence += ("; their protection levels are all 0, so no complementary "
                         "suppression was needed to meet them, yet the published cells and "
                         "the a-priori bounds give their values away"
                         + (" (each lies at its lower bound)" if at_bound else ""))
        return sentence + (f"; {insider}" if insider else "")

    def _insider_sentence(self) -> str:
        """What the insider attack found, for :meth:`why_not_protected` (``""``: nothing)."""
        if self.insider is None or self.insider.passed:
            return ""
        if not len(self.insider.pairs):
            return (f"the insider attack was cut short by the time limit "
                    f"({self.insider.unchecked:,} requirements not examined)")
        first = self.insider_failures.iloc[0]
        return (f"{len(self.insider.pairs)} sensitive cells narrowed below their levels by "
                f"the respondent of another single-contributor cell; first the respondent "
                f"of {first['insider']} puts {first['exposed']} = {first['value']:g} in "
                f"[{first['lower']:g}, {first['upper']:g}]")

    def summary(self) -> str:
        f = self.frame
        sensitive = f["status"] == "u"
        shown = f["solver_status"] != "not computed"
        lines = [
            f"Audit ({self.prior}): {len(f)} hidden cells in {self.intervals.n_components} "
            f"independent blocks, {self.intervals.n_solves} bounds in "
            f"{self.intervals.seconds:.2f} s",
        ]
        if self.witnesses or self.lps:
            how = f["solver_status"].value_counts()
            lines.append(f"  {how.get('witness', 0)} hidden cells settled by "
                         f"{self.witnesses} checked witnesses and {self.lps} LPs (inner bounds; "
                         f"the exact interval is at least as wide), {how.get('derived', 0)} "
                         "given away by the relations")
            if how.get("exposed", 0):
                lines.append(f"  {how['exposed']} sensitive cells exposed by an outer bound (the "
                             "exact interval lies within it and misses a requirement)")
            if how.get("unsettled", 0):
                lines.append(f"  {how['unsettled']} non-sensitive hidden cells unsettled (no "
                             "checked witness moves them; whether they are disclosed "
                             "needs an LP over the whole pattern)")
        lines += [
            f"  sensitive cells: {int(sensitive.sum())}, protected: "
            f"{int((f['protected'] & sensitive).sum())}, exposed: {len(self.exposed)}"
            + (f", not settled: {len(self.not_settled)}" if len(self.not_settled) else ""),
            f"  lower / upper / sliding protection missed: {int((~f['lower_ok'] & shown).sum())}"
            f" / {int((~f['upper_ok'] & shown).sum())} / "
            f"{int((~f['sliding_ok'] & shown).sum())}",
            f"  exactly disclosed hidden cells: {int(f['exact'].sum())}",
        ]
        if self.integer_intervals is not None:
            lines.append(f"  integer bounds tighter than LP bounds: "
                         f"{int(f['integer_tighter'].sum())} cells")
        if self.insider is not None:
            lines.append("  " + self.insider.headline())
            failures = self.insider_failures
            bounded = set(failures.loc[failures["status"] != "not computed", "exposed"])
            for r in failures.head(10).itertuples():
                where = (f"in [{r.lower:.6g}, {r.upper:.6g}]" if r.status != "not computed"
                         else "(interval not computed: another pair shows the cell exposed)"
                         if r.exposed in bounded else "(interval not computed: time limit)")
                lines.append(f"    the respondent of {r.insider} puts {r.exposed} {where} "
                             f"(value {r.value:.6g}, levels -{r.lpl:.6g} / +{r.upl:.6g})"
                             + _OUTER_PAIRS.get(r.status, ""))
            if len(self.insider.pairs) > 10:
                lines.append(f"    ... {len(self.insider.pairs) - 10:,} more "
                             "(AuditResult.insider_failures)")
        if self.pq_attack is not None:
            lines.append("  " + self.pq_attack.headline())
        if not self.complete:
            others = int((~shown & ~sensitive).sum())
            lines.append(f"  time limit reached: {len(self.not_settled)} sensitive cells not "
                         "settled (neither shown protected nor exposed: counted as not "
                         "protected)" + (f", {others} other hidden cells not attacked"
                                        if others else ""))
        lines.append("  verdict: " + ("PROTECTED" if self.protected else "NOT PROTECTED"))
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """The per-cell frame (a copy)."""
        return self.frame.copy()

    def _dict_fields(self) -> dict[str, Any]:
        """``{"protected": bool, "prior", "cells": [{"cell", "value",
        "status", "lower", "upper", "lpl", "upl", "protected", "exact"}, ...]}`` (the CLI's
        JSON)."""
        f = self.frame
        labels = (f.index.tolist() if not self.table.dims
                  else self.table.cell_labels(self.table.cells.index.get_indexer(f.index)))
        cells = [
            {"cell": label, "value": float(r.value), "status": r.status,
             "lower": _finite(r.lower), "upper": _finite(r.upper), "lpl": float(r.lpl),
             "upl": float(r.upl), "protected": bool(r.protected), "exact": bool(r.exact)}
            for label, r in zip(labels, f.itertuples(), strict=True)
        ]
        out: dict[str, Any] = {"protected": self.protected,
                               "prior": self.prior, "cells": cells}
        if self.insider is not None:
            i = self.insider
            out["insider"] = {
                "respondents": i.respondents, "pairs_in_blocks": i.pairs_in_blocks,
                "complete": i.complete, "seconds": i.seconds,
                "failing": [{"insider": r.insider, "exposed": r.exposed,
                             "value": float(r.value), "lower": _finite(r.lower),
                             "upper": _finite(r.upper), "lpl": float(r.lpl),
                             "upl": float(r.upl), "spl": float(r.spl)}
                            for r in self.insider_failures.itertuples()]}
        if self.pq_attack is not None:
            out["pq_attack"] = self.pq_attack.to_dict()
        return out

    def to_report(self) -> Section:
        from sdcreport import Section
        from tabsdc._plots import status_map
        from tabsdc.audit._plots import interval_figure

        section = Section("Audit: interval attack")
        section.add_text(
            "For every hidden cell, the smallest and largest value an intruder can derive "
            "from the published cells, the table's relations and the a-priori bounds "
            f"({self.prior}). A sensitive cell is protected when its interval reaches "
            "a - lpl below and a + upl above."
        )
        f = self.frame
        section.add_metrics({
            "verdict": "protected" if self.protected else "NOT protected",
            "hidden cells": len(f),
            "sensitive cells": int((f["status"] == "u").sum()),
            "unprotected sensitive cells": int((~f["protected"]).sum()),
            "sensitive cells not settled (time limit)": len(self.not_settled),
            "exactly disclosed cells": int(f["exact"].sum()),
            "independent blocks": self.intervals.n_components,
            **({} if self.insider is None else {
                "single-contributor respondents": self.insider.respondents,
                "pairs the insider attack breaks": len(self.insider.pairs)}),
            "bounds computed": self.intervals.n_solves,
            "seconds": round(self.intervals.seconds, 3),
        })
        if len(f):
            section.add_figure(interval_figure(self.frame, self.table),
                               "Each sensitive cell's derivable interval around its value, in "
                               "units of its protection level; the red bar, from -1 to 1, is "
                               "the protection required")
        if len(self.table.dims) >= 2:
            section.add_figure(status_map(self.table), "Cell status")
        exact = f[f["exact"]]
        if len(exact):
            primary = int((exact["status"] == "u").sum())
            section.add_text(
                f"{len(exact)} hidden cells are exactly disclosed (their interval is one "
                "value): " + (
                    "all are secondary cells. A secondary cell is hidden to protect the "
                    "primary cells and has no protection level of its own, so its value may "
                    "be derivable; what counts is that every primary cell keeps its interval."
                    if not primary else
                    f"{primary} of them are primary (sensitive) cells, which are therefore "
                    "not protected."))
        columns = ["value", "status", "lower", "upper", "lpl", "upl", "protected", "exact"]
        section.add_table(self.table.in_hierarchy_order(f[columns]), "Hidden cells",
                          max_html_rows=1000)
        if self.insider is not None:
            section.add_text(
                "Insider attack: the respondent of a single-contributor cell knows its value; "
                "with it fixed, every other sensitive cell must still reach a - lpl and "
                "a + upl. " + self.insider.headline() + ".")
            if len(self.insider.pairs):
                section.add_table(self.insider_failures, "Pairs the insider attack breaks "
                                  "(respondent's cell, exposed cell)", max_html_rows=1000)
        if self.pq_attack is not None:
            section.add_text(self.pq_attack.headline())
        return section


# -- helpers ---------------------------------------------------------------------------------
def _witness_proof(
    table: Table, hidden: np.ndarray, lb: np.ndarray, ub: np.ndarray,
    witnesses: sp.sparray | sp.spmatrix, tol: float, progress: Progress | None
) -> tuple[WitnessBounds, np.ndarray, np.ndarray]:
    """The checked witnesses' inner bounds, which hidden cells they settle and which the
    relations give away (in ``table``'s working units)."""
    hidden_cells = np.flatnonzero(hidden)
    cells = table.cells.iloc[hidden_cells]
    proof = witness_bounds(table.A, table.values, hidden, lb, ub, witnesses)
    settled = _settled(cells, proof, hidden_cells, tol)
    derived = derived_cells(table.A, hidden)[hidden_cells] & ~settled
    if progress is not None:
        left = cells["status"].to_numpy()[~settled] == "u"
        progress(f"witnesses: {proof.n_valid:,} of {witnesses.shape[1]:,} pass the checks "
                 f"and settle {int(settled.sum()):,} of {len(hidden_cells):,} hidden cells "
                 f"(left: {int(left.sum()):,} sensitive, {int((~left).sum()):,} other, of "
                 f"which {int(derived.sum()):,} are given away by the relations)")
    return proof, settled, derived


def _settle(
    table: Table, attack: IntervalAttack, proof: WitnessBounds, pending: np.ndarray,
    derived: np.ndarray, tol: float, deadline: Deadline, progress: Progress | None,
    parallel: tuple[int | None, Any]
) -> Settlement:
    """Joint points, relaxations and exact extremes for the requirements of the sensitive
    cells ``pending`` (a mask over the hidden cells) that the witnesses leave unmet, the
    ``derived`` cells held at their values (:func:`tabsdc.audit._settle.settle_requirements`,
    in working units)."""
    hidden_cells = attack.hidden_cells
    cells = table.cells.iloc[hidden_cells]
    a = cells["value"].to_numpy(float)
    lpl, upl = cells["lpl"].to_numpy(float), cells["upl"].to_numpy(float)
    targets = (np.where(pending, a - lpl, np.nan), np.where(pending, a + upl, np.nan))
    return settle_requirements(attack, a, proof.lower[hidden_cells], proof.upper[hidden_cells],
                               targets, tol * np.maximum(1.0, np.abs(a)), known=derived,
                               deadline=deadline, progress=progress, n_jobs=parallel[0],
                               client=parallel[1])


def _respondents(table: Table, hidden: np.ndarray) -> Insiders | None:
    """The respondents of the hidden single-contributor primaries (None: the table has no
    frequencies, or no such primary)."""
    if "freq" not in table.cells.columns:
        return None
    freq = table.cells["freq"].to_numpy(float)
    return insider_groups(table.A, freq,
                          hidden & (table.cells["status"] == "u").to_numpy() & (freq == 1))


def _insider_attack(
    working: Table, attack: IntervalAttack, frame: pd.DataFrame, groups: Insiders,
    proof: WitnessBounds | None, tol: float, unit: float, deadline: Deadline,
    progress: Progress | None, n_jobs: int | None, client: Any
) -> InsiderAttack:
    """The insider attack on the sensitive cells the outsider does not already break."""
    cells = working.cells
    checked = np.zeros(working.n_cells, dtype=bool)
    checked[attack.hidden_cells] = (frame["protected"] & (frame["status"] == "u")).to_numpy()
    levels = tuple(cells[c].to_numpy(float) for c in ("lpl", "upl", "spl"))
    return insider_attack(attack, working.values, levels, checked, groups,
                          witnesses=None if proof is None else proof.deviations,
                          hops=max(3, len(working.dims)) + 1, tol=tol, unit=unit,
                          deadline=deadline, progress=progress, n_jobs=n_jobs,
                          client=client)


#: What the summary adds to a failing pair's interval that is not the exact one.
_OUTER_PAIRS = {"outer bound": ", an outer bound (the exact interval lies within it)",
                "no flow": ", an outer bound (the end at its level is not reached)"}


def _with_insider(frame: pd.DataFrame, pairs: pd.DataFrame, unexamined: np.ndarray,
                  hidden_cells: np.ndarray, n_cells: int) -> pd.DataFrame:
    """The verdicts with the insider attack's failing ``pairs``: a cell some respondent
    narrows below its levels has ``insider_ok`` and ``protected`` False; one whose only
    failing pairs a time limit left unbounded (``"not computed"``) too, or whose
    requirements it left ``unexamined``, and its verdict is open (``solver_status``
    ``"not computed"``: counted as not settled, not as exposed).

    Examples
    --------
    >>> frame = pd.DataFrame({"protected": [True, True, True],
    ...                       "solver_status": ["optimal"] * 3})
    >>> pairs = pd.DataFrame({"exposed": [11, 12, 12],
    ...                       "status": ["optimal", "not computed", "not computed"]})
    >>> out = _with_insider(frame, pairs, np.array([], dtype=int), np.array([10, 11, 12]), 13)
    >>> out.values.tolist()
    [[True, 'optimal', True], [False, 'optimal', False], [False, 'not computed', False]]
    >>> _with_insider(frame, pairs[:0], np.array([10]), np.array([10, 11, 12]), 13)[
    ...     "solver_status"].tolist()
    ['not computed', 'optimal', 'optimal']
    """
    computed = (pairs["status"] != "not computed").to_numpy()
    cells = pairs["exposed"].to_numpy(np.int64)
    exposed, open_ = np.zeros(n_cells, dtype=bool), np.zeros(n_cells, dtype=bool)
    exposed[cells[computed]] = True
    open_[cells[~computed]] = True
    open_[unexamined] = True
    exposed, open_ = exposed[hidden_cells], (open_ & ~exposed)[hidden_cells]
    frame = frame.copy()
    frame.loc[open_ & frame["protected"].to_numpy(), "solver_status"] = "not computed"
    frame["insider_ok"] = ~exposed & ~open_
    frame["protected"] &= frame["insider_ok"]
    return frame


def _settled(cells: pd.DataFrame, proof: WitnessBounds, hidden_cells: np.ndarray,
             tol: float) -> np.ndarray:
    """Hidden cells whose checked witnesses prove every requirement and that they are not
    exactly disclosed (in working units)."""
    a = cells["value"].to_numpy(float)
    lower, upper = proof.lower[hidden_cells], proof.upper[hidden_cells]
    slack = tol * np.maximum(1.0, np.abs(a))
    sensitive = (cells["status"] == "u").to_numpy()
    lpl, upl, spl = (cells[c].to_numpy(float) for c in ("lpl", "upl", "spl"))
    meets = ((lower <= a - lpl + slack) & (upper >= a + upl - slack)
             & (upper - lower >= spl - slack))
    return (upper - lower > slack) & (meets | ~sensitive)


def _maybe_disclosed(a: np.ndarray, proof: WitnessBounds, settlement: Settlement,
                     hidden_cells: np.ndarray, tol: float) -> np.ndarray:
    """Exposed cells that no point moves and whose outer bounds are wider than a point:
    whether they are exactly disclosed needs their exact interval."""
    lower, upper = proof.lower[hidden_cells], proof.upper[hidden_cells]
    outer_lower = np.where(np.isnan(settlement.missed_lower), lower, settlement.missed_lower)
    outer_upper = np.where(np.isnan(settlement.missed_upper), upper, settlement.missed_upper)
    slack = tol * np.maximum(1.0, np.abs(a))
    return settlement.exposed & (upper - lower <= slack) & (outer_upper - outer_lower > slack)


def _with_witnesses(lp: Intervals, proof: WitnessBounds, hidden_cells: np.ndarray,
                    settled: np.ndarray, derived: np.ndarray, settlement: Settlement
                    ) -> Intervals:
    """The LP intervals with the inner bounds of witnesses and points where they settle the
    cell (``"witness"``), the point ``[a, a]`` where the relations give the cell away (its
    values are unmoved in ``proof``), the outer bounds that show a missed requirement
    (``"exposed"``: the other end an inner bound), and ``"unsettled"`` (NaN) for the
    non-sensitive cells nothing moved. Sensitive cells a limit left open stay
    ``"not computed"``."""
    lower, upper, status = lp.lower.copy(), lp.upper.copy(), lp.status.copy()
    known = settled | derived
    lower[known] = proof.lower[hidden_cells[known]]
    upper[known] = proof.upper[hidden_cells[known]]
    status[settled] = "witness"
    status[derived] = "derived"
    exposed = settlement.exposed & ~known & (lp.status == "not computed")
    lower[exposed] = np.where(np.isnan(settlement.missed_lower), proof.lower[hidden_cells],
                              settlement.missed_lower)[exposed]
    upper[exposed] = np.where(np.isnan(settlement.missed_upper), proof.upper[hidden_cells],
                              settlement.missed_upper)[exposed]
    status[exposed] = "exposed"
    status[~known & ~exposed & (lp.status == "not computed") & ~settlement.requested] = (
        "unsettled")
    return replace(lp, lower=lower, upper=upper, status=status)


def _describe_prior(prior: str, q: float | None) -> str:
    return "a-priori bounds of the table" if prior == "table" else \
        f"every value known within q = {q:g} %"


def _require_integers(table: Table, hidden: np.ndarray) -> None:
    values = table.values
    fractional = hidden & (np.abs(values - np.round(values)) > 1e-9)
    if fractional.any():
        label = table.cell_labels(np.flatnonzero(fractional)[:1])[0]
        raise InputError(f"integer bounds need integer values; {label} is {values[fractional][0]}")


def _in_units(intervals: Intervals, unit: float) -> Intervals:
    """Intervals computed in working units, back in the table's units."""
    if unit == 1.0:
        return intervals
    return replace(intervals, lower=intervals.lower * unit, upper=intervals.upper * unit)


def _verdicts(
    table: Table, hidden_cells: np.ndarray, lp: Intervals, integer: Intervals | None,
    tol: float, unit: float
) -> pd.DataFrame:
    cells = table.cells.iloc[hidden_cells]
    a = cells["value"].to_numpy(float)
    lower, upper = (integer.lower, integer.upper) if integer is not None else (lp.lower, lp.upper)
    slack = tol * np.maximum(unit, np.abs(a))
    sensitive = (cells["status"] == "u").to_numpy()
    lpl, upl, spl = (cells[c].to_numpy(float) for c in ("lpl", "upl", "spl"))
    lower_short = np.where(sensitive, np.maximum(0.0, lower - (a - lpl)), 0.0)
    upper_short = np.where(sensitive, np.maximum(0.0, (a + upl) - upper), 0.0)
    sliding_short = np.where(sensitive, np.maximum(0.0, spl - (upper - lower)), 0.0)
    frame = pd.DataFrame({
        "value": a, "status": cells["status"].to_numpy(), "lower": lower, "upper": upper,
        "lpl": lpl, "upl": upl, "spl": spl,
        "lower_ok": lower_short <= slack, "upper_ok": upper_short <= slack,
        "sliding_ok": sliding_short <= slack,
        "lower_shortfall": lower_short, "upper_shortfall": upper_short,
        "sliding_shortfall": sliding_short,
        "exact": (upper - lower) <= slack,
        "solver_status": (integer or lp).status,
    }, index=cells.index)
    # a sensitive cell pinned to one value is disclosed whatever its protection levels
    frame["protected"] = (frame["lower_ok"] & frame["upper_ok"] & frame["sliding_ok"]
                          & ~(sensitive & frame["exact"].to_numpy()))
    if integer is not None:
        frame["lower_lp"], frame["upper_lp"] = lp.lower, lp.upper
        frame["integer_tighter"] = ((integer.lower - lp.lower) > slack) | \
            ((lp.upper - integer.upper) > slack)
    return frame


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
