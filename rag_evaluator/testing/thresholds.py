"""The thresholds of a ``rag_eval.check``: ``{"rougeL": 0.5, "dont_know<=": 0.1}``.

A name alone, or ending in ``>=``, is a minimum (``--fail-under``); a name ending in ``<=`` a
maximum (``--fail-over``). Values are numbers from 0 to 1 or percentages (``"80%"``), read by
the gates' own parser, so a check and ``rag-eval evaluate`` accept the same thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.fields import column_key
from rag_evaluator.results.gates import Threshold, parse_thresholds

MINIMUM_SUFFIX = ">="
MAXIMUM_SUFFIX = "<="
_EXAMPLE = '{"rougeL": 0.5, "dont_know<=": 0.1}'


def _value_text(name: str, value: object) -> str:
    # bool is an int: True would silently mean a limit of 1.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UsageError(
            f"thresholds[{name!r}] is {type(value).__name__}, not a limit. Give a number from "
            f"0 to 1 or a percentage such as '80%', e.g. {_EXAMPLE}"
        )
    if isinstance(value, str):
        return value.strip()
    # Positional digits: the gates' parser reads no exponent (1e-05).
    return f"{Decimal(repr(float(value))):f}" if math.isfinite(value) else str(value)


def parse_check_thresholds(thresholds: Mapping[str, object] | None) -> tuple[Threshold, ...]:
    """The thresholds of a check, minimums and maximums in the order given; a ``UsageError``
    names a bad entry and the fix."""
    if thresholds is None:
        return ()
    if not isinstance(thresholds, Mapping):
        raise UsageError(
            f"thresholds= takes a mapping of metric to limit (got "
            f"{type(thresholds).__name__}), e.g. {_EXAMPLE}"
        )
    parsed: list[Threshold] = []
    seen: set[str] = set()
    for raw_name, value in thresholds.items():
        name = str(raw_name).strip()
        upper = name.endswith(MAXIMUM_SUFFIX)
        metric = name.removesuffix(MAXIMUM_SUFFIX).removesuffix(MINIMUM_SUFFIX).strip()
        if not metric or any(mark in metric for mark in "=,<>"):
            raise UsageError(
                f"thresholds key {raw_name!r} is not a metric name. Write the metric, followed "
                f"by <= for a maximum, e.g. {_EXAMPLE}"
            )
        if column_key(metric) in seen:
            raise UsageError(f"thresholds name {metric} twice. Give each metric one limit")
        seen.add(column_key(metric))
        parsed += parse_thresholds(f"{metric}={_value_text(name, value)}", upper=upper)
    return tuple(parsed)
