"""The reporting layer shared by :mod:`tabsdc` and :mod:`microsdc`.

A :class:`Report` is a list of :class:`Section` objects; a section holds text, tables
(DataFrames), key figures (metrics) and matplotlib figures. A report renders to the terminal,
Markdown, one self-contained HTML file (figures embedded as PNG) and JSON.
"""

from sdcreport._contract import Check, Result, ResultBase, TableResult
from sdcreport._files import OutputPathError
from sdcreport._numbers import format_frame, format_number, format_numbers
from sdcreport._report import Figure, Metrics, Report, Section, TableBlock, Text
from sdcreport._statuses import (
    AdjustmentStatus,
    AttackStatus,
    BaseChoiceStatus,
    BatchStatus,
    CheckStatus,
    DifferencingStatus,
    FitStatus,
    MeasureStatus,
    PerturbationStatus,
    ProtectionStatus,
    RoundingStatus,
    RulesStatus,
    SignificanceStatus,
    SolveStatus,
    Status,
    SuppressionStatus,
)

__all__ = [
    "Report", "Section", "Text", "TableBlock", "Metrics", "Figure",
    "format_number", "format_numbers", "format_frame", "Result", "TableResult", "Check",
    "ResultBase", "Status", "SolveStatus", "SuppressionStatus", "RoundingStatus",
    "AdjustmentStatus", "ProtectionStatus", "CheckStatus", "DifferencingStatus", "BatchStatus",
    "AttackStatus", "RulesStatus", "PerturbationStatus", "FitStatus", "SignificanceStatus",
    "BaseChoiceStatus", "MeasureStatus", "OutputPathError",
]
