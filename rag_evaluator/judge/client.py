"""The single seam to the model: one judging of one question through the Anthropic SDK.

Layers of retrying, innermost first:
1. The SDK retries 408/409/429/5xx and network failures itself (``sdk_max_retries`` times,
   honouring ``retry-after``).
2. ``JudgeClient.judge`` retries what is still transient after that ``max_retries`` more
   times, with capped exponential backoff and jitter, again honouring ``retry-after``.
3. Failures tied to the question (unusable output, refusal, 400) are asked again until
   ``max_calls_per_question`` calls have failed that way.
What counts as which is decided in one place, ``classify_failure``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from rag_evaluator.core.records import JudgeOutcome, TokenUsage, Verdict
from rag_evaluator.core.verdicts import VERDICT_SCHEMA, parse_verdict
from rag_evaluator.errors import JudgeFatalError, JudgeQuestionError, JudgeUnavailableError

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


@dataclass(frozen=True)
class JudgeSettings:
    """How the judge calls the model; the defaults are the command line's defaults."""

    model_id: str  # full id, already resolved from an alias
    max_tokens: int = 2000
    max_retries: int = 4  # our own retries of transient failures, on top of the SDK's
    timeout_seconds: float = 120.0  # per HTTP request
    delay_seconds: float = 0.5  # minimum gap between the end of one call and the next
    max_calls_per_question: int = 3  # calls a per-question failure may use up
    sdk_max_retries: int = 2  # the SDK's own retries inside each of our attempts
    backoff_base_seconds: float = 1.0  # first wait of our retry loop, doubled each time
    backoff_max_seconds: float = 60.0  # cap on any wait of our loop, retry-after included
    # Judgings in a row whose transient retries all ran out before the API counts as down:
    # one such judging is more likely a flaky moment (an unscored row), several an outage.
    unavailable_after: int = 3


class FailureKind(Enum):
    """What a failed call means for the question and the run."""

    TRANSIENT = "transient"  # try again later: rate limit, overload, 5xx, network, timeout
    QUESTION = "question"  # this question's call is unusable: ask again, then record unscored
    FATAL = "fatal"  # every later call would fail the same way: stop the run


@dataclass(frozen=True)
class Failure:
    """A classified failure: its kind, a short reason (the fix, when fatal), any retry-after."""

    kind: FailureKind
    reason: str
    retry_after_seconds: float | None = None


def _api_message(error: anthropic.APIStatusError) -> str:
    message = error.api_message or ""
    message = " ".join(message.split())
    if len(message) > _API_MESSAGE_LIMIT:
        message = message[: _API_MESSAGE_LIMIT - 3] + "..."
    return message


# The headers through which the API asks for a wait, and their unit in seconds.
_RETRY_AFTER_HEADERS = (("retry-after-ms", 0.001), ("retry-after", 1.0))


def _header_seconds(headers: httpx2.Headers, name: str, scale: float) -> float | None:
    """A wait header in seconds; ``None`` when absent, negative or an HTTP date (rare: the
    SDK computes those itself and the capped backoff covers them)."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        seconds = float(value) * scale
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _retry_after_seconds(error: anthropic.APIStatusError) -> float | None:
    """The wait the API asked for, in seconds (``retry-after-ms`` or ``retry-after``)."""
    for name, scale in _RETRY_AFTER_HEADERS:
        seconds = _header_seconds(error.response.headers, name, scale)
        if seconds is not None:
            return seconds
    return None


def _fatal_failure(error: anthropic.APIStatusError, model_id: str) -> Failure | None:
    detail = _api_message(error)
    suffix = f": {detail}" if detail else ""
    if error.status_code == 402 or error.type == "billing_error":
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API refused to bill this request ({error.status_code}{suffix}). "
            + BILLING_HELP,
        )
    if error.status_code == 401:
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API rejected the API key (401{suffix}). {API_KEY_HELP}",
        )
    if error.status_code == 403:
        return Failure(
            FailureKind.FATAL,
            f"The API key may not use model {model_id} (403{suffix}). Use a key from a "
            "workspace with access to it, or choose another model with --model",
        )
    if error.status_code == 404:
        return Failure(
            FailureKind.FATAL,
            f"The Anthropic API does not know model {model_id} (404{suffix}). Use --model "
            "sonnet, haiku or opus, or a current full model id",
        )
    return None


def classify_failure(error: Exception, model_id: str) -> Failure:
    """Decide whether a failed call is transient, tied to the question, or fatal.

    The only place that makes this decision; the retry loop just obeys it.
    """
    if isinstance(error, JudgeQuestionError):
        return Failure(FailureKind.QUESTION, error.message)
    if isinstance(error, anthropic.APITimeoutError):
        return Failure(FailureKind.TRANSIENT, "the API did not answer in time")
    if isinstance(error, anthropic.APIConnectionError):
        return Failure(FailureKind.TRANSIENT, "the connection to the API failed")
    if isinstance(error, anthropic.APIStatusError):
        fatal = _fatal_failure(error, model_id)
        if fatal is not None:
            return fatal
        status = error.status_code
        retry_after = _retry_after_seconds(error)
        if status == 429:
            return Failure(FailureKind.TRANSIENT, "API rate limit reached (429)", retry_after)
        if status == 529:
            return Failure(FailureKind.TRANSIENT, "API overloaded (529)", retry_after)
        if status >= 500 or status in (408, 409):
            return Failure(FailureKind.TRANSIENT, f"API error ({status})", retry_after)
        detail = _api_message(error) or f"status {status}"
        return Failure(FailureKind.QUESTION, f"request rejected: {detail}")
    return Failure(FailureKind.QUESTION, f"unexpected reply from the API: {type(error).__name__}")


def _usage_of(message: Message) -> TokenUsage:
    usage = message.usage
    return TokenUsage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )


def _verdict_of(message: Message, max_tokens: int) -> Verdict:
    """The verdict in a successful reply, or JudgeQuestionError saying why there is none."""
    if message.stop_reason == "refusal":
        raise JudgeQuestionError("the model refused to judge this question")
    if message.stop_reason == "max_tokens":
        raise JudgeQuestionError(f"judge output was cut off at max_tokens ({max_tokens})")
    if message.stop_reason == "model_context_window_exceeded":
        raise JudgeQuestionError("request rejected: too long for the model's context window")
    text = "".join(block.text for block in message.content if block.type == "text")
    return parse_verdict(text)


class JudgeClient:
    """Asks the model for one verdict at a time, with the retries and pacing of the settings."""

    def __init__(
        self,
        api_key: str,
        settings: JudgeSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        jitter: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self._api_key = api_key
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter or random.Random()
        self._last_call_end: float | None = None
        self._calls_this_question = 0
        self._exhausted_in_a_row = 0
        # The SDK reads ANTHROPIC_BASE_URL itself; the middleware sees every HTTP attempt,
        # the SDK's own retries included, so each one is counted and logged.
        self._client = anthropic.Anthropic(
            api_key=api_key,
            max_retries=settings.sdk_max_retries,
            timeout=settings.timeout_seconds,
            middleware=[self._observe_attempt],
        )
        logger.info(
            "judge client: anthropic SDK %s, model %s, timeout %g s, SDK retries %d, "
            "our retries %d, delay %g s",
            anthropic.__version__,
            settings.model_id,
            settings.timeout_seconds,
            settings.sdk_max_retries,
            settings.max_retries,
            settings.delay_seconds,
        )

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the HTTP connections."""
        self._client.close()

    def judge(self, system_prompt: str, user_message: str) -> JudgeOutcome:
        """One verdict for one question, or an unscored outcome with the reason.

        Raises JudgeFatalError (bad key, no permission, unknown model, billing), and
        JudgeUnavailableError when this is the ``unavailable_after``-th judging in a row whose
        transient retries all ran out; otherwise never raises for a transient or
        per-question failure.
        """
        settings = self.settings
        self._calls_this_question = 0
        usage = TokenUsage()
        transient_failures = 0
        question_failures = 0
        while True:
            self._wait_for_turn()
            try:
                message = self._send(system_prompt, user_message)
            except anthropic.APIError as error:
                failure = classify_failure(error, settings.model_id)
            else:
                usage = usage + _usage_of(message)
                logger.info(
                    "judge reply: stop_reason=%s input_tokens=%d output_tokens=%d",
                    message.stop_reason,
                    message.usage.input_tokens,
                    message.usage.output_tokens,
                )
                try:
                    verdict = _verdict_of(message, settings.max_tokens)
                except JudgeQuestionError as error:
                    failure = classify_failure(error, settings.model_id)
                else:
                    self._exhausted_in_a_row = 0
                    return JudgeOutcome(verdict, None, usage, self._calls_this_question)

            # The API's own message is quoted in some reasons; should it echo the key, the
            # key must not reach the terminal, the log, the checkpoint or the results.
            reason = self._redacted(failure.reason)
            if failure.kind is FailureKind.FATAL:
                # The CLI prints the raised error; the log alone gets this record.
                logger.error("judge stopped: %s", reason, extra={"terminal": False})
                raise JudgeFatalError(reason)
            if failure.kind is FailureKind.TRANSIENT:
                transient_failures += 1
                if transient_failures > settings.max_retries:
                    self._exhausted_in_a_row += 1
                    if self._exhausted_in_a_row >= settings.unavailable_after:
                        raise self._unavailable(reason)
                    return self._unscored(reason, usage)
                wait = self._backoff(transient_failures, failure.retry_after_seconds)
                logger.warning(
                    "%s; retrying in %.1f s (retry %d of %d)",
                    reason,
                    wait,
                    transient_failures,
                    settings.max_retries,
                )
                self._sleep(wait)
            else:
                question_failures += 1
                if question_failures >= settings.max_calls_per_question:
                    self._exhausted_in_a_row = 0  # the API answered: it is not down
                    return self._unscored(reason, usage)
                logger.warning(
                    "%s; asking again (call %d of at most %d)",
                    reason,
                    question_failures + 1,
                    settings.max_calls_per_question,
                )

    # -- internals ----------------------------------------------------------------------------

    def _send(self, system_prompt: str, user_message: str) -> Message:
        logger.info(
            "judge request: model=%s system=%d chars user=%d chars max_tokens=%d",
            self.settings.model_id,
            len(system_prompt),
            len(user_message),
            self.settings.max_tokens,
        )
        try:
            return self._client.messages.create(
                model=self.settings.model_id,
                max_tokens=self.settings.max_tokens,
                system=system_prompt,
                messages=[{"role": "user", "content": user_message}],
                output_config={"format": {"type": "json_schema", "schema": VERDICT_SCHEMA}},
            )
        finally:
            self._last_call_end = self._clock()

    def _wait_for_turn(self) -> None:
        """Keep at least ``delay_seconds`` between the end of one call and the next."""
        if self._last_call_end is None or self.settings.delay_seconds <= 0:
            return
        remaining = self.settings.delay_seconds - (self._clock() - self._last_call_end)
        if remaining > 0:
            self._sleep(remaining)

    def _backoff(self, retry_number: int, retry_after: float | None) -> float:
        """Capped exponential backoff with jitter, never shorter than the API's retry-after."""
        settings = self.settings
        exponential = settings.backoff_base_seconds * 2 ** (retry_number - 1)
        wait = min(exponential, settings.backoff_max_seconds) * self._jitter.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, settings.backoff_max_seconds)

    def _unscored(self, reason: str, usage: TokenUsage) -> JudgeOutcome:
        calls = self._calls_this_question
        error = f"{reason}; gave up after {calls} call{'s' if calls != 1 else ''}"
        logger.info("question left unscored: %s", error)
        return JudgeOutcome(None, error, usage, calls)

    def _unavailable(self, reason: str) -> JudgeUnavailableError:
        calls = self._calls_this_question
        message = (
            f"The Anthropic API kept failing for {self._exhausted_in_a_row} questions in a row "
            f"({reason}; {calls} calls for the last one), so it looks unavailable. Check your "
            "network and https://status.anthropic.com, then run the same command again to resume"
        )
        logger.error("judge stopped: %s", message, extra={"terminal": False})
        return JudgeUnavailableError(message, self._exhausted_in_a_row)

    def _redacted(self, text: str) -> str:
        if len(self._api_key) >= 8:
            return text.replace(self._api_key, "[REDACTED]")
        return text

    def _observe_attempt(
        self, request: anthropic.APIRequest, call_next: anthropic.CallNext
    ) -> anthropic.APIResponse[Any]:
        """SDK middleware: runs once per HTTP attempt; counts and logs it."""
        self._calls_this_question += 1
        attempt = request.retries_taken + 1
        started = time.monotonic()
        try:
            response = call_next(request)
        except anthropic.APIConnectionError as error:
            logger.info(
                "HTTP %s %s attempt %d failed after %.2f s: %s",
                request.method.upper(),
                request.url,
                attempt,
                time.monotonic() - started,
                type(error).__name__,
            )
            raise
        logger.info(
            "HTTP %s %s attempt %d -> %d in %.2f s (request-id %s)",
            request.method.upper(),
            request.url,
            attempt,
            response.status_code,
            time.monotonic() - started,
            response.headers.get("request-id", "-"),
        )
        self._cap_retry_after(response.headers)
        return response

    def _cap_retry_after(self, headers: httpx2.Headers) -> None:
        """Shorten a ``retry-after`` beyond ``backoff_max_seconds`` before the SDK obeys it.

        The SDK waits as long as the API asks; capping it here keeps a question's total
        time bounded.
        """
        cap = self.settings.backoff_max_seconds
        for name, scale in _RETRY_AFTER_HEADERS:
            seconds = _header_seconds(headers, name, scale)
            if seconds is not None and seconds > cap:
                logger.info("API asked to wait %g s (%s); capped at %g s", seconds, name, cap)
                headers[name] = f"{cap / scale:g}"
