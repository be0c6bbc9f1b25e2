"""Strict readers for family results read back from a checkpoint or the response cache.

A damaged or hand-edited entry must be refused (``ValueError``), never half-read: the caller
then ignores the cache entry or reports the checkpoint as damaged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("expected text")


def optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError("expected text or null")


def flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")


def optional_flag(value: Any) -> bool | None:
    return None if value is None else flag(value)


def count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("expected a whole number of at least 0")
    return value


def optional_count(value: Any) -> int | None:
    return None if value is None else count(value)


def number(value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ValueError(f"expected a number from {low:g} to {high:g}")
    return float(value)


def optional_unit(value: Any) -> float | None:
    """A score on 0-1, or null."""
    return None if value is None else number(value, 0.0, 1.0)


def texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError("expected a list of texts")
    return tuple(text(item) for item in value)


def choice(value: Any, choices: Sequence[str]) -> str:
    if isinstance(value, str) and value in choices:
        return value
    raise ValueError(f"expected one of {', '.join(choices)}")


def optional_choice(value: Any, choices: Sequence[str]) -> str | None:
    return None if value is None else choice(value, choices)


def pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """``[["faithfulness", "reason"], …]`` as a tuple of pairs."""
    if not isinstance(value, list):
        raise ValueError("expected a list of pairs")
    result = []
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError("expected a list of pairs")
        result.append((text(pair[0]), text(pair[1])))
    return tuple(result)


def whole(value: Any, low: float, high: float) -> int:
    """A whole number from ``low`` to ``high``."""
    result = number(value, low, high)
    if not result.is_integer():
        raise ValueError("expected a whole number")
    return int(result)


def optional_whole(value: Any, low: float, high: float) -> int | None:
    return None if value is None else whole(value, low, high)
