"""Running tau-ARGUS batch files (``.arb``) with the toolkit's methods.

A batch file (manual 5.7) is a list of ``<COMMAND> arguments`` lines; ``//`` starts a
comment line. :func:`run_batch` executes them in order; file names resolve against the
batch file's folder (Windows paths and letter case as :func:`~tabsdc.io.argus.syntax.resolve_path`
says). Commands and what they run here:

===================  ====================================================================
OPENMICRODATA        the microdata file (fixed-width ``.asc`` or separated, per the .rda)
OPENTABLEDATA        the tabular input file (``.tab``)
OPENMETADATA         the ``.rda`` file
SPECIFYTABLE         a table: spanning variables, response, shadow, cost, lambda
SAFETYRULE           its sensitivity rules (:mod:`tabsdc.io.argus.safety`)
READMICRODATA        aggregate the tables, apply the rules
READTABLE            read the tables of a ``.tab`` (``1``: compute totals, ``1T``: and keep
                     the file's statuses)
APRIORI              an a-priori file (:mod:`tabsdc.io.argus.apriori`)
RECODE               a global (``.grc``) or tree recode, or a hierarchy cut at a level;
                     like tau-ARGUS, it recodes the variable in every table that has it
SUPPRESS             OPT -> optimal, MOD -> modular, NET -> network, GH -> hypercube (see
                     below), RND -> controlled rounding, CTA -> controlled adjustment,
                     CKM -> the cell key method (:mod:`tabsdc.io.argus.ckm`)
WRITETABLE           the output files of :mod:`tabsdc.io.argus.output`
LOGBOOK              the log file
CLEAR                start afresh
SOLVER               logged (HiGHS solves everything here)
VERSIONINFO          a file with the toolkit's version
GOINTERACTIVE,       logged, nothing to do (no GUI); commands after them are still run
GOBATCH, SILENT
===================  ====================================================================

``GH`` (tau-ARGUS's hypercube method) runs :func:`tabsdc.suppression.suppress` with the
toolkit's own ``method="hypercube"``; the log says so.
Every protection is audited (:func:`tabsdc.audit.audit`) and the verdict logged. A command
that is not supported (linked tables with table number 0,
``<READTABLE> 2`` for non-additive tables, ``APRIORI`` with trivial-level expansion, the
distance cost ``-3``) stops the run with the file, the line, the command and the reason;
nothing is skipped silently.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any

import pandas as pd

from tabsdc.errors import TabSDCError
from tabsdc.hierarchy import Hierarchy
from tabsdc.io.argus.apriori import apply_apriori, read_hst
from tabsdc.io.argus.cdl import read_cdl
from tabsdc.io.argus.ckm import run_ckm, split_ckm_argument
from tabsdc.io.argus.grc import close_below_depth, close_subtrees, read_grc
from tabsdc.io.argus.metadata import Metadata, read_rda
from tabsdc.io.argus.microdata import read_data
from tabsdc.io.argus.output import OUTPUT_TYPES, parse_write_options, write_output
from tabsdc.io.argus.protect import ProtectionOutcome, protect
from tabsdc.io.argus.safety import SafetySpec, format_safety_rule, parse_safety_rule
from tabsdc.io.argus.syntax import (
    ArgusFormatError,
    SourceLine,
    content_lines,
    quote,
    resolve_path,
    split_tokens,
)
from tabsdc.io.argus.tables import (
    TableSpec,
    microdata_table,
    parse_table_spec,
    tabular_table,
    variable_hierarchy,
)
from tabsdc.progress import Deadline, Progress
from tabsdc.table import HIDDEN_STATUSES, Table

if TYPE_CHECKING:
    from sdcreport import Section

__all__ = ["BatchCommand", "BatchResult", "parse_arb", "run_batch", "format_arb",
           "JobTable", "SUPPORTED_COMMANDS", "METHOD_OF"]

#: tau-ARGUS's SUPPRESS methods and the toolkit method each runs.
METHOD_OF = {"OPT": "optimal", "MOD": "modular", "NET": "network", "GH": "heuristic",
             "RND": "controlled rounding", "CTA": "controlled tabular adjustment"}
_LOGGED_ONLY = {"GOINTERACTIVE": "no interactive session here; nothing to hand over",
                "GOBATCH": "already running as a batch",
                "SILENT": "no progress window here; progress goes to the log"}
_COMMAND = re.compile(r"<\s*([A-Za-z]+)\s*>\s*(.*)")


@dataclass(frozen=True)
class BatchCommand:
    """One command of a batch file: its keyword (upper case), argument text and line."""

    keyword: str
    argument: str
    line: SourceLine

    def error(self, reason: str) -> ArgusFormatError:
        """An error naming file, line and command."""
        return self.line.error(f"<{self.keyword}>: {reason}")


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
class BatchResult:
    """Outcome of :func:`run_batch`: the tables, the files written, the log lines, and
    whether every protection run passed its check (audit, additivity, verification).

    Keeps the result contract of :mod:`sdcreport.contract` (a check: ``passed``; ``status``
    says it in words).
    """

    tables: tuple[JobTable, ...]
    written: tuple[Path, ...]
    log: tuple[str, ...]
    passed: bool
    seconds: float = 0.0

    @property
    def status(self) -> str:
        """``"passed"`` (every protection passed its check), ``"failed"``, or ``"nothing
        protected"`` (no ``<SUPPRESS>`` ran)."""
        if not any(job.outcome is not None for job in self.tables):
            return "nothing protected"
        return "passed" if self.passed else "failed"

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

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: ``status``, ``passed``, ``seconds``, the files written and per
        table its label, method, verdict and the protection result's ``to_dict()``."""
        from sdcreport.report import jsonable

        return jsonable({
            "status": self.status, "passed": self.passed, "seconds": self.seconds,
            "written": [str(p) for p in self.written],
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


def parse_arb(text: str, path: str = "<text>") -> list[BatchCommand]:
    """The commands of a batch file, comments left out.

    Raises
    ------
    ArgusFormatError
        For a line that does not start with ``<COMMAND>``, naming file and line.

    Examples
    --------
    >>> [(c.keyword, c.argument) for c in parse_arb('//job\\n<SUPPRESS> OPT(1,5)\\n')]
    [('SUPPRESS', 'OPT(1,5)')]
    """
    commands = []
    for line in content_lines(text, path):
        match = _COMMAND.match(line.text)
        if match is None:
            raise line.error(f"field 1: expected a <COMMAND>, found {line.text[:40]!r}")
        commands.append(BatchCommand(match.group(1).upper(), match.group(2).strip(), line))
    return commands


SUPPORTED_COMMANDS = ("OPENMICRODATA", "OPENTABLEDATA", "OPENMETADATA", "SPECIFYTABLE",
                      "SAFETYRULE", "READMICRODATA", "READTABLE", "APRIORI", "APRIORY",
                      "RECODE", "SUPPRESS", "WRITETABLE", "LOGBOOK", "CLEAR", "SOLVER",
                      "VERSIONINFO", *_LOGGED_ONLY)


def run_batch(path: str | Path, *, time_limit: float | None = None,
              progress: Progress | None = None) -> BatchResult:
    """Run a tau-ARGUS batch file.

    Parameters
    ----------
    path : path of the ``.arb`` file
    time_limit : float, optional
        Total seconds for the whole job: each protection gets at most what is left (and at
        most the batch file's own limit for it).
    progress : callable taking one str line, optional
        Receives every log line as it is written.

    Output files (WRITETABLE, VERSIONINFO, the LOGBOOK) are prepared in a staging folder and
    put in place only when every command has run, so a failing job writes nothing.

    Raises
    ------
    TabSDCError
        Naming file, line, command and reason.
    """
    start = perf_counter()
    deadline = Deadline(time_limit)
    path = Path(path)
    commands = parse_arb(path.read_text(encoding="latin-1"), str(path))
    with tempfile.TemporaryDirectory(prefix="tabsdc-argus-") as staging:
        runner = _Runner(path.parent, Path(staging), deadline, progress)
        runner.say(f"Start of batch procedure; file: {path}")
        for command in commands:
            runner.say(f"<{command.keyword}> {command.argument}".rstrip())
            try:
                runner.run(command)
            except ArgusFormatError:
                raise
            except TabSDCError as error:
                raise command.error(str(error)) from None
            except FileNotFoundError as error:
                raise command.error(f"file not found: {error.filename}") from None
        not_protected = [str(n) for n, t in enumerate(runner.tables, 1) if t.outcome is None]
        if not_protected:
            runner.say(f"table(s) {', '.join(not_protected)} were not protected (no SUPPRESS)")
        runner.say("End of batch procedure")
        written = runner.publish()
    passed = all(t.outcome.passed for t in runner.tables if t.outcome is not None)
    return BatchResult(tuple(runner.tables), written, tuple(runner.lines), passed,
                       perf_counter() - start)


class _Runner:
    """The state of a running batch file and one method per command."""

    def __init__(self, folder: Path, staging: Path, deadline: Deadline,
                 progress: Progress | None) -> None:
        self.folder = folder
        self.staging = staging
        self.deadline = deadline
        self.progress = progress
        self.lines: list[str] = []
        self.logbook: Path | None = None
        self.staged: list[tuple[Path, Path]] = []
        self._clear()

    def stage(self, final: Path) -> Path:
        """Where to write ``final`` until the job has run (a folder of its own, so that
        companion files such as an intermediate file's .rda go with it)."""
        folder = Path(tempfile.mkdtemp(dir=self.staging))
        self.staged.append((folder, final.parent))
        return folder / final.name

    def publish(self) -> tuple[Path, ...]:
        """Move the staged files to their folders and write the logbook."""
        written = []
        for folder, target in self.staged:
            target.mkdir(parents=True, exist_ok=True)
            for item in sorted(folder.iterdir()):
                destination = target / item.name
                shutil.move(item, destination)
                written.append(destination)
        if self.logbook is not None:
            with self.logbook.open("a", encoding="utf-8") as log:
                log.write("\n".join(self.lines) + "\n")
            written.append(self.logbook)
        return tuple(written)

    # -- plumbing ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        stamp = datetime.now().strftime("%d-%b-%Y %H:%M:%S")
        self.lines.append(f"{stamp} : {text}")
        if self.progress:
            self.progress(text)

    def run(self, command: BatchCommand) -> None:
        keyword = "APRIORI" if command.keyword == "APRIORY" else command.keyword
        if keyword in _LOGGED_ONLY:
            self.say(f"{keyword} has nothing to do here: {_LOGGED_ONLY[keyword]}")
            return
        if keyword not in SUPPORTED_COMMANDS:
            raise command.error(self._unsupported(keyword))
        getattr(self, f"_{keyword.lower()}")(command)

    @staticmethod
    def _unsupported(keyword: str) -> str:
        reasons = {"COVER": "linked-table cover tables are built internally by tau-ARGUS "
                            "only; linked tables are not supported here",
                   "JJ": "tau-ARGUS does not implement it either; protect a JJ file "
                         "with 'tabsdc protect FILE.jj'"}
        return reasons.get(keyword, "unknown command; supported: "
                           + ", ".join(SUPPORTED_COMMANDS))

    def _file(self, command: BatchCommand) -> Path:
        tokens = split_tokens(command.argument)
        if not tokens:
            raise command.error("a file name is expected")
        found = resolve_path(tokens[0], self.folder)
        if not found.exists():
            raise command.error(f"file {tokens[0]} not found (looked in {self.folder})")
        return found

    def _job(self, command: BatchCommand, number: str) -> JobTable:
        try:
            position = int(number)
        except ValueError:
            raise command.error(f"table number {number!r} is not a whole number") from None
        if position == 0:
            raise command.error("table number 0 (linked tables) is not supported: linked "
                                "tables are protected one by one here")
        if not 1 <= position <= len(self.tables):
            raise command.error(f"table {position} does not exist ({len(self.tables)} "
                                "specified)")
        job = self.tables[position - 1]
        if job.table is None:
            raise command.error(f"table {position} has not been read yet (READMICRODATA / "
                                "READTABLE)")
        return job

    @staticmethod
    def _needs(command: BatchCommand, what: object, message: str) -> None:
        """Stop with ``message`` unless ``what`` is there (a file, metadata, tables)."""
        if not what:
            raise command.error(message)

    # -- input --------------------------------------------------------------------------
    def _openmicrodata(self, command: BatchCommand) -> None:
        self._clear_data(command, tabular=False)

    def _opentabledata(self, command: BatchCommand) -> None:
        self._clear_data(command, tabular=True)

    def _clear_data(self, command: BatchCommand, tabular: bool) -> None:
        self._clear()
        self.data_file = self._file(command)
        self.tabular = tabular

    def _openmetadata(self, command: BatchCommand) -> None:
        self._needs(command, self.data_file, "a data file must be opened first "
                    "(OPENMICRODATA or OPENTABLEDATA)")
        metadata = read_rda(self._file(command), kind="table" if self.tabular else None)
        if not self.tabular and metadata.kind == "table":
            raise command.error(f"{metadata.path} describes tabular input, but the data were "
                                "opened with OPENMICRODATA")
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

    def _specifytable(self, command: BatchCommand) -> None:
        self._needs(command, self.metadata, "metadata must be opened first (OPENMETADATA)")
        spec = parse_table_spec(command.argument)
        for name in (*spec.dims, spec.response, spec.shadow, spec.cost):
            if name and name != "<freq>" and not name.startswith("-"):
                self.metadata.variable(name)
        self.tables.append(JobTable(spec))

    def _safetyrule(self, command: BatchCommand) -> None:
        self._needs(command, self.tables, "SAFETYRULE must follow a SPECIFYTABLE")
        self.tables[-1].safety = parse_safety_rule(command.argument)

    def _readmicrodata(self, command: BatchCommand) -> None:
        self._needs(command, not self.tabular and self.tables and self.metadata,
                    "needs OPENMICRODATA, OPENMETADATA and at least one SPECIFYTABLE")
        self.data = read_data(self.data_file, self.metadata)
        self.say(f"Micro data file read: {len(self.data)} records from {self.data_file.name}")
        for number in range(1, len(self.tables) + 1):
            self._build(number)

    def _readtable(self, command: BatchCommand) -> None:
        self._needs(command, self.tabular and self.tables and self.metadata,
                    "needs OPENTABLEDATA, OPENMETADATA and at least one SPECIFYTABLE")
        option = command.argument.strip().upper() or "0"
        if option not in ("0", "1", "1T", "1F"):
            raise command.error(f"parameter {option!r}: 0 (check additivity) or 1 (compute "
                                "totals, 1T keeping the file's statuses) are supported; 2 "
                                "(additivity not required) is not: every method here needs "
                                "an additive table")
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
        status = table.cells["status"].value_counts().to_dict()
        self.say(f"Table {number}: {job.spec.label} has been computed: {table.n_cells} cells, "
                 f"{status.get('u', 0)} primary unsafe")

    def _apriori(self, command: BatchCommand) -> None:
        parts = [p.strip() for p in _split_arguments(command.argument)]
        if len(parts) < 3:
            raise command.error('expected "file", table number, "separator"[, ignore '
                                "errors, expand trivial levels]")
        job = self._job(command, parts[1])
        path = resolve_path(parts[0].strip('"'), self.folder)
        if not path.exists():
            raise command.error(f"a-priori file {parts[0]} not found")
        separator = parts[2].strip('"')
        ignore = len(parts) < 4 or parts[3] in ("", "1")
        if len(parts) > 4 and parts[4] == "1":
            raise command.error("expanding a-priori lines to trivial levels (last parameter "
                                "1) is not supported; give every cell its own line")
        margin = job.safety.manual_margin if job.safety else 20.0
        totals = tuple(self.metadata.variable(d).total_code for d in job.spec.dims)
        outcome = apply_apriori(job.table, read_hst(path, len(job.spec.dims), separator),
                                totals, manual_margin=margin, ignore_errors=ignore)
        job.table, job.outcome = outcome.table, None
        self.say(f"A-priori file {path.name}: {outcome.applied} line(s) applied, "
                 f"{len(outcome.unknown)} naming no cell of the table")
        for entry in outcome.unknown[:5]:
            self.say(f"  line {entry.line.number}: cell {entry.codes} not in the table")

    def _recode(self, command: BatchCommand) -> None:
        parts = [p.strip() for p in _split_arguments(command.argument)]
        if len(parts) != 3:
            raise command.error("expected table number, variable, recode file or level")
        if self.tabular:
            raise command.error("recoding is not possible for tabular input (as in tau-ARGUS)")
        job = self._job(command, parts[0])
        dim = next((d for d in job.spec.dims if d.lower() == parts[1].lower()), None)
        if dim is None:
            raise command.error(f"variable {parts[1]} is not a spanning variable of table "
                                f"{parts[0]} ({', '.join(job.spec.dims)})")
        variable = self.metadata.variable(dim)
        current = variable_hierarchy(variable, self.data[dim].unique().tolist(),
                                     self.metadata.folder)
        target = parts[2].strip('"')
        if target.isdigit() and len(target) == 1:
            if not (variable.hierarchical or variable.hier_levels):
                raise command.error(f"{dim} is not hierarchical; a level recode needs a "
                                    "hierarchy")
            hierarchy, moved = close_below_depth(current, int(target))
            what = f"cut below level {target}"
        else:
            path = resolve_path(target, self.folder)
            if not path.exists():
                raise command.error(f"recode file {target} not found")
            recode = read_grc(path)
            if recode.is_tree:
                hierarchy, moved = close_subtrees(current, recode.tree_codes)
                absent = [c for c in recode.tree_codes if c not in current]
                if absent:
                    self.say(f"  {len(absent)} code(s) of {path.name} are not in {dim}'s "
                             f"hierarchy and were not closed: {', '.join(absent[:5])}")
            else:
                if variable.hierarchical or variable.hier_levels:
                    raise command.error(f"{dim} is hierarchical: recode it with a tree "
                                        "recode (<TREERECODE>) or a level")
                moved = recode.mapping(current.codes[1:])
                hierarchy = variable_hierarchy(replace(variable, hierarchical=False),
                                               list(moved.values()), self.metadata.folder)
            what = f"recoded with {path.name}"
        self.recodes[dim] = (hierarchy, moved)
        self.say(f"Variable {dim} {what}: {len(hierarchy)} codes; as in tau-ARGUS the recode "
                 "holds for every table with this variable")
        for number, other in enumerate(self.tables, start=1):
            if dim in other.spec.dims:
                self._build(number)

    # -- protection -------------------------------------------------------------------------
    def _suppress(self, command: BatchCommand) -> None:
        if re.match(r"\s*CKM\s*\(", command.argument, flags=re.I):  # tabsdc.io.argus.ckm
            job = self._job(command, split_ckm_argument(command.argument)[0])
            job.outcome = run_ckm(job.table, job.spec.response, self.data, self.metadata,
                                  command.argument, self.folder, recodes=self.recodes,
                                  weighted=bool(job.safety and job.safety.weighted),
                                  progress=self.say)
            return
        match = re.fullmatch(r"\s*([A-Za-z]+)\s*\(([^)]*)\)\s*", command.argument)
        if match is None:
            raise command.error("expected METHOD(table number, parameters), e.g. OPT(1,5)")
        name, arguments = match.group(1).upper(), [a.strip() for a in match.group(2).split(",")]
        if name not in METHOD_OF:
            raise command.error(f"unknown method {name}; known: {', '.join(METHOD_OF)}, CKM")
        job = self._job(command, arguments[0])
        job.outcome = protect(job.table, name, arguments[1:],
                              time_limit=self.deadline.solver_limit(),
                              progress=self.say, label=job.spec.label)

    def _writetable(self, command: BatchCommand) -> None:
        match = re.fullmatch(r"\s*\((.*)\)\s*", command.argument)
        if match is None:
            raise command.error('expected (table number, type, options, "file")')
        parts = [p.strip() for p in _split_arguments(match.group(1))]
        if len(parts) != 4:
            raise command.error('expected (table number, type, options, "file")')
        job = self._job(command, parts[0])
        try:
            output_type = int(parts[1])
        except ValueError:
            raise command.error(f"output type {parts[1]!r}: one of {OUTPUT_TYPES}") from None
        options = parse_write_options(parts[2])
        target = parts[3].strip('"')
        path = resolve_path(target, self.folder)
        if not path.parent.exists():
            path = self.folder / Path(target.replace("\\", "/")).name
        response = self.metadata.variable(job.spec.response) \
            if job.spec.response != "<freq>" else None
        table = job.protected if job.protected is not None else job.table
        original = job.outcome.original if job.outcome else None
        notes = write_output(table, self.stage(path), output_type, options, original=original,
                             response=job.spec.response.strip("<>"),
                             decimals=response.decimals if response else 0)
        for note in notes:
            self.say(f"  {note}")
        self.say(f"Table {parts[0]}: {job.spec.label} has been written as "
                 f"{OUTPUT_TYPES[output_type]}; output file name: {path}")

    # -- housekeeping -----------------------------------------------------------------------
    def _logbook(self, command: BatchCommand) -> None:
        target = command.argument.strip().strip('"')
        path = resolve_path(target, self.folder)
        if not path.parent.exists():
            path = self.folder / Path(target.replace("\\", "/")).name
        self.logbook = path
        self.say(f"logbook: {path} (written when the job has run)")

    def _clear(self, command: BatchCommand | None = None) -> None:
        """``<CLEAR>`` (and the start of every job): forget data, metadata and tables."""
        self.data_file: Path | None = None
        self.tabular = False
        self.metadata: Metadata | None = None
        self.data: pd.DataFrame | None = None
        self.tables: list[JobTable] = []
        self.recodes: dict[str, tuple[Hierarchy, dict[str, str]]] = {}
        self.compute_totals = self.keep_status = False

    def _solver(self, command: BatchCommand) -> None:
        self.say(f"solver {command.argument or '(none)'} requested: every method here "
                 "solves with HiGHS")

    def _versioninfo(self, command: BatchCommand) -> None:
        target = command.argument.strip().strip('"')
        path = self.folder / Path(target.replace("\\", "/")).name
        try:
            number = version("sdctoolkit")
        except PackageNotFoundError:
            number = "development"
        self.stage(path).write_text(f"sdctoolkit (tabsdc) version: {number}\n")


def _split_arguments(text: str) -> list[str]:
    """Split at commas outside double quotes."""
    parts, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def format_arb(data_file: str, metadata_file: str, jobs: list[JobTable], *,
               tabular: bool, suppress: str = "", outputs: tuple[tuple[int, str], ...] = (),
               read_option: str = "") -> str:
    """A batch file for these tables, to run the same job in tau-ARGUS or here.

    ``suppress`` is a SUPPRESS argument without the table number (``"OPT"``, ``"MOD"``),
    applied to every table; ``outputs`` pairs ``(type, file name)`` written per table
    (``{n}`` in the name is the table number).

    Examples
    --------
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
