"""``evaluate --fail-under``: minimum rates and means a run must reach (a CI gate).

``precision=0.8,rouge1=0.5`` asks that the judge's precision rate (over scored questions)
be at least 0.8 and the mean rouge1 at least 0.5. Names match the metric columns in any
case, with ``_``, ``-`` and spaces ignored. A value is a number from 0 to 1, or a
percentage (``80%``). A metric with no scored question fails its threshold: nothing
shows that it was met.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.core.fields import column_key
from rag_evaluator.core.metrics.registry import TEXT_COLUMNS
from rag_evaluator.core.tasks.base import JudgedFamily
from rag_evaluator.errors import UsageError

OPTION = "--fail-under"
_VALUE = re.compile(r"(?P<number>[0-9]*\.?[0-9]+)(?P<percent>%?)")


@dataclass(frozen=True)
class Threshold:
    """The lowest acceptable rate or mean of one metric, named as the user typed it."""

    name: str
    minimum: float


@dataclass(frozen=True)
class ThresholdFailure:
    """A metric below its threshold; ``value`` is ``None`` when nothing was scored."""

    metric: str
    minimum: float
    value: float | None


def parse_thresholds(raw: str | None) -> tuple[Threshold, ...]:
    """Parse ``precision=0.8,rouge1=0.5``; a ``UsageError`` names any bad item and the fix."""
    if raw is None or not raw.strip():
        return ()
    thresholds: list[Threshold] = []
    seen: set[str] = set()
    example = "precision=0.8,rouge1=0.5"
    for item in raw.split(","):
        text = item.strip()
        if not text:
            continue
        name, separator, value = (part.strip() for part in text.partition("="))
        if not separator or not name or not value:
            raise UsageError(
                f"{OPTION} item {text!r} is not metric=value. Write for example {example}"
            )
        found = _VALUE.fullmatch(value)
        if found is None:
            raise UsageError(
                f"{OPTION} {name}={value}: {value!r} is not a number. Give a minimum from 0 to "
                f"1 (or a percentage such as 80%), e.g. {example}"
            )
        minimum = float(found["number"]) / (100 if found["percent"] else 1)
        if not 0 <= minimum <= 1 or not math.isfinite(minimum):
            raise UsageError(
                f"{OPTION} {name}={value} is outside 0 to 1. Rates and scores run from 0 to 1; "
                "write 0.8 or 80% for 80 percent"
            )
        key = column_key(name)
        if key in seen:
            raise UsageError(f"{OPTION} names {name} twice. Give each metric one minimum")
        seen.add(key)
        thresholds.append(Threshold(name, minimum))
    return tuple(thresholds)


def resolve_thresholds(
    thresholds: Sequence[Threshold], computed: Sequence[str]
) -> dict[str, Threshold]:
    """Map each threshold to the metric column it names; a ``UsageError`` for a metric the
    run does not compute (raised before any question is scored or any call made)."""
    by_key = {column_key(name): name for name in computed}
    resolved: dict[str, Threshold] = {}
    missing: list[str] = []
    for threshold in thresholds:
        metric = by_key.get(column_key(threshold.name))
        if metric is None:
            missing.append(threshold.name)
        else:
            resolved[metric] = threshold
    if missing:
        listed = ", ".join(computed) or "none"
        raise UsageError(
            f"{OPTION} names {', '.join(missing)}, which this run does not compute (it "
            f"computes: {listed}). Add the metric's family to --metrics, or remove it from "
            f"{OPTION}"
        )
    return resolved


def computed_metrics(
    families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
) -> list[str]:
    """The metric names a run computes: each judged family's metrics, then offline columns
    (not the text ones, such as Quality Failures)."""
    offline = [name for name in metric_columns if name not in TEXT_COLUMNS]
    return [*(name for family in families for name in family.metric_columns), *offline]


def failed_thresholds(
    thresholds: Sequence[Threshold], observed: Mapping[str, float | None]
) -> list[ThresholdFailure]:
    """The metrics below their minimum (equal passes), in the order the user gave them."""
    resolved = resolve_thresholds(thresholds, list(observed))
    failures = []
    for metric, threshold in resolved.items():
        value = observed[metric]
        if value is None or value < threshold.minimum:
            failures.append(ThresholdFailure(metric, threshold.minimum, value))
    return failures


def describe_failures(failures: Sequence[ThresholdFailure], results_path: str) -> str:
    """One line naming every metric below its threshold."""
    parts = [
        f"{failure.metric} has no scored question (minimum {failure.minimum:g})"
        if failure.value is None
        else f"{failure.metric} {failure.value:.4f} < {failure.minimum:g}"
        for failure in failures
    ]
    return f"Below {OPTION}: {'; '.join(parts)}. The results are written to {results_path}"
