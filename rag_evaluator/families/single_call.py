"""A family that asks one question of the model per RAG answer (factual accuracy, classify,
match).

Subclasses say what to send (``request``), what a usable answer becomes (``from_answer``),
and optionally how a question is settled without a call (``shortcut``); the task, its
identity, cache inputs and estimate are shared.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

from rag_evaluator.families import call_failures
from rag_evaluator.families.base import (
    CallEstimate,
    JudgedFamily,
    ResultT,
    Stage,
    TaskRun,
    reference_for_models,
)
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest


class SingleCallFamily(JudgedFamily[ResultT]):
    """One structured call per question, read into the family's result."""

    system_prompt: str
    schema: Mapping[str, Any]
    max_tokens: int
    # The reply's expected size in output tokens: (low, high).
    reply_tokens: tuple[int, int]

    @abstractmethod
    def request(self, item: EvaluationItem) -> ModelRequest:
        """The call for ``item``."""

    @abstractmethod
    def from_answer(self, answer: Any) -> ResultT:
        """The result of a usable answer (the request's parsed value)."""

    def shortcut(self, item: EvaluationItem) -> ResultT | None:
        """The result of a question settled without a call, if this one is."""
        return None

    def run(self, item: EvaluationItem) -> TaskRun[ResultT]:
        settled = self.shortcut(item)
        if settled is not None:
            return settled
        (outcome,) = yield (self.request(item),)
        if not outcome.ok:
            return self.unscored(
                call_failures.reason(outcome), call_failures.failure_kind([outcome])
            )
        return self.from_answer(outcome.value)

    def identity(self) -> Mapping[str, Any]:
        return {
            "prompt_sha256": hashlib.sha256(self.system_prompt.encode("utf-8")).hexdigest(),
            "schema": self.schema,
            "max_tokens": self.max_tokens,
        }

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        return {
            "question": item.question,
            "ground_truth": reference_for_models(item),
            "rag_answer": item.rag_answer,
        }

    def estimate(self, item: EvaluationItem, first_stage: Stage) -> CallEstimate:
        if not first_stage:
            return CallEstimate.none()
        request = first_stage[0]
        low, high = self.reply_tokens
        return CallEstimate(
            calls_low=1,
            calls_high=1,
            input_tokens_low=request.input_tokens_low(),
            input_tokens_high=request.input_tokens_high(),
            output_tokens_low=low,
            output_tokens_high=high,
            system_characters=len(request.system),
        )
