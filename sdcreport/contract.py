"""The contract every result of the toolkit keeps, whatever method made it.

As statsmodels' ``Results`` and scipy's ``OptimizeResult``: an operation returns an immutable
result object, and every such object can be read the same way:

* ``status`` (a word: ``"optimal"``, ``"feasible"``, ``"protected"``, ``"applied"`` ...) and
  ``seconds`` (time taken);
* ``summary()`` (text for the terminal), ``to_frame()`` (the per-cell or per-record numbers),
  ``to_dict()`` (JSON-ready; the CLI's ``--json``) and ``to_report()`` (a
  :class:`sdcreport.Section` for the HTML/Markdown report);
* results on tables also have ``original`` (the input table) and ``table`` (the output);
* every check (an audit, a verification) has ``passed``.

The reporting layer states the contract and imports nothing of the methods; a test runs
every result class of the toolkit through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import pandas as pd

    from sdcreport.report import Section

__all__ = ["Result", "TableResult", "Check"]


@runtime_checkable
class Result(Protocol):
    """What every result offers (see the module text)."""

    @property
    def status(self) -> str: ...

    @property
    def seconds(self) -> float: ...

    def summary(self) -> str: ...

    def to_frame(self) -> pd.DataFrame: ...

    def to_dict(self) -> dict[str, Any]: ...

    def to_report(self) -> Section: ...


@runtime_checkable
class TableResult(Result, Protocol):
    """A result on a table: the input as ``original``, the output as ``table``."""

    @property
    def original(self) -> Any: ...

    @property
    def table(self) -> Any: ...


@runtime_checkable
class Check(Protocol):
    """A check of a result: ``passed`` is its verdict."""

    @property
    def passed(self) -> bool: ...
