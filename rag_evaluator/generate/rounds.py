"""A generate run's rounds: the first asks ``--count`` questions, each later one replaces
those the filters dropped. Every round is planned with the run session's planner over every
slot so far: the slots finished (resumed, or recorded in earlier rounds) are done, the rest
are the calls of the round."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace

from rag_evaluator.families.base import QuestionRecord, first_stage
from rag_evaluator.generate.documents import Chunk
from rag_evaluator.generate.options import PAIRING_KEYWORDS
from rag_evaluator.generate.sampling import (
    FACTUAL,
    MULTI_HOP,
    QuestionSlot,
    SlotPlanner,
    type_counts,
)
from rag_evaluator.generate.selection import (
    MAX_ROUNDS,
    SlotOutcome,
    extra_allowance,
    judge_replies,
    replacement_types,
)
from rag_evaluator.generate.task import (
    GENERATION_FAMILY,
    GenerationFamily,
    GenerationItem,
    GenerationResult,
)
from rag_evaluator.llm.checkpoint.store import load_checkpoint
from rag_evaluator.llm.cost import CostEstimate, estimate_cost
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.planning import (
    CountTokens,
    JudgingOptions,
    JudgingPlan,
    PreparedCheckpoint,
    plan_judging,
)
from rag_evaluator.llm.response_cache import ResponseCache

logger = logging.getLogger(__name__)


def _result(record: QuestionRecord) -> GenerationResult:
    return record.results[GENERATION_FAMILY]  # type: ignore[return-value]


def known_records(plan: JudgingPlan) -> dict[int, QuestionRecord]:
    """The records a plan has without any call: finished before, or from the response cache."""
    known = dict(plan.done)
    for job in plan.jobs:
        if not job.families and job.known:
            known[job.question_number] = QuestionRecord(job.question_number, dict(job.known))
    return known


class Rounds:
    """The question slots of every round so far, planned and judged over evaluate's planner.

    Each ``plan`` is a ``JudgingPlan`` over every slot so far: the ones finished (resumed,
    or recorded in earlier rounds) are done, the rest are jobs for the engine.
    """

    def __init__(
        self,
        planner: SlotPlanner,
        chunks: Sequence[Chunk],
        options: JudgingOptions,
        checkpoint: PreparedCheckpoint,
        cache: ResponseCache,
        count: int,
    ) -> None:
        self.planner = planner
        self.chunks = {chunk.chunk_id: chunk for chunk in chunks}
        self.options = options
        self.checkpoint = checkpoint
        self.cache = cache
        self.count = count
        self.items: dict[int, GenerationItem] = {}
        self.slots: list[QuestionSlot] = []
        self.rounds = 0

    def add(self, types: Sequence[str]) -> None:
        self.rounds += 1
        for slot in self.planner.plan(types):
            self.slots.append(slot)
            chunks = tuple(self.chunks[chunk_id] for chunk_id in slot.chunk_ids)
            self.items[slot.number] = GenerationItem(slot, chunks)

    def plan(self, window: int, count_tokens: CountTokens | None = None) -> JudgingPlan:
        numbers = [slot.number for slot in self.slots]
        checkpoint = replace(self.checkpoint, header=replace(self.checkpoint.header, order=numbers))
        return plan_judging(
            self.options,
            checkpoint,
            [self.items[number] for number in numbers],  # type: ignore[misc]
            self.cache,
            answers_name="",
            context_window_tokens=window,
            count_tokens=count_tokens,
        )

    def outcomes(self, records: Mapping[int, QuestionRecord]) -> list[SlotOutcome]:
        entries = [
            (self.items[slot.number], _result(records[slot.number]))
            for slot in self.slots
            if slot.number in records
        ]
        return judge_replies(entries, self.options.model.key)

    def next_types(self, outcomes: Sequence[SlotOutcome]) -> list[str]:
        """The types of the next round's questions (empty: no further round)."""
        if self.rounds >= MAX_ROUNDS:
            return []
        return replacement_types(outcomes, self.count, len(self.slots))

    def continue_checkpoint(self, families: Mapping[str, GenerationFamily]) -> None:
        """The next round goes on with the checkpoint the earlier rounds wrote."""
        path = self.checkpoint.path
        self.checkpoint = PreparedCheckpoint(
            path, self.checkpoint.header, load_checkpoint(path, families), None
        )

    def allowance(self) -> int:
        """Questions later rounds may still ask to replace dropped ones."""
        return max(0, self.count + extra_allowance(self.count) - len(self.slots))


def first_round_counts(
    weights: dict[str, int], count: int, planner: SlotPlanner, pairing: str | None
) -> dict[str, int]:
    counts = type_counts(weights, count)
    if counts.get(MULTI_HOP) and not planner.has_pairs():
        logger.warning(
            "No two chunks are related enough to pair for multi_hop questions (%s); the %d "
            "multi_hop questions are asked as factual ones",
            "shared keywords" if pairing == PAIRING_KEYWORDS else "similar embeddings",
            counts[MULTI_HOP],
        )
        counts[FACTUAL] = counts.get(FACTUAL, 0) + counts.pop(MULTI_HOP)
    return counts


def with_allowance(
    estimate: CostEstimate, rounds: Rounds, family: GenerationFamily, batch: bool
) -> CostEstimate:
    """The estimate with the questions later rounds may ask added to its high end."""
    allowance = rounds.allowance()
    if not allowance:
        return estimate
    per_question = _per_question_high_usd(
        family, list(rounds.items.values()), rounds.options.model, batch
    )
    return replace(
        estimate,
        expected_calls_high=estimate.expected_calls_high + allowance,
        high_usd=estimate.high_usd + per_question * allowance,
    )


def _per_question_high_usd(
    family: GenerationFamily, items: Sequence[GenerationItem], model: ModelInfo, batch: bool
) -> float:
    """The high estimate of one question's cost, averaged over (up to 50 of) ``items``."""
    estimates = []
    for item in list(items)[:50]:
        stage = first_stage(family.run(item))
        if isinstance(stage, tuple):
            estimates.append(family.estimate(item, stage))
    if not estimates:
        return 0.0
    cost = estimate_cost({GENERATION_FAMILY: estimates}, model, batch=batch)
    return cost.high_usd / len(estimates)
