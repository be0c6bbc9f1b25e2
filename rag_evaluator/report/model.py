"""What the HTML report shows, as plain data: facts, cards, histograms, diagnostics, tables.

``build_report_model`` takes the results files as read (``RunTable``) and returns a
``ReportModel`` that the templates render (``html.py``); nothing here knows HTML. Columns are
read generically, as compare reads them (``results/run_scores.py``): binary and continuous
metric columns get cards, histograms and filters; short categorical columns (labels such
as ``CORRECT``/``WRONG``/``DONT_KNOW``, letter grades) get distributions; every other
column is shown as text. With two or more runs the comparison is ``compare_runs``' own
(the statistics are not computed again here).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_evaluator.compare.comparison import LOWER_IS_BETTER, RunComparison
from rag_evaluator.inputs.fields import (
    GROUND_TRUTH,
    QUESTION,
    QUESTION_NUMBER,
    RAG_ANSWER,
    column_key,
)
from rag_evaluator.report.comparison import ComparisonView, RunTexts, comparison_view
from rag_evaluator.report.contexts import ContextsData, RunContexts, contexts_data
from rag_evaluator.report.diagnostics import (
    DIAGNOSTIC_RULES,
    DiagnosticResult,
    DiagnosticRule,
    QuestionEvidence,
    run_diagnostics,
)
from rag_evaluator.report.distributions import (
    ConsensusSummary,
    Histogram,
    consensus_summary,
    histogram,
)
from rag_evaluator.results.kinds import METRIC_KINDS
from rag_evaluator.results.run_scores import (
    CONSENSUS,
    ERROR,
    JUDGE_METRICS,
    NON_METRIC_COLUMNS,
    NOTE,
    REASONING,
    VOTES,
    MetricKind,
    RunScores,
    TableRow,
    build_run_scores,
    is_offline_metric,
)

# A column is a label column (shown as a distribution) when it is no metric and every value
# is short: at most this many distinct values, characters and words.
LABEL_MAX_DISTINCT = 12
LABEL_MAX_CHARACTERS = 32
LABEL_MAX_WORDS = 3
# A text column whose longest cell is longer than this is folded in the table.
LONG_TEXT_CHARACTERS = 60

# Column roles in the per-question table.
NUMBER = "number"
LONG = "long"
TEXT = "text"
BINARY = "binary"
CONTINUOUS = "continuous"
LABELS = "labels"
FLAGS = "flags"
CONTEXTS = "contexts"
METRIC_ROLES = (BINARY, CONTINUOUS)

FLAGS_COLUMN = "Flags"
CONTEXTS_COLUMN = "Contexts"

# Tones of chart segments: CSS classes of the page (assets/report.css).
PASS = "pass"
FAIL = "fail"
NONE = "none"
_PASS_LABELS = frozenset({"correct", "pass", "passed", "yes", "true", "met", "good"})
_FAIL_LABELS = frozenset({"wrong", "incorrect", "fail", "failed", "no", "false", "notmet", "bad"})
# How a binary card names its empty cells.
UNSCORED = "unscored"
NOT_APPLICABLE = "not applicable"
_NONE_LABELS = frozenset({"dontknow", "unknown", "na", "none", "unscored", "skipped"})

_INTERVAL_TEXT = re.compile(r"\[(\d+% CI [^\]]*)\]")
_RESULTS_NAME = re.compile(r"(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})(?:_\d+)?$")


@dataclass(frozen=True)
class RunTable:
    """One results file as read: its summary rows and its table.

    ``summary_values`` holds the summary values with their numbers parsed (rates, means,
    interval bounds), as ``results/writer.summary_value_json`` gives them.
    """

    label: str
    source: str
    headers: Sequence[str]
    rows: Sequence[TableRow]
    summary: Sequence[tuple[str, str]] = ()
    summary_values: Mapping[str, Any] = field(default_factory=dict)
    run_date: str | None = None
    contexts: RunContexts | None = None


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar: a label, its count and its tone (a CSS class)."""

    label: str
    count: int
    tone: str


@dataclass(frozen=True)
class MetricCard:
    """A metric's headline figure with its interval and the bar beneath it."""

    column: str
    kind: str  # binary, continuous or labels
    headline: str
    detail: str
    interval: str | None = None  # "95% CI 69–97%", as the results file carries it
    bounds: tuple[float, float] | None = None
    value: float | None = None  # the rate or mean
    segments: tuple[Segment, ...] = ()
    lower_is_better: bool = False
    metadata: bool = False  # a metadata column's distribution, not a metric


@dataclass(frozen=True)
class Column:
    name: str
    role: str


@dataclass(frozen=True)
class RowView:
    """One question's row: the cell texts in column order and what the filters read."""

    question_number: int
    cells: tuple[str, ...]
    unscored: bool
    consensus: bool
    changes: tuple[str, ...] = ()  # "w3"/"b3": got worse/better than the baseline on column 3


@dataclass(frozen=True)
class FilterOption:
    value: str
    label: str
    count: int
    group: str


@dataclass(frozen=True)
class RunView:
    index: int
    label: str
    source: str
    run_date: str | None
    baseline: bool
    facts: tuple[tuple[str, str], ...]
    cards: tuple[MetricCard, ...]
    histograms: tuple[Histogram, ...]
    consensus: ConsensusSummary | None
    diagnostics: tuple[DiagnosticResult, ...]
    columns: tuple[Column, ...]
    rows: tuple[RowView, ...]
    empty_columns: tuple[str, ...]
    filters: tuple[FilterOption, ...]
    has_contexts: bool


@dataclass(frozen=True)
class ReportModel:
    title: str
    generated_at: str
    tool_version: str
    runs: tuple[RunView, ...]
    comparison: ComparisonView | None
    contexts: ContextsData | None
    rules: tuple[DiagnosticRule, ...] = DIAGNOSTIC_RULES


_TRAILING_ZEROS = re.compile(r"^([+-]?\d+)(?:\.0*|(\.\d*?)0+)$")


def compact_number(text: str) -> str:
    """A metric cell as shown: trailing zeros dropped (``1.0000`` -> ``1``, ``0.5000`` ->
    ``0.5``), the value unchanged; anything else as it is."""
    stripped = text.strip()
    found = _TRAILING_ZEROS.match(stripped)
    if found is None:
        return stripped
    return found.group(1) + (found.group(2) or "")


def run_date_from_name(stem: str) -> str | None:
    """``2026-11-23 01:44:12`` from a results file name ``precision_scores_20261123_014412``."""
    found = _RESULTS_NAME.search(stem)
    if found is None:
        return None
    year, month, day, hour, minute, second = found.groups()
    return f"{year}-{month}-{day} {hour}:{minute}:{second}"


def is_label_column(cells: Sequence[str]) -> bool:
    """Whether a non-metric column holds labels (few short distinct values)."""
    values = [cell.strip() for cell in cells if cell.strip()]
    if not values:
        return False
    distinct = set(values)
    return len(distinct) <= LABEL_MAX_DISTINCT and all(
        len(value) <= LABEL_MAX_CHARACTERS and len(value.split()) <= LABEL_MAX_WORDS
        for value in distinct
    )


def label_tone(label: str, position: int) -> str:
    """The colour of a label's segment: pass/fail/none for known words, else a palette slot."""
    key = column_key(label)
    if key in _PASS_LABELS:
        return PASS
    if key in _FAIL_LABELS:
        return FAIL
    if key in _NONE_LABELS:
        return NONE
    return f"l{position % 8}"


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, Mapping) and "ci_low" in value and "ci_high" in value:
        return float(value["ci_low"]), float(value["ci_high"])
    return None


def _interval_text(summary: Mapping[str, str], column: str) -> str | None:
    found = _INTERVAL_TEXT.search(summary.get(column, ""))
    if found is None or found.group(1).endswith("n/a"):
        return None
    return found.group(1)


def _lower_is_better(column: str) -> bool:
    return column.casefold() in LOWER_IS_BETTER


def _binary_card(
    scores: RunScores, column: str, summary: Mapping[str, str], values: Mapping[str, Any]
) -> MetricCard:
    metric = scores.metrics[column]
    ones = sum(1 for value in metric.values.values() if value == 1)
    zeros = len(metric.values) - ones
    scored = ones + zeros
    rate = ones / scored if scored else None
    unscored = len(metric.unscored)
    # An offline check left empty does not apply to the question; a judged metric failed.
    empty = NOT_APPLICABLE if is_offline_metric(column) else UNSCORED
    detail = f"{ones}/{scored} scored" + (f" · {unscored} {empty}" if unscored else "")
    return MetricCard(
        column=column,
        kind=BINARY,
        headline="n/a" if rate is None else f"{rate:.0%}",
        detail=detail,
        interval=_interval_text(summary, column),
        bounds=_interval(values.get(column)),
        value=rate,
        segments=(
            Segment("1", ones, FAIL if _lower_is_better(column) else PASS),
            Segment("0", zeros, PASS if _lower_is_better(column) else FAIL),
            Segment(empty, unscored, NONE),
        ),
        lower_is_better=_lower_is_better(column),
    )


def _continuous_card(
    scores: RunScores, column: str, summary: Mapping[str, str], values: Mapping[str, Any]
) -> MetricCard:
    metric = scores.metrics[column]
    mean = metric.mean()
    empty = len(metric.unscored)
    detail = (
        "no value"
        if mean is None
        else f"mean {mean:.4f} · n = {len(metric.values)}" + (f" · {empty} empty" if empty else "")
    )
    return MetricCard(
        column=column,
        kind=CONTINUOUS,
        headline="n/a" if mean is None else f"{mean:.2f}",
        detail=detail,
        interval=_interval_text(summary, column),
        bounds=_interval(values.get(column)),
        value=mean,
        lower_is_better=_lower_is_better(column),
    )


def _label_card(column: str, cells: Sequence[str], metadata: bool = False) -> MetricCard:
    counts = Counter(cell.strip() for cell in cells if cell.strip())
    empty = sum(1 for cell in cells if not cell.strip())
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    top_label, top_count = ordered[0]
    segments = [
        Segment(label, count, label_tone(label, position))
        for position, (label, count) in enumerate(ordered)
    ]
    if empty:
        segments.append(Segment("empty", empty, NONE))
    total = sum(counts.values())
    return MetricCard(
        column=column,
        kind=LABELS,
        headline=top_label,
        detail=f"most common: {top_count}/{total} ({top_count / total:.0%})"
        + (f" · {empty} empty" if empty else ""),
        segments=tuple(segments),
        metadata=metadata,
    )


@dataclass(frozen=True)
class _Layout:
    """How a run's columns are shown: roles, and the columns left out as empty."""

    columns: tuple[Column, ...]
    sources: tuple[str | None, ...]  # the header each shown column reads (None: computed)
    empty: tuple[str, ...]

    def column_index(self) -> dict[str, int]:
        """Each header read by a shown column, and that column's position."""
        return {
            source: position for position, source in enumerate(self.sources) if source is not None
        }


_ITEM_TEXT_COLUMNS = (QUESTION, GROUND_TRUTH, RAG_ANSWER)
_JUDGE_TEXT_COLUMNS = (REASONING, CONSENSUS, VOTES, ERROR, NOTE)


def _cells(table: RunTable, header: str) -> list[str]:
    return [row.cells.get(header, "") for row in table.rows]


def _label_columns(table: RunTable, scores: RunScores) -> list[str]:
    """The columns shown as distributions: no metric, no known column, few short values."""
    return [
        header
        for header in dict.fromkeys(table.headers)
        if header
        and header not in scores.metrics
        and header not in NON_METRIC_COLUMNS
        and is_label_column(_cells(table, header))
    ]


def _metric_headers(headers: Sequence[str], scores: RunScores, kind: MetricKind) -> list[str]:
    return [h for h in headers if h in scores.metrics and scores.metrics[h].kind is kind]


def _text_columns(
    table: RunTable, headers: Sequence[str], handled: set[str]
) -> tuple[list[tuple[Column, str]], list[str]]:
    """The columns not handled yet, the judge's texts first: shown as text (folded when a
    cell is long), or left out as empty when no cell has a value."""
    rest = [h for h in _JUDGE_TEXT_COLUMNS if h in headers] + [
        h for h in headers if h not in handled and h not in _JUDGE_TEXT_COLUMNS
    ]
    seen = set(handled)
    shown: list[tuple[Column, str]] = []
    empty: list[str] = []
    for header in rest:
        if header in seen:
            continue
        seen.add(header)
        cells = _cells(table, header)
        if not any(cell.strip() for cell in cells):
            empty.append(header)
            continue
        longest = max((len(cell) for cell in cells), default=0)
        shown.append((Column(header, LONG if longest > LONG_TEXT_CHARACTERS else TEXT), header))
    return shown, empty


def _layout(
    table: RunTable, scores: RunScores, labels: Sequence[str], has_flags: bool, has_contexts: bool
) -> _Layout:
    """The table's columns in order: number, the item's texts, 0/1 metrics, scores, labels,
    the other texts, then the diagnostics' flags and the contexts' count."""
    unique = list(dict.fromkeys(header for header in table.headers if header))
    shown: list[tuple[Column, str | None]] = [(Column("#", NUMBER), QUESTION_NUMBER)]
    shown += [
        (Column("Answer" if header == RAG_ANSWER else header, LONG), header)
        for header in _ITEM_TEXT_COLUMNS
        if header in unique
    ]
    binary = _metric_headers(unique, scores, MetricKind.BINARY)
    continuous = _metric_headers(unique, scores, MetricKind.CONTINUOUS)
    shown += [(Column(header, BINARY), header) for header in binary]
    shown += [(Column(header, CONTINUOUS), header) for header in continuous]
    shown += [(Column(header, LABELS), header) for header in labels]
    handled = {QUESTION_NUMBER, *_ITEM_TEXT_COLUMNS, *binary, *continuous, *labels}
    texts, empty = _text_columns(table, unique, handled)
    shown += texts
    empty += [header for header in scores.empty_columns if header not in empty]
    if has_flags:
        shown.append((Column(FLAGS_COLUMN, FLAGS), None))
    if has_contexts:
        shown.append((Column(CONTEXTS_COLUMN, CONTEXTS), None))
    return _Layout(
        tuple(column for column, _ in shown), tuple(source for _, source in shown), tuple(empty)
    )


def _facts(table: RunTable, shown_columns: set[str]) -> tuple[tuple[str, str], ...]:
    facts: list[tuple[str, str]] = []
    if table.run_date:
        facts.append(("Run date", table.run_date))
    facts += [
        (label, _grouped(value))
        for label, value in table.summary
        if label not in shown_columns and label != METRIC_KINDS
    ]
    return tuple(facts)


def _grouped(value: str) -> str:
    """Whole numbers with thousands separators (``24838`` -> ``24,838``)."""
    return f"{int(value):,}" if value.isdigit() and len(value) > 4 else value


def _evidence(table: RunTable, scores: RunScores, labels: Sequence[str]) -> list[QuestionEvidence]:
    evidence = []
    for row in table.rows:
        number = row.question_number
        evidence.append(
            QuestionEvidence(
                question_number=number,
                answer=row.cells.get(RAG_ANSWER, ""),
                ground_truth=row.cells.get(GROUND_TRUTH, ""),
                metrics={
                    name: metric.values[number]
                    for name, metric in scores.metrics.items()
                    if number in metric.values
                },
                labels=tuple(row.cells.get(label, "") for label in labels),
            )
        )
    return evidence


def _row_unscored(cells: Mapping[str, str]) -> bool:
    if cells.get(ERROR, "").strip():
        return True
    return any(metric in cells and not cells[metric].strip() for metric in JUDGE_METRICS)


def _status_filters(rows: Sequence[RowView], headers: Sequence[str]) -> list[FilterOption]:
    """All questions; the unscored ones and the judge's consensus, where the run has them."""
    options = [FilterOption("all", "All questions", len(rows), "Show")]
    if ERROR in headers or any(metric in headers for metric in JUDGE_METRICS):
        count = sum(1 for row in rows if row.unscored)
        options.append(FilterOption("unscored", "Unscored (the judge failed)", count, "Show"))
    if CONSENSUS in headers:
        count = sum(1 for row in rows if row.consensus)
        options.append(FilterOption("consensus", "Judge consensus (hedged)", count, "Show"))
    return options


def _value_filters(
    view_columns: Sequence[Column], rows: Sequence[RowView], metadata: set[str]
) -> list[FilterOption]:
    """One option per value of each 0/1 metric (0 and 1) and label column (most common
    first); a metadata column's under its own group."""
    options = []
    for index, column in enumerate(view_columns):
        if column.role not in (BINARY, LABELS):
            continue
        counts = Counter(row.cells[index].strip() for row in rows if row.cells[index].strip())
        values = ("0", "1") if column.role == BINARY else sorted(counts, key=lambda v: -counts[v])
        group = "Metadata" if column.name in metadata else "Values"
        for value in values:
            options.append(
                FilterOption(f"v:{index}:{value}", f"{column.name} = {value}", counts[value], group)
            )
    return options


def _diagnostic_filters(diagnostics: Sequence[DiagnosticResult]) -> list[FilterOption]:
    """Any diagnostic, then each diagnostic that was checked."""
    applied = [result for result in diagnostics if result.applied]
    if not applied:
        return []
    flagged = {number for result in applied for number in result.flagged}
    options = [FilterOption("flagged", "Any diagnostic", len(flagged), "Diagnostics")]
    for result in applied:
        options.append(
            FilterOption(
                f"d:{result.rule.key}", result.rule.title, len(result.flagged), "Diagnostics"
            )
        )
    return options


def _comparison_filters(
    comparison: RunComparison | None, column_index: Mapping[str, int]
) -> list[FilterOption]:
    """For each 0/1 metric compared with the baseline: the questions that got worse, and
    those that got better."""
    if comparison is None:
        return []
    options = []
    for metric in comparison.metrics:
        if metric.kind is not MetricKind.BINARY or metric.metric not in column_index:
            continue
        index = column_index[metric.metric]
        for key, direction, flips in (
            ("w", "worse", metric.got_worse),
            ("b", "better", metric.got_better),
        ):
            options.append(
                FilterOption(
                    f"{key}:{index}",
                    f"{metric.metric}: {direction} than the baseline",
                    len(flips),
                    "Against the baseline",
                )
            )
    return options


def _filters(
    view_columns: Sequence[Column],
    rows: Sequence[RowView],
    diagnostics: Sequence[DiagnosticResult],
    comparison: RunComparison | None,
    column_index: Mapping[str, int],
    headers: Sequence[str],
    metadata: set[str] | None = None,
) -> tuple[FilterOption, ...]:
    """The table's filter menu, in the order it shows its groups."""
    return (
        *_status_filters(rows, headers),
        *_value_filters(view_columns, rows, metadata or set()),
        *_diagnostic_filters(diagnostics),
        *_comparison_filters(comparison, column_index),
    )


def _changes(
    comparison: RunComparison | None, column_index: Mapping[str, int]
) -> dict[int, list[str]]:
    """The run's rows that got worse (``w<column>``) or better (``b<column>``) than the
    baseline, by the run's own question numbers: its table is the one marked."""
    changes: dict[int, list[str]] = {}
    if comparison is None:
        return changes
    for metric in comparison.metrics:
        if metric.metric not in column_index:
            continue
        position = column_index[metric.metric]
        for flip in metric.got_worse:
            changes.setdefault(flip.run_question_number, []).append(f"w{position}")
        for flip in metric.got_better:
            changes.setdefault(flip.run_question_number, []).append(f"b{position}")
    return changes


def _has_contexts(table: RunTable) -> bool:
    return table.contexts is not None and bool(table.contexts.retrieved or table.contexts.golden)


def _flags_by_question(diagnostics: Sequence[DiagnosticResult]) -> dict[int, list[str]]:
    """The keys of the diagnostics that flag each question (the table's Flags cell)."""
    flags: dict[int, list[str]] = {}
    for result in diagnostics:
        for number in result.flagged:
            flags.setdefault(number, []).append(result.rule.key)
    return flags


def _row_cells(
    row: TableRow, layout: _Layout, flags: Sequence[str], retrieved: Sequence[str] | None
) -> tuple[str, ...]:
    """One question's cells in the table's column order, as shown: metric values compacted,
    the computed Flags and Contexts (the count of retrieved chunks) filled in."""
    cells: list[str] = []
    for column, source in zip(layout.columns, layout.sources, strict=True):
        if column.role == FLAGS:
            cells.append(" ".join(flags))
        elif column.role == CONTEXTS:
            cells.append("" if retrieved is None else str(len(retrieved)))
        elif source == QUESTION_NUMBER:
            cells.append(str(row.question_number))
        elif column.role in METRIC_ROLES:
            cells.append(compact_number(row.cells.get(source or "", "")))
        else:
            cells.append(row.cells.get(source or "", ""))
    return tuple(cells)


def _row_views(
    table: RunTable,
    layout: _Layout,
    diagnostics: Sequence[DiagnosticResult],
    changes: Mapping[int, Sequence[str]],
) -> tuple[RowView, ...]:
    flags = _flags_by_question(diagnostics)
    contexts = table.contexts or RunContexts()
    return tuple(
        RowView(
            question_number=row.question_number,
            cells=_row_cells(
                row,
                layout,
                flags.get(row.question_number, ()),
                contexts.retrieved.get(row.question_number),
            ),
            unscored=_row_unscored(row.cells),
            consensus=row.cells.get(CONSENSUS, "").strip().casefold() == "yes",
            changes=tuple(changes.get(row.question_number, ())),
        )
        for row in table.rows
    )


def _cards(table: RunTable, scores: RunScores, layout: _Layout) -> tuple[MetricCard, ...]:
    """A card per metric column (its rate or mean) and per label column (its distribution),
    in the table's column order."""
    summary = dict(table.summary)
    cards: list[MetricCard] = []
    for column, source in zip(layout.columns, layout.sources, strict=True):
        if source is None:
            continue
        if column.role == BINARY:
            cards.append(_binary_card(scores, source, summary, table.summary_values))
        elif column.role == CONTINUOUS:
            cards.append(_continuous_card(scores, source, summary, table.summary_values))
        elif column.role == LABELS:
            cards.append(
                _label_card(source, _cells(table, source), source in scores.metadata_columns)
            )
    return tuple(cards)


def _histograms(scores: RunScores, layout: _Layout) -> tuple[Histogram, ...]:
    """The distribution of each score column that has values."""
    column_index = layout.column_index()
    charts = []
    for column, source in zip(layout.columns, layout.sources, strict=True):
        if column.role != CONTINUOUS or source is None:
            continue
        values = list(scores.metrics[source].values.values())
        if values:
            charts.append(
                histogram(
                    source, column_index[source], values, lower_is_better=_lower_is_better(source)
                )
            )
    return tuple(charts)


def _run_view(
    index: int,
    table: RunTable,
    scores: RunScores,
    comparison: RunComparison | None,
) -> RunView:
    has_contexts = _has_contexts(table)
    labels = _label_columns(table, scores)
    diagnostics = tuple(run_diagnostics(list(scores.metrics), _evidence(table, scores, labels)))
    has_flags = any(result.applied for result in diagnostics)
    layout = _layout(table, scores, labels, has_flags=has_flags, has_contexts=has_contexts)
    column_index = layout.column_index()
    rows = _row_views(table, layout, diagnostics, _changes(comparison, column_index))
    cards = _cards(table, scores, layout)
    shown = {card.column for card in cards} | set(layout.empty)
    return RunView(
        index=index,
        label=table.label,
        source=table.source,
        run_date=table.run_date,
        baseline=index == 0,
        facts=_facts(table, shown),
        cards=cards,
        histograms=_histograms(scores, layout),
        consensus=consensus_summary(table.headers, table.rows),
        diagnostics=diagnostics,
        columns=layout.columns,
        rows=rows,
        empty_columns=layout.empty,
        filters=_filters(
            layout.columns,
            rows,
            diagnostics,
            comparison,
            column_index,
            table.headers,
            set(scores.metadata_columns),
        ),
        has_contexts=has_contexts,
    )


def build_report_model(
    tables: Sequence[RunTable],
    *,
    title: str,
    generated_at: str,
    tool_version: str,
) -> ReportModel:
    """The report of one run, or of a comparison when there are several (baseline first)."""
    scores = [
        build_run_scores(table.label, list(table.headers), list(table.rows), summary=table.summary)
        for table in tables
    ]
    texts = [
        RunTexts(
            questions={row.question_number: row.cells.get(QUESTION, "") for row in table.rows},
            answers={row.question_number: row.cells.get(RAG_ANSWER, "") for row in table.rows},
        )
        for table in tables
    ]
    comparison = comparison_view(texts, scores) if len(tables) > 1 else None
    by_run: dict[int, RunComparison] = {}
    if comparison is not None:
        by_run = {view.run_index: view.comparison for view in comparison.runs}
    runs = tuple(
        _run_view(index, table, scores[index], by_run.get(index))
        for index, table in enumerate(tables)
    )
    return ReportModel(
        title=title,
        generated_at=generated_at,
        tool_version=tool_version,
        runs=runs,
        comparison=comparison,
        contexts=contexts_data(
            [([row.question_number for row in table.rows], table.contexts) for table in tables]
        ),
    )
