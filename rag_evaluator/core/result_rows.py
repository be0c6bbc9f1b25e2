"""One row of the results table: the question, what the judged families said, metric values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_evaluator.core.records import EvaluationItem
from rag_evaluator.core.tasks.base import FamilyResult, QuestionRecord

# Shared by every row without offline metrics: an empty dict per row adds up at a million rows.
NO_METRIC_SCORES: Mapping[str, float | str | None] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One row of the results table.

    ``record`` is ``None`` when the run used no model-judged family. ``metric_scores`` maps
    an offline metric column to 0..1, or ``None`` when its inputs were missing; a text
    column (``Quality Failures``) maps to its text.
    """

    item: EvaluationItem
    record: QuestionRecord | None
    metric_scores: Mapping[str, float | str | None] = field(
        default_factory=lambda: NO_METRIC_SCORES
    )

    def family_result(self, family: str) -> FamilyResult | None:
        return None if self.record is None else self.record.result(family)
