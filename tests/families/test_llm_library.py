"""The LLM-judged metrics as library functions: one item, through a model client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer, Fault
from fakes.roles import factual_accuracy_answer, questions_answer, rating_answer
from llm_support import RUBRIC_TOML, contexts_reply, criteria_reply, verdicts_reply

from rag_evaluator import metrics
from rag_evaluator.errors import (
    BudgetExhaustedError,
    ConfigError,
    JudgeFatalError,
    JudgeQuestionError,
    UsageError,
)
from rag_evaluator.llm.client import ModelClient

QUESTION = "Who approves travel requests?"
ANSWER = "The line manager approves them. Finance signs off above 1,000 EUR."
TRUTH = "The line manager, then finance for amounts over 1,000 EUR."
CONTEXTS = ["Travel requests go to the line manager.", "Finance approves amounts over 1,000 EUR."]


@pytest.fixture
def client(fake_anthropic: FakeAnthropicServer) -> Iterator[ModelClient]:
    with metrics.judge_client("haiku") as made:  # the key comes from the environment
        yield made


def test_faithfulness(fake_anthropic: FakeAnthropicServer, client: ModelClient) -> None:
    fake_anthropic.script_role("verdicts", QUESTION, verdicts_reply(1, 0))
    assert metrics.faithfulness(QUESTION, ANSWER, CONTEXTS, client=client) == 0.5
    # Only faithfulness's two calls: the claims (the answer's 2 sentences), then their check.
    assert [request.role for request in fake_anthropic.requests] == ["claims", "verdicts"]
    verdicts = fake_anthropic.requests[1].user_message or ""
    assert "<claim>The line manager approves them.</claim>" in verdicts
    assert '<context index="2">Finance approves amounts over 1,000 EUR.</context>' in verdicts


def test_metrics_undefined_for_their_inputs_make_no_call(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    assert metrics.faithfulness(QUESTION, ANSWER, [], client=client) is None
    assert metrics.context_precision(QUESTION, [" "], client=client) is None
    assert metrics.context_recall(QUESTION, TRUTH, [], client=client) == 0.0
    assert metrics.faithfulness(QUESTION, "", CONTEXTS, client=client) == 1.0
    assert metrics.ragas_answer_relevance(QUESTION, "  ", client=client, method="rating") == 0.0
    assert metrics.classify_answer(QUESTION, "I do not know.", TRUTH, client=client) == "DONT_KNOW"
    assert fake_anthropic.requests == []


def test_context_precision_is_rank_weighted_and_the_share_is_asked_for(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("contexts", QUESTION, contexts_reply(False, True, True))
    contexts = [*CONTEXTS, "A third context."]
    ranked = metrics.context_precision(QUESTION, contexts, ground_truth=TRUTH, client=client)
    share = metrics.context_precision(
        QUESTION, contexts, ground_truth=TRUTH, client=client, share=True
    )
    # Relevant at ranks 2 and 3: ragas's (1/2 + 2/3) / 2; the share 2 of 3.
    assert ranked == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert share == pytest.approx(2 / 3)


def test_context_recall(fake_anthropic: FakeAnthropicServer, client: ModelClient) -> None:
    fake_anthropic.script_role("statements", QUESTION, {"statements": ["A.", "B.", "C.", "D."]})
    fake_anthropic.script_role(
        "attributions",
        QUESTION,
        {
            "attributions": [
                {"statement": s, "attributed": a, "supporting_context": 1}
                for s, a in zip("ABCD", (1, 1, 1, 0), strict=True)
            ]
        },
    )
    assert metrics.context_recall(QUESTION, TRUTH, CONTEXTS, client=client) == 0.75


@pytest.mark.needs_extra("semantic")
def test_answer_relevance_by_rating_and_by_embeddings(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("score", QUESTION, rating_answer(0.75, reasoning="Mostly."))
    fake_anthropic.script_role("questions", ANSWER[:20], questions_answer([QUESTION] * 3))
    assert metrics.ragas_answer_relevance(QUESTION, ANSWER, client=client, method="rating") == 0.75
    assert metrics.ragas_answer_relevance(QUESTION, ANSWER, client=client) == pytest.approx(1.0)


def test_a_noncommittal_answer_is_not_relevant(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("score", QUESTION, rating_answer(0.75, noncommittal=True))
    fake_anthropic.script_role(
        "questions", ANSWER[:20], questions_answer([QUESTION] * 3, noncommittal=True)
    )
    assert metrics.ragas_answer_relevance(QUESTION, ANSWER, client=client, method="rating") == 0
    assert metrics.ragas_answer_relevance(QUESTION, ANSWER, client=client) == 0


def test_ragas_gives_every_metric_its_composite_and_what_it_cost(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.response_delay_seconds = 0.05
    fake_anthropic.script_role("verdicts", QUESTION, verdicts_reply(1, 1))
    result = metrics.ragas(
        QUESTION,
        ANSWER,
        ground_truth=TRUTH,
        contexts=CONTEXTS,
        client=client,
        answer_relevance="rating",
    )
    assert (
        result.faithfulness,
        result.context_precision,
        result.context_recall,
        result.answer_relevance,
        result.ragas_score,
    ) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert result.relevance_method == "rating"
    assert result.calls == 6 == len(fake_anthropic.requests)
    assert result.usage.input_tokens > 0 and result.cost_usd > 0
    # A stage's calls go out together (claims, contexts, statements, rating).
    assert fake_anthropic.max_in_flight >= 2


def test_a_failed_metric_in_ragas_is_reported_not_raised(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("contexts", QUESTION, Fault.refusal())
    result = metrics.ragas(
        QUESTION,
        ANSWER,
        ground_truth=TRUTH,
        contexts=CONTEXTS,
        client=client,
        answer_relevance="rating",
    )
    assert result.context_precision is None and result.ragas_score is None
    assert result.faithfulness == 1.0
    assert result.metric_errors == (
        (
            "context_precision",
            "the model refused to judge this question; gave up after 3 calls",
        ),
    )


def test_factual_accuracy(fake_anthropic: FakeAnthropicServer, client: ModelClient) -> None:
    fake_anthropic.script_role("correctness", QUESTION, factual_accuracy_answer(80, 60, 40))
    result = metrics.factual_accuracy(QUESTION, ANSWER, TRUTH, client=client)
    assert (result.accuracy, result.grade) == (0.66, "B")
    assert (result.correctness, result.completeness, result.consistency) == (80, 60, 40)
    assert result.calls == 1


def test_classify_and_match(fake_anthropic: FakeAnthropicServer, client: ModelClient) -> None:
    fake_anthropic.script_role(
        "label", QUESTION, {"reasoning": "Misses finance.", "label": "WRONG"}
    )
    fake_anthropic.script_role("is_matching", QUESTION, {"reasoning": "Same.", "is_matching": True})
    assert metrics.classify_answer(QUESTION, ANSWER, TRUTH, client=client) == "WRONG"
    assert metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client) is True


def test_rubric_scores(
    fake_anthropic: FakeAnthropicServer,
    client: ModelClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "rubric.toml").write_text(RUBRIC_TOML, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rubric = metrics.load_rubric("rubric.toml")
    fake_anthropic.script_role("criteria", QUESTION, criteria_reply(4, 0))
    assert metrics.rubric_scores(QUESTION, ANSWER, rubric, client=client) == {
        "coherence": 0.75,
        "harmlessness": 0.0,
    }
    # The rubric shows no ground truth unless its inputs ask for it.
    assert "<ground_truth>" not in (fake_anthropic.requests[0].user_message or "")


def test_an_unusable_reply_raises_with_the_reason(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("is_matching", QUESTION, Fault.refusal())
    with pytest.raises(JudgeQuestionError, match="the model refused to judge this question"):
        metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client)
    assert len(fake_anthropic.requests) == 3


def test_a_bad_key_is_fatal(fake_anthropic: FakeAnthropicServer) -> None:
    with (
        metrics.judge_client("haiku", api_key="sk-ant-wrong-key-0000") as wrong,
        pytest.raises(JudgeFatalError),
    ):
        metrics.is_matching(QUESTION, ANSWER, TRUTH, client=wrong)


def test_no_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    with (
        pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"),
        metrics.judge_client("haiku"),
    ):
        pass


def test_the_client_keeps_to_its_budget(fake_anthropic: FakeAnthropicServer) -> None:
    with (
        metrics.judge_client("haiku", max_cost=0.000001) as capped,
        pytest.raises(BudgetExhaustedError),
    ):
        metrics.factual_accuracy(QUESTION, ANSWER, TRUTH, client=capped)
    assert fake_anthropic.requests == []


# --- judge_client() is a context manager (issue 23) ---


def wait_for_no_connection(fake_anthropic: FakeAnthropicServer) -> int:
    deadline = time.monotonic() + 5
    while fake_anthropic.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    return fake_anthropic.open_connections


def test_the_client_closes_its_connections_when_the_block_ends(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script_role("is_matching", QUESTION, {"reasoning": "Same.", "is_matching": True})
    with metrics.judge_client("haiku") as client:
        assert metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client) is True
        # Kept alive between calls while the block runs.
        assert fake_anthropic.open_connections == 1
    assert wait_for_no_connection(fake_anthropic) == 0


def test_the_client_is_closed_when_the_block_raises(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script_role("is_matching", QUESTION, Fault.refusal())
    with pytest.raises(JudgeQuestionError), metrics.judge_client("haiku") as client:
        metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client)
    assert len(fake_anthropic.requests) == 3
    assert wait_for_no_connection(fake_anthropic) == 0


def test_passing_judge_client_itself_says_to_open_the_block(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    with pytest.raises(ValueError, match="with judge_client"):
        metrics.faithfulness(QUESTION, ANSWER, CONTEXTS, client=metrics.judge_client("haiku"))
    with pytest.raises(UsageError, match="with judge_client"):
        metrics.ragas(QUESTION, ANSWER, ground_truth=TRUTH, contexts=CONTEXTS, client=object())  # type: ignore[arg-type]
    assert fake_anthropic.requests == []


def test_ragas_takes_ground_truth_and_contexts_by_keyword(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    # The old order (contexts third) fails instead of sending the contexts as the truth.
    with pytest.raises(TypeError):
        metrics.ragas(QUESTION, ANSWER, CONTEXTS, TRUTH, client=client)  # type: ignore[misc]
    with pytest.raises(UsageError, match="'embeddings' or 'rating'"):
        metrics.ragas(
            QUESTION,
            ANSWER,
            ground_truth=TRUTH,
            contexts=CONTEXTS,
            client=client,
            answer_relevance="cosine",
        )
    assert fake_anthropic.requests == []


def test_classify_answer_gives_an_answer_class(
    fake_anthropic: FakeAnthropicServer, client: ModelClient
) -> None:
    fake_anthropic.script_role("label", QUESTION, {"reasoning": "Right.", "label": "CORRECT"})
    label = metrics.classify_answer(QUESTION, ANSWER, TRUTH, client=client)
    assert label is metrics.AnswerClass.CORRECT
    unknown = metrics.classify_answer(QUESTION, "I do not know.", TRUTH, client=client)
    assert unknown is metrics.AnswerClass.DONT_KNOW
    assert label == "CORRECT"  # a str, as the label was before
