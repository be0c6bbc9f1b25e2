"""What a run costs: a range estimated before it starts, the exact figure after it ends.

The estimate works from text lengths, because token counts need the model's tokenizer
(an API call). It brackets the likely cost:

- low: every question judged in one call, prose-like text (4 characters per token) and a
  short reply;
- high: denser text (3 characters per token), a longer reply, and a quarter of the
  questions hedging into 3 extra consensus calls each.

Retries of failed calls are not included: failed calls are rarely billed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.core.models import (
    BATCH_DISCOUNT,
    CACHE_READ_MULTIPLIER,
    CACHE_WRITE_MULTIPLIER,
    ModelInfo,
)
from rag_evaluator.core.records import TokenUsage

CHARS_PER_TOKEN_LOW = 4  # English prose
CHARS_PER_TOKEN_HIGH = 3  # numbers, code, tables and non-English text tokenise denser
# Tokens the API adds to every request: message framing and the output schema's instructions.
REQUEST_OVERHEAD_TOKENS = 300
# The judge's JSON reply: reasoning, a 1-2 sentence summary and three integers.
OUTPUT_TOKENS_LOW = 150
OUTPUT_TOKENS_HIGH = 500
# At the high end, this share of questions hedges and gets the consensus calls.
CONSENSUS_SHARE_HIGH = 0.25
CONSENSUS_EXTRA_CALLS = 3
_PER_MILLION = 1_000_000


@dataclass(frozen=True)
class CostEstimate:
    """The expected range of a run's API calls, tokens and dollars."""

    questions: int
    expected_calls_low: int
    expected_calls_high: int
    input_tokens_low: int
    input_tokens_high: int
    output_tokens_low: int
    output_tokens_high: int
    low_usd: float
    high_usd: float


def _dollars(input_tokens: float, output_tokens: float, model: ModelInfo, batch: bool) -> float:
    cost = (
        input_tokens * model.input_price_per_mtok + output_tokens * model.output_price_per_mtok
    ) / _PER_MILLION
    return cost * BATCH_DISCOUNT if batch else cost


def estimate_cost(
    user_messages: Sequence[str],
    system_prompt: str,
    model: ModelInfo,
    *,
    batch: bool = False,
) -> CostEstimate:
    """The cost range of judging these user messages (one per question) with this prompt."""
    questions = len(user_messages)
    if questions == 0:
        return CostEstimate(0, 0, 0, 0, 0, 0, 0, 0.0, 0.0)
    characters = [len(system_prompt) + len(message) for message in user_messages]
    input_low = sum(count // CHARS_PER_TOKEN_LOW + REQUEST_OVERHEAD_TOKENS for count in characters)
    input_first_calls_high = sum(
        math.ceil(count / CHARS_PER_TOKEN_HIGH) + REQUEST_OVERHEAD_TOKENS for count in characters
    )
    calls_low = questions
    consensus_questions = math.ceil(questions * CONSENSUS_SHARE_HIGH)
    calls_high = questions + consensus_questions * CONSENSUS_EXTRA_CALLS
    # Which questions hedge is unknown: their extra calls are priced at the average size.
    input_high = round(input_first_calls_high * calls_high / questions)
    output_low = calls_low * OUTPUT_TOKENS_LOW
    output_high = calls_high * OUTPUT_TOKENS_HIGH
    return CostEstimate(
        questions=questions,
        expected_calls_low=calls_low,
        expected_calls_high=calls_high,
        input_tokens_low=input_low,
        input_tokens_high=input_high,
        output_tokens_low=output_low,
        output_tokens_high=output_high,
        low_usd=_dollars(input_low, output_low, model, batch),
        high_usd=_dollars(input_high, output_high, model, batch),
    )


def actual_cost(usage: TokenUsage, model: ModelInfo, *, batch: bool = False) -> float:
    """Dollars for the usage the API reported, cache writes and reads included."""
    input_price = model.input_price_per_mtok
    cost = (
        usage.input_tokens * input_price
        + usage.output_tokens * model.output_price_per_mtok
        + usage.cache_creation_input_tokens * input_price * CACHE_WRITE_MULTIPLIER
        + usage.cache_read_input_tokens * input_price * CACHE_READ_MULTIPLIER
    ) / _PER_MILLION
    return cost * BATCH_DISCOUNT if batch else cost
