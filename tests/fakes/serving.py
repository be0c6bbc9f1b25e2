"""What the fake API servers share: a quiet threaded HTTP server, the scripting of replies
(queues per role and question, faults for the next calls, generator replies), billing by
request body, and a request handler's raw and trickled replies.

Each fake (``anthropic_server``, ``openai_server``) adds its own routes, request shapes,
authentication and default answers.
"""

from __future__ import annotations

import html
import json
import re
import sys
import threading
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from fakes import roles
from fakes.generation import default_generation

QUESTION_PATTERN = re.compile(r"<question>(.*?)</question>", re.DOTALL)


class SharedFaults:
    """The faults both fake APIs play alike; each server's ``Fault`` dataclass (fields
    ``kind``, ``seconds``, ``field_name``, ``text``) adds its own error statuses."""

    @classmethod
    def drop_connection(cls) -> Self:
        """Read the request, then close the socket without answering."""
        return cls("drop")  # type: ignore[call-arg]

    @classmethod
    def slow(cls, seconds: float) -> Self:
        """Answer with the question's current reply only after ``seconds``."""
        return cls("slow", seconds=seconds)  # type: ignore[call-arg]

    @classmethod
    def invalid_json(cls) -> Self:
        """A 200 whose answer text is not JSON."""
        return cls(  # type: ignore[call-arg]
            "text", text="All three look fine to me: precision 1, recall 1, accuracy 1."
        )

    @classmethod
    def raw_text(cls, text: str) -> Self:
        """A 200 whose answer text is exactly ``text``."""
        return cls("text", text=text)  # type: ignore[call-arg]

    @classmethod
    def missing_field(cls, name: str) -> Self:
        """A 200 with the current reply lacking the field ``name``."""
        return cls("missing", field_name=name)  # type: ignore[call-arg]


def body_key(body: Any) -> str:
    """A request body as the billing counter knows it."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def question_of(user_message: str | None) -> str | None:
    """The question a judging request's user message is about, unescaped."""
    if user_message is None:
        return None
    match = QUESTION_PATTERN.search(user_message)
    return html.unescape(match.group(1)).strip() if match else None


class QuietHTTPServer(ThreadingHTTPServer):
    """Stays quiet when a client hangs up mid-request (a killed run, a timed-out call)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ScriptedFake:
    """A fake API server's life cycle, scripts and billing; subclasses call ``_init_scripts``
    in their ``__init__`` and say which handler answers (``_handler_type``)."""

    def _init_scripts(self) -> None:
        # Billed answers by request body.
        self.billed: Counter[str] = Counter()
        # Scripts by (role, key): the key is found in the question (or the user message).
        self._scripts: dict[tuple[str, str], deque[Any]] = {}
        self._last_scripted: dict[tuple[str, str], Any] = {}
        # Generator replies by a fragment of the chunk text they are about.
        self._generation_scripts: dict[str, deque[Any]] = {}
        self._last_generation: dict[str, Any] = {}
        self._next_faults: deque[Any] = deque()
        # Faults for the next requests to the free endpoints.
        self._next_free_faults: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._http: QuietHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _handler_type(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _script_key(self, recorded: Any) -> tuple[str, str] | None:
        raise NotImplementedError

    def _default_answer(self, recorded: Any) -> dict[str, Any]:
        raise NotImplementedError

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        handler = type("_BoundHandler", (self._handler_type(),), {"fake": self})
        self._http = QuietHTTPServer(("127.0.0.1", 0), handler)
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting ----------------------------------------------------------------------------

    def script(self, question: str, *responses: Any) -> None:
        """Queue the judge's answers for calls about ``question``; the last one repeats once
        exhausted."""
        self.script_role(roles.JUDGE, question, *responses)

    def script_role(self, role: str, key: str, *responses: Any) -> None:
        """Queue answers for ``role``'s calls whose question (or, lacking one, whose user
        message) contains ``key``; the last one repeats once exhausted."""
        if not responses:
            raise ValueError("script_role() needs at least one response")
        if role not in (roles.JUDGE, *roles.ROLES):
            raise ValueError(f"unknown role {role!r}")
        with self._lock:
            self._scripts[(role, key)] = deque(responses)
            self._last_scripted[(role, key)] = responses[-1]

    def _generation_response(self, user_message: str) -> Any:
        """A generator request's reply (called with the lock held)."""
        text = html.unescape(user_message)
        for fragment, queue in self._generation_scripts.items():
            if fragment in text:
                response = queue.popleft() if queue else self._last_generation[fragment]
                return default_generation(user_message) if response is None else response
        return default_generation(user_message)

    def _next_free_fault(self) -> Any:
        with self._lock:
            return self._next_free_faults.popleft() if self._next_free_faults else None

    def _next_response(self, recorded: Any) -> Any:
        with self._lock:
            if self._next_faults:
                return self._next_faults.popleft()
            message = recorded.user_message
            if message is not None and "<chunk source=" in message:
                return self._generation_response(message)
            key = self._script_key(recorded)
            if key is None:
                return self._default_answer(recorded)
            queue = self._scripts[key]
            return queue.popleft() if queue else self._last_scripted[key]

    # -- billing ------------------------------------------------------------------------------

    def bill(self, body: Any) -> None:
        with self._lock:
            self.billed[body_key(body)] += 1

    def billed_total(self) -> int:
        with self._lock:
            return sum(self.billed.values())

    def paid_twice(self, expected: Counter[str] | None = None) -> list[str]:
        """Bodies billed more often than ``expected`` says (by default: than once)."""
        with self._lock:
            return [
                body
                for body, count in self.billed.items()
                if count > (expected[body] if expected is not None else 1)
            ]


class QuietHandler(BaseHTTPRequestHandler):
    """A fake's request handler: no server log, every method to ``_handle``, and the raw and
    trickled 200s both fakes send."""

    fake: Any  # the ScriptedFake it serves (bound in ``ScriptedFake.start``)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests`` instead of a server log."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        raise NotImplementedError

    def _send_raw(self, recorded: Any, data: bytes, content_type: str) -> None:
        """A 200 with exactly ``data`` as its body (a malformed reply: not billed)."""
        recorded.response_status = 200
        try:
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            recorded.response_status = None
            self.close_connection = True

    def _trickle(self, recorded: Any, data: bytes, interval: float, body: Any) -> None:
        """A 200 whose body comes one byte at a time; billed only if all of it was sent."""
        recorded.response_status = 200
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            for index in range(len(data)):
                if self.fake._stopping.wait(interval):
                    return
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
        except OSError:
            recorded.response_status = None
            self.close_connection = True
            return
        self.fake.bill(body)
