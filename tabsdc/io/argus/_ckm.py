"""tau-ARGUS 4.2's cell key method in batch jobs: the ``.rda`` keywords, ``SUPPRESS CKM(n)``
and output type 7.

Metadata (tau-ARGUS 4.2 manual, the cell key method; its ``Metadata.readMicroMetadata``):

* the record key variable: ``<RECORDKEY>`` with ``<DECIMALS>`` (the keys' digits),
  ``<PFILE>`` (also ``<PFILE_FREQ>``: the count p-table), ``<PFILE_CONT>`` (the magnitude
  p-table) and ``<PFILE_SEP>`` (the small-value p-table);
* a numeric variable: ``<CKM> T(k)`` (the top ``k`` contributions), ``M`` (the mean), ``D``
  (the spread), ``V`` (the value) or ``N`` (no cell key method); ``<INCLUDEZEROS> Y|N``,
  ``<PARITY> Y|N``, ``<SEPARATION> Y|N`` and ``<SCALING> F(sigma_0, sigma_1, x*, q, eps_2,
  ..., eps_k)`` (the flex function) or ``N(sigma_1, eps_2, ..., eps_k)`` (a constant).

Batch: ``<SUPPRESS> CKM(n)`` perturbs table ``n``; a frequency table may name its p-table,
``CKM(n) "ptable.txt"``, a magnitude table its p-tables and ``mu_c``, ``CKM(n) "cont" |
"sep" | mu_c`` (each part may be left empty). Frequency tables run
:func:`tabsdc.ckm.perturb_counts`, magnitude tables :func:`tabsdc.ckm.perturb_magnitudes`
with ``mu_c`` for the cells the job's safety rule flags (tau-ARGUS's unsafe cells).

``<WRITETABLE> (n, 7, options, "file")`` writes the perturbed table as tau-ARGUS does: one
line per cell, ``code;...;code;value`` with ``AO+`` the original value, ``AD+`` the
difference and ``AC+`` the cell key appended, codes quoted unless ``QU-``, empty cells left
out with ``SE+``; beside it an ``.rda`` describing the columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sdcreport._files import CONFIDENTIAL, write_text
from tabsdc._errors import InputError
from tabsdc._hierarchy import Hierarchy
from tabsdc._release import write_release
from tabsdc._table import Table
from tabsdc.ckm import FlexFunction, perturb_counts, perturb_magnitudes, read_ptable
from tabsdc.ckm._keys import key_fraction
from tabsdc.io.argus._metadata import Metadata, Variable, format_rda
from tabsdc.io.argus._syntax import resolve_path

#: tau-ARGUS's ``<CKM>`` letters and what scales the noise here.
CKM_BASES = {"T": "top", "M": "mean", "D": "range", "V": "value"}

#: The response of a frequency table in a ``<SPECIFYTABLE>``.
FREQUENCY = "<freq>"


@dataclass(frozen=True)
class CKMSettings:
    """The cell-key settings of a job's record key and response variable."""

    record_key: str
    digits: int
    ptable: str = ""
    ptable_cont: str = ""
    ptable_sep: str = ""
    base: str = ""
    include_zeros: bool = False
    parity: bool = False
    separation: bool = False
    flex: FlexFunction | None = None


def parse_scaling(text: str, top_k: int = 1) -> FlexFunction:
    """``<SCALING>``: ``F(sigma_0, sigma_1, x*, q, eps_2, ..., eps_k)`` or
    ``N(sigma_1, eps_2, ..., eps_k)`` (tau-ARGUS's order).

    Examples
    --------
    >>> parse_scaling("F(0.03,0.30,1000,3,0.5,0.2)", 3)
    FlexFunction(small=0.3, large=0.03, flex_point=1000.0, q=3.0, epsilon=(1.0, 0.5, 0.2))
    >>> parse_scaling("N(0.1)").small
    0.1
    """
    match = re.fullmatch(r"\s*([FfNn])\s*\(([^)]*)\)\s*", text)
    if match is None:
        raise InputError(f"<SCALING> {text!r}: expected F(sigma0,sigma1,x*,q[,eps...]) or "
                         "N(sigma1[,eps...])")
    try:
        numbers = [float(x) for x in match.group(2).split(",") if x.strip()]
    except ValueError:
        raise InputError(f"<SCALING> {text!r}: the parameters must be numbers") from None
    flexible = match.group(1).upper() == "F"
    head = 4 if flexible else 1
    if len(numbers) != head + top_k - 1:
        raise InputError(f"<SCALING> {text!r}: {head} parameters and {top_k - 1} epsilon(s) "
                         f"for the top {top_k} contributions expected, found {len(numbers)}")
    epsilon = (1.0, *numbers[head:])
    if flexible:
        sigma0, sigma1, point, q = numbers[:4]
        return FlexFunction(sigma1, sigma0, point, q=q, epsilon=epsilon)
    return FlexFunction(numbers[0], epsilon=epsilon)


def ckm_settings(metadata: Metadata, response: str) -> CKMSettings:
    """The settings of the record key and (for a magnitude table) of ``response``.

    Raises
    ------
    InputError
        No ``<RECORDKEY>`` variable; a magnitude response without ``<CKM>`` (or with
        ``N``), without ``<SCALING>`` or with an unknown ``<CKM>`` letter.
    """
    keys = metadata.with_role("record_key")
    if not keys:
        raise InputError(f"{metadata.path}: CKM needs a <RECORDKEY> variable")
    key = keys[0]
    found = {k.upper(): v.strip().strip('"') for k, v in key.cell_key.items()}
    settings = dict(record_key=key.name, digits=key.decimals or 8,
                    ptable=found.get("PFILE", found.get("PFILE_FREQ", "")),
                    ptable_cont=found.get("PFILE_CONT", ""),
                    ptable_sep=found.get("PFILE_SEP", ""))
    if response == FREQUENCY:
        return CKMSettings(**settings)
    variable = metadata.variable(response)
    options = {k.upper(): v.strip() for k, v in variable.cell_key.items()}
    kind = options.get("CKM", "N").upper()
    match = re.fullmatch(r"([TMDVN])\s*(?:\(\s*(\d+)\s*\))?", kind)
    if match is None or match.group(1) == "N":
        raise InputError(f"{metadata.path}: variable {variable.name} has <CKM> "
                         f"{kind or 'N'}: the cell key method is not allowed for it (use T(k), "
                         "M, D or V)")
    top_k = int(match.group(2) or 1) if match.group(1) == "T" else 1
    if "SCALING" not in options:
        raise InputError(f"{metadata.path}: variable {variable.name} needs <SCALING> for CKM")
    return CKMSettings(
        **settings, base=CKM_BASES[match.group(1)],
        include_zeros=options.get("INCLUDEZEROS", "N").upper() == "Y",
        parity=options.get("PARITY", "N").upper() == "Y",
        separation=options.get("SEPARATION", "N").upper() == "Y",
        flex=parse_scaling(options["SCALING"], top_k))


def check_ckm(metadata: Metadata | None, response: str, tabular: bool) -> CKMSettings:
    """What a job needs for ``SUPPRESS CKM`` on a table with this response, checked before
    any work: microdata (not tabular input) and the settings of :func:`ckm_settings`."""
    if tabular or metadata is None or metadata.kind == "table":
        raise InputError("CKM needs microdata with record keys (OPENMICRODATA), not tabular "
                         "input")
    return ckm_settings(metadata, response)


def split_ckm_argument(argument: str) -> tuple[str, list[str]]:
    """``CKM(n) rest``: the table number and the ``|``-separated parts of the rest (file
    names unquoted; empty parts kept).

    Examples
    --------
    >>> split_ckm_argument('CKM(1) "cont.txt" | | 2.5')
    ('1', ['cont.txt', '', '2.5'])
    >>> split_ckm_argument("CKM(2)")
    ('2', [])
    """
    match = re.fullmatch(r"\s*CKM\s*\(\s*([^)]*?)\s*\)\s*(.*)", argument, flags=re.I | re.S)
    if match is None:
        raise InputError(f"expected CKM(table number) [parameters], not {argument!r}")
    rest = match.group(2).strip()
    if not rest or rest.startswith("//"):
        return match.group(1), []
    return match.group(1), [part.strip().strip('"') for part in rest.split("|")]


def perturb_job(table: Table, response: str, data: pd.DataFrame, metadata: Metadata,
                parts: list[str], folder: Path, *, weight: str | None = None,
                recodes: Mapping[str, tuple[Hierarchy, dict]] | None = None,
                progress: Callable[[str], None] | None = None):
    """Perturb a job's table (its rules already applied: ``status`` ``u`` cells get
    ``mu_c``); returns the result and a note for the log.

    ``parts`` are the batch parameters after ``CKM(n)`` (:func:`split_ckm_argument`),
    ``recodes`` the job's recodes (``dim -> (hierarchy, moved codes)``).
    """
    settings = ckm_settings(metadata, response)
    say = progress or (lambda line: None)
    for dim, (_, moved) in (recodes or {}).items():
        if moved and dim in table.dims:
            data = data.assign(**{dim: data[dim].replace(moved)})
    dims = list(table.dims)

    def ptable(name: str, what: str):
        if not name:
            raise InputError(f"CKM needs a p-table file for {what} (in the metadata or the "
                             "SUPPRESS command)")
        path = resolve_path(name, folder)
        if not path.exists():
            path = resolve_path(name, metadata.folder)
        if not path.exists():
            raise InputError(f"p-table file {name} not found (looked in {folder} and "
                             f"{metadata.folder})")
        say(f"Using p-table file {path.name} ({what})")
        return read_ptable(path)

    if response == FREQUENCY:
        if weight is not None:
            raise InputError("CKM on a weighted frequency table is not supported here")
        counts = ptable(parts[0] if parts and parts[0] else settings.ptable, "counts")
        result = perturb_counts(data, dims, counts, record_key=settings.record_key,
                                hierarchies=table.hierarchies, digits=settings.digits,
                                progress=progress)
        return result, f"frequency table, {int(np.count_nonzero(result.noise))} cells changed"
    cont = ptable(parts[0] if parts and parts[0] else settings.ptable_cont, "magnitudes")
    small = None
    if settings.separation:
        small = ptable(parts[1] if len(parts) > 1 and parts[1] else settings.ptable_sep,
                       "small values")
    mu_c = 0.0
    if len(parts) > 2 and parts[2]:
        try:
            mu_c = float(parts[2])
        except ValueError:
            raise InputError(f"mu_c = {parts[2]!r} is not a number") from None
    result = perturb_magnitudes(
        data, dims, response, cont, settings.flex, record_key=settings.record_key,
        hierarchies=table.hierarchies, digits=settings.digits, base=settings.base,
        small_ptable=small, parity=settings.parity, include_zeros=settings.include_zeros,
        sensitive=table.cells["status"].eq("u"), mu_c=mu_c, weight=weight,
        progress=progress)
    return result, (f"magnitude table ({settings.base}, top {settings.flex.top_k}), mu_c "
                    f"{mu_c:g} on {int(result.sensitive.sum())} unsafe cells")


def run_ckm(table: Table, response: str, data: pd.DataFrame, metadata: Metadata,
            argument: str, folder: Path, *, weighted: bool = False,
            recodes: Mapping[str, tuple[Hierarchy, dict]] | None = None,
            progress: Callable[[str], None] | None = None):
    """``SUPPRESS CKM(n) ...`` on a job's table: a
    :class:`~tabsdc.io.argus._protect.ProtectionOutcome` whose table holds the perturbed
    values and, as text, each cell's key (``cell_key``, for output type 7)."""
    from tabsdc.io.argus._protect import ProtectionOutcome

    say = progress or (lambda line: None)
    check_ckm(metadata, response, tabular=False)
    _, parts = split_ckm_argument(argument)
    weights = metadata.with_role("weight") if weighted else []
    result, note = perturb_job(table, response, data, metadata, parts, folder,
                               weight=weights[0].name if weights else None, recodes=recodes,
                               progress=progress)
    digits = result.digits
    published = result.table.with_columns(cell_key=np.char.mod(
        f"%.{digits}f", key_fraction(result.cell_keys, digits)))
    say(f"The Cell Key Method has been applied: {note}")
    return ProtectionOutcome(published, result.original, "cell key method", True,
                             result.to_dict())


def write_ckm_output(published: Table, original: Table, path: Path, options, *,
                     response: str, decimals: int = 0) -> list[str]:
    """Output type 7 (module text) and its ``.rda``; returns notes for the log.

    Without ``AO``, ``AD`` and ``AC`` the file holds codes and perturbed values only and is
    publishable: it goes through the one door, :func:`tabsdc._release.write_release`, and
    ``SE+`` leaves out the cells published as zero (tau-ARGUS leaves out the cells whose
    original count is zero, which tells a reader which published zeros were not empty). With
    any of them the file holds originals or keys: it is internal, and its ``.rda`` and the log
    say so.

    Raises
    ------
    InputError
        A table that was not perturbed by the cell key method.
    """
    if "cell_key" not in published.cells:
        raise InputError("WRITETABLE type 7 (CKM) needs a table perturbed by SUPPRESS CKM")
    codes = published.cells.index.to_frame(index=False).astype(str)
    codes.columns = list(published.dims)
    if options.get("QU", True):
        codes = '"' + codes + '"'

    def numbers(values: np.ndarray) -> np.ndarray:
        return np.char.mod(f"%.{decimals}f", np.asarray(values, float) + 0.0)

    keys = published.cells["cell_key"].astype(str).to_numpy()
    fields = {response: numbers(published.values)}
    if options.get("AO", False):
        fields["Orig"] = numbers(original.values)
    if options.get("AD", False):
        fields["Diff"] = numbers(published.values - original.values)
    if options.get("AC", False):
        fields["CellKey"] = keys
    internal = len(fields) > 1
    shown = np.arange(published.n_cells)
    if options.get("SE", False):
        empty = (original.cells["freq"].to_numpy(float) == 0) if internal and \
            "freq" in original.cells else published.values == 0
        shown = shown[~empty]
    rda = path.with_suffix(".rda")
    if internal:
        rows = np.column_stack([codes.to_numpy(str)[shown], *(f[shown] for f in
                                                              fields.values())])
        write_text(path, "\n".join(";".join(r) for r in rows) + "\n", encoding="latin-1")
    else:
        write_release(path, codes.iloc[shown].reset_index(drop=True),
                      pd.DataFrame(fields).iloc[shown].reset_index(drop=True),
                      header=False, sep=";", quoting=False, encoding="latin-1")
    variables = [Variable(name=d, explanatory=True) for d in published.dims]
    key_digits = len(keys[0].split(".")[-1]) if len(keys) else 0
    variables += [Variable(name=n, numeric=True, decimals=key_digits if n == "CellKey"
                           else decimals) for n in fields]
    text = format_rda(Metadata(tuple(variables), kind="free", separator=";", path=str(rda)))
    write_text(rda, f"// {CONFIDENTIAL}\n{text}" if internal else text, encoding="latin-1")
    notes = [f"CKM file: {len(shown)} cells; metadata written to {rda.name}"]
    if internal:
        notes.append(f"{path.name}: {CONFIDENTIAL} (AO+, AD+ or AC+: an internal file, not "
                     "for publication)")
    return notes

