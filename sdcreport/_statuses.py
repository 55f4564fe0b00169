"""The statuses of results, one enumeration per family of results.

Every status is a :class:`Status`, a ``str`` enumeration (:class:`enum.StrEnum`): it compares
equal to its word (``result.status == "optimal"``), prints as its word and is written to JSON
as its word, while the enumeration lists every word a family of results can say. Results
hold their status as a member of their family (``SolveStatus.OPTIMAL``), see
:class:`sdcreport._contract.ResultBase`.

Examples
--------
>>> SolveStatus("optimal") == "optimal", f"{ProtectionStatus.NOT_PROTECTED}"
(True, 'not protected')
>>> list(AdjustmentStatus), SolveStatus.OPTIMAL is SolveStatus("optimal")
(['optimal', 'feasible'], True)
"""

from enum import StrEnum


class Status(StrEnum):
    """The base of every family of statuses (it has no members of its own). A status shows
    as its word (``repr`` too, so a tuple of results' figures reads as before)."""

    def __repr__(self) -> str:
        return repr(self.value)


class SolveStatus(Status):
    """An LP/MILP solve (``tabsdc.solver.SolveResult``); ``"feasible"`` is a solution found
    without a proof of optimality (a time limit, a gap)."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    NO_SOLUTION = "no_solution"
    ERROR = "error"


class SuppressionStatus(Status):
    """A secondary suppression: a pattern proven optimal, a pattern without that proof, or
    none found."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    NO_PATTERN = "no pattern"


class RoundingStatus(Status):
    """A rounding: ``"rounded"`` by a cell-by-cell rule or small-count rounding;
    ``"optimal"``/``"feasible"`` controlled rounding (proven or not); ``"random"`` by random
    cycles; ``"relaxed"``/``"relaxed-feasible"`` when no controlled rounding exists and the
    closest additive alternative is given (proven closest or not)."""

    ROUNDED = "rounded"
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    RANDOM = "random"
    RELAXED = "relaxed"
    RELAXED_FEASIBLE = "relaxed-feasible"


class AdjustmentStatus(Status):
    """A controlled tabular adjustment: proven optimal (its gap within the proof tolerance)
    or not."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"


class ProtectionStatus(Status):
    """An audit of a protected table: every sensitive cell protected, some not, or some
    bounds not computed in time (the release is not shown safe)."""

    PROTECTED = "protected"
    NOT_PROTECTED = "not protected"
    TIME_LIMITED = "time-limited"


class CheckStatus(Status):
    """A check whose every part holds, or not."""

    PASSED = "passed"
    FAILED = "failed"


class DifferencingStatus(Status):
    """A differencing check: no hidden count is disclosed by differences, or some is."""

    PASSED = "passed"
    DISCLOSED = "disclosed"


class BatchStatus(Status):
    """A tau-ARGUS batch job: every protection passed its check, some did not, or no
    ``<SUPPRESS>`` ran."""

    PASSED = "passed"
    FAILED = "failed"
    NOTHING_PROTECTED = "nothing protected"


class AttackStatus(Status):
    """The p/q-interval attack on published intervals."""

    NOTHING_REVEALED = "nothing revealed"
    Q_AND_VALUES_REVEALED = "q and values revealed"
    VALUES_REVEALED = "values revealed"


class RulesStatus(Status):
    """Sensitivity rules, which always run to the end."""

    APPLIED = "applied"


class PerturbationStatus(Status):
    """The cell key method: every cell is published with its noise."""

    PERTURBED = "perturbed"


class FitStatus(Status):
    """An iterative fit (IPF): every margin within the tolerance, or stopped before."""

    CONVERGED = "converged"
    NOT_CONVERGED = "not converged"


class SignificanceStatus(Status):
    """A test statistic against its critical value."""

    SIGNIFICANT = "significant"
    NOT_SIGNIFICANT = "not significant"


class BaseChoiceStatus(Status):
    """The choice of a rounding base: some candidate is acceptable, or none is."""

    CHOSEN = "chosen"
    NONE_ACCEPTABLE = "none acceptable"


class MeasureStatus(Status):
    """A measurement or an estimate, with no verdict of its own."""

    COMPUTED = "computed"
