"""One row of the results table: the question, what the judged families said, metric values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_evaluator.core.records import EvaluationItem
from rag_evaluator.core.tasks.base import FamilyResult, QuestionRecord

# Shared by every row without offline metrics: an empty dict per row adds up at a million rows.
NO_METRIC_SCORES: Mapping[str, float | None] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One row of the results table.

    ``record`` is ``None`` when the run used no model-judged family. ``metric_scores`` maps
    a snake_case offline metric column to 0..1, or ``None`` when its inputs were missing.
    """

    item: EvaluationItem
    record: QuestionRecord | None
    metric_scores: Mapping[str, float | None] = field(default_factory=lambda: NO_METRIC_SCORES)

    def family_result(self, family: str) -> FamilyResult | None:
        return None if self.record is None else self.record.result(family)
