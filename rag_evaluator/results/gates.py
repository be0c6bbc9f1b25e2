"""``evaluate --fail-under`` / ``--fail-over``: the rates and means a run must reach (a CI gate).

``--fail-under precision=0.8,rouge1=0.5`` asks that the judge's precision rate (over scored
questions) be at least 0.8 and the mean rouge1 at least 0.5; ``--fail-over dont_know=0.1``
that the share of answers giving up be at most 0.1. Each metric declares whether higher or
lower is better, and takes the bound of its direction only: a minimum on a lower-is-better
metric (or a maximum on a higher-is-better one) would pass a worse run, so it is a usage
error naming the other option. Names match the metric columns in any case, with ``_``, ``-``
and spaces ignored. A value is a number from 0 to 1, or a percentage (``80%``). A metric
with no scored question fails its threshold: nothing shows that it was met.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_evaluator.errors import UsageError
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.inputs.fields import column_key
from rag_evaluator.offline.registry import LOWER_IS_BETTER, TEXT_COLUMNS

OPTION = "--fail-under"
UPPER_OPTION = "--fail-over"
_VALUE = re.compile(r"(?P<number>[0-9]*\.?[0-9]+)(?P<percent>%?)")


@dataclass(frozen=True)
class Threshold:
    """The worst acceptable rate or mean of one metric, named as the user typed it: a minimum
    (``--fail-under``), or with ``upper`` a maximum (``--fail-over``)."""

    name: str
    limit: float
    upper: bool = False

    @property
    def option(self) -> str:
        return UPPER_OPTION if self.upper else OPTION

    def missed_by(self, value: float | None) -> bool:
        """Whether ``value`` fails this threshold (reaching the limit exactly passes)."""
        if value is None:
            return True
        return value > self.limit if self.upper else value < self.limit


@dataclass(frozen=True)
class ThresholdFailure:
    """A metric past its threshold; ``value`` is ``None`` when nothing was scored."""

    metric: str
    limit: float
    value: float | None
    upper: bool = False


def parse_thresholds(raw: str | None, *, upper: bool = False) -> tuple[Threshold, ...]:
    """Parse ``precision=0.8,rouge1=0.5`` (minimums, or maximums with ``upper``); a
    ``UsageError`` names any bad item and the fix."""
    if raw is None or not raw.strip():
        return ()
    option = UPPER_OPTION if upper else OPTION
    bound = "maximum" if upper else "minimum"
    thresholds: list[Threshold] = []
    seen: set[str] = set()
    example = "dont_know=0.1" if upper else "precision=0.8,rouge1=0.5"
    for item in raw.split(","):
        text = item.strip()
        if not text:
            continue
        name, separator, value = (part.strip() for part in text.partition("="))
        if not separator or not name or not value:
            raise UsageError(
                f"{option} item {text!r} is not metric=value. Write for example {example}"
            )
        found = _VALUE.fullmatch(value)
        if found is None:
            raise UsageError(
                f"{option} {name}={value}: {value!r} is not a number. Give a {bound} from 0 to "
                f"1 (or a percentage such as 80%), e.g. {example}"
            )
        limit = float(found["number"]) / (100 if found["percent"] else 1)
        if not 0 <= limit <= 1 or not math.isfinite(limit):
            raise UsageError(
                f"{option} {name}={value} is outside 0 to 1. Rates and scores run from 0 to 1; "
                "write 0.8 or 80% for 80 percent"
            )
        key = column_key(name)
        if key in seen:
            raise UsageError(f"{option} names {name} twice. Give each metric one {bound}")
        seen.add(key)
        thresholds.append(Threshold(name, limit, upper))
    return tuple(thresholds)


def resolve_thresholds(
    thresholds: Sequence[Threshold],
    computed: Sequence[str],
    lower_is_better: Collection[str] = (),
) -> dict[str, Threshold]:
    """Map each threshold to the metric column it names; a ``UsageError`` for a metric the
    run does not compute, or for a bound against the metric's direction (``lower_is_better``
    names the computed metrics where lower is better). Raised before any question is
    scored or any call made."""
    resolved, missing = _by_metric(thresholds, computed)
    for metric, threshold in resolved.items():
        if threshold.upper != (metric in lower_is_better):
            raise UsageError(_wrong_direction(threshold, metric))
    if missing:
        listed = ", ".join(computed) or "none"
        options = sorted({threshold.option for threshold in missing})
        raise UsageError(
            f"{' and '.join(options)} name{'s' if len(options) == 1 else ''} "
            f"{', '.join(threshold.name for threshold in missing)}, which this run does not "
            f"compute (it computes: {listed}). Add the metric's family to --metrics, or "
            f"remove it from {' and '.join(options)}"
        )
    return resolved


def _by_metric(
    thresholds: Sequence[Threshold], computed: Sequence[str]
) -> tuple[dict[str, Threshold], list[Threshold]]:
    """The thresholds by the metric column they name, and those naming none."""
    by_key = {column_key(name): name for name in computed}
    resolved: dict[str, Threshold] = {}
    missing: list[Threshold] = []
    for threshold in thresholds:
        metric = by_key.get(column_key(threshold.name))
        if metric is None:
            missing.append(threshold)
        else:
            resolved[metric] = threshold
    return resolved, missing


def _wrong_direction(threshold: Threshold, metric: str) -> str:
    given = f"{threshold.option} {threshold.name}={threshold.limit:g}"
    if threshold.upper:
        return (
            f"{given}: higher is better for {metric}, so a maximum would fail a better run. "
            f"Give it a minimum instead: {OPTION} {threshold.name}={threshold.limit:g}"
        )
    return (
        f"{given}: lower is better for {metric}, so a minimum would let a worse run pass. "
        f"Give it a maximum instead: {UPPER_OPTION} {threshold.name}={threshold.limit:g}"
    )


def computed_metrics(
    families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
) -> list[str]:
    """The metric names a run computes: each judged family's metrics, then offline columns
    (not the text ones, such as Quality Failures)."""
    offline = [name for name in metric_columns if name not in TEXT_COLUMNS]
    return [*(name for family in families for name in family.metric_columns), *offline]


def lower_is_better_metrics(
    families: Sequence[JudgedFamily[Any]], metric_columns: Sequence[str]
) -> frozenset[str]:
    """Those of a run's metrics (see ``computed_metrics``) where lower is better, as the
    judged families and the offline metric definitions declare them."""
    judged = (name for family in families for name in family.lower_is_better_columns)
    offline = (name for name in metric_columns if name in LOWER_IS_BETTER)
    return frozenset((*judged, *offline))


@dataclass(frozen=True)
class ThresholdCheck:
    """One gate as the run checked it: the metric column it names, the threshold as given,
    the metric's rate or mean (``None`` when nothing was scored) and whether it passed."""

    metric: str
    threshold: Threshold
    value: float | None
    passed: bool


def check_thresholds(
    thresholds: Sequence[Threshold], observed: Mapping[str, float | None]
) -> list[ThresholdCheck]:
    """Every threshold checked against the run's metrics (reaching a limit exactly passes),
    in the order given.

    The thresholds were resolved against the run's metrics before it started; one naming no
    observed metric is a ``UsageError`` here too."""
    resolved, missing = _by_metric(thresholds, list(observed))
    if missing:
        resolve_thresholds(missing, list(observed))
    return [
        ThresholdCheck(
            metric, threshold, observed[metric], not threshold.missed_by(observed[metric])
        )
        for metric, threshold in resolved.items()
    ]


def failed_thresholds(
    thresholds: Sequence[Threshold], observed: Mapping[str, float | None]
) -> list[ThresholdFailure]:
    """The metrics past their limit (see ``check_thresholds``), in the order given."""
    return failures_of(check_thresholds(thresholds, observed))


def failures_of(checks: Sequence[ThresholdCheck]) -> list[ThresholdFailure]:
    """The checks that failed, as the gate's failures."""
    return [
        ThresholdFailure(check.metric, check.threshold.limit, check.value, check.threshold.upper)
        for check in checks
        if not check.passed
    ]


def describe_failures(failures: Sequence[ThresholdFailure], results_path: str) -> str:
    """One line naming every metric past its threshold, minimums first."""
    parts = []
    for upper, heading in ((False, f"Below {OPTION}"), (True, f"above {UPPER_OPTION}")):
        failed = [failure for failure in failures if failure.upper == upper]
        if failed:
            parts.append(f"{heading}: {'; '.join(_failure_text(f) for f in failed)}")
    text = "; ".join(parts)
    return f"{text[0].upper()}{text[1:]}. The results are written to {results_path}"


def _failure_text(failure: ThresholdFailure) -> str:
    bound = "maximum" if failure.upper else "minimum"
    if failure.value is None:
        return f"{failure.metric} has no scored question ({bound} {failure.limit:g})"
    sign = ">" if failure.upper else "<"
    return f"{failure.metric} {failure.value:.4f} {sign} {failure.limit:g}"
