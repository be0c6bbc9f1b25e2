"""User rubrics (``--rubric FILE``): one call per question scores every criterion; each
criterion is a column ``rubric_<name>`` on 0-1, the reasons go in ``rubric_reasoning``."""

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
from rag_evaluator.families.jury.voting import (
    first_failure,
    majority_rate,
    nearest_juror,
    whole_median,
)
from rag_evaluator.families.rubric import calls as rubric_calls
from rag_evaluator.families.rubric.rubrics import (
    CONTEXTS_INPUT,
    GROUND_TRUTH_INPUT,
    REASONING_COLUMN,
    Criterion,
    Rubric,
    criteria_columns,
)
from rag_evaluator.families.single_call import SingleCallFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest
from rag_evaluator.results.summary import (
    MetricValues,
    SummaryLine,
    fraction_line,
    mean_line,
    unscored_line,
)

RUBRIC_FAMILY = "rubric"


@dataclass(kw_only=True, slots=True)
class RubricResult(FamilyResult):
    """Each criterion's score on its own scale and the judge's reason, in rubric order."""

    scores: tuple[tuple[str, int], ...] = ()
    reasons: tuple[tuple[str, str], ...] = ()


class RubricFamily(SingleCallFamily[RubricResult]):
    """The user's criteria, scored by the model, scaled to 0-1."""

    name = RUBRIC_FAMILY
    version = 1
    reply_tokens = (60, 250)  # per criterion

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        self.system_prompt = rubric_calls.system_prompt(rubric)
        self.schema = rubric_calls.schema(rubric)
        self.max_tokens = rubric_calls.max_tokens(rubric)
        self.metric_columns = criteria_columns(rubric)
        self.rate_columns = tuple(
            criterion.column for criterion in rubric.criteria if criterion.scale.pass_fail
        )
        self.columns = (*self.metric_columns, REASONING_COLUMN)
        self.reasoning_column = REASONING_COLUMN
        count = len(rubric.criteria)
        self.reply_tokens = (
            RubricFamily.reply_tokens[0] * count,
            RubricFamily.reply_tokens[1] * count,
        )

    def request(self, item: EvaluationItem) -> ModelRequest:
        return rubric_calls.request(
            self.rubric,
            self.system_prompt,
            item.question,
            item.rag_answer,
            reference_for_models(item),
            item.contexts,
        )

    def from_answer(self, answer: Any) -> RubricResult:
        scores: Sequence[rubric_calls.CriterionScore] = answer
        return RubricResult(
            scores=tuple((score.name, score.score) for score in scores),
            reasons=tuple((score.name, score.reasoning) for score in scores),
        )

    def identity(self) -> Mapping[str, Any]:
        return {
            **super().identity(),
            "criteria": [
                {"name": item.name, "scale": item.scale.label(), "description": item.description}
                for item in self.rubric.criteria
            ],
            "inputs": list(self.rubric.inputs),
        }

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        inputs: dict[str, Any] = {"question": item.question, "rag_answer": item.rag_answer}
        if GROUND_TRUTH_INPUT in self.rubric.inputs:
            inputs["ground_truth"] = reference_for_models(item)
        if CONTEXTS_INPUT in self.rubric.inputs:
            inputs["contexts"] = item.contexts
        return inputs

    def unscored(self, error: str, failure: str) -> RubricResult:
        return RubricResult(error=error, failure=failure)

    # -- reporting ----------------------------------------------------------------------------

    def _unit_scores(self, result: RubricResult) -> dict[str, float]:
        scores = dict(result.scores)
        values = {}
        for criterion in self.rubric.criteria:
            if criterion.name in scores:
                values[criterion.column] = criterion.scale.unit(scores[criterion.name])
        return values

    def cells(self, result: RubricResult | None) -> list[CellValue]:
        if result is None:
            return [""] * len(self.columns)
        values = self._unit_scores(result)
        cells: list[CellValue] = []
        for criterion in self.rubric.criteria:
            value = values.get(criterion.column)
            if value is not None and criterion.scale.pass_fail:
                cells.append(int(value))  # 0/1, a binary metric for compare and calibrate
            else:
                cells.append(value)
        cells.append(self._reasoning(result))
        return cells

    def _reasoning(self, result: RubricResult) -> str:
        scores = dict(result.scores)
        parts = []
        for name, reason in result.reasons:
            criterion = self.rubric.criterion(name)
            if criterion is None or name not in scores:
                continue
            shown = criterion.scale.shown(scores[name])
            parts.append(f"{criterion.name} {shown}: {reason}" if reason else f"{name} {shown}")
        return "; ".join(parts)

    def metric_values(self, result: RubricResult) -> Mapping[str, float | None]:
        values = self._unit_scores(result)
        return {column: values.get(column) for column in self.metric_columns}

    def tally(self) -> RubricTally:
        return RubricTally(self)

    # -- a jury -------------------------------------------------------------------------------

    def jury_verdict(self, results: Sequence[RubricResult]) -> RubricResult:
        """Each criterion by its jurors: a pass/fail one by the majority (a tie leaves it
        out), a range one by the median score, a whole number (the mean of the middle two
        rounded half up); each with the reason of the first juror nearest that score."""
        if all(not result.scores for result in results):
            return self.unscored(*first_failure(results))
        juror_scores = [dict(result.scores) for result in results]
        juror_reasons = [dict(result.reasons) for result in results]
        scores: list[tuple[str, int]] = []
        reasons: list[tuple[str, str]] = []
        for criterion in self.rubric.criteria:
            given = [found.get(criterion.name) for found in juror_scores]
            if criterion.scale.pass_fail:
                majority = majority_rate(given)
                score = None if majority is None else int(majority)
            else:
                score = whole_median(given)
            if score is None:
                continue
            siding = nearest_juror(given, score)
            scores.append((criterion.name, score))
            if siding is not None and criterion.name in juror_reasons[siding]:
                reasons.append((criterion.name, juror_reasons[siding][criterion.name]))
        return RubricResult(scores=tuple(scores), reasons=tuple(reasons))

    # -- checkpoint JSON ----------------------------------------------------------------------

    def to_json(self, result: RubricResult) -> dict[str, Any]:
        return {
            "scores": [[name, score] for name, score in result.scores],
            "reasons": [list(pair) for pair in result.reasons],
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> RubricResult:
        raw = data["scores"]
        if not isinstance(raw, list):
            raise ValueError("scores must be a list")
        scores = []
        for pair in raw:
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError("a score is [name, score]")
            criterion = self.rubric.criterion(result_json.text(pair[0]))
            if criterion is None:
                raise ValueError("a score names a criterion the rubric lacks")
            scale = criterion.scale
            scores.append((criterion.name, result_json.whole(pair[1], scale.low, scale.high)))
        return RubricResult(
            scores=tuple(scores), reasons=result_json.pairs(data["reasons"]), **common
        )


def _summary_line(criterion: Criterion, values: Sequence[float]) -> SummaryLine:
    if criterion.scale.pass_fail:
        return fraction_line(criterion.column, round(sum(values)), len(values))
    return mean_line(criterion.column, values)


class RubricTally(SummaryTally[RubricResult]):
    """Each criterion's pass rate or mean, and the unscored count."""

    def __init__(self, family: RubricFamily) -> None:
        self.family = family
        self.values = {criterion.column: MetricValues() for criterion in family.rubric.criteria}
        self.unscored = 0

    def add(self, result: RubricResult) -> None:
        values = self.family.metric_values(result)
        for column, collected in self.values.items():
            collected.add(values[column])
        self.unscored += not result.scored

    def lines(self) -> list[SummaryLine]:
        lines = [
            _summary_line(criterion, self.values[criterion.column].values)
            for criterion in self.family.rubric.criteria
        ]
        lines.append(unscored_line("Rubric Unscored", self.unscored))
        return lines
