"""The report's charts as geometry: stacked bars, mean bars, histograms, the consensus chart
and the comparison's interval plot. No charting library, no script: the template
``templates/charts.html`` draws each as one inline ``<svg>`` from these numbers (its texts
escaped by the template); colours come from the page's CSS classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.report.distributions import ConsensusSummary, Histogram
from rag_evaluator.report.model import FAIL, NONE, PASS, Segment


def svg_number(value: float) -> str:
    """A coordinate, short: ``12.5``, ``0``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def share(count: int, total: int) -> str:
    """``count`` as a whole percentage of ``total`` (``0%`` of nothing)."""
    return f"{count / total:.0%}" if total else "0%"


@dataclass(frozen=True)
class BarPart:
    """One coloured part of a bar: where it starts and how wide it is, with its hover text."""

    tone: str
    x: float
    width: float
    title: str


def stacked_parts(segments: Sequence[Segment]) -> tuple[BarPart, ...]:
    """The parts of a 100-wide bar split by ``segments``; none when every count is 0."""
    total = sum(segment.count for segment in segments)
    parts = []
    offset = 0.0
    for segment in segments:
        if segment.count == 0:
            continue
        width = 100.0 * segment.count / total
        title = f"{segment.label}: {segment.count} ({share(segment.count, total)})"
        parts.append(BarPart(segment.tone, offset, width, title))
        offset += width
    return tuple(parts)


@dataclass(frozen=True)
class MeanBar:
    """A 0–100 track: the interval's band (start, width) and the mean's marker (its x)."""

    band: tuple[float, float] | None
    marker: float | None


def mean_bar(value: float | None, bounds: tuple[float, float] | None) -> MeanBar:
    """A 0–1 value and its interval on a 0–100 track (values outside 0–1 are not marked)."""
    band = None
    if bounds is not None:
        low = min(max(bounds[0], 0.0), 1.0) * 100
        high = min(max(bounds[1], 0.0), 1.0) * 100
        band = (low, max(high - low, 0.5))
    marker = value * 100 - 0.75 if value is not None and 0.0 <= value <= 1.0 else None
    return MeanBar(band, marker)


@dataclass(frozen=True)
class HistogramBar:
    """A bar as drawn (a gap of 1 either side) with its count's label above it, and the
    range of values it counts."""

    x: float
    y: float
    width: float
    height: float
    label_x: float
    label_y: float
    low: float
    high: float
    last: bool
    count: int
    title: str


@dataclass(frozen=True)
class HistogramChart:
    """A histogram laid out in a ``width`` × ``height`` box: bars above an axis at
    ``axis_y``, the range's ends labelled, the mean's dashed line at ``mean_x``."""

    width: float
    height: float
    axis_y: float
    bars: tuple[HistogramBar, ...]
    low: float
    high: float
    mean_x: float | None


_HISTOGRAM_WIDTH, _HISTOGRAM_HEIGHT, _HISTOGRAM_BOTTOM, _HISTOGRAM_TOP = 240.0, 80.0, 14.0, 12.0


def histogram_chart(chart: Histogram) -> HistogramChart:
    """Bars of a metric's distribution; each bar carries its range for the table filter."""
    width, height = _HISTOGRAM_WIDTH, _HISTOGRAM_HEIGHT
    plot = height - _HISTOGRAM_BOTTOM - _HISTOGRAM_TOP
    tallest = max((bin_.count for bin_ in chart.bins), default=0) or 1
    step = width / max(len(chart.bins), 1)
    bars = []
    for position, bin_ in enumerate(chart.bins):
        bar_height = plot * bin_.count / tallest
        closing = "]" if bin_.last else ")"
        title = f"{chart.column} in [{bin_.low:.2f}, {bin_.high:.2f}{closing}: {bin_.count}"
        bars.append(
            HistogramBar(
                x=position * step + 1,
                y=_HISTOGRAM_TOP + plot - bar_height,
                width=step - 2,
                height=max(bar_height, 0.0),
                label_x=position * step + step / 2,
                label_y=_HISTOGRAM_TOP - 2 + plot - bar_height,
                low=bin_.low,
                high=bin_.high,
                last=bin_.last,
                count=bin_.count,
                title=title,
            )
        )
    low = chart.bins[0].low if chart.bins else 0.0
    high = chart.bins[-1].high if chart.bins else 1.0
    mean_x = (chart.mean - low) / (high - low) * width if high > low else None
    return HistogramChart(width, height, _HISTOGRAM_TOP + plot, tuple(bars), low, high, mean_x)


@dataclass(frozen=True)
class ConsensusRow:
    """One judge metric's row: its label's baseline ``y`` and its bar's coloured parts (with
    what each counts); an empty track when no hedged question was voted on."""

    metric: str
    y: float
    parts: tuple[BarPart, ...]
    overturned: int


@dataclass(frozen=True)
class ConsensusChart:
    width: float
    height: float
    label_width: float
    bar_width: float
    rows: tuple[ConsensusRow, ...]


_CONSENSUS_PARTS = (("pass", "unanimous (3–0)"), ("l2", "split (2–1)"))


def consensus_chart(summary: ConsensusSummary) -> ConsensusChart:
    """Per judge metric, how the three votes of hedged questions split, and how often the
    majority overturned the first verdict."""
    row_height, width, label_width = 22.0, 300.0, 70.0
    bar_width = width - label_width - 70.0
    rows = []
    for position, split in enumerate(summary.splits):
        total = split.unanimous + split.split
        parts = []
        offset = label_width
        for count, (tone, what) in zip(
            (split.unanimous, split.split), _CONSENSUS_PARTS, strict=True
        ):
            if total and count:
                part = bar_width * count / total
                parts.append(BarPart(tone, offset, part, f"{split.metric}: {what}: {count}"))
                offset += part
        rows.append(
            ConsensusRow(split.metric, 4 + position * row_height, tuple(parts), split.overturned)
        )
    height = row_height * max(len(summary.splits), 1) + 4
    return ConsensusChart(width, height, label_width, bar_width, tuple(rows))


@dataclass(frozen=True)
class IntervalPlot:
    """A forest-plot row on a 120-wide axis centred on 0: the interval's ends (if any) and
    the difference's dot, in the tone of the verdict."""

    tone: str
    line: tuple[float, float] | None
    dot: float


INTERVAL_WIDTH, INTERVAL_HEIGHT = 120.0, 14.0


def interval_plot(
    difference: float, low: float | None, high: float | None, scale: float, good: bool | None
) -> IntervalPlot:
    """A difference and its interval on a symmetric axis around 0, ``scale`` at either end.

    ``good`` colours it: True better, False worse, None not significant.
    """
    scale = scale or 1.0

    def x(value: float) -> float:
        half = INTERVAL_WIDTH / 2
        return half + max(min(value / scale, 1.0), -1.0) * (half - 4)

    tone = NONE if good is None else (PASS if good else FAIL)
    line = (x(low), x(high)) if low is not None and high is not None else None
    return IntervalPlot(tone, line, x(difference))
