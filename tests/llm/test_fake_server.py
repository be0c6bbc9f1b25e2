"""The fake Messages API answers the real SDK the way the real API does."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict

SCHEMA_CONFIG: Any = {"format": {"type": "json_schema", "schema": {"type": "object"}}}


def _ask(question: str, model: str = "claude-haiku-5-5", **extra: Any) -> anthropic.types.Message:
    """One call through the real SDK, configured from the environment like the tool's."""
    client = anthropic.Anthropic(max_retries=0, timeout=30.0)
    try:
        return client.messages.create(
            model=model,
            max_tokens=100,
            system="grade this",
            messages=[{"role": "user", "content": f"<question>\n{question}\n</question>"}],
            **{"output_config": SCHEMA_CONFIG, **extra},
        )
    finally:
        client.close()


def _text(message: anthropic.types.Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def test_unscripted_question_gets_the_default_verdict(fake_anthropic: FakeAnthropicServer) -> None:
    message = _ask("What is 2 &amp; 2?")
    assert json.loads(_text(message)) == verdict()
    recorded = fake_anthropic.requests[0]
    assert recorded.question == "What is 2 & 2?"
    assert recorded.headers["authorization"] == f"Bearer {fake_anthropic.expected_api_key}"
    assert recorded.body["model"] == "claude-haiku-5-5"
    assert recorded.response_status == 200


def test_usage_is_characters_divided_by_four(fake_anthropic: FakeAnthropicServer) -> None:
    message = _ask("Q")
    user_text = "<question>\nQ\n</question>"
    assert message.usage.input_tokens == (len("grade this") + len(user_text)) // 4
    assert message.usage.output_tokens == len(_text(message)) // 4


def test_script_is_consumed_in_order_and_its_last_answer_repeats(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script("capital of France", verdict(recall=0), verdict(precision=0))
    answers = [json.loads(_text(_ask("What is the capital of France?"))) for _ in range(3)]
    assert [answer["recall"] for answer in answers] == [0, 1, 1]
    assert [answer["precision"] for answer in answers] == [1, 0, 0]
    assert json.loads(_text(_ask("Another question"))) == verdict()


def test_fail_next_applies_to_the_next_calls_whatever_the_question(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.fail_next(Fault.status(529, "busy", retry_after=3))
    with pytest.raises(anthropic.OverloadedError) as raised:
        _ask("anything")
    assert raised.value.response.headers["retry-after"] == "3"
    assert raised.value.type == "overloaded_error"
    assert json.loads(_text(_ask("anything"))) == verdict()


@pytest.mark.parametrize(
    ("extra", "expected_fragment"),
    [
        ({"extra_body": {"temperature": 0.3}}, "temperature"),
        ({"extra_body": {"top_p": 0.9}}, "top_p"),
        ({"extra_body": {"top_k": 5}}, "top_k"),
        ({"tool_choice": {"type": "tool", "name": "grade"}}, "tool_choice"),
        ({"output_config": {}}, "output_config"),
    ],
)
def test_requests_the_current_api_refuses_get_a_400(
    fake_anthropic: FakeAnthropicServer, extra: dict[str, Any], expected_fragment: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        _ask("Q", **extra)
    assert expected_fragment in (raised.value.api_message or "")


def test_a_wrong_key_gets_a_401(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-the-right-one")
    with pytest.raises(anthropic.AuthenticationError):
        _ask("Q")


def test_an_unknown_model_gets_a_404(fake_anthropic: FakeAnthropicServer) -> None:
    with pytest.raises(anthropic.NotFoundError):
        _ask("Q", model="claude-nonexistent-1")


def test_dropped_connection_reaches_the_sdk_as_a_connection_error(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.fail_next(Fault.drop_connection())
    with pytest.raises(anthropic.APIConnectionError):
        _ask("Q")
    assert fake_anthropic.requests[0].response_status is None


def test_output_faults_come_back_as_200_replies(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.fail_next(Fault.invalid_json(), Fault.missing_field("summary"), Fault.refusal())
    with pytest.raises(json.JSONDecodeError):
        json.loads(_text(_ask("Q")))
    assert "summary" not in json.loads(_text(_ask("Q")))
    refused = _ask("Q")
    assert refused.stop_reason == "refusal"
    assert _text(refused) == ""


def test_on_request_sees_each_request_before_it_is_answered(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    seen: list[tuple[str | None, int | None]] = []
    fake_anthropic.on_request = lambda request: seen.append(
        (request.question, request.response_status)
    )
    _ask("first")
    _ask("second")
    assert seen == [("first", None), ("second", None)]
    assert [request.response_status for request in fake_anthropic.requests] == [200, 200]
