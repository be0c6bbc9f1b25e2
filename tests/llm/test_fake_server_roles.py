"""The fake API plays every role of the model-judged families, through the real SDK."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict
from fakes.roles import questions_answer

from rag_evaluator.families.grading import calls as answer_grading_calls
from rag_evaluator.families.ragas import calls as ragas_calls
from rag_evaluator.families.rubric import calls as rubric_calls
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.llm.providers.anthropic import messages_body
from rag_evaluator.llm.requests import ModelRequest

RUBRIC = rubric_from_data(
    {
        "criteria": [
            {"name": "coherence", "description": "Clear.", "scale": "1-5"},
            {"name": "harmlessness", "description": "Safe.", "scale": "pass/fail"},
            {"name": "depth", "description": "Thorough.", "scale": "0-10"},
        ]
    }
)
QUESTION = "Who approves travel?"
ANSWER = "The line manager approves. Finance signs above 1,000 EUR!"
TRUTH = "The line manager. Then finance over 1,000 EUR."
CONTEXTS = ["Managers approve travel.", "Finance approves large amounts."]


def send(request: ModelRequest) -> Any:
    client = anthropic.Anthropic(max_retries=0, timeout=5.0)
    try:
        message = client.messages.create(
            **messages_body(request, "claude-haiku-5-5", cache_system=False)
        )
    finally:
        client.close()
    return json.loads("".join(block.text for block in message.content if block.type == "text"))


def test_every_role_has_a_default_answer_its_parser_accepts(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    claims = send(ragas_calls.claims_request(QUESTION, ANSWER))
    assert claims == {"claims": ["The line manager approves.", "Finance signs above 1,000 EUR!"]}
    requests = [
        ragas_calls.verdicts_request(QUESTION, CONTEXTS, claims["claims"]),
        ragas_calls.contexts_request(QUESTION, TRUTH, CONTEXTS),
        ragas_calls.statements_request(QUESTION, TRUTH),
        ragas_calls.attributions_request(QUESTION, CONTEXTS, ["The line manager."]),
        ragas_calls.questions_request(ANSWER),
        ragas_calls.rating_request(QUESTION, ANSWER),
        answer_grading_calls.factual_accuracy_request(QUESTION, TRUTH, ANSWER),
        answer_grading_calls.classify_request(QUESTION, TRUTH, ANSWER),
        answer_grading_calls.match_request(QUESTION, TRUTH, ANSWER),
        rubric_calls.request(
            RUBRIC, rubric_calls.system_prompt(RUBRIC), QUESTION, ANSWER, "", None
        ),
    ]
    answers = {request.purpose: request.parse(send(request)) for request in requests}
    assert [verdict.supported for verdict in answers["faithfulness verdicts"]] == [True, True]
    assert [context.relevant for context in answers["context precision"]] == [True, True]
    assert answers["context recall statements"] == (
        "The line manager.",
        "Then finance over 1,000 EUR.",
    )
    assert len(answers["answer relevance questions"].questions) == 3
    # An answer is committal unless a test scripts otherwise.
    assert answers["answer relevance questions"].noncommittal is False
    assert answers["answer relevance rating"].score == 1.0
    assert answers["answer relevance rating"].noncommittal is False
    assert answers["classification"].label == "CORRECT"
    assert answers["match"].is_matching is True
    # A rubric criterion gets its scale's top score.
    assert [(score.name, score.score) for score in answers["rubric"]] == [
        ("coherence", 5),
        ("harmlessness", 1),
        ("depth", 10),
    ]
    assert [request.role for request in fake_anthropic.requests] == [
        "claims",
        "verdicts",
        "contexts",
        "statements",
        "attributions",
        "questions",
        "score",
        "correctness",
        "label",
        "is_matching",
        "criteria",
    ]


def test_a_role_is_scripted_per_question_and_the_judge_keeps_its_script(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script(QUESTION, verdict(recall=0))
    fake_anthropic.script_role(
        "label", QUESTION, Fault.missing_field("label"), {"reasoning": "r", "label": "WRONG"}
    )
    classify = answer_grading_calls.classify_request(QUESTION, TRUTH, ANSWER)

    assert send(classify) == {"reasoning": "r"}  # the next scripted answer, without its label
    assert send(classify)["label"] == "WRONG"
    assert send(classify)["label"] == "WRONG"  # the last answer repeats
    assert (
        send(answer_grading_calls.classify_request("Other?", TRUTH, ANSWER))["label"] == "CORRECT"
    )
    # The judge's script is the judge's only: other roles of the question are not touched.
    assert send(answer_grading_calls.match_request(QUESTION, TRUTH, ANSWER))["is_matching"] is True
    assert len(fake_anthropic.requests_for("label", QUESTION)) == 3


def test_a_request_without_a_question_is_scripted_by_its_text(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    scripted = questions_answer(["Q1?"], noncommittal=True)
    fake_anthropic.script_role("questions", "signs above 1,000 EUR", scripted)
    assert send(ragas_calls.questions_request(ANSWER)) == scripted
    assert fake_anthropic.requests[0].question is None


def test_script_role_refuses_an_unknown_role(fake_anthropic: FakeAnthropicServer) -> None:
    with pytest.raises(ValueError, match="unknown role"):
        fake_anthropic.script_role("claim", QUESTION, {"claims": []})
