"""One row of the results table: the question, what the judged families said, metric values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_evaluator.families.base import FamilyResult, QuestionRecord
from rag_evaluator.inputs.records import EvaluationItem

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


class ResultRows:
    """The rows of a results table in question-number order, each built when it is read.

    ``records`` may read each record back from disk (a run's checkpoint), so the table is
    read twice (to summarise it, then to write it) without ever being held whole.
    """

    def __init__(
        self,
        items: Sequence[EvaluationItem],
        records: Mapping[int, QuestionRecord] | None,
        metric_scores: Mapping[int, Mapping[str, float | str | None]],
    ) -> None:
        # A spool's items come in number order from disk: sorting would hold them all.
        in_order = getattr(items, "in_number_order", False)
        self.items = items if in_order else sorted(items, key=lambda item: item.question_number)
        self.records = records
        self.metric_scores = metric_scores

    def __iter__(self) -> Iterator[ResultRow]:
        for item in self.items:
            number = item.question_number
            record = None if self.records is None else self.records.get(number)
            yield ResultRow(item, record, self.metric_scores.get(number, NO_METRIC_SCORES))

    def __len__(self) -> int:
        return len(self.items)
