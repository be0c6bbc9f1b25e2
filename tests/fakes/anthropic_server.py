"""A stand-in for the Anthropic Messages API: a real HTTP server on 127.0.0.1.

The real SDK reaches it through ``ANTHROPIC_BASE_URL``. It checks requests the way the API
does (auth header, ``anthropic-version``, no sampling parameters, no forced tool choice,
structured output requested), records every request, and answers with scripted verdicts
or injected faults.

    with FakeAnthropicServer() as server:
        server.script("What is X?", verdict(recall=0), Fault.status(529))
        server.fail_next(Fault.drop_connection())
        ...
        server.requests[0].body["model"]
"""

from __future__ import annotations

import html
import itertools
import json
import re
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_API_KEY = "sk-ant-fake-0123456789abcdef"
ACCEPTED_API_VERSIONS = ("2026-10-21",)
KNOWN_MODELS = ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5")
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")

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
_QUESTION_PATTERN = re.compile(r"<question>(.*?)</question>", re.DOTALL)


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
class Fault:
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
    def drop_connection(cls) -> Fault:
        """Read the request, then close the socket without answering."""
        return cls("drop")

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """Answer with the question's current verdict only after ``seconds``."""
        return cls("slow", seconds=seconds)

    @classmethod
    def invalid_json(cls) -> Fault:
        """A 200 whose text is not JSON."""
        return cls("text", text="All three look fine to me: precision 1, recall 1, accuracy 1.")

    @classmethod
    def raw_text(cls, text: str) -> Fault:
        """A 200 whose text block is exactly ``text``."""
        return cls("text", text=text)

    @classmethod
    def missing_field(cls, name: str) -> Fault:
        """A 200 with a verdict lacking the field ``name``."""
        return cls("missing", field_name=name)

    @classmethod
    def refusal(cls) -> Fault:
        """A 200 with ``stop_reason`` "refusal" and no verdict."""
        return cls("refusal")


Response = dict[str, Any] | Fault


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
    served: str = ""  # "verdict", a Fault kind, or "rejected"
    extra: dict[str, Any] = field(default_factory=dict)


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


def _question_of(user_message: str | None) -> str | None:
    if user_message is None:
        return None
    match = _QUESTION_PATTERN.search(user_message)
    return html.unescape(match.group(1)).strip() if match else None


class _Rejection(Exception):
    """A request the real API would refuse."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _QuietHTTPServer(ThreadingHTTPServer):
    """Stays quiet when a client hangs up mid-request (a killed run, a timed-out call)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeAnthropicServer:
    """A real ThreadingHTTPServer on 127.0.0.1 (port 0) playing the Messages API."""

    def __init__(
        self,
        expected_api_key: str = DEFAULT_API_KEY,
        known_models: tuple[str, ...] = KNOWN_MODELS,
    ) -> None:
        self.expected_api_key = expected_api_key
        self.known_models = known_models
        self.response_delay_seconds = 0.0
        # Called with each request as it arrives, before it is answered: lets a test look at
        # the world (e.g. the checkpoint) at the moment the client sends its next call.
        self.on_request: Callable[[RecordedRequest], None] | None = None
        self.requests: list[RecordedRequest] = []
        self._scripts: dict[str, deque[Response]] = {}
        self._last_scripted: dict[str, Response] = {}
        self._next_faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._message_ids = itertools.count(1)
        self._http: _QuietHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._http is None:
            raise RuntimeError("the fake server is not started")
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropicServer:
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._http = _QuietHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        self._http.block_on_close = False
        # A short poll interval keeps stop() (and so every test's teardown) quick.
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting ----------------------------------------------------------------------------

    def script(self, question: str, *responses: Response) -> None:
        """Queue answers for calls about ``question``; the last one repeats once exhausted."""
        if not responses:
            raise ValueError("script() needs at least one response")
        with self._lock:
            self._scripts[question] = deque(responses)
            self._last_scripted[question] = responses[-1]

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

    def _script_key(self, question: str | None) -> str | None:
        if question is None:
            return None
        if question in self._scripts:
            return question
        for key in self._scripts:
            if key in question:
                return key
        return None

    def _next_response(self, question: str | None) -> Response:
        with self._lock:
            if self._next_faults:
                return self._next_faults.popleft()
            key = self._script_key(question)
            if key is None:
                return verdict()
            queue = self._scripts[key]
            return queue.popleft() if queue else self._last_scripted[key]

    def _current_verdict(self, question: str | None) -> dict[str, Any]:
        """The verdict the question would get now, without using up its script."""
        with self._lock:
            key = self._script_key(question)
            if key is None:
                return verdict()
            upcoming = [*self._scripts[key], self._last_scripted[key]]
        return dict(next((item for item in upcoming if isinstance(item, dict)), verdict()))

    # -- request handling (called from handler threads) ---------------------------------------

    def _validate(self, request: RecordedRequest) -> None:
        headers = request.headers
        if request.method != "POST" or request.path.split("?")[0] != "/v1/messages":
            raise _Rejection(404, f"Not found: {request.method} {request.path}")
        key = headers.get("x-api-key")
        authorization = headers.get("authorization", "")
        if authorization.startswith("Bearer "):
            key = authorization.removeprefix("Bearer ")
        if key != self.expected_api_key:
            raise _Rejection(401, "invalid x-api-key")
        version = headers.get("anthropic-version")
        if version not in ACCEPTED_API_VERSIONS:
            raise _Rejection(400, f"anthropic-version: unsupported or missing value {version!r}")
        body = request.body
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
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise _Rejection(400, "max_tokens: Field required")
        if request.user_message is None:
            raise _Rejection(400, "messages: at least one user message is required")
        output_format = (body.get("output_config") or {}).get("format") or {}
        if output_format.get("type") != "json_schema" or not isinstance(
            output_format.get("schema"), dict
        ):
            raise _Rejection(400, "output_config.format: a json_schema format is expected")

    def _usage(self, body: dict[str, Any], output_text: str) -> dict[str, int]:
        input_characters = len(_system_text(body)) + len(_user_message_text(body) or "")
        return {
            "input_tokens": input_characters // 4,
            "output_tokens": len(output_text) // 4,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
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


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropicServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without this, Nagle's algorithm and the
    # client's delayed ACK add 40 ms to every answer.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests`` instead of a server log."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        user_message = _user_message_text(body)
        recorded = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            user_message=user_message,
            question=_question_of(user_message),
        )
        fake = self.fake
        with fake._lock:
            fake.requests.append(recorded)
        if fake.on_request is not None:
            fake.on_request(recorded)
        if fake.response_delay_seconds and fake._stopping.wait(fake.response_delay_seconds):
            return
        try:
            fake._validate(recorded)
        except _Rejection as rejection:
            recorded.served = "rejected"
            self._send_json(
                recorded, rejection.status, _error_body(rejection.status, rejection.message)
            )
            return
        response = fake._next_response(recorded.question)
        self._serve(recorded, body, response)

    def _serve(self, recorded: RecordedRequest, body: dict[str, Any], response: Response) -> None:
        fake = self.fake
        if isinstance(response, dict):
            recorded.served = "verdict"
            self._send_json(recorded, 200, fake._message(body, json.dumps(response)))
            return
        recorded.served = response.kind
        if response.kind == "status":
            message = response.message or f"fake {response.status_code} error"
            headers = {}
            if response.retry_after is not None:
                headers["retry-after"] = f"{response.retry_after:g}"
            self._send_json(
                recorded,
                response.status_code,
                _error_body(response.status_code, message, response.error_type),
                headers,
            )
        elif response.kind == "drop":
            self.close_connection = True
        elif response.kind == "slow":
            if fake._stopping.wait(response.seconds):
                return
            answer = fake._current_verdict(recorded.question)
            self._send_json(recorded, 200, fake._message(body, json.dumps(answer)))
        elif response.kind == "text":
            self._send_json(recorded, 200, fake._message(body, response.text))
        elif response.kind == "missing":
            answer = fake._current_verdict(recorded.question)
            answer.pop(response.field_name, None)
            self._send_json(recorded, 200, fake._message(body, json.dumps(answer)))
        elif response.kind == "refusal":
            self._send_json(recorded, 200, fake._message(body, None, stop_reason="refusal"))
        else:
            raise ValueError(f"unknown fault kind {response.kind!r}")

    def _send_json(
        self,
        recorded: RecordedRequest,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        # Recorded before the answer goes out: once the client has read it, a test may look.
        recorded.response_status = status
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
