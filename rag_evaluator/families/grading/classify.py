"""Answer classification (seed 001): CORRECT, WRONG, or DONT_KNOW.

An answer holding one of seed 001's uncertainty phrases (``offline/lexical.dont_know``,
the same rule as the lexical ``dont_know`` metric) is DONT_KNOW without a call; any other is
classified CORRECT or WRONG by the model against the ground truth.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.families import result_json
from rag_evaluator.families.base import (
    CellValue,
    FamilyResult,
    SummaryTally,
    reference_for_models,
)
from rag_evaluator.families.grading import calls as answer_grading_calls
from rag_evaluator.families.grading.calls import CORRECT, DONT_KNOW, WRONG, Classification
from rag_evaluator.families.jury.voting import common_value, first_failure, plurality_label
from rag_evaluator.families.single_call import SingleCallFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest
from rag_evaluator.offline.lexical import dont_know
from rag_evaluator.results.summary import SummaryLine, fraction_line, unscored_line

CLASSIFY_FAMILY = "classify"

ANSWER_CLASS = "answer_class"
ANSWER_CORRECT = "answer_correct"
CLASSIFY_REASONING = "classify_reasoning"
LABELS = (CORRECT, WRONG, DONT_KNOW)

DONT_KNOW_REASONING = "The answer says it does not know (an uncertainty phrase); no call was made."


@dataclass(kw_only=True, slots=True)
class ClassifyResult(FamilyResult):
    """The answer's label (``None`` when unscored), why, and whether it took no call."""

    label: str | None = None
    reasoning: str = ""
    without_call: bool = False
    note: str | None = None


class ClassifyFamily(SingleCallFamily[ClassifyResult]):
    """CORRECT / WRONG / DONT_KNOW, with a 0/1 ``answer_correct`` column to gate on."""

    name = CLASSIFY_FAMILY
    version = 1
    columns = (ANSWER_CLASS, ANSWER_CORRECT, CLASSIFY_REASONING)
    metric_columns = (ANSWER_CORRECT,)
    rate_columns = metric_columns
    reasoning_column = CLASSIFY_REASONING
    system_prompt = answer_grading_calls.CLASSIFY_PROMPT
    schema = answer_grading_calls.CLASSIFY_SCHEMA
    max_tokens = answer_grading_calls.SHORT_MAX_TOKENS
    reply_tokens = (40, 200)

    def shortcut(self, item: EvaluationItem) -> ClassifyResult | None:
        if dont_know(item.rag_answer) == 1.0:
            return ClassifyResult(label=DONT_KNOW, reasoning=DONT_KNOW_REASONING, without_call=True)
        return None

    def request(self, item: EvaluationItem) -> ModelRequest:
        return answer_grading_calls.classify_request(
            item.question, reference_for_models(item), item.rag_answer
        )

    def from_answer(self, answer: Any) -> ClassifyResult:
        classification: Classification = answer
        return ClassifyResult(label=classification.label, reasoning=classification.reasoning)

    def identity(self) -> Mapping[str, Any]:
        # The DONT_KNOW rule decides without a call: a change to it changes results.
        return {**super().identity(), "dont_know_rule": "lexical.dont_know v1"}

    def unscored(self, error: str, failure: str) -> ClassifyResult:
        return ClassifyResult(error=error, failure=failure)

    def missing_answer(self, note: str) -> ClassifyResult:
        return ClassifyResult(
            label=WRONG, reasoning="No answer was given.", note=note, without_call=True
        )

    # -- reporting ----------------------------------------------------------------------------

    def cells(self, result: ClassifyResult | None) -> list[CellValue]:
        if result is None or result.label is None:
            return ["", "", ""]
        return [result.label, int(result.label == CORRECT), result.reasoning]

    def metric_values(self, result: ClassifyResult) -> Mapping[str, float | None]:
        if result.label is None:
            return {ANSWER_CORRECT: None}
        return {ANSWER_CORRECT: float(result.label == CORRECT)}

    def note_text(self, result: ClassifyResult) -> str:
        return result.note or ""

    def jury_verdict(self, results: Sequence[ClassifyResult]) -> ClassifyResult:
        """The label most jurors that labelled gave (a tie leaves it empty); the reasoning of
        the first juror that gave it. DONT_KNOW without a call is every juror's."""
        labelled = [result for result in results if result.label is not None]
        if not labelled:
            return self.unscored(*first_failure(results))
        label = plurality_label([result.label for result in labelled])
        siding = next((result for result in labelled if result.label == label), labelled[0])
        return ClassifyResult(
            label=label,
            reasoning=siding.reasoning,
            without_call=label is not None and all(result.without_call for result in results),
            note=common_value(result.note for result in results),
        )

    def tally(self) -> ClassifyTally:
        return ClassifyTally()

    # -- checkpoint JSON ----------------------------------------------------------------------

    def to_json(self, result: ClassifyResult) -> dict[str, Any]:
        return {
            "label": result.label,
            "reasoning": result.reasoning,
            "without_call": result.without_call,
            "note": result.note,
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> ClassifyResult:
        return ClassifyResult(
            label=result_json.optional_choice(data["label"], LABELS),
            reasoning=result_json.text(data["reasoning"]),
            without_call=result_json.flag(data["without_call"]),
            note=result_json.optional_text(data["note"]),
            **common,
        )


class ClassifyTally(SummaryTally[ClassifyResult]):
    """How many answers got each label, the correct rate, and the unscored count."""

    def __init__(self) -> None:
        self.labels: Counter[str] = Counter()
        self.without_call = self.unscored = 0

    def add(self, result: ClassifyResult) -> None:
        if result.label is not None:
            self.labels[result.label] += 1
        self.without_call += result.label == DONT_KNOW and result.without_call
        self.unscored += not result.scored

    def lines(self) -> list[SummaryLine]:
        # No comma: the summary cell must stay unquoted.
        counts = " / ".join(f"{label} {self.labels[label]}" for label in LABELS)
        labelled = sum(self.labels.values())
        return [
            SummaryLine("Answer Classes", f"{counts} ({self.without_call} without a call)"),
            fraction_line(ANSWER_CORRECT, self.labels[CORRECT], labelled),
            unscored_line("Classify Unscored", self.unscored),
        ]
