"""No test reaches a real model provider: conftest.py's autouse fixture, run in a child pytest
started with a developer's credentials in its environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

DEVELOPER_ENVIRONMENT = {
    "ANTHROPIC_API_KEY": "sk-ant-real",
    "ANTHROPIC_VERTEX_PROJECT_ID": "my-project",
    "OPENAI_API_KEY": "sk-real",
    "OPENAI_BASE_URL": "https://api.openai.com/v1",
    "OPENAI_API_VERSION": "2024-10-21",
    "OPENAI_ORG_ID": "org-real",
    "AZURE_OPENAI_API_KEY": "azure-real",
    "AZURE_OPENAI_ENDPOINT": "https://real.openai.azure.com",
    "AWS_ACCESS_KEY_ID": "AKIAREAL",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_PROFILE": "work",
    "AWS_REGION": "eu-west-1",
    "AWS_BEARER_TOKEN_BEDROCK": "bedrock-real",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
    "GOOGLE_CLOUD_PROJECT": "my-project",
    "CLOUD_ML_REGION": "us-east5",
}

SAMPLE_TESTS = f"""
import os
from pathlib import Path

REMOVED = {sorted(set(DEVELOPER_ENVIRONMENT) - {"OPENAI_BASE_URL"})!r}


def test_no_credential_or_endpoint_of_the_developer_is_left():
    assert [name for name in REMOVED if name in os.environ] == []
    assert os.environ["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"


def test_cloud_clients_find_no_credential_files_and_no_metadata_service():
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        assert not Path(os.environ[name]).exists()
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert list(Path(os.environ["CLOUDSDK_CONFIG"]).iterdir()) == []


def test_fake_openai_points_the_sdk_at_the_fake(fake_openai):
    assert os.environ["OPENAI_BASE_URL"] == fake_openai.base_url
    assert os.environ["OPENAI_API_KEY"] == fake_openai.expected_api_key
"""


def test_a_developers_provider_settings_never_reach_a_test(tmp_path: Path) -> None:
    test_file = tmp_path / "test_sample.py"
    test_file.write_text(SAMPLE_TESTS)
    environment = {**os.environ, **DEVELOPER_ENVIRONMENT, "PYTHONPATH": str(TESTS)}
    command = [sys.executable, "-m", "pytest", str(test_file), "-q", "-p", "conftest"]
    completed = subprocess.run(
        [*command, "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "3 passed" in completed.stdout
