"""The run-wide limits on calls to the model: pacing and concurrency, and the spending cap.

Each is a small thread-safe object the judge client consults around every call, so that the
main judge, its consensus votes and every other model-judged family share them:

- ``CallLimiter``: at most ``max_in_flight`` calls at once, call starts at least ``spacing``
  seconds apart, and a run-wide pause when the API says to slow down. A 429 or 529 halves the
  number of calls allowed in flight (never below one) and pauses every worker for the
  ``retry-after`` the API asked for; each run of successes as long as the current limit grows
  it again by one, up to ``max_in_flight`` (additive increase, multiplicative decrease).
- ``SpendingCap``: ``--max-cost``. Before a call, the cost spent so far (by every session of
  the run: a resumed run starts from what its checkpoint says was spent) plus the estimated
  cost of the calls in flight and of this one must stay within the budget; otherwise the call
  is refused with ``BudgetExhaustedError`` and the run stops cleanly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rag_evaluator.errors import BudgetExhaustedError, RunStoppedError
from rag_evaluator.text.money import format_usd

logger = logging.getLogger(__name__)

# How often a waiting worker wakes up to see whether the run was stopped.
_STOP_POLL_SECONDS = 0.1
# The spacing of a sequential run when --delay is not given (the spec's fixed pacing).
SEQUENTIAL_DELAY_SECONDS = 0.5
DELAY_HELP = (
    "Minimum seconds between the starts of two calls. Default: 0.5 with --concurrency 1; "
    "with more, none: the API's rate-limit signals (retry-after, adaptive back-off) pace the run."
)


def call_spacing(delay_seconds: float | None, concurrency: int) -> float:
    """The spacing between call starts: ``--delay`` when given, else the sequential run's
    0.5 s, and none for a concurrent run (a fixed spacing would cap it at 2 calls a second
    whatever ``--concurrency`` says; rate limits slow it down instead)."""
    if delay_seconds is not None:
        return delay_seconds
    return SEQUENTIAL_DELAY_SECONDS if concurrency <= 1 else 0.0


class CallLimiter:
    """Concurrency, spacing between call starts, and adaptive back-off on rate limits."""

    def __init__(
        self,
        max_in_flight: int = 1,
        spacing_seconds: float = 0.0,
        *,
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.max_in_flight = max_in_flight
        self.spacing_seconds = max(0.0, spacing_seconds)
        self.stop = stop or threading.Event()
        self._clock = clock
        self._condition = threading.Condition()
        self._limit = max_in_flight
        self._in_flight = 0
        self._last_start: float | None = None
        self._paused_until = 0.0
        self._successes_at_limit = 0

    @property
    def limit(self) -> int:
        """How many calls may be in flight right now (shrinks on rate limits)."""
        with self._condition:
            return self._limit

    def acquire(self) -> None:
        """Wait for a turn to start a call; raises ``RunStoppedError`` once the run stops."""
        with self._condition:
            while True:
                if self.stop.is_set():
                    raise RunStoppedError("the run is stopping")
                now = self._clock()
                wait = self._paused_until - now
                if self._last_start is not None:
                    wait = max(wait, self._last_start + self.spacing_seconds - now)
                if self._in_flight < self._limit and wait <= 0:
                    self._in_flight += 1
                    self._last_start = now
                    return
                timeout = _STOP_POLL_SECONDS if wait <= 0 else min(wait, _STOP_POLL_SECONDS)
                self._condition.wait(timeout)

    def release(self, *, throttled: bool = False, retry_after: float | None = None) -> None:
        """End a call. ``throttled``: the API said 429/529 (slow the whole run down)."""
        with self._condition:
            self._in_flight -= 1
            if throttled:
                previous = self._limit
                self._limit = max(1, self._limit // 2)
                self._successes_at_limit = 0
                if retry_after is not None and retry_after > 0:
                    self._paused_until = max(self._paused_until, self._clock() + retry_after)
                if self._limit != previous:
                    logger.info(
                        "rate limited: at most %d call(s) in flight (was %d)", self._limit, previous
                    )
            else:
                self._successes_at_limit += 1
                if self._limit < self.max_in_flight and self._successes_at_limit >= self._limit:
                    self._limit += 1
                    self._successes_at_limit = 0
            self._condition.notify_all()

    def wait(self, seconds: float) -> None:
        """Sleep between retries, waking early (with ``RunStoppedError``) if the run stops."""
        if self.stop.wait(max(0.0, seconds)):
            raise RunStoppedError("the run is stopping")


@dataclass
class _Spend:
    spent: float = 0.0
    reserved: float = 0.0


class SpendingCap:
    """``--max-cost``: refuse a call that could take the run's spending past the budget."""

    def __init__(self, budget_usd: float | None, already_spent_usd: float = 0.0) -> None:
        self.budget_usd = budget_usd
        self._lock = threading.Lock()
        self._spend = _Spend(spent=already_spent_usd)

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._spend.spent

    def reserve(self, estimated_usd: float) -> float:
        """Book ``estimated_usd`` for a call about to start; returns the amount to settle."""
        with self._lock:
            if self.budget_usd is not None:
                committed = self._spend.spent + self._spend.reserved
                if committed + estimated_usd > self.budget_usd:
                    raise self._exhausted()
            self._spend.reserved += estimated_usd
            return estimated_usd

    def exhausted(self) -> BudgetExhaustedError:
        """The budget stop, saying what has been spent by now."""
        with self._lock:
            return self._exhausted()

    def _exhausted(self) -> BudgetExhaustedError:
        budget = format_usd(self.budget_usd or 0.0)
        spent = format_usd(self._spend.spent)
        return BudgetExhaustedError(
            f"Stopped before the next call: it would take the spending past the --max-cost "
            f"budget of {budget} ({spent} spent by this run so far, resumed sessions "
            "included): run the same command again with a higher --max-cost to go on"
        )

    def settle(self, reserved_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call really cost."""
        with self._lock:
            self._spend.reserved = max(0.0, self._spend.reserved - reserved_usd)
            self._spend.spent += actual_usd
