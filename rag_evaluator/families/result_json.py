"""Strict readers for family results read back from a checkpoint or the response cache.

A damaged or hand-edited entry must be refused (``ValueError``), never half-read: the caller
then ignores the cache entry or reports the checkpoint as damaged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rag_evaluator.inputs.records import TokenUsage

if TYPE_CHECKING:
    from rag_evaluator.families.base import FamilyResult, JudgedFamily


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


# --- a family result with the fields every family shares -------------------------------------


def usage_to_json(usage: TokenUsage) -> dict[str, int]:
    data = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_creation_input_tokens:
        data["cache_creation_input_tokens"] = usage.cache_creation_input_tokens
    if usage.cache_read_input_tokens:
        data["cache_read_input_tokens"] = usage.cache_read_input_tokens
    return data


def dollars(value: Any) -> float:
    kind = type(value)
    if (kind is not float and kind is not int) or not 0 <= value < float("inf"):
        raise ValueError("costs must be finite numbers of at least 0")
    return float(value)


def usage_from_json(data: Any) -> TokenUsage:
    if len(data) == 2:  # no cache tokens: the usual line
        return TokenUsage(count(data["input_tokens"]), count(data["output_tokens"]))
    return TokenUsage(
        count(data["input_tokens"]),
        count(data["output_tokens"]),
        count(data.get("cache_creation_input_tokens", 0)),
        count(data.get("cache_read_input_tokens", 0)),
    )


def family_result_to_json(family: JudgedFamily[Any], result: FamilyResult) -> dict[str, Any]:
    """A family's result with the fields every family shares, as checkpoint/cache JSON.

    Compact: fields at their default (no error, not cached) are left out.
    """
    data: dict[str, Any] = {
        "usage": usage_to_json(result.usage),
        "calls": result.calls,
        "cost_usd": result.cost_usd,
        "result": family.to_json(result),
    }
    if result.retries:
        data["retries"] = result.retries
    if result.error is not None:
        data["error"] = result.error
        data["failure"] = result.failure
    if result.cached:
        data["cached"] = True
    return data


def family_result_from_json(family: JudgedFamily[Any], data: Any) -> FamilyResult:
    """Read what ``family_result_to_json`` wrote; raises KeyError/TypeError/ValueError."""
    if type(data) is not dict:
        raise ValueError("a family result must be an object")
    cached = data.get("cached", False)
    if type(cached) is not bool:
        raise ValueError("cached must be true or false")
    return family.from_json(
        data["result"],
        usage=usage_from_json(data["usage"]),
        calls=count(data["calls"]),
        cost_usd=dollars(data.get("cost_usd", 0.0)),
        retries=count(data.get("retries", 0)),
        error=optional_text(data.get("error")),
        failure=optional_text(data.get("failure")),
        cached=cached,
    )
