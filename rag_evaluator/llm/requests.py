"""Model requests and what came back: the pure half of every call to the model.

A ``ModelRequest`` is everything one Messages API call sends (system prompt, one user message,
the JSON schema of the structured answer, ``max_tokens``) plus the function that reads the
answer. Each provider's transport turns it into its API's body (the same for a direct
call and a Message Batch entry); ``read_reply`` turns a reply's stop reason and text into the
parsed answer or a ``ReplyError`` saying why there is none. The judge client (``judge/``) is
the only caller that talks to the API; everything here is plain data.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rag_evaluator.errors import JudgeQuestionError
from rag_evaluator.inputs.records import TokenUsage

CHARS_PER_TOKEN_LOW = 4  # English prose
CHARS_PER_TOKEN_HIGH = 3  # numbers, code, tables and non-English text tokenise denser
# Tokens the API adds to every request: message framing and the output schema's instructions.
REQUEST_OVERHEAD_TOKENS = 300


class ReplyError(JudgeQuestionError):
    """A reply that holds no usable answer; the message is the reason."""


class FailureKind(Enum):
    """What a failed call means for the question and the run."""

    TRANSIENT = "transient"  # rate limit, overload, 5xx, network, timeout: try again later
    QUESTION = "question"  # this request's answer is unusable: ask again, then record unscored
    FATAL = "fatal"  # every later call would fail the same way: stop the run


def _no_parse(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    return payload


# Read-only by convention, not frozen: the plan builds one per question (see inputs/records).
@dataclass
class ModelRequest:
    """One call to the model: what is sent, and how its JSON answer is read.

    ``parse`` receives the reply's JSON object and returns the answer as the caller wants it,
    or raises ``ReplyError`` (the call then counts as unusable and may be asked again).
    ``purpose`` names the call in logs (``judge``, ``judge vote``, ``faithfulness claims``).
    """

    system: str
    user: str
    schema: Mapping[str, Any]
    max_tokens: int
    purpose: str
    parse: Callable[[Mapping[str, Any]], object] = field(default=_no_parse, compare=False)
    # The model that answers, by its key (``ModelInfo.key``): a juror's; ``None`` is the run's.
    model: str | None = None

    def characters(self) -> int:
        return len(self.system) + len(self.user)

    def input_tokens_low(self) -> int:
        """A low estimate of the request's input tokens (prose-like text)."""
        return self.characters() // CHARS_PER_TOKEN_LOW + REQUEST_OVERHEAD_TOKENS

    def input_tokens_high(self) -> int:
        """A high estimate of the request's input tokens (dense text)."""
        return math.ceil(self.characters() / CHARS_PER_TOKEN_HIGH) + REQUEST_OVERHEAD_TOKENS

    def input_tokens_bound(self) -> int:
        """The most input tokens the request can be: a token holds at least one byte, so
        every byte of its texts and schema, plus the API's framing."""
        texts = (self.system, self.user, json.dumps(self.schema, ensure_ascii=False))
        return sum(len(text.encode("utf-8")) for text in texts) + REQUEST_OVERHEAD_TOKENS

    def digest(self) -> str:
        """A short fingerprint of what is sent, to recognise the same request after a resume."""
        sent: list[Any] = [self.system, self.user, self.schema, self.max_tokens]
        if self.model is not None:
            sent.append(self.model)
        material = json.dumps(
            sent,
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CallOutcome:
    """What one request finally produced, after its retries.

    ``value`` is the parsed answer (``None`` when the call failed, with the reason in ``error``
    and ``failure`` saying whether it was transient or tied to the request). ``payload`` is the
    reply's raw JSON object, kept so a checkpoint can replay the answer. ``calls`` counts the
    billed calls (the API answered with a message, usable or not); ``usage`` and ``cost_usd``
    are what the API billed for them; ``retries`` counts the times the request was sent again
    (after a transient failure or an unusable answer).
    """

    value: object | None
    payload: Mapping[str, Any] | None
    error: str | None = None
    failure: FailureKind | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0
    cost_usd: float = 0.0
    retries: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


def strip_code_fence(text: str) -> str:
    """Remove a Markdown code fence around JSON, which some models add without asking."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        inner = stripped[3:-3]
        first_line, _, rest = inner.partition("\n")
        # The fence may name a language ("```json"); drop that word, keep the body.
        if first_line.strip().isalpha() or not first_line.strip():
            inner = rest
        return inner.strip()
    return stripped


def parse_json_object(text: str, what: str = "judge output") -> dict[str, Any]:
    """The JSON object in a reply's text, or ``ReplyError`` saying what is wrong."""
    body = strip_code_fence(text)
    if not body:
        raise ReplyError(f"{what} was empty")
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and integers too long to convert.
        raise ReplyError(f"{what} was not valid JSON") from exc
    if not isinstance(payload, dict):
        raise ReplyError(f"{what} was JSON but not an object")
    return payload


def read_reply(stop_reason: str | None, text: str, max_tokens: int) -> dict[str, Any]:
    """The JSON object of a successful (HTTP 200) reply, or ``ReplyError`` when it has none."""
    if stop_reason == "refusal":
        raise ReplyError("the model refused to judge this question")
    if stop_reason == "max_tokens":
        raise ReplyError(f"judge output was cut off at max_tokens ({max_tokens})")
    if stop_reason == "model_context_window_exceeded":
        raise ReplyError("request rejected: too long for the model's context window")
    return parse_json_object(text)


def too_long_reason(request: ModelRequest, context_window_tokens: int) -> str | None:
    """Why ``request`` cannot fit the model's context window, or ``None`` when it may.

    Decided on the low token estimate, so a request is only held back when even prose-like
    tokenisation leaves no room for it and its answer.
    """
    needed = request.input_tokens_low() + request.max_tokens
    if needed <= context_window_tokens:
        return None
    return (
        f"the request is too long for the model (about {request.input_tokens_low():,} input "
        f"tokens, the model reads at most {context_window_tokens:,}); shorten the texts of this "
        "question"
    )
