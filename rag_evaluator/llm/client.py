"""The single seam to the models: every request of every family goes through ``ModelClient``.

It owns, whatever the provider (the transport of ``llm/providers`` turns each SDK's replies
and errors into ``Reply`` and ``ApiError``), for direct calls and Message Batches alike:

- retry classification, in one function (``classify_failure``, with ``failure_for_status``
  shared by HTTP errors and errored batch entries): transient (429, 529, 5xx, 408/409,
  network, timeout, a reply that is not a valid message), tied to the request (unusable
  output, refusal, other 4xx), or fatal (bad credentials 401, no access 403, unknown model
  404, billing 402);
- one retry policy (``RetryPolicy``) for every request: direct calls, the pre-flight check,
  token counting and each Message Batches request; ``retry-after`` also pauses every other
  worker, through the ``CallLimiter``; a request whose answer is unusable is asked again
  until ``max_calls_per_question`` calls have failed that way;
- reading the structured answer of a reply;
- usage and cost accounting per call (batch and cache rates included), and the ``--max-cost``
  cap (``SpendingCap``);
- redaction: every text that came from the API passes ``redacted`` before it goes anywhere,
  so a message echoing the key never reaches the terminal, the log or a file;
- the pre-flight check of the credentials and model, and token counting.

It is safe to call from several threads at once.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from rag_evaluator.errors import (
    BatchMissingError,
    BudgetExhaustedError,
    ConfigError,
    JudgeFatalError,
    RunStoppedError,
)
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.cost import caches_system_prompt, call_cost, reserved_call_usd
from rag_evaluator.llm.limits import CallLimiter, SpendingCap
from rag_evaluator.llm.models import ModelInfo
from rag_evaluator.llm.providers.base import (
    CONNECTION,
    MALFORMED,
    STATUS,
    TIMEOUT,
    ApiError,
    ModelFacts,
    ModelTransport,
    ProviderTerms,
    Reply,
)
from rag_evaluator.llm.requests import (
    CallOutcome,
    FailureKind,
    ModelRequest,
    ReplyError,
    read_reply,
    too_long_reason,
)
from rag_evaluator.llm.retry import RetryPolicy

logger = logging.getLogger(__name__)

_API_MESSAGE_LIMIT = 200
_THROTTLE_STATUSES = (429, 529)
_REDACTED = "[REDACTED]"
# An errored batch entry names its error by type; the HTTP status that type stands for.
_STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
# How many models a "does not serve this model" message lists.
_MODELS_LISTED = 12

T = TypeVar("T")


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

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.backoff_base_seconds, self.backoff_max_seconds)


@dataclass(frozen=True)
class Failure:
    """A classified failure: its kind, a short reason (the fix, when fatal), how to retry."""

    kind: FailureKind
    reason: str
    retry_after_seconds: float | None = None
    throttled: bool = False  # 429 / 529: the whole run should slow down
    billed: bool = False  # the API answered with a message (an unusable one): it is paid for
    retry: bool = True  # False when the API said x-should-retry: false


@dataclass(frozen=True)
class BatchProgress:
    """How far a Message Batch has got."""

    ended: bool
    finished: int
    total: int


@dataclass(frozen=True)
class BatchInfo:
    """A batch found in the workspace's list: its id, when it was made, how many requests."""

    batch_id: str
    created_at: datetime
    request_count: int
    ended: bool


def fatal_status_failure(
    status: int, error_type: str | None, detail: str, model_id: str, terms: ProviderTerms
) -> Failure | None:
    """The fatal meaning of an error status (401, 403, 404, 402/billing), else ``None``."""
    suffix = f": {detail}" if detail else ""
    if status == 402 or error_type in ("billing_error", "insufficient_quota"):
        return Failure(
            FailureKind.FATAL,
            f"{terms.subject} refused to bill this request ({status}{suffix}). "
            f"{terms.billing_help}, then run the same command again to resume",
        )
    if status == 401:
        return Failure(
            FailureKind.FATAL,
            f"{terms.subject} rejected the {terms.credential} (401{suffix}). "
            f"{terms.credentials_help}",
        )
    if status == 403:
        return Failure(
            FailureKind.FATAL,
            f"The {terms.credential} may not use model {model_id} (403{suffix}). Use "
            f"{terms.credential} with access to it, or choose another model with --model",
        )
    if status == 404:
        return Failure(
            FailureKind.FATAL,
            f"{terms.subject} does not know model {model_id} (404{suffix}). Use --model sonnet, "
            "haiku or opus, a current full model id, or PROVIDER/MODEL",
        )
    return None


def failure_for_status(
    status: int,
    error_type: str | None,
    detail: str,
    model_id: str,
    terms: ProviderTerms,
    *,
    retry_after: float | None = None,
    should_retry: str | None = None,
) -> Failure:
    """What an error status means, for an HTTP error and an errored batch entry alike."""
    fatal = fatal_status_failure(status, error_type, detail, model_id, terms)
    if fatal is not None:
        return fatal
    if status == 429:
        reason = "API rate limit reached (429)"
    elif status == 529:
        reason = "API overloaded (529)"
    elif status >= 500 or status in (408, 409):
        reason = f"API error ({status})"
    else:
        shown = detail or f"status {status}"
        if should_retry == "true":
            return Failure(FailureKind.TRANSIENT, f"request rejected: {shown}", retry_after)
        return Failure(FailureKind.QUESTION, f"request rejected: {shown}")
    if should_retry == "false":
        return Failure(FailureKind.QUESTION, reason, retry=False)
    return Failure(
        FailureKind.TRANSIENT, reason, retry_after, throttled=status in _THROTTLE_STATUSES
    )


def _shortened(message: str) -> str:
    message = " ".join(message.split())
    if len(message) > _API_MESSAGE_LIMIT:
        message = message[: _API_MESSAGE_LIMIT - 3] + "..."
    return message


def classify_failure(error: Exception, model_id: str, terms: ProviderTerms) -> Failure:
    """Decide whether a failed call is transient, tied to the request, or fatal.

    The only place that makes this decision; the retry loops just obey it.
    """
    if isinstance(error, ReplyError):
        return Failure(FailureKind.QUESTION, error.message, billed=True)
    if not isinstance(error, ApiError):
        return Failure(
            FailureKind.TRANSIENT, f"unexpected reply from the API ({type(error).__name__})"
        )
    if error.kind == TIMEOUT:
        return Failure(FailureKind.TRANSIENT, "the API did not answer in time")
    if error.kind == CONNECTION:
        return Failure(FailureKind.TRANSIENT, "the connection to the API failed")
    if error.kind == MALFORMED:
        return Failure(FailureKind.TRANSIENT, f"the API sent a reply that is not valid ({error})")
    detail = _shortened(error.message)
    failure = failure_for_status(
        error.status or 500,
        error.error_type,
        detail,
        model_id,
        terms,
        retry_after=error.retry_after,
        should_retry=error.should_retry,
    )
    if error.status == 404 and error.served_models:
        listed = ", ".join(error.served_models[:_MODELS_LISTED])
        more = " and more" if len(error.served_models) > _MODELS_LISTED else ""
        failure = replace(
            failure,
            reason=f"{terms.subject} does not serve model {model_id} (404). It serves: "
            f"{listed}{more}. Choose one of them with --model",
        )
    return failure


@dataclass
class _Attempts:
    """What the calls of one request have added up to so far."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    calls: int = 0  # billed: the API answered with a message
    retries: int = 0  # times the request was sent again
    transient_failures: int = 0
    unusable_answers: int = 0

    def outcome(self, error: str, kind: FailureKind) -> CallOutcome:
        return CallOutcome(
            None, None, error, kind, self.usage, self.calls, self.cost_usd, self.retries
        )


class ModelClient:
    """Sends requests to one model, one outcome per request, with retries and accounting."""

    def __init__(
        self,
        transport: ModelTransport,
        settings: ClientSettings,
        *,
        limiter: CallLimiter | None = None,
        cap: SpendingCap | None = None,
        api_key: str = "",
        jitter: random.Random | None = None,
    ) -> None:
        self.transport = transport
        self.settings = settings
        self.policy = settings.policy
        self.limiter = limiter or CallLimiter()
        self.cap = cap or SpendingCap(None)
        self.context_window_tokens = settings.model.context_window_tokens
        self._api_key = api_key
        self._jitter = jitter or random.Random()

    @property
    def model(self) -> ModelInfo:
        return self.settings.model

    @property
    def model_id(self) -> str:
        return self.settings.model.model_id

    @property
    def terms(self) -> ProviderTerms:
        return self.transport.terms

    def close(self) -> None:
        self.transport.close()

    # -- direct calls -------------------------------------------------------------------------

    def caches(self, request: ModelRequest) -> bool:
        """Whether ``request``'s system prompt goes out marked for prompt caching."""
        return self.settings.prompt_caching and caches_system_prompt(
            request.system, self.settings.model
        )

    def estimated_call_usd(self, request: ModelRequest) -> float:
        """A call's likely cost, reserved against ``--max-cost`` while it is in flight."""
        return reserved_call_usd(request, self.settings.model, batch=self.settings.batch)

    def call(self, request: ModelRequest, *, label: str = "") -> CallOutcome:
        """One usable answer to ``request``, or an outcome saying why there is none.

        Raises ``JudgeFatalError`` (bad key, no access, unknown model, billing),
        ``BudgetExhaustedError`` (``--max-cost``) and ``RunStoppedError`` (the run is stopping);
        never raises for a transient or per-request failure. A stop, budget or fatal error raised
        after some calls of this request were paid for carries them as ``partial``, so they are
        kept.
        """
        where = f"{label}: " if label else ""
        too_long = too_long_reason(request, self.context_window_tokens)
        if too_long is not None:
            return CallOutcome(None, None, too_long, FailureKind.QUESTION)
        attempts = _Attempts()
        while True:
            try:
                reply, failure = self._attempt(request, attempts)
                if reply is not None:
                    answer = self._parsed(request, reply, attempts, where)
                    if isinstance(answer, CallOutcome):
                        return answer
                    failure = answer
                assert failure is not None
                outcome = self._after_failure(failure, attempts, where)
            except (RunStoppedError, BudgetExhaustedError, JudgeFatalError) as stopped:
                if attempts.calls:
                    stopped.partial = attempts.outcome("stopped", FailureKind.TRANSIENT)
                raise
            if outcome is not None:
                return outcome
            attempts.retries += 1

    def _attempt(
        self, request: ModelRequest, attempts: _Attempts
    ) -> tuple[Reply | None, Failure | None]:
        """One HTTP attempt within the budget and the limiter: the reply, or why there is none.

        The limiter's slot and the budget's reservation are given back whatever happens.
        """
        reservation = self.cap.reserve(self.estimated_call_usd(request))
        cost = 0.0
        try:
            self.limiter.acquire()
            failure: Failure | None = None
            try:
                reply = self.transport.send(
                    request, self.model_id, cache_system=self.caches(request)
                )
            except ApiError as error:
                failure = self._failure(error)
                return None, failure
            finally:
                retry_after = failure.retry_after_seconds if failure else None
                self.limiter.release(
                    throttled=failure is not None and failure.throttled,
                    retry_after=self.policy.capped(retry_after),
                )
            cost = call_cost(reply.usage, self.settings.model, batch=self.settings.batch)
            attempts.usage = attempts.usage + reply.usage
            attempts.cost_usd += cost
            attempts.calls += 1
            return reply, None
        finally:
            self.cap.settle(reservation, cost)

    def _parsed(
        self, request: ModelRequest, reply: Reply, attempts: _Attempts, where: str
    ) -> CallOutcome | Failure:
        """The outcome of a billed reply with its parsed answer, or why it is unusable."""
        logger.debug(
            "%s%s reply: stop_reason=%s tokens %d in / %d out",
            where,
            request.purpose,
            reply.stop_reason,
            reply.usage.input_tokens,
            reply.usage.output_tokens,
        )
        try:
            payload = read_reply(reply.stop_reason, reply.text, request.max_tokens)
            value = request.parse(payload)
        except ReplyError as error:
            return self._failure(error)
        return CallOutcome(
            value,
            payload,
            None,
            None,
            attempts.usage,
            attempts.calls,
            attempts.cost_usd,
            attempts.retries,
        )

    def _after_failure(
        self, failure: Failure, attempts: _Attempts, where: str
    ) -> CallOutcome | None:
        """Decide what a failed attempt leads to: a final outcome, or (``None``) another try."""
        if failure.kind is FailureKind.FATAL:
            # The CLI prints the raised error; the log alone gets this record.
            logger.error("model calls stopped: %s", failure.reason, extra={"terminal": False})
            raise JudgeFatalError(failure.reason)
        if self.limiter.stop.is_set():
            # The run is stopping: no retry, and no warning about one.
            raise RunStoppedError("the run is stopping")
        if failure.kind is FailureKind.TRANSIENT:
            attempts.transient_failures += 1
            if self.policy.gives_up(attempts.transient_failures):
                return self._gave_up(failure.reason, FailureKind.TRANSIENT, attempts, where)
            wait = self.policy.wait_seconds(
                attempts.transient_failures, failure.retry_after_seconds, self._jitter
            )
            logger.warning(
                "%s%s; retrying in %.1f s (retry %d of %d)",
                where,
                failure.reason,
                wait,
                attempts.transient_failures,
                self.policy.max_retries,
            )
            self.limiter.wait(wait)
            return None
        attempts.unusable_answers += 1
        if not failure.retry or attempts.unusable_answers >= self.settings.max_calls_per_question:
            return self._gave_up(failure.reason, FailureKind.QUESTION, attempts, where)
        logger.warning(
            "%s%s; asking again (call %d of at most %d)",
            where,
            failure.reason,
            attempts.unusable_answers + 1,
            self.settings.max_calls_per_question,
        )
        return None

    def _gave_up(
        self, reason: str, kind: FailureKind, attempts: _Attempts, where: str
    ) -> CallOutcome:
        tries = attempts.transient_failures + attempts.unusable_answers
        word = "attempt" if kind is FailureKind.TRANSIENT else "call"
        error = f"{reason}; gave up after {tries} {word}{'s' if tries != 1 else ''}"
        logger.info("%sleft unscored: %s", where, error)
        return attempts.outcome(error, kind)

    def _failure(self, error: Exception) -> Failure:
        """``classify_failure`` with the API's words redacted: the one way API text enters."""
        failure = classify_failure(error, self.model_id, self.terms)
        return replace(failure, reason=self.redacted(failure.reason))

    def redacted(self, text: str) -> str:
        """``text`` with the API key replaced, should the API have echoed it."""
        if len(self._api_key) >= 8 and self._api_key in text:
            return text.replace(self._api_key, _REDACTED)
        return text

    # -- free requests and batches: one retry loop ------------------------------------------

    def retrying(
        self,
        what: str,
        action: Callable[[], T],
        *,
        missing: Callable[[], Exception] | None = None,
        unreachable: Callable[[Failure], Exception] | None = None,
    ) -> T:
        """``action()`` (one request that is not a model call), retried by the policy.

        Fatal failures raise ``JudgeFatalError``; a 404 raises ``missing()`` when given; a
        connection that cannot be made raises ``unreachable(failure)`` at once when given;
        transient failures past the policy's limit, and failures tied to the request, raise
        ``ConfigError`` naming ``what``.
        """
        failures = 0
        while True:
            try:
                return action()
            except ApiError as error:
                if missing is not None and error.kind == STATUS and error.status == 404:
                    raise missing() from error
                failure = self._failure(error)
                if unreachable is not None and error.kind == CONNECTION:
                    raise unreachable(failure) from error
                if failure.kind is FailureKind.FATAL:
                    raise JudgeFatalError(failure.reason) from error
                failures += 1
                if failure.kind is FailureKind.QUESTION or self.policy.gives_up(failures):
                    outages = self.terms.status_page
                    raise ConfigError(
                        f"Could not {what} ({failure.reason}). Try again in a moment"
                        + (f"; {outages} shows outages" if outages else "")
                    ) from error
                wait = self.policy.wait_seconds(failures, failure.retry_after_seconds, self._jitter)
                logger.warning("Could not %s (%s); retrying in %.1f s", what, failure.reason, wait)
                self.limiter.wait(wait)

    def check_model(self) -> int | None:
        """Pre-flight: prove the credentials, the model and the access before anything is
        paid for (free where the provider has a models endpoint).

        Returns the model's context window when the API states it. Raises ``JudgeFatalError``
        with the usual one-line fixes, and ``ConfigError`` when the API cannot be reached
        (at once: nothing is paid yet and the address is likely wrong) or keeps failing.
        """

        def unreachable(failure: Failure) -> ConfigError:
            variable = self.terms.base_url_variable
            return ConfigError(
                f"Could not reach {self.terms.name} at {self.transport.base_url} to check the "
                f"credentials and model ({failure.reason}). Check your network"
                + (f" (and {variable} if you set it)" if variable else "")
                + ", then run the same command again"
            )

        facts = self.retrying(
            f"check model {self.model_id}",
            lambda: self.transport.check_model(self.model_id),
            unreachable=unreachable,
        )
        return self._checked_model(facts)

    def _checked_model(self, facts: ModelFacts) -> int | None:
        if facts.lifecycle == "retired":
            raise JudgeFatalError(
                f"Model {self.model_id} is retired. Use --model sonnet, haiku or opus, or a "
                "current full model id"
            )
        if facts.lifecycle == "deprecated":
            logger.warning(
                "Model %s is deprecated%s; consider a current model",
                self.model_id,
                f" and retires on {facts.retires_at:%Y-%m-%d}" if facts.retires_at else "",
            )
        window = facts.context_window_tokens
        if window is not None:
            self.context_window_tokens = window
        logger.info(
            "pre-flight: model %s (%s) available, context window %s tokens",
            facts.model_id,
            facts.display_name,
            window or "not stated",
        )
        return window

    def count_input_tokens(self, request: ModelRequest) -> int:
        """The request's input tokens by the API's free count_tokens endpoint (with retries).

        Free requests do not wait for ``--delay`` or the calls' concurrency limit.
        """
        try:
            return self.retrying(
                "count tokens",
                lambda: self.transport.count_tokens(
                    request, self.model_id, cache_system=self.caches(request)
                ),
            )
        except ConfigError as error:
            raise ConfigError(
                f"{error.message.split('. Try again')[0]}. Run without --exact-estimate to use "
                "the local estimate"
            ) from error

    # -- Message Batches (the Anthropic API only) ----------------------------------------------

    def batch_entry(self, custom_id: str, request: ModelRequest) -> dict[str, Any]:
        """The batch entry of ``request``: the same body as a direct call."""
        from rag_evaluator.llm.providers.anthropic import messages_body

        body = messages_body(request, self.model_id, cache_system=self.caches(request))
        return {"custom_id": custom_id, "params": body}

    def create_batch(self, entries: list[dict[str, Any]]) -> str:
        """Create a Message Batch of ``{"custom_id", "params"}`` entries; its id."""
        transport: Any = self.transport
        batch = self.retrying("create a Message Batch", lambda: transport.create_batch(entries))
        return batch.id

    def batch_progress(self, batch_id: str) -> BatchProgress:
        """How far the batch has got; ``BatchMissingError`` when the API no longer knows it."""
        transport: Any = self.transport
        batch = self.retrying(
            f"check Message Batch {batch_id}",
            lambda: transport.retrieve_batch(batch_id),
            missing=lambda: BatchMissingError(batch_id),
        )
        counts = batch.request_counts
        finished = counts.succeeded + counts.errored + counts.canceled + counts.expired
        return BatchProgress(
            batch.processing_status == "ended", finished, finished + counts.processing
        )

    def batch_results(self, batch_id: str) -> list[Any]:
        """The results of an ended batch (SDK entries: ``custom_id`` and ``result``)."""
        transport: Any = self.transport
        return self.retrying(
            f"read the results of Message Batch {batch_id}",
            lambda: transport.batch_results(batch_id),
            missing=lambda: BatchMissingError(batch_id),
        )

    def batches_created_since(self, since: datetime) -> list[BatchInfo]:
        """The workspace's batches created at or after ``since``, newest first."""
        transport: Any = self.transport
        found = self.retrying(
            "list the Message Batches", lambda: transport.batches_created_since(since)
        )
        infos = []
        for batch in found:
            counts = batch.request_counts
            total = (
                counts.processing
                + counts.succeeded
                + counts.errored
                + counts.canceled
                + counts.expired
            )
            infos.append(
                BatchInfo(batch.id, batch.created_at, total, batch.processing_status == "ended")
            )
        return infos

    def read_batch_entry(
        self, request: ModelRequest, result: Any
    ) -> tuple[CallOutcome, Failure | None]:
        """One batch result as an outcome (usage and cost of a billed answer) and, when it is
        not a usable answer, why (with the API's words redacted)."""
        from rag_evaluator.llm.providers.anthropic import read_message

        if result.type == "succeeded":
            try:
                reply = read_message(result.message)
            except ApiError as error:
                return CallOutcome(None, None), self._failure(error)
            cost = call_cost(reply.usage, self.settings.model, batch=True)
            billed = CallOutcome(None, None, None, None, reply.usage, 1, cost)
            try:
                payload = read_reply(reply.stop_reason, reply.text, request.max_tokens)
                value = request.parse(payload)
            except ReplyError as error:
                return billed, self._failure(error)
            return replace(billed, value=value, payload=payload), None
        if result.type == "errored":
            error = getattr(result.error, "error", None)
            error_type = getattr(error, "type", None) or "api_error"
            detail = _shortened(str(getattr(error, "message", "") or ""))
            status = _STATUS_OF_ERROR_TYPE.get(error_type, 500)
            failure = failure_for_status(status, error_type, detail, self.model_id, self.terms)
            return CallOutcome(None, None), replace(failure, reason=self.redacted(failure.reason))
        reason = f"the batch request was {result.type}"
        return CallOutcome(None, None), Failure(FailureKind.TRANSIENT, reason)
