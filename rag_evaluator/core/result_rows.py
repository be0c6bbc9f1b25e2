"""One row of the results table: the question, what the judged families said, metric values."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag_evaluator.core.records import EvaluationItem
from rag_evaluator.core.tasks.base import FamilyResult, QuestionRecord


@dataclass(frozen=True)
class ResultRow:
    """One row of the results table.

    ``record`` is ``None`` when the run used no model-judged family. ``metric_scores`` maps
    an offline metric column to 0..1, or ``None`` when its inputs were missing; a text
    column (``Quality Failures``) maps to its text.
    """

    item: EvaluationItem
    record: QuestionRecord | None
    metric_scores: dict[str, float | str | None] = field(default_factory=dict)

    def family_result(self, family: str) -> FamilyResult | None:
        return None if self.record is None else self.record.result(family)
