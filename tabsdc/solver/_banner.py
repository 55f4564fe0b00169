"""HiGHS's start-up banner, kept off the user's terminal.

highspy prints ``Running HiGHS x.y.z (git hash ...) Copyright ...`` and a licence line to the
C-level standard output when the *first* ``Highs`` object of a process is constructed, before
any option (``output_flag``) can be set (HiGHS issue #1932). :func:`absorb_highs_banner`
constructs that first object once with file descriptor 1 pointed at ``os.devnull``, so every
later object (ours or PuLP's) starts silently. Solver logs asked for on purpose
(``verbose=True``) are unaffected: they come from ``run()``, not from the constructor.
"""

from __future__ import annotations

import os
import sys
from functools import cache

import highspy


@cache
def absorb_highs_banner() -> None:
    """Construct the process's first ``Highs`` object with standard output muted.

    Called before every ``Highs`` object the toolkit makes or makes PuLP make; only the first
    call does anything. Where file descriptor 1 cannot be redirected (closed or not a file),
    the object is constructed as is.

    Examples
    --------
    >>> absorb_highs_banner()   # prints nothing, now or on any later Highs() construction
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:
        highspy.Highs()
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
