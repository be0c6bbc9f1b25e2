"""Generating one question as a model-judged task: one structured-output call per question.

The engine that runs the judge (``llm/engine.py``) runs these too, so generation gets the
judge's concurrency, retries, pacing, usage and cost accounting, spending cap, response cache,
checkpoint lines and Message Batches. A task's "question" is a planned ``QuestionSlot``; its
item is a ``GenerationItem`` (the slot and its chunks) where the judge's is an
``EvaluationItem``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_evaluator.families.base import (
    CallEstimate,
    CellValue,
    FamilyResult,
    JudgedFamily,
    NoSummary,
    Stage,
    TaskRun,
)
from rag_evaluator.generate.documents import Chunk
from rag_evaluator.generate.prompts import (
    GENERATION_MAX_TOKENS,
    GENERATION_SCHEMA,
    GeneratedPair,
    build_user_message,
    parse_generated,
)
from rag_evaluator.generate.sampling import QuestionSlot
from rag_evaluator.llm.requests import ModelRequest, ReplyError

GENERATION_FAMILY = "generate"
# The reply: a question, a few sentences of answer, facts and the quoted support.
OUTPUT_TOKENS_LOW = 150
OUTPUT_TOKENS_HIGH = 600


@dataclass(frozen=True)
class GenerationItem:
    """What one question's task reads: its slot and the chunks it is about."""

    slot: QuestionSlot
    chunks: tuple[Chunk, ...]
    # The judging planner asks this of every item; a question to generate has no answer yet.
    answer_missing: bool = False

    @property
    def question_number(self) -> int:
        return self.slot.number


@dataclass(kw_only=True, slots=True)
class GenerationResult(FamilyResult):
    """The reply for one question slot (``None`` when the call gave no usable reply)."""

    pair: GeneratedPair | None = None


class GenerationFamily(JudgedFamily[GenerationResult]):
    """One question and its golden answer per slot, from the slot's chunks."""

    name = GENERATION_FAMILY
    version = 1

    def __init__(self, system_prompt: str) -> None:
        self.system_prompt = system_prompt

    def request(self, item: GenerationItem) -> ModelRequest:  # type: ignore[override]
        chunks = [(chunk.document, chunk.text) for chunk in item.chunks]
        return ModelRequest(
            system=self.system_prompt,
            user=build_user_message(item.slot.question_type, chunks, item.slot.variant),
            schema=GENERATION_SCHEMA,
            max_tokens=GENERATION_MAX_TOKENS,
            purpose="generate",
            parse=parse_generated,
        )

    def run(self, item: GenerationItem) -> TaskRun[GenerationResult]:  # type: ignore[override]
        (outcome,) = yield (self.request(item),)
        if not outcome.ok:
            return self.unscored(outcome.error or "no usable reply", _failure(outcome.failure))
        return GenerationResult(pair=outcome.value)  # type: ignore[arg-type]

    def unscored(self, error: str, failure: str) -> GenerationResult:
        return GenerationResult(error=error, failure=failure)

    def identity(self) -> Mapping[str, Any]:
        return {
            "prompt_sha256": hashlib.sha256(self.system_prompt.encode("utf-8")).hexdigest(),
            "max_tokens": GENERATION_MAX_TOKENS,
            "schema": GENERATION_SCHEMA,
        }

    def cache_inputs(self, item: GenerationItem) -> Mapping[str, Any]:  # type: ignore[override]
        return {"user": self.request(item).user}

    def estimate(self, item: GenerationItem, first_stage: Stage) -> CallEstimate:  # type: ignore[override]
        if not first_stage:
            return CallEstimate.none()
        request = first_stage[0]
        return CallEstimate(
            calls_low=1,
            calls_high=1,
            input_tokens_low=request.input_tokens_low(),
            input_tokens_high=request.input_tokens_high(),
            output_tokens_low=OUTPUT_TOKENS_LOW,
            output_tokens_high=OUTPUT_TOKENS_HIGH,
            system_characters=len(request.system),
        )

    def cells(self, result: GenerationResult | None) -> list[CellValue]:
        return []

    def tally(self) -> NoSummary:
        return NoSummary()

    def to_json(self, result: GenerationResult) -> dict[str, Any]:
        pair = result.pair
        if pair is None:
            return {}
        return {
            "question": pair.question,
            "answer": pair.answer,
            "required_facts": list(pair.required_facts),
            "supporting_sentences": list(pair.supporting_sentences),
        }

    def from_json(self, data: Mapping[str, Any], **common: Any) -> GenerationResult:
        if not isinstance(data, Mapping):
            raise ValueError("a generation result must be an object")
        if not data:
            return GenerationResult(**common)
        # The same checks as a fresh reply: a damaged line raises ValueError.
        try:
            pair = parse_generated(data)
        except ReplyError as exc:
            raise ValueError(exc.message) from exc
        return GenerationResult(pair=pair, **common)


def _failure(kind: object) -> str:
    value = getattr(kind, "value", None)
    return value if isinstance(value, str) else "question"
