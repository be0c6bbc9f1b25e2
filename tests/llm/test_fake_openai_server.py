"""The fake chat-completions API answers the real ``openai`` SDK the way the servers do."""

from __future__ import annotations

import json
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from fakes.openai_server import (
    FALLBACK_SCHEMA_INTRO,
    UNSUPPORTED_JSON_SCHEMA,
    FakeOpenAIServer,
    Fault,
    body_key,
    verdict,
)
from fakes.roles import CLAIMS

from rag_evaluator.families.judge.verdicts import VERDICT_SCHEMA
from rag_evaluator.families.ragas.calls import CLAIMS_SCHEMA

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

pytestmark = pytest.mark.needs_extra("openai")

SYSTEM = "grade this"
API_VERSION = "2024-10-21"


@pytest.fixture
def sdk() -> ModuleType:
    """The ``openai`` package, imported once the extra is known to be installed."""
    import openai

    return openai


def json_schema_format(schema: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "answer", "strict": strict, "schema": schema},
    }


def fallback_system(schema: dict[str, Any]) -> str:
    """A JSON-in-text system prompt, ending as the tool's fallback prompt ends."""
    compact = json.dumps(schema, separators=(",", ":"))
    return f"{SYSTEM}\n\n{FALLBACK_SCHEMA_INTRO}\n{compact}"


def ask(
    question: str,
    *,
    model: str = "gpt-5-mini",
    system: str = SYSTEM,
    response_format: dict[str, Any] | None = None,
    azure: FakeOpenAIServer | None = None,
    max_retries: int = 0,
    timeout: float = 2.0,
    **extra: Any,
) -> ChatCompletion:
    """One chat completion through the real SDK, configured from the environment (or, for
    ``azure``, through ``AzureOpenAI`` at that server), asking for a verdict by default."""
    import openai

    client: openai.OpenAI
    if azure is None:
        client = openai.OpenAI(max_retries=max_retries, timeout=timeout)
    else:
        client = openai.AzureOpenAI(
            api_key=azure.expected_api_key,
            api_version=API_VERSION,
            azure_endpoint=azure.azure_endpoint,
            max_retries=max_retries,
            timeout=timeout,
        )
    if response_format is None and system == SYSTEM:
        response_format = json_schema_format(VERDICT_SCHEMA)
    if response_format is not None:
        extra["response_format"] = response_format
    user = f"<question>\n{question}\n</question>"
    try:
        return client.chat.completions.create(
            model=model,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            **extra,
        )
    finally:
        client.close()


def content_of(completion: ChatCompletion) -> Any:
    return json.loads(completion.choices[0].message.content or "")


# -- answers -----------------------------------------------------------------------------------


def test_unscripted_question_gets_the_default_verdict(fake_openai: FakeOpenAIServer) -> None:
    completion = ask("What is 2 &amp; 2?")
    assert content_of(completion) == verdict()
    assert completion.object == "chat.completion"
    assert completion.model == "gpt-5-mini"
    choice = completion.choices[0]
    assert (choice.index, choice.finish_reason) == (0, "stop")
    assert (choice.message.role, choice.message.refusal) == ("assistant", None)
    recorded = fake_openai.requests[0]
    assert recorded.question == "What is 2 & 2?"
    assert recorded.headers["authorization"] == f"Bearer {fake_openai.expected_api_key}"
    assert recorded.path == "/v1/chat/completions"
    assert recorded.body["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert (recorded.response_status, recorded.served, recorded.role) == (200, "verdict", "judge")
    assert recorded.extra["schema_from"] == "response_format"


def test_usage_is_characters_divided_by_four(fake_openai: FakeOpenAIServer) -> None:
    completion = ask("Q")
    user = "<question>\nQ\n</question>"
    usage = completion.usage
    assert usage is not None
    assert usage.prompt_tokens == len(SYSTEM) // 4 + len(user) // 4
    assert usage.completion_tokens == len(completion.choices[0].message.content or "") // 4
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0


def test_the_role_comes_from_the_response_format_schema(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script_role(CLAIMS, "Who approves?", {"claims": ["Managers approve."]})
    answer = content_of(
        ask(
            "Who approves?",
            system="List the claims.",
            response_format=json_schema_format(CLAIMS_SCHEMA),
        )
    )
    assert answer == {"claims": ["Managers approve."]}
    assert [request.role for request in fake_openai.requests] == [CLAIMS]


def test_without_response_format_the_schema_is_read_from_the_system_prompt(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script_role(CLAIMS, "Who approves?", {"claims": ["Managers approve."]})
    answer = content_of(ask("Who approves?", system=fallback_system(CLAIMS_SCHEMA)))
    assert answer == {"claims": ["Managers approve."]}
    recorded = fake_openai.requests[0]
    assert "response_format" not in recorded.body
    assert (recorded.role, recorded.extra["schema_from"]) == (CLAIMS, "system")


def test_a_system_prompt_without_a_schema_is_the_judge(fake_openai: FakeOpenAIServer) -> None:
    answer = content_of(ask("Q", system="Just grade it.", response_format={"type": "json_object"}))
    assert answer == verdict()
    assert fake_openai.requests[0].extra["schema_from"] is None


def test_script_is_consumed_in_order_and_its_last_answer_repeats(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script("capital of France", verdict(recall=0), verdict(precision=0))
    answers = [content_of(ask("What is the capital of France?")) for _ in range(3)]
    assert [answer["recall"] for answer in answers] == [0, 1, 1]
    assert [answer["precision"] for answer in answers] == [1, 0, 0]
    assert content_of(ask("Another question")) == verdict()
    assert len(fake_openai.requests_about("capital of France")) == 3
    assert len(fake_openai.requests_for("judge", "Another")) == 1


def test_fail_next_applies_to_the_next_calls_whatever_the_question(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next(Fault.status(503))
    with pytest.raises(sdk.InternalServerError):
        ask("anything")
    assert content_of(ask("anything else")) == verdict()


# -- the requests the API refuses ----------------------------------------------------------------


def test_a_wrong_key_gets_a_401_with_openais_error_body(
    fake_openai: FakeOpenAIServer, sdk: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-the-right-one")
    with pytest.raises(sdk.AuthenticationError) as raised:
        ask("Q")
    assert raised.value.code == "invalid_api_key"
    assert raised.value.type == "invalid_request_error"
    assert "Incorrect API key provided" in raised.value.message
    assert fake_openai.billed_total() == 0


def test_an_unknown_model_gets_a_404_model_not_found(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    with pytest.raises(sdk.NotFoundError) as raised:
        ask("Q", model="gpt-nonexistent")
    assert raised.value.code == "model_not_found"
    assert "gpt-nonexistent" in raised.value.message


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    return json_schema_format(schema, strict=True)


OPEN_OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
PARTLY_REQUIRED = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a"],
    "additionalProperties": False,
}
NESTED_OPEN = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": OPEN_OBJECT}},
    "required": ["items"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("extra", "expected_param", "expected_fragment"),
    [
        ({"stream": True}, "stream", "stream"),
        ({"response_format": {"type": "xml"}}, "response_format.type", "'xml'"),
        (
            {"response_format": {"type": "json_schema"}},
            "response_format.json_schema",
            "json_schema",
        ),
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "a b", "schema": {}},
                }
            },
            "response_format.json_schema.name",
            "a b",
        ),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            "response_format.json_schema.schema",
            "schema",
        ),
        ({"response_format": _strict(OPEN_OBJECT)}, "response_format", "additionalProperties"),
        ({"response_format": _strict(PARTLY_REQUIRED)}, "response_format", "Missing 'b'"),
        ({"response_format": _strict(NESTED_OPEN)}, "response_format", "'items', 'items'"),
        ({"max_completion_tokens": 0}, "max_completion_tokens", "at least 1"),
        ({"max_tokens": "many"}, "max_tokens", "integer"),
    ],
)
def test_requests_the_api_refuses_get_a_400(
    fake_openai: FakeOpenAIServer,
    sdk: ModuleType,
    extra: dict[str, Any],
    expected_param: str,
    expected_fragment: str,
) -> None:
    with pytest.raises(sdk.BadRequestError) as raised:
        ask("Q", **extra)
    assert raised.value.param == expected_param
    assert expected_fragment in raised.value.message
    assert fake_openai.requests[0].served == "rejected"
    assert fake_openai.billed_total() == 0


@pytest.mark.parametrize(
    ("extra", "expected_param", "expected_code"),
    [
        ({"max_tokens": 100}, "max_tokens", "unsupported_parameter"),
        ({"temperature": 0}, "temperature", "unsupported_value"),
        ({"top_p": 0.5}, "top_p", "unsupported_value"),
    ],
)
def test_a_reasoning_model_refuses_max_tokens_and_sampling_values(
    fake_openai: FakeOpenAIServer,
    sdk: ModuleType,
    extra: dict[str, Any],
    expected_param: str,
    expected_code: str,
) -> None:
    with pytest.raises(sdk.BadRequestError) as raised:
        ask("Q", model="gpt-5-mini", **extra)
    assert (raised.value.param, raised.value.code) == (expected_param, expected_code)
    # Its own parameters, and the defaults, are accepted; other models take all of them.
    assert content_of(ask("Q", max_completion_tokens=100, temperature=1, top_p=1)) == verdict()
    assert content_of(ask("Q", model="gpt-4.1-mini", **extra)) == verdict()


def test_a_loose_schema_is_accepted_without_strict(fake_openai: FakeOpenAIServer) -> None:
    answer = content_of(ask("Q", response_format=json_schema_format(OPEN_OBJECT, strict=False)))
    assert answer == verdict()


def test_a_request_with_no_messages_gets_a_400(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    client = sdk.OpenAI(max_retries=0, timeout=30.0)
    with client, pytest.raises(sdk.BadRequestError) as raised:
        client.chat.completions.create(model="gpt-5-mini", messages=[])
    assert raised.value.param == "messages"


def test_a_request_longer_than_the_context_window_gets_context_length_exceeded(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.context_window_tokens = 100
    with pytest.raises(sdk.BadRequestError) as raised:
        ask("word " * 100)
    assert raised.value.code == "context_length_exceeded"
    assert "maximum context length is 100 tokens" in raised.value.message


def test_a_server_without_json_schema_refuses_it_and_answers_the_fallback(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.json_schema_supported = False
    fake_openai.script_role(CLAIMS, "Who approves?", {"claims": ["Managers approve."]})
    with pytest.raises(sdk.BadRequestError) as raised:
        ask("Who approves?", response_format=json_schema_format(CLAIMS_SCHEMA))
    assert raised.value.body["message"] == UNSUPPORTED_JSON_SCHEMA
    assert raised.value.param == "response_format"
    answer = content_of(ask("Who approves?", system=fallback_system(CLAIMS_SCHEMA)))
    assert answer == {"claims": ["Managers approve."]}
    assert [request.served for request in fake_openai.requests] == ["rejected", "verdict"]
    assert fake_openai.billed_total() == 1


# -- faults ------------------------------------------------------------------------------------


def test_a_429_carries_retry_after_and_the_rate_limit_headers(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.script("Q", Fault.status(429, retry_after=3))
    with pytest.raises(sdk.RateLimitError) as raised:
        ask("Q")
    error = raised.value
    assert (error.status_code, error.code, error.type) == (429, "rate_limit_exceeded", "requests")
    headers = error.response.headers
    assert headers["retry-after"] == "3"
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert headers["x-ratelimit-reset-requests"] == "3s"
    assert headers["x-request-id"].startswith("req_fake_")
    assert fake_openai.billed_total() == 0


def test_the_sdk_waits_as_retry_after_ms_says_then_gets_the_answer(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.fail_next(Fault.status(429, retry_after_ms=300))
    started = time.monotonic()
    completion = ask("Q", max_retries=1)
    assert time.monotonic() - started >= 0.3
    assert content_of(completion) == verdict()
    assert [request.response_status for request in fake_openai.requests] == [429, 200]
    assert fake_openai.requests[1].headers["x-stainless-retry-count"] == "1"


def test_a_quota_429_names_its_type_and_code(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next(
        Fault.status(
            429,
            "You exceeded your current quota.",
            error_type="insufficient_quota",
            error_code="insufficient_quota",
        )
    )
    with pytest.raises(sdk.RateLimitError) as raised:
        ask("Q")
    assert (raised.value.code, raised.value.type) == ("insufficient_quota", "insufficient_quota")
    assert raised.value.body == {
        "message": "You exceeded your current quota.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_reach_the_sdk_as_internal_server_errors(
    fake_openai: FakeOpenAIServer, sdk: ModuleType, status: int
) -> None:
    fake_openai.fail_next(Fault.status(status))
    with pytest.raises(sdk.InternalServerError) as raised:
        ask("Q")
    assert raised.value.status_code == status
    assert raised.value.type == "server_error"
    assert fake_openai.billed_total() == 0


def test_dropped_connection_reaches_the_sdk_as_a_connection_error(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next(Fault.drop_connection())
    with pytest.raises(sdk.APIConnectionError):
        ask("Q")
    assert fake_openai.requests[0].response_status is None
    assert fake_openai.billed_total() == 0


def test_a_slow_reply_times_out_or_arrives_late(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next(Fault.slow(1.0), Fault.slow(0.2))
    with pytest.raises(sdk.APITimeoutError):
        ask("Q", timeout=0.2)
    started = time.monotonic()
    assert content_of(ask("Q")) == verdict()
    assert time.monotonic() - started >= 0.2


def test_a_trickled_reply_arrives_whole_and_is_billed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(Fault.trickle(0.0005))
    assert content_of(ask("Q")) == verdict()
    assert fake_openai.billed_total() == 1


@pytest.mark.parametrize("shape", ["json", "empty"])
def test_a_200_that_is_not_json_fails_to_decode(fake_openai: FakeOpenAIServer, shape: str) -> None:
    fake_openai.fail_next(Fault.malformed(shape))
    with pytest.raises(json.JSONDecodeError):
        ask("Q")
    assert fake_openai.requests[0].response_status == 200
    assert fake_openai.billed_total() == 0


def test_malformed_200s_that_decode_are_not_completions_and_are_not_billed(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.fail_next(
        Fault.malformed("html"),
        Fault.malformed("schema"),
        Fault.malformed("no_usage"),
        Fault.malformed("usage"),
        Fault.malformed("no_choices"),
    )
    # A non-JSON content type: the SDK hands back the body's text instead of a completion.
    assert ask("Q") == "<html><body>502 Bad Gateway (proxy)</body></html>"  # type: ignore[comparison-overlap]
    assert ask("Q").choices is None
    assert ask("Q").usage is None
    usage = ask("Q").usage
    assert usage is not None and usage.prompt_tokens < 0
    assert ask("Q").choices == []
    assert fake_openai.billed_total() == 0


def test_malformed_rejects_an_unknown_shape() -> None:
    with pytest.raises(ValueError, match="unknown malformed shape"):
        Fault.malformed("xml")


def test_content_faults_are_answers_and_are_billed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(
        Fault.invalid_json(),
        Fault.raw_text('```json\n{"a": 1}\n```'),
        Fault.missing_field("summary"),
    )
    with pytest.raises(json.JSONDecodeError):
        content_of(ask("Q"))
    assert ask("Q").choices[0].message.content == '```json\n{"a": 1}\n```'
    answer = content_of(ask("Q"))
    assert "summary" not in answer and answer["recall"] == 1
    assert fake_openai.billed_total() == 3


def test_a_refusal_has_no_content(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("Q", Fault.refusal())
    message = ask("Q").choices[0].message
    assert message.content is None
    assert message.refusal is not None and "can't help" in message.refusal
    assert fake_openai.requests[0].served == "refusal"
    assert fake_openai.billed_total() == 1


def test_a_reply_cut_off_at_the_length_limit(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("Q", Fault.truncated(), verdict(recall=0))
    choice = ask("Q").choices[0]
    assert choice.finish_reason == "length"
    content = choice.message.content or ""
    assert json.dumps(verdict(recall=0)).startswith(content) and content
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)
    assert fake_openai.billed_total() == 1


def test_a_filtered_reply(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(Fault.content_filter())
    choice = ask("Q").choices[0]
    assert (choice.finish_reason, choice.message.content) == ("content_filter", None)


# -- billing, hooks, concurrency -----------------------------------------------------------------


def test_billing_counts_answers_by_request_body(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(Fault.status(500), Fault.drop_connection(), Fault.malformed("json"))
    for _ in range(3):
        with pytest.raises(Exception):  # noqa: B017 (each fault has its own exception)
            ask("Q")
    ask("Q")
    assert fake_openai.paid_twice() == []
    ask("Q")
    body = fake_openai.requests[-1].body
    assert fake_openai.billed == {body_key(body): 2}
    assert fake_openai.paid_twice() == [body_key(body)]
    assert fake_openai.paid_twice(fake_openai.billed) == []


def test_on_request_sees_each_request_before_it_is_answered(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    seen: list[tuple[str | None, int | None]] = []

    def hook(request: Any) -> Fault | None:
        seen.append((request.question, request.response_status))
        return Fault.status(500) if request.question == "second" else None

    fake_openai.on_request = hook
    ask("first")
    with pytest.raises(sdk.InternalServerError):
        ask("second")
    assert seen == [("first", None), ("second", None)]
    assert [request.response_status for request in fake_openai.requests] == [200, 500]


def test_concurrent_calls_are_counted_in_flight(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.response_delay_seconds = 0.3
    threads = [threading.Thread(target=ask, args=(f"question {n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert fake_openai.max_in_flight == 3
    # The server counts a call out after its reply is sent, so the client can be back first.
    deadline = time.monotonic() + 2.0
    while fake_openai.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake_openai.in_flight == 0
    assert fake_openai.billed_total() == 3


def test_prompt_caching_reports_cached_tokens_of_a_long_system_prompt(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.prompt_caching = True
    long_system = "Grade carefully. " * 300  # 5,100 characters: 1,275 tokens
    first, second = (ask("Q", system=long_system) for _ in range(2))
    assert first.usage is not None and second.usage is not None
    assert first.usage.prompt_tokens_details is not None
    assert second.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage.prompt_tokens_details.cached_tokens == len(long_system) // 4
    assert second.usage.prompt_tokens == first.usage.prompt_tokens
    short = ask("Q").usage
    assert short is not None and short.prompt_tokens_details is not None
    assert short.prompt_tokens_details.cached_tokens == 0


# -- models ------------------------------------------------------------------------------------


def test_the_models_are_listed_and_retrieved(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.model_fields = {"max_model_len": 32768}  # as vLLM reports the context window
    client = sdk.OpenAI(max_retries=0, timeout=30.0)
    with client:
        listed = list(client.models.list())
        ollama_model = client.models.retrieve("llama3.1:8b")
        with pytest.raises(sdk.NotFoundError) as raised:
            client.models.retrieve("gpt-nonexistent")
    assert [model.id for model in listed] == list(fake_openai.known_models)
    assert {model.object for model in listed} == {"model"}
    assert listed[0].owned_by == fake_openai.owned_by
    assert ollama_model.id == "llama3.1:8b"
    assert ollama_model.model_extra == {"max_model_len": 32768}
    assert raised.value.code == "model_not_found"
    assert fake_openai.requests == []
    assert [request.served for request in fake_openai.all_requests] == [
        "models",
        "model",
        "rejected",
    ]


def test_fail_next_free_applies_to_the_models_endpoints(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next_free(Fault.status(429, retry_after=1))
    client = sdk.OpenAI(max_retries=0, timeout=30.0)
    with client, pytest.raises(sdk.RateLimitError):
        client.models.list()
    assert content_of(ask("Q")) == verdict()


def test_an_unknown_path_gets_openais_invalid_url_404(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    client = sdk.OpenAI(max_retries=0, timeout=30.0)
    with client, pytest.raises(sdk.NotFoundError) as raised:
        client.embeddings.create(model="gpt-5-mini", input="x")
    assert raised.value.body["message"] == "Invalid URL (POST /v1/embeddings)"


# -- Azure OpenAI --------------------------------------------------------------------------------


def test_azure_calls_the_deployment_route_with_the_api_key_header(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.known_models = ("judge-deployment",)
    completion = ask("Q", model="judge-deployment", azure=fake_openai)
    assert content_of(completion) == verdict()
    assert completion.model == "judge-deployment"
    recorded = fake_openai.requests[0]
    assert recorded.path == (
        f"/openai/deployments/judge-deployment/chat/completions?api-version={API_VERSION}"
    )
    assert recorded.headers["api-key"] == fake_openai.expected_api_key
    assert "authorization" not in recorded.headers
    assert recorded.extra == {
        "api": "azure",
        "schema_from": "response_format",
        "api_version": API_VERSION,
        "deployment": "judge-deployment",
    }
    assert fake_openai.billed_total() == 1


def test_azure_refuses_a_wrong_key_and_an_unknown_deployment(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    with pytest.raises(sdk.NotFoundError) as raised:
        ask("Q", model="no-such-deployment", azure=fake_openai)
    assert raised.value.code == "DeploymentNotFound"
    client = sdk.AzureOpenAI(
        api_key="not-the-right-key",
        api_version=API_VERSION,
        azure_endpoint=fake_openai.azure_endpoint,
        max_retries=0,
    )
    with client, pytest.raises(sdk.AuthenticationError) as denied:
        client.chat.completions.create(
            model="gpt-5-mini", messages=[{"role": "user", "content": "Q"}]
        )
    assert denied.value.code == "401"
    assert fake_openai.billed_total() == 0


def test_azure_faults_come_back_like_openais(
    fake_openai: FakeOpenAIServer, sdk: ModuleType
) -> None:
    fake_openai.fail_next(Fault.status(429, retry_after=2), Fault.refusal())
    with pytest.raises(sdk.RateLimitError) as raised:
        ask("Q", azure=fake_openai)
    assert raised.value.response.headers["retry-after"] == "2"
    assert ask("Q", azure=fake_openai).choices[0].message.content is None
