"""One person's work in the web app: the uploaded file, the choices, the results.

A :class:`Session` belongs to one browser tab (the page asks for a new one when it loads),
so two tabs on two tables never share state. Everything a session writes (uploads, the
files offered for download) goes into its own temporary folder, removed by :meth:`close`.

The choices are kept as a plain dictionary, ``spec``, with one entry per step (``data``,
``hierarchies``, ``rules``, ``protect``); :func:`tabsdc.ui._script.session_script` turns it
into a Python script that reproduces the session with the toolkit's API.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import tempfile
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath
from time import monotonic
from typing import Any

import pandas as pd

from sdcreport import Report
from sdcreport._files import atomic_write, write_text
from tabsdc._errors import InputError, RuleError, TabSDCError
from tabsdc._hierarchy import Hierarchy
from tabsdc._rules import RulesResult, apply_rules
from tabsdc._table import Table
from tabsdc._validation import check_choice
from tabsdc.cta import METHODS as CTA_METHODS
from tabsdc.rounding import METHODS as ROUNDING_METHODS
from tabsdc.suppression import METHODS as SUPPRESSION_METHODS
from tabsdc.ui._choices import (
    COSTS,
    TOP_CONTRIBUTIONS,
    hierarchy_from_spec,
    number,
    rules_from_spec,
)
from tabsdc.ui._inputs import Dataset, read_parent_child, read_upload
from tabsdc.ui._jobs import Job, JobSlots
from tabsdc.ui._script import session_notebook, session_script
from tabsdc.ui._tasks import TASKS
from tabsdc.ui._views import STATUS_NAMES, records, status_grid, tree

#: Rows of the audit table sent to the page (the downloads hold every row).
MAX_ROWS_SHOWN = 300
#: The files a session offers.
DOWNLOADS = ("publishable", "internal-csv", "internal-jj", "report", "script", "notebook")
#: How negative contributions may be treated (``Table.from_microdata(negative=)``).
NEGATIVE = ("keep", "absolute")


class Session:
    """The state of one browser tab.

    Parameters
    ----------
    max_upload : int
        Largest upload in bytes.
    root : path, optional
        Where the session's temporary folder is made (default: the system's).
    slots : JobSlots, optional
        The app's count of running jobs (each job of the session takes one).

    Examples
    --------
    >>> session = Session(max_upload=10**7)
    >>> session.load_example()["rows"]
    9786
    >>> session.build_table({"dims": ["NUTS1"], "value": "TURNOVER"}, {})["table"]["cells"]
    4
    >>> session.apply_rules({"freq": 3000})["primary"]
    1
    >>> session.apply_rules({"p": 110})
    Traceback (most recent call last):
    ...
    tabsdc.InputError: p % rule needs 0 < p <= 100, not 110.0
    >>> session.start_protection({"method": "suppression"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tabsdc.InputError: the rules are not valid (...): correct them on step 3 Rules first
    >>> session.close()
    >>> session.folder.exists()
    False
    """

    def __init__(self, max_upload: int, root: str | Path | None = None,
                 slots: JobSlots | None = None) -> None:
        self.id = secrets.token_urlsafe(16)
        self.slots = slots
        self.last_seen = monotonic()
        self.left_at: float | None = None
        self.max_upload = int(max_upload)
        self.folder = Path(tempfile.mkdtemp(prefix="tabsdc-ui-", dir=root))
        self.lock = threading.RLock()
        self.spec: dict[str, Any] = {}
        self.stem = "table"
        self.source: Dataset | Table | None = None
        self.hierarchy_files: dict[str, Hierarchy] = {}
        self.table: Table | None = None
        self.rules: RulesResult | None = None
        self.refused: dict[str, str] = {}  # step -> why its last choices were refused
        self.job: Job | None = None
        self._collected: Job | None = None
        self.protection: Any = None
        self.attack: Any = None
        self.bases: Any = None

    def touch(self) -> None:
        """A sign of life from the page (it is open, or came back after leaving)."""
        self.last_seen = monotonic()
        self.left_at = None

    # -- step 1: data ----------------------------------------------------------------------
    def upload_path(self, name: str) -> Path:
        """Where an upload called ``name`` is stored, inside the session folder, under a name
        of the session's making: the letters, digits, dots, dashes and underscores of the
        file's own name (at most 100 characters), its type kept. The name as given is only
        shown and written into the script (as a string literal)."""
        if not name.strip():
            raise InputError("the upload has no file name")
        path = PureWindowsPath(PurePosixPath(name).name)  # no folder, whatever the system
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem).strip("._")[:100] or "upload"
        suffix = re.sub(r"[^A-Za-z0-9.]+", "", path.suffix.lower())[:12]
        folder = self.folder / "uploads"
        folder.mkdir(exist_ok=True)
        return folder / f"{stem}{suffix}"

    def load_source(self, path: Path, name: str) -> dict[str, Any]:
        """Read an uploaded data or JJ file; the later steps start afresh. A file that
        cannot be read is removed from the session folder."""
        source = self._read(read_upload, path, name)
        with self.lock:
            self._reset_after("data")
            self.source = source
            self.stem = path.stem
            self.spec = {"source": name}
            self.refused = {}
            self.hierarchy_files = {}
            if isinstance(source, Table):
                self.table = source
                self.spec["data"] = {"kind": "jj"}
            return self._source_info()

    def load_example(self) -> dict[str, Any]:
        """The shipped business survey (:func:`tabsdc._datasets.load_business_survey`), as
        if uploaded."""
        from importlib.resources import files

        name = "business_survey.csv"
        path = self.upload_path(name)
        with atomic_write(path, "wb") as stream:
            stream.write(files("tabsdc").joinpath("data", name).read_bytes())
        return self.load_source(path, name)

    def load_hierarchy_file(self, dim: str, path: Path, name: str) -> dict[str, Any]:
        """A parent/child hierarchy for dimension ``dim``."""
        hierarchy = self._read(read_parent_child, path, name)
        with self.lock:
            self.hierarchy_files[dim] = hierarchy
            return {"dim": dim, "codes": len(hierarchy), "root": hierarchy.root}

    # -- step 2: table and hierarchies -----------------------------------------------------
    def build_table(self, data: dict[str, Any], hierarchies: dict[str, Any]) -> dict[str, Any]:
        """Build the table from the data choices and the hierarchy of each dimension; a
        table that cannot be built leaves none (the later steps say so).

        ``data``: ``kind`` (``"microdata"`` or ``"cells"``), ``dims`` (most significant
        first), ``value`` (empty: a frequency table), ``holding``, ``weight`` and
        ``negative`` (``"keep"`` or ``"absolute"``: the rules see absolute values;
        microdata), ``freq`` (cells).
        """
        with self.lock:
            source = self._dataset()
            try:
                table = self._built(source, data, hierarchies)
            except (TabSDCError, ValueError) as error:
                self._reset_after("data")
                self.refused["table"] = str(error)
                raise
            self._reset_after("table")
            self.table = table
            self.refused.pop("table", None)
            self.spec["data"] = {k: data.get(k) or None for k in
                                 ("kind", "value", "holding", "weight", "freq")} | {
                                     "dims": list(table.dims), "top": TOP_CONTRIBUTIONS,
                                     "negative": data.get("negative") or "keep",
                                     "csv": None if source.dialect is None else
                                     source.dialect.read_options()}
            self.spec["hierarchies"] = {dim: hierarchies.get(dim, {"kind": "flat"})
                                        for dim in table.dims}
            return self._table_info()

    def _built(self, source: Dataset, data: dict[str, Any], hierarchies: dict[str, Any]
               ) -> Table:
        dims = [str(d) for d in data.get("dims") or []]
        if not dims:
            raise InputError("choose at least one dimension column")
        if len(set(dims)) < len(dims):
            raise InputError(f"a dimension is chosen twice: {', '.join(dims)}")
        trees = {dim: hierarchy_from_spec(dim, hierarchies.get(dim) or {}, source,
                                          self.hierarchy_files) for dim in dims}
        given = {dim: h for dim, h in trees.items() if h is not None}
        codes = pd.DataFrame({dim: source.codes(dim) for dim in dims})
        value = data.get("value") or None
        if data.get("kind", "microdata") == "cells":
            if value is None:
                raise InputError("interior cells need a value column: choose the Response")
            frame = codes.assign(**{value: source.filled(value)})
            freq = data.get("freq") or None
            if freq:
                frame[freq] = source.filled(freq)
            return Table.from_aggregated(frame, dims, value, freq=freq, hierarchies=given)
        negative = check_choice("negative contributions", data.get("negative") or "keep",
                                NEGATIVE)
        frame = codes.copy()
        for column in (value, data.get("weight") or None):
            if column:
                frame[column] = source.filled(column)
        holding = data.get("holding") or None
        if holding:
            frame[holding] = source.codes(holding)
        return Table.from_microdata(frame, dims, value, holding=holding,
                                    weight=data.get("weight") or None, hierarchies=given,
                                    top=TOP_CONTRIBUTIONS, negative=negative)

    # -- step 3: rules ---------------------------------------------------------------------
    def apply_rules(self, spec: dict[str, Any], view: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
        """Apply the rules; the primaries per rule and in all, and the status map.

        Rules that are refused (``p = 110``, an empty box) leave no rules: protection is
        refused until they are corrected, rather than run with the previous ones.
        """
        with self.lock:
            table = self._table()
            try:
                result = apply_rules(table, rules_from_spec(spec))
            except (TabSDCError, ValueError) as error:
                self._reset_after("table")
                self.refused["rules"] = _rule_error_words(error)
                raise InputError(self.refused["rules"]) from None
            self._reset_after("rules")
            self.rules = result
            self.refused.pop("rules", None)
            self.spec["rules"] = {k: spec[k] for k in ("p", "pq", "nk", "freq", "freq_level")
                                  if spec.get(k) is not None}
            return self._rules_info(view)

    def _rules_info(self, view: dict[str, Any] | None) -> dict[str, Any]:
        result = self.rules
        return {"primary": int(result.primary.sum()), "cells": result.table.n_cells,
                "per_rule": {name: int(result.flags[name].sum())
                             for name in result.flags.columns},
                "map": self._grid(result.table, view)}

    def view(self, view: dict[str, Any]) -> dict[str, Any]:
        """The status map of another 2-D view (``rows``, ``columns``) of the table of step
        ``view["step"]``: ``"rules"`` (the primaries) or ``"check"`` (the protected table)."""
        with self.lock:
            if view.get("step") == "check":
                table = self._protection().table
            else:
                table = self.rules.table if self.rules is not None else self._table()
            return {"map": self._grid(table, view)}

    def _grid(self, table: Table, view: dict[str, Any] | None) -> dict[str, Any] | None:
        """The status map (:func:`~tabsdc.ui._views.status_grid`) of ``view``'s rows and
        columns (the first two dimensions by default; None for a 1-D table)."""
        if len(table.dims) < 2:
            return None
        view = view or {}
        rows = view.get("rows") or table.dims[0]
        columns = view.get("columns") or next(d for d in table.dims if d != rows)
        for dim in (rows, columns):
            if dim not in table.dims:
                raise InputError(f"the status map: {dim!r} is not a dimension of the table "
                                 f"({', '.join(table.dims)})")
        if rows == columns:
            raise InputError("the status map: choose two different dimensions")
        return status_grid(table, rows, columns)

    # -- step 4: protection (a job) --------------------------------------------------------
    def start_protection(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Start suppression, rounding or CTA in a worker process.

        ``spec``: ``method`` (``"suppression"``, ``"rounding"``, ``"cta"``) and its
        parameters: suppression ``algorithm``, ``cost``, ``time_limit``; rounding
        ``column`` (``value`` or ``freq``), ``base``, ``rule``, ``seed``, ``time_limit``;
        CTA ``algorithm``, ``time_limit``, ``seed``. Numbers may come as the text of the
        page's boxes; each is checked, and a refusal names the box.
        """
        with self.lock:
            self._check_no_job()
            choices = _protection_choices(spec)
            method, time_limit = choices["method"], choices["time_limit"]
            if method == "suppression":
                arguments = {"table": self._ruled(), "method": choices["algorithm"],
                             "cost": choices["cost"], "time_limit": time_limit}
            elif method == "rounding":
                arguments = {"table": self._rounding_input(choices), "base": choices["base"],
                             "method": choices["rule"], "seed": choices["seed"],
                             "time_limit": time_limit}
            else:
                arguments = {"table": self._ruled(), "method": choices["algorithm"],
                             "cost": "inverse", "time_limit": time_limit,
                             "seed": choices["seed"]}
            self._reset_after("protect")
            self.job = Job("protect", TASKS[method], arguments, time_limit, self.slots)
            self.spec["protect"] = choices
            return self.job.to_dict()

    def start_base_choice(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Compare candidate rounding bases (``candidates``, ``rule``, ``column``) in a
        worker: the base chooser's quality table."""
        with self.lock:
            self._check_no_job()
            candidates = [number(b, "candidate bases", integer=True, minimum=2)
                          for b in spec.get("candidates") or [2, 3, 4, 5, 10]]
            rule = check_choice("rounding method", spec.get("rule") or "controlled",
                                ROUNDING_METHODS)
            self.job = Job("bases", TASKS["bases"], {
                "table": self._rounding_input(spec), "candidates": candidates,
                "method": rule}, slots=self.slots)
            return self.job.to_dict()

    def start_attack(self, q: Any) -> dict[str, Any]:
        """The p/q-interval attack on the suppressed table, in a worker."""
        with self.lock:
            self._check_no_job()
            if self.spec.get("protect", {}).get("method") != "suppression" or \
                    self.protection is None:
                raise InputError("the p/q-interval attack needs a suppressed table: run "
                                 "suppression first")
            q = number(q, "the attack's q (%)", above=0)
            self.job = Job("attack", TASKS["attack"],
                           {"table": self.protection.table, "q": q}, slots=self.slots)
            self.spec["attack"] = {"q": q}
            return self.job.to_dict()

    def job_state(self) -> dict[str, Any]:
        """The running or last job; a finished job's result is kept in the session."""
        with self.lock:
            if self.job is None:
                return {"state": "none"}
            state = self.job.to_dict()
            self._collect()
            if self.job.kind == "bases" and self.bases is not None:
                state["bases"] = records(self.bases.to_frame())
                state["chosen"] = self.bases.base
            return state

    def cancel(self) -> dict[str, Any]:
        """Stop the running job's worker process."""
        with self.lock:
            if self.job is None:
                return {"state": "none"}
            return self.job.cancel().to_dict()

    # -- step 5: check ---------------------------------------------------------------------
    def check(self) -> dict[str, Any]:
        """The checks of the protected table, as the page shows them."""
        with self.lock:
            result = self._protection()
            method = self.spec["protect"]["method"]
            out: dict[str, Any] = {"method": method, "summary": result.summary()}
            if method == "suppression":
                audit = result.audit
                intervals = result.to_frame().head(MAX_ROWS_SHOWN)
                if "status" in intervals.columns:
                    intervals["status"] = intervals["status"].map(STATUS_NAMES).fillna(
                        intervals["status"])
                out.update(passed=_passed(result, method), hidden=int(len(audit.frame)),
                           failing=records(audit.failures), intervals=records(intervals),
                           map=self._grid(result.table, None))
                if self.attack is not None:
                    out["attack"] = {"passed": bool(self.attack.protected),
                                     "summary": self.attack.summary(),
                                     "explanation": _attack_words(
                                         audit, self.attack, self.spec["attack"]["q"])}
            elif method == "rounding":
                out.update(passed=_passed(result, method), statistics=records(
                    result.to_frame().head(MAX_ROWS_SHOWN)))
            else:
                out.update(passed=_passed(result, method),
                           statistics=records(result.statistics))
            return out

    # -- step 6: downloads -----------------------------------------------------------------
    def script(self, symbol: str = "x") -> dict[str, str]:
        """The Python script that repeats the session, as text for the page to show and
        copy (a browser may refuse to keep a downloaded ``.py`` file)."""
        with self.lock:
            return {"name": f"{self.stem}_protect.py",
                    "text": session_script(self.spec, symbol)}

    def download(self, kind: str, symbol: str = "x") -> Path:
        """Write a download into the session folder and return its path: ``publishable``
        (CSV), ``internal-jj``, ``internal-csv``, ``report`` (HTML), ``script`` (.py) or
        ``notebook`` (the script as a Jupyter notebook, .ipynb)."""
        from tabsdc._release import write_internal_table, write_publishable

        check_choice("download", kind, DOWNLOADS)
        with self.lock:
            stem = self.stem
            folder = self.folder / "downloads"
            folder.mkdir(exist_ok=True)
            if kind == "script":
                path = folder / f"{stem}_protect.py"
                return write_text(path, session_script(self.spec, symbol))
            if kind == "notebook":
                path = folder / f"{stem}_protect.ipynb"
                return write_text(path, json.dumps(session_notebook(self.spec, symbol),
                                                   indent=1))
            published = self._published()
            if kind == "publishable":
                if not _passed(self._protection(), self.spec["protect"]["method"]):
                    raise InputError("the protected table failed its check (step 5 Check): "
                                     "it is not offered for publication; change the rules "
                                     "or the method and protect again")
                every_cell = self.spec["protect"]["method"] != "suppression"
                table = published.with_columns(status="s") if every_cell else published
                return write_publishable(table, folder / f"{stem}_publishable.csv",
                                         symbol=symbol)
            if kind == "internal-jj":
                return published.to_jj(folder / f"{stem}_internal.jj")
            if kind == "internal-csv":
                return write_internal_table(published, folder / f"{stem}_internal.csv")
            return self._report().save(folder / f"{stem}_report.html")

    # -- the page after Back or a reload -----------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything the page shows, so a page that comes back (Back, reload) draws the
        session again: the file, the choices of every step, the table, the job."""
        with self.lock:
            self._collect()
            out: dict[str, Any] = {"spec": self.spec, "refused": self.refused}
            if self.source is not None:
                out["source"] = self._source_info()
            if self.table is not None and isinstance(self.source, Dataset):
                out["table"] = self._table_info()
            if self.rules is not None:
                out["rules"] = self._rules_info(None)
            if self.job is not None:
                out["job"] = self.job_state()
            out["protected"] = self.protection is not None
            return out

    def _source_info(self) -> dict[str, Any]:
        if isinstance(self.source, Table):
            return {"kind": "jj", "name": self.spec["source"], "table": self._table_summary()}
        return {"kind": "data", **self._dataset().preview()}

    def _table_info(self) -> dict[str, Any]:
        table = self._table()
        return {"table": self._table_summary(),
                "trees": {dim: tree(table, dim) for dim in table.dims},
                "warnings": self._dataset().code_warnings(list(table.dims))}

    def close(self) -> None:
        """Stop a running job and remove the session folder."""
        with self.lock:
            if self.job is not None:
                self.job.cancel()
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------
    def _reset_after(self, step: str) -> None:
        """Forget what depends on ``step``: ``"data"`` (a new upload), ``"table"``,
        ``"rules"`` or ``"protect"``; a running job is stopped."""
        if step == "data":
            self.table = None
        if step in ("data", "table"):
            self.rules = None
            self.spec.pop("rules", None)
        if self.job is not None:
            self.job.cancel()
        self.job = None
        self.protection = self.attack = self.bases = None
        self.spec.pop("protect", None)
        self.spec.pop("attack", None)

    def _read(self, reader: Any, path: Path, name: str) -> Any:
        try:
            return reader(path, name)
        except Exception:
            if self.folder in path.parents:
                path.unlink(missing_ok=True)
            raise

    def _collect(self) -> None:
        """Keep a finished job's result in the session (once per job)."""
        job = self.job
        if job is None or job.state != "done" or job is self._collected:
            return
        self._collected = job
        if job.kind == "protect":
            self.protection = job.result
        elif job.kind == "attack":
            self.attack = job.result
        else:
            self.bases = job.result

    def _check_no_job(self) -> None:
        self._collect()
        if self.job is not None and self.job.running:
            raise InputError("a computation is running: wait for it or cancel it first")

    def _dataset(self) -> Dataset:
        if not isinstance(self.source, Dataset):
            raise InputError("upload a data file (CSV, Parquet or Excel) first")
        return self.source

    def _table(self) -> Table:
        if "table" in self.refused:
            raise InputError(f"the table could not be built ({self.refused['table']}): "
                             "correct the choices of steps 1 and 2 first")
        if self.table is None:
            raise InputError("build the table first (step 2 Hierarchies)")
        return self.table

    def _ruled(self) -> Table:
        """The table after the rules; a JJ file's own statuses when no rules were applied.
        Rules that were refused block this step until they are corrected."""
        if "rules" in self.refused:
            raise InputError(f"the rules are not valid ({self.refused['rules']}): correct "
                             "them on step 3 Rules first")
        if self.rules is None and isinstance(self.source, Table):
            return self._table()
        if self.rules is None:
            raise InputError("apply the sensitivity rules first (step 3 Rules)")
        return self.rules.table

    def _rounding_input(self, spec: dict[str, Any]) -> Table:
        table = self._ruled() if self.rules is not None or "rules" in self.refused else \
            self._table()
        column = spec.get("column", "value")
        if column == "value":
            return table
        if column not in table.cells.columns:
            raise InputError(f"the table has no column {column!r} to round")
        return table.with_columns(value=table.cells[column].to_numpy(dtype=float))

    def _protection(self) -> Any:
        self._collect()
        if self.protection is None:
            raise InputError("protect the table first (step 4 Protect)")
        return self.protection

    def _published(self) -> Table:
        result = self._protection()
        return result.table

    def _report(self) -> Report:
        result = self._protection()
        sections = [self._table().to_report()]
        if self.rules is not None:
            sections.append(self.rules.to_report())
        sections.append(result.to_report())
        if self.spec["protect"]["method"] == "suppression":
            sections.append(result.audit.to_report())
            if self.attack is not None:
                sections.append(self.attack.to_report())
        metadata = {"data": self.spec.get("source", ""),
                    "protection": ", ".join(f"{k} = {v}" for k, v in
                                            self.spec["protect"].items() if v not in
                                            (None, ""))}
        return Report(f"Protection of {self.spec.get('source', 'a table')}",
                      metadata=metadata).add(*sections)

    def _table_summary(self) -> dict[str, Any]:
        table = self._table()
        return {"cells": table.n_cells, "relations": table.n_relations,
                "dims": list(table.dims), "text": repr(table),
                "has_freq": "freq" in table.cells.columns}


def _protection_choices(spec: dict[str, Any]) -> dict[str, Any]:
    """The protection's choices from the page, each checked: the method's name among those
    the toolkit offers, numbers from their boxes."""
    method = check_choice("protection", spec.get("method"), ("suppression", "rounding", "cta"))
    time_limit = number(spec.get("time_limit"), "time limit (s)", above=0, optional=True)
    choices: dict[str, Any] = {"method": method, "time_limit": time_limit}
    if method == "suppression":
        choices["algorithm"] = check_choice("suppression method",
                                            spec.get("algorithm") or "optimal",
                                            SUPPRESSION_METHODS)
        choices["cost"] = check_choice("cost", spec.get("cost") or "value", COSTS)
    elif method == "rounding":
        choices["column"] = check_choice("what to round", spec.get("column") or "value",
                                         ("value", "freq"))
        choices["base"] = number(spec.get("base"), "rounding base", integer=True, minimum=2)
        choices["rule"] = check_choice("rounding method", spec.get("rule") or "controlled",
                                       ROUNDING_METHODS)
        choices["seed"] = number(spec.get("seed"), "seed", integer=True, optional=True)
    else:
        choices["algorithm"] = check_choice("CTA method", spec.get("algorithm") or "heuristic",
                                            CTA_METHODS)
        choices["seed"] = number(spec.get("seed"), "seed", integer=True, optional=True)
    return choices


def _rule_error_words(error: Exception) -> str:
    """A rule's refusal in the page's words (the API's advice names a keyword the page
    offers as a choice of step 1)."""
    text = str(error)
    if isinstance(error, RuleError) and "negative='absolute'" in text:
        text = text.split(": build the table with")[0] + (
            ": on step 1 Data, set Negative contributions to 'use their absolute values "
            "for the rules', then build the table again")
    return text


def _passed(result: Any, method: str) -> bool:
    """Whether a protection result passed its check: the interval attack of a suppression,
    additivity and no exactly disclosed cell of a rounding, the verification of an
    adjustment. Only a result that passed is offered for publication."""
    if method == "suppression":
        return bool(result.audit.protected)
    if method == "rounding":
        exact = 0 if result.audit is None else result.audit.n_exact
        return bool(result.additive) and exact == 0
    return bool(result.verification.passed)


def _attack_words(audit: Any, attack: Any, q: float) -> str:
    """How the attack's counts relate to the verdict at the top of the Check step."""
    frame = attack.frame
    sensitive = frame["status"] == "u"
    kept = int((frame["protected"] & sensitive).sum())
    words = [f"The verdict at the top is for publishing the table with its hidden cells "
             f"shown as a symbol, to an intruder who knows the published cells and the "
             f"table's a-priori bounds: {'every' if audit.protected else 'not every'} "
             "primary cell is protected. This panel asks about a better-informed intruder, "
             f"who already knows every value within q = {q:g} %.",
             f"From the published table, {kept} of the {int(sensitive.sum())} primary "
             "cells keep the protection they need"
             + ("." if kept == int(sensitive.sum()) else
                f"; {int(sensitive.sum()) - kept} do not (their intervals shrink within "
                "their protection levels).")]
    if attack.pq_attack is not None:
        revealed = int(attack.pq_attack.revealed.sum())
        words.append(
            f"If the exact intervals of the {len(attack.pq_attack.revealed)} hidden cells "
            "were published as well, "
            + ("they would reveal no hidden value." if revealed == 0 else
               f"they would reveal the values of {revealed} of them: publish the table, "
               "not the intervals."))
    return " ".join(words)
