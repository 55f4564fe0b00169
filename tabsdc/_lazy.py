"""A package's public names, imported from their modules when first used (PEP 562).

``tabsdc`` and ``microsdc`` name their public functions and classes at the top
(``from tabsdc import Table``) without importing them when the package is imported: a light
module (:mod:`tabsdc._errors`, a command line's ``--help``) then loads neither pandas nor SciPy.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, sources: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``sources`` (name ->
    the module that defines it) is imported on first use and kept in the package.

    Examples
    --------
    >>> getattr_, dir_ = lazy_names("tabsdc", {"Table": "tabsdc._table"})
    >>> getattr_("Table").__name__, "Table" in dir_()
    ('Table', True)
    """

    def __getattr__(name: str) -> Any:
        if name not in sources:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(sources[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *sources})

    return __getattr__, __dir__
