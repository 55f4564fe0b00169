"""docs/api.md lists the public API: the ``__all__`` of every package's ``__init__``.

The page is generated from the packages: ``python tests/test_api_page.py`` writes it again
(after a name is added to or removed from an ``__all__``); the test checks that the page
and the ``__all__`` agree, package by package and name by name, in order.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api.md"

#: The packages of the toolkit, whose sub-packages are listed too.
PACKAGES = ("tabsdc", "microsdc", "sdcreport")

INTRO = """# Public API

What each package gives: the names in the `__all__` of its `__init__`, the public surface
that is kept from release to release (a renamed name keeps working for one release with a
`DeprecationWarning`). Modules not listed here, and names not in these lists, are the
packages' insides: they may change without notice. Each name's documentation is its
docstring (`help(tabsdc.suppress)`); the guides in this folder show them at work.

This page is generated from the packages (`python tests/test_api_page.py` writes it again);
`tests/test_api_page.py` checks that it and the `__all__` agree.
"""


def packages() -> list[str]:
    """Every public package (a folder with ``__init__.py``, no part of its name private) of
    :data:`PACKAGES` whose ``__init__`` defines ``__all__``, in name order."""
    found = []
    for top in PACKAGES:
        package = importlib.import_module(top)
        names = [top] + [m.name for m in pkgutil.walk_packages(package.__path__, top + ".")
                         if m.ispkg and not any(p.startswith("_") for p in m.name.split("."))]
        found += [n for n in names if "__all__" in vars(importlib.import_module(n))]
    return sorted(found)


def kind(value: object) -> str:
    if inspect.isclass(value):
        return "exception" if issubclass(value, BaseException) else "class"
    if callable(value):
        return "function"
    if inspect.ismodule(value):
        return "module"
    return "constant"


def summary(value: object) -> str:
    """The first paragraph of the docstring (a class's or function's own, not its type's);
    a constant's value when it is short."""
    if not (inspect.isclass(value) or callable(value) or inspect.ismodule(value)):
        text = repr(value)
        return f"`{text}`" if len(text) <= 60 and "\n" not in text else ""
    doc = inspect.getdoc(value) or ""
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    return first.replace("|", "\\|")


def api_page() -> str:
    lines = [INTRO]
    for name in packages():
        package = importlib.import_module(name)
        lines += [f"## `{name}`", "", "| name | kind | what it is |", "|---|---|---|"]
        for public in package.__all__:
            value = getattr(package, public)
            lines.append(f"| `{public}` | {kind(value)} | {summary(value)} |")
        lines.append("")
    return "\n".join(lines)


def page_names(text: str) -> dict[str, list[str]]:
    """Package -> the names its section of the page lists, in order."""
    listed: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            current = listed.setdefault(heading.group(1), [])
        elif current is not None and (row := re.match(r"\| `(\w+)` \|", line)):
            current.append(row.group(1))
    return listed


def test_the_page_lists_the_all_of_every_package():
    listed = page_names(PAGE.read_text(encoding="utf-8"))
    assert list(listed) == packages()
    for name, names in listed.items():
        assert names == list(importlib.import_module(name).__all__), name


def test_every_name_of_every_all_exists_once():
    for name in packages():
        package = importlib.import_module(name)
        assert len(set(package.__all__)) == len(package.__all__), name
        assert [n for n in package.__all__ if not hasattr(package, n)] == [], name


def test_the_page_reader_sees_sections_and_rows():
    text = "## `a`\n\n| name | kind | what |\n|---|---|---|\n| `f` | function | F. |\n## `a.b`\n"
    assert page_names(text) == {"a": ["f"], "a.b": []}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    PAGE.write_text(api_page(), encoding="utf-8")
    print(f"wrote {PAGE}")
