"""``--model openai/...`` and ``azure/...``: the judge and every LLM family through the real
``openai`` SDK against the fake chat-completions server (vLLM, Ollama and friends look the same).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import verdict
from fakes.openai_server import FakeOpenAIServer, Fault
from llm_support import ALL_LLM, write_inputs_with_contexts

from rag_evaluator.text.money import format_usd

pytestmark = pytest.mark.needs_extra("openai")

LOCAL = "openai/llama3.1:8b"
RUN = ["evaluate", "--seed", "3", "--delay", "0", "--yes"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(space.directory)
    return space


def _stderr(result: object) -> str:
    return " ".join(str(getattr(result, "stderr", "")).split())


def test_a_local_model_judges_with_the_price_it_is_given(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli([*RUN, "--model", LOCAL, "--price", "0.5/1.5"])

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.summary["Model"] == LOCAL
    assert results.summary["Precision"] == "5/5 (100%)"
    tokens_in = int(results.summary["Tokens In"])
    tokens_out = int(results.summary["Tokens Out"])
    assert tokens_in > 0 and tokens_out > 0
    expected = (tokens_in * 0.5 + tokens_out * 1.5) / 1_000_000
    assert results.summary["Cost"] == format_usd(expected)
    assert fake_openai.billed_total() == 5
    # Every request asked for the answer by JSON schema, with no sampling parameter.
    for request in fake_openai.requests:
        assert request.extra["schema_from"] == "response_format"
        assert not {"temperature", "top_p"} & set(request.body)
    assert "Estimated cost: $" in _stderr(result)


def test_a_model_without_a_price_shows_tokens_and_price_unknown(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli([*RUN, "--model", LOCAL])

    assert result.exit_code == 0, result.output
    message = _stderr(result)
    assert "Estimated cost: price unknown (--price IN/OUT sets one);" in message
    assert "input and" in message and "output tokens" in message
    summary = only_results(workspace.directory).summary
    assert summary["Cost"] == f"price unknown ({LOCAL})"
    assert summary["Estimated Cost"] == "price unknown"


def test_a_budget_needs_a_price(workspace: Workspace, fake_openai: FakeOpenAIServer) -> None:
    result = run_cli([*RUN, "--model", LOCAL, "--max-cost", "1"])

    assert result.exit_code == 2
    assert "--max-cost needs the price of openai/llama3.1:8b" in _stderr(result)
    assert "--price IN/OUT" in _stderr(result)
    assert fake_openai.all_requests == []


def test_batch_is_refused_off_the_anthropic_api(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli([*RUN, "--model", LOCAL, "--price", "0/0", "--batch"])

    assert result.exit_code == 2
    assert "--batch sends Message Batches, which only the Anthropic API offers" in _stderr(result)
    assert fake_openai.all_requests == []


def test_a_server_without_json_schema_gets_json_in_text_and_the_summary_says_so(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.json_schema_supported = False

    result = run_cli([*RUN, "--model", LOCAL, "--price", "0/0"])

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.summary["Precision"] == "5/5 (100%)"
    assert results.summary["Structured Output"] == (
        f"{LOCAL}: JSON in text (the server took no JSON schema) checked against the schema"
    )
    # Refused once, then every request carries the schema in its system prompt.
    sent = [request.extra["schema_from"] for request in fake_openai.requests]
    assert sent == ["response_format"] + ["system"] * 5
    assert "does not take a JSON schema" in _stderr(result)


def test_a_reply_that_breaks_the_schema_in_text_is_asked_again(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.json_schema_supported = False
    question = "What is the capital of France?"
    fake_openai.script(question, Fault.invalid_json(), verdict())

    result = run_cli([*RUN, "--model", LOCAL, "--price", "0/0", "--seed", "1"])

    assert result.exit_code == 0, result.output
    row = only_results(workspace.directory).row(1)
    assert row["Precision"] == "1"
    assert len(fake_openai.requests_about(question)) == 2


def test_a_model_the_server_does_not_serve_is_named_with_those_it_does(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli([*RUN, "--model", "openai/llama3:70b", "--price", "0/0"])

    assert result.exit_code == 2, result.output
    message = _stderr(result)
    assert "does not serve model llama3:70b" in message
    assert "llama3.1:8b" in message
    assert "Proceed?" not in result.stderr
    assert fake_openai.requests == []


def test_a_missing_key_names_the_variables(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    result = run_cli([*RUN, "--model", LOCAL])

    assert result.exit_code == 2
    message = _stderr(result)
    assert "OPENAI_API_KEY is not set for openai" in message
    assert "OPENAI_BASE_URL" in message


def test_a_wrong_key_is_one_line_with_the_fix(
    workspace: Workspace, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")

    result = run_cli([*RUN, "--model", LOCAL, "--price", "0/0"])

    assert result.exit_code == 2, result.output
    message = _stderr(result)
    assert "The OpenAI-compatible server rejected the API key (401" in message
    assert "Check OPENAI_API_KEY" in message
    assert "Traceback" not in result.output


def test_a_rate_limit_is_waited_out(workspace: Workspace, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(Fault.status(429, "Slow down", retry_after=0.05))

    result = run_cli([*RUN, "--model", LOCAL, "--price", "0/0"])

    assert result.exit_code == 0, result.output
    summary = only_results(workspace.directory).summary
    assert summary["Precision"] == "5/5 (100%)"
    assert summary["Judge Calls"] == "5"
    assert summary["Retries"].startswith("1 ")


def test_an_openai_reasoning_model_gets_max_completion_tokens(
    workspace: Workspace, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli([*RUN, "--model", "openai/gpt-5-mini"])

    assert result.exit_code == 0, result.output
    summary = only_results(workspace.directory).summary
    assert summary["Precision"] == "5/5 (100%)"
    assert summary["Cost"].startswith("$") and summary["Cost"] != "$0.0000"
    answered = fake_openai.requests
    assert all("max_completion_tokens" in request.body for request in answered[-5:])


def test_every_llm_family_runs_on_a_local_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)

    result = run_cli(
        [
            *RUN,
            "--model",
            LOCAL,
            "--price",
            "0/0",
            "--metrics",
            ALL_LLM,
            "--rubric",
            "rubric.toml",
            "--answer-relevance",
            "rating",
        ]
    )

    assert result.exit_code == 0, result.output
    results = only_results(space.directory)
    for column in ("Precision", "ragas_score", "factual_accuracy", "answer_correct", "is_matching"):
        assert column in results.summary, column
    assert "rubric_coherence" in results.summary
    assert all(row["Error"] == "" for row in results.rows)


def test_the_response_cache_keeps_providers_apart(
    workspace: Workspace, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_EVAL_CACHE_DIR", str(workspace.directory / "cache"))
    first = run_cli([*RUN, "--model", LOCAL, "--price", "0/0"])
    assert first.exit_code == 0, first.output
    asked = len(fake_openai.requests)

    again = run_cli([*RUN, "--model", LOCAL, "--price", "0/0", "--output-dir", "again"])
    assert again.exit_code == 0, again.output
    assert len(fake_openai.requests) == asked  # all five from the cache

    other = run_cli([*RUN, "--model", "openai/gpt-4.1-mini", "--output-dir", "other"])
    assert other.exit_code == 0, other.output
    assert len(fake_openai.requests) == asked + 5  # another model: nothing reused


def test_an_azure_deployment_judges(
    workspace: Workspace, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", fake_openai.expected_api_key)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake_openai.azure_endpoint)
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-04-01-preview")

    result = run_cli([*RUN, "--model", "azure/gpt-4.1-mini"])

    assert result.exit_code == 0, result.output
    summary = only_results(workspace.directory).summary
    assert summary["Model"] == "azure/gpt-4.1-mini"
    assert summary["Precision"] == "5/5 (100%)"
    assert {request.extra["api"] for request in fake_openai.requests} == {"azure"}


def test_the_library_judges_on_a_local_model(fake_openai: FakeOpenAIServer) -> None:
    from rag_evaluator.errors import UsageError
    from rag_evaluator.metrics import is_matching, judge_client

    with judge_client(LOCAL, price=(0.0, 0.0), max_cost=1.0) as client:
        assert is_matching("Who approves travel?", "The manager.", "The manager.", client=client)
    assert fake_openai.requests[-1].extra["schema_from"] == "response_format"
    with (
        pytest.raises(UsageError, match="max_cost needs the price"),
        judge_client(LOCAL, max_cost=1),
    ):
        pass


def test_generate_writes_a_golden_set_with_a_local_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    from generate_support import DOCS, assert_spans_slice_back, generate_arguments, read_golden_set

    space = prepare_workspace(tmp_path, monkeypatch)

    result = run_cli([*generate_arguments(DOCS), "--model", LOCAL, "--yes"])

    assert result.exit_code == 0, result.output
    golden = read_golden_set(space.directory)
    assert len(golden.questions) == 12
    for truth in golden.ground_truth:
        assert_spans_slice_back(DOCS, truth)
    assert "Model" in result.stdout and LOCAL in result.stdout
    assert "price unknown" in result.stdout
    assert {request.extra["api"] for request in fake_openai.requests} == {"openai"}


@pytest.mark.parametrize(
    "fault",
    [
        Fault.status(500),
        Fault.status(503, retry_after=0.01),
        Fault.drop_connection(),
        Fault.malformed("html"),
        Fault.malformed("no_choices"),
        Fault.invalid_json(),
        Fault.truncated(),
        Fault.refusal(),
    ],
    ids=lambda fault: f"{fault.kind}-{fault.status_code or fault.text or ''}"[:30],
)
def test_a_failed_or_unusable_reply_is_asked_again_and_counted_once(
    workspace: Workspace, fake_openai: FakeOpenAIServer, fault: Fault
) -> None:
    fake_openai.fail_next(fault)

    result = run_cli([*RUN, "--model", LOCAL, "--price", "1/1"])

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    summary = only_results(workspace.directory).summary
    assert summary["Precision"] == "5/5 (100%)"
    billed = fake_openai.billed_total()
    # Judge Calls counts what was billed (an unusable 200 is billed, a failed one is not).
    assert summary["Judge Calls"] == str(billed) and billed in (5, 6)
