"""Which replies enter the golden set, and what the next round asks to make up for the rest.

Replies are judged in question-slot order, so the near-duplicate check of a question looks at
every question kept before it, and the outcome of a run (or a resumed run) is the same for the
same replies. A round asks one new question for each question the previous rounds dropped, of
the dropped question's type, until ``--count`` are kept, ``MAX_ROUNDS`` rounds have run or
``MAX_EXTRA_SHARE`` of ``--count`` extra questions have been asked.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.generate.filters import (
    FAILED,
    NEAR_DUPLICATE,
    Rejection,
    check_reply,
    is_near_duplicate,
)
from rag_evaluator.generate.golden import GoldenPair, golden_pair
from rag_evaluator.generate.sampling import QuestionSlot
from rag_evaluator.generate.task import GenerationItem, GenerationResult

MAX_ROUNDS = 3
MAX_EXTRA_SHARE = 0.5


@dataclass(frozen=True)
class SlotOutcome:
    """What became of one question slot: a golden pair, or why it was dropped."""

    slot: QuestionSlot
    pair: GoldenPair | None
    rejection: Rejection | None


def extra_allowance(count: int) -> int:
    """How many questions beyond ``count`` a run may ask to make up for dropped ones."""
    return math.ceil(count * MAX_EXTRA_SHARE)


def judge_replies(
    entries: Sequence[tuple[GenerationItem, GenerationResult]], model_id: str
) -> list[SlotOutcome]:
    """Apply the filters to every reply, in the order given (question-slot order)."""
    outcomes: list[SlotOutcome] = []
    kept_questions: list[str] = []
    for item, result in entries:
        slot = item.slot
        if result.pair is None:
            rejection = Rejection(FAILED, result.error or "no usable reply")
            outcomes.append(SlotOutcome(slot, None, rejection))
            continue
        chunk_texts = [chunk.text for chunk in item.chunks]
        checked = check_reply(result.pair, slot.question_type, chunk_texts)
        if isinstance(checked, Rejection):
            outcomes.append(SlotOutcome(slot, None, checked))
            continue
        question = result.pair.question.strip()
        if is_near_duplicate(question, kept_questions):
            outcomes.append(
                SlotOutcome(
                    slot, None, Rejection(NEAR_DUPLICATE, "a kept question is nearly the same")
                )
            )
            continue
        kept_questions.append(question)
        pair = golden_pair(slot.question_type, item.chunks, result.pair, checked, model_id)
        outcomes.append(SlotOutcome(slot, pair, None))
    return outcomes


def replacement_types(outcomes: Sequence[SlotOutcome], count: int, asked: int) -> list[str]:
    """The types of the questions the next round should ask (empty: no further round).

    ``asked`` is how many questions all rounds asked so far; the next round asks one question
    per dropped one, short of ``count`` kept, within the run's extra allowance.
    """
    kept = sum(outcome.pair is not None for outcome in outcomes)
    shortfall = count - kept
    room = count + extra_allowance(count) - asked
    if shortfall <= 0 or room <= 0:
        return []
    dropped = [outcome.slot.question_type for outcome in outcomes if outcome.pair is None]
    # The most recent drops first: they are the ones no later round replaced yet.
    return dropped[-shortfall:][:room]


def rejection_counts(outcomes: Sequence[SlotOutcome]) -> Counter[str]:
    return Counter(outcome.rejection.reason for outcome in outcomes if outcome.rejection)
