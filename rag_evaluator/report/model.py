"""What the HTML report shows, as plain data: facts, cards, histograms, diagnostics, tables.

``build_report_model`` takes the results files as read (``RunTable``) and returns a
``ReportModel`` that ``report/html.py`` renders; nothing here knows HTML. Columns are
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

# Tones of chart segments: the CSS classes of report_html.
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


def _layout(
    table: RunTable, scores: RunScores, labels: Sequence[str], has_flags: bool, has_contexts: bool
) -> _Layout:
    unique = list(dict.fromkeys(header for header in table.headers if header))

    def cells(header: str) -> list[str]:
        return _cells(table, header)

    def has_value(header: str) -> bool:
        return any(cell.strip() for cell in cells(header))

    def text_role(header: str) -> str:
        longest = max((len(cell) for cell in cells(header)), default=0)
        return LONG if longest > LONG_TEXT_CHARACTERS else TEXT

    columns: list[Column] = []
    sources: list[str | None] = []
    empty: list[str] = []

    def add(name: str, role: str, source: str | None) -> None:
        columns.append(Column(name, role))
        sources.append(source)

    add("#", NUMBER, QUESTION_NUMBER)
    for header in _ITEM_TEXT_COLUMNS:
        if header in unique:
            add("Answer" if header == RAG_ANSWER else header, LONG, header)
    binary = [
        h for h in unique if h in scores.metrics and scores.metrics[h].kind is MetricKind.BINARY
    ]
    continuous = [
        h for h in unique if h in scores.metrics and scores.metrics[h].kind is MetricKind.CONTINUOUS
    ]
    for header in binary:
        add(header, BINARY, header)
    for header in continuous:
        add(header, CONTINUOUS, header)
    handled = {QUESTION_NUMBER, *_ITEM_TEXT_COLUMNS, *binary, *continuous}
    for header in labels:
        add(header, LABELS, header)
    handled.update(labels)
    rest = [h for h in _JUDGE_TEXT_COLUMNS if h in unique] + [
        h for h in unique if h not in handled and h not in _JUDGE_TEXT_COLUMNS
    ]
    for header in rest:
        if header in handled:
            continue
        handled.add(header)
        if not has_value(header):
            empty.append(header)
            continue
        add(header, text_role(header), header)
    empty += [h for h in scores.empty_columns if h not in empty]
    if has_flags:
        add(FLAGS_COLUMN, FLAGS, None)
    if has_contexts:
        add(CONTEXTS_COLUMN, CONTEXTS, None)
    return _Layout(tuple(columns), tuple(sources), tuple(empty))


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


def _filters(
    view_columns: Sequence[Column],
    rows: Sequence[RowView],
    diagnostics: Sequence[DiagnosticResult],
    comparison: RunComparison | None,
    column_index: Mapping[str, int],
    headers: Sequence[str],
    metadata: set[str] | None = None,
) -> tuple[FilterOption, ...]:
    options = [FilterOption("all", "All questions", len(rows), "Show")]
    if ERROR in headers or any(metric in headers for metric in JUDGE_METRICS):
        count = sum(1 for row in rows if row.unscored)
        options.append(FilterOption("unscored", "Unscored (the judge failed)", count, "Show"))
    if CONSENSUS in headers:
        count = sum(1 for row in rows if row.consensus)
        options.append(FilterOption("consensus", "Judge consensus (hedged)", count, "Show"))
    for index, column in enumerate(view_columns):
        if column.role not in (BINARY, LABELS):
            continue
        counts = Counter(row.cells[index].strip() for row in rows if row.cells[index].strip())
        values = ("0", "1") if column.role == BINARY else sorted(counts, key=lambda v: -counts[v])
        group = "Metadata" if column.name in (metadata or set()) else "Values"
        for value in values:
            options.append(
                FilterOption(f"v:{index}:{value}", f"{column.name} = {value}", counts[value], group)
            )
    applied = [result for result in diagnostics if result.applied]
    if applied:
        flagged = {number for result in applied for number in result.flagged}
        options.append(FilterOption("flagged", "Any diagnostic", len(flagged), "Diagnostics"))
        for result in applied:
            options.append(
                FilterOption(
                    f"d:{result.rule.key}", result.rule.title, len(result.flagged), "Diagnostics"
                )
            )
    if comparison is not None:
        for metric in comparison.metrics:
            if metric.kind is not MetricKind.BINARY or metric.metric not in column_index:
                continue
            index = column_index[metric.metric]
            options.append(
                FilterOption(
                    f"w:{index}",
                    f"{metric.metric}: worse than the baseline",
                    len(metric.got_worse),
                    "Against the baseline",
                )
            )
            options.append(
                FilterOption(
                    f"b:{index}",
                    f"{metric.metric}: better than the baseline",
                    len(metric.got_better),
                    "Against the baseline",
                )
            )
    return tuple(options)


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


def _run_view(
    index: int,
    table: RunTable,
    scores: RunScores,
    comparison: RunComparison | None,
) -> RunView:
    has_contexts = table.contexts is not None and bool(
        table.contexts.retrieved or table.contexts.golden
    )
    labels = _label_columns(table, scores)
    diagnostics = tuple(run_diagnostics(list(scores.metrics), _evidence(table, scores, labels)))
    has_flags = any(result.applied for result in diagnostics)
    layout = _layout(table, scores, labels, has_flags=has_flags, has_contexts=has_contexts)
    column_index = {
        source: position for position, source in enumerate(layout.sources) if source is not None
    }
    flags_by_question: dict[int, list[str]] = {}
    for result in diagnostics:
        for number in result.flagged:
            flags_by_question.setdefault(number, []).append(result.rule.key)
    changes = _changes(comparison, column_index)
    contexts = table.contexts or RunContexts()
    rows: list[RowView] = []
    for row in table.rows:
        number = row.question_number
        cells: list[str] = []
        for column, source in zip(layout.columns, layout.sources, strict=True):
            if column.role == FLAGS:
                cells.append(" ".join(flags_by_question.get(number, ())))
            elif column.role == CONTEXTS:
                retrieved = contexts.retrieved.get(number)
                cells.append("" if retrieved is None else str(len(retrieved)))
            elif source == QUESTION_NUMBER:
                cells.append(str(number))
            elif column.role in METRIC_ROLES:
                cells.append(compact_number(row.cells.get(source or "", "")))
            else:
                cells.append(row.cells.get(source or "", ""))
        rows.append(
            RowView(
                question_number=number,
                cells=tuple(cells),
                unscored=_row_unscored(row.cells),
                consensus=row.cells.get(CONSENSUS, "").strip().casefold() == "yes",
                changes=tuple(changes.get(number, ())),
            )
        )
    summary = dict(table.summary)
    cards: list[MetricCard] = []
    histograms: list[Histogram] = []
    for column, source in zip(layout.columns, layout.sources, strict=True):
        if column.role == BINARY and source is not None:
            cards.append(_binary_card(scores, source, summary, table.summary_values))
        elif column.role == CONTINUOUS and source is not None:
            cards.append(_continuous_card(scores, source, summary, table.summary_values))
            values = list(scores.metrics[source].values.values())
            if values:
                histograms.append(
                    histogram(
                        source,
                        column_index[source],
                        values,
                        lower_is_better=_lower_is_better(source),
                    )
                )
        elif column.role == LABELS and source is not None:
            cells = [row.cells.get(source, "") for row in table.rows]
            cards.append(_label_card(source, cells, source in scores.metadata_columns))
    shown = {card.column for card in cards} | set(layout.empty)
    return RunView(
        index=index,
        label=table.label,
        source=table.source,
        run_date=table.run_date,
        baseline=index == 0,
        facts=_facts(table, shown),
        cards=tuple(cards),
        histograms=tuple(histograms),
        consensus=consensus_summary(table.headers, table.rows),
        diagnostics=diagnostics,
        columns=layout.columns,
        rows=tuple(rows),
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
