"""The one place that talks to the Anthropic API: the SDK client and the endpoints rag-eval uses.

Stateless besides the SDK's connection pool: it sends what it is given and returns what came
back, raising the SDK's errors. Retrying, pacing, accounting and interpretation belong to
``llm/client.py``; the batch flow to ``llm/batches.py``. The SDK's own retries are off
(``max_retries=0``): one retry loop, in the client, decides everything and honours
``retry-after`` for the whole run.

``--timeout`` is a deadline for the whole request: the HTTP library's timeout applies to each
read, so a reply that trickles in a byte at a time would otherwise never time out. Each
response's body is read through ``_DeadlineStream``, which gives up (as a read timeout) once
the request is older than the timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse

logger = logging.getLogger(__name__)

# Where a request carries its deadline (an httpx request extension; httpcore ignores it).
_DEADLINE = "rag_eval_deadline"
# Batches listed per page when looking for one created by a stopped run.
_BATCH_PAGE = 100


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


def _deadline_hooks(total_seconds: float) -> dict[str, list[Any]]:
    """httpx event hooks that stamp each request with a deadline and hold its body to it."""

    def stamp(request: httpx2.Request) -> None:
        request.extensions[_DEADLINE] = time.monotonic() + total_seconds

    def hold(response: httpx2.Response) -> None:
        deadline = response.request.extensions.get(_DEADLINE)
        if isinstance(deadline, float) and isinstance(response.stream, httpx2.SyncByteStream):
            response.stream = _DeadlineStream(response.stream, deadline)

    return {"request": [stamp], "response": [hold]}


class Transport:
    """The SDK client, with one log line per HTTP attempt."""

    def __init__(self, api_key: str, timeout_seconds: float) -> None:
        # The SDK reads ANTHROPIC_BASE_URL itself; the key goes out as a Bearer token. Its
        # default HTTP client keeps proxies from the environment; the hooks add the deadline.
        self._sdk = anthropic.Anthropic(
            api_key=api_key,
            max_retries=0,
            timeout=timeout_seconds,
            middleware=[_log_attempt],
            http_client=anthropic.DefaultHttpxClient(
                timeout=timeout_seconds, event_hooks=_deadline_hooks(timeout_seconds)
            ),
        )

    def close(self) -> None:
        """Release the HTTP connections."""
        self._sdk.close()

    @property
    def base_url(self) -> str:
        return str(self._sdk.base_url)

    def create_message(self, params: Mapping[str, Any]) -> Message:
        return self._sdk.messages.create(**params)

    def retrieve_model(self, model_id: str) -> anthropic.types.ModelInfo:
        """``GET /v1/models/{model_id}``: free; proves the key, the model and the access."""
        return self._sdk.models.retrieve(model_id)

    def count_tokens(self, params: Mapping[str, Any]) -> int:
        """``POST /v1/messages/count_tokens`` (free): the input tokens of a request."""
        counted = {key: value for key, value in params.items() if key != "max_tokens"}
        return self._sdk.messages.count_tokens(**counted).input_tokens

    def create_batch(self, requests: Sequence[Mapping[str, Any]]) -> MessageBatch:
        """A Message Batch of ``{"custom_id", "params"}`` requests."""
        return self._sdk.messages.batches.create(requests=list(requests))  # type: ignore[arg-type]

    def retrieve_batch(self, batch_id: str) -> MessageBatch:
        return self._sdk.messages.batches.retrieve(batch_id)

    def batch_results(self, batch_id: str) -> Iterator[MessageBatchIndividualResponse]:
        return iter(self._sdk.messages.batches.results(batch_id))

    def batches_created_since(self, since: datetime) -> list[MessageBatch]:
        """The workspace's batches created at or after ``since``, newest first."""
        found: list[MessageBatch] = []
        for batch in self._sdk.messages.batches.list(limit=_BATCH_PAGE):
            if batch.created_at < since:
                break  # listed newest first: the rest are older
            found.append(batch)
        return found


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
