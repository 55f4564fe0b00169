"""tau-ARGUS metadata files (``.rda``): the layout and roles of the variables of a job.

One variable per main line, then option lines starting with a ``<KEYWORD>`` (manual 5.1):

* fixed-format microdata: ``name start width [missing1 [missing2]]``;
* free-format microdata (first line ``<SEPARATOR> ","``): ``name width [missing ...]``;
* tabular input (``.tab``; separator always given): ``name [missing ...]``, the columns of
  the file in the order of the variables.

Keywords read (tau-ARGUS 4.1 and its cell-key extensions): ``<RECODEABLE>`` (also spelled
``<RECODABLE>``), ``<TOTCODE>``, ``<DISTANCE>``, ``<CODELIST>``, ``<HIERARCHICAL>``,
``<HIERLEVELS>``, ``<HIERCODELIST>``, ``<HIERLEADSTRING>``, ``<NUMERIC>`` (with ``<SHADOW>``,
``<COST>``/``<COSTVAR>``, ``<LOWERPL>``, ``<UPPERPL>`` for tables), ``<DECIMALS>``,
``<WEIGHT>``, ``<HOLDING>``, ``<REQUEST>``, ``<FREQUENCY>``, ``<MAXSCORE>``, ``<STATUS>``,
``<SAFE>``, ``<UNSAFE>``, ``<PROTECT>``, ``<SEPARATOR>``, ``<TRUNCABLE>``, and the cell-key
keywords ``<RECORDKEY>``, ``<CKM>``, ``<PFILE>``, ``<PFILE_FREQ>``, ``<PFILE_CONT>``,
``<PFILE_SEP>``, ``<INCLUDEZEROS>``, ``<PARITY>``, ``<SCALING>``, ``<SEPARATION>`` (kept in
:attr:`Variable.cell_key`, read by :mod:`tabsdc.io.argus._ckm`).
``<SPSS>`` metadata is refused: the data sit in an SPSS system file that only SPSS reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sdcreport._files import write_text
from tabsdc.io.argus._syntax import (
    ArgusFormatError,
    SourceLine,
    content_lines,
    quote,
    split_tokens,
)

Kind = Literal["fixed", "free", "table"]

_CELL_KEY = ("<RECORDKEY>", "<CKM>", "<PFILE>", "<PFILE_FREQ>", "<PFILE_CONT>", "<PFILE_SEP>",
             "<INCLUDEZEROS>", "<PARITY>", "<SCALING>", "<SEPARATION>")
_TABLE_ROLES = {"<SHADOW>": "shadow", "<COST>": "cost", "<COSTVAR>": "cost",
                "<LOWERPL>": "lower_pl", "<UPPERPL>": "upper_pl"}
_ROLE_KEYWORDS = {"<WEIGHT>": "weight", "<HOLDING>": "holding", "<FREQUENCY>": "frequency",
                  "<MAXSCORE>": "top", "<STATUS>": "status", "<REQUEST>": "request"}


@dataclass(frozen=True)
class Variable:
    """One variable of an ``.rda`` file.

    Attributes
    ----------
    name : str
    start, width : int
        1-based first column and width (fixed format; ``start`` 0 otherwise, ``width`` 0
        for tabular input).
    missing : tuple of str
        Missing-value codes (a spanning variable's missing codes are codes of its own, added
        at the top level of its hierarchy).
    explanatory : bool
        ``<RECODEABLE>``: a spanning variable.
    numeric : bool
        ``<NUMERIC>``: a response variable.
    role : str
        ``""`` or one of ``weight``, ``holding``, ``request``, ``frequency``, ``top``,
        ``status``, ``shadow``, ``cost``, ``lower_pl``, ``upper_pl``, ``record_key``.
    decimals : int
    total_code : str
        ``<TOTCODE>`` (default ``"Total"``).
    codelist, hierarchy_file : str
        File names as written (``<CODELIST>``, ``<HIERCODELIST>``).
    hierarchical : bool
    hier_levels : tuple of int
        ``<HIERLEVELS>`` widths (empty when the hierarchy comes from a file).
    lead_string : str
        ``<HIERLEADSTRING>`` (default ``"@"``).
    distance : tuple of int
        ``<DISTANCE>`` weights (for cost -3).
    request_codes : tuple of str
        ``<REQUEST>`` codes: the contributors that asked for protection.
    cell_key : dict
        Cell-key keywords as written (read by :mod:`tabsdc.io.argus._ckm`).
    """

    name: str
    start: int = 0
    width: int = 0
    missing: tuple[str, ...] = ()
    explanatory: bool = False
    numeric: bool = False
    role: str = ""
    decimals: int = 0
    total_code: str = "Total"
    codelist: str = ""
    hierarchical: bool = False
    hier_levels: tuple[int, ...] = ()
    hierarchy_file: str = ""
    lead_string: str = "@"
    distance: tuple[int, ...] = ()
    request_codes: tuple[str, ...] = ()
    truncable: bool = False
    cell_key: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Metadata:
    """The content of an ``.rda`` file.

    Attributes
    ----------
    variables : tuple of Variable
        In file order (for ``.tab`` and free-format files: the column order).
    kind : {"fixed", "free", "table"}
    separator : str
        Field separator of free-format and tabular files.
    safe, unsafe, protect : str
        Status codes of tabular input (defaults ``S``, ``U``, ``P``).
    path : str
        The file read (for messages and for finding the files it names).
    """

    variables: tuple[Variable, ...]
    kind: Kind = "fixed"
    separator: str = ""
    safe: str = "S"
    unsafe: str = "U"
    protect: str = "P"
    path: str = "<text>"

    def variable(self, name: str) -> Variable:
        """The variable called ``name`` (letter case ignored, as tau-ARGUS does).

        Raises
        ------
        ArgusFormatError
            Naming the metadata file and the variables it has.
        """
        for variable in self.variables:
            if variable.name.lower() == name.lower():
                return variable
        raise ArgusFormatError(
            f"{self.path}: no variable {name!r}; it describes "
            + ", ".join(v.name for v in self.variables))

    def with_role(self, *roles: str) -> list[Variable]:
        """The variables with any of the given roles, in file order."""
        return [v for v in self.variables if v.role in roles]

    @property
    def folder(self) -> Path:
        """The folder of the metadata file (where the files it names are looked for)."""
        return Path(self.path).parent


def read_rda(path: str | Path, kind: Kind | None = None) -> Metadata:
    """Read an ``.rda`` file; ``kind`` ``"table"`` for tabular input (default: guessed).

    The guess: ``table`` when the file uses a keyword of tabular metadata (``<FREQUENCY>``,
    ``<MAXSCORE>``, ``<STATUS>``, ``<SAFE>``, ``<SHADOW>``, ``<LOWERPL>`` ...) or when a
    variable line carries no width; otherwise ``free`` after a ``<SEPARATOR>``, else
    ``fixed``. tau-ARGUS itself knows it from the data command (``OPENTABLEDATA`` or
    ``OPENMICRODATA``), which is what the batch runner passes.
    """
    path = Path(path)
    return parse_rda(path.read_text(encoding="latin-1"), kind=kind, path=str(path))


def parse_rda(text: str, kind: Kind | None = None, path: str = "<text>") -> Metadata:
    """Parse the text of an ``.rda`` file (see :func:`read_rda`).

    Raises
    ------
    ArgusFormatError
        Naming file, line and field: an unknown keyword, a keyword before any variable, a
        width or position that is not a number, ``<HIERLEVELS>`` that do not add up to the
        width, ``<SPSS>`` metadata.

    Examples
    --------
    >>> meta = parse_rda('''<SEPARATOR> ";"
    ... Region "99"
    ...   <RECODEABLE>
    ...   <TOTCODE> "Total"
    ... Turnover
    ...   <NUMERIC>
    ...   <DECIMALS> 2
    ... Status
    ...   <STATUS>''')
    >>> meta.kind, [v.name for v in meta.variables], meta.variable("turnover").decimals
    ('table', ['Region', 'Turnover', 'Status'], 2)
    """
    lines = list(content_lines(text, path))
    kind = kind or _guess_kind(lines)
    header: dict[str, str] = {"separator": "", "safe": "S", "unsafe": "U", "protect": "P"}
    variables: list[dict] = []
    for line in lines:
        tokens = split_tokens(line.text)
        if not tokens[0].startswith("<"):
            variables.append(_main_line(line, tokens, kind))
            continue
        keyword, args = tokens[0], tokens[1:]
        if keyword == "<SPSS>":
            raise line.error("<SPSS> metadata: the data are an SPSS system file, which only "
                             "SPSS reads; export them as fixed-width or CSV text first")
        if keyword in ("<SEPARATOR>", "<SAFE>", "<UNSAFE>", "<PROTECT>"):
            header[keyword.strip("<>").lower()] = _one(line, keyword, args)
            continue
        if not variables:
            raise line.error(f"field 1: {keyword} before the first variable")
        _option(line, keyword, args, variables[-1], kind)
    if kind == "free" and not header["separator"]:
        raise ArgusFormatError(f"{path}: free-format metadata without <SEPARATOR>")
    if kind == "table" and not header["separator"]:
        raise ArgusFormatError(f"{path}: tabular metadata without <SEPARATOR>")
    return Metadata(tuple(Variable(**v) for v in variables), kind=kind, path=path,
                    **header)


def _guess_kind(lines: Sequence[SourceLine]) -> Kind:
    table_words = ("<FREQUENCY>", "<MAXSCORE>", "<STATUS>", "<SAFE>", "<UNSAFE>",
                   "<PROTECT>", "<SHADOW>", "<COST>", "<COSTVAR>", "<LOWERPL>", "<UPPERPL>")
    separator = False
    for line in lines:
        tokens = split_tokens(line.text)
        if tokens[0] == "<SEPARATOR>":
            separator = True
        elif any(t in table_words for t in tokens):
            return "table"
    if not separator:
        return "fixed"
    for line in lines:
        stripped = line.text.split()
        if not stripped[0].startswith("<") and (len(stripped) < 2 or not stripped[1].isdigit()):
            return "table"
    return "free"


def _main_line(line: SourceLine, tokens: list[str], kind: Kind) -> dict:
    numbers = {"fixed": ("start", "width"), "free": ("width",), "table": ()}[kind]
    variable: dict = {"name": tokens[0]}
    for position, name in enumerate(numbers, start=2):
        if len(tokens) < position:
            raise line.error(f"field {position} ({name} of {tokens[0]}) is missing")
        variable[name] = _integer(line, tokens[position - 1], position, name)
    missing = tuple(tokens[1 + len(numbers):])
    if kind != "table" and any(len(m) > variable["width"] for m in missing):
        raise line.error(f"field {2 + len(numbers)}: missing value longer than the width "
                         f"{variable['width']} of {tokens[0]}")
    variable["missing"] = tuple(m.strip() for m in missing)
    return variable


def _option(line: SourceLine, keyword: str, args: list[str], variable: dict, kind: Kind) -> None:
    if keyword in ("<RECODEABLE>", "<RECODABLE>"):
        variable["explanatory"] = True
    elif keyword == "<NUMERIC>":
        variable["numeric"] = True
        if args:
            if kind != "table" or args[0] not in _TABLE_ROLES:
                raise line.error(f"field 2: unknown token {args[0]!r} after <NUMERIC>")
            variable["role"] = _TABLE_ROLES[args[0]]
    elif keyword in _ROLE_KEYWORDS:
        variable["role"] = _ROLE_KEYWORDS[keyword]
        if keyword == "<REQUEST>":
            variable["request_codes"] = tuple(args)
    elif keyword == "<TOTCODE>":
        variable["total_code"] = _one(line, keyword, args)
    elif keyword in ("<CODELIST>", "<HIERCODELIST>"):
        key = "codelist" if keyword == "<CODELIST>" else "hierarchy_file"
        variable[key] = _one(line, keyword, args)
    elif keyword == "<HIERLEADSTRING>":
        variable["lead_string"] = _one(line, keyword, args)
    elif keyword == "<HIERARCHICAL>":
        variable["hierarchical"] = True
    elif keyword == "<HIERLEVELS>":
        levels = tuple(_integer(line, a, i, "level width") for i, a in enumerate(args, 2))
        width = variable.get("width", 0) or sum(levels)
        if sum(levels) != width or not levels:
            raise line.error(f"<HIERLEVELS> {' '.join(args)} add up to {sum(levels)}, not to "
                             f"the width {width} of {variable['name']}")
        variable.update(hierarchical=True, hier_levels=levels, width=width)
    elif keyword == "<DISTANCE>":
        variable["distance"] = tuple(_integer(line, a, i, "distance")
                                     for i, a in enumerate(args, 2))
    elif keyword == "<DECIMALS>":
        variable["decimals"] = _integer(line, _one(line, keyword, args), 2, "decimals")
    elif keyword == "<TRUNCABLE>":
        variable["truncable"] = True
    elif keyword in _CELL_KEY:
        variable.setdefault("cell_key", {})[keyword.strip("<>")] = " ".join(args)
        if keyword == "<RECORDKEY>":
            variable["role"] = "record_key"
    else:
        raise line.error(f"field 1: unknown keyword {keyword}")


def _one(line: SourceLine, keyword: str, args: list[str]) -> str:
    if not args:
        raise line.error(f"field 2: {keyword} needs a value")
    return args[0]


def _integer(line: SourceLine, token: str, position: int, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise line.error(f"field {position} ({what}): {token!r} is not a whole number") \
            from None


# -- writing ------------------------------------------------------------------------------------
def format_rda(metadata: Metadata) -> str:
    """The text of an ``.rda`` file describing ``metadata`` (read back by :func:`parse_rda`).

    Examples
    --------
    >>> meta = Metadata((Variable("Size", start=1, width=2, explanatory=True),
    ...                  Variable("Var2", start=3, width=8, numeric=True, decimals=2)))
    >>> parse_rda(format_rda(meta)).variables == meta.variables
    True
    """
    lines = []
    if metadata.kind != "fixed":
        lines.append(f"<SEPARATOR> {quote(metadata.separator)}")
    if metadata.kind == "table":
        lines += [f"<SAFE> {quote(metadata.safe)}", f"<UNSAFE> {quote(metadata.unsafe)}",
                  f"<PROTECT> {quote(metadata.protect)}"]
    for v in metadata.variables:
        head = [v.name]
        if metadata.kind == "fixed":
            head.append(str(v.start))
        if metadata.kind != "table":
            head.append(str(v.width))
        lines.append(" ".join(head + [quote(m) for m in v.missing]))
        lines += [f"  {option}" for option in _options(v, metadata.kind)]
    return "\n".join(lines) + "\n"


def _options(v: Variable, kind: Kind) -> list[str]:
    options = []
    if v.explanatory:
        options.append("<RECODEABLE>")
        if kind == "table" or v.total_code != "Total":
            options.append(f"<TOTCODE> {quote(v.total_code)}")
    if v.codelist:
        options.append(f"<CODELIST> {quote(v.codelist)}")
    if v.hier_levels:
        options.append("<HIERARCHICAL>")
        options.append("<HIERLEVELS> " + " ".join(map(str, v.hier_levels)))
    elif v.hierarchical:
        options += ["<HIERARCHICAL>", f"<HIERCODELIST> {quote(v.hierarchy_file)}",
                    f"<HIERLEADSTRING> {quote(v.lead_string)}"]
    if v.distance:
        options.append("<DISTANCE> " + " ".join(map(str, v.distance)))
    table_role = {r: k for k, r in _TABLE_ROLES.items() if k != "<COSTVAR>"}
    if v.numeric:
        options.append("<NUMERIC>" + (f" {table_role[v.role]}" if v.role in table_role else ""))
    role_keyword = {r: k for k, r in _ROLE_KEYWORDS.items()}
    if v.role in role_keyword:
        options.append(" ".join([role_keyword[v.role], *map(quote, v.request_codes)]))
    if v.decimals:
        options.append(f"<DECIMALS> {v.decimals}")
    if v.truncable:
        options.append("<TRUNCABLE>")
    options += [f"<{k}> {a}".rstrip() for k, a in v.cell_key.items()]
    return options


def write_rda(metadata: Metadata, path: str | Path) -> Path:
    """Write ``metadata`` as an ``.rda`` file; returns the path."""
    return write_text(path, format_rda(metadata), encoding="latin-1")
