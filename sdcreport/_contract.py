"""The contract every result of the toolkit keeps, whatever method made it.

As statsmodels' ``Results`` and scipy's ``OptimizeResult``: an operation returns an immutable
result object, and every such object can be read the same way:

* ``status`` (a word: ``"optimal"``, ``"feasible"``, ``"protected"``, ``"applied"`` ...; a
  member of its family's enumeration in :mod:`sdcreport._statuses`, a ``str``) and
  ``seconds`` (time taken);
* ``summary()`` (text for the terminal), ``to_frame()`` (the per-cell or per-record numbers),
  ``to_dict()`` (JSON-ready; the CLI's ``--json``) and ``to_report()`` (a
  :class:`sdcreport.Section` for the HTML/Markdown report);
* results on tables also have ``original`` (the input table) and ``table`` (the output);
* every check (an audit, a verification) has ``passed``.

Every result class of the toolkit inherits :class:`ResultBase`, which gives ``to_dict``
(``status`` and ``seconds`` first, then the class's own fields) and turns a status given as
a word into its family's member. The reporting layer states the contract and imports nothing
of the methods; a test runs every subclass of :class:`ResultBase` through it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from sdcreport._statuses import Status

if TYPE_CHECKING:
    import pandas as pd

    from sdcreport._report import Section


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


class ResultBase(ABC):
    """The base of every result class (as statsmodels' ``Results``).

    A subclass is a frozen dataclass with ``status`` (a property or a field) and ``seconds``
    (a field), names its family of statuses in :attr:`statuses` and writes
    :meth:`summary`, :meth:`to_frame`, :meth:`to_report` and :meth:`_dict_fields` (its own
    JSON fields); :meth:`to_dict` is theirs after ``status`` and ``seconds``. A ``status``
    field given as a word becomes the member of :attr:`statuses` (a word outside the family
    is a ``ValueError``), so ``result.status == "optimal"`` and
    ``result.status is SolveStatus.OPTIMAL`` both hold.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import pandas as pd
    >>> from sdcreport import Section
    >>> from sdcreport._statuses import FitStatus
    >>> @dataclass(frozen=True)
    ... class Fit(ResultBase):
    ...     status: FitStatus
    ...     seconds: float
    ...     sweeps: int
    ...     statuses = FitStatus
    ...     def summary(self): return f"{self.status} after {self.sweeps} sweeps"
    ...     def to_frame(self): return pd.DataFrame({"sweeps": [self.sweeps]})
    ...     def to_report(self): return Section("Fit").add_text(self.summary())
    ...     def _dict_fields(self): return {"sweeps": self.sweeps}
    >>> fit = Fit("converged", 0.25, 3)
    >>> fit.status is FitStatus.CONVERGED, fit.to_dict()
    (True, {'status': 'converged', 'seconds': 0.25, 'sweeps': 3})
    """

    #: The family of the statuses this result says (a :class:`~sdcreport._statuses.Status`).
    statuses: ClassVar[type[Status]] = Status

    def __post_init__(self) -> None:
        word = self.__dict__.get("status")  # a field; a property is not in the instance
        if word is not None and not isinstance(word, self.statuses):
            object.__setattr__(self, "status", self.statuses(word))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``status`` (its word), ``seconds``, then :meth:`_dict_fields`."""
        return {"status": str(self.status), "seconds": float(self.seconds),  # type: ignore[attr-defined]
                **self._dict_fields()}

    @abstractmethod
    def _dict_fields(self) -> dict[str, Any]:
        """The result's own JSON-ready fields (those of :meth:`to_dict` after ``status`` and
        ``seconds``)."""

    @abstractmethod
    def summary(self) -> str:
        """Text for the terminal."""

    @abstractmethod
    def to_frame(self) -> pd.DataFrame:
        """The per-cell or per-record numbers."""

    @abstractmethod
    def to_report(self) -> Section:
        """A section of the internal report."""
