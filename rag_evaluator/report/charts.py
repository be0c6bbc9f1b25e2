"""The report's charts as inline SVG: stacked bars, mean bars, histograms, the consensus
chart and the comparison's interval plot. No charting library, no script: each chart is
one ``<svg>`` string whose every text is escaped; colours come from the page's CSS classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rag_evaluator.report.distributions import ConsensusSummary, Histogram
from rag_evaluator.report.model import Segment


def _number(value: float) -> str:
    """A coordinate, short: ``12.5``, ``0``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _share(count: int, total: int) -> str:
    return f"{count / total:.0%}" if total else "0%"


def stacked_bar(segments: Sequence[Segment], label: str) -> str:
    """A 100%-wide bar split by ``segments`` (each with a hover title)."""
    total = sum(segment.count for segment in segments)
    parts = [
        f'<svg class="sb" viewBox="0 0 100 6" preserveAspectRatio="none" role="img" '
        f'aria-label="{escape(label)}">'
    ]
    if total == 0:
        parts.append('<rect class="track" width="100" height="6"/>')
    offset = 0.0
    for segment in segments:
        if segment.count == 0:
            continue
        width = 100.0 * segment.count / total
        title = f"{segment.label}: {segment.count} ({_share(segment.count, total)})"
        parts.append(
            f'<rect class="{escape(segment.tone)}" x="{_number(offset)}" '
            f'width="{_number(width)}" height="6"><title>{escape(title)}</title></rect>'
        )
        offset += width
    parts.append("</svg>")
    return "".join(parts)


def mean_bar(value: float | None, bounds: tuple[float, float] | None) -> str:
    """A 0–1 track with the mean marked and its interval shaded."""
    parts = [
        '<svg class="mb" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">',
        '<rect class="track" y="3" width="100" height="4" rx="2"/>',
    ]
    if bounds is not None:
        low = min(max(bounds[0], 0.0), 1.0) * 100
        high = min(max(bounds[1], 0.0), 1.0) * 100
        parts.append(
            f'<rect class="band" x="{_number(low)}" y="2" width="{_number(max(high - low, 0.5))}" '
            'height="6" rx="2"/>'
        )
    if value is not None and 0.0 <= value <= 1.0:
        parts.append(
            f'<rect class="mk" x="{_number(value * 100 - 0.75)}" width="1.5" height="10"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram_svg(chart: Histogram, run_index: int) -> str:
    """Bars of a metric's distribution; each bar carries its range for the table filter."""
    width, height, bottom = 240.0, 80.0, 14.0
    plot = height - bottom - 12.0
    tallest = max((bin_.count for bin_ in chart.bins), default=0) or 1
    step = width / max(len(chart.bins), 1)
    name = escape(chart.column)
    parts = [
        f'<svg class="hist" viewBox="0 0 {_number(width)} {_number(height)}" role="img" '
        f'aria-label="{name}: distribution of {chart.count} values">'
    ]
    for position, bin_ in enumerate(chart.bins):
        bar_height = plot * bin_.count / tallest
        x = position * step
        closing = "]" if bin_.last else ")"
        title = f"{chart.column} in [{bin_.low:.2f}, {bin_.high:.2f}{closing}: {bin_.count}"
        parts.append(
            f'<rect class="hb" x="{_number(x + 1)}" y="{_number(12 + plot - bar_height)}" '
            f'width="{_number(step - 2)}" height="{_number(max(bar_height, 0.0))}" '
            f'data-r="{run_index}" data-c="{chart.column_index}" data-lo="{bin_.low!r}" '
            f'data-hi="{bin_.high!r}" data-l="{int(bin_.last)}">'
            f"<title>{escape(title)}</title></rect>"
        )
        if bin_.count:
            parts.append(
                f'<text x="{_number(x + step / 2)}" y="{_number(10 + plot - bar_height)}" '
                f'text-anchor="middle">{bin_.count}</text>'
            )
    low = chart.bins[0].low if chart.bins else 0.0
    high = chart.bins[-1].high if chart.bins else 1.0
    parts.append(
        f'<line class="axis" x1="0" x2="{_number(width)}" y1="{_number(12 + plot)}" '
        f'y2="{_number(12 + plot)}"/>'
        f'<text x="0" y="{_number(height - 3)}">{low:g}</text>'
        f'<text x="{_number(width)}" y="{_number(height - 3)}" text-anchor="end">{high:g}</text>'
    )
    if high > low:
        mean_x = (chart.mean - low) / (high - low) * width
        parts.append(
            f'<line class="mean" x1="{_number(mean_x)}" x2="{_number(mean_x)}" y1="8" '
            f'y2="{_number(12 + plot)}"><title>mean {chart.mean:.4f}</title></line>'
        )
    parts.append("</svg>")
    return "".join(parts)


def consensus_svg(summary: ConsensusSummary) -> str:
    """Per judge metric, how the three votes of hedged questions split, and how often the
    majority overturned the first verdict."""
    row_height = 22.0
    width = 300.0
    label_width = 70.0
    bar_width = width - label_width - 70.0
    height = row_height * max(len(summary.splits), 1) + 4
    parts = [
        f'<svg class="cons" viewBox="0 0 {_number(width)} {_number(height)}" role="img" '
        f'aria-label="How the consensus votes split">'
    ]
    for position, split in enumerate(summary.splits):
        y = 4 + position * row_height
        total = split.unanimous + split.split
        parts.append(f'<text x="0" y="{_number(y + 12)}">{escape(split.metric)}</text>')
        offset = label_width
        for count, tone, what in (
            (split.unanimous, "pass", "unanimous (3–0)"),
            (split.split, "l2", "split (2–1)"),
        ):
            if not total or not count:
                continue
            part = bar_width * count / total
            parts.append(
                f'<rect class="{tone}" x="{_number(offset)}" y="{_number(y + 2)}" '
                f'width="{_number(part)}" height="13"><title>{escape(split.metric)}: '
                f"{escape(what)}: {count}</title></rect>"
            )
            offset += part
        if not total:
            parts.append(
                f'<rect class="track" x="{_number(label_width)}" y="{_number(y + 2)}" '
                f'width="{_number(bar_width)}" height="13"/>'
            )
        parts.append(
            f'<text x="{_number(label_width + bar_width + 6)}" y="{_number(y + 12)}">'
            f"{split.overturned} overturned</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def interval_svg(
    difference: float, low: float | None, high: float | None, scale: float, good: bool | None
) -> str:
    """A difference and its interval on a symmetric axis around 0 (a forest-plot row).

    ``good`` colours it: True better, False worse, None not significant.
    """
    width, height = 120.0, 14.0
    scale = scale or 1.0

    def x(value: float) -> float:
        return width / 2 + max(min(value / scale, 1.0), -1.0) * (width / 2 - 4)

    tone = "none" if good is None else ("pass" if good else "fail")
    parts = [
        f'<svg class="fp" viewBox="0 0 {_number(width)} {_number(height)}" aria-hidden="true">',
        f'<line class="axis" x1="{_number(width / 2)}" x2="{_number(width / 2)}" y1="0" '
        f'y2="{_number(height)}"/>',
    ]
    if low is not None and high is not None:
        parts.append(
            f'<line class="w {tone}" x1="{_number(x(low))}" x2="{_number(x(high))}" y1="7" y2="7"/>'
        )
    parts.append(f'<circle class="{tone}" cx="{_number(x(difference))}" cy="7" r="3"/>')
    parts.append("</svg>")
    return "".join(parts)
