"""Model resolution and cost arithmetic, checked against numbers worked out by hand."""

from __future__ import annotations

import pytest

from rag_evaluator.errors import UsageError
from rag_evaluator.families.base import CallEstimate
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.cost import actual_cost, caches_system_prompt, estimate_cost
from rag_evaluator.llm.models import ModelInfo, model_aliases, resolve_model
from rag_evaluator.llm.requests import ModelRequest, too_long_reason

SONNET = ModelInfo("sonnet", "claude-sonnet-5-5", 2.0, 10.0, cache_minimum_tokens=1024)
HAIKU = ModelInfo("haiku", "claude-haiku-5-5", 0.10, 0.50, cache_minimum_tokens=4096)
OPUS = ModelInfo("opus", "claude-opus-5-5", 4.0, 20.0, cache_minimum_tokens=512)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sonnet", SONNET),
        ("haiku", HAIKU),
        ("opus", OPUS),
        (" Opus ", OPUS),
        ("claude-haiku-5-5", HAIKU),
    ],
)
def test_aliases_and_current_ids_resolve(name: str, expected: ModelInfo) -> None:
    assert resolve_model(name) == expected


def test_another_full_id_keeps_its_id_and_borrows_its_family_prices() -> None:
    assert resolve_model("claude-sonnet-4-5-20250929") == ModelInfo(
        "sonnet", "claude-sonnet-4-5-20250929", 2.0, 10.0, cache_minimum_tokens=1024
    )


@pytest.mark.parametrize("name", ["gpt-4", "sonet", "", "claude-instant-1"])
def test_unknown_names_list_the_aliases(name: str) -> None:
    with pytest.raises(UsageError) as raised:
        resolve_model(name)
    for alias in ("sonnet", "haiku", "opus"):
        assert alias in str(raised.value)


def test_sonnet_is_listed_first() -> None:
    assert model_aliases() == ["sonnet", "haiku", "opus"]


# -- actual cost --------------------------------------------------------------------------------


def test_actual_cost_of_plain_usage() -> None:
    usage = TokenUsage(input_tokens=1_000_000, output_tokens=100_000)
    # 1M in at $2 + 0.1M out at $10 = 2 + 1
    assert actual_cost(usage, SONNET) == pytest.approx(3.0)
    # 1M in at $0.10 + 0.1M out at $0.50 = 0.10 + 0.05
    assert actual_cost(usage, HAIKU) == pytest.approx(0.15)


def test_actual_cost_prices_cache_writes_and_reads() -> None:
    usage = TokenUsage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_creation_input_tokens=200_000,
        cache_read_input_tokens=500_000,
    )
    # 2 + 1 + 0.2M x $2 x 1.25 (= 0.5) + 0.5M x $2 x 0.1 (= 0.1)
    assert actual_cost(usage, SONNET) == pytest.approx(3.6)
    assert actual_cost(usage, SONNET, batch=True) == pytest.approx(1.8)


def test_actual_cost_of_nothing_is_zero() -> None:
    assert actual_cost(TokenUsage(), OPUS) == 0.0


# -- estimate -----------------------------------------------------------------------------------

ITEM = EvaluationItem(1, "q", "gt", "a")


def judge_estimates(
    system_prompt: str, message_lengths: list[int], hedge_phrases: tuple[str, ...] = ("unclear",)
) -> dict[str, list[CallEstimate]]:
    """The judge's per-question estimates for user messages of the given lengths."""
    family = JudgeFamily(system_prompt, hedge_phrases)
    estimates = []
    for length in message_lengths:
        request = ModelRequest(system_prompt, "m" * length, {}, 2000, "judge")
        estimates.append(family.estimate(ITEM, (request,)))
    return {"judge": estimates}


def test_estimate_worked_by_hand() -> None:
    estimate = estimate_cost(judge_estimates("s" * 1000, [200] * 4), HAIKU)

    # Low: 1 call per question, (1000 + 200) / 4 + 300 overhead = 600 input tokens each,
    # 150 output tokens each.
    assert estimate.questions == 4
    assert estimate.expected_calls_low == 4
    assert estimate.input_tokens_low == 2400
    assert estimate.output_tokens_low == 600
    # 2400 x 0.10 / 1M + 600 x 0.50 / 1M
    assert estimate.low_usd == pytest.approx(0.00054)
    # High: 1200 / 3 + 300 = 700 input tokens a call; every question may hedge and get 3
    # more calls (the range must hold any run): 4 calls a question, 16 in all, 500 output
    # tokens each.
    assert estimate.expected_calls_high == 16
    assert estimate.input_tokens_high == 11200
    assert estimate.output_tokens_high == 8000
    # 11200 x 0.10 / 1M + 8000 x 0.50 / 1M
    assert estimate.high_usd == pytest.approx(0.00512)


def test_batch_estimate_is_half_price() -> None:
    estimates = judge_estimates("s" * 1000, [200] * 4)
    full = estimate_cost(estimates, SONNET)
    half = estimate_cost(estimates, SONNET, batch=True)
    # Sonnet, low: 2400 x 2 / 1M + 600 x 10 / 1M = 0.0048 + 0.006
    assert full.low_usd == pytest.approx(0.0108)
    assert half.low_usd == pytest.approx(0.0054)
    assert half.high_usd == pytest.approx(full.high_usd / 2)


def test_prompt_caching_prices_one_write_and_then_reads() -> None:
    # 8000 characters: 2000 tokens at the low count, past Sonnet's 1024-token minimum.
    estimates = judge_estimates("s" * 8000, [200] * 4)
    assert caches_system_prompt("s" * 8000, SONNET)
    assert not caches_system_prompt("s" * 4000, SONNET)  # 1000 tokens: under the minimum
    cached = estimate_cost(estimates, SONNET, prompt_caching={"judge": True})
    # Low: 4 x ((8000 + 200) / 4 + 300) = 9400 input tokens, of which 4 x 2000 system:
    # 1400 plain + 2000 written x 1.25 + 3 x 2000 read x 0.1 = 4500 priced tokens.
    assert cached.low_usd == pytest.approx((4500 * 2 + 600 * 10) / 1_000_000)
    assert cached.prompt_caching
    plain = estimate_cost(estimates, SONNET)
    assert cached.low_usd < plain.low_usd
    # In a batch, caching is best effort: the high end assumes no cache reads.
    batched = estimate_cost(estimates, SONNET, prompt_caching={"judge": True}, batch=True)
    assert batched.high_usd == pytest.approx(plain.high_usd / 2)


def test_every_question_may_hedge_at_the_high_end() -> None:
    # 5 questions, each possibly hedging into 3 consensus votes: 20 calls at most.
    assert estimate_cost(judge_estimates("p", [1] * 5), OPUS).expected_calls_high == 20


def test_without_hedge_phrases_no_consensus_calls_are_expected() -> None:
    estimate = estimate_cost(judge_estimates("p", [1] * 5, hedge_phrases=()), OPUS)
    assert estimate.expected_calls_high == 5


def test_an_empty_run_costs_nothing() -> None:
    estimate = estimate_cost({}, SONNET)
    assert (estimate.low_usd, estimate.high_usd, estimate.expected_calls_high) == (0.0, 0.0, 0)


def test_longer_texts_cost_more_and_low_never_exceeds_high() -> None:
    short = estimate_cost(judge_estimates("p" * 500, [100] * 10), SONNET)
    long = estimate_cost(judge_estimates("p" * 500, [10_000] * 10), SONNET)
    assert long.low_usd > short.low_usd
    for estimate in (short, long):
        assert estimate.low_usd <= estimate.high_usd


def test_a_request_too_long_for_the_window_is_recognised() -> None:
    request = ModelRequest("s", "m" * 4_000_000, {}, 2000, "judge")
    reason = too_long_reason(request, 1_000_000)
    assert reason is not None and "too long for the model" in reason
    assert too_long_reason(ModelRequest("s", "m" * 1000, {}, 2000, "judge"), 1_000_000) is None
