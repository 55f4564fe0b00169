"""Command line of :mod:`tabsdc`: ``tabsdc rules``, ``protect``, ``audit``, ``round``,
``adjust`` and ``demo``, one module per command.

Shared options live in :mod:`tabsdc.cli._options`, file reading and writing in
:mod:`tabsdc.cli._io`, and the runner shared with ``microsdc`` (exit statuses 0 ok, 1 not
protected or a check failed, 2 bad input, 3 internal error, 130 interrupted) in
:mod:`tabsdc.cli._main`. Every command prints a short summary and writes its results as
files, each checked before the work starts and written whole or not at all.
"""

from tabsdc.cli._main import main

__all__ = ["main"]
