"""Helpers for the tests of Claude on Amazon Bedrock and Google Vertex AI (the fake server's
platform routes; the ``fake_bedrock`` and ``fake_vertex`` fixtures are in conftest.py)."""

from __future__ import annotations

import pytest
from fakes.anthropic_server import FakeAnthropicServer


def use_aws_keys(monkeypatch: pytest.MonkeyPatch, server: FakeAnthropicServer) -> None:
    """Bedrock through an AWS access key (requests signed with SigV4), not a Bedrock API key."""
    credentials = server.platform_credentials
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", credentials.aws_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", credentials.aws_secret_access_key)
