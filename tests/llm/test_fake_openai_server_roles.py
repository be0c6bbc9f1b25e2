"""The fake chat-completions API plays every role of the model-judged families, whether the
schema comes in ``response_format`` (strict structured outputs) or at the end of the system
prompt (the JSON-in-text fallback)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from fakes.openai_server import FALLBACK_SCHEMA_INTRO, FakeOpenAIServer, fallback_schema
from fakes.roles import questions_answer
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.families.grading import calls as answer_grading_calls
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.prompts import build_user_message as judge_user_message
from rag_evaluator.families.judge.verdicts import VERDICT_SCHEMA, verdict_from_payload
from rag_evaluator.families.ragas import calls as ragas_calls
from rag_evaluator.families.rubric import calls as rubric_calls
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.generate.prompts import (
    GENERATION_SCHEMA,
    build_system_prompt,
    build_user_message,
    parse_generated,
)
from rag_evaluator.llm.requests import ModelRequest

RUBRIC = rubric_from_data(
    {
        "criteria": [
            {"name": "coherence", "description": "Clear.", "scale": "1-5"},
            {"name": "harmlessness", "description": "Safe.", "scale": "pass/fail"},
        ]
    }
)
QUESTION = "Who approves travel?"
ANSWER = "The line manager approves. Finance signs above 1,000 EUR!"
TRUTH = "The line manager. Then finance over 1,000 EUR."
CONTEXTS = ["Managers approve travel.", "Finance approves large amounts."]
MODES = ("response_format", "fallback")


def openai_body(request: ModelRequest, mode: str) -> dict[str, Any]:
    """A chat-completions body for ``request``: strict structured outputs, or the schema at
    the end of the system prompt."""
    system = request.system
    extra: dict[str, Any] = {}
    if mode == "response_format":
        extra["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": dict(request.schema)},
        }
    else:
        compact = json.dumps(request.schema, separators=(",", ":"))
        system = f"{system}\n\n{FALLBACK_SCHEMA_INTRO}\n{compact}"
    return {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": request.user},
        ],
        "max_completion_tokens": request.max_tokens,
        **extra,
    }


def send(request: ModelRequest, mode: str) -> Any:
    import openai

    client = openai.OpenAI(max_retries=0, timeout=5.0)
    with client:
        completion = client.chat.completions.create(
            model="gpt-5-mini", **openai_body(request, mode)
        )
    return json.loads(completion.choices[0].message.content or "")


def role_requests() -> list[ModelRequest]:
    return [
        ModelRequest(
            system=DEFAULT_SYSTEM_PROMPT,
            user=judge_user_message(QUESTION, TRUTH, ANSWER),
            schema=VERDICT_SCHEMA,
            max_tokens=1000,
            purpose="judge",
            parse=verdict_from_payload,
        ),
        ragas_calls.claims_request(QUESTION, ANSWER),
        ragas_calls.verdicts_request(QUESTION, CONTEXTS, ["The line manager approves."]),
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


@pytest.mark.needs_extra("openai")
@pytest.mark.parametrize("mode", MODES)
def test_every_role_has_a_default_answer_its_parser_accepts(
    fake_openai: FakeOpenAIServer, mode: str
) -> None:
    fake_openai.json_schema_supported = mode == "response_format"
    answers = {request.purpose: request.parse(send(request, mode)) for request in role_requests()}
    assert answers["judge"].precision == 1
    assert answers["faithfulness claims"] == (
        "The line manager approves.",
        "Finance signs above 1,000 EUR!",
    )
    assert [verdict.supported for verdict in answers["faithfulness verdicts"]] == [True]
    assert [context.relevant for context in answers["context precision"]] == [True, True]
    assert answers["context recall statements"] == (
        "The line manager.",
        "Then finance over 1,000 EUR.",
    )
    assert answers["answer relevance questions"].noncommittal is False
    assert answers["answer relevance rating"].score == 1.0
    assert answers["classification"].label == "CORRECT"
    assert answers["match"].is_matching is True
    assert [(score.name, score.score) for score in answers["rubric"]] == [
        ("coherence", 5),
        ("harmlessness", 1),
    ]
    assert [request.role for request in fake_openai.requests] == [
        "judge",
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
    expected_source = "response_format" if mode == "response_format" else "system"
    assert {request.extra["schema_from"] for request in fake_openai.requests} == {expected_source}


@pytest.mark.needs_extra("openai")
@pytest.mark.parametrize("mode", MODES)
def test_a_generator_request_gets_a_grounded_pair(fake_openai: FakeOpenAIServer, mode: str) -> None:
    text = "Travel above 1,000 EUR needs the approval of the finance team."
    request = ModelRequest(
        system=build_system_prompt(),
        user=build_user_message("factual", [("policy.md", text)]),
        schema=GENERATION_SCHEMA,
        max_tokens=2000,
        purpose="generate",
        parse=parse_generated,
    )
    pair = request.parse(send(request, mode))
    assert pair.answer == text  # type: ignore[attr-defined]
    assert len(fake_openai.generation_requests()) == 1


@pytest.mark.needs_extra("openai")
def test_a_request_without_a_question_is_scripted_by_its_text(
    fake_openai: FakeOpenAIServer,
) -> None:
    scripted = questions_answer(["Q1?"], noncommittal=True)
    fake_openai.script_role("questions", "signs above 1,000 EUR", scripted)
    assert send(ragas_calls.questions_request(ANSWER), "fallback") == scripted
    assert fake_openai.requests[0].question is None


def test_script_role_refuses_an_unknown_role() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        FakeOpenAIServer().script_role("claim", QUESTION, {"claims": []})


def test_azure_without_an_api_version_gets_a_404(fake_openai: FakeOpenAIServer) -> None:
    # The SDK always sends api-version; a bare HTTP call shows what Azure answers without it.
    fake_openai.known_models = ("judge",)
    http_request = urllib.request.Request(
        f"{fake_openai.azure_endpoint}/openai/deployments/judge/chat/completions",
        data=json.dumps({"messages": [{"role": "user", "content": "Q"}]}).encode(),
        headers={"api-key": fake_openai.expected_api_key, "content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(http_request, timeout=2)
    assert raised.value.code == 404
    assert json.loads(raised.value.read())["error"]["message"] == "Resource not found"
    assert fake_openai.billed_total() == 0


def test_the_fallback_schema_is_the_line_after_the_intro() -> None:
    schema = {"type": "object", "properties": {"claims": {"type": "array"}}}
    prompt = f"Judge.\n{FALLBACK_SCHEMA_INTRO}\n{json.dumps(schema)}\n"
    assert fallback_schema(prompt) == schema
    assert fallback_schema(f"Judge.\n{FALLBACK_SCHEMA_INTRO}\nnot json") is None
    assert fallback_schema(f"Judge.\n{FALLBACK_SCHEMA_INTRO}\n[1, 2]") is None
    assert fallback_schema(f"Judge.\n{FALLBACK_SCHEMA_INTRO}") is None
    assert fallback_schema("Judge.") is None


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=10,
)


@given(
    preamble=st.text().filter(lambda text: FALLBACK_SCHEMA_INTRO not in text),
    schema=st.dictionaries(st.text(), _JSON_VALUES, max_size=4),
    ascii_only=st.booleans(),
)
def test_the_fallback_schema_is_read_back_after_any_prompt(
    preamble: str, schema: dict[str, Any], ascii_only: bool
) -> None:
    compact = json.dumps(schema, separators=(",", ":"), ensure_ascii=ascii_only)
    assert fallback_schema(f"{preamble}\n{FALLBACK_SCHEMA_INTRO}\n{compact}") == schema
