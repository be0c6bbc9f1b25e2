"""What the report's templates ask of Python: the table's column widths and its numeric
columns' style, the filter menu's groups, the comparison table's lines as shown, and the
data the page's script reads. Pure: numbers and wording, no markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_evaluator.compare.comparison import LOWER_IS_BETTER
from rag_evaluator.report.charts import IntervalPlot, interval_plot
from rag_evaluator.report.comparison import RunComparisonView
from rag_evaluator.report.model import (
    BINARY,
    CONTEXTS,
    CONTINUOUS,
    FLAGS,
    LABELS,
    LONG,
    NUMBER,
    TEXT,
    FilterOption,
    ReportModel,
    RunView,
)
from rag_evaluator.results.run_scores import MetricKind

# Question links listed per diagnostic; the table's filter shows every flagged question.
LINKS_SHOWN = 200
# Rows per chunk of the table, and the height a chunk reserves before it is first laid out.
# Each chunk is a ``content-visibility: auto`` block with the same fixed column widths, so
# the browser lays out only the chunks on screen: one table of 5,000 rows costs seconds of
# layout on every pass while the page loads; chunks cost nothing until seen.
CHUNK_ROWS = 200
ROW_HEIGHT_PX = 58

_WIDTHS_EM = {NUMBER: 3.6, BINARY: 2.4, CONTINUOUS: 4.6, LABELS: 6.5, FLAGS: 7.5, CONTEXTS: 3.6}
_LONG_WIDTHS_EM = {"Question": 16.0, "Ground Truth": 18.0, "Answer": 22.0, "Reasoning": 20.0}
_NUMERIC_ROLES = (NUMBER, BINARY, CONTINUOUS, CONTEXTS)


def _column_width(name: str, role: str, cells: Iterable[str]) -> float:
    if role == LONG:
        return _LONG_WIDTHS_EM.get(name, 16.0)
    if role == TEXT:
        longest = max((len(cell) for cell in cells), default=0)
        return min(max(longest * 0.55 + 1.2, len(name) * 0.6 + 1.2, 3.6), 14.0)
    return _WIDTHS_EM.get(role, 6.0)


@dataclass(frozen=True)
class TableLayout:
    """The fixed widths (em) of a run's columns, and of the whole table."""

    widths: tuple[float, ...]
    total: float


def table_layout(run: RunView) -> TableLayout:
    widths = tuple(
        _column_width(column.name, column.role, (row.cells[position] for row in run.rows))
        for position, column in enumerate(run.columns)
    )
    return TableLayout(widths, sum(widths))


def table_style(run: RunView) -> str:
    """CSS that right-aligns the run's numeric columns (the first, ``#``, stays as it is)."""
    numeric = [
        f"#w{run.index} td:nth-child({position + 1})"
        for position, column in enumerate(run.columns)
        if column.role in _NUMERIC_ROLES and position > 0
    ]
    if not numeric:
        return ""
    return (
        ",".join(numeric)
        + "{text-align:right;font-variant-numeric:tabular-nums;padding-left:3px;padding-right:4px}"
    )


def filter_groups(
    options: Sequence[FilterOption],
) -> list[tuple[str, list[FilterOption]]]:
    """The filter menu's groups in the order they first appear, each with its options."""
    groups: dict[str, list[FilterOption]] = {}
    for option in options:
        groups.setdefault(option.group, []).append(option)
    return list(groups.items())


@dataclass(frozen=True)
class ComparisonLine:
    """One metric's row of the comparison table, as shown."""

    name: str
    count: int
    before: str
    after: str
    change: str
    interval: str
    plot: IntervalPlot
    p_value: str
    holm_p_value: str
    verdict: str
    tone: str  # "better", "worse" or "" (a CSS class)


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _format_value(value: float, binary: bool) -> str:
    return _percent(value) if binary else f"{value:.4f}"


def _format_change(value: float, binary: bool) -> str:
    return f"{value * 100:+.1f} pts" if binary else f"{value:+.4f}"


def _format_p(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _plot_scales(view: RunComparisonView) -> dict[MetricKind, float]:
    """Per kind of metric, the largest distance from 0 of a difference or interval end: the
    plots of one kind share their axis."""
    metrics = view.comparison.metrics
    return {
        kind: max(
            (
                max(abs(m.difference), abs(m.interval.low), abs(m.interval.high))
                if m.interval
                else abs(m.difference)
                for m in metrics
                if m.kind is kind
            ),
            default=1.0,
        )
        for kind in MetricKind
    }


def comparison_lines(view: RunComparisonView) -> list[ComparisonLine]:
    scales = _plot_scales(view)
    lines = []
    for metric in view.comparison.metrics:
        binary = metric.kind is MetricKind.BINARY
        low, high = (metric.interval.low, metric.interval.high) if metric.interval else (None, None)
        interval = (
            "n/a"
            if low is None or high is None
            else f"{_format_change(low, binary)} to {_format_change(high, binary)}"
        )
        good = None if metric.verdict not in ("better", "worse") else metric.verdict == "better"
        counts = metric.counts
        if binary and counts is not None:
            before = (
                f"{counts.baseline_successes}/{counts.total} ({_percent(metric.baseline_value)})"
            )
            after = f"{counts.run_successes}/{counts.total} ({_percent(metric.run_value)})"
        else:
            before = _format_value(metric.baseline_value, binary)
            after = _format_value(metric.run_value, binary)
        lines.append(
            ComparisonLine(
                name=metric.metric + (" (lower is better)" if metric.lower_is_better else ""),
                count=metric.paired_count,
                before=before,
                after=after,
                change=_format_change(metric.difference, binary),
                interval=interval,
                plot=interval_plot(metric.difference, low, high, scales[metric.kind], good),
                p_value=_format_p(metric.p_value),
                holm_p_value=_format_p(metric.holm_p_value),
                verdict=metric.verdict,
                tone=metric.verdict if good is not None else "",
            )
        )
    return lines


def script_data(model: ReportModel) -> dict[str, object]:
    """What the page's script reads: per run its label, its columns with their roles, the
    metric columns where lower is better, and whether it has contexts."""
    return {
        "runs": [
            {
                "label": run.label,
                "columns": [[column.name, column.role] for column in run.columns],
                "lower": [
                    position
                    for position, column in enumerate(run.columns)
                    if column.role in (BINARY, CONTINUOUS)
                    and column.name.casefold() in LOWER_IS_BETTER
                ],
                "contexts": run.has_contexts,
            }
            for run in model.runs
        ]
    }
