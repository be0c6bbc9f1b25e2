"""Reference matching (seed 004's "is matching" judge): does the answer accurately and
satisfactorily answer the question, with the ground truth as the reference."""

from __future__ import annotations

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
from rag_evaluator.families.grading.calls import MatchVerdict
from rag_evaluator.families.jury.voting import (
    common_value,
    first_failure,
    majority_rate,
    nearest_juror,
)
from rag_evaluator.families.single_call import SingleCallFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest
from rag_evaluator.results.summary import SummaryLine, fraction_line, unscored_line

MATCH_FAMILY = "match"

IS_MATCHING = "is_matching"
MATCH_REASONING = "match_reasoning"


@dataclass(kw_only=True, slots=True)
class MatchResult(FamilyResult):
    """Whether the answer matches (``None`` when unscored) and the judge's reason."""

    is_matching: bool | None = None
    reasoning: str = ""
    note: str | None = None


class MatchFamily(SingleCallFamily[MatchResult]):
    """``is_matching`` 1/0 per answer."""

    name = MATCH_FAMILY
    version = 1
    columns = (IS_MATCHING, MATCH_REASONING)
    metric_columns = (IS_MATCHING,)
    rate_columns = metric_columns
    reasoning_column = MATCH_REASONING
    system_prompt = answer_grading_calls.MATCH_PROMPT
    schema = answer_grading_calls.MATCH_SCHEMA
    max_tokens = answer_grading_calls.SHORT_MAX_TOKENS
    reply_tokens = (30, 200)

    def request(self, item: EvaluationItem) -> ModelRequest:
        return answer_grading_calls.match_request(
            item.question, reference_for_models(item), item.rag_answer
        )

    def from_answer(self, answer: Any) -> MatchResult:
        verdict: MatchVerdict = answer
        return MatchResult(is_matching=verdict.is_matching, reasoning=verdict.reasoning)

    def unscored(self, error: str, failure: str) -> MatchResult:
        return MatchResult(error=error, failure=failure)

    def missing_answer(self, note: str) -> MatchResult:
        return MatchResult(is_matching=False, reasoning="No answer was given.", note=note)

    # -- reporting ----------------------------------------------------------------------------

    def cells(self, result: MatchResult | None) -> list[CellValue]:
        if result is None or result.is_matching is None:
            return ["", ""]
        return [int(result.is_matching), result.reasoning]

    def metric_values(self, result: MatchResult) -> Mapping[str, float | None]:
        return {IS_MATCHING: None if result.is_matching is None else float(result.is_matching)}

    def note_text(self, result: MatchResult) -> str:
        return result.note or ""

    def jury_verdict(self, results: Sequence[MatchResult]) -> MatchResult:
        """Matching by the majority of the jurors that judged (a tie leaves it empty); the
        reasoning of the first juror agreeing with it."""
        if all(result.is_matching is None for result in results):
            return self.unscored(*first_failure(results))
        values = [self.metric_values(result)[IS_MATCHING] for result in results]
        majority = majority_rate(values)
        siding = nearest_juror(values, majority)
        return MatchResult(
            is_matching=None if majority is None else majority == 1.0,
            reasoning="" if siding is None else results[siding].reasoning,
            note=common_value(result.note for result in results),
        )

    def tally(self) -> MatchTally:
        return MatchTally()

    # -- checkpoint JSON ----------------------------------------------------------------------

    def to_json(self, result: MatchResult) -> dict[str, Any]:
        return {
            "is_matching": result.is_matching,
            "reasoning": result.reasoning,
            "note": result.note,
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> MatchResult:
        value = data["is_matching"]
        return MatchResult(
            is_matching=None if value is None else result_json.flag(value),
            reasoning=result_json.text(data["reasoning"]),
            note=result_json.optional_text(data["note"]),
            **common,
        )


class MatchTally(SummaryTally[MatchResult]):
    """The matching rate over judged questions and the unscored count."""

    def __init__(self) -> None:
        self.matching = self.judged = self.unscored = 0

    def add(self, result: MatchResult) -> None:
        if result.is_matching is not None:
            self.judged += 1
            self.matching += result.is_matching
        self.unscored += not result.scored

    def lines(self) -> list[SummaryLine]:
        return [
            fraction_line(IS_MATCHING, self.matching, self.judged),
            unscored_line("Match Unscored", self.unscored),
        ]
