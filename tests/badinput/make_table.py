"""Write the table of bad inputs in ``docs/reliability.md`` from the suite's cases.

Run from the repository root::

    python -m tests.badinput.make_table

Every case of ``cases.py`` is run (as the suite runs it) and its outcome written between the
``<!-- bad inputs -->`` markers of the page; ``test_make_table.py`` fails when the page is
out of date.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from .cases import CASES, Case, Outcome, run_case, write_inputs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
START, END = "<!-- bad inputs: start -->", "<!-- bad inputs: end -->"


def _outcome_text(case: Case, outcome: Outcome, folder: Path) -> str:
    if case.xfail:
        return f"known gap: {case.xfail}"
    if case.accepted:
        return f"accepted, exit status {outcome.status}" if outcome.status is not None \
            else "accepted"
    message = outcome.message.replace(f"{folder}/", "").replace(str(folder), ".")
    message = message.replace("|", "\\|")
    if outcome.status is None:
        return f"`{outcome.error.rpartition('.')[2]}`: {message}"
    return f"exit status {outcome.status}: {message}"


def table() -> str:
    """The markdown table: one row per case, with the outcome it gets today."""
    rows = ["| # | category | bad input | command or call | outcome |", "|---|---|---|---|---|"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, case in enumerate(CASES, 1):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                write_inputs(folder, case)
                outcome = run_case(case, folder)
                rows.append(f"| {number} | {case.category} | {case.what} | {case.where} | "
                            f"{_outcome_text(case, outcome, folder)} |")
    return "\n".join(rows)


def updated_page(text: str) -> str:
    """``text`` with the table between the markers replaced by :func:`table`."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(updated_page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"{len(CASES)} cases written to {PAGE}")
