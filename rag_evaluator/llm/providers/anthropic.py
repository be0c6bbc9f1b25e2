"""Claude through the ``anthropic`` SDK: the Anthropic API, Amazon Bedrock, Google Vertex AI.

One transport for the three: the same Messages body (structured output through
``output_config``, no sampling parameters, the system prompt marked for caching when long
enough), the same replies, the SDK's errors turned into ``ApiError``. The SDK's own retries
are off (``max_retries=0``): the client's one retry policy decides. Only the Anthropic API has
the free models endpoint and Message Batches; Vertex AI counts tokens too, Bedrock does not.

The SDK's ``AnthropicBedrock`` and ``AnthropicVertex`` clients find their own credentials (a
Bedrock API key or what boto3 finds, Google's Application Default Credentials) and region.
Their errors come in the platforms' shapes (Bedrock: ``{"message"}`` with the exception's name
in ``x-amzn-errortype``, a bad signature or key as a 403; Vertex: Google's ``{"error": {"code",
"message", "status"}}``): ``api_error`` reads them into the Anthropic API's terms, so a bad
credential is a 401 and a model the account may not use a 403 that names the platform's fix.

``--timeout`` is a deadline for the whole request: the HTTP library's timeout applies to each
read, so a reply that trickles in a byte at a time would otherwise never time out. Each
response's body is read through ``_DeadlineStream``, which gives up (as a read timeout) once
the request is older than the timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse

from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.providers.base import (
    CONNECTION,
    MALFORMED,
    STATUS,
    TIMEOUT,
    ApiError,
    ModelFacts,
    ProviderTerms,
    Reply,
)
from rag_evaluator.llm.requests import ModelRequest

logger = logging.getLogger(__name__)

# Where a request carries its deadline (an httpx request extension; httpcore ignores it).
_DEADLINE = "rag_eval_deadline"
# Batches listed per page when looking for one created by a stopped run.
_BATCH_PAGE = 100
# No model reads or writes more tokens than this in one call: a larger count is a broken reply.
MAX_TOKENS_PER_CALL = 100_000_000
# The headers through which an API asks for a wait, and their unit in seconds.
_RETRY_AFTER_HEADERS = (("retry-after-ms", 0.001), ("retry-after", 1.0))
# How much of an API's error message the client shows (it cuts longer ones).
_MESSAGE_ROOM = 195
ANTHROPIC = "anthropic"
BEDROCK = "bedrock"
VERTEX = "vertex"
# Bedrock's names for a request whose credentials it does not accept (all sent as a 403).
_AWS_CREDENTIAL_ERRORS = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "ExpiredTokenException",
        "MissingAuthenticationTokenException",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
    }
)
# The schema of the pre-flight call on Bedrock and Vertex: the run's requests ask for
# structured output, so the check proves the platform takes it for this model.
_CHECK_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}

ANTHROPIC_TERMS = ProviderTerms(
    "the Anthropic API",
    "API key",
    "Check ANTHROPIC_API_KEY in your environment or .env (keys are at "
    "https://console.anthropic.com/settings/keys)",
    "Add credits or a payment method at https://console.anthropic.com/settings/billing",
    "https://status.anthropic.com",
    "ANTHROPIC_BASE_URL",
)
BEDROCK_TERMS = ProviderTerms(
    "Amazon Bedrock",
    "credentials",
    "Check your AWS credentials (AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and AWS_REGION, and that the account has access "
    "to the model in that region",
    "Check the AWS account's billing",
    "https://health.aws.amazon.com",
    "ANTHROPIC_BEDROCK_BASE_URL",
)
VERTEX_TERMS = ProviderTerms(
    "Google Vertex AI",
    "credentials",
    "Check your Google credentials (gcloud auth application-default login, or "
    "GOOGLE_APPLICATION_CREDENTIALS), ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION, and "
    "that the project has access to the model",
    "Check the Google Cloud project's billing",
    "https://status.cloud.google.com",
    "ANTHROPIC_VERTEX_BASE_URL",
)


def messages_body(request: ModelRequest, model_id: str, *, cache_system: bool) -> dict[str, Any]:
    """The Messages API body of ``request`` (the SDK's ``messages.create`` keyword arguments).

    No sampling parameters: API version 2026-10-21 rejects them. With ``cache_system`` the
    static system prompt is sent as a text block marked for prompt caching.
    """
    system: str | list[dict[str, Any]] = request.system
    if cache_system:
        system = [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]
    return {
        "model": model_id,
        "max_tokens": request.max_tokens,
        "system": system,
        "messages": [{"role": "user", "content": request.user}],
        "output_config": {"format": {"type": "json_schema", "schema": dict(request.schema)}},
    }


def token_count(value: Any, name: str) -> int:
    """A usage count as reported, checked: a whole number from 0 to ``MAX_TOKENS_PER_CALL``."""
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= MAX_TOKENS_PER_CALL:
        raise ApiError(MALFORMED, f"its usage has an impossible {name}")
    return value


def read_message(message: Any) -> Reply:
    """The stop reason, text and usage of a Messages reply, or ``ApiError(MALFORMED)``.

    The SDK hands back whatever a 200 held (an HTML page comes back as a string, a body of the
    wrong shape as a message of ``None`` fields), so nothing is trusted until checked here.
    """
    if not isinstance(message, Message):
        raise ApiError(MALFORMED, "not a message")
    content = message.content
    if not isinstance(content, list):
        raise ApiError(MALFORMED, "no content")
    usage = message.usage
    if usage is None or usage.input_tokens is None or usage.output_tokens is None:
        raise ApiError(MALFORMED, "no usage")
    counted = TokenUsage(
        token_count(usage.input_tokens, "input token count"),
        token_count(usage.output_tokens, "output token count"),
        token_count(usage.cache_creation_input_tokens, "cache write count"),
        token_count(usage.cache_read_input_tokens, "cache read count"),
    )
    stop_reason = message.stop_reason if isinstance(message.stop_reason, str) else None
    text = "".join(
        block.text
        for block in content
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)
    )
    return Reply(stop_reason, text, counted)


def _header_seconds(headers: httpx2.Headers, name: str, scale: float) -> float | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        seconds = float(value) * scale
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """The wait an API asked for, in seconds (``retry-after-ms`` or ``retry-after``; an HTTP
    date is left to the capped backoff)."""
    for name, scale in _RETRY_AFTER_HEADERS:
        seconds = _header_seconds(headers, name, scale)
        if seconds is not None:
            return seconds
    return None


def api_error(error: Exception, platform: str = ANTHROPIC, access_help: str = "") -> ApiError:
    """An ``anthropic`` SDK exception (or a body it could not decode) as an ``ApiError``;
    ``access_help`` is the platform's fix for a model the credentials may not use (403)."""
    if isinstance(error, anthropic.APITimeoutError):
        return ApiError(TIMEOUT, "the API did not answer in time")
    if isinstance(error, anthropic.APIConnectionError):
        return ApiError(CONNECTION, "the connection to the API failed")
    if isinstance(error, anthropic.APIStatusError):
        headers = error.response.headers
        status, error_type, message = _platform_status(error, platform)
        message = " ".join(message.split())
        if status == 403 and access_help:
            room = _MESSAGE_ROOM - len(access_help) - 2
            message = f"{message[:room].rstrip('.')}. {access_help}" if message else access_help
        return ApiError(
            STATUS,
            message,
            status=status,
            error_type=error_type,
            retry_after=retry_after_seconds(headers),
            should_retry=headers.get("x-should-retry"),
        )
    return ApiError(MALFORMED, f"body unreadable: {type(error).__name__}")


def _platform_status(error: anthropic.APIStatusError, platform: str) -> tuple[int, str | None, str]:
    """The status, error type and message of an error reply, in the Anthropic API's terms."""
    status, error_type, message = error.status_code, error.type, error.api_message or ""
    body = error.body if isinstance(error.body, dict) else {}
    if platform == BEDROCK:
        message = message or str(body.get("message") or body.get("Message") or "")
        named = error.response.headers.get("x-amzn-errortype", "").split(":")[0]
        error_type = error_type or named or None
        if named in _AWS_CREDENTIAL_ERRORS:
            status = 401  # Bedrock answers a bad key or signature with a 403
        elif named == "ValidationException" and "model identifier" in message.lower():
            status = 404  # Bedrock's answer to a model id it does not know
    elif platform == VERTEX and error_type is None:
        google_error = body.get("error")
        if isinstance(google_error, dict) and isinstance(google_error.get("status"), str):
            error_type = google_error["status"]  # PERMISSION_DENIED, RESOURCE_EXHAUSTED...
    return status, error_type, message


@dataclass(frozen=True)
class CredentialErrors:
    """What a platform's credential library raises from inside an SDK call, and which of it
    means its token endpoint was out of reach (besides the SDK's own ``RuntimeError`` when it
    finds no credentials)."""

    raised: tuple[type[Exception], ...] = ()
    unreachable: tuple[type[Exception], ...] = ()

    def api_error(self, error: Exception) -> ApiError:
        """Out of reach: a connection failure; anything else: a rejected credential (401)."""
        message = " ".join(str(error).split())[:_MESSAGE_ROOM]
        if isinstance(error, self.unreachable):
            return ApiError(CONNECTION, f"the credentials could not be refreshed: {message}")
        return ApiError(STATUS, message, status=401, error_type="authentication_error")


def credential_errors(platform: str) -> CredentialErrors:
    """The credential library's errors of ``platform`` (none for the Anthropic API)."""
    if platform == BEDROCK:
        try:
            from botocore.exceptions import BotoCoreError
            from botocore.exceptions import ConnectionError as AwsConnectionError
        except ImportError:  # a Bedrock API key needs no boto3
            return CredentialErrors((RuntimeError,))
        return CredentialErrors((BotoCoreError, RuntimeError), (AwsConnectionError,))
    if platform == VERTEX:
        from google.auth.exceptions import GoogleAuthError, TransportError

        return CredentialErrors((GoogleAuthError, RuntimeError), (TransportError,))
    return CredentialErrors()


class _DeadlineStream(httpx2.SyncByteStream):
    """A response body that raises ``ReadTimeout`` once the request's deadline has passed."""

    def __init__(self, stream: httpx2.SyncByteStream, deadline: float) -> None:
        self._stream = stream
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout("the reply did not arrive within the deadline")
            yield chunk

    def close(self) -> None:
        self._stream.close()


def deadline_hooks(total_seconds: float) -> dict[str, list[Any]]:
    """httpx event hooks that stamp each request with a deadline and hold its body to it."""

    def stamp(request: httpx2.Request) -> None:
        request.extensions[_DEADLINE] = time.monotonic() + total_seconds

    def hold(response: httpx2.Response) -> None:
        deadline = response.request.extensions.get(_DEADLINE)
        if isinstance(deadline, float) and isinstance(response.stream, httpx2.SyncByteStream):
            response.stream = _DeadlineStream(response.stream, deadline)

    return {"request": [stamp], "response": [hold]}


class AnthropicTransport:
    """The SDK client of one of Claude's platforms, with one log line per HTTP attempt."""

    def __init__(
        self,
        api_key: str | None,
        timeout_seconds: float,
        *,
        platform: str = "anthropic",
    ) -> None:
        common: dict[str, Any] = {
            "max_retries": 0,
            "timeout": timeout_seconds,
            "middleware": [_log_attempt],
            "http_client": anthropic.DefaultHttpxClient(
                timeout=timeout_seconds, event_hooks=deadline_hooks(timeout_seconds)
            ),
        }
        self.platform = platform
        self.supports_batches = platform == ANTHROPIC
        self.supports_token_counting = platform in (ANTHROPIC, VERTEX)
        self._credential_errors = credential_errors(platform)
        self._access_help = ""
        self._sdk: Any
        if platform == BEDROCK:
            # ``api_key`` is the Anthropic API's key: never sent to AWS. The SDK reads
            # AWS_BEARER_TOKEN_BEDROCK, else signs with what boto3 finds.
            self.terms = BEDROCK_TERMS
            self._sdk = anthropic.AnthropicBedrock(**common)
            self._access_help = (
                "Request access to it under Model access in the Amazon Bedrock console for "
                f"{self._sdk.aws_region}"
            )
        elif platform == VERTEX:
            self.terms = VERTEX_TERMS
            self._sdk = anthropic.AnthropicVertex(**common)
            self._access_help = (
                f"Enable it in Vertex AI Model Garden for project {self._sdk.project_id} in "
                f"{self._sdk.region} and grant roles/aiplatform.user"
            )
        else:
            # The SDK reads ANTHROPIC_BASE_URL itself; the key goes out as a Bearer token.
            self.terms = ANTHROPIC_TERMS
            self._sdk = anthropic.Anthropic(api_key=api_key, **common)

    def close(self) -> None:
        """Release the HTTP connections."""
        self._sdk.close()

    def output_note(self) -> str | None:
        return None  # always the API's own JSON schema (output_config)

    @property
    def base_url(self) -> str:
        return str(self._sdk.base_url)

    def _calling(self, action: Any) -> Any:
        """``action()`` with the SDK's errors (and bodies it cannot decode), and the platform's
        credential failures, as ``ApiError``."""
        try:
            return action()
        except (anthropic.APIError, ValueError) as error:
            raise api_error(error, self.platform, self._access_help) from error
        except self._credential_errors.raised as error:
            raise self._credential_errors.api_error(error) from error

    def send(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> Reply:
        body = messages_body(request, model_id, cache_system=cache_system)
        return read_message(self._calling(lambda: self._sdk.messages.create(**body)))

    def check_model(self, model_id: str) -> ModelFacts:
        """``GET /v1/models/{model_id}`` (free): proves the key, the model and the access.
        Bedrock and Vertex have no such endpoint: a one-token request proves them instead."""
        if self.platform != ANTHROPIC:
            return self._check_by_a_call(model_id)
        info = self._calling(lambda: self._sdk.models.retrieve(model_id))
        window = info.max_input_tokens
        return ModelFacts(
            info.id,
            info.display_name or "",
            window if isinstance(window, int) and window > 0 else None,
            info.lifecycle,
            info.retires_at,
        )

    def _check_by_a_call(self, model_id: str) -> ModelFacts:
        """A one-token call (billed: a few tokens) shaped as the run's calls are (structured
        output): proves the credentials, the access to the model there and the output format."""
        body = {
            "model": model_id,
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "Reply with OK."}],
            "output_config": {"format": {"type": "json_schema", "schema": _CHECK_SCHEMA}},
        }
        read_message(self._calling(lambda: self._sdk.messages.create(**body)))
        return ModelFacts(model_id)

    def count_tokens(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> int:
        """``POST /v1/messages/count_tokens`` (Vertex: ``count-tokens:rawPredict``; free): the
        input tokens of a request."""
        if not self.supports_token_counting:
            raise ApiError(STATUS, f"{self.terms.name} has no token-counting endpoint", status=400)
        body = messages_body(request, model_id, cache_system=cache_system)
        counted = {key: value for key, value in body.items() if key != "max_tokens"}
        return self._calling(lambda: self._sdk.messages.count_tokens(**counted)).input_tokens

    # -- Message Batches (the Anthropic API only) -----------------------------------------------

    def create_batch(self, requests: Sequence[Mapping[str, Any]]) -> MessageBatch:
        """A Message Batch of ``{"custom_id", "params"}`` requests."""
        return self._calling(lambda: self._sdk.messages.batches.create(requests=list(requests)))

    def retrieve_batch(self, batch_id: str) -> MessageBatch:
        return self._calling(lambda: self._sdk.messages.batches.retrieve(batch_id))

    def batch_results(self, batch_id: str) -> list[MessageBatchIndividualResponse]:
        return self._calling(lambda: list(self._sdk.messages.batches.results(batch_id)))

    def batches_created_since(self, since: datetime) -> list[MessageBatch]:
        """The workspace's batches created at or after ``since``, newest first."""

        def listed() -> list[MessageBatch]:
            found: list[MessageBatch] = []
            for batch in self._sdk.messages.batches.list(limit=_BATCH_PAGE):
                if batch.created_at < since:
                    break  # listed newest first: the rest are older
                found.append(batch)
            return found

        return self._calling(listed)


def _log_attempt(
    request: anthropic.APIRequest, call_next: anthropic.CallNext
) -> anthropic.APIResponse[Any]:
    """SDK middleware: one debug-log line per HTTP attempt (never its headers or body)."""
    started = time.monotonic()
    try:
        response = call_next(request)
    except anthropic.APIConnectionError as error:
        logger.info(
            "HTTP %s %s failed after %.2f s: %s (did not reach the API)",
            request.method.upper(),
            request.url,
            time.monotonic() - started,
            type(error).__name__,
        )
        raise
    logger.debug(
        "HTTP %s %s -> %d in %.2f s (request-id %s)",
        request.method.upper(),
        request.url,
        response.status_code,
        time.monotonic() - started,
        response.headers.get("request-id", "-"),
    )
    return response
