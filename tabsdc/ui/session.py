"""One person's work in the web app: the uploaded file, the choices, the results.

A :class:`Session` belongs to one browser tab (the page asks for a new one when it loads),
so two tabs on two tables never share state. Everything a session writes (uploads, the
files offered for download) goes into its own temporary folder, removed by :meth:`close`.

The choices are kept as a plain dictionary, ``spec``, with one entry per step (``data``,
``hierarchies``, ``rules``, ``protect``); :func:`tabsdc.ui.script.session_script` turns it
into a Python script that reproduces the session with the toolkit's API.
"""

from __future__ import annotations

import base64
import io
import secrets
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdcreport import Report
from sdcreport.files import atomic_write, write_text
from tabsdc.errors import InputError
from tabsdc.hierarchy import Hierarchy
from tabsdc.rules import RulesResult, apply_rules
from tabsdc.table import Table
from tabsdc.ui.choices import TOP_CONTRIBUTIONS, hierarchy_from_spec, rules_from_spec
from tabsdc.ui.inputs import Dataset, read_parent_child, read_upload
from tabsdc.ui.jobs import Job
from tabsdc.ui.script import session_script
from tabsdc.ui.tasks import TASKS
from tabsdc.validation import check_choice

__all__ = ["Session"]

#: Rows of the audit table sent to the page (the downloads hold every row).
MAX_ROWS_SHOWN = 300
_FIGURE_LOCK = threading.Lock()  # pyplot is not thread-safe


class Session:
    """The state of one browser tab.

    Parameters
    ----------
    max_upload : int
        Largest upload in bytes.
    root : path, optional
        Where the session's temporary folder is made (default: the system's).

    Examples
    --------
    >>> session = Session(max_upload=10**7)
    >>> session.load_example()["rows"]
    9786
    >>> session.build_table({"dims": ["NUTS1"], "value": "TURNOVER"}, {})["table"]["cells"]
    4
    >>> session.apply_rules({"freq": 3000})["primary"]
    1
    >>> session.close()
    >>> session.folder.exists()
    False
    """

    def __init__(self, max_upload: int, root: str | Path | None = None) -> None:
        self.id = secrets.token_urlsafe(16)
        self.max_upload = int(max_upload)
        self.folder = Path(tempfile.mkdtemp(prefix="tabsdc-ui-", dir=root))
        self.lock = threading.RLock()
        self.spec: dict[str, Any] = {}
        self.source: Dataset | Table | None = None
        self.hierarchy_files: dict[str, Hierarchy] = {}
        self.table: Table | None = None
        self.rules: RulesResult | None = None
        self.job: Job | None = None
        self.protection: Any = None
        self.attack: Any = None
        self.bases: Any = None

    # -- step 1: data ----------------------------------------------------------------------
    def upload_path(self, name: str) -> Path:
        """Where an upload called ``name`` is stored (inside the session folder)."""
        safe = Path(name).name.replace("\x00", "") or "upload"
        folder = self.folder / "uploads"
        folder.mkdir(exist_ok=True)
        return folder / safe

    def load_source(self, path: Path, name: str) -> dict[str, Any]:
        """Read an uploaded data or JJ file; the later steps start afresh. A file that
        cannot be read is removed from the session folder."""
        source = self._read(read_upload, path, name)
        with self.lock:
            self._reset_after("data")
            self.source = source
            self.spec = {"source": name}
            self.hierarchy_files = {}
            if isinstance(source, Table):
                self.table = source
                self.spec["data"] = {"kind": "jj"}
                return {"kind": "jj", "name": name, "table": self._table_summary()}
            return {"kind": "data", **source.preview()}

    def load_example(self) -> dict[str, Any]:
        """The shipped business survey (:func:`tabsdc.datasets.load_business_survey`), as
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
        """Build the table from the data choices and the hierarchy of each dimension.

        ``data``: ``kind`` (``"microdata"`` or ``"cells"``), ``dims``, ``value`` (empty: a
        frequency table), ``holding``, ``weight`` (microdata), ``freq`` (cells).
        """
        with self.lock:
            source = self._dataset()
            dims = [str(d) for d in data.get("dims", [])]
            if not dims:
                raise InputError("choose at least one dimension column")
            trees = {dim: hierarchy_from_spec(dim, hierarchies.get(dim, {}), source,
                                              self.hierarchy_files) for dim in dims}
            given = {dim: h for dim, h in trees.items() if h is not None}
            codes = pd.DataFrame({dim: source.codes(dim) for dim in dims})
            value = data.get("value") or None
            if data.get("kind", "microdata") == "cells":
                if value is None:
                    raise InputError("interior cells need a value column")
                frame = codes.assign(**{value: source.numeric(value)})
                freq = data.get("freq") or None
                if freq:
                    frame[freq] = source.numeric(freq)
                table = Table.from_aggregated(frame, dims, value, freq=freq, hierarchies=given)
            else:
                frame = codes.copy()
                for column in (value, data.get("weight") or None):
                    if column:
                        frame[column] = source.numeric(column)
                holding = data.get("holding") or None
                if holding:
                    frame[holding] = source.codes(holding)
                table = Table.from_microdata(frame, dims, value, holding=holding,
                                             weight=data.get("weight") or None,
                                             hierarchies=given, top=TOP_CONTRIBUTIONS)
            self._reset_after("table")
            self.table = table
            self.spec["data"] = {k: data.get(k) or None for k in
                                 ("kind", "value", "holding", "weight", "freq")} | {
                                     "dims": dims, "top": TOP_CONTRIBUTIONS,
                                     "sep": source.sep}
            self.spec["hierarchies"] = {dim: hierarchies.get(dim, {"kind": "flat"})
                                        for dim in dims}
            return {"table": self._table_summary(),
                    "trees": {dim: _tree(table, dim) for dim in table.dims}}

    # -- step 3: rules ---------------------------------------------------------------------
    def apply_rules(self, spec: dict[str, Any], view: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
        """Apply the rules; the primaries per rule and in all, and the status map."""
        with self.lock:
            table = self._table()
            result = apply_rules(table, rules_from_spec(spec))
            self._reset_after("rules")
            self.rules = result
            self.spec["rules"] = {k: spec[k] for k in ("p", "pq", "nk", "freq", "freq_level")
                                  if spec.get(k) is not None}
            return {"primary": int(result.primary.sum()), "cells": table.n_cells,
                    "per_rule": {name: int(result.flags[name].sum())
                                 for name in result.flags.columns},
                    "map": self.status_map(result.table, view)}

    def status_map(self, table: Table, view: dict[str, Any] | None = None) -> str | None:
        """The status map of a 2-D view as a PNG data URL (None for tables with fewer than
        two dimensions)."""
        if len(table.dims) < 2:
            return None
        from tabsdc.plots import status_map

        view = view or {}
        rows = view.get("rows") or table.dims[0]
        columns = view.get("columns") or next(d for d in table.dims if d != rows)
        import matplotlib.pyplot as plt

        with _FIGURE_LOCK:
            figure = status_map(table, rows, columns)
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=80)
            plt.close(figure)
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()

    # -- step 4: protection (a job) --------------------------------------------------------
    def start_protection(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Start suppression, rounding or CTA in a worker process.

        ``spec``: ``method`` (``"suppression"``, ``"rounding"``, ``"cta"``) and its
        parameters: suppression ``algorithm``, ``cost``, ``time_limit``; rounding
        ``column`` (``value`` or ``freq``), ``base``, ``rule``, ``seed``, ``time_limit``;
        CTA ``algorithm``, ``time_limit``, ``seed``.
        """
        with self.lock:
            self._check_no_job()
            method = check_choice("protection", spec.get("method"),
                                  ("suppression", "rounding", "cta"))
            time_limit = _number(spec.get("time_limit"))
            if method == "suppression":
                arguments = {"table": self._ruled(), "method": spec.get("algorithm", "optimal"),
                             "cost": spec.get("cost", "value"), "time_limit": time_limit}
            elif method == "rounding":
                arguments = {"table": self._rounding_input(spec), "base": int(spec["base"]),
                             "method": spec.get("rule", "controlled"),
                             "seed": _integer(spec.get("seed")), "time_limit": time_limit}
            else:
                arguments = {"table": self._ruled(), "method": spec.get("algorithm",
                                                                        "heuristic"),
                             "cost": "inverse", "time_limit": time_limit,
                             "seed": _integer(spec.get("seed"))}
            self._reset_after("protect")
            self.spec["protect"] = {k: v for k, v in spec.items()}
            self.job = Job("protect", TASKS[method], arguments, time_limit)
            return self.job.to_dict()

    def start_base_choice(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Compare candidate rounding bases (``candidates``, ``rule``, ``column``) in a
        worker: the base chooser's quality table."""
        with self.lock:
            self._check_no_job()
            candidates = [int(b) for b in spec.get("candidates", [2, 3, 4, 5, 10])]
            self.job = Job("bases", TASKS["bases"], {
                "table": self._rounding_input(spec), "candidates": candidates,
                "method": spec.get("rule", "controlled")})
            return self.job.to_dict()

    def start_attack(self, q: float) -> dict[str, Any]:
        """The p/q-interval attack on the suppressed table, in a worker."""
        with self.lock:
            self._check_no_job()
            if self.spec.get("protect", {}).get("method") != "suppression" or \
                    self.protection is None:
                raise InputError("the p/q-interval attack needs a suppressed table: run "
                                 "suppression first")
            self.job = Job("attack", TASKS["attack"],
                           {"table": self.protection.table, "q": float(q)})
            self.spec["attack"] = {"q": float(q)}
            return self.job.to_dict()

    def job_state(self) -> dict[str, Any]:
        """The running or last job; a finished job's result is kept in the session."""
        with self.lock:
            if self.job is None:
                return {"state": "none"}
            was_running = self.job.state == "running"
            state = self.job.poll().to_dict()
            if was_running and self.job.state == "done":
                if self.job.kind == "protect":
                    self.protection = self.job.result
                elif self.job.kind == "attack":
                    self.attack = self.job.result
                else:
                    self.bases = self.job.result
            if self.job.kind == "bases" and self.bases is not None:
                state["bases"] = _records(self.bases.to_frame())
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
                out.update(passed=bool(audit.protected), hidden=int(len(audit.frame)),
                           failing=_records(audit.failures),
                           intervals=_records(result.to_frame().head(MAX_ROWS_SHOWN)),
                           map=self.status_map(result.table))
                if self.attack is not None:
                    out["attack"] = {"passed": bool(self.attack.protected),
                                     "summary": self.attack.summary()}
            elif method == "rounding":
                exact = 0 if result.audit is None else result.audit.n_exact
                out.update(passed=bool(result.additive) and exact == 0, statistics=_records(
                    result.to_frame().head(MAX_ROWS_SHOWN)))
            else:
                out.update(passed=bool(result.verification.passed),
                           statistics=_records(result.statistics))
            return out

    # -- step 6: downloads -----------------------------------------------------------------
    def download(self, kind: str, symbol: str = "x") -> Path:
        """Write a download into the session folder and return its path: ``publishable``
        (CSV), ``internal-jj``, ``internal-csv``, ``report`` (HTML) or ``script`` (.py)."""
        from tabsdc.release import write_publishable

        with self.lock:
            stem = Path(self.spec.get("source", "table")).stem
            folder = self.folder / "downloads"
            folder.mkdir(exist_ok=True)
            if kind == "script":
                path = folder / f"{stem}_protect.py"
                return write_text(path, session_script(self.spec))
            published = self._published()
            if kind == "publishable":
                every_cell = self.spec["protect"]["method"] != "suppression"
                table = published.with_columns(status="s") if every_cell else published
                return write_publishable(table, folder / f"{stem}_publishable.csv",
                                         symbol=symbol)
            if kind == "internal-jj":
                return published.to_jj(folder / f"{stem}_internal.jj")
            if kind == "internal-csv":
                path = folder / f"{stem}_internal.csv"
                with atomic_write(path, encoding="utf-8", newline="") as stream:
                    published.to_frame().to_csv(stream, index=False)
                return path
            if kind == "report":
                return self._report().save(folder / f"{stem}_report.html")
            raise InputError(f"unknown download {kind!r}")

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

    def _check_no_job(self) -> None:
        if self.job is not None and self.job.poll().state == "running":
            raise InputError("a computation is running: wait for it or cancel it first")

    def _dataset(self) -> Dataset:
        if not isinstance(self.source, Dataset):
            raise InputError("upload a data file (CSV, Parquet or Excel) first")
        return self.source

    def _table(self) -> Table:
        if self.table is None:
            raise InputError("build the table first (step Hierarchies)")
        return self.table

    def _ruled(self) -> Table:
        """The table after the rules; a JJ file's own statuses when no rules were applied."""
        if self.rules is None and isinstance(self.source, Table):
            return self._table()
        if self.rules is None:
            raise InputError("apply the sensitivity rules first (step Rules)")
        return self.rules.table

    def _rounding_input(self, spec: dict[str, Any]) -> Table:
        table = self.rules.table if self.rules is not None else self._table()
        column = spec.get("column", "value")
        if column == "value":
            return table
        if column not in table.cells.columns:
            raise InputError(f"the table has no column {column!r} to round")
        return table.with_columns(value=table.cells[column].to_numpy(dtype=float))

    def _protection(self) -> Any:
        if self.protection is None:
            raise InputError("protect the table first (step Protect)")
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


def _tree(table: Table, dim: str) -> dict[str, Any]:
    """The hierarchy of ``dim`` as nested codes, each with its value and count (records)
    in the cells where the other dimensions are at their totals."""
    hierarchy = table.hierarchies[dim]
    cells = table.cells
    at_totals = np.ones(table.n_cells, dtype=bool)
    for other in table.dims:
        if other != dim:
            at_totals &= (cells.index.get_level_values(other) == table.hierarchies[other].root)
    margin = cells[at_totals]
    margin.index = margin.index.get_level_values(dim)
    counts = margin["freq"] if "freq" in margin.columns else pd.Series(np.nan, margin.index)

    def node(code: str) -> dict[str, Any]:
        return {"code": code, "value": _finite(margin["value"].get(code)),
                "count": _finite(counts.get(code)),
                "children": [node(child) for child in hierarchy.children(code)]}

    return node(hierarchy.root)


def _records(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame for the page: header and rows of text (a named index becomes columns)."""
    frame = frame.reset_index(drop=not any(frame.index.names))
    return {"header": [str(c) for c in frame.columns],
            "rows": frame.map(_cell_text).to_numpy().tolist()}


def _cell_text(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{value:.6g}"
    return str(value)


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def _number(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def _integer(value: Any) -> int | None:
    return None if value in (None, "") else int(value)
