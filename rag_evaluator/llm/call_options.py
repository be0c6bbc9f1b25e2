"""The options every model-calling command shares, as one record.

Kept apart from the session (which loads the checkpoint store, the cache and the families) so
that the command line can declare its options without loading the pipelines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CallOptions:
    """How a model-calling command calls the model: the command-line options they share."""

    model: str = "sonnet"
    delay_seconds: float | None = None  # None: 0.5 s one call at a time, none when concurrent
    max_retries: int = 6
    timeout_seconds: float = 120.0
    concurrency: int = 1
    batch: bool = False
    batch_poll_seconds: float = 30.0
    use_cache: bool = True
    exact_estimate: bool = False
    max_cost: float | None = None
    checkpoint_dir: Path | None = None
    price: str | None = None  # --price IN/OUT: dollars per million tokens
    jury: str | None = None  # --jury MODEL,MODEL,MODEL (evaluate)
