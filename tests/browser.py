"""Headless Chromium for the report's tests and benchmark: ``--dump-dom``, screenshots, and
a small DevTools-protocol client over ``--remote-debugging-pipe`` (no extra dependency).

The browser runs with the network closed (``--host-resolver-rules``: every host name fails
to resolve) and without the background services that would otherwise call home, so any
request the page makes is both refused and recorded (``Page.requests``).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--hide-scrollbars",
    "--mute-audio",
)
WINDOW = (1280, 900)


def chromium_executable() -> str:
    """Debian's ``chromium`` (``scripts/test`` installs it), or ``$RAG_EVAL_CHROMIUM``."""
    configured = os.environ.get("RAG_EVAL_CHROMIUM")
    found = configured or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "Chromium is needed for the report's browser tests: apt-get install chromium "
            "(./scripts/test does it when run as root), or set RAG_EVAL_CHROMIUM to a "
            "Chrome or Chromium executable"
        )
    return found


def _command(profile: Path, *extra: str) -> list[str]:
    return [
        chromium_executable(),
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        *extra,
    ]


def dump_dom(url: str, *, timeout: float = 60.0) -> str:
    """The page's DOM after its scripts ran (Chromium's ``--dump-dom``)."""
    with tempfile.TemporaryDirectory(prefix="rag-eval-chromium-") as profile:
        completed = subprocess.run(
            [*_command(Path(profile)), "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    return completed.stdout


@dataclass
class Page:
    """A tab attached through the DevTools protocol, with what it did since it opened."""

    browser: DevToolsBrowser
    session_id: str
    target_id: str
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    loaded: bool = False

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session_id=self.session_id)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        reply = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (``True`` for an element)."""
        deadline = time.monotonic() + timeout
        probe = (
            f"(() => {{ const value = ({expression}); return value instanceof Node || value; }})()"
        )
        while True:
            value = self.evaluate(probe)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression!r}")
            time.sleep(0.05)

    def html(self) -> str:
        """The DOM as it stands, serialised (works with scripts disabled too)."""
        root = self.send("DOM.getDocument", depth=0)["root"]["nodeId"]
        return self.send("DOM.getOuterHTML", nodeId=root)["outerHTML"]

    def screenshot(self) -> bytes:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        return base64.b64decode(data)

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, browser log errors and dialogs seen so far."""
        return [*self.console_errors, *self.exceptions, *self.log_errors, *self.dialogs]

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target_id})


class DevToolsBrowser:
    """One headless Chromium driven over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="rag-eval-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        command = _command(Path(self._profile.name), "--remote-debugging-pipe", "about:blank")
        # bash puts the two pipe ends on the descriptors Chromium reads and writes (dash
        # cannot redirect from descriptors above 9).
        self.process = subprocess.Popen(
            [
                "bash",
                "-c",
                f'exec "$0" "$@" 3<&{to_browser_read} 4>&{from_browser_write}',
                *command,
            ],
            pass_fds=(to_browser_read, from_browser_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self._pages: dict[str, Page] = {}

    # -- the protocol ---------------------------------------------------------------------------

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise AssertionError(f"{method} failed: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _read(self, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError("Chromium stopped answering on the DevTools pipe")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise AssertionError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def _event(self, message: dict[str, Any]) -> None:
        page = self._pages.get(message.get("sessionId", ""))
        if page is None:
            return
        method = message.get("method")
        params = message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            page.console_errors.append(
                " ".join(str(arg.get("value", arg.get("description"))) for arg in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            page.exceptions.append(
                details.get("exception", {}).get("description") or details.get("text", "")
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            page.log_errors.append(params["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            page.requests.append(params["request"]["url"])
        elif method == "Page.javascriptDialogOpening":
            page.dialogs.append(f"dialog: {params.get('message')}")
            # Answered from the event stream so that a page which opens one cannot hang us.
            message_id = self._next_id + 1000
            os.write(
                self._to_browser,
                json.dumps(
                    {
                        "id": message_id,
                        "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": False},
                        "sessionId": page.session_id,
                    }
                ).encode()
                + b"\0",
            )
        elif method == "Page.loadEventFired":
            page.loaded = True

    def pump(self, page: Page, until: str, timeout: float = 30.0) -> None:
        """Read events until ``until`` holds for the page (``loaded``)."""
        deadline = time.monotonic() + timeout
        while not getattr(page, until):
            if time.monotonic() > deadline:
                raise AssertionError(f"the page did not reach {until!r}")
            self._event(self._read(timeout))

    # -- pages ----------------------------------------------------------------------------------

    def open(self, url: str, size: tuple[int, int] = WINDOW, *, javascript: bool = True) -> Page:
        """A new tab on ``url``, loaded, with console, log and network recorded from the start
        (``javascript=False``: as a reader with scripts turned off sees it)."""
        target_id = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session_id = self.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session_id, target_id)
        self._pages[session_id] = page
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.send(f"{domain}.enable")
        # A tab in the background is never painted; a person looks at the one in front.
        page.send("Page.bringToFront")
        if not javascript:
            page.send("Emulation.setScriptExecutionDisabled", value=True)
        page.send(
            "Emulation.setDeviceMetricsOverride",
            width=size[0],
            height=size[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        page.send("Page.navigate", url=url)
        self.pump(page, "loaded")
        return page

    def close(self) -> None:
        with suppress(AssertionError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()


@contextmanager
def devtools_browser() -> Iterator[DevToolsBrowser]:
    browser = DevToolsBrowser()
    try:
        yield browser
    finally:
        browser.close()
