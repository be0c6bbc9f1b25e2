"""A stand-in for OpenAI-compatible chat-completions servers: a real HTTP server on 127.0.0.1.

The real ``openai`` SDK reaches it through ``OPENAI_BASE_URL`` (``base_url``, ending in
``/v1``), and ``AzureOpenAI`` through ``azure_endpoint`` (``azure_endpoint``, the bare
origin). It plays:

- ``POST /v1/chat/completions`` (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio), with
  ``Authorization: Bearer <key>``;
- ``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` (Azure OpenAI),
  with the ``api-key`` header; the deployment is the model;
- ``GET /v1/models``, ``GET /v1/models/{id}`` (and Azure's ``GET /openai/models``).

It checks requests the way the OpenAI API does (key, served model, messages, no streaming,
no ``max_tokens`` or non-default ``temperature``/``top_p`` for a reasoning model (``gpt-5-mini``
by default), ``response_format`` well formed, a ``strict`` json_schema whose every object has
``additionalProperties: false`` and requires all its properties, the context window), records
every request, and answers with scripted replies or injected faults. With
``json_schema_supported = False`` it refuses ``response_format`` of type ``json_schema`` with a
400, as servers lacking structured outputs do, so the client's fallback can be tested.

The role (``fakes/roles.py``) comes from the output schema's top-level properties: the schema
of ``response_format.json_schema.schema``, or, in the JSON-in-text fallback (no
``response_format``), the schema the system message ends with: a line
``Reply with one JSON object matching this JSON schema:`` then the schema as JSON on the next
line.

    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=server.expected_api_key)
        server.script("What is X?", verdict(recall=0), Fault.status(429, retry_after=2))
        server.script_role("claims", "What is X?", {"claims": []}, Fault.refusal())
        server.fail_next(Fault.drop_connection())
        server.requests[0].body["model"]      # chat completion calls only (OpenAI or Azure)
        server.requests[0].extra["schema_from"]  # "response_format", "system" or None
        server.paid_twice()                   # request bodies billed more often than once

Usage is characters / 4 of each message's text (``prompt_tokens``) and of the reply's content
(``completion_tokens``). With ``prompt_caching = True`` a system message of at least 1,024
tokens is cached on first use per model, and later requests report it in
``prompt_tokens_details.cached_tokens`` (which, as with OpenAI, is part of ``prompt_tokens``).

Billing is modelled as in the Anthropic fake: every completion answered with a message
(content, refusal, cut off, filtered) is billed, counted by request body in ``billed``; error
statuses, dropped connections and malformed replies are not.

A script's key is looked for in the last user message's ``<question>`` text, or, for a role
whose request carries no question, in the whole user message.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakes import roles
from fakes.anthropic_server import RecordedRequest, verdict
from fakes.generation import default_generation, generated
from fakes.serving import QuietHandler, ScriptedFake, SharedFaults, body_key, question_of

__all__ = [
    "DEFAULT_API_KEY",
    "FALLBACK_SCHEMA_INTRO",
    "KNOWN_MODELS",
    "MALFORMED_SHAPES",
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "body_key",
    "fallback_schema",
    "generated",
    "verdict",
]

DEFAULT_API_KEY = "sk-fake-openai-0123456789abcdef"
# Ollama names models with a tag after a colon: the model endpoints must take it in the path.
KNOWN_MODELS = ("gpt-5-mini", "gpt-4.1-mini", "llama3.1:8b")
# OpenAI's reasoning models refuse ``max_tokens`` (they take ``max_completion_tokens``) and any
# sampling value but the default.
REASONING_MODELS = ("gpt-5-mini",)
SAMPLING_DEFAULTS = {"temperature": 1, "top_p": 1}
CONTEXT_WINDOW_TOKENS = 128_000
PROMPT_CACHE_MINIMUM_TOKENS = 1024
# The line the JSON-in-text fallback's system prompt ends with, before the schema's line.
FALLBACK_SCHEMA_INTRO = "Reply with one JSON object matching this JSON schema:"
CREATED = 1_767_225_600  # 2026-01-01: a fixed ``created`` keeps replies reproducible
REFUSAL_TEXT = "I'm sorry, but I can't help with grading this answer."
UNSUPPORTED_JSON_SCHEMA = "response_format type json_schema is not supported"
RESPONSE_FORMAT_TYPES = ("text", "json_object", "json_schema")
_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# OpenAI's error ``type`` and ``code`` by status, when a fault names none.
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_DEFAULT_MESSAGES = {
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The server is overloaded or not ready yet.",
}


def verdict_text(answer: dict[str, Any]) -> str:
    """A reply's content as the fake writes it (compact JSON)."""
    return json.dumps(answer)


@dataclass(frozen=True)
class Fault(SharedFaults):
    """Something other than a clean answer for one call. Build with the class methods."""

    kind: str
    status_code: int = 200
    message: str = ""
    retry_after: float | None = None
    retry_after_ms: int | None = None
    error_type: str | None = None
    code: str | None = None
    seconds: float = 0.0
    field_name: str = ""
    text: str = ""

    @classmethod
    def status(
        cls,
        code: int,
        message: str = "",
        retry_after: float | None = None,
        *,
        retry_after_ms: int | None = None,
        error_type: str | None = None,
        error_code: str | None = None,
    ) -> Fault:
        """An error status with OpenAI's error body ``{"error": {message, type, param, code}}``.

        ``retry_after`` sends ``retry-after`` (seconds), ``retry_after_ms`` sends
        ``retry-after-ms``; a 429 also carries ``x-ratelimit-*`` headers with nothing left.
        ``error_type``/``error_code`` override the body's ``type``/``code`` (e.g. a quota 429:
        ``error_type="insufficient_quota", error_code="insufficient_quota"``).
        """
        return cls(
            "status",
            status_code=code,
            message=message,
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            error_type=error_type,
            code=error_code,
        )

    @classmethod
    def refusal(cls, text: str = REFUSAL_TEXT) -> Fault:
        """A 200 whose message has ``refusal`` set and ``content`` null."""
        return cls("refusal", text=text)

    @classmethod
    def truncated(cls) -> Fault:
        """A 200 with ``finish_reason`` "length" and the reply's JSON cut in half."""
        return cls("truncated")

    @classmethod
    def content_filter(cls) -> Fault:
        """A 200 with ``finish_reason`` "content_filter" and ``content`` null (Azure)."""
        return cls("content_filter")

    @classmethod
    def malformed(cls, shape: str) -> Fault:
        """A 200 that is not a valid completion (never billed): ``json`` (a body that is not
        JSON), ``html``, ``empty``, ``schema`` (JSON of another shape), ``no_usage``,
        ``usage`` (impossible token counts) or ``no_choices`` (an empty ``choices`` list)."""
        if shape not in MALFORMED_SHAPES:
            raise ValueError(f"unknown malformed shape {shape!r}")
        return cls("malformed", text=shape)

    @classmethod
    def trickle(cls, seconds_per_byte: float) -> Fault:
        """A valid answer whose body arrives one byte every ``seconds_per_byte``."""
        return cls("trickle", seconds=seconds_per_byte)


Response = dict[str, Any] | Fault

MALFORMED_SHAPES = ("json", "html", "empty", "schema", "no_usage", "usage", "no_choices")
# Fault kinds answered with a completion, and so billed.
_BILLED_KINDS = ("text", "missing", "refusal", "truncated", "content_filter")


def _malformed_body(shape: str, completion: dict[str, Any]) -> tuple[bytes, str]:
    """The raw body and content type of a malformed 200 built from a valid ``completion``."""
    if shape == "json":
        return b'{"id": "chatcmpl-fake", "object": "chat.completion", "choices": [', (
            "application/json"
        )
    if shape == "html":
        return b"<html><body>502 Bad Gateway (proxy)</body></html>", "text/html"
    if shape == "empty":
        return b"", "application/json"
    if shape == "schema":
        return json.dumps({"result": "ok", "items": [1, 2]}).encode(), "application/json"
    broken = dict(completion)
    if shape == "no_usage":
        broken.pop("usage")
    elif shape == "no_choices":
        broken["choices"] = []
    else:
        broken["usage"] = {"prompt_tokens": -5, "completion_tokens": 10**30, "total_tokens": 1}
    return json.dumps(broken).encode(), "application/json"


# -- reading a chat-completions request ------------------------------------------------------


def _content_text(message: Any) -> str:
    """The text of one message (a string, or a list of ``text`` parts)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _messages(body: Any) -> list[Any]:
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else []


def _user_message_text(body: Any) -> str | None:
    users = [m for m in _messages(body) if isinstance(m, dict) and m.get("role") == "user"]
    return _content_text(users[-1]) if users else None


def _system_text(body: Any) -> str:
    """The system (or, for newer OpenAI models, developer) messages' text."""
    return "\n".join(
        _content_text(message)
        for message in _messages(body)
        if isinstance(message, dict) and message.get("role") in ("system", "developer")
    )


def fallback_schema(system: str) -> dict[str, Any] | None:
    """The schema a JSON-in-text system prompt ends with, or ``None`` when it has none."""
    # Split on newlines only: a schema written without ASCII escapes may hold U+2028.
    lines = system.rstrip().split("\n")
    for index in range(len(lines) - 2, -1, -1):
        if lines[index].strip() == FALLBACK_SCHEMA_INTRO:
            try:
                schema = json.loads(lines[index + 1])
            except ValueError:
                return None
            return schema if isinstance(schema, dict) else None
    return None


def _schema_and_source(body: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The output schema of a request and where it was found."""
    response_format = body.get("response_format") if isinstance(body, dict) else None
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return (schema, "response_format") if isinstance(schema, dict) else (None, None)
    schema = fallback_schema(_system_text(body))
    return (schema, "system") if schema is not None else (None, None)


def _strict_schema_problem(schema: Any, context: tuple[str, ...] = ()) -> str | None:
    """Why OpenAI's strict structured outputs would refuse ``schema``, or ``None``."""
    if not isinstance(schema, dict):
        return None
    where = f"In context={context!r}"
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return f"{where}, 'additionalProperties' is required to be supplied and to be false."
        missing = [name for name in properties or {} if name not in schema.get("required", [])]
        if missing:
            return (
                f"{where}, 'required' is required to be supplied and to be an array including "
                f"every key in properties. Missing '{missing[0]}'."
            )
    children: list[tuple[tuple[str, ...], Any]] = [
        ((*context, "properties", name), child) for name, child in (properties or {}).items()
    ]
    children.append(((*context, "items"), schema.get("items")))
    for keyword in ("anyOf", "allOf"):
        children += [
            ((*context, keyword, str(i)), s) for i, s in enumerate(schema.get(keyword) or [])
        ]
    for keyword in ("$defs", "definitions"):
        children += [((*context, keyword, n), s) for n, s in (schema.get(keyword) or {}).items()]
    for child_context, child in children:
        problem = _strict_schema_problem(child, child_context)
        if problem is not None:
            return problem
    return None


class _Rejection(Exception):
    """A request the real API would refuse, with OpenAI's error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        error_type: str = "invalid_request_error",
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or _error_body(status, message, error_type, code, param)


def _error_body(
    status: int,
    message: str,
    error_type: str | None = None,
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    default_type, default_code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return {
        "error": {
            "message": message,
            "type": error_type or default_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }


class FakeOpenAIServer(ScriptedFake):
    """A real ThreadingHTTPServer on 127.0.0.1 (port 0) playing the chat-completions API."""

    def __init__(
        self,
        expected_api_key: str = DEFAULT_API_KEY,
        known_models: tuple[str, ...] = KNOWN_MODELS,
    ) -> None:
        self._init_scripts()  # scripts, faults, billing, the lock, the server thread
        self.expected_api_key = expected_api_key
        # Served models; on the Azure route, the deployment names.
        self.known_models = known_models
        self.owned_by = "fake-openai"
        # Extra fields of every model object (e.g. {"max_model_len": 32768} to play vLLM).
        self.model_fields: dict[str, Any] = {}
        self.reasoning_models = REASONING_MODELS
        self.json_schema_supported = True
        self.prompt_caching = False
        self.context_window_tokens = CONTEXT_WINDOW_TOKENS
        self.response_delay_seconds = 0.0
        # Called with each completion request as it arrives, before it is answered; a Fault it
        # returns answers the request instead of the script.
        self.on_request: Callable[[RecordedRequest], Fault | None] | None = None
        self.requests: list[RecordedRequest] = []  # chat completion calls (OpenAI or Azure)
        self.all_requests: list[RecordedRequest] = []  # every HTTP request
        # Completion requests being answered right now, and the most there ever were at once.
        self.in_flight = 0
        self.max_in_flight = 0
        self._cache_written: set[tuple[str, str]] = set()
        self._completion_ids = itertools.count(1)

    def _handler_type(self) -> type[QuietHandler]:
        return _Handler

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def azure_endpoint(self) -> str:
        """The origin, as ``AzureOpenAI(azure_endpoint=...)`` and AZURE_OPENAI_ENDPOINT take it."""
        if self._http is None:
            raise RuntimeError("the fake server is not started")
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """The API root, as ``OpenAI(base_url=...)`` and OPENAI_BASE_URL take it."""
        return f"{self.azure_endpoint}/v1"

    # -- scripting ----------------------------------------------------------------------------

    def script_generation(self, fragment: str, *responses: Response | None) -> None:
        """Queue generator replies for requests whose text (unescaped) contains ``fragment``;
        ``None`` is the default reply; the last one repeats once exhausted."""
        if not responses:
            raise ValueError("script_generation() needs at least one response")
        with self._lock:
            self._generation_scripts[fragment] = deque(responses)
            self._last_generation[fragment] = responses[-1]

    def fail_next(self, *faults: Fault) -> None:
        """Apply ``faults`` to the next completion calls in order, whatever their question."""
        with self._lock:
            self._next_faults.extend(faults)

    def fail_next_free(self, *faults: Fault) -> None:
        """Apply error-status ``faults`` to the next requests that are not completion calls
        (the models endpoints)."""
        with self._lock:
            self._next_free_faults.extend(faults)

    def generation_requests(self) -> list[RecordedRequest]:
        """Recorded generator requests."""
        return [
            request
            for request in self.requests
            if request.user_message is not None and "<chunk source=" in request.user_message
        ]

    def requests_about(self, question: str) -> list[RecordedRequest]:
        """Recorded completion requests whose question is (or contains) ``question``."""
        return [
            request
            for request in self.requests
            if request.question is not None and question in request.question
        ]

    def requests_for(self, role: str, question: str | None = None) -> list[RecordedRequest]:
        """Recorded completion requests playing ``role`` (about ``question``, when given)."""
        return [
            request
            for request in self.requests
            if request.role == role
            and (
                question is None or (request.question is not None and question in request.question)
            )
        ]

    # -- billing ------------------------------------------------------------------------------

    # -- choosing the answer ------------------------------------------------------------------

    def _script_key(self, recorded: RecordedRequest) -> tuple[str, str] | None:
        where = recorded.question
        if where is None and recorded.user_message is not None:
            where = html.unescape(recorded.user_message)
        if where is None:
            return None
        if (recorded.role, where) in self._scripts:
            return (recorded.role, where)
        scripted = [key for key in self._scripts if key[0] == recorded.role]
        return next((key for key in scripted if key[1] in where), None)

    def _default_answer(self, recorded: RecordedRequest) -> dict[str, Any]:
        body = recorded.body if isinstance(recorded.body, dict) else {}
        answer = roles.default_answer(
            recorded.role, body, recorded.user_message or "", _system_text(body)
        )
        return verdict() if answer is None else answer

    def _current_answer(self, recorded: RecordedRequest) -> dict[str, Any]:
        """The answer the request would get now, without using up its script."""
        with self._lock:
            message = recorded.user_message
            if message is not None and "<chunk source=" in message:
                return default_generation(message)
            key = self._script_key(recorded)
            upcoming = [] if key is None else [*self._scripts[key], self._last_scripted[key]]
        scripted = next((item for item in upcoming if isinstance(item, dict)), None)
        return dict(scripted if scripted is not None else self._default_answer(recorded))

    # -- checking a request (called from handler threads) -------------------------------------

    def _check_auth(self, recorded: RecordedRequest) -> None:
        headers = recorded.headers
        if recorded.extra.get("api") == "azure":
            key = headers.get("api-key")
            if key != self.expected_api_key:
                body = {
                    "error": {
                        "code": "401",
                        "message": "Access denied due to invalid subscription key or wrong API "
                        "endpoint. Make sure to provide a valid key for an active subscription "
                        "and use a correct regional API endpoint for your resource.",
                    }
                }
                raise _Rejection(401, "invalid api-key", body=body)
            if not recorded.extra.get("api_version"):
                raise _Rejection(404, "Resource not found", code="404")
            return
        authorization = headers.get("authorization", "")
        key = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else ""
        if key != self.expected_api_key:
            shown = f"{key[:3]}*****{key[-4:]}" if key else "none"
            raise _Rejection(
                401,
                f"Incorrect API key provided: {shown}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
            )

    def _check_model(self, recorded: RecordedRequest, model: Any) -> None:
        if model in self.known_models:
            return
        if recorded.extra.get("api") == "azure":
            body = {
                "error": {
                    "code": "DeploymentNotFound",
                    "message": "The API deployment for this resource does not exist. If you "
                    "created the deployment within the last 5 minutes, please wait a moment "
                    "and try again.",
                }
            }
            raise _Rejection(404, "deployment not found", body=body)
        raise _Rejection(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )

    def _validate(self, recorded: RecordedRequest) -> None:
        self._check_auth(recorded)
        body = recorded.body
        if not isinstance(body, dict):
            raise _Rejection(400, "We could not parse the JSON body of your request.")
        self._check_model(recorded, recorded.extra.get("deployment", body.get("model")))
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _Rejection(400, "[] is too short - 'messages'", param="messages")
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or "role" not in message:
                raise _Rejection(
                    400, f"Missing required parameter: 'messages[{index}].role'.", param="messages"
                )
        if body.get("stream"):
            raise _Rejection(400, "the fake server does not stream", param="stream")
        for name in ("max_tokens", "max_completion_tokens"):
            value = body.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise _Rejection(
                    400, f"Invalid type for '{name}': expected an integer.", param=name
                )
            if isinstance(value, int) and value < 1:
                raise _Rejection(400, f"Invalid '{name}': must be at least 1.", param=name)
        self._check_reasoning_parameters(recorded.extra.get("deployment", body.get("model")), body)
        self._check_response_format(body.get("response_format"))
        self._check_context_window(body)

    def _check_reasoning_parameters(self, model: Any, body: dict[str, Any]) -> None:
        if model not in self.reasoning_models:
            return
        if "max_tokens" in body:
            raise _Rejection(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.",
                param="max_tokens",
                code="unsupported_parameter",
            )
        for name, default in SAMPLING_DEFAULTS.items():
            if name in body and body[name] != default:
                raise _Rejection(
                    400,
                    f"Unsupported value: '{name}' does not support {body[name]!r} with this "
                    f"model. Only the default ({default}) value is supported.",
                    param=name,
                    code="unsupported_value",
                )

    def _check_response_format(self, response_format: Any) -> None:
        if response_format is None:
            return
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind not in RESPONSE_FORMAT_TYPES:
            raise _Rejection(
                400,
                f"Invalid value: {kind!r}. Supported values are: 'text', 'json_object', and "
                "'json_schema'.",
                param="response_format.type",
            )
        if kind != "json_schema":
            return
        if not self.json_schema_supported:
            raise _Rejection(400, UNSUPPORTED_JSON_SCHEMA, param="response_format")
        json_schema = response_format.get("json_schema")
        if not isinstance(json_schema, dict):
            raise _Rejection(
                400,
                "Missing required parameter: 'response_format.json_schema'.",
                param="response_format.json_schema",
            )
        name = json_schema.get("name")
        if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
            raise _Rejection(
                400,
                f"Invalid 'response_format.json_schema.name': {name!r} must match "
                "^[a-zA-Z0-9_-]{1,64}$.",
                param="response_format.json_schema.name",
            )
        schema = json_schema.get("schema")
        if not isinstance(schema, dict):
            raise _Rejection(
                400,
                "Missing required parameter: 'response_format.json_schema.schema'.",
                param="response_format.json_schema.schema",
            )
        problem = _strict_schema_problem(schema) if json_schema.get("strict") else None
        if problem is not None:
            raise _Rejection(
                400,
                f"Invalid schema for response_format '{name}': {problem}",
                param="response_format",
                code="invalid_json_schema",
            )

    def _prompt_tokens(self, body: dict[str, Any]) -> int:
        return sum(len(_content_text(message)) // 4 for message in _messages(body))

    def _check_context_window(self, body: dict[str, Any]) -> None:
        tokens = self._prompt_tokens(body)
        if tokens > self.context_window_tokens:
            raise _Rejection(
                400,
                f"This model's maximum context length is {self.context_window_tokens} tokens. "
                f"However, your messages resulted in {tokens} tokens. Please reduce the length "
                "of the messages.",
                param="messages",
                code="context_length_exceeded",
            )

    # -- replies ------------------------------------------------------------------------------

    def _usage(self, body: dict[str, Any], output_text: str) -> dict[str, Any]:
        prompt_tokens = self._prompt_tokens(body)
        system = _system_text(body)
        cached = 0
        if self.prompt_caching and len(system) // 4 >= PROMPT_CACHE_MINIMUM_TOKENS:
            key = (str(body.get("model")), system)
            with self._lock:
                if key in self._cache_written:
                    cached = len(system) // 4
                else:
                    self._cache_written.add(key)
        completion_tokens = len(output_text) // 4
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def completion(
        self,
        body: dict[str, Any],
        content: str | None,
        *,
        finish_reason: str = "stop",
        refusal: str | None = None,
        model: str | None = None,
    ) -> dict[str, Any]:
        """A ``chat.completion`` object answering ``body`` with ``content``."""
        return {
            "id": f"chatcmpl-fake{next(self._completion_ids):06d}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model or body.get("model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "refusal": refusal,
                        "annotations": [],
                    },
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": self._usage(body, content or refusal or ""),
        }

    def _model_object(self, model_id: str) -> dict[str, Any]:
        return {
            "id": model_id,
            "object": "model",
            "created": CREATED,
            "owned_by": self.owned_by,
            **self.model_fields,
        }

    def _model_list(self) -> dict[str, Any]:
        return {"object": "list", "data": [self._model_object(name) for name in self.known_models]}


def _rate_limit_headers(remaining: int, reset_seconds: float) -> dict[str, str]:
    """OpenAI's ``x-ratelimit-*`` headers."""
    reset = f"{reset_seconds:g}s"
    return {
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": str(remaining),
        "x-ratelimit-reset-requests": reset,
        "x-ratelimit-limit-tokens": "10000000",
        "x-ratelimit-remaining-tokens": str(remaining * 1000),
        "x-ratelimit-reset-tokens": reset,
    }


def _fault_headers(fault: Fault) -> dict[str, str]:
    headers: dict[str, str] = {}
    if fault.status_code == 429:
        reset = fault.retry_after if fault.retry_after is not None else 1.0
        headers.update(_rate_limit_headers(0, reset))
    if fault.retry_after is not None:
        headers["retry-after"] = f"{fault.retry_after:g}"
    if fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    return headers


def _fault_error(fault: Fault) -> dict[str, Any]:
    message = fault.message or _DEFAULT_MESSAGES.get(
        fault.status_code, f"fake {fault.status_code} error"
    )
    return _error_body(fault.status_code, message, fault.error_type, fault.code)


class _Handler(QuietHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without this, Nagle's algorithm and the
    # client's delayed ACK add 40 ms to every answer.
    disable_nagle_algorithm = True

    def _record(self) -> tuple[RecordedRequest, list[str]]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path, _, query = self.path.partition("?")
        parts = [urllib.parse.unquote(part) for part in path.split("/") if part]
        user_message = _user_message_text(body)
        schema, schema_from = _schema_and_source(body)
        extra: dict[str, Any] = {"api": "azure" if parts[:1] == ["openai"] else "openai"}
        extra["schema_from"] = schema_from
        if extra["api"] == "azure":
            extra["api_version"] = urllib.parse.parse_qs(query).get("api-version", [None])[0]
            if parts[1:2] == ["deployments"] and len(parts) >= 3:
                extra["deployment"] = parts[2]
        recorded = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            user_message=user_message,
            question=question_of(user_message),
            role=roles.role_of_schema(schema),
            extra=extra,
        )
        return recorded, parts

    def _handle(self) -> None:
        recorded, parts = self._record()
        fake = self.fake
        is_completion = self.command == "POST" and parts in (
            ["v1", "chat", "completions"],
            ["openai", "deployments", recorded.extra.get("deployment"), "chat", "completions"],
        )
        with fake._lock:
            fake.all_requests.append(recorded)
            if is_completion:
                fake.requests.append(recorded)
        if is_completion:
            self._handle_completion(recorded)
            return
        try:
            fake._check_auth(recorded)
            fault = fake._next_free_fault()
            if fault is not None:
                recorded.served = fault.kind
                self._send_json(
                    recorded, fault.status_code, _fault_error(fault), _fault_headers(fault)
                )
                return
            self._route(recorded, parts)
        except _Rejection as rejection:
            recorded.served = "rejected"
            self._send_json(recorded, rejection.status, rejection.body)

    def _handle_completion(self, recorded: RecordedRequest) -> None:
        fake = self.fake
        override = None
        if fake.on_request is not None:
            # A hook may answer in the script's place (e.g. drop the call it stopped the run at).
            override = fake.on_request(recorded)
        if isinstance(override, Fault):
            self._serve(recorded, override)
            return
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
                self._send_json(recorded, rejection.status, rejection.body)
                return
            self._serve(recorded, fake._next_response(recorded))
        finally:
            with fake._lock:
                fake.in_flight -= 1

    def _route(self, recorded: RecordedRequest, parts: list[str]) -> None:
        fake = self.fake
        models_path = (
            ["v1", "models"] if recorded.extra["api"] == "openai" else ["openai", "models"]
        )
        if self.command == "GET" and parts == models_path:
            recorded.served = "models"
            self._send_json(recorded, 200, fake._model_list())
        elif self.command == "GET" and parts[:2] == models_path and len(parts) == 3:
            fake._check_model(recorded, parts[2])
            recorded.served = "model"
            self._send_json(recorded, 200, fake._model_object(parts[2]))
        else:
            raise _Rejection(404, f"Invalid URL ({self.command} {self.path.partition('?')[0]})")

    def _serve(self, recorded: RecordedRequest, response: Response) -> None:
        fake = self.fake
        body = recorded.body if isinstance(recorded.body, dict) else {}
        model = recorded.extra.get("deployment")
        if isinstance(response, dict):
            recorded.served = "verdict"
            completion = fake.completion(body, verdict_text(response), model=model)
            self._send_json(recorded, 200, completion, bill=body)
            return
        recorded.served = response.kind
        if response.kind == "status":
            self._send_json(
                recorded, response.status_code, _fault_error(response), _fault_headers(response)
            )
        elif response.kind == "drop":
            self.close_connection = True
        elif response.kind == "slow":
            if fake._stopping.wait(response.seconds):
                return
            text = verdict_text(fake._current_answer(recorded))
            self._send_json(recorded, 200, fake.completion(body, text, model=model), bill=body)
        elif response.kind in _BILLED_KINDS:
            completion = self._faulty_completion(recorded, body, response)
            self._send_json(recorded, 200, completion, bill=body)
        elif response.kind == "malformed":
            text = verdict_text(fake._current_answer(recorded))
            completion = fake.completion(body, text, model=model)
            self._send_raw(recorded, *_malformed_body(response.text, completion))
        elif response.kind == "trickle":
            text = verdict_text(fake._current_answer(recorded))
            data = json.dumps(fake.completion(body, text, model=model)).encode("utf-8")
            self._trickle(recorded, data, response.seconds, body)
        else:
            raise ValueError(f"unknown fault kind {response.kind!r}")

    def _faulty_completion(
        self, recorded: RecordedRequest, body: dict[str, Any], fault: Fault
    ) -> dict[str, Any]:
        """The completion of a 200 fault that is still a billed answer."""
        fake = self.fake
        model = recorded.extra.get("deployment")
        if fault.kind == "text":
            return fake.completion(body, fault.text, model=model)
        if fault.kind == "refusal":
            return fake.completion(body, None, refusal=fault.text, model=model)
        if fault.kind == "content_filter":
            return fake.completion(body, None, finish_reason="content_filter", model=model)
        answer = fake._current_answer(recorded)
        if fault.kind == "missing":
            answer.pop(fault.field_name, None)
            return fake.completion(body, verdict_text(answer), model=model)
        text = verdict_text(answer)
        return fake.completion(body, text[: len(text) // 2], finish_reason="length", model=model)

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
        all_headers = _rate_limit_headers(9999, 0.006) if status == 200 else {}
        all_headers.update(headers or {})
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", f"req_fake_{len(self.fake.all_requests):06d}")
            self.send_header("openai-processing-ms", "5")
            for name, value in all_headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            # The client gave up (timed out) before the answer was ready.
            recorded.response_status = None
            self.close_connection = True
