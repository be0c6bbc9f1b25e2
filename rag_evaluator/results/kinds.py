"""What kind of values a metric holds, declared once per metric and stated in results files.

A metric is **binary** (0/1 outcomes: a rate, summarised with Wilson's interval, compared
with McNemar's test) or **continuous** (scores: a mean, the bootstrap); a continuous metric
may declare its range (every metric of the tool lies in 0-1). The offline metrics declare
theirs in ``offline/registry.py``, the model-judged families on their class
(``JudgedFamily.rate_columns``). A results file states the kinds of its metric columns in one
``#SUMMARY: Metric Kinds:`` row, ``name=kind`` pairs joined by ``; ``::

    #SUMMARY: Metric Kinds: Precision=binary; rouge1=continuous 0 to 1; my_score=continuous

so that a reader never has to guess a kind from how cells are printed (``0.0000``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

# The summary row stating the kinds of a results file's metric columns.
METRIC_KINDS = "Metric Kinds"
_PAIR_SEPARATOR = "; "
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_CONTINUOUS = re.compile(rf"continuous(?: ({_NUMBER}) to ({_NUMBER}))?")


class MetricKind(Enum):
    """How a metric's values are compared: 0/1 outcomes or numbers."""

    BINARY = "binary"
    CONTINUOUS = "continuous"


@dataclass(frozen=True)
class MetricScale:
    """A metric's kind and the range its values lie in (``None``: not bounded)."""

    kind: MetricKind
    low: float | None = 0.0
    high: float | None = 1.0

    @property
    def binary(self) -> bool:
        return self.kind is MetricKind.BINARY

    def text(self) -> str:
        """``binary``, ``continuous 0 to 1`` or ``continuous`` (no declared range)."""
        if self.binary:
            return MetricKind.BINARY.value
        if self.low is None or self.high is None:
            return MetricKind.CONTINUOUS.value
        return f"{MetricKind.CONTINUOUS.value} {_number(self.low)} to {_number(self.high)}"

    def range_text(self) -> str | None:
        """``0–1`` for messages, ``None`` without a range."""
        if self.low is None or self.high is None:
            return None
        return f"{_number(self.low)}–{_number(self.high)}"

    def holds(self, value: float) -> bool:
        """Whether ``value`` is one this metric can take."""
        if not math.isfinite(value):
            return False
        if self.binary:
            return value in (0.0, 1.0)
        if self.low is not None and value < self.low:
            return False
        return self.high is None or value <= self.high

    def json(self) -> dict[str, object]:
        """``{"kind": "binary", "range": [0, 1]}``; the range is ``null`` when unbounded."""
        bounds = None if self.low is None or self.high is None else [self.low, self.high]
        if bounds is not None:
            bounds = [int(end) if float(end).is_integer() else end for end in bounds]
        return {"kind": self.kind.value, "range": bounds}


# A 0/1 outcome (a rate) and a 0-1 score: every metric of the tool is one of the two.
RATE = MetricScale(MetricKind.BINARY, 0.0, 1.0)
SCORE = MetricScale(MetricKind.CONTINUOUS, 0.0, 1.0)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def scale_from_text(text: str) -> MetricScale | None:
    """The scale a declaration spells (``binary``, ``continuous 0 to 1``); ``None`` if none."""
    value = text.strip()
    if value == MetricKind.BINARY.value:
        return RATE
    found = _CONTINUOUS.fullmatch(value)
    if found is None:
        return None
    if found.group(1) is None:
        return MetricScale(MetricKind.CONTINUOUS, None, None)
    return MetricScale(MetricKind.CONTINUOUS, float(found.group(1)), float(found.group(2)))


def declaration_text(scales: Mapping[str, MetricScale]) -> str:
    """The value of the ``Metric Kinds`` summary row: ``name=kind`` pairs in column order."""
    return _PAIR_SEPARATOR.join(f"{name}={scale.text()}" for name, scale in scales.items())


def parse_declaration(value: str) -> dict[str, MetricScale]:
    """The scales a ``Metric Kinds`` row declares; a pair it cannot read is left out (the
    column is then read as if undeclared)."""
    scales: dict[str, MetricScale] = {}
    for pair in value.split(_PAIR_SEPARATOR.strip()):
        name, separator, kind = pair.strip().rpartition("=")
        scale = scale_from_text(kind) if separator else None
        if name.strip() and scale is not None:
            scales[name.strip()] = scale
    return scales


def declared_scales(summary: Iterable[tuple[str, str]]) -> dict[str, MetricScale]:
    """The scales a results file's summary rows declare (none in files older than the row)."""
    for label, value in summary:
        if label == METRIC_KINDS:
            return parse_declaration(value)
    return {}
