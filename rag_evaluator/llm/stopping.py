"""Ctrl-C and SIGTERM during the model calls: stop cleanly first, at once only if asked twice.

The first signal only sets the run's stop events: no new call starts, the calls in flight
finish and what they paid for is checkpointed, then the run ends as interrupted. A second
signal raises ``KeyboardInterrupt`` where the main thread is, abandoning the calls in flight.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(*events: threading.Event) -> Iterator[None]:
    """While inside, Ctrl-C or SIGTERM sets ``events``; a second one raises
    ``KeyboardInterrupt``. Outside the main thread signals cannot be caught: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked = threading.Event()

    def handler(signal_number: int, frame: FrameType | None) -> None:
        if asked.is_set():
            raise KeyboardInterrupt
        asked.set()
        for event in events:
            event.set()

    previous = {number: signal.signal(number, handler) for number in _SIGNALS}
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
