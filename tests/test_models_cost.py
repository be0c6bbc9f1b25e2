"""Model resolution and cost arithmetic, checked against numbers worked out by hand."""

from __future__ import annotations

import pytest

from rag_evaluator.core.cost import actual_cost, estimate_cost
from rag_evaluator.core.models import ModelInfo, model_aliases, resolve_model
from rag_evaluator.core.records import TokenUsage
from rag_evaluator.errors import UsageError

SONNET = ModelInfo("sonnet", "claude-sonnet-5-5", 2.0, 10.0)
HAIKU = ModelInfo("haiku", "claude-haiku-5-5", 0.10, 0.50)
OPUS = ModelInfo("opus", "claude-opus-5-5", 4.0, 20.0)


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
        "sonnet", "claude-sonnet-4-5-20250929", 2.0, 10.0
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


def test_estimate_worked_by_hand() -> None:
    system_prompt = "s" * 1000
    messages = ["m" * 200] * 4
    estimate = estimate_cost(messages, system_prompt, HAIKU)

    # Low: 1 call per question, (1000 + 200) / 4 + 300 overhead = 600 input tokens each,
    # 150 output tokens each.
    assert estimate.questions == 4
    assert estimate.expected_calls_low == 4
    assert estimate.input_tokens_low == 2400
    assert estimate.output_tokens_low == 600
    # 2400 x 0.10 / 1M + 600 x 0.50 / 1M
    assert estimate.low_usd == pytest.approx(0.00054)
    # High: 1200 / 3 + 300 = 700 input tokens a call; one question in four (rounded up)
    # hedges and gets 3 more calls: 4 + 3 = 7 calls, 500 output tokens each.
    assert estimate.expected_calls_high == 7
    assert estimate.input_tokens_high == 4900
    assert estimate.output_tokens_high == 3500
    # 4900 x 0.10 / 1M + 3500 x 0.50 / 1M
    assert estimate.high_usd == pytest.approx(0.00224)


def test_batch_estimate_is_half_price() -> None:
    messages = ["m" * 200] * 4
    full = estimate_cost(messages, "s" * 1000, SONNET)
    half = estimate_cost(messages, "s" * 1000, SONNET, batch=True)
    # Sonnet, low: 2400 x 2 / 1M + 600 x 10 / 1M = 0.0048 + 0.006
    assert full.low_usd == pytest.approx(0.0108)
    assert half.low_usd == pytest.approx(0.0054)
    assert half.high_usd == pytest.approx(full.high_usd / 2)


def test_consensus_share_rounds_up() -> None:
    # 5 questions: a quarter is 1.25, so 2 hedge -> 5 + 6 calls.
    assert estimate_cost(["x"] * 5, "p", OPUS).expected_calls_high == 11


def test_an_empty_run_costs_nothing() -> None:
    estimate = estimate_cost([], "prompt", SONNET)
    assert (estimate.low_usd, estimate.high_usd, estimate.expected_calls_high) == (0.0, 0.0, 0)


def test_longer_texts_cost_more_and_low_never_exceeds_high() -> None:
    short = estimate_cost(["a" * 100] * 10, "p" * 500, SONNET)
    long = estimate_cost(["a" * 10_000] * 10, "p" * 500, SONNET)
    assert long.low_usd > short.low_usd
    for estimate in (short, long):
        assert estimate.low_usd <= estimate.high_usd
