"""Reading the fields of a model's structured reply, with a reason when one is unusable.

Structured output makes a schema-conforming reply likely, not certain (a stand-in API, an
older model, a truncated answer): every family parses defensively and raises ``ReplyError``
naming the call and the field, so the row's Error cell says exactly what was wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rag_evaluator.llm.requests import ReplyError


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:40]


def field(payload: Mapping[str, Any], name: str, what: str) -> Any:
    if not isinstance(payload, Mapping):
        raise ReplyError(f"{what}: expected a JSON object, got {_shown(payload)}")
    if name not in payload:
        raise ReplyError(f"{what}: the reply lacks the '{name}' field")
    return payload[name]


def text(payload: Mapping[str, Any], name: str, what: str) -> str:
    value = field(payload, name, what)
    if not isinstance(value, str):
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected text")
    return value.strip()


def items(payload: Mapping[str, Any], name: str, what: str) -> Sequence[Any]:
    value = field(payload, name, what)
    if not isinstance(value, list):
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected a list")
    return value


def texts(payload: Mapping[str, Any], name: str, what: str) -> tuple[str, ...]:
    """A list of strings, stripped, blank ones dropped."""
    values = items(payload, name, what)
    if not all(isinstance(value, str) for value in values):
        raise ReplyError(f"{what}: '{name}' holds something other than text")
    return tuple(value.strip() for value in values if value.strip())


def flag(payload: Mapping[str, Any], name: str, what: str) -> bool:
    value = field(payload, name, what)
    if not isinstance(value, bool):
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected true or false")
    return value


def binary(payload: Mapping[str, Any], name: str, what: str) -> int:
    """An integer 0 or 1 (JSON true/false is not accepted: the schema asks for 0 or 1)."""
    value = field(payload, name, what)
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected 0 or 1")
    return value


def number(payload: Mapping[str, Any], name: str, what: str, low: float, high: float) -> float:
    """A finite number from ``low`` to ``high`` (integers and decimals alike)."""
    value = field(payload, name, what)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ReplyError(
            f"{what}: '{name}' is {_shown(value)}, expected a number from {low:g} to {high:g}"
        )
    return float(value)


def whole_number(payload: Mapping[str, Any], name: str, what: str, low: int, high: int) -> int:
    """An integer from ``low`` to ``high`` (``4.0`` is accepted as 4, ``4.5`` is not)."""
    value = number(payload, name, what, low, high)
    if not value.is_integer():
        raise ReplyError(f"{what}: '{name}' is {value:g}, expected a whole number")
    return int(value)


def optional_whole_number(payload: Mapping[str, Any], name: str, what: str) -> int | None:
    value = payload.get(name) if isinstance(payload, Mapping) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected a number or null")
    if not math.isfinite(value) or not float(value).is_integer():
        raise ReplyError(f"{what}: '{name}' is {_shown(value)}, expected a whole number or null")
    return int(value)


def obj(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ReplyError(f"{what}: expected a JSON object, got {_shown(value)}")
    return value
