"""A stand-in for the Anthropic API: a real HTTP server on 127.0.0.1.

The real SDK reaches it through ``ANTHROPIC_BASE_URL``. It plays the Messages API
(``POST /v1/messages``), the models endpoint (``GET /v1/models/{id}``), token counting
(``POST /v1/messages/count_tokens``) and Message Batches (create, retrieve, results, cancel).
It checks requests the way the API does (auth header, ``anthropic-version``, no sampling
parameters, no forced tool choice, structured output requested), records every request, and
answers with scripted verdicts or injected faults. Prompt caching is modelled: a system block
marked ``cache_control`` that reaches the model's minimum is written to the cache on first use
and read from it afterwards (``cache_creation_input_tokens`` / ``cache_read_input_tokens``).

It also plays Claude on Amazon Bedrock and Google Vertex AI for the SDK's ``AnthropicBedrock``
and ``AnthropicVertex`` clients (reached through ``ANTHROPIC_BEDROCK_BASE_URL`` and
``ANTHROPIC_VERTEX_BASE_URL``): their Messages routes, credentials and error shapes
(``fakes/platforms.py``), answered by the same scripts, roles, billing and faults.

It plays every role of the model-judged families, told apart by the output schema's top-level
properties (``fakes/roles.py``): the precision/recall/accuracy judge, and the claims,
verdicts, contexts, statements, attributions, questions, score, correctness, label,
is_matching and criteria roles of the LLM families, each with a sensible default answer.

    with FakeAnthropicServer() as server:
        server.script("What is X?", verdict(recall=0), Fault.status(529))      # the judge
        server.script_role("claims", "What is X?", {"claims": []}, Fault.invalid_json())
        server.fail_next(Fault.drop_connection())
        ...
        server.requests[0].body["model"]     # Messages API calls only (direct or batched)
        server.requests[0].role              # "judge", "claims", ...
        server.all_requests                     # every HTTP request, models/batches included
        server.paid_twice()                     # request bodies billed more often than expected

Billing is modelled: every answer that is a message (direct, or a batch's ``succeeded``
entry) is billed, counted by request body in ``billed``; error statuses, dropped connections,
malformed replies and batch entries that errored, expired or were canceled are not.

A script's key is looked for in the request's ``<question>`` text, or, for a role whose
request carries no question (``questions``: the answer alone), in the whole user message.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fakes import platforms, roles
from fakes.platforms import PlatformCall, PlatformCredentials
from fakes.serving import QuietHandler, ScriptedFake, SharedFaults, question_of

DEFAULT_API_KEY = "sk-ant-fake-0123456789abcdef"
ACCEPTED_API_VERSIONS = ("2026-10-21",)
KNOWN_MODELS = ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5")
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")
# The shortest system prompt (in the fake's tokens: characters / 4) each model caches.
CACHE_MINIMUM_TOKENS = {"claude-sonnet-5-5": 1024, "claude-haiku-5-5": 4096, "claude-opus-5-5": 512}
CONTEXT_WINDOW_TOKENS = 1_000_000

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def verdict(
    precision: int = 1,
    recall: int = 1,
    accuracy: int = 1,
    reasoning: str = "The answer states the same facts as the ground truth.",
    summary: str = "Correct and complete.",
) -> dict[str, Any]:
    """A verdict response for ``FakeAnthropicServer.script``."""
    return {
        "reasoning": reasoning,
        "summary": summary,
        "precision": precision,
        "recall": recall,
        "accuracy": accuracy,
    }


@dataclass(frozen=True)
class Fault(SharedFaults):
    """Something other than a clean verdict for one call. Build with the class methods."""

    kind: str
    status_code: int = 200
    message: str = ""
    retry_after: float | None = None
    error_type: str | None = None
    seconds: float = 0.0
    field_name: str = ""
    text: str = ""

    @classmethod
    def status(
        cls,
        code: int,
        message: str = "",
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> Fault:
        """An error status with the API's JSON error body (and ``retry-after`` when given).

        ``error_type`` overrides the body's ``error.type`` (default: the API's type for the code).
        """
        return cls(
            "status",
            status_code=code,
            message=message,
            retry_after=retry_after,
            error_type=error_type,
        )

    @classmethod
    def refusal(cls) -> Fault:
        """A 200 with ``stop_reason`` "refusal" and no verdict."""
        return cls("refusal")

    @classmethod
    def malformed(cls, shape: str) -> Fault:
        """A 200 that is not a valid message (never billed): ``json`` (a body that is not
        JSON), ``html``, ``empty``, ``schema`` (JSON of another shape), ``no_usage``, or
        ``usage`` (impossible token counts)."""
        if shape not in MALFORMED_SHAPES:
            raise ValueError(f"unknown malformed shape {shape!r}")
        return cls("malformed", text=shape)

    @classmethod
    def trickle(cls, seconds_per_byte: float) -> Fault:
        """A valid answer whose body arrives one byte every ``seconds_per_byte``."""
        return cls("trickle", seconds=seconds_per_byte)

    @classmethod
    def batch_result(cls, result_type: str) -> Fault:
        """In a Message Batch only: the request's result is ``expired`` or ``canceled``."""
        return cls("batch", text=result_type)


Response = dict[str, Any] | Fault

MALFORMED_SHAPES = ("json", "html", "empty", "schema", "no_usage", "usage")


def _malformed_body(shape: str, message: dict[str, Any]) -> tuple[bytes, str]:
    """The raw body and content type of a malformed 200 built from a valid ``message``."""
    if shape == "json":
        return b'{"id": "msg_fake", "type": "message", "content": [', "application/json"
    if shape == "html":
        return b"<html><body>502 Bad Gateway (proxy)</body></html>", "text/html"
    if shape == "empty":
        return b"", "application/json"
    if shape == "schema":
        return json.dumps({"result": "ok", "items": [1, 2]}).encode(), "application/json"
    broken = dict(message)
    if shape == "no_usage":
        broken.pop("usage")
    else:
        broken["usage"] = {"input_tokens": -5, "output_tokens": 10**30}
    return json.dumps(broken).encode(), "application/json"


@dataclass
class RecordedRequest:
    """One request as the server received it, and how it was answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    user_message: str | None
    question: str | None
    response_status: int | None = None  # None: the connection was dropped or timed out
    batch_id: str | None = None  # set for a Messages request that came inside a batch
    served: str = ""  # "verdict" (any JSON answer), a Fault kind, or "rejected"
    extra: dict[str, Any] = field(default_factory=dict)
    role: str = roles.JUDGE  # which role of the model-judged families the request asks for
    # Where it came in: "anthropic" (the API's own routes), "bedrock" or "vertex"; a
    # platform's request is recorded with the Messages body it stands for (``body["model"]``
    # the fake's model), the platform's own model id in ``platform_model``.
    platform: str = platforms.ANTHROPIC
    platform_model: str = ""
    usage: dict[str, int] | None = None  # the usage of a billed direct answer


def _user_message_text(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return None
    content = messages[-1].get("content") if isinstance(messages[-1], dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return None


def _system_text(body: Any) -> str:
    system = body.get("system", "") if isinstance(body, dict) else ""
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system if isinstance(block, dict))
    return system if isinstance(system, str) else ""


def _system_is_cached(body: Any) -> bool:
    system = body.get("system") if isinstance(body, dict) else None
    return isinstance(system, list) and any(
        isinstance(block, dict) and isinstance(block.get("cache_control"), dict) for block in system
    )


class _Rejection(Exception):
    """A request the real API would refuse."""

    def __init__(self, status: int, message: str, error_type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type

    @classmethod
    def of(cls, problem: platforms.Problem) -> _Rejection:
        return cls(problem.status, problem.message, problem.error_type)


class FakeAnthropicServer(ScriptedFake):
    """A real ThreadingHTTPServer on 127.0.0.1 (port 0) playing the Messages API."""

    def __init__(
        self,
        expected_api_key: str = DEFAULT_API_KEY,
        known_models: tuple[str, ...] = KNOWN_MODELS,
        platform_credentials: PlatformCredentials | None = None,
    ) -> None:
        self._init_scripts()  # scripts, faults, billing, the lock, the server thread
        self.expected_api_key = expected_api_key
        self.known_models = known_models
        # What the Bedrock and Vertex routes accept (fakes/platforms.py).
        self.platform_credentials = platform_credentials or PlatformCredentials()
        self.response_delay_seconds = 0.0
        # Called with each request as it arrives, before it is answered: lets a test look at
        # the world (e.g. the checkpoint) at the moment the client sends its next call. A Fault
        # it returns answers the request instead of the script.
        self.on_request: Callable[[RecordedRequest], Fault | None] | None = None
        self.requests: list[RecordedRequest] = []  # Messages API calls (direct or batched)
        self.all_requests: list[RecordedRequest] = []  # every HTTP request
        self.context_window_tokens = CONTEXT_WINDOW_TOKENS
        self.model_lifecycle = "active"
        # Called with a batch's id once it exists, before the create request is answered.
        self.on_batch_created: Callable[[str], None] | None = None
        # Called with a batch's id each time it is polled, before the answer.
        self.on_batch_poll: Callable[[str], None] | None = None
        # A batch ends after this many retrieve calls (0: at once).
        self.batch_polls_until_ended = 1
        self.batches: dict[str, dict[str, Any]] = {}
        self._batch_ids = itertools.count(1)
        self._cache_written: set[tuple[str, str]] = set()
        # Messages requests being answered right now, and the most there ever were at once.
        self.in_flight = 0
        self.max_in_flight = 0
        # TCP connections a client holds open now (kept alive between its requests): 0 once
        # every client has closed its HTTP connections.
        self.open_connections = 0
        self._message_ids = itertools.count(1)

    def _handler_type(self) -> type[QuietHandler]:
        return _Handler

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._http is None:
            raise RuntimeError("the fake server is not started")
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def vertex_base_url(self) -> str:
        """What ``ANTHROPIC_VERTEX_BASE_URL`` is set to (Vertex's endpoints end in ``/v1``)."""
        return f"{self.base_url}/v1"

    @property
    def google_token_uri(self) -> str:
        """Google's token endpoint, played by the fake for Vertex's credentials."""
        return f"{self.base_url}{platforms.GOOGLE_TOKEN_PATH}"

    def write_google_credentials(self, path: Path) -> Path:
        """Application Default Credentials at ``path`` whose tokens come from the fake."""
        return platforms.write_google_credentials(
            path, self.google_token_uri, self.platform_credentials
        )

    # -- scripting ----------------------------------------------------------------------------

    def script_generation(self, fragment: str, *responses: Response | None) -> None:
        """Queue generator replies for requests whose text (unescaped: the chunks, or e.g.
        ``<question_type>unanswerable</question_type>``) contains ``fragment``; ``None`` is
        the default reply; the last one repeats once exhausted."""
        if not responses:
            raise ValueError("script_generation() needs at least one response")
        with self._lock:
            self._generation_scripts[fragment] = deque(responses)
            self._last_generation[fragment] = responses[-1]

    def generation_requests(self) -> list[RecordedRequest]:
        """Recorded generator requests (direct or batched)."""
        return [
            request
            for request in self.requests
            if request.user_message is not None and "<chunk source=" in request.user_message
        ]

    def hold_batch(self, batch_id: str, hold: bool = True) -> None:
        """Keep a batch processing (it never ends) until released with ``hold=False``."""
        with self._lock:
            self.batches[batch_id]["hold"] = hold

    def forget_batch(self, batch_id: str) -> None:
        """The API no longer knows this batch (its results expired): 404 from now on."""
        with self._lock:
            self.batches.pop(batch_id, None)

    def fail_next_free(self, *faults: Fault) -> None:
        """Apply error-status ``faults`` to the next requests that are not Messages calls
        (the models endpoint, token counting, Message Batches)."""
        with self._lock:
            self._next_free_faults.extend(faults)

    def fail_next(self, *faults: Fault) -> None:
        """Apply ``faults`` to the next calls in order, whatever their question."""
        with self._lock:
            self._next_faults.extend(faults)

    def requests_about(self, question: str) -> list[RecordedRequest]:
        """Recorded requests whose question is (or contains) ``question``."""
        return [
            request
            for request in self.requests
            if request.question is not None and question in request.question
        ]

    def requests_for(self, role: str, question: str | None = None) -> list[RecordedRequest]:
        """Recorded requests playing ``role`` (about ``question``, when given)."""
        return [
            request
            for request in self.requests
            if request.role == role
            and (
                question is None or (request.question is not None and question in request.question)
            )
        ]

    def _script_key(self, recorded: RecordedRequest) -> tuple[str, str] | None:
        where = recorded.question
        if where is None and recorded.user_message is not None:
            where = html.unescape(recorded.user_message)
        if where is None:
            return None
        scripted = [key for key in self._scripts if key[0] == recorded.role]
        if (recorded.role, where) in self._scripts:
            return (recorded.role, where)
        return next((key for key in scripted if key[1] in where), None)

    def _default_answer(self, recorded: RecordedRequest) -> dict[str, Any]:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        answer = roles.default_answer(
            recorded.role, body, recorded.user_message or "", _system_text(body)
        )
        return verdict() if answer is None else answer

    def _current_verdict(self, recorded: RecordedRequest) -> dict[str, Any]:
        """The answer the request would get now, without using up its script."""
        with self._lock:
            key = self._script_key(recorded)
            upcoming = [] if key is None else [*self._scripts[key], self._last_scripted[key]]
        scripted = next((item for item in upcoming if isinstance(item, dict)), None)
        return dict(scripted if scripted is not None else self._default_answer(recorded))

    # -- request handling (called from handler threads) ---------------------------------------

    def _check_auth(self, request: RecordedRequest) -> None:
        headers = request.headers
        if request.platform != platforms.ANTHROPIC:
            check = (
                platforms.bedrock_auth_problem
                if request.platform == platforms.BEDROCK
                else platforms.vertex_auth_problem
            )
            problem = check(headers, self.platform_credentials)
            if problem is not None:
                raise _Rejection.of(problem)
            return
        key = headers.get("x-api-key")
        authorization = headers.get("authorization", "")
        if authorization.startswith("Bearer "):
            key = authorization.removeprefix("Bearer ")
        if key != self.expected_api_key:
            raise _Rejection(401, "invalid x-api-key")
        version = headers.get("anthropic-version")
        if version not in ACCEPTED_API_VERSIONS:
            raise _Rejection(400, f"anthropic-version: unsupported or missing value {version!r}")

    def _validate(self, request: RecordedRequest) -> None:
        self._check_auth(request)
        problem = request.extra.get("platform_problem")
        if isinstance(problem, platforms.Problem):
            raise _Rejection.of(problem)
        self._validate_params(request.body, request.user_message)

    def _validate_params(
        self, body: Any, user_message: str | None, *, counting: bool = False
    ) -> None:
        if not isinstance(body, dict):
            raise _Rejection(400, "The request body is not valid JSON.")
        for name in SAMPLING_PARAMETERS:
            if name in body:
                raise _Rejection(400, f"{name}: Extra inputs are not permitted")
        tool_choice = body.get("tool_choice")
        if isinstance(tool_choice, dict) and tool_choice.get("type") in ("tool", "any"):
            raise _Rejection(400, "tool_choice: forcing tool use is not supported for this model")
        if body.get("model") not in self.known_models:
            raise _Rejection(404, f"model: {body.get('model')}")
        max_tokens = body.get("max_tokens")
        if not counting and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise _Rejection(400, "max_tokens: Field required")
        if user_message is None:
            raise _Rejection(400, "messages: at least one user message is required")
        output_format = (body.get("output_config") or {}).get("format") or {}
        if output_format.get("type") != "json_schema" or not isinstance(
            output_format.get("schema"), dict
        ):
            raise _Rejection(400, "output_config.format: a json_schema format is expected")

    # -- models, batches ----------------------------------------------------------------------

    def _model_info(self, model_id: str) -> dict[str, Any]:
        if model_id not in self.known_models:
            raise _Rejection(404, f"model: {model_id}")
        return {
            "type": "model",
            "id": model_id,
            "display_name": model_id.replace("-", " ").title(),
            "created_at": "2026-10-07T00:00:00Z",
            "lifecycle": self.model_lifecycle,
            "max_input_tokens": self.context_window_tokens,
            "max_tokens": 128_000,
        }

    def _create_batch(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("requests"), list):
            raise _Rejection(400, "requests: Field required")
        requests = body["requests"]
        if not requests:
            raise _Rejection(400, "requests: at least one request is required")
        ids = [entry.get("custom_id") for entry in requests if isinstance(entry, dict)]
        if len(ids) != len(requests) or len(set(ids)) != len(ids):
            raise _Rejection(400, "requests: custom_id values must be present and unique")
        for custom in ids:
            if not isinstance(custom, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", custom):
                raise _Rejection(
                    400, f"custom_id: {custom!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
                )
        batch_id = f"msgbatch_fake_{next(self._batch_ids):06d}"
        with self._lock:
            self.batches[batch_id] = {
                "requests": requests,
                "polls": 0,
                "status": "in_progress",
                "results": None,
                "canceled": False,
                "created_at": datetime.now(UTC),
            }
        if self.on_batch_created is not None:
            self.on_batch_created(batch_id)
        return self._batch_object(batch_id)

    def _list_batches(self, query: str, base_url: str) -> dict[str, Any]:
        """``GET /v1/messages/batches``: newest first, ``limit`` per page, ``after_id``."""
        params = urllib.parse.parse_qs(query)
        limit = int(params.get("limit", ["20"])[0])
        with self._lock:
            ids = sorted(self.batches, key=lambda name: self.batches[name]["created_at"])[::-1]
        after = params.get("after_id", [None])[0]
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        page = ids[:limit]
        return {
            "data": [self._batch_object(batch_id, base_url) for batch_id in page],
            "has_more": len(ids) > limit,
            "first_id": page[0] if page else None,
            "last_id": page[-1] if page else None,
        }

    def _batch_object(self, batch_id: str, base_url: str = "") -> dict[str, Any]:
        batch = self.batches[batch_id]
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch["results"] is None:
            counts["processing"] = len(batch["requests"])
        else:
            for line in batch["results"]:
                counts[line["result"]["type"]] += 1
        ended = batch["status"] == "ended"
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": batch["status"],
            "request_counts": counts,
            "created_at": batch["created_at"].isoformat().replace("+00:00", "Z"),
            "expires_at": "2099-11-24T00:00:00Z",
            "ended_at": "2026-11-23T00:05:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def _retrieve_batch(self, batch_id: str, handler: Any) -> dict[str, Any]:
        if self.on_batch_poll is not None:
            self.on_batch_poll(batch_id)
        batch = self.batches[batch_id]
        batch["polls"] += 1
        if (
            batch["status"] != "ended"
            and not batch.get("hold")
            and batch["polls"] >= self.batch_polls_until_ended
        ):
            self._end_batch(batch_id)
        host, port = handler.server.server_address[:2]
        return self._batch_object(batch_id, f"http://{host}:{port}")

    def _cancel_batch(self, batch_id: str, handler: Any) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] != "ended":
            batch["canceled"] = True
            self._end_batch(batch_id)
        host, port = handler.server.server_address[:2]
        return self._batch_object(batch_id, f"http://{host}:{port}")

    def _batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        batch = self.batches[batch_id]
        if batch["status"] != "ended":
            raise _Rejection(400, f"message batch {batch_id} has not ended")
        return list(batch["results"])

    def _end_batch(self, batch_id: str) -> None:
        """Answer every request of the batch, as the Messages API would, with the scripts."""
        batch = self.batches[batch_id]
        results = []
        for entry in batch["requests"]:
            custom = entry["custom_id"]
            if batch["canceled"]:
                results.append({"custom_id": custom, "result": {"type": "canceled"}})
                continue
            params = entry.get("params")
            user_message = _user_message_text(params)
            recorded = RecordedRequest(
                method="POST",
                path="/v1/messages",
                headers={},
                body=params,
                user_message=user_message,
                question=question_of(user_message),
                batch_id=batch_id,
                role=roles.role_of(params),
            )
            with self._lock:
                self.requests.append(recorded)
            results.append({"custom_id": custom, "result": self._batch_result(recorded, params)})
        batch["results"] = results
        batch["status"] = "ended"

    def _batch_result(self, recorded: RecordedRequest, params: Any) -> dict[str, Any]:
        try:
            self._validate_params(params, recorded.user_message)
        except _Rejection as rejection:
            recorded.served = "rejected"
            return {"type": "errored", "error": _error_body(rejection.status, rejection.message)}
        response = self._next_response(recorded)
        if isinstance(response, dict):
            recorded.served = "verdict"
            recorded.response_status = 200
            self.bill(params)
            return {"type": "succeeded", "message": self._message(params, json.dumps(response))}
        recorded.served = response.kind
        if response.kind in ("text", "missing", "refusal", "trickle"):
            self.bill(params)
        if response.kind == "batch":
            return {"type": response.text}
        if response.kind == "status":
            message = response.message or f"fake {response.status_code} error"
            return {
                "type": "errored",
                "error": _error_body(response.status_code, message, response.error_type),
            }
        if response.kind in ("drop", "slow", "malformed"):
            return {"type": "errored", "error": _error_body(500, "fake internal error")}
        if response.kind == "trickle":
            answer = self._current_verdict(recorded)
            return {"type": "succeeded", "message": self._message(params, json.dumps(answer))}
        recorded.response_status = 200
        if response.kind == "text":
            return {"type": "succeeded", "message": self._message(params, response.text)}
        if response.kind == "missing":
            answer = self._current_verdict(recorded)
            answer.pop(response.field_name, None)
            return {"type": "succeeded", "message": self._message(params, json.dumps(answer))}
        if response.kind == "refusal":
            return {"type": "succeeded", "message": self._message(params, None, "refusal")}
        raise ValueError(f"unknown fault kind {response.kind!r}")

    def _usage(self, body: dict[str, Any], output_text: str) -> dict[str, int]:
        system_tokens = len(_system_text(body)) // 4
        user_tokens = len(_user_message_text(body) or "") // 4
        written = read = 0
        model = str(body.get("model"))
        if _system_is_cached(body) and system_tokens >= CACHE_MINIMUM_TOKENS.get(model, 1024):
            key = (model, _system_text(body))
            with self._lock:
                if key in self._cache_written:
                    read = system_tokens
                else:
                    self._cache_written.add(key)
                    written = system_tokens
        return {
            "input_tokens": system_tokens + user_tokens - written - read,
            "output_tokens": len(output_text) // 4,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }

    def _message(
        self,
        body: dict[str, Any],
        text: str | None,
        stop_reason: str = "end_turn",
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": f"msg_fake_{next(self._message_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [] if text is None else [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self._usage(body, text or ""),
        }
        if stop_reason == "refusal":
            message["stop_details"] = {
                "type": "refusal",
                "category": None,
                "explanation": "The fake server was scripted to refuse.",
            }
        return message


def _error_body(status: int, message: str, error_type: str | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type or _ERROR_TYPES.get(status, "api_error"), "message": message},
        "request_id": "req_fake",
    }


class _Handler(QuietHandler):
    fake: FakeAnthropicServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without this, Nagle's algorithm and the
    # client's delayed ACK add 40 ms to every answer.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake.open_connections += 1

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.fake._lock:
                self.fake.open_connections -= 1

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        fake = self.fake
        path = self.path.split("?")[0]
        call = platforms.platform_call(self.command, path)
        recorded = self._record(body, call)
        is_message = self.command == "POST" and (
            path == "/v1/messages" or (call is not None and call.action == platforms.MESSAGES)
        )
        with fake._lock:
            fake.all_requests.append(recorded)
            if is_message:
                fake.requests.append(recorded)
        if self.command == "POST" and path == platforms.GOOGLE_TOKEN_PATH:
            self._serve_token(recorded, raw)
            return
        override = None
        if is_message and fake.on_request is not None:
            # A hook may answer in the script's place (e.g. drop the call it stopped the run at).
            override = fake.on_request(recorded)
        if is_message and isinstance(override, Fault):
            self._serve(recorded, body, override)
            return
        if is_message:
            with fake._lock:
                fake.in_flight += 1
                fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
            try:
                # The latency of a model call; the other endpoints answer at once.
                delay = fake.response_delay_seconds
                if delay and fake._stopping.wait(delay):
                    return
                try:
                    fake._validate(recorded)
                except _Rejection as rejection:
                    recorded.served = "rejected"
                    self._send_error(recorded, rejection)
                    return
                self._serve(recorded, body, fake._next_response(recorded))
            finally:
                with fake._lock:
                    fake.in_flight -= 1
            return
        try:
            fake._check_auth(recorded)
            fault = fake._next_free_fault()
            if fault is not None:
                recorded.served = fault.kind
                self._send_fault_status(recorded, fault)
                return
            self._route(recorded, path, recorded.body)
        except _Rejection as rejection:
            recorded.served = "rejected"
            self._send_error(recorded, rejection)

    def _serve_token(self, recorded: RecordedRequest, raw: bytes) -> None:
        """Google's token endpoint, for the Vertex client's service account."""
        recorded.served = "token"
        form = raw.decode("utf-8", "replace")
        self._send_json(recorded, *platforms.token_reply(form, self.fake.platform_credentials))

    def _record(self, body: Any, call: PlatformCall | None) -> RecordedRequest:
        """The request as recorded: a platform's with the Messages body it stands for."""
        fake = self.fake
        problem = None
        if call is not None:
            body, problem = platforms.messages_body(
                call, body, fake.known_models, ACCEPTED_API_VERSIONS, fake.platform_credentials
            )
        user_message = _user_message_text(body)
        recorded = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            user_message=user_message,
            question=question_of(user_message),
            role=roles.role_of(body),
            platform=call.platform if call is not None else platforms.ANTHROPIC,
            platform_model=call.model if call is not None else "",
        )
        if problem is not None:
            recorded.extra["platform_problem"] = problem
        return recorded

    def _route(self, recorded: RecordedRequest, path: str, body: Any) -> None:
        fake = self.fake
        parts = [part for part in path.split("/") if part]
        counting = recorded.platform != platforms.ANTHROPIC or path == "/v1/messages/count_tokens"
        if self.command == "GET" and parts[:2] == ["v1", "models"] and len(parts) == 3:
            recorded.served = "model"
            self._send_json(recorded, 200, fake._model_info(parts[2]))
        elif self.command == "POST" and counting:
            # The API's count_tokens, or Vertex's count-tokens:rawPredict (model in the body).
            problem = recorded.extra.get("platform_problem")
            if isinstance(problem, platforms.Problem):
                raise _Rejection.of(problem)
            fake._validate_params(body, _user_message_text(body), counting=True)
            recorded.served = "count_tokens"
            tokens = (len(_system_text(body)) + len(_user_message_text(body) or "")) // 4
            self._send_json(recorded, 200, {"input_tokens": tokens})
        elif self.command == "POST" and path == "/v1/messages/batches":
            recorded.served = "batch_create"
            self._send_json(recorded, 200, fake._create_batch(body))
        elif self.command == "GET" and path == "/v1/messages/batches":
            recorded.served = "batch_list"
            host, port = self.server.server_address[:2]
            query = self.path.partition("?")[2]
            self._send_json(recorded, 200, fake._list_batches(query, f"http://{host}:{port}"))
        elif parts[:3] == ["v1", "messages", "batches"] and len(parts) >= 4:
            batch_id = parts[3]
            if batch_id not in fake.batches:
                raise _Rejection(404, f"message batch {batch_id} not found")
            if self.command == "GET" and len(parts) == 4:
                recorded.served = "batch_retrieve"
                self._send_json(recorded, 200, fake._retrieve_batch(batch_id, self))
            elif self.command == "GET" and parts[4:] == ["results"]:
                recorded.served = "batch_results"
                self._send_lines(recorded, fake._batch_results(batch_id))
            elif self.command == "POST" and parts[4:] == ["cancel"]:
                recorded.served = "batch_cancel"
                self._send_json(recorded, 200, fake._cancel_batch(batch_id, self))
            else:
                raise _Rejection(404, f"Not found: {self.command} {path}")
        else:
            raise _Rejection(404, f"Not found: {self.command} {path}")

    def _send_lines(self, recorded: RecordedRequest, lines: list[dict[str, Any]]) -> None:
        data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
        recorded.response_status = 200
        self.send_response(200)
        self.send_header("content-type", "application/binary")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _serve(self, recorded: RecordedRequest, body: dict[str, Any], response: Response) -> None:
        fake = self.fake
        if isinstance(response, dict):
            recorded.served = "verdict"
            self._send_json(recorded, 200, fake._message(body, json.dumps(response)), bill=body)
            return
        recorded.served = response.kind
        if response.kind == "status":
            self._send_fault_status(recorded, response)
        elif response.kind == "drop":
            self.close_connection = True
        elif response.kind == "slow":
            if fake._stopping.wait(response.seconds):
                return
            answer = fake._current_verdict(recorded)
            self._send_json(recorded, 200, fake._message(body, json.dumps(answer)), bill=body)
        elif response.kind == "text":
            self._send_json(recorded, 200, fake._message(body, response.text), bill=body)
        elif response.kind == "missing":
            answer = fake._current_verdict(recorded)
            answer.pop(response.field_name, None)
            self._send_json(recorded, 200, fake._message(body, json.dumps(answer)), bill=body)
        elif response.kind == "refusal":
            message = fake._message(body, None, stop_reason="refusal")
            self._send_json(recorded, 200, message, bill=body)
        elif response.kind == "batch":
            # A batch-only fault: a direct call gets the question's current verdict.
            answer = fake._current_verdict(recorded)
            self._send_json(recorded, 200, fake._message(body, json.dumps(answer)), bill=body)
        elif response.kind == "malformed":
            answer = fake._message(body, json.dumps(fake._current_verdict(recorded)))
            self._send_raw(recorded, *_malformed_body(response.text, answer))
        elif response.kind == "trickle":
            answer = fake._message(body, json.dumps(fake._current_verdict(recorded)))
            self._trickle(recorded, json.dumps(answer).encode("utf-8"), response.seconds, body)
        else:
            raise ValueError(f"unknown fault kind {response.kind!r}")

    def _send_fault_status(self, recorded: RecordedRequest, fault: Fault) -> None:
        """An injected error status (with ``retry-after`` when the fault has one)."""
        headers = {} if fault.retry_after is None else {"retry-after": f"{fault.retry_after:g}"}
        message = fault.message or f"fake {fault.status_code} error"
        rejection = _Rejection(fault.status_code, message, fault.error_type)
        self._send_error(recorded, rejection, headers)

    def _send_error(
        self,
        recorded: RecordedRequest,
        rejection: _Rejection,
        headers: dict[str, str] | None = None,
    ) -> None:
        """An error status with the body (and headers) of the platform the request came to."""
        status, message, error_type = rejection.status, rejection.message, rejection.error_type
        if recorded.platform == platforms.ANTHROPIC:
            self._send_json(recorded, status, _error_body(status, message, error_type), headers)
            return
        payload, platform_headers = platforms.error_payload(
            recorded.platform, status, message, error_type
        )
        self._send_json(recorded, status, payload, {**platform_headers, **(headers or {})})

    def _send_json(
        self,
        recorded: RecordedRequest,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
        *,
        bill: Any = None,
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        # Recorded before the answer goes out: once the client has read it, a test may look.
        recorded.response_status = status
        if bill is not None:
            # Billed once the model has answered, whether or not the client reads it.
            self.fake.bill(bill)
            recorded.usage = payload.get("usage")
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_fake_{len(self.fake.requests):06d}")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            # The client gave up (timed out) before the answer was ready.
            recorded.response_status = None
            self.close_connection = True
