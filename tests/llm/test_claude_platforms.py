"""Claude on Amazon Bedrock and Google Vertex AI through ``rag-eval evaluate`` and ``generate``.

The SDK's own ``AnthropicBedrock`` and ``AnthropicVertex`` clients reach the fake server through
``ANTHROPIC_BEDROCK_BASE_URL`` and ``ANTHROPIC_VERTEX_BASE_URL`` on the routes they use, with
real credentials: a Bedrock API key or SigV4 signatures, a service account's key file whose
tokens the fake issues (fixtures ``fake_bedrock``, ``fake_vertex``). Nothing is monkeypatched
but the environment.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    run_in_terminal,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, RecordedRequest
from fakes.platforms import bedrock_model_id
from generate_support import DOCS, generate_arguments, read_golden_set
from llm_support import ALL_LLM, QUESTION, write_inputs_with_contexts
from platform_support import use_aws_keys

from rag_evaluator.text.money import format_usd

HAIKU = "claude-haiku-5-5"
HAIKU_PRICES = (0.10, 0.50)  # dollars per million input, output tokens
BEDROCK_HAIKU = bedrock_model_id(HAIKU)
RUN = ["evaluate", "--seed", "5", "--delay", "0", "--yes"]


@pytest.fixture(params=["bedrock", pytest.param("vertex", marks=pytest.mark.needs_extra("vertex"))])
def platform(request: pytest.FixtureRequest) -> str:
    """Each platform (Bedrock through a Bedrock API key: no extra needed)."""
    return str(request.param)


@pytest.fixture
def server(platform: str, request: pytest.FixtureRequest) -> FakeAnthropicServer:
    """The fake playing ``platform`` (a Bedrock API key, or Vertex's service account)."""
    return request.getfixturevalue(f"fake_{platform}")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)
    return space


def platform_model(platform: str) -> str:
    """How the platform names Claude Haiku (the ``--model PLATFORM/haiku`` it stands for)."""
    return BEDROCK_HAIKU if platform == "bedrock" else HAIKU


def is_check(request: RecordedRequest) -> bool:
    """The pre-flight call: one token, on a platform without a models endpoint."""
    return isinstance(request.body, dict) and request.body.get("max_tokens") == 1


def run_calls(server: FakeAnthropicServer) -> list[RecordedRequest]:
    """The run's calls (the pre-flight call left out)."""
    return [request for request in server.requests if not is_check(request)]


def test_the_judge_and_every_llm_family_run_end_to_end(
    platform: str, server: FakeAnthropicServer, workspace: Workspace
) -> None:
    server.script_role("label", QUESTION[3], {"reasoning": "Wrong port.", "label": "WRONG"})

    result = run_cli(
        [*RUN, "--model", f"{platform}/haiku", "--metrics", ALL_LLM, "--rubric", "rubric.toml"]
    )

    assert result.exit_code == 0, result.output
    assert re.search(
        rf"Model: ({platform}/)?{re.escape(platform_model(platform))}\n", result.stderr
    )
    # Every call went to the platform's Messages route, under its model id.
    assert {(request.platform, request.platform_model) for request in server.requests} == {
        (platform, platform_model(platform))
    }
    assert [is_check(request) for request in server.requests][:1] == [True]
    roles = [request.role for request in run_calls(server)]
    assert {role: roles.count(role) for role in set(roles)} == {
        "judge": 5,
        "claims": 3,
        "verdicts": 3,
        "contexts": 3,
        "statements": 3,
        "attributions": 3,
        "questions": 5,
        "correctness": 5,
        "label": 5,
        "is_matching": 5,
        "criteria": 5,
    }
    summary = only_results(workspace.directory).summary
    assert summary["Model"] == f"{platform}/{platform_model(platform)}"
    assert summary["Answer Classes"] == "CORRECT 4 / WRONG 1 / DONT_KNOW 0 (0 without a call)"
    assert summary["rubric_harmlessness"] == "5/5 (100%)"
    assert summary["Judge Calls"] == str(len(roles))
    # The usage the platform reported, priced at Claude Haiku's prices.
    tokens_in = sum(request.usage["input_tokens"] for request in run_calls(server))
    tokens_out = sum(request.usage["output_tokens"] for request in run_calls(server))
    assert (summary["Tokens In"], summary["Tokens Out"]) == (str(tokens_in), str(tokens_out))
    cost = (tokens_in * HAIKU_PRICES[0] + tokens_out * HAIKU_PRICES[1]) / 1_000_000
    assert summary["Cost"] == format_usd(cost)


@pytest.mark.needs_extra("bedrock")
def test_bedrock_signs_with_an_aws_access_key(
    fake_bedrock: FakeAnthropicServer, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_aws_keys(monkeypatch, fake_bedrock)

    result = run_cli([*RUN, "--model", "bedrock/haiku"])

    assert result.exit_code == 0, result.output
    key_id = fake_bedrock.platform_credentials.aws_access_key_id
    assert len(fake_bedrock.requests) == 6
    assert all(
        request.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={key_id}/")
        for request in fake_bedrock.requests
    )


def test_the_check_comes_before_the_cost_prompt(
    platform: str, server: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No models endpoint: a one-token call proves the access, before the estimate and
    ``Proceed?`` (declined here: the check is the only request)."""
    prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)

    run = run_in_terminal(
        ["evaluate", "--model", f"{platform}/haiku", "--seed", "5"],
        tmp_path,
        answers=[("Proceed?", "n")],
    )

    assert run.exit_code == 0, run.output
    assert "Estimated cost:" in run.text
    assert "Nothing was evaluated." in run.text
    assert [is_check(request) for request in server.requests] == [True]
    check = server.requests[0]
    # Shaped as the run's calls are: structured output, so the check proves the platform
    # takes it for this model.
    assert check.body["output_config"]["format"]["type"] == "json_schema"


def test_a_rate_limit_with_retry_after_is_retried(
    platform: str, server: FakeAnthropicServer, workspace: Workspace
) -> None:
    server.script(
        SAMPLE[2][0],
        Fault.status(429, "Too many requests, please wait before trying again.", retry_after=2),
        {"reasoning": "Same.", "summary": "Same.", "precision": 1, "recall": 1, "accuracy": 1},
    )

    result = run_cli([*RUN, "--model", f"{platform}/haiku"])

    assert result.exit_code == 0, result.output
    assert [request.response_status for request in server.requests_about(SAMPLE[2][0])] == [
        429,
        200,
    ]
    # The platform's retry-after (2 s) outweighs the first backoff (at most 1 s).
    assert "API rate limit reached (429); retrying in 2.0 s (retry 1 of 6)" in result.stderr
    assert only_results(workspace.directory).summary["Unscored"] == "0"


ACCESS_DENIED = {
    "bedrock": "You don't have access to the model with the specified model ID.",
    "vertex": "Permission 'aiplatform.endpoints.predict' denied on resource "
    "'//aiplatform.googleapis.com/projects/fake-project-1234/locations/us-east5/publishers/"
    "anthropic/models/claude-haiku-5-5' (or it may not exist).",
}
ACCESS_FIX = {
    "bedrock": "Request access to it under Model access in the Amazon Bedrock console for "
    "us-east-1)",
    "vertex": "Enable it in Vertex AI Model Garden for project fake-project-1234 in us-east5 and "
    "grant roles/aiplatform.user)",
}


def test_access_denied_is_one_line_naming_the_fix(
    platform: str, server: FakeAnthropicServer, workspace: Workspace
) -> None:
    server.fail_next(Fault.status(403, ACCESS_DENIED[platform]))

    result = run_cli([*RUN, "--model", f"{platform}/haiku"])

    assert result.exit_code == 2
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(
        f"Error: The credentials may not use model {platform_model(platform)} (403: "
    )
    assert ACCESS_FIX[platform] in error
    assert error.endswith("Use credentials with access to it, or choose another model with --model")
    # Stopped at the pre-flight check: no estimate, no other call, no results.
    assert "Estimated cost" not in result.stderr
    assert len(server.requests) == 1
    assert workspace.results() == []


def test_rejected_credentials_are_one_line_naming_the_fix(
    platform: str,
    server: FakeAnthropicServer,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if platform == "bedrock":
        # Bedrock answers a bad key with a 403 (UnrecognizedClientException): not a model access.
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-revoked")
        expected = (
            "Error: Amazon Bedrock rejected the credentials (401: Authentication failed: Please "
            "make sure your API Key is valid.). Check your AWS credentials"
        )
    else:
        # A service account key the token endpoint does not accept.
        key_file = Path(server.platform_credentials.vertex_project + ".json")
        info = json.loads(Path(_environment("GOOGLE_APPLICATION_CREDENTIALS")).read_text())
        info["client_email"] = "someone-else@fake-project-1234.iam.gserviceaccount.com"
        key_file.write_text(json.dumps(info), encoding="utf-8")
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file.resolve()))
        expected = "Error: Google Vertex AI rejected the credentials (401: ('invalid_grant: "

    result = run_cli([*RUN, "--model", f"{platform}/haiku"])

    assert result.exit_code == 2
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(expected), error
    assert server.billed_total() == 0


def _environment(name: str) -> str:
    import os

    return os.environ[name]


def test_a_model_the_platform_does_not_know_is_one_line(
    platform: str, server: FakeAnthropicServer, workspace: Workspace
) -> None:
    model_id = "anthropic.claude-haiku-9-9-v1:0" if platform == "bedrock" else "claude-haiku-9-9"

    result = run_cli([*RUN, "--model", f"{platform}/{model_id}"])

    assert result.exit_code == 2
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    name = "Amazon Bedrock" if platform == "bedrock" else "Google Vertex AI"
    assert error.startswith(f"Error: {name} does not know model {model_id} (404: "), error


MISSING_ANTHROPIC_KEY_EXIT = 2


def test_a_missing_anthropic_key_exits_as_missing_platform_credentials_do(
    workspace: Workspace,
) -> None:
    result = run_cli([*RUN, "--model", "haiku"])
    assert result.exit_code == MISSING_ANTHROPIC_KEY_EXIT
    assert "ANTHROPIC_API_KEY is not set for anthropic." in result.stderr


@pytest.mark.needs_extra("bedrock")
@pytest.mark.parametrize(
    ("unset", "setting", "message"),
    [
        (
            ("AWS_BEARER_TOKEN_BEDROCK",),
            {},
            "Error: AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID or AWS_PROFILE is not set for "
            "bedrock, and boto3 found no other AWS credentials. Set AWS_BEARER_TOKEN_BEDROCK (a "
            "Bedrock API key), or AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, or AWS_PROFILE",
        ),
        (
            ("AWS_REGION",),
            {},
            "Error: AWS_REGION or AWS_DEFAULT_REGION is not set for bedrock. Set AWS_REGION to "
            "the region where the account has access to the model (e.g. us-east-1)",
        ),
        (
            ("AWS_BEARER_TOKEN_BEDROCK",),
            {"AWS_ACCESS_KEY_ID": "AKIAFAKE0123456789AB"},
            "Error: AWS credentials could not be loaded for bedrock (Partial credentials found "
            "in env, missing: AWS_SECRET_ACCESS_KEY). Set AWS_BEARER_TOKEN_BEDROCK",
        ),
        (
            ("AWS_BEARER_TOKEN_BEDROCK",),
            {"AWS_PROFILE": "work"},
            "Error: AWS credentials could not be loaded for bedrock (The config profile (work) "
            "could not be found). Set AWS_BEARER_TOKEN_BEDROCK",
        ),
    ],
)
def test_missing_bedrock_credentials_are_one_line_naming_the_variables(
    fake_bedrock: FakeAnthropicServer,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
    unset: tuple[str, ...],
    setting: dict[str, str],
    message: str,
) -> None:
    for name in unset:
        monkeypatch.delenv(name)
    for name, value in setting.items():
        monkeypatch.setenv(name, value)

    result = run_cli([*RUN, "--model", "bedrock/haiku", "--metrics", "judge,lexical"])

    assert result.exit_code == MISSING_ANTHROPIC_KEY_EXIT
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(message), error
    # The offline families that can run without a model are offered.
    assert ", or leave the judged families out with --metrics lexical" in error
    assert fake_bedrock.all_requests == []


@pytest.mark.needs_extra("bedrock")
def test_bedrock_takes_the_credentials_and_region_of_an_aws_profile(
    fake_bedrock: FakeAnthropicServer, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No AWS variable but the profile's name: boto3 reads ~/.aws as the SDK will."""
    credentials = fake_bedrock.platform_credentials
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    monkeypatch.delenv("AWS_REGION")
    config = workspace.directory / "aws-config"
    config.write_text(f"[profile work]\nregion = {credentials.aws_region}\n", encoding="utf-8")
    keys = workspace.directory / "aws-credentials"
    keys.write_text(
        f"[work]\naws_access_key_id = {credentials.aws_access_key_id}\n"
        f"aws_secret_access_key = {credentials.aws_secret_access_key}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(keys))
    monkeypatch.setenv("AWS_PROFILE", "work")

    result = run_cli([*RUN, "--model", "bedrock/haiku"])

    assert result.exit_code == 0, result.output
    assert (
        fake_bedrock.requests[0]
        .headers["authorization"]
        .startswith(f"AWS4-HMAC-SHA256 Credential={credentials.aws_access_key_id}/")
    )


@pytest.mark.needs_extra("vertex")
@pytest.mark.parametrize(
    ("unset", "credentials_file", "message"),
    [
        (
            ("GOOGLE_APPLICATION_CREDENTIALS",),
            None,
            "Error: Google Application Default Credentials were not found for vertex. Log in "
            "with gcloud auth application-default login, or set GOOGLE_APPLICATION_CREDENTIALS "
            "to a service account key file",
        ),
        (
            (),
            "missing.json",
            "Error: GOOGLE_APPLICATION_CREDENTIALS names missing.json, which holds no usable "
            "Google credentials (File missing.json was not found.). Point it at a service "
            "account key file, or unset it and log in with gcloud auth application-default "
            "login",
        ),
        (
            ("ANTHROPIC_VERTEX_PROJECT_ID",),
            None,
            "Error: ANTHROPIC_VERTEX_PROJECT_ID is not set for vertex. Log in with gcloud auth "
            "application-default login (or set GOOGLE_APPLICATION_CREDENTIALS), and set "
            "ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION",
        ),
        (
            ("CLOUD_ML_REGION",),
            None,
            "Error: CLOUD_ML_REGION is not set for vertex.",
        ),
    ],
)
def test_missing_vertex_credentials_are_one_line_naming_the_variables(
    fake_vertex: FakeAnthropicServer,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
    unset: tuple[str, ...],
    credentials_file: str | None,
    message: str,
) -> None:
    for name in unset:
        monkeypatch.delenv(name)
    if credentials_file is not None:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", credentials_file)

    result = run_cli([*RUN, "--model", "vertex/haiku"])

    assert result.exit_code == MISSING_ANTHROPIC_KEY_EXIT
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(message), error
    assert fake_vertex.all_requests == []


@pytest.mark.parametrize("command", ["evaluate", "generate"])
def test_batch_is_refused_in_one_line(
    platform: str, server: FakeAnthropicServer, workspace: Workspace, command: str
) -> None:
    arguments = (
        RUN
        if command == "evaluate"
        else [*generate_arguments(DOCS), "--yes", "--output-dir", "golden"]
    )

    result = run_cli([*arguments, "--model", f"{platform}/haiku", "--batch"])

    assert result.exit_code == 2
    name = "Amazon Bedrock" if platform == "bedrock" else "Google Vertex AI"
    assert result.stderr.strip() == (
        f"Error: --batch sends Message Batches, which only the Anthropic API offers, not "
        f"{name}. Run without --batch, or use --model haiku on the Anthropic API"
    )
    assert server.all_requests == []


def test_exact_estimate_on_bedrock_keeps_the_local_estimate(
    fake_bedrock: FakeAnthropicServer, workspace: Workspace
) -> None:
    result = run_cli([*RUN, "--model", "bedrock/haiku", "--exact-estimate"])

    assert result.exit_code == 0, result.output
    assert (
        f"--exact-estimate: bedrock/{BEDROCK_HAIKU} has no token-counting endpoint; its share "
        "of the estimate stays the local one"
    ) in " ".join(result.stderr.split())
    assert "Estimated cost:" in result.stderr
    assert [request.served for request in fake_bedrock.all_requests].count("count_tokens") == 0


@pytest.mark.needs_extra("vertex")
def test_exact_estimate_on_vertex_counts_with_its_endpoint(
    fake_vertex: FakeAnthropicServer, workspace: Workspace
) -> None:
    result = run_cli([*RUN, "--model", "vertex/haiku", "--exact-estimate"])

    assert result.exit_code == 0, result.output
    counted = [request for request in fake_vertex.all_requests if request.served == "count_tokens"]
    # One count per distinct first request: the judge's five questions.
    assert len(counted) == 5
    assert all(
        request.path.endswith("/publishers/anthropic/models/count-tokens:rawPredict")
        and request.body["model"] == HAIKU
        for request in counted
    )


def test_a_result_cached_on_the_anthropic_api_is_not_reused_on_a_platform(
    platform: str,
    server: FakeAnthropicServer,
    fake_anthropic: FakeAnthropicServer,
    workspace: Workspace,
) -> None:
    assert run_cli([*RUN, "--model", "haiku"]).exit_code == 0
    assert len(fake_anthropic.requests) == 5

    result = run_cli([*RUN, "--model", f"{platform}/haiku"])

    assert result.exit_code == 0, result.output
    assert len(run_calls(server)) == 5
    latest = read_results(workspace.results()[-1])
    assert latest.summary["Cached Questions"] == "0"
    # Run again on the platform: now its own results are reused.
    assert run_cli([*RUN, "--model", f"{platform}/haiku"]).exit_code == 0
    assert len(run_calls(server)) == 5


def test_an_unfinished_anthropic_run_is_not_resumed_on_a_platform(
    platform: str,
    server: FakeAnthropicServer,
    fake_anthropic: FakeAnthropicServer,
    workspace: Workspace,
) -> None:
    assert run_cli([*RUN, "--model", "haiku", "--limit", "2", "--no-cache"]).exit_code == 0
    assert len(workspace.checkpoint_files()) == 1

    result = run_cli([*RUN, "--model", f"{platform}/haiku", "--no-cache"])

    assert result.exit_code == 0, result.output
    assert "cannot be resumed: the model (was claude-haiku-5-5, now " in result.stderr
    # Every question asked anew on the platform.
    assert len(run_calls(server)) == 5


def test_generate_runs_on_bedrock(
    fake_bedrock: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_workspace(tmp_path, monkeypatch)

    arguments = [*generate_arguments(DOCS, count=4), "--yes", "--model", "bedrock/haiku"]
    result = run_cli(arguments, env={"COLUMNS": "200"})  # no wrapped table cells

    assert result.exit_code == 0, result.output
    golden = read_golden_set(tmp_path)
    assert len(golden.questions) == 4
    sources = {question["Source"] for question in golden.questions}
    assert sources == {f"generated by bedrock/{BEDROCK_HAIKU}"}  # the provider named
    assert len(fake_bedrock.generation_requests()) >= 4
    assert all(request.platform == "bedrock" for request in fake_bedrock.requests)
    # The summary table: what the platform reported, at Claude Haiku's prices.
    table = dict(re.findall(r"│ *([A-Z][^│]*?) *│ *([^│]*?) *│", result.stdout))
    paid = [request for request in fake_bedrock.requests if not is_check(request)]
    tokens_in = sum(request.usage["input_tokens"] for request in paid)
    tokens_out = sum(request.usage["output_tokens"] for request in paid)
    assert (table["Tokens In"], table["Tokens Out"]) == (str(tokens_in), str(tokens_out))
    cost = (tokens_in * HAIKU_PRICES[0] + tokens_out * HAIKU_PRICES[1]) / 1_000_000
    assert table["Cost"] == format_usd(cost)
    # The model's name may fold onto a second line of its cell.
    assert f"Modelbedrock/{BEDROCK_HAIKU}" in re.sub(r"[│\s]", "", result.stdout)


@pytest.mark.parametrize(
    ("platform_name", "modules", "message"),
    [
        (
            "bedrock",
            ("boto3", "botocore", "botocore.exceptions"),
            "Error: Claude on Amazon Bedrock with AWS credentials (a Bedrock API key in "
            "AWS_BEARER_TOKEN_BEDROCK needs nothing more) needs the optional 'bedrock' "
            "dependencies. Install them with: pip install 'rag-eval[bedrock]'",
        ),
        (
            "vertex",
            ("google.auth", "google.auth.exceptions"),
            "Error: Claude on Google Vertex AI needs the optional 'vertex' dependencies. "
            "Install them with: pip install 'rag-eval[vertex]'",
        ),
    ],
)
def test_a_missing_extra_is_one_line_with_the_install_command(
    platform_name: str,
    modules: tuple[str, ...],
    message: str,
    request: pytest.FixtureRequest,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server: FakeAnthropicServer = request.getfixturevalue(f"fake_{platform_name}")
    if platform_name == "bedrock":
        use_aws_keys(monkeypatch, server)
    for module in modules:  # as if the extra were not installed: importing it fails
        monkeypatch.setitem(sys.modules, module, None)

    result = run_cli([*RUN, "--model", f"{platform_name}/haiku"])

    assert result.exit_code == 2
    assert result.stderr.strip() == message
    assert server.all_requests == []


def test_a_bedrock_api_key_needs_no_extra(
    fake_bedrock: FakeAnthropicServer, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("boto3", "botocore", "botocore.exceptions"):
        monkeypatch.setitem(sys.modules, module, None)

    result = run_cli([*RUN, "--model", "bedrock/haiku"])

    assert result.exit_code == 0, result.output
    assert all(
        request.headers["authorization"]
        == f"Bearer {fake_bedrock.platform_credentials.bedrock_api_key}"
        for request in fake_bedrock.requests
    )


def test_the_library_judges_on_a_platform(
    platform: str, server: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_evaluator.metrics import faithfulness, judge_client

    monkeypatch.chdir(tmp_path)
    question = "What is the capital of France?"
    server.script_role(
        "verdicts", question, {"verdicts": [{"claim": "c", "reason": "", "supported": 0}]}
    )
    server.script_role("claims", question, {"claims": ["Paris is the capital."]})

    with judge_client(f"{platform}/haiku") as client:
        score = faithfulness(question, "Paris is the capital.", ["Lyon is a city."], client=client)

    assert score == 0.0
    assert {request.platform for request in server.requests} == {platform}
    assert [request.role for request in server.requests] == ["claims", "verdicts"]
