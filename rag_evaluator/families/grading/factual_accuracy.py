"""Seed 001's factual accuracy: a fixed three-criterion rubric scored 0-100 by the model,
weighted here (0.5 correctness + 0.3 completeness + 0.2 consistency) onto 0-1, and graded A-E.

It is not G-Eval (criteria turned into evaluation steps, a probability-weighted score): the
family was called ``geval`` before issue 22, and that name is still read (``LEGACY_NAME``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.families import result_json
from rag_evaluator.families import scores as judged_scores
from rag_evaluator.families.base import (
    CellValue,
    FamilyResult,
    SummaryTally,
    reference_for_models,
)
from rag_evaluator.families.grading import calls as answer_grading_calls
from rag_evaluator.families.grading.calls import FactualAccuracyVerdict
from rag_evaluator.families.jury.voting import (
    common_value,
    first_failure,
    nearest_juror,
    whole_median,
)
from rag_evaluator.families.single_call import SingleCallFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest
from rag_evaluator.results.summary import MetricValues, SummaryLine, unscored_line

FACTUAL_ACCURACY_FAMILY = "factual_accuracy"
# The family's name before issue 22: still accepted by --metrics (with a warning) and read in
# checkpoints and results files written then.
LEGACY_NAME = "geval"
# Every renamed model-judged family, old name -> today's (read by --metrics, checkpoints and
# run fingerprints).
RENAMED_FAMILIES = {LEGACY_NAME: FACTUAL_ACCURACY_FAMILY}

FACTUAL_ACCURACY = "factual_accuracy"
FACTUAL_GRADE = "factual_grade"
FACTUAL_CORRECTNESS = "factual_correctness"
FACTUAL_COMPLETENESS = "factual_completeness"
FACTUAL_CONSISTENCY = "factual_consistency"
FACTUAL_CONFIDENCE = "factual_confidence"
FACTUAL_REASONING = "factual_reasoning"
# The summary row of the questions left unscored ("G-Eval Unscored" in older results files).
UNSCORED_LABEL = "Factual Accuracy Unscored"
LEGACY_UNSCORED_LABEL = "G-Eval Unscored"


@dataclass(kw_only=True, slots=True)
class FactualAccuracyResult(FamilyResult):
    """The three criterion scores (0-100, as the model gave them), the weighted accuracy on
    0-1 and its grade; all ``None`` for an unscored question."""

    correctness: int | None = None
    completeness: int | None = None
    consistency: int | None = None
    accuracy: float | None = None
    grade: str | None = None
    confidence: int | None = None
    reasoning: str = ""
    note: str | None = None


def _unit(score: int | None) -> float | None:
    return None if score is None else judged_scores.scaled(score, 0, 100)


class FactualAccuracyFamily(SingleCallFamily[FactualAccuracyResult]):
    """Factual accuracy of the answer against the ground truth (seed 001's three criteria)."""

    name = FACTUAL_ACCURACY_FAMILY
    # 2: renamed from geval (issue 22); an entry cached under the old name is never reused.
    version = 2
    columns = (
        FACTUAL_ACCURACY,
        FACTUAL_GRADE,
        FACTUAL_CORRECTNESS,
        FACTUAL_COMPLETENESS,
        FACTUAL_CONSISTENCY,
        FACTUAL_CONFIDENCE,
        FACTUAL_REASONING,
    )
    metric_columns = (
        FACTUAL_ACCURACY,
        FACTUAL_CORRECTNESS,
        FACTUAL_COMPLETENESS,
        FACTUAL_CONSISTENCY,
    )
    reasoning_column = FACTUAL_REASONING
    system_prompt = answer_grading_calls.FACTUAL_ACCURACY_PROMPT
    schema = answer_grading_calls.FACTUAL_ACCURACY_SCHEMA
    max_tokens = answer_grading_calls.FACTUAL_ACCURACY_MAX_TOKENS
    reply_tokens = (250, 900)

    def request(self, item: EvaluationItem) -> ModelRequest:
        return answer_grading_calls.factual_accuracy_request(
            item.question, reference_for_models(item), item.rag_answer
        )

    def from_answer(self, answer: Any) -> FactualAccuracyResult:
        verdict: FactualAccuracyVerdict = answer
        accuracy = judged_scores.factual_accuracy(
            verdict.correctness.score, verdict.completeness.score, verdict.consistency.score
        )
        return FactualAccuracyResult(
            correctness=verdict.correctness.score,
            completeness=verdict.completeness.score,
            consistency=verdict.consistency.score,
            accuracy=accuracy,
            grade=judged_scores.factual_grade(accuracy),
            confidence=verdict.confidence,
            reasoning=verdict.overall_reasoning,
        )

    def identity(self) -> Mapping[str, Any]:
        return {
            **super().identity(),
            "weights": judged_scores.FACTUAL_ACCURACY_WEIGHTS,
            "grade_bands": judged_scores.GRADE_BANDS,
        }

    def unscored(self, error: str, failure: str) -> FactualAccuracyResult:
        return FactualAccuracyResult(error=error, failure=failure)

    def missing_answer(self, note: str) -> FactualAccuracyResult:
        return FactualAccuracyResult(
            correctness=0,
            completeness=0,
            consistency=0,
            accuracy=0.0,
            grade=judged_scores.LOWEST_GRADE,
            note=note,
        )

    # -- reporting ----------------------------------------------------------------------------

    def cells(self, result: FactualAccuracyResult | None) -> list[CellValue]:
        if result is None:
            return [""] * len(self.columns)
        values = self.metric_values(result)
        return [
            values[FACTUAL_ACCURACY],
            result.grade or "",
            values[FACTUAL_CORRECTNESS],
            values[FACTUAL_COMPLETENESS],
            values[FACTUAL_CONSISTENCY],
            result.confidence,
            result.reasoning,
        ]

    def metric_values(self, result: FactualAccuracyResult) -> Mapping[str, float | None]:
        return {
            FACTUAL_ACCURACY: result.accuracy,
            FACTUAL_CORRECTNESS: _unit(result.correctness),
            FACTUAL_COMPLETENESS: _unit(result.completeness),
            FACTUAL_CONSISTENCY: _unit(result.consistency),
        }

    def note_text(self, result: FactualAccuracyResult) -> str:
        return result.note or ""

    def jury_verdict(self, results: Sequence[FactualAccuracyResult]) -> FactualAccuracyResult:
        """Each criterion (and the confidence) by the jurors' median, a whole number (an odd
        count gives a juror's score; the mean of the middle two is rounded half up); the
        accuracy and grade recomputed from those medians."""
        correctness, completeness, consistency = (
            whole_median([getattr(result, criterion) for result in results])
            for criterion in ("correctness", "completeness", "consistency")
        )
        # A juror that scored gave all three criteria: one median missing means no juror did.
        if correctness is None or completeness is None or consistency is None:
            return self.unscored(*first_failure(results))
        accuracy = judged_scores.factual_accuracy(correctness, completeness, consistency)
        siding = nearest_juror([result.accuracy for result in results], accuracy)
        return FactualAccuracyResult(
            correctness=correctness,
            completeness=completeness,
            consistency=consistency,
            accuracy=accuracy,
            grade=judged_scores.factual_grade(accuracy),
            confidence=whole_median([result.confidence for result in results]),
            reasoning="" if siding is None else results[siding].reasoning,
            note=common_value(result.note for result in results),
        )

    def tally(self) -> FactualAccuracyTally:
        return FactualAccuracyTally(self)

    # -- checkpoint JSON ----------------------------------------------------------------------

    def to_json(self, result: FactualAccuracyResult) -> dict[str, Any]:
        return {
            "correctness": result.correctness,
            "completeness": result.completeness,
            "consistency": result.consistency,
            "accuracy": result.accuracy,
            "grade": result.grade,
            "confidence": result.confidence,
            "reasoning": result.reasoning,
            "note": result.note,
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> FactualAccuracyResult:
        scores = [
            result_json.optional_whole(data[name], 0, 100)
            for name in ("correctness", "completeness", "consistency")
        ]
        return FactualAccuracyResult(
            correctness=scores[0],
            completeness=scores[1],
            consistency=scores[2],
            accuracy=result_json.optional_unit(data["accuracy"]),
            grade=result_json.optional_choice(data["grade"], judged_scores.GRADES),
            confidence=result_json.optional_whole(data["confidence"], 0, 100),
            reasoning=result_json.text(data["reasoning"]),
            note=result_json.optional_text(data["note"]),
            **common,
        )


class FactualAccuracyTally(SummaryTally[FactualAccuracyResult]):
    """Each criterion's mean, the count of each factual grade, and the unscored count."""

    def __init__(self, family: FactualAccuracyFamily) -> None:
        self.family = family
        self.values = {column: MetricValues() for column in family.metric_columns}
        self.grades: Counter[str] = Counter()
        self.unscored = 0

    def add(self, result: FactualAccuracyResult) -> None:
        values = self.family.metric_values(result)
        for column, collected in self.values.items():
            collected.add(values[column])
        if result.grade is not None:
            self.grades[result.grade] += 1
        self.unscored += not result.scored

    def lines(self) -> list[SummaryLine]:
        lines = [values.line(column) for column, values in self.values.items()]
        # No comma: the summary cell must stay unquoted.
        grades = " / ".join(f"{grade} {self.grades[grade]}" for grade in judged_scores.GRADES)
        lines.append(SummaryLine("Factual Grades", grades))
        lines.append(unscored_line(UNSCORED_LABEL, self.unscored))
        return lines
