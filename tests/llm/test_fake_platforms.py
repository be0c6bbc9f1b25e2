"""The fake server's Bedrock and Vertex routes, as the SDK's platform clients (and a bare HTTP
client, for what the SDK never sends) meet them: credentials, model ids, error shapes, billing."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import anthropic
import httpx2
import pytest
from fakes.anthropic_server import FakeAnthropicServer, Fault
from fakes.platforms import bedrock_model_id, token_reply

BODY: dict[str, Any] = {
    "max_tokens": 50,
    "system": "You judge answers.",
    "messages": [{"role": "user", "content": "<question>What is X?</question>"}],
    "output_config": {
        "format": {"type": "json_schema", "schema": {"type": "object", "properties": {}}}
    },
}
BEDROCK_HAIKU = bedrock_model_id("claude-haiku-5-5")


def bedrock_client(**options: Any) -> anthropic.AnthropicBedrock:
    return anthropic.AnthropicBedrock(max_retries=0, **options)


def test_bedrock_serves_its_ids_and_inference_profiles_as_the_messages_route_does(
    fake_bedrock: FakeAnthropicServer,
) -> None:
    fake_bedrock.script("What is X?", {"precision": 0, "recall": 1, "accuracy": 1})
    client = bedrock_client()
    for model in (BEDROCK_HAIKU, f"us.{BEDROCK_HAIKU}", f"global.{BEDROCK_HAIKU}"):
        message = client.messages.create(model=model, **BODY)
        assert json.loads(message.content[0].text)["precision"] == 0
    recorded = fake_bedrock.requests
    assert [request.platform_model for request in recorded] == [
        BEDROCK_HAIKU,
        f"us.{BEDROCK_HAIKU}",
        f"global.{BEDROCK_HAIKU}",
    ]
    # Recorded as the Messages body it stands for: the fake's model, no anthropic_version.
    assert {request.body["model"] for request in recorded} == {"claude-haiku-5-5"}
    assert all("anthropic_version" not in request.body for request in recorded)
    assert fake_bedrock.billed_total() == 3


def test_bedrock_refuses_what_bedrock_refuses_in_its_own_shape(
    fake_bedrock: FakeAnthropicServer,
) -> None:
    headers = {"authorization": f"Bearer {fake_bedrock.platform_credentials.bedrock_api_key}"}
    url = f"{fake_bedrock.base_url}/model/{BEDROCK_HAIKU}/invoke"
    version = {"anthropic_version": "bedrock-2023-05-31"}
    with_model = httpx2.post(url, json={**BODY, **version, "model": "x"}, headers=headers)
    no_version = httpx2.post(url, json=BODY, headers=headers)
    unknown = httpx2.post(url.replace("haiku-5-5", "haiku-9"), json={**BODY, **version})
    anonymous = httpx2.post(url, json={**BODY, **version})

    assert (with_model.status_code, with_model.json()) == (
        400,
        {"message": "Malformed input request: extraneous key [model] is not permitted"},
    )
    assert with_model.headers["x-amzn-errortype"].startswith("ValidationException:")
    assert no_version.status_code == 400
    assert unknown.status_code == 403  # credentials are checked before the model
    assert anonymous.headers["x-amzn-errortype"].startswith("MissingAuthenticationTokenException")
    assert fake_bedrock.billed_total() == 0


def test_bedrock_faults_come_in_bedrocks_error_shape(fake_bedrock: FakeAnthropicServer) -> None:
    fake_bedrock.fail_next(Fault.status(429, "Too many requests.", retry_after=3))
    with pytest.raises(anthropic.RateLimitError) as raised:
        bedrock_client().messages.create(model=BEDROCK_HAIKU, **BODY)
    response = raised.value.response
    assert response.json() == {"message": "Too many requests."}
    assert response.headers["x-amzn-errortype"].startswith("ThrottlingException:")
    assert response.headers["retry-after"] == "3"


@pytest.mark.needs_extra("bedrock")
@pytest.mark.parametrize(
    ("key_id", "region", "error_type"),
    [
        ("AKIAOTHER0123456789A", "us-east-1", "UnrecognizedClientException"),
        ("AKIAFAKE0123456789AB", "eu-west-1", "InvalidSignatureException"),
    ],
)
def test_bedrock_checks_the_sigv4_key_id_and_region(
    fake_bedrock: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    key_id: str,
    region: str,
    error_type: str,
) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")  # sign with the keys given instead
    credentials = fake_bedrock.platform_credentials
    signed = bedrock_client(
        aws_access_key=credentials.aws_access_key_id,
        aws_secret_key=credentials.aws_secret_access_key,
        aws_region=credentials.aws_region,
    )
    assert signed.messages.create(model=BEDROCK_HAIKU, **BODY).usage.input_tokens > 0
    other = bedrock_client(aws_access_key=key_id, aws_secret_key="x", aws_region=region)
    with pytest.raises(anthropic.PermissionDeniedError) as raised:
        other.messages.create(model=BEDROCK_HAIKU, **BODY)
    assert raised.value.response.headers["x-amzn-errortype"].startswith(error_type)


@pytest.mark.needs_extra("vertex")
def test_vertex_gets_a_token_from_the_fake_and_is_served(fake_vertex: FakeAnthropicServer) -> None:
    client = anthropic.AnthropicVertex(max_retries=0)
    message = client.messages.create(model="claude-haiku-5-5@20261007", **BODY)
    counted = client.messages.count_tokens(
        model="claude-haiku-5-5",
        system=BODY["system"],
        messages=BODY["messages"],
        output_config=BODY["output_config"],
    )

    assert message.usage.input_tokens > 0
    assert counted.input_tokens > 0
    served = [request.served for request in fake_vertex.all_requests]
    assert served == ["token", "verdict", "count_tokens"]
    token = fake_vertex.platform_credentials.google_access_token
    assert fake_vertex.requests[0].headers["authorization"] == f"Bearer {token}"


def test_vertex_refuses_in_googles_error_shape(fake_vertex: FakeAnthropicServer) -> None:
    credentials = fake_vertex.platform_credentials
    path = "publishers/anthropic/models/claude-haiku-5-5:rawPredict"
    url = (
        f"{fake_vertex.vertex_base_url}/projects/{credentials.vertex_project}/locations/"
        f"{credentials.vertex_region}/{path}"
    )
    body = {**BODY, "anthropic_version": "vertex-2023-10-16"}
    token = {"authorization": f"Bearer {credentials.google_access_token}"}
    anonymous = httpx2.post(url, json=body)
    elsewhere = httpx2.post(
        url.replace(credentials.vertex_project, "other"), json=body, headers=token
    )
    fake_vertex.fail_next(Fault.status(429, "Quota exceeded."))
    throttled = httpx2.post(url, json=body, headers=token)

    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["status"] == "UNAUTHENTICATED"
    assert elsewhere.status_code == 403
    assert elsewhere.json()["error"]["status"] == "PERMISSION_DENIED"
    assert throttled.json() == {
        "error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}
    }
    assert fake_vertex.billed_total() == 0


def _jwt(claims: dict[str, Any], key: Any) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")

    header = part(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    signed = f"{header}.{part(json.dumps(claims).encode())}"
    signature = key.sign(signed.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
    return f"{signed}.{part(signature)}"


@pytest.mark.needs_extra("vertex")
def test_the_token_endpoint_takes_only_the_service_accounts_signature(
    fake_vertex: FakeAnthropicServer,
) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    credentials = fake_vertex.platform_credentials
    claims = {
        "iss": credentials.google_client_email,
        "scope": "https://www.googleapis.com/auth/cloud-platform",
        "exp": time.time() + 600,
    }
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    form = f"grant_type={grant}&assertion={_jwt(claims, other_key)}"

    status, reply = token_reply(form, credentials)

    assert (status, reply["error"]) == (400, "invalid_grant")
