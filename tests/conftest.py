"""Shared fixtures."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from fakes.anthropic_server import FakeAnthropicServer

# Nothing listens on the discard port: a test that forgets the fake fails fast instead of
# reaching the real API.
_UNREACHABLE_BASE_URL = "http://127.0.0.1:9"


# Loggers that ``logs.configure_logging`` rewires (handlers, level, propagation).
_CONFIGURED_LOGGERS = ("rag_evaluator", "anthropic", "httpx", "httpx2")


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
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _UNREACHABLE_BASE_URL)
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


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A running fake Messages API that the real SDK reaches through the environment."""
    with FakeAnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.expected_api_key)
        yield server
