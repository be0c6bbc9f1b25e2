"""The RAGAS family as a task: faithfulness, context precision, context recall, answer
relevance and their composite, in two stages of calls.

Stage 1 sends, at the same time, the first call of every metric that needs one: the answer's
claims, the contexts' relevance, the ground truth's statements, and the questions the answer
answers (or a direct relevance rating). Stage 2 verifies the claims and attributes the
statements against the contexts, and rates relevance directly when no question could be
generated. A metric whose call fails is left empty with its reason; the others stand.

Inputs (decisions documented in SPEC.md):
- no Contexts for the question (no column, or a blank cell): faithfulness, both context
  precisions and context recall are not computed (empty, no call, no error);
- an empty list ``[]`` (the retriever returned nothing): faithfulness and context precision
  are empty, context recall is 0 (nothing could be recalled);
- a blank answer: no claims (faithfulness 1) and answer relevance 0, without a call;
- an answer the model calls noncommittal (evasive, vague, "I don't know"): answer relevance 0
  whatever its questions or rating, as in ragas;
- a blank ground truth: no statements (context recall 1), without a call.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_evaluator.families import call_failures, result_json
from rag_evaluator.families import scores as judged_scores
from rag_evaluator.families.base import (
    CallEstimate,
    CellValue,
    FamilyResult,
    JudgedFamily,
    Stage,
    SummaryTally,
    TaskRun,
)
from rag_evaluator.families.jury.voting import first_failure, median_score, nearest_juror
from rag_evaluator.families.ragas import calls as ragas_calls
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import CallOutcome, FailureKind, ModelRequest
from rag_evaluator.results.summary import MetricValues, SummaryLine, unscored_line

RAGAS_FAMILY = "ragas"

FAITHFULNESS = "ragas_faithfulness"
# ragas's context precision: rank-weighted (average precision over the ranked contexts).
CONTEXT_PRECISION = "ragas_context_precision"
# The share of contexts judged relevant, whatever their ranks (not ragas's definition).
RELEVANT_CONTEXT_SHARE = "relevant_context_share"
CONTEXT_RECALL = "ragas_context_recall"
ANSWER_RELEVANCE = "ragas_answer_relevance"
RELEVANCE_METHOD = "ragas_answer_relevance_method"
RAGAS_SCORE = "ragas_score"
DETAILS = "ragas_details"

METHOD_EMBEDDINGS = "embeddings"
METHOD_RATING = "rating"
METHODS = (METHOD_EMBEDDINGS, METHOD_RATING)

# The metric names used in the Error column and in the composite's weights.
_FAITHFULNESS = judged_scores.FAITHFULNESS
_CONTEXT_PRECISION = judged_scores.CONTEXT_PRECISION
_CONTEXT_RECALL = judged_scores.CONTEXT_RECALL
_ANSWER_RELEVANCE = judged_scores.ANSWER_RELEVANCE
RAGAS_METRICS = (_FAITHFULNESS, _CONTEXT_PRECISION, _CONTEXT_RECALL, _ANSWER_RELEVANCE)

# Cosines of the original question with each generated question.
QuestionSimilarity = Callable[[str, Sequence[str]], Sequence[float]]

# Expected reply sizes in output tokens (low, high), per call and per listed item.
_REPLY_TOKENS: dict[str, tuple[int, int]] = {
    "faithfulness claims": (40, 400),
    "context recall statements": (30, 300),
    "answer relevance questions": (40, 120),
    "answer relevance rating": (40, 150),
}
_PER_CONTEXT_TOKENS = (40, 120)
_PER_VERDICT_TOKENS = (30, 100)
# How many claims (statements) a text of n characters holds: at least 1, about one per
# 300 characters at the low end and one per 80 at the high end.
_CHARACTERS_PER_CLAIM = (300, 80)
_SHOWN_CLAIM_CHARACTERS = 120
# What each metric's value rests on (the details column): a jury's verdict takes them from
# the juror nearest its median, so that they describe a value the verdict holds.
_SUPPORTING_FIELDS: dict[str, tuple[str, ...]] = {
    _FAITHFULNESS: ("claim_count", "unsupported_claims"),
    _CONTEXT_PRECISION: ("relevant_ranks",),
    _CONTEXT_RECALL: ("statement_count", "attributed_count"),
    _ANSWER_RELEVANCE: ("relevance_method", "noncommittal", "generated_questions"),
}


@dataclass(kw_only=True, slots=True)
class RagasResult(FamilyResult):
    """The four RAGAS metrics of one question, their composite, and what they rest on.

    A metric is ``None`` when it is undefined for the question's inputs or its call failed;
    ``metric_errors`` holds (metric, reason) for the failed ones.
    """

    faithfulness: float | None = None
    claim_count: int | None = None
    unsupported_claims: tuple[str, ...] = ()
    context_precision: float | None = None
    relevant_context_share: float | None = None
    context_count: int | None = None
    relevant_ranks: tuple[int, ...] = ()
    context_recall: float | None = None
    statement_count: int | None = None
    attributed_count: int | None = None
    answer_relevance: float | None = None
    relevance_method: str | None = None
    noncommittal: bool | None = None  # None when the model did not judge answer relevance
    generated_questions: tuple[str, ...] = ()
    ragas_score: float | None = None
    metric_errors: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class _Scoring:
    """What a question's task has worked out so far."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    failed: list[CallOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, metric: str, outcome: CallOutcome) -> None:
        self.errors.append((metric, call_failures.reason(outcome)))
        self.failed.append(outcome)


def usable_contexts(contexts: Sequence[str] | None) -> list[str] | None:
    """The non-blank contexts in rank order; ``None`` when the question has no Contexts."""
    if contexts is None:
        return None
    return [context for context in contexts if context.strip()]


class RagasFamily(JudgedFamily[RagasResult]):
    """RAGAS-style faithfulness, context precision, context recall and answer relevance."""

    name = RAGAS_FAMILY
    # 3: answer relevance zeroes noncommittal answers (issue 22).
    version = 3
    columns = (
        FAITHFULNESS,
        CONTEXT_PRECISION,
        RELEVANT_CONTEXT_SHARE,
        CONTEXT_RECALL,
        ANSWER_RELEVANCE,
        RELEVANCE_METHOD,
        RAGAS_SCORE,
        DETAILS,
    )
    metric_columns = (
        FAITHFULNESS,
        CONTEXT_PRECISION,
        RELEVANT_CONTEXT_SHARE,
        CONTEXT_RECALL,
        ANSWER_RELEVANCE,
        RAGAS_SCORE,
    )

    def __init__(
        self,
        similarity: QuestionSimilarity | None = None,
        embedding_model: str | None = None,
        metrics: Sequence[str] = RAGAS_METRICS,
    ) -> None:
        """``similarity`` embeds questions (the semantic family's model); without it, answer
        relevance is a direct rating call. ``embedding_model`` names the model (identity).
        ``metrics`` limits the calls to some of the four metrics (the library's one-metric
        functions); the others stay empty."""
        unknown = [metric for metric in metrics if metric not in RAGAS_METRICS]
        if unknown or not metrics:
            raise ValueError(f"metrics must be some of {', '.join(RAGAS_METRICS)}")
        self.similarity = similarity
        self.embedding_model = embedding_model if similarity is not None else None
        self.metrics = tuple(metric for metric in RAGAS_METRICS if metric in metrics)

    @property
    def relevance_method(self) -> str:
        return METHOD_EMBEDDINGS if self.similarity is not None else METHOD_RATING

    # -- the task -----------------------------------------------------------------------------

    def run(self, item: EvaluationItem) -> TaskRun[RagasResult]:
        scoring = _Scoring()
        contexts = usable_contexts(item.contexts)
        if contexts is not None and not contexts:
            scoring.notes.append(
                "no context was retrieved: context recall 0, faithfulness and context "
                "precision left empty"
            )
        starts = {
            _FAITHFULNESS: self._start_faithfulness,
            _CONTEXT_PRECISION: self._start_context_precision,
            _CONTEXT_RECALL: self._start_context_recall,
            _ANSWER_RELEVANCE: self._start_answer_relevance,
        }
        first: list[tuple[str, ModelRequest]] = []
        for metric in self.metrics:
            request = starts[metric](item, contexts, scoring)
            if request is not None:
                first.append((metric, request))
        if not first:
            return self._result(scoring)
        outcomes = yield tuple(request for _, request in first)
        second: list[tuple[str, ModelRequest]] = []
        for (metric, request), outcome in zip(first, outcomes, strict=True):
            follow_up = self._first_answer(item, contexts or [], metric, request, outcome, scoring)
            if follow_up is not None:
                second.append((metric, follow_up))
        if second:
            outcomes = yield tuple(request for _, request in second)
            for (metric, request), outcome in zip(second, outcomes, strict=True):
                self._second_answer(metric, request, outcome, scoring)
        return self._result(scoring)

    # Each metric's start: its stage-1 request, or ``None`` when it is settled (or undefined)
    # without a call.

    def _start_faithfulness(
        self, item: EvaluationItem, contexts: list[str] | None, scoring: _Scoring
    ) -> ModelRequest | None:
        if not contexts:
            return None
        if not item.rag_answer.strip():
            scoring.values[_FAITHFULNESS] = judged_scores.faithfulness([])
            scoring.values["claim_count"] = 0
            return None
        return ragas_calls.claims_request(item.question, item.rag_answer)

    def _start_context_precision(
        self, item: EvaluationItem, contexts: list[str] | None, scoring: _Scoring
    ) -> ModelRequest | None:
        if not contexts:
            return None
        return ragas_calls.contexts_request(item.question, item.ground_truth, contexts)

    def _start_context_recall(
        self, item: EvaluationItem, contexts: list[str] | None, scoring: _Scoring
    ) -> ModelRequest | None:
        if contexts is None:
            return None
        if not contexts:
            scoring.values[_CONTEXT_RECALL] = 0.0
            scoring.values["context_count"] = 0
            return None
        if not item.ground_truth.strip():
            scoring.values[_CONTEXT_RECALL] = judged_scores.context_recall([])
            scoring.values["statement_count"] = 0
            return None
        return ragas_calls.statements_request(item.question, item.ground_truth)

    def _start_answer_relevance(
        self, item: EvaluationItem, contexts: list[str] | None, scoring: _Scoring
    ) -> ModelRequest | None:
        if not item.rag_answer.strip():
            scoring.values[_ANSWER_RELEVANCE] = 0.0
            scoring.notes.append("blank answer: answer relevance 0 without a call")
            return None
        if self.similarity is not None:
            return ragas_calls.questions_request(item.rag_answer)
        return ragas_calls.rating_request(item.question, item.rag_answer)

    def _first_answer(
        self,
        item: EvaluationItem,
        contexts: Sequence[str],
        metric: str,
        request: ModelRequest,
        outcome: CallOutcome,
        scoring: _Scoring,
    ) -> ModelRequest | None:
        """Take a stage-1 answer; the stage-2 request it calls for, if any."""
        if not outcome.ok:
            scoring.fail(metric, outcome)
            return None
        value: Any = outcome.value
        if metric == _FAITHFULNESS:
            scoring.values["claim_count"] = len(value)
            if not value:
                scoring.values[_FAITHFULNESS] = judged_scores.faithfulness([])
                return None
            return ragas_calls.verdicts_request(item.question, contexts, value)
        if metric == _CONTEXT_PRECISION:
            relevant = [judgement.relevant for judgement in value]
            scoring.values[_CONTEXT_PRECISION] = judged_scores.ranked_context_precision(relevant)
            scoring.values["share"] = judged_scores.relevant_context_share(relevant)
            scoring.values["context_count"] = len(relevant)
            scoring.values["relevant_ranks"] = tuple(
                judgement.index for judgement in value if judgement.relevant
            )
            return None
        if metric == _CONTEXT_RECALL:
            scoring.values["statement_count"] = len(value)
            if not value:
                scoring.values[_CONTEXT_RECALL] = judged_scores.context_recall([])
                return None
            return ragas_calls.attributions_request(item.question, contexts, value)
        # Answer relevance: generated questions, or a direct rating.
        if request.purpose == "answer relevance rating":
            _take_rating(value, scoring)
            return None
        generated: ragas_calls.GeneratedQuestions = value
        similarity = self.similarity
        if generated.noncommittal:
            # ragas: a noncommittal answer scores 0 whatever its questions' similarity.
            scoring.values[_ANSWER_RELEVANCE] = 0.0
        elif similarity is None or not generated.questions:
            scoring.notes.append(
                "no question could be generated from the answer: answer relevance was rated "
                "directly"
            )
            return ragas_calls.rating_request(item.question, item.rag_answer)
        else:
            cosines = list(similarity(item.question, generated.questions))
            scoring.values[_ANSWER_RELEVANCE] = judged_scores.mean_cosine(cosines)
        scoring.values["noncommittal"] = generated.noncommittal
        scoring.values["relevance_method"] = METHOD_EMBEDDINGS
        scoring.values["generated_questions"] = generated.questions
        return None

    def _second_answer(
        self, metric: str, request: ModelRequest, outcome: CallOutcome, scoring: _Scoring
    ) -> None:
        if not outcome.ok:
            scoring.fail(metric, outcome)
            return
        value: Any = outcome.value
        if metric == _FAITHFULNESS:
            scoring.values[_FAITHFULNESS] = judged_scores.faithfulness(
                [verdict.supported for verdict in value]
            )
            scoring.values["unsupported_claims"] = tuple(
                verdict.claim for verdict in value if not verdict.supported
            )
        elif metric == _CONTEXT_RECALL:
            attributed = [attribution.attributed for attribution in value]
            scoring.values[_CONTEXT_RECALL] = judged_scores.context_recall(attributed)
            scoring.values["attributed_count"] = sum(attributed)
        else:
            _take_rating(value, scoring)

    def _result(self, scoring: _Scoring) -> RagasResult:
        values = scoring.values
        metrics = {
            name: values.get(name)
            for name in (_FAITHFULNESS, _CONTEXT_PRECISION, _CONTEXT_RECALL, _ANSWER_RELEVANCE)
        }
        # A composite that silently dropped a failed metric would not compare with the others.
        composite = None if scoring.errors else judged_scores.ragas_score(metrics)
        return RagasResult(
            faithfulness=metrics[_FAITHFULNESS],
            claim_count=values.get("claim_count"),
            unsupported_claims=values.get("unsupported_claims", ()),
            context_precision=metrics[_CONTEXT_PRECISION],
            relevant_context_share=values.get("share"),
            context_count=values.get("context_count"),
            relevant_ranks=values.get("relevant_ranks", ()),
            context_recall=metrics[_CONTEXT_RECALL],
            statement_count=values.get("statement_count"),
            attributed_count=values.get("attributed_count"),
            answer_relevance=metrics[_ANSWER_RELEVANCE],
            relevance_method=values.get("relevance_method"),
            noncommittal=values.get("noncommittal"),
            generated_questions=values.get("generated_questions", ()),
            ragas_score=composite,
            metric_errors=tuple(scoring.errors),
            notes=tuple(scoring.notes),
            error=call_failures.joined(scoring.errors),
            failure=call_failures.failure_kind(scoring.failed) if scoring.errors else None,
        )

    def unscored(self, error: str, failure: str) -> RagasResult:
        return RagasResult(error=error, failure=failure)

    def missing_answer(self, note: str) -> RagasResult:
        return RagasResult(
            answer_relevance=0.0,
            ragas_score=judged_scores.ragas_score({_ANSWER_RELEVANCE: 0.0}),
            notes=(note,),
        )

    # -- identity, cost -----------------------------------------------------------------------

    def identity(self) -> Mapping[str, Any]:
        return {
            "prompts_sha256": {
                role: hashlib.sha256(prompt.encode("utf-8")).hexdigest()
                for role, prompt in ragas_calls.SYSTEM_PROMPTS.items()
            },
            "schemas": ragas_calls.SCHEMAS,
            "max_tokens": [
                ragas_calls.LIST_MAX_TOKENS,
                ragas_calls.PER_ITEM_MAX_TOKENS,
                ragas_calls.SHORT_MAX_TOKENS,
            ],
            "weights": judged_scores.RAGAS_WEIGHTS,
            "metrics": list(self.metrics),
            "answer_relevance": {
                "method": self.relevance_method,
                "embedding_model": self.embedding_model,
                "questions": ragas_calls.GENERATED_QUESTIONS,
            },
        }

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        return {
            "question": item.question,
            "ground_truth": item.ground_truth,
            "rag_answer": item.rag_answer,
            "contexts": item.contexts,
        }

    def estimate(self, item: EvaluationItem, first_stage: Stage) -> CallEstimate:
        if not first_stage:
            return CallEstimate.none()
        contexts = usable_contexts(item.contexts) or []
        calls = len(first_stage)
        input_low = sum(request.input_tokens_low() for request in first_stage)
        input_high = sum(request.input_tokens_high() for request in first_stage)
        output_low = output_high = 0
        for request in first_stage:
            if request.purpose == "context precision":
                output_low += _PER_CONTEXT_TOKENS[0] * len(contexts)
                output_high += _PER_CONTEXT_TOKENS[1] * len(contexts)
            else:
                low, high = _REPLY_TOKENS[request.purpose]
                output_low += low
                output_high += high
        # Stage 2: the claims (statements) are about as long as the answer (ground truth).
        follow_ups = {
            "faithfulness claims": lambda: ragas_calls.verdicts_request(
                item.question, contexts, [item.rag_answer]
            ),
            "context recall statements": lambda: ragas_calls.attributions_request(
                item.question, contexts, [item.ground_truth]
            ),
        }
        sources = {
            "faithfulness claims": item.rag_answer,
            "context recall statements": item.ground_truth,
        }
        for request in first_stage:
            build = follow_ups.get(request.purpose)
            if build is None:
                continue
            follow_up = build()
            calls += 1
            input_low += follow_up.input_tokens_low()
            input_high += follow_up.input_tokens_high()
            characters = len(sources[request.purpose])
            output_low += _PER_VERDICT_TOKENS[0] * max(1, characters // _CHARACTERS_PER_CLAIM[0])
            output_high += _PER_VERDICT_TOKENS[1] * max(2, characters // _CHARACTERS_PER_CLAIM[1])
        return CallEstimate(
            calls_low=calls,
            calls_high=calls,
            input_tokens_low=input_low,
            input_tokens_high=input_high,
            output_tokens_low=output_low,
            output_tokens_high=output_high,
        )

    # -- reporting ----------------------------------------------------------------------------

    def cells(self, result: RagasResult | None) -> list[CellValue]:
        if result is None:
            return [""] * len(self.columns)
        return [
            result.faithfulness,
            result.context_precision,
            result.relevant_context_share,
            result.context_recall,
            result.answer_relevance,
            result.relevance_method or "",
            result.ragas_score,
            details_text(result),
        ]

    def metric_values(self, result: RagasResult) -> Mapping[str, float | None]:
        return {
            FAITHFULNESS: result.faithfulness,
            CONTEXT_PRECISION: result.context_precision,
            RELEVANT_CONTEXT_SHARE: result.relevant_context_share,
            CONTEXT_RECALL: result.context_recall,
            ANSWER_RELEVANCE: result.answer_relevance,
            RAGAS_SCORE: result.ragas_score,
        }

    def error_text(self, result: RagasResult) -> str:
        return result.error or ""

    def note_text(self, result: RagasResult) -> str:
        return "; ".join(result.notes)

    def tally(self) -> RagasTally:
        return RagasTally(self)

    # -- a jury -------------------------------------------------------------------------------

    def jury_verdict(self, results: Sequence[RagasResult]) -> RagasResult:
        """Each metric (and the relevant-context share) by the median of the jurors that
        computed it, with the details of the juror nearest that median; the composite
        recomputed from the medians by the family's rule. A metric no juror computed because
        their calls failed is the verdict's failed metric (the first failing juror's
        reason)."""
        computed_any = any(
            value is not None for result in results for value in self.metric_values(result).values()
        )
        if not computed_any and not any(result.scored for result in results):
            return self.unscored(*first_failure(results))
        fields: dict[str, Any] = {}
        errors: list[tuple[str, str]] = []
        failed: list[RagasResult] = []
        for metric in RAGAS_METRICS:
            given = [getattr(result, metric) for result in results]
            fields[metric] = median_score(given)
            siding = nearest_juror(given, fields[metric])
            if siding is not None:
                fields.update(
                    {name: getattr(results[siding], name) for name in _SUPPORTING_FIELDS[metric]}
                )
                continue
            failing = [result for result in results if metric in dict(result.metric_errors)]
            if failing:
                errors.append((metric, dict(failing[0].metric_errors)[metric]))
                failed += failing
        transient = any(result.failed_transiently for result in failed)
        return RagasResult(
            **fields,
            relevant_context_share=median_score(
                [result.relevant_context_share for result in results]
            ),
            context_count=next(
                (result.context_count for result in results if result.context_count is not None),
                None,
            ),
            # The family's rule: no composite when a part failed.
            ragas_score=None
            if errors
            else judged_scores.ragas_score({metric: fields[metric] for metric in RAGAS_METRICS}),
            metric_errors=tuple(errors),
            notes=tuple(
                note for note in results[0].notes if all(note in result.notes for result in results)
            ),
            error=call_failures.joined(errors),
            failure=(FailureKind.TRANSIENT if transient else FailureKind.QUESTION).value
            if errors
            else None,
        )

    # -- checkpoint JSON ----------------------------------------------------------------------

    def to_json(self, result: RagasResult) -> dict[str, Any]:
        return {
            "faithfulness": result.faithfulness,
            "claim_count": result.claim_count,
            "unsupported_claims": list(result.unsupported_claims),
            "context_precision": result.context_precision,
            "relevant_context_share": result.relevant_context_share,
            "context_count": result.context_count,
            "relevant_ranks": list(result.relevant_ranks),
            "context_recall": result.context_recall,
            "statement_count": result.statement_count,
            "attributed_count": result.attributed_count,
            "answer_relevance": result.answer_relevance,
            "relevance_method": result.relevance_method,
            "noncommittal": result.noncommittal,
            "generated_questions": list(result.generated_questions),
            "ragas_score": result.ragas_score,
            "metric_errors": [list(pair) for pair in result.metric_errors],
            "notes": list(result.notes),
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> RagasResult:
        ranks = data["relevant_ranks"]
        if not isinstance(ranks, list):
            raise ValueError("relevant_ranks must be a list")
        return RagasResult(
            faithfulness=result_json.optional_unit(data["faithfulness"]),
            claim_count=result_json.optional_count(data["claim_count"]),
            unsupported_claims=result_json.texts(data["unsupported_claims"]),
            context_precision=result_json.optional_unit(data["context_precision"]),
            relevant_context_share=result_json.optional_unit(data["relevant_context_share"]),
            context_count=result_json.optional_count(data["context_count"]),
            relevant_ranks=tuple(result_json.count(rank) for rank in ranks),
            context_recall=result_json.optional_unit(data["context_recall"]),
            statement_count=result_json.optional_count(data["statement_count"]),
            attributed_count=result_json.optional_count(data["attributed_count"]),
            answer_relevance=result_json.optional_unit(data["answer_relevance"]),
            relevance_method=result_json.optional_choice(data["relevance_method"], METHODS),
            noncommittal=result_json.optional_flag(data["noncommittal"]),
            generated_questions=result_json.texts(data["generated_questions"]),
            ragas_score=result_json.optional_unit(data["ragas_score"]),
            metric_errors=result_json.pairs(data["metric_errors"]),
            notes=result_json.texts(data["notes"]),
            **common,
        )


def _take_rating(rating: ragas_calls.RelevanceRating, scoring: _Scoring) -> None:
    # ragas: a noncommittal answer scores 0 whatever the rating.
    scoring.values[_ANSWER_RELEVANCE] = 0.0 if rating.noncommittal else rating.score
    scoring.values["noncommittal"] = rating.noncommittal
    scoring.values["relevance_method"] = METHOD_RATING


def _shortened(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _SHOWN_CLAIM_CHARACTERS:
        return flat
    return flat[: _SHOWN_CLAIM_CHARACTERS - 1].rstrip() + "…"


def details_text(result: RagasResult) -> str:
    """What the scores rest on, for a reader of the table: counts and unsupported claims."""
    parts = []
    if result.faithfulness is not None and result.claim_count is not None:
        supported = result.claim_count - len(result.unsupported_claims)
        text = f"faithfulness: {supported} of {result.claim_count} claims supported"
        if result.unsupported_claims:
            shown = "; ".join(f'"{_shortened(claim)}"' for claim in result.unsupported_claims)
            text += f" (unsupported: {shown})"
        parts.append(text)
    if result.context_precision is not None and result.context_count:
        ranks = ", ".join(str(rank) for rank in result.relevant_ranks) or "none"
        parts.append(
            f"context precision: {len(result.relevant_ranks)} of {result.context_count} "
            f"contexts relevant (ranks {ranks})"
        )
    if result.context_recall is not None and result.statement_count:
        parts.append(
            f"context recall: {result.attributed_count or 0} of {result.statement_count} "
            "statements attributed"
        )
    relevance = []
    if result.noncommittal:
        relevance.append("noncommittal (scored 0)")
    if result.generated_questions:
        relevance.append(
            "questions "
            + "; ".join(f'"{_shortened(question)}"' for question in result.generated_questions)
        )
    if relevance:
        parts.append("answer relevance: " + "; ".join(relevance))
    return " | ".join(parts)


class RagasTally(SummaryTally[RagasResult]):
    """Each metric's mean, how answer relevance was measured, and the unscored count."""

    def __init__(self, family: RagasFamily) -> None:
        self.family = family
        self.values = {column: MetricValues() for column in family.metric_columns}
        self.methods: Counter[str | None] = Counter()
        self.unscored = 0

    def add(self, result: RagasResult) -> None:
        values = self.family.metric_values(result)
        for column, collected in self.values.items():
            collected.add(values[column])
        if result.answer_relevance is not None:
            self.methods[result.relevance_method] += 1
        self.unscored += not result.scored

    def lines(self) -> list[SummaryLine]:
        lines = [values.line(column) for column, values in self.values.items()]
        # No comma: a summary cell must stay unquoted so its line starts with #SUMMARY:.
        parts = []
        for method in METHODS:
            if self.methods[method]:
                model = (
                    f" with {self.family.embedding_model}"
                    if method == METHOD_EMBEDDINGS and self.family.embedding_model
                    else ""
                )
                parts.append(f"{method} {self.methods[method]}{model}")
        lines.append(SummaryLine("RAGAS Relevance Method", " / ".join(parts) or "none"))
        lines.append(unscored_line("RAGAS Unscored", self.unscored))
        return lines
