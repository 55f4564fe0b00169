"""Running tau-ARGUS batch files (``.arb``) with the toolkit's methods.

A batch file (manual 5.7) is a list of ``<COMMAND> arguments`` lines; ``//`` starts a
comment line. :func:`run_batch` first checks the whole file (:func:`~tabsdc.io.argus._plan.
plan_batch`: every command, every file read and written), then executes the commands in
order; file names resolve against the batch file's folder (Windows paths and letter case as
:func:`~tabsdc.io.argus._syntax.resolve_path` says; outputs as
:func:`~tabsdc.io.argus._syntax.output_path` says). Commands and what they run here:

===================  ====================================================================
OPENMICRODATA        the microdata file (fixed-width ``.asc`` or separated, per the .rda)
OPENTABLEDATA        the tabular input file (``.tab``)
OPENMETADATA         the ``.rda`` file
SPECIFYTABLE         a table: spanning variables, response, shadow, cost, lambda
SAFETYRULE           its sensitivity rules (:mod:`tabsdc.io.argus._safety`)
READMICRODATA        aggregate the tables, apply the rules
READTABLE            read the tables of a ``.tab`` (``1``: compute totals, ``1T``: and keep
                     the file's statuses)
APRIORI              an a-priori file (:mod:`tabsdc.io.argus._apriori`)
RECODE               a global (``.grc``) or tree recode, or a hierarchy cut at a level;
                     like tau-ARGUS, it recodes the variable in every table that has it
SUPPRESS             OPT -> optimal, MOD -> modular, NET -> network, GH -> hypercube, RND ->
                     controlled rounding, CTA -> controlled adjustment
                     (:mod:`tabsdc.io.argus._protect`), CKM -> the cell key method
                     (:mod:`tabsdc.io.argus._ckm`); table number 0: every table, linked
WRITETABLE           the output files of :mod:`tabsdc.io.argus._output`
LOGBOOK              the log file (appended to)
CLEAR                start afresh
SOLVER               logged (HiGHS solves everything here)
VERSIONINFO          a file with the toolkit's version
GOINTERACTIVE,       logged, nothing to do (no GUI); commands after them are still run
GOBATCH, SILENT
===================  ====================================================================

Every protection is audited (:func:`tabsdc.audit.audit`; linked tables on all their
relations together) and the verdict logged. A command that is not supported
(``<READTABLE> 2`` for non-additive tables, ``APRIORI`` with trivial-level expansion, the
distance cost ``-3``) stops the job before any work, with the file, the line, the command
and the reason; nothing is skipped silently.

Output files are written beside their targets and put in place together when every command
has run (:mod:`tabsdc.io.argus._staging`): a job that fails, whatever the reason, leaves
every previous file as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any

import pandas as pd

from sdcreport._contract import ResultBase
from sdcreport._files import OutputPathError
from sdcreport._statuses import BatchStatus
from tabsdc._cellstatus import HIDDEN_STATUSES
from tabsdc._errors import TabSDCError
from tabsdc._hierarchy import Hierarchy
from tabsdc._progress import Deadline, Progress
from tabsdc._table import Table
from tabsdc.io.argus._apriori import apply_apriori
from tabsdc.io.argus._cdl import read_cdl
from tabsdc.io.argus._ckm import run_ckm
from tabsdc.io.argus._grc import close_below_depth, close_subtrees
from tabsdc.io.argus._metadata import Metadata
from tabsdc.io.argus._microdata import read_data
from tabsdc.io.argus._output import OUTPUT_TYPES, write_output
from tabsdc.io.argus._plan import (
    LOGGED_ONLY,
    Apriori,
    BatchPlan,
    Output,
    RecodeRequest,
    Step,
    Suppress,
    WriteTable,
    plan_batch,
)
from tabsdc.io.argus._protect import (
    ProtectionOutcome,
    audit_together,
    protect,
    protect_linked,
)
from tabsdc.io.argus._safety import SafetySpec, format_safety_rule
from tabsdc.io.argus._staging import Staging
from tabsdc.io.argus._syntax import ArgusFormatError, quote, resolve_path
from tabsdc.io.argus._tables import (
    TableSpec,
    microdata_table,
    tabular_table,
    variable_hierarchy,
)

if TYPE_CHECKING:
    from sdcreport import Section


@dataclass
class JobTable:
    """A table of the job: its specification and rules, the table as read (with primary
    cells, recodes and a-priori changes) and the outcome of its last protection."""

    spec: TableSpec
    safety: SafetySpec | None = None
    table: Table | None = None
    outcome: ProtectionOutcome | None = None

    @property
    def protected(self) -> Table | None:
        """The table after its last protection (None before SUPPRESS)."""
        return self.outcome.table if self.outcome else None


@dataclass(frozen=True)
class BatchResult(ResultBase):
    """Outcome of :func:`run_batch`: the tables, the files written, the log lines, and
    whether every protection run passed its check (audit, additivity, verification) and
    tables protected one by one passed their audit together (``together``: one verdict per
    group of tables of one response variable).

    Keeps the result contract of :mod:`sdcreport._contract` (a check: ``passed``; ``status``
    says it in words).
    """

    tables: tuple[JobTable, ...]
    written: tuple[Path, ...]
    log: tuple[str, ...]
    passed: bool
    seconds: float = 0.0
    together: tuple[bool, ...] = ()

    statuses = BatchStatus

    @property
    def status(self) -> BatchStatus:
        """``"passed"`` (every protection passed its check), ``"failed"``, or ``"nothing
        protected"`` (no ``<SUPPRESS>`` ran)."""
        if not any(job.outcome is not None for job in self.tables):
            return BatchStatus.NOTHING_PROTECTED
        return BatchStatus.PASSED if self.passed else BatchStatus.FAILED

    def to_frame(self) -> pd.DataFrame:
        """One row per table: its label, the method that protected it, its cells and hidden
        cells, and whether it passed its check (None when not protected)."""
        rows = []
        for number, job in enumerate(self.tables, start=1):
            protected = job.protected
            rows.append({
                "table": number, "label": job.spec.label,
                "method": job.outcome.method if job.outcome else None,
                "cells": None if job.table is None else job.table.n_cells,
                "hidden": None if protected is None else int(
                    protected.cells["status"].isin(HIDDEN_STATUSES).sum()),
                "passed": job.outcome.passed if job.outcome else None})
        return pd.DataFrame(rows, columns=["table", "label", "method", "cells", "hidden",
                                           "passed"]).set_index("table")

    def summary(self) -> str:
        """The verdict, then one line per table."""
        lines = [f"tau-ARGUS batch: {len(self.tables)} table(s), {len(self.written)} file(s) "
                 f"written, {self.status} ({self.seconds:.2f} s)"]
        for number, row in self.to_frame().iterrows():
            verdict = ("not protected" if row.method is None else
                       f"{row.method}: " + ("passed" if row.passed else "FAILED"))
            lines.append(f"  table {number} ({row.label}): {verdict}")
        return "\n".join(lines)

    def _dict_fields(self) -> dict[str, Any]:
        """Plain JSON values: ``passed``, the files written, the
        verdicts of tables protected one by one audited together, and per table its label,
        method, verdict and the protection result's ``to_dict()``."""
        from sdcreport._report import jsonable

        return jsonable({
            "passed": self.passed, "written": [str(p) for p in self.written],
            "audited_together": self.together,
            "tables": [{"table": job.spec.label,
                        "method": job.outcome.method if job.outcome else None,
                        "passed": job.outcome.passed if job.outcome else None,
                        "result": job.outcome.details if job.outcome else None}
                       for job in self.tables]})

    def to_report(self) -> Section:
        """A report section: the verdict, the tables and the log."""
        from sdcreport import Section

        return (Section("tau-ARGUS batch job")
                .add_metrics({"verdict": self.status, "tables": len(self.tables),
                              "files written": len(self.written),
                              "seconds": round(self.seconds, 3)})
                .add_table(self.to_frame(), "Tables")
                .add_text("\n".join(self.log)))


def run_batch(job: str | Path | BatchPlan, *, time_limit: float | None = None,
              progress: Progress | None = None, n_jobs: int | None = 1) -> BatchResult:
    """Run a tau-ARGUS batch file.

    Parameters
    ----------
    job : path of the ``.arb`` file, or its :class:`~tabsdc.io.argus._plan.BatchPlan`
        The file is checked whole before any work (:func:`~tabsdc.io.argus._plan.plan_batch`).
    time_limit : float, optional
        Total seconds for the whole job: each protection gets at most what is left (and at
        most the batch file's own limit for it).
    progress : callable taking one str line, optional
        Receives every log line as it is written.
    n_jobs : int, optional
        Processes for a suppression's independent work (the modular method's sub-tables of
        a wave, the checks and the audit: ``suppress(n_jobs=)``; ``-1``: one per core). A
        sub-table stopped by its time limit keeps the pattern found by then, so patterns
        under such limits depend on the machine's speed, in one process or several.

    Output files (WRITETABLE, VERSIONINFO, the LOGBOOK) are written beside their targets
    and put in place together only when every command has run, so a failing job writes
    nothing and leaves every previous file as it was (:mod:`tabsdc.io.argus._staging`).

    Raises
    ------
    TabSDCError
        Naming file, line, command and reason.
    sdcreport.OutputPathError
        An output that could not be written (a full disk), naming the file.
    """
    start = perf_counter()
    deadline = Deadline(time_limit)
    plan = job if isinstance(job, BatchPlan) else plan_batch(job)
    staging = Staging()
    try:
        runner = _Runner(plan, staging, deadline, progress, n_jobs)
        runner.say(f"Start of batch procedure; file: {plan.path}")
        for step in plan.steps:
            command = step.command
            runner.say(f"<{command.keyword}> {command.argument}".rstrip())
            try:
                runner.run(step)
            except (ArgusFormatError, OutputPathError):
                raise
            except TabSDCError as error:
                raise command.error(str(error)) from None
            except FileNotFoundError as error:
                raise command.error(f"file not found: {error.filename}") from None
        not_protected = [str(n) for n, t in enumerate(runner.tables, 1) if t.outcome is None]
        if not_protected:
            runner.say(f"table(s) {', '.join(not_protected)} were not protected (no SUPPRESS)")
        runner.audit_together()
        written = runner.finish()
    except BaseException:
        staging.discard()
        raise
    passed = all(t.outcome.passed for t in runner.tables if t.outcome is not None) and all(
        runner.together)
    return BatchResult(tuple(runner.tables), written, tuple(runner.lines), passed,
                       perf_counter() - start, tuple(runner.together))


class _Runner:
    """The state of a running batch file and one method per command (each given the
    command's parsed arguments, :class:`~tabsdc.io.argus._plan.Step`)."""

    def __init__(self, plan: BatchPlan, staging: Staging, deadline: Deadline,
                 progress: Progress | None, n_jobs: int | None = 1) -> None:
        self.staging = staging
        self.deadline = deadline
        self.progress = progress
        self.n_jobs = n_jobs
        self.lines: list[str] = []
        #: the logbooks the job names, each given the whole log
        self.logbooks: dict[Path, Output] = {}
        #: verdicts of tables protected one by one, audited together
        self.together: list[bool] = []
        self.tables: list[JobTable] = []
        self._clear()

    def audit_together(self) -> None:
        """Tables of one response variable protected one by one (not all by one SUPPRESS
        with table number 0): audit what they publish together
        (:func:`~tabsdc.io.argus._protect.audit_together`) and log the verdict."""
        groups: dict[str, list[int]] = {}
        for number, job in enumerate(self.tables, start=1):
            if job.outcome is not None and job.outcome.original is None:
                groups.setdefault(job.spec.response, []).append(number)
        for numbers in groups.values():
            if len(numbers) < 2 or set(numbers) <= self.linked:
                continue
            jobs = [self.tables[n - 1] for n in numbers]
            try:
                passed, sentence = audit_together([job.protected for job in jobs],
                                                  [job.spec.label for job in jobs])
            except TabSDCError as error:
                self.say(f"tables {', '.join(map(str, numbers))} cannot be audited together: "
                         f"{error}")
                continue
            self.together.append(passed)
            self.say(sentence)

    def finish(self) -> tuple[Path, ...]:
        """Write the logbooks and put every output in place; returns the files written."""
        files = (*self.staging.staged(), *self.logbooks)
        self.say(f"End of batch procedure; {len(files)} output file(s) put in place: "
                 + (", ".join(map(str, files)) or "none"))
        log = ("\n".join(self.lines) + "\n").encode("utf-8")
        for path, output in self.logbooks.items():  # appended to, as tau-ARGUS does
            previous = path.read_bytes() if path.exists() else b""
            self._write(output, lambda staged, previous=previous: staged.write_bytes(
                previous + log))
        return self.staging.publish()

    # -- plumbing ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        stamp = datetime.now().strftime("%d-%b-%Y %H:%M:%S")
        self.lines.append(f"{stamp} : {text}")
        if self.progress:
            self.progress(text)

    def run(self, step: Step) -> None:
        keyword = "APRIORI" if step.command.keyword == "APRIORY" else step.command.keyword
        if keyword in LOGGED_ONLY:
            self.say(f"{keyword} has nothing to do here: {LOGGED_ONLY[keyword]}")
            return
        getattr(self, f"_{keyword.lower()}")(step.action)

    def _write(self, output: Output, write: Callable[[Path], object]) -> None:
        """Run ``write(staged path)`` for ``output``; a failure (a full disk) names the file
        and leaves every previous file of the job's outputs as it was."""
        try:
            write(self.staging.path_for(output.path))
        except (OSError, OutputPathError) as failure:
            # a writer of sdcreport._files names its staged file; name the job's file instead
            error = failure if isinstance(failure, OSError) else failure.__cause__
            if not isinstance(error, OSError):
                raise
            raise OutputPathError(
                f"{output.line.path}, line {output.line.number}: cannot write {output.path}: "
                f"{error.strerror or error}{_free_space(output.path.parent)}; nothing of the "
                "job was written, previous files are unchanged") from None

    # -- input ------------------------------------------------------------------------------
    def _openmicrodata(self, path: Path) -> None:
        self._clear()
        self.data_file, self.tabular = path, False

    def _opentabledata(self, path: Path) -> None:
        self._clear()
        self.data_file, self.tabular = path, True

    def _openmetadata(self, metadata: Metadata) -> None:
        self.metadata = metadata
        for variable in metadata.variables:
            if variable.codelist:
                path = resolve_path(variable.codelist, metadata.folder)
                if path.exists():
                    self.say(f"codelist {path.name} of {variable.name}: "
                             f"{len(read_cdl(path))} labels (used for labels only)")
                else:
                    self.say(f"codelist {variable.codelist} of {variable.name} not found; "
                             "codes go without labels, as in tau-ARGUS")

    def _specifytable(self, spec: TableSpec) -> None:
        self.tables.append(JobTable(spec))

    def _safetyrule(self, safety: SafetySpec) -> None:
        self.tables[-1].safety = safety

    def _readmicrodata(self, _: None) -> None:
        self.data = read_data(self.data_file, self.metadata)
        self.say(f"Micro data file read: {len(self.data)} records from {self.data_file.name}")
        for number in range(1, len(self.tables) + 1):
            self._build(number)

    def _readtable(self, option: str) -> None:
        self.compute_totals, self.keep_status = option.startswith("1"), option == "1T"
        self.data = read_data(self.data_file, self.metadata)
        self.say(f"Table file read: {len(self.data)} lines from {self.data_file.name}")
        for number in range(1, len(self.tables) + 1):
            self._build(number)

    def _build(self, number: int) -> None:
        job = self.tables[number - 1]
        hierarchies = {}
        data = self.data
        for dim in job.spec.dims:
            variable = self.metadata.variable(dim)
            if dim in self.recodes:
                hierarchy, moved = self.recodes[dim]
                if moved:
                    data = data.assign(**{dim: data[dim].replace(moved)})
            else:
                codes = data[dim].unique().tolist()
                hierarchy = variable_hierarchy(variable, codes, self.metadata.folder)
            hierarchies[dim] = hierarchy
        if self.tabular:
            table = tabular_table(data, self.metadata, job.spec, job.safety, hierarchies,
                                  compute_totals=self.compute_totals,
                                  keep_status=self.keep_status, progress=self.say)
        else:
            table = microdata_table(data, self.metadata, job.spec, job.safety, hierarchies)
        job.table, job.outcome = table, None
        self.linked.discard(number)
        status = table.cells["status"].value_counts().to_dict()
        self.say(f"Table {number}: {job.spec.label} has been computed: {table.n_cells} cells, "
                 f"{status.get('u', 0)} primary unsafe")

    def _apriori(self, request: Apriori) -> None:
        job = self.tables[request.table - 1]
        margin = job.safety.manual_margin if job.safety else 20.0
        totals = tuple(self.metadata.variable(d).total_code for d in job.spec.dims)
        outcome = apply_apriori(job.table, list(request.lines), totals, manual_margin=margin,
                                ignore_errors=request.ignore_errors)
        job.table, job.outcome = outcome.table, None
        self.say(f"A-priori file {request.path.name}: {outcome.applied} line(s) applied, "
                 f"{len(outcome.unknown)} naming no cell of the table")
        for entry in outcome.unknown[:5]:
            self.say(f"  line {entry.line.number}: cell {entry.codes} not in the table")

    def _recode(self, request: RecodeRequest) -> None:
        dim = request.variable
        variable = self.metadata.variable(dim)
        current = variable_hierarchy(variable, self.data[dim].unique().tolist(),
                                     self.metadata.folder)
        if request.level is not None:
            hierarchy, moved = close_below_depth(current, request.level)
            what = f"cut below level {request.level}"
        elif request.recode.is_tree:
            hierarchy, moved = close_subtrees(current, request.recode.tree_codes)
            absent = [c for c in request.recode.tree_codes if c not in current]
            if absent:
                self.say(f"  {len(absent)} code(s) of {request.path.name} are not in {dim}'s "
                         f"hierarchy and were not closed: {', '.join(absent[:5])}")
            what = f"recoded with {request.path.name}"
        else:
            moved = request.recode.mapping(current.codes[1:])
            hierarchy = variable_hierarchy(replace(variable, hierarchical=False),
                                           list(moved.values()), self.metadata.folder)
            what = f"recoded with {request.path.name}"
        self.recodes[dim] = (hierarchy, moved)
        self.say(f"Variable {dim} {what}: {len(hierarchy)} codes; as in tau-ARGUS the recode "
                 "holds for every table with this variable")
        for number, other in enumerate(self.tables, start=1):
            if dim in other.spec.dims:
                self._build(number)

    # -- protection -------------------------------------------------------------------------
    def _suppress(self, request: Suppress) -> None:
        if request.method == "CKM":  # the cell key method (tabsdc.io.argus._ckm)
            job = self.tables[request.table - 1]
            job.outcome = run_ckm(job.table, job.spec.response, self.data, self.metadata,
                                  request.argument, self.data_file.parent,
                                  weighted=bool(job.safety and job.safety.weighted),
                                  recodes=self.recodes, progress=self.say)
            return
        if request.table == 0:
            outcomes = protect_linked([job.table for job in self.tables],
                                      [job.spec.label for job in self.tables], request.method,
                                      request.numbers, time_limit=self.deadline.solver_limit(),
                                      progress=self.say, n_jobs=self.n_jobs)
            for job, outcome in zip(self.tables, outcomes, strict=True):
                job.outcome = outcome
            self.linked = set(range(1, len(self.tables) + 1))
            return
        self.linked.discard(request.table)
        job = self.tables[request.table - 1]
        job.outcome = protect(job.table, request.method, request.numbers,
                              time_limit=self.deadline.solver_limit(), progress=self.say,
                              label=job.spec.label, n_jobs=self.n_jobs)

    def _writetable(self, request: WriteTable) -> None:
        job = self.tables[request.table - 1]
        response = self.metadata.variable(job.spec.response) \
            if job.spec.response != "<freq>" else None
        table = job.protected if job.protected is not None else job.table
        original = job.outcome.original if job.outcome else None
        notes: list[str] = []
        self._write(request.output, lambda staged: notes.extend(write_output(
            table, staged, request.output_type, request.options, original=original,
            response=job.spec.response.strip("<>"),
            decimals=response.decimals if response else 0,
            protected=job.outcome is not None and job.outcome.passed)))
        for note in [*notes, request.output.note]:
            if note:
                self.say(f"  {note}")
        self.say(f"Table {request.table}: {job.spec.label} has been written as "
                 f"{OUTPUT_TYPES[request.output_type]}; output file name: "
                 f"{request.output.path} (put in place when the job has run)")

    # -- housekeeping -----------------------------------------------------------------------
    def _logbook(self, output: Output) -> None:
        self.logbooks.setdefault(output.path, output)
        if output.note:
            self.say(f"  {output.note}")
        self.say(f"logbook: {output.path} (written when the job has run)")

    def _clear(self, _: None = None) -> None:
        """``<CLEAR>`` (and the start of every job): audit together what tables were
        protected one by one, then forget data, metadata and tables."""
        if self.tables:
            self.audit_together()
        self.linked: set[int] = set()
        self.data_file: Path | None = None
        self.tabular = False
        self.metadata: Metadata | None = None
        self.data: pd.DataFrame | None = None
        self.tables = []
        self.recodes: dict[str, tuple[Hierarchy, dict[str, str]]] = {}
        self.compute_totals = self.keep_status = False

    def _solver(self, _: None) -> None:
        self.say("solver requested: every method here solves with HiGHS")

    def _versioninfo(self, output: Output) -> None:
        try:
            number = version("sdctoolkit")
        except PackageNotFoundError:
            number = "development"
        self._write(output, lambda staged: staged.write_text(
            f"sdctoolkit (tabsdc) version: {number}\n"))


def _free_space(folder: Path) -> str:
    """``" (12 bytes free on its disk)"``, or nothing when that cannot be told."""
    while not folder.exists():
        folder = folder.parent
    try:
        return f" ({shutil.disk_usage(folder).free:,} bytes free on its disk)"
    except OSError:
        return ""


def format_arb(data_file: str, metadata_file: str, jobs: list[JobTable], *,
               tabular: bool, suppress: str = "", outputs: tuple[tuple[int, str], ...] = (),
               read_option: str = "") -> str:
    """A batch file for these tables, to run the same job in tau-ARGUS or here.

    ``suppress`` is a SUPPRESS argument without the table number (``"OPT"``, ``"MOD"``),
    applied to every table; ``outputs`` pairs ``(type, file name)`` written per table
    (``{n}`` in the name is the table number).

    Examples
    --------
    >>> from tabsdc.io.argus._safety import parse_safety_rule
    >>> spec = TableSpec(("Size", "Region"), "Var2")
    >>> print(format_arb("x.asc", "x.rda", [JobTable(spec, parse_safety_rule("NK(3,75)"))],
    ...                  tabular=False, suppress="MOD", outputs=((3, "t{n}.csv"),)), end="")
    <OPENMICRODATA> "x.asc"
    <OPENMETADATA> "x.rda"
    <SPECIFYTABLE> "Size""Region"|"Var2"|"Var2"|"Var2"
    <SAFETYRULE> NK(3,75)|MAN(20)
    <READMICRODATA>
    <SUPPRESS> MOD(1)
    <WRITETABLE> (1,3,AS+,"t1.csv")
    """
    lines = [f"<{'OPENTABLEDATA' if tabular else 'OPENMICRODATA'}> {quote(data_file)}",
             f"<OPENMETADATA> {quote(metadata_file)}"]
    for job in jobs:
        spec = job.spec
        lines.append("<SPECIFYTABLE> " + "".join(quote(d) for d in spec.dims) + "|"
                     + "|".join(quote(v) for v in (spec.response, spec.shadow_variable,
                                                   spec.cost_variable))
                     + (f"|{spec.cost_lambda:g}" if spec.cost_lambda != 1 else ""))
        if job.safety is not None:
            lines.append(f"<SAFETYRULE> {format_safety_rule(job.safety)}")
    lines.append(f"<READTABLE> {read_option}".rstrip() if tabular else "<READMICRODATA>")
    for number in range(1, len(jobs) + 1):
        if suppress:
            lines.append(f"<SUPPRESS> {suppress}({number})")
        for output_type, name in outputs:
            lines.append(f"<WRITETABLE> ({number},{output_type},AS+,"
                         f"{quote(name.format(n=number))})")
    return "\n".join(lines) + "\n"
