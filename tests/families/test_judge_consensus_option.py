"""The judge without consensus (a jury's jurors): a hedging verdict stands, no votes asked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes.anthropic_server import FakeAnthropicServer, verdict

from rag_evaluator import metrics
from rag_evaluator.families.item_tasks import run_item
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.client import ModelClient

QUESTION = "How long is the X200 warranty?"
ITEM = EvaluationItem(1, QUESTION, "Two years, parts and labour.", "A 2-year warranty on parts.")
HEDGING = verdict(1, 0, 1, reasoning="Recall is borderline: labour is not mentioned.")


@pytest.fixture
def client(fake_anthropic: FakeAnthropicServer) -> Iterator[ModelClient]:
    with metrics.judge_client("haiku") as made:
        yield made


def judge(consensus: bool) -> JudgeFamily:
    return JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES, consensus=consensus)


def test_without_consensus_a_hedging_first_verdict_stands(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script(QUESTION, HEDGING, verdict(0, 0, 0))
    result = run_item(judge(consensus=False), ITEM, client)
    assert isinstance(result, JudgeResult)
    assert len(fake_anthropic.requests_about(QUESTION)) == 1
    assert result.scores == Scores(1, 0, 1)
    assert (result.consensus, result.votes, result.hedge_phrases) == (False, (), ())
    assert result.calls == 1


def test_with_consensus_the_same_reply_asks_three_votes(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script(QUESTION, HEDGING, verdict(0, 0, 0))
    result = run_item(judge(consensus=True), ITEM, client)
    assert isinstance(result, JudgeResult)
    assert len(fake_anthropic.requests_about(QUESTION)) == 4
    assert result.consensus and result.scores == Scores(0, 0, 0)


def test_consensus_enters_the_identity_only_when_off() -> None:
    default = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    assert "consensus" not in default.identity()
    assert judge(consensus=True).identity() == default.identity()
    off = judge(consensus=False).identity()
    assert off["consensus"] is False
    assert {key: value for key, value in off.items() if key != "consensus"} == default.identity()


def test_without_consensus_the_estimate_has_no_votes() -> None:
    request = judge(consensus=False).request(ITEM)
    assert judge(consensus=False).estimate(ITEM, (request,)).calls_high == 1
    assert judge(consensus=True).estimate(ITEM, (request,)).calls_high == 4
