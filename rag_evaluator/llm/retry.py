"""The one retry policy of every request to the API: how long to wait, how often to try.

Direct calls, the pre-flight check, token counting and every Message Batches request share
it. A transient failure (429, 529, 5xx, 408/409, a timeout, a malformed reply) is tried again
after a capped exponential wait with jitter, never sooner than the ``retry-after`` the API
asked for; ``max_retries`` such failures in a row end the request.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of one request: at most ``max_retries``, waits from ``base_seconds`` doubling
    up to ``max_seconds`` (retry-after included)."""

    max_retries: int = 6
    base_seconds: float = 1.0
    max_seconds: float = 60.0

    def wait_seconds(
        self, retry_number: int, retry_after: float | None, rng: random.Random
    ) -> float:
        """The wait before retry ``retry_number`` (1-based): half to all of the exponential
        step (jitter spreads workers that failed together), at least ``retry_after``."""
        exponential = self.base_seconds * 2 ** (retry_number - 1)
        wait = min(exponential, self.max_seconds) * rng.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.max_seconds)

    def capped(self, retry_after: float | None) -> float | None:
        """The API's retry-after, never longer than the longest wait of the policy."""
        if retry_after is None:
            return None
        return min(retry_after, self.max_seconds)

    def gives_up(self, failures: int) -> bool:
        """Whether ``failures`` transient failures in a row end the request."""
        return failures > self.max_retries
