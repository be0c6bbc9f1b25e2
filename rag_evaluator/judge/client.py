"""The single seam to the model: every request of every family goes through ``ModelClient``.

It owns, for direct calls and Message Batch results alike:

- retry classification, in one function (``classify_failure``): transient (429, 529, 5xx,
  408/409, network, timeout), tied to the request (unusable output, refusal, other 4xx), or
  fatal (bad key 401, no access 403, unknown model 404, billing 402);
- the retry loop: transient failures are retried ``max_retries`` times with capped
  exponential backoff and jitter, never sooner than the API's ``retry-after`` (which also
  pauses every other worker, through the ``CallLimiter``); a request whose answer is unusable
  is asked again until ``max_calls_per_question`` calls have failed that way;
- structured output (a JSON schema per request) and reading the reply;
- usage and cost accounting per call (batch and cache rates included), and the ``--max-cost``
  cap (``SpendingCap``);
- the free pre-flight check of the key and model, and token counting.

It is safe to call from several threads at once.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from rag_evaluator.core.cost import caches_system_prompt, call_cost, reserved_call_usd
from rag_evaluator.core.models import ModelInfo
from rag_evaluator.core.records import TokenUsage
from rag_evaluator.core.requests import (
    CallOutcome,
    FailureKind,
    ModelRequest,
    ReplyError,
    read_reply,
    request_params,
    too_long_reason,
)
from rag_evaluator.errors import ConfigError, JudgeFatalError
from rag_evaluator.judge.limits import CallLimiter, SpendingCap
from rag_evaluator.judge.transport import Transport

logger = logging.getLogger(__name__)

API_KEY_HELP = (
    "Check ANTHROPIC_API_KEY in your environment or .env "
    "(keys are at https://console.anthropic.com/settings/keys)"
)
BILLING_HELP = (
    "Add credits or a payment method at https://console.anthropic.com/settings/billing, "
    "then run the same command again to resume"
)
_API_MESSAGE_LIMIT = 200
# The headers through which the API asks for a wait, and their unit in seconds.
_RETRY_AFTER_HEADERS = (("retry-after-ms", 0.001), ("retry-after", 1.0))
_THROTTLE_STATUSES = (429, 529)


@dataclass(frozen=True)
class ClientSettings:
    """How the client calls the model; the defaults are the command line's defaults."""

    model: ModelInfo
    max_retries: int = 6  # retries of a transient failure, per request
    max_calls_per_question: int = 3  # calls an unusable answer may use up, per request
    backoff_base_seconds: float = 1.0  # first wait of the retry loop, doubled each time
    backoff_max_seconds: float = 60.0  # cap on any wait, retry-after included
    batch: bool = False  # calls are priced at the Message Batches rate
    prompt_caching: bool = True  # mark long system prompts for caching


@dataclass(frozen=True)
class Failure:
    """A classified failure: its kind, a short reason (the fix, when fatal), how to retry."""

    kind: FailureKind
    reason: str
    retry_after_seconds: float | None = None
    throttled: bool = False  # 429 / 529: the whole run should slow down
    reached_api: bool = True  # an HTTP response came back (it counts as a call)
    retry: bool = True  # False when the API said x-should-retry: false


def _api_message(error: anthropic.APIStatusError) -> str:
    message = error.api_message or ""
    message = " ".join(message.split())
    if len(message) > _API_MESSAGE_LIMIT:
        message = message[: _API_MESSAGE_LIMIT - 3] + "..."
    return message


def _header_seconds(headers: httpx2.Headers, name: str, scale: float) -> float | None:
    """A wait header in seconds; ``None`` when absent, negative or an HTTP date (rare: the
    capped backoff covers those)."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        seconds = float(value) * scale
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """The wait the API asked for, in seconds (``retry-after-ms`` or ``retry-after``)."""
    for name, scale in _RETRY_AFTER_HEADERS:
        seconds = _header_seconds(headers, name, scale)
        if seconds is not None:
            return seconds
    return None


def fatal_status_failure(
    status: int, error_type: str | None, detail: str, model_id: str
) -> Failure | None:
    """The fatal meaning of an error status (401, 403, 404, 402/billing), else ``None``."""
    suffix = f": {detail}" if detail else ""
    if status == 402 or error_type == "billing_error":
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API refused to bill this request ({status}{suffix}). " + BILLING_HELP,
        )
    if status == 401:
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API rejected the API key (401{suffix}). {API_KEY_HELP}",
        )
    if status == 403:
        return Failure(
            FailureKind.FATAL,
            f"The API key may not use model {model_id} (403{suffix}). Use a key from a "
            "workspace with access to it, or choose another model with --model",
        )
    if status == 404:
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API does not know model {model_id} (404{suffix}). Use --model "
            "sonnet, haiku or opus, or a current full model id",
        )
    return None


def classify_failure(error: Exception, model_id: str) -> Failure:
    """Decide whether a failed call is transient, tied to the request, or fatal.

    The only place that makes this decision; the retry loop just obeys it.
    """
    if isinstance(error, ReplyError):
        return Failure(FailureKind.QUESTION, error.message)
    if isinstance(error, anthropic.APITimeoutError):
        return Failure(FailureKind.TRANSIENT, "the API did not answer in time", reached_api=False)
    if isinstance(error, anthropic.APIConnectionError):
        return Failure(FailureKind.TRANSIENT, "the connection to the API failed", reached_api=False)
    if isinstance(error, anthropic.APIStatusError):
        fatal = fatal_status_failure(error.status_code, error.type, _api_message(error), model_id)
        if fatal is not None:
            return fatal
        status = error.status_code
        retry_after = retry_after_seconds(error.response.headers)
        should_retry = error.response.headers.get("x-should-retry")
        if status == 429:
            reason = "API rate limit reached (429)"
        elif status == 529:
            reason = "API overloaded (529)"
        elif status >= 500 or status in (408, 409):
            reason = f"API error ({status})"
        else:
            detail = _api_message(error) or f"status {status}"
            if should_retry == "true":
                return Failure(FailureKind.TRANSIENT, f"request rejected: {detail}", retry_after)
            return Failure(FailureKind.QUESTION, f"request rejected: {detail}")
        if should_retry == "false":
            return Failure(FailureKind.QUESTION, reason, retry=False)
        return Failure(
            FailureKind.TRANSIENT, reason, retry_after, throttled=status in _THROTTLE_STATUSES
        )
    return Failure(FailureKind.QUESTION, f"unexpected reply from the API: {type(error).__name__}")


def usage_of(message: Message) -> TokenUsage:
    usage = message.usage
    return TokenUsage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )


def message_text(message: Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


@dataclass
class _Attempts:
    """What the calls of one request have added up to so far."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    calls: int = 0
    transient_failures: int = 0
    unusable_answers: int = 0


class ModelClient:
    """Sends requests to the model, one outcome per request, with retries and accounting."""

    def __init__(
        self,
        transport: Transport,
        settings: ClientSettings,
        *,
        limiter: CallLimiter | None = None,
        cap: SpendingCap | None = None,
        api_key: str = "",
        jitter: random.Random | None = None,
    ) -> None:
        self.transport = transport
        self.settings = settings
        self.limiter = limiter or CallLimiter()
        self.cap = cap or SpendingCap(None)
        self.context_window_tokens = settings.model.context_window_tokens
        self._api_key = api_key
        self._jitter = jitter or random.Random()

    @property
    def model_id(self) -> str:
        return self.settings.model.model_id

    def close(self) -> None:
        self.transport.close()

    # -- direct calls -------------------------------------------------------------------------

    def params(self, request: ModelRequest) -> dict[str, Any]:
        """The API body of ``request`` for this model (the same for a direct call and a batch)."""
        cache = self.settings.prompt_caching and caches_system_prompt(
            request.system, self.settings.model
        )
        return request_params(request, self.model_id, cache_system=cache)

    def estimated_call_usd(self, request: ModelRequest) -> float:
        """A call's likely cost, reserved against ``--max-cost`` while it is in flight."""
        return reserved_call_usd(request, self.settings.model, batch=self.settings.batch)

    def call(self, request: ModelRequest, *, label: str = "") -> CallOutcome:
        """One usable answer to ``request``, or an outcome saying why there is none.

        Raises ``JudgeFatalError`` (bad key, no access, unknown model, billing),
        ``BudgetExhaustedError`` (``--max-cost``) and ``RunStoppedError`` (the run is stopping);
        never raises for a transient or per-request failure.
        """
        where = f"{label}: " if label else ""
        too_long = too_long_reason(request, self.context_window_tokens)
        if too_long is not None:
            return CallOutcome(None, None, too_long, FailureKind.QUESTION)
        params = self.params(request)
        attempts = _Attempts()
        while True:
            reservation = self.cap.reserve(self.estimated_call_usd(request))
            cost = 0.0
            try:
                self.limiter.acquire()
            except BaseException:
                self.cap.settle(reservation, 0.0)
                raise
            failure: Failure | None = None
            try:
                message = self.transport.create_message(params)
            except anthropic.APIError as error:
                failure = classify_failure(error, self.model_id)
                self.limiter.release(throttled=failure.throttled, retry_after=self._capped(failure))
            else:
                self.limiter.release()
                usage = usage_of(message)
                cost = call_cost(usage, self.settings.model, batch=self.settings.batch)
                attempts.usage = attempts.usage + usage
                attempts.cost_usd += cost
            finally:
                self.cap.settle(reservation, cost)
            if failure is None:
                attempts.calls += 1
                logger.debug(
                    "%s%s reply: stop_reason=%s tokens %d in / %d out",
                    where,
                    request.purpose,
                    message.stop_reason,
                    message.usage.input_tokens,
                    message.usage.output_tokens,
                )
                try:
                    payload = read_reply(
                        message.stop_reason, message_text(message), request.max_tokens
                    )
                    value = request.parse(payload)
                except ReplyError as error:
                    failure = classify_failure(error, self.model_id)
                else:
                    return CallOutcome(
                        value,
                        payload,
                        None,
                        None,
                        attempts.usage,
                        attempts.calls,
                        attempts.cost_usd,
                    )
            elif failure.reached_api:
                attempts.calls += 1
            outcome = self._after_failure(request, failure, attempts, where)
            if outcome is not None:
                return outcome

    def _after_failure(
        self, request: ModelRequest, failure: Failure, attempts: _Attempts, where: str
    ) -> CallOutcome | None:
        """Decide what a failed attempt leads to: a final outcome, or (``None``) another try."""
        settings = self.settings
        # The API's own message is quoted in some reasons; should it echo the key, the
        # key must not reach the terminal, the log, the checkpoint or the results.
        reason = self._redacted(failure.reason)
        if failure.kind is FailureKind.FATAL:
            # The CLI prints the raised error; the log alone gets this record.
            logger.error("model calls stopped: %s", reason, extra={"terminal": False})
            raise JudgeFatalError(reason)
        if failure.kind is FailureKind.TRANSIENT:
            attempts.transient_failures += 1
            if attempts.transient_failures > settings.max_retries:
                return self._gave_up(reason, FailureKind.TRANSIENT, attempts, where)
            wait = self._backoff(attempts.transient_failures, failure.retry_after_seconds)
            logger.warning(
                "%s%s; retrying in %.1f s (retry %d of %d)",
                where,
                reason,
                wait,
                attempts.transient_failures,
                settings.max_retries,
            )
            self.limiter.wait(wait)
            return None
        attempts.unusable_answers += 1
        if not failure.retry or attempts.unusable_answers >= settings.max_calls_per_question:
            return self._gave_up(reason, FailureKind.QUESTION, attempts, where)
        logger.warning(
            "%s%s; asking again (call %d of at most %d)",
            where,
            reason,
            attempts.unusable_answers + 1,
            settings.max_calls_per_question,
        )
        return None

    def _gave_up(
        self, reason: str, kind: FailureKind, attempts: _Attempts, where: str
    ) -> CallOutcome:
        calls = attempts.calls
        tries = attempts.transient_failures + attempts.unusable_answers
        if kind is FailureKind.TRANSIENT:
            error = f"{reason}; gave up after {tries} attempt{'s' if tries != 1 else ''}"
        else:
            error = f"{reason}; gave up after {calls} call{'s' if calls != 1 else ''}"
        logger.info("%sleft unscored: %s", where, error)
        return CallOutcome(None, None, error, kind, attempts.usage, calls, attempts.cost_usd)

    def _backoff(self, retry_number: int, retry_after: float | None) -> float:
        """Capped exponential backoff with jitter, never shorter than the API's retry-after."""
        settings = self.settings
        exponential = settings.backoff_base_seconds * 2 ** (retry_number - 1)
        wait = min(exponential, settings.backoff_max_seconds) * self._jitter.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, settings.backoff_max_seconds)

    def _capped(self, failure: Failure) -> float | None:
        """The API's retry-after, never longer than the longest wait of the retry loop."""
        if failure.retry_after_seconds is None:
            return None
        return min(failure.retry_after_seconds, self.settings.backoff_max_seconds)

    def _redacted(self, text: str) -> str:
        if len(self._api_key) >= 8:
            return text.replace(self._api_key, "[REDACTED]")
        return text

    # -- batch results ------------------------------------------------------------------------

    def read_batch_message(
        self, request: ModelRequest, message: Message
    ) -> tuple[CallOutcome, bool]:
        """A batch's ``succeeded`` message as an outcome; the flag says whether it was usable."""
        usage = usage_of(message)
        cost = call_cost(usage, self.settings.model, batch=True)
        try:
            payload = read_reply(message.stop_reason, message_text(message), request.max_tokens)
            value = request.parse(payload)
        except ReplyError as error:
            reason = self._redacted(error.message)
            return CallOutcome(None, None, reason, FailureKind.QUESTION, usage, 1, cost), False
        return CallOutcome(value, payload, None, None, usage, 1, cost), True

    # -- free requests ------------------------------------------------------------------------

    def check_model(self) -> int | None:
        """Pre-flight: prove the key, the model and the access with ``GET /v1/models/{id}``.

        Returns the model's context window when the API states it. Raises ``JudgeFatalError``
        with the usual one-line fixes, and ``ConfigError`` when the API cannot be reached.
        """
        try:
            info = self.transport.retrieve_model(self.model_id)
        except anthropic.APIConnectionError as error:
            raise ConfigError(
                f"Could not reach the Anthropic API at {self.transport.base_url} to check the "
                f"key and model ({type(error).__name__}). Check your network (and "
                "ANTHROPIC_BASE_URL if you set it), then run the same command again"
            ) from error
        except anthropic.APIStatusError as error:
            failure = classify_failure(error, self.model_id)
            if failure.kind is FailureKind.FATAL:
                raise JudgeFatalError(self._redacted(failure.reason)) from error
            raise ConfigError(
                f"The Anthropic API could not check model {self.model_id} "
                f"({self._redacted(failure.reason)}). Try again in a moment; "
                "https://status.anthropic.com shows outages"
            ) from error
        if info.lifecycle == "retired":
            raise JudgeFatalError(
                f"Model {self.model_id} is retired. Use --model sonnet, haiku or opus, or a "
                "current full model id"
            )
        if info.lifecycle == "deprecated":
            logger.warning(
                "Model %s is deprecated%s; consider a current model",
                self.model_id,
                f" and retires on {info.retires_at:%Y-%m-%d}" if info.retires_at else "",
            )
        if info.max_input_tokens:
            self.context_window_tokens = info.max_input_tokens
        logger.info(
            "pre-flight: model %s (%s) available, context window %s tokens",
            info.id,
            info.display_name,
            info.max_input_tokens or "not stated",
        )
        return info.max_input_tokens

    def count_input_tokens(self, request: ModelRequest) -> int:
        """The request's input tokens by the API's free count_tokens endpoint (with retries)."""
        params = self.params(request)
        transient = 0
        while True:
            self.limiter.acquire()
            try:
                count = self.transport.count_tokens(params)
            except anthropic.APIError as error:
                failure = classify_failure(error, self.model_id)
                self.limiter.release(throttled=failure.throttled, retry_after=self._capped(failure))
                if failure.kind is FailureKind.FATAL:
                    raise JudgeFatalError(self._redacted(failure.reason)) from error
                transient += 1
                if failure.kind is FailureKind.QUESTION or transient > self.settings.max_retries:
                    raise ConfigError(
                        f"Counting tokens failed ({self._redacted(failure.reason)}). Run "
                        "without --exact-estimate to use the local estimate"
                    ) from error
                self.limiter.wait(self._backoff(transient, failure.retry_after_seconds))
            else:
                self.limiter.release()
                return count
