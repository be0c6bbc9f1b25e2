"""How Amazon Bedrock and Google Vertex AI dress the Messages API, for the fake server.

The ``anthropic`` SDK's own platform clients are what rag-eval uses, so the fake answers the
requests those clients make, with the same roles, billing and faults as ``POST /v1/messages``:

- ``AnthropicBedrock`` posts the Messages body, without ``model`` and with
  ``anthropic_version``, to ``/model/{model id}/invoke``. It authenticates with a Bedrock API
  key (``AWS_BEARER_TOKEN_BEDROCK``) as a bearer token, or signs with SigV4 from the AWS
  credentials boto3 finds. Errors are ``{"message": ...}`` with the exception's name in the
  ``x-amzn-errortype`` header; bad credentials are a 403 (``UnrecognizedClientException``).
- ``AnthropicVertex`` posts it to ``/v1/projects/{project}/locations/{region}/publishers/
  anthropic/models/{model}:rawPredict`` (token counting: ``.../models/count-tokens:rawPredict``,
  with ``model`` in the body) with an OAuth access token, which Google's auth library gets from
  the ``token_uri`` of the Application Default Credentials (``GOOGLE_TOKEN_PATH`` here). Errors
  are Google's ``{"error": {"code", "message", "status"}}``.

The credentials file is a service account's (google-auth sends a user's refresh token to
Google's own token endpoint whatever its file says): the token route checks the RS256
signature of the JWT the library signs with the account's private key.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ANTHROPIC = "anthropic"
BEDROCK = "bedrock"
VERTEX = "vertex"
MESSAGES = "messages"
COUNT_TOKENS = "count_tokens"

# The ``anthropic_version`` the platforms document, besides the API version the SDK sends.
PLATFORM_API_VERSIONS = ("bedrock-2023-05-31", "vertex-2023-10-16")
GOOGLE_TOKEN_PATH = "/oauth2/token"

_BEDROCK_PATH = re.compile(r"/model/([^/]+)/invoke")
_VERTEX_PATH = re.compile(
    r"/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/]+):rawPredict"
)
# Bedrock's cross-region inference profiles prefix the model id with a geography.
_INFERENCE_PROFILE = re.compile(r"(?:us|eu|apac|jp|au|global)\.")
_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})"
)
_BEDROCK_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_GOOGLE_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class PlatformCredentials:
    """What the fake platforms accept, and where they are (region, project)."""

    bedrock_api_key: str = "bedrock-api-key-fake-0123456789abcdef"
    aws_access_key_id: str = "AKIAFAKE0123456789AB"
    aws_secret_access_key: str = "fake-aws-secret-0123456789abcdef"
    aws_region: str = "us-east-1"
    vertex_project: str = "fake-project-1234"
    vertex_region: str = "us-east5"
    google_client_email: str = "rag-eval-tests@fake-project-1234.iam.gserviceaccount.com"
    google_access_token: str = "ya29.fake-access-token-0123456789"


@dataclass(frozen=True)
class PlatformCall:
    """A request on one of the platforms' Messages routes."""

    platform: str
    action: str  # MESSAGES or COUNT_TOKENS
    model: str  # as the path names it ("" for token counting: the body names it)
    project: str = ""
    region: str = ""


@dataclass(frozen=True)
class Problem:
    """Why a platform refuses a request: its status, message and error type."""

    status: int
    message: str
    error_type: str | None = None


def platform_call(method: str, path: str) -> PlatformCall | None:
    """The Bedrock or Vertex request that ``method path`` is, if any."""
    if method != "POST":
        return None
    found = _BEDROCK_PATH.fullmatch(path)
    if found:
        return PlatformCall(BEDROCK, MESSAGES, urllib.parse.unquote(found[1]))
    found = _VERTEX_PATH.fullmatch(path)
    if found:
        project, region, model = (urllib.parse.unquote(part) for part in found.groups())
        if model == "count-tokens":
            return PlatformCall(VERTEX, COUNT_TOKENS, "", project, region)
        return PlatformCall(VERTEX, MESSAGES, model, project, region)
    return None


def bedrock_model_id(model: str) -> str:
    """The Bedrock id of one of the fake's Claude models."""
    return f"anthropic.{model}-v1:0"


def _known_model(call: PlatformCall, model: str, known: tuple[str, ...]) -> str | None:
    """The fake's model that a platform's model id stands for."""
    if call.platform == BEDROCK:
        profile = _INFERENCE_PROFILE.match(model)
        bare = model[profile.end() :] if profile else model
        return next((name for name in known if bedrock_model_id(name) == bare), None)
    bare = model.partition("@")[0]  # Vertex ids may pin a version: claude-x@20261007
    return bare if bare in known else None


def messages_body(
    call: PlatformCall,
    raw: Any,
    known: tuple[str, ...],
    versions: tuple[str, ...],
    credentials: PlatformCredentials,
) -> tuple[Any, Problem | None]:
    """The Messages API body a platform request stands for (``model`` from the path, mapped to
    the fake's model), and why the platform would refuse it, if it would. ``versions`` are the
    API versions the fake accepts besides the platforms' own."""
    if not isinstance(raw, dict):
        return raw, None
    body = {name: value for name, value in raw.items() if name != "anthropic_version"}
    problem = None
    given = str(raw.get("model", "")) if call.action == COUNT_TOKENS else call.model
    model = _known_model(call, given, known)
    body["model"] = model or given
    version = raw.get("anthropic_version")
    if call.action == MESSAGES and "model" in raw:
        problem = Problem(400, "Malformed input request: extraneous key [model] is not permitted")
    elif version not in (*versions, *PLATFORM_API_VERSIONS):
        problem = Problem(400, f"anthropic_version: unsupported or missing value {version!r}")
    elif call.platform == VERTEX and (call.project, call.region) != (
        credentials.vertex_project,
        credentials.vertex_region,
    ):
        problem = Problem(
            403,
            "Permission 'aiplatform.endpoints.predict' denied on resource "
            f"'//aiplatform.googleapis.com/projects/{call.project}/locations/{call.region}/"
            f"publishers/anthropic/models/{given}' (or it may not exist).",
        )
    elif model is None and call.platform == BEDROCK:
        problem = Problem(400, "The provided model identifier is invalid.")
    elif model is None:
        problem = Problem(
            404,
            f"Publisher Model `projects/{call.project}/locations/{call.region}/publishers/"
            f"anthropic/models/{given}` not found.",
        )
    return body, problem


def bedrock_auth_problem(
    headers: dict[str, str], credentials: PlatformCredentials
) -> Problem | None:
    """Why Bedrock would refuse the request's credentials: a Bedrock API key as a bearer
    token, or a SigV4 signature by the expected access key, for the region and ``bedrock``."""
    authorization = headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        if authorization.removeprefix("Bearer ") == credentials.bedrock_api_key:
            return None
        return Problem(
            403,
            "Authentication failed: Please make sure your API Key is valid.",
            "UnrecognizedClientException",
        )
    signed = _SIGV4.fullmatch(authorization)
    if signed is None or "x-amz-date" not in headers:
        return Problem(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    key_id, _, region, service = signed.group(1, 2, 3, 4)
    if key_id != credentials.aws_access_key_id:
        return Problem(
            403,
            "The security token included in the request is invalid.",
            "UnrecognizedClientException",
        )
    if region != credentials.aws_region or service != "bedrock":
        return Problem(
            403,
            f"Credential should be scoped to a valid region and service, not '{region}/{service}'.",
            "InvalidSignatureException",
        )
    return None


def vertex_auth_problem(
    headers: dict[str, str], credentials: PlatformCredentials
) -> Problem | None:
    """Why Vertex AI would refuse the request's OAuth access token."""
    if headers.get("authorization") == f"Bearer {credentials.google_access_token}":
        return None
    return Problem(
        401,
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
        "cookie or other valid authentication credential.",
    )


@functools.cache
def _service_account_key() -> Any:
    """The fake service account's RSA key (one per test process: making one takes a moment)."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _decoded(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _signed_claims(assertion: str) -> dict[str, Any] | None:
    """The claims of a JWT signed (RS256) with the fake service account's key, else None."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    parts = assertion.split(".")
    if len(parts) != 3:
        return None
    try:
        _service_account_key().public_key().verify(
            _decoded(parts[2]),
            f"{parts[0]}.{parts[1]}".encode("ascii"),
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
        claims = json.loads(_decoded(parts[1]))
    except (InvalidSignature, ValueError):
        return None
    return claims if isinstance(claims, dict) else None


def token_reply(form: str, credentials: PlatformCredentials) -> tuple[int, dict[str, Any]]:
    """Google's token endpoint: an access token for a JWT the service account signed, for
    the cloud-platform scope, not expired."""
    fields = dict(urllib.parse.parse_qsl(form))
    claims = None
    if fields.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
        claims = _signed_claims(fields.get("assertion", ""))
    if (
        claims is not None
        and claims.get("iss") == credentials.google_client_email
        and "https://www.googleapis.com/auth/cloud-platform" in str(claims.get("scope", ""))
        and float(claims.get("exp", 0)) > time.time()
    ):
        return 200, {
            "access_token": credentials.google_access_token,
            "expires_in": 3599,
            "token_type": "Bearer",
        }
    return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}


def error_payload(
    platform: str, status: int, message: str, error_type: str | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A Bedrock or Vertex error: its JSON body and headers."""
    if platform == BEDROCK:
        name = error_type or _BEDROCK_ERROR_TYPES.get(status, "InternalServerException")
        return {"message": message}, {
            "x-amzn-errortype": f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        }
    status_name = error_type or _GOOGLE_STATUSES.get(status, "UNKNOWN")
    return {"error": {"code": status, "message": message, "status": status_name}}, {}


def write_google_credentials(path: Path, token_uri: str, credentials: PlatformCredentials) -> Path:
    """A service account's key file (what ``GOOGLE_APPLICATION_CREDENTIALS`` names), whose
    tokens come from ``token_uri``."""
    from cryptography.hazmat.primitives import serialization

    private_key = _service_account_key().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": credentials.vertex_project,
                "private_key_id": "fake-key-id-0123",
                "private_key": private_key.decode("ascii"),
                "client_email": credentials.google_client_email,
                "client_id": "123456789012345678901",
                "token_uri": token_uri,
            }
        ),
        encoding="utf-8",
    )
    return path
