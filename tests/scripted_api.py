"""A scripted Anthropic API behind the client's own seam, for tests without HTTP.

``ModelClient`` talks to a model API only through a transport (``llm/providers``);
``ScriptedApi`` has the Anthropic transport's methods and is handed to a real ``ModelClient``
in its place (the SDK and the HTTP layer are not touched). It builds real SDK model objects
(``Message``, ``MessageBatch``, ``MessageBatchIndividualResponse``, with ``model_validate``)
and real SDK errors, and hands them on through the transport's own readers (``read_message``,
``api_error``), as the real transport does.

Replies are scripted per batch ``custom_id`` (``script``) or, for direct calls, in order
(``direct_replies``); anything unscripted gets the default answer of its role (the roles of
``fakes/roles.py``; a plain verdict for the judge). Every ``succeeded`` result and every direct
reply is billed (``billed_usd``), usable or not; ``usable`` counts the usable answers per
request, so a request answered twice is money lost.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import anthropic
import httpx2
from anthropic.types import Message
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from fakes import roles
from fakes.anthropic_server import verdict

from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.cost import call_cost
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.llm.providers.anthropic import (
    ANTHROPIC_TERMS,
    messages_body,
    read_message,
)
from rag_evaluator.llm.providers.anthropic import (
    api_error as transport_error,
)
from rag_evaluator.llm.providers.base import ModelFacts
from rag_evaluator.llm.providers.base import Reply as TransportReply
from rag_evaluator.llm.requests import ModelRequest

HAIKU = resolve_model("haiku")
BASE_URL = "https://api.scripted.invalid"
REPLY_USAGE = (1000, 100)  # input and output tokens of every reply, unless told otherwise


@dataclass(frozen=True)
class Unusable:
    """A reply the API bills but that holds no usable answer (not JSON)."""

    text: str = "I cannot answer in JSON today."


@dataclass(frozen=True)
class Errored:
    """An ``errored`` batch result of the API's error ``error_type``."""

    error_type: str
    message: str = "scripted error"


# A scripted result: a payload (answered), Unusable, Errored, "expired" or "canceled".
Reply = Mapping[str, Any] | Unusable | Errored | str


def message(
    text: str | None, usage: tuple[int, int] = REPLY_USAGE, stop_reason: str = "end_turn"
) -> Message:
    return Message.model_validate(
        {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": HAIKU.model_id,
            "content": [] if text is None else [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
    )


def api_error(status: int, error_type: str, text: str = "scripted error") -> anthropic.APIError:
    """The SDK's error for an HTTP error status, as it raises it."""
    response = httpx2.Response(status, request=httpx2.Request("POST", f"{BASE_URL}/v1/messages"))
    body = {"type": "error", "error": {"type": error_type, "message": text}}
    kinds: dict[int, type[anthropic.APIStatusError]] = {
        401: anthropic.AuthenticationError,
        403: anthropic.PermissionDeniedError,
        404: anthropic.NotFoundError,
        429: anthropic.RateLimitError,
    }
    return kinds.get(status, anthropic.APIStatusError)(text, response=response, body=body)


def default_payload(params: Mapping[str, Any]) -> dict[str, Any]:
    """What the fake API's role for ``params`` answers (a plain verdict for the judge)."""
    user = params["messages"][0]["content"]
    system = params["system"]
    if not isinstance(system, str):
        system = "".join(block["text"] for block in system)
    answer = roles.default_answer(roles.role_of(params), dict(params), user, system)
    return verdict() if answer is None else answer


P = ParamSpec("P")
R = TypeVar("R")


def _as_transport(method: Callable[P, R]) -> Callable[P, R]:
    """The SDK's errors raised by ``method`` as the transport raises them (``ApiError``)."""

    @wraps(method)
    def calling(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (anthropic.APIError, ValueError) as error:
            raise transport_error(error) from error

    return calling


@dataclass
class _Batch:
    batch_id: str
    entries: list[dict[str, Any]]
    created_at: datetime
    status: str = "in_progress"
    polls: int = 0
    results: list[dict[str, Any]] | None = None


@dataclass
class ScriptedApi:
    """The Anthropic API as the client's transport sees it, scripted."""

    script: dict[str, list[Reply]] = field(default_factory=dict)
    direct_replies: list[Reply | BaseException] = field(default_factory=list)
    polls_until_ended: int = 1
    reply_usage: Callable[[Mapping[str, Any]], tuple[int, int]] = lambda params: REPLY_USAGE
    # Batches the API no longer knows (404; ``vanishing``: once ended, when their results are
    # asked for), and batches of other runs in the workspace.
    gone: set[str] = field(default_factory=set)
    vanishing: set[str] = field(default_factory=set)
    others: list[_Batch] = field(default_factory=list)
    # Hooks: called with the batch id as it is created / polled (may raise to stop the run).
    on_create: Callable[[str], None] | None = None
    on_poll: Callable[[str], None] | None = None
    # Raised by the next create request before the batch exists (the request never arrived).
    refuse_create: BaseException | None = None
    batches: dict[str, _Batch] = field(default_factory=dict)
    events: list[tuple[str, str]] = field(default_factory=list)
    billed_usd: float = 0.0
    usable: Counter[str] = field(default_factory=Counter)
    clock: datetime = field(default_factory=lambda: datetime.now(UTC))

    base_url = BASE_URL
    terms = ANTHROPIC_TERMS
    supports_batches = True
    supports_token_counting = True

    def close(self) -> None:
        self.events.append(("close", ""))

    def output_note(self) -> str | None:
        return None

    # -- direct calls -------------------------------------------------------------------------

    @_as_transport
    def send(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> TransportReply:
        body = messages_body(request, model_id, cache_system=cache_system)
        return read_message(self.create_message(body))

    def create_message(self, params: Mapping[str, Any]) -> Message:
        self.events.append(("message", ""))
        reply = self.direct_replies.pop(0) if self.direct_replies else default_payload(params)
        if isinstance(reply, BaseException):
            raise reply
        text = reply.text if isinstance(reply, Unusable) else json.dumps(reply)
        usage = self.reply_usage(params)
        self.billed_usd += call_cost(TokenUsage(*usage), HAIKU)
        if not isinstance(reply, Unusable):
            self.usable["direct"] += 1
        return message(text, usage)

    def check_model(self, model_id: str) -> ModelFacts:
        raise AssertionError("these tests make no pre-flight check")

    def count_tokens(self, request: ModelRequest, model_id: str, *, cache_system: bool) -> int:
        raise AssertionError("these tests count no tokens")

    # -- Message Batches ----------------------------------------------------------------------

    @_as_transport
    def create_batch(self, requests: Sequence[Mapping[str, Any]]) -> MessageBatch:
        if self.refuse_create is not None:
            error, self.refuse_create = self.refuse_create, None
            raise error
        batch_id = f"msgbatch_{len(self.batches) + 1:03d}"
        self.clock += timedelta(seconds=1)
        self.batches[batch_id] = _Batch(batch_id, [dict(entry) for entry in requests], self.clock)
        self.events.append(("create", batch_id))
        if self.on_create is not None:
            self.on_create(batch_id)
        return self._object(self.batches[batch_id])

    @_as_transport
    def retrieve_batch(self, batch_id: str) -> MessageBatch:
        self.events.append(("retrieve", batch_id))
        if self.on_poll is not None:
            self.on_poll(batch_id)
        batch = self._known(batch_id)
        batch.polls += 1
        if batch.results is None and batch.polls >= self.polls_until_ended:
            self._end(batch)
        return self._object(batch)

    @_as_transport
    def batch_results(self, batch_id: str) -> list[MessageBatchIndividualResponse]:
        self.events.append(("results", batch_id))
        if batch_id in self.vanishing:
            raise api_error(404, "not_found_error", f"no batch {batch_id}")
        batch = self._known(batch_id)
        if batch.results is None:
            raise api_error(400, "invalid_request_error", f"batch {batch_id} has not ended")
        return [MessageBatchIndividualResponse.model_validate(result) for result in batch.results]

    @_as_transport
    def batches_created_since(self, since: datetime) -> list[MessageBatch]:
        self.events.append(("list", ""))
        every = [*self.batches.values(), *self.others]
        found = [batch for batch in every if batch.created_at >= since]
        found.sort(key=lambda batch: batch.created_at, reverse=True)
        return [self._object(batch) for batch in found]

    def created(self) -> list[str]:
        return [batch_id for kind, batch_id in self.events if kind == "create"]

    def custom_ids(self, batch_id: str) -> list[str]:
        return [entry["custom_id"] for entry in self.batches[batch_id].entries]

    def paid_twice(self) -> list[str]:
        return sorted(custom for custom, count in self.usable.items() if count > 1)

    def other_run_batch(self, custom_ids: Sequence[str]) -> None:
        """A batch another run of the workspace created just now, ended, with these ids."""
        self.clock += timedelta(seconds=1)
        entries = [{"custom_id": custom, "params": {}} for custom in custom_ids]
        batch = _Batch(f"msgbatch_other_{len(self.others) + 1}", entries, self.clock)
        batch.results = [
            {"custom_id": custom, "result": {"type": "expired"}} for custom in custom_ids
        ]
        batch.status = "ended"
        self.others.append(batch)

    def _known(self, batch_id: str) -> _Batch:
        found = self.batches.get(batch_id) or next(
            (batch for batch in self.others if batch.batch_id == batch_id), None
        )
        if found is None or batch_id in self.gone:
            raise api_error(404, "not_found_error", f"no batch {batch_id}")
        return found

    def _end(self, batch: _Batch) -> None:
        batch.results = [
            {"custom_id": entry["custom_id"], "result": self._result(entry)}
            for entry in batch.entries
        ]
        batch.status = "ended"

    def _result(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        custom, params = entry["custom_id"], entry["params"]
        queue = self.script.get(custom)
        reply: Reply = queue.pop(0) if queue else default_payload(params)
        if isinstance(reply, Errored):
            error = {"type": reply.error_type, "message": reply.message}
            return {"type": "errored", "error": {"type": "error", "error": error}}
        if isinstance(reply, str):
            return {"type": reply}  # expired, canceled
        usage = self.reply_usage(params)
        self.billed_usd += call_cost(TokenUsage(*usage), HAIKU, batch=True)
        if isinstance(reply, Unusable):
            text = reply.text
        else:
            text = json.dumps(reply)
            self.usable[custom] += 1
        return {"type": "succeeded", "message": message(text, usage).model_dump()}

    def _object(self, batch: _Batch) -> MessageBatch:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.results is None:
            counts["processing"] = len(batch.entries)
        else:
            for result in batch.results:
                counts[result["result"]["type"]] += 1
        ended = batch.results is not None
        return MessageBatch.model_validate(
            {
                "id": batch.batch_id,
                "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts,
                "created_at": batch.created_at.isoformat(),
                "expires_at": (batch.created_at + timedelta(days=1)).isoformat(),
                "ended_at": batch.created_at.isoformat() if ended else None,
                "archived_at": None,
                "cancel_initiated_at": None,
                "results_url": f"{BASE_URL}/v1/messages/batches/{batch.batch_id}/results"
                if ended
                else None,
            }
        )
