"""A batch file checked whole before any work (:func:`plan_batch`).

Before a table is read or a protection runs, every line of the batch file is parsed and
checked, so that a typo on the last line does not cost the hour the lines before it take:

* every line is a known command whose arguments can run: table numbers of tables that are
  specified and read by then (0, the linked tables, for GH, MOD and OPT), methods and
  their numbers, output types and options, safety rules, table specifications against the
  metadata, commands in an order that works;
* every file the job reads exists and can be read: data, metadata, the hierarchy files of
  the spanning variables, a-priori and recode files. The small ones (metadata, hierarchies,
  a-priori and recode files) are parsed now, so that their errors too come first;
* every file the job writes (WRITETABLE, with the ``.rda`` and ``.hrc`` files of an
  intermediate file; LOGBOOK; VERSIONINFO) goes where the batch file says
  (:func:`~tabsdc.io.argus._syntax.output_path`: folders honoured with either separator,
  relative to the batch file's folder), into a folder that exists or can be made and
  written; no output is a file the job reads (the batch file included), and no two outputs
  are one file. Paths are compared without letter case (one file on Windows and macOS) and
  with symbolic links followed (an output that is a link is written through it).

The result, a :class:`BatchPlan`, holds each command with its parsed arguments; the runner
(:mod:`tabsdc.io.argus._batch`) executes it. What only the data can tell (a code missing from
a hierarchy, a total that is not the sum of its parts) is found while the job runs; then too
nothing is written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tabsdc._errors import InputError, TabSDCError
from tabsdc.io.argus._apriori import AprioriLine, read_hst
from tabsdc.io.argus._ckm import check_ckm, split_ckm_argument
from tabsdc.io.argus._grc import Recode, read_grc
from tabsdc.io.argus._hrc import read_hrc
from tabsdc.io.argus._metadata import Metadata, read_rda
from tabsdc.io.argus._output import (
    OUTPUT_TYPES,
    WriteOptions,
    check_write_request,
    parse_write_options,
)
from tabsdc.io.argus._protect import LINKED_METHODS, parse_parameters
from tabsdc.io.argus._safety import SafetySpec, parse_safety_rule
from tabsdc.io.argus._syntax import (
    ArgusFormatError,
    SourceLine,
    content_lines,
    output_path,
    resolve_path,
    split_tokens,
)
from tabsdc.io.argus._tab import tab_files
from tabsdc.io.argus._tables import TableSpec, parse_table_spec

#: tau-ARGUS's SUPPRESS methods and the toolkit method each runs.
METHOD_OF = {"OPT": "optimal", "MOD": "modular", "NET": "network", "GH": "hypercube",
             "RND": "controlled rounding", "CTA": "controlled tabular adjustment"}
#: Commands that are logged and do nothing here, with the reason the log gives.
LOGGED_ONLY = {"GOINTERACTIVE": "no interactive session here; nothing to hand over",
               "GOBATCH": "already running as a batch",
               "SILENT": "no progress window here; progress goes to the log"}
SUPPORTED_COMMANDS = ("OPENMICRODATA", "OPENTABLEDATA", "OPENMETADATA", "SPECIFYTABLE",
                      "SAFETYRULE", "READMICRODATA", "READTABLE", "APRIORI", "APRIORY",
                      "RECODE", "SUPPRESS", "WRITETABLE", "LOGBOOK", "CLEAR", "SOLVER",
                      "VERSIONINFO", *LOGGED_ONLY)
_COMMAND = re.compile(r"<\s*([A-Za-z]+)\s*>\s*(.*)")
_UNSUPPORTED = {"CKM": "the cell key method runs as <SUPPRESS> CKM(table number)",
                "COVER": "cover tables of linked tables are built internally by tau-ARGUS; "
                         "protect linked tables with table number 0 (e.g. GH(0,100))",
                "JJ": "tau-ARGUS does not implement it either; protect a JJ file with "
                      "'tabsdc protect FILE.jj'"}


@dataclass(frozen=True)
class BatchCommand:
    """One command of a batch file: its keyword (upper case), argument text and line."""

    keyword: str
    argument: str
    line: SourceLine

    def error(self, reason: str) -> ArgusFormatError:
        """An error naming file, line and command."""
        return self.line.error(f"<{self.keyword}>: {reason}")


@dataclass(frozen=True)
class Output:
    """A file the job writes: the path, every file written with it (an intermediate file's
    ``.rda`` and ``.hrc``), the line that asks for it and a note for the log (a Windows
    path written into the batch file's folder)."""

    path: Path
    files: tuple[Path, ...]
    line: SourceLine
    note: str = ""


@dataclass(frozen=True)
class Suppress:
    """``<SUPPRESS> method(table, numbers...)``; table 0: every table, linked. ``CKM`` keeps
    its argument text (its p-table files and ``mu_c``, :mod:`tabsdc.io.argus._ckm`)."""

    method: str
    table: int
    numbers: tuple[float, ...]
    argument: str = ""


@dataclass(frozen=True)
class WriteTable:
    """``<WRITETABLE> (table, type, options, "file")``."""

    table: int
    output_type: int
    options: WriteOptions
    output: Output


@dataclass(frozen=True)
class Apriori:
    """``<APRIORI> "file", table, "separator"[, ignore errors]`` with the file's lines."""

    path: Path
    table: int
    lines: tuple[AprioriLine, ...]
    ignore_errors: bool


@dataclass(frozen=True)
class RecodeRequest:
    """``<RECODE> table, variable, "file.grc"`` (``recode``) or ``, level`` (``level``)."""

    table: int
    variable: str
    level: int | None = None
    path: Path | None = None
    recode: Recode | None = None


@dataclass(frozen=True)
class Step:
    """A command and its parsed arguments: a path (OPEN...DATA), :class:`Metadata`,
    :class:`TableSpec`, :class:`SafetySpec`, the READTABLE option, :class:`Apriori`,
    :class:`RecodeRequest`, :class:`Suppress`, :class:`WriteTable`, an :class:`Output`
    (LOGBOOK, VERSIONINFO) or None."""

    command: BatchCommand
    action: object = None


@dataclass(frozen=True)
class BatchPlan:
    """A batch file checked whole: its steps, the files it reads and the files it writes."""

    path: Path
    steps: tuple[Step, ...]
    inputs: tuple[Path, ...]
    outputs: tuple[Output, ...]

    def use_of(self, path: str | Path) -> str | None:
        """How the job uses the file ``path`` (``"read by the job"``, ``"written by line
        9"``; compared as the check compares paths), or None.

        Examples
        --------
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "job.arb").write_text('<LOGBOOK> "log.txt"\\n')
        >>> plan = plan_batch(folder / "job.arb")
        >>> plan.use_of(folder / "LOG.TXT"), plan.use_of(folder / "job.arb")
        ('written by line 1', 'read by the job')
        """
        key = _key(Path(path))
        if any(_key(p) == key for p in self.inputs):
            return "read by the job"
        return next((f"written by line {o.line.number}" for o in self.outputs
                     for file in o.files if _key(file) == key), None)


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


def plan_batch(path: str | Path) -> BatchPlan:
    """Read and check the batch file ``path`` whole (see the module text).

    Raises
    ------
    ArgusFormatError
        The first problem found, naming the batch file, the line, the command and the
        reason (and the file or field at fault).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.tab").write_text("")
    >>> _ = (folder / "job.arb").write_text('<OPENTABLEDATA> "t.tab"\\n<LOGBOOK> "t.tab"\\n')
    >>> plan_batch(folder / "job.arb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tabsdc.io.argus._syntax.ArgusFormatError: ...job.arb, line 2: <LOGBOOK>: ...t.tab is read ...
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="latin-1")
    except FileNotFoundError:
        raise ArgusFormatError(f"{path}: no such batch file") from None
    checker = _Checker(path)
    steps = []
    for command in parse_arb(text, str(path)):
        try:
            steps.append(Step(command, checker.check(command)))
        except ArgusFormatError:
            raise
        except TabSDCError as error:
            raise command.error(str(error)) from None
    return BatchPlan(path, tuple(steps), tuple(p for p, _ in checker.inputs.values()),
                     tuple(dict.fromkeys(o for o, _ in checker.outputs.values())))


@dataclass
class _Table:
    """What the check knows of a specified table: its specification, whether it has been
    read, and whether its last protection rounded or adjusted it."""

    spec: TableSpec
    read: bool = False
    adjusted: bool = False
    perturbed: bool = False


@dataclass
class _Checker:
    """The state of the batch file as far as the check can follow it, one method per
    command (each returns the command's parsed arguments)."""

    arb: Path
    inputs: dict[str, tuple[Path, SourceLine | None]] = field(default_factory=dict)
    outputs: dict[str, tuple[Output, Path]] = field(default_factory=dict)
    logbooks: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.folder = self.arb.parent
        self._input(self.arb, None, "the batch file")
        self._clear()

    def check(self, command: BatchCommand) -> object:
        keyword = "APRIORI" if command.keyword == "APRIORY" else command.keyword
        if keyword in LOGGED_ONLY or keyword == "SOLVER":
            return None
        if keyword not in SUPPORTED_COMMANDS:
            raise command.error(_UNSUPPORTED.get(keyword, "unknown command; supported: "
                                                 + ", ".join(SUPPORTED_COMMANDS)))
        return getattr(self, f"_{keyword.lower()}")(command)

    # -- files --------------------------------------------------------------------------------
    def _input(self, path: Path, line: SourceLine | None, what: str) -> Path:
        """Record a file the job reads, checking that it can be read."""
        if not path.is_file():
            raise InputError(f"{what} {path} not found" if not path.exists() else
                             f"{what} {path} is not a file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{what} {path} cannot be read (no permission)")
        key = _key(path)
        if key in self.outputs:
            output = self.outputs[key][0]
            raise InputError(
                f"{path} is written by line {output.line.number} of this job; outputs are put "
                "in place when the whole job has run, so it cannot be read back in the job")
        self.inputs.setdefault(key, (path, line))
        return path

    def _file(self, command: BatchCommand, name: str, what: str, folder: Path | None = None
              ) -> Path:
        """The file a command names (found as :func:`resolve_path` finds it), checked."""
        found = resolve_path(name, folder or self.folder)
        if not found.exists():
            raise command.error(f"{what} {name} not found (looked in {folder or self.folder})")
        return self._input(found, command.line, what)

    def _output(self, command: BatchCommand, name: str, files: tuple[str, ...] = ()
                ) -> Output:
        """Record a file the job writes (with ``files`` written beside it), checked."""
        path, note = output_path(name, self.folder)
        written = tuple(_through_link(p) for p in (path, *(path.with_name(f) for f in files)))
        output = Output(written[0], written, command.line, note)
        for file in written:
            key = _key(file)
            if key in self.inputs:
                line = self.inputs[key][1]
                where = f"line {line.number}" if line else "the batch file itself"
                raise command.error(f"{file} is read by this job ({where}); writing it "
                                    "would replace it")
            logbook = command.keyword == "LOGBOOK"
            if key in self.outputs and not (logbook and key in self.logbooks):
                raise command.error(f"{file} is also written by line "
                                    f"{self.outputs[key][0].line.number}; give each output "
                                    "a file of its own")
            _check_writable(command, file)
            self.outputs.setdefault(key, (output, file))
            if logbook:
                self.logbooks.add(key)
        return output

    # -- input commands -----------------------------------------------------------------------
    def _clear(self, command: BatchCommand | None = None) -> None:
        self.data: Path | None = None
        self.tabular = False
        self.metadata: Metadata | None = None
        self.tables: list[_Table] = []
        self.data_read = False

    def _open(self, command: BatchCommand, tabular: bool) -> Path:
        tokens = split_tokens(command.argument)
        if not tokens:
            raise command.error("a file name is expected")
        path = self._file(command, tokens[0], "file")
        self._clear()
        self.data, self.tabular = path, tabular
        return path

    def _openmicrodata(self, command: BatchCommand) -> Path:
        return self._open(command, tabular=False)

    def _opentabledata(self, command: BatchCommand) -> Path:
        return self._open(command, tabular=True)

    def _openmetadata(self, command: BatchCommand) -> Metadata:
        _needs(command, self.data, "a data file must be opened first (OPENMICRODATA or "
                                   "OPENTABLEDATA)")
        tokens = split_tokens(command.argument)
        if not tokens:
            raise command.error("a file name is expected")
        metadata = read_rda(self._file(command, tokens[0], "file"),
                            kind="table" if self.tabular else None)
        if not self.tabular and metadata.kind == "table":
            raise command.error(f"{metadata.path} describes tabular input, but the data were "
                                "opened with OPENMICRODATA")
        for variable in metadata.variables:
            codelist = resolve_path(variable.codelist, metadata.folder) \
                if variable.codelist else None
            if codelist is not None and codelist.is_file():
                self._input(codelist, command.line, "codelist")
        self.metadata = metadata
        return metadata

    def _specifytable(self, command: BatchCommand) -> TableSpec:
        _needs(command, self.metadata, "metadata must be opened first (OPENMETADATA)")
        spec = parse_table_spec(command.argument)
        for name in (*spec.dims, spec.response, spec.shadow, spec.cost):
            if name and name != "<freq>" and not name.startswith("-"):
                self.metadata.variable(name)
        for dim in spec.dims:
            variable = self.metadata.variable(dim)
            if variable.hierarchical and not variable.hier_levels:
                path = self._file(command, variable.hierarchy_file,
                                  f"hierarchy file of {variable.name}", self.metadata.folder)
                read_hrc(path, variable.lead_string, variable.total_code)
        self.tables.append(_Table(spec))
        return spec

    def _safetyrule(self, command: BatchCommand) -> SafetySpec:
        _needs(command, self.tables, "SAFETYRULE must follow a SPECIFYTABLE")
        return parse_safety_rule(command.argument)

    def _readmicrodata(self, command: BatchCommand) -> None:
        _needs(command, not self.tabular and self.tables and self.metadata,
               "needs OPENMICRODATA, OPENMETADATA and at least one SPECIFYTABLE")
        self._read()

    def _readtable(self, command: BatchCommand) -> str:
        _needs(command, self.tabular and self.tables and self.metadata,
               "needs OPENTABLEDATA, OPENMETADATA and at least one SPECIFYTABLE")
        option = command.argument.strip().upper() or "0"
        if option not in ("0", "1", "1T", "1F"):
            raise command.error(f"parameter {option!r}: 0 (check additivity) or 1 (compute "
                                "totals, 1T keeping the file's statuses) are supported; 2 "
                                "(additivity not required) is not: every method here needs "
                                "an additive table")
        self._read()
        return option

    def _read(self) -> None:
        self.data_read = True
        for table in self.tables:
            table.read, table.adjusted, table.perturbed = True, False, False

    def _apriori(self, command: BatchCommand) -> Apriori:
        parts = [p.strip() for p in _split_arguments(command.argument)]
        if len(parts) < 3:
            raise command.error('expected "file", table number, "separator"[, ignore '
                                "errors, expand trivial levels]")
        number, table = self._table(command, parts[1])
        if len(parts) > 4 and parts[4] == "1":
            raise command.error("expanding a-priori lines to trivial levels (last parameter "
                                "1) is not supported; give every cell its own line")
        path = self._file(command, parts[0].strip('"'), "a-priori file")
        lines = read_hst(path, len(table.spec.dims), parts[2].strip('"'))
        return Apriori(path, number, tuple(lines), len(parts) < 4 or parts[3] in ("", "1"))

    def _recode(self, command: BatchCommand) -> RecodeRequest:
        parts = [p.strip() for p in _split_arguments(command.argument)]
        if len(parts) != 3:
            raise command.error("expected table number, variable, recode file or level")
        if self.tabular:
            raise command.error("recoding is not possible for tabular input (as in tau-ARGUS)")
        number, table = self._table(command, parts[0])
        dim = next((d for d in table.spec.dims if d.lower() == parts[1].lower()), None)
        if dim is None:
            raise command.error(f"variable {parts[1]} is not a spanning variable of table "
                                f"{number} ({', '.join(table.spec.dims)})")
        variable = self.metadata.variable(dim)
        hierarchical = variable.hierarchical or bool(variable.hier_levels)
        target = parts[2].strip('"')
        if target.isdigit() and len(target) == 1:
            if not hierarchical:
                raise command.error(f"{dim} is not hierarchical; a level recode needs a "
                                    "hierarchy")
            return RecodeRequest(number, dim, level=int(target))
        path = self._file(command, target, "recode file")
        recode = read_grc(path)
        if not recode.is_tree and hierarchical:
            raise command.error(f"{dim} is hierarchical: recode it with a tree recode "
                                "(<TREERECODE>) or a level")
        return RecodeRequest(number, dim, path=path, recode=recode)

    def _table(self, command: BatchCommand, text: str, *, linked: bool = False
               ) -> tuple[int, _Table | None]:
        """Table number ``text`` of a table specified and read by now (0: every table, when
        ``linked``)."""
        try:
            number = int(text)
        except ValueError:
            raise command.error(f"table number {text!r} is not a whole number") from None
        if number == 0 and linked:
            if not self.tables or not all(t.read for t in self.tables):
                raise command.error("table number 0 (linked tables): the tables must be "
                                    "specified and read first")
            return 0, None
        if not 1 <= number <= len(self.tables):
            raise command.error(f"table {number} does not exist ({len(self.tables)} "
                                "specified)")
        table = self.tables[number - 1]
        if not table.read:
            raise command.error(f"table {number} has not been read yet (READMICRODATA / "
                                "READTABLE)")
        return number, table

    # -- protection and outputs -----------------------------------------------------------
    def _suppress(self, command: BatchCommand) -> Suppress:
        if re.match(r"\s*CKM\s*\(", command.argument, flags=re.I):  # tabsdc.io.argus._ckm
            number, table = self._table(command, split_ckm_argument(command.argument)[0])
            try:
                check_ckm(self.metadata, table.spec.response, self.tabular)
            except InputError as exc:
                raise command.error(str(exc)) from None
            table.adjusted = table.perturbed = True
            return Suppress("CKM", number, (), command.argument)
        match = re.fullmatch(r"\s*([A-Za-z]+)\s*\(([^)]*)\)\s*", command.argument)
        if match is None:
            raise command.error("expected METHOD(table number, parameters), e.g. OPT(1,5)")
        name, arguments = match.group(1).upper(), [a.strip() for a in match.group(2).split(",")]
        if name not in METHOD_OF:
            raise command.error(_UNSUPPORTED[name] if name == "CKM" else
                                f"unknown method {name}; known: {', '.join(METHOD_OF)}")
        number, _ = self._table(command, arguments[0], linked=True)
        if number == 0 and name not in LINKED_METHODS:
            raise command.error(f"table number 0 (linked tables) is possible with "
                                f"{', '.join(LINKED_METHODS)}, not {name}")
        responses = {t.spec.response for t in self.tables}
        if number == 0 and len(responses) > 1:
            raise command.error("linked tables (table number 0) need one response variable; "
                                f"the tables have {', '.join(sorted(responses))}")
        numbers = parse_parameters(name, arguments[1:])
        for table in self.tables if number == 0 else [self.tables[number - 1]]:
            table.adjusted, table.perturbed = name in ("RND", "CTA"), False
        return Suppress(name, number, numbers)

    def _writetable(self, command: BatchCommand) -> WriteTable:
        match = re.fullmatch(r"\s*\((.*)\)\s*", command.argument)
        parts = [p.strip() for p in _split_arguments(match.group(1))] if match else []
        if len(parts) != 4:
            raise command.error('expected (table number, type, options, "file")')
        number, table = self._table(command, parts[0])
        try:
            output_type = int(parts[1])
        except ValueError:
            raise command.error(f"output type {parts[1]!r}: one of {OUTPUT_TYPES}") from None
        options = parse_write_options(parts[2])
        check_write_request(output_type, options, adjusted=table.adjusted)
        if output_type == 7 and not table.perturbed:
            raise command.error("WRITETABLE type 7 (CKM) needs a table perturbed by SUPPRESS "
                                "CKM")
        name = parts[3].strip('"')
        if not name:
            raise command.error("a file name is expected")
        companions = ()
        if output_type == 5:
            stem = output_path(name, self.folder)[0]
            companions = tuple(p.name for p in tab_files(stem, table.spec.dims)[1:])
        return WriteTable(number, output_type, options, self._output(command, name, companions))

    # -- housekeeping -----------------------------------------------------------------------
    def _logbook(self, command: BatchCommand) -> Output:
        return self._output(command, _name(command))

    def _versioninfo(self, command: BatchCommand) -> Output:
        return self._output(command, _name(command))


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


def _name(command: BatchCommand) -> str:
    name = command.argument.strip().strip('"')
    if not name:
        raise command.error("a file name is expected")
    return name


def _needs(command: BatchCommand, what: object, message: str) -> None:
    """Stop with ``message`` unless ``what`` is there (a file, metadata, tables)."""
    if not what:
        raise command.error(message)


def _key(path: Path) -> str:
    """One key per file: absolute, links followed, letter case ignored."""
    return os.path.realpath(path).casefold()


def _through_link(path: Path) -> Path:
    """The file a symbolic link points to (an output is written through the link)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _check_writable(command: BatchCommand, path: Path) -> None:
    """``path`` can be written: not a folder, not a read-only file, in a folder that exists
    and can be written or that can be made."""
    if path.is_dir():
        raise command.error(f"{path} is a folder; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise command.error(f"{path} exists and cannot be written (no permission)")
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise command.error(f"cannot write {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        made = "" if folder == path.parent else f" (to make {path.parent} in it)"
        raise command.error(f"cannot write {path}: the folder {folder} cannot be written"
                            f"{made}")

