"""tau-ARGUS codelists (``.cdl``): labels of the codes of a spanning variable.

One ``code,label`` per line (manual 5.3). Labels only name codes in output; a code missing
from the codelist, or listed but absent from the data, is no error.
"""

from __future__ import annotations

from pathlib import Path

from tabsdc.io.argus._syntax import content_lines


def read_cdl(path: str | Path) -> dict[str, str]:
    """Read a ``.cdl`` file: ``{code: label}`` with codes stripped of blanks."""
    path = Path(path)
    return parse_cdl(path.read_text(encoding="latin-1"), path=str(path))


def parse_cdl(text: str, path: str = "<text>") -> dict[str, str]:
    """Parse the text of a ``.cdl`` file (see :func:`read_cdl`).

    Raises
    ------
    ArgusFormatError
        Naming file and line for a line without the comma between code and label.

    Examples
    --------
    >>> parse_cdl(" 1,Groningen\\nNr,North\\n")
    {'1': 'Groningen', 'Nr': 'North'}
    """
    labels = {}
    for line in content_lines(text, path):
        code, comma, label = line.text.partition(",")
        if not comma:
            raise line.error(f"field 2: no ',' between code and label in {line.text!r}")
        labels[code.strip().strip('"')] = label.strip().strip('"')
    return labels
