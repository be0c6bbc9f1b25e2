"""A finished run's scores by metric, read back from its results table.

The rule for which columns are metrics (so that columns added later are handled without
code changes):

- the item columns (Question Number, Question, Ground Truth, RAG Answer), the judge's
  text columns (Reasoning, Consensus, Votes, Error, Note) and the LLM families' text and
  label columns (``LLM_FAMILY_TEXT_COLUMNS``: reasons, details, grades, labels, methods,
  the factual-accuracy confidence) and the offline families' text columns (``Quality Failures``) are
  never metrics;
- a column the file declares in its ``#SUMMARY: Metric Kinds:`` row (``results/kinds.py``)
  has the declared kind; a cell that contradicts it (``0.5`` in a 0/1 column, text in a
  score column) is an ``InputError``;
- a column the file does not declare (files older than the row, columns added by hand) that
  bears the name of one of the tool's metrics (``exact_match``, ``Precision``,
  ``ragas_faithfulness``...) has that metric's declared kind, when its cells fit it;
- any other column's kind is inferred from its cells: all exactly ``0`` or ``1`` is a
  **binary** metric; all numbers, at least one of them written with a decimal point or an
  exponent (``0.6291``, ``1.0000``, ``1e-05``), a **continuous** one (``0`` and ``1`` may
  appear among them);
- anything else is not a metric: labels (``CORRECT``/``WRONG``), letter grades, counts
  written as whole numbers other than 0 and 1, free text. A column with no value at all
  cannot be classified and is listed as empty.

The metadata columns a results file names in its ``#SUMMARY: Metadata Columns:`` row
(``Category``, ``Source``... carried from questions.csv or the dataset) are never metrics
either, whatever they hold: they are kept in ``RunScores.metadata`` for grouping and filters.

A metric cell is *scored* when it is non-empty. A row whose ``Error`` cell holds the
judge's error is unscored for the judge's own columns (Precision, Recall, Accuracy) whatever
they hold; any other metric's cell on such a row still counts, because the judge's failure
does not touch it. With several model-judged families the Error cell names each failing
family (``judge: …; ragas: …``, the judge first), so an error of another family alone does
not unscore the judge's columns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_evaluator.errors import InputError
from rag_evaluator.families.grading.classify import ClassifyFamily
from rag_evaluator.families.grading.factual_accuracy import (
    FACTUAL_ACCURACY_FAMILY,
    LEGACY_NAME,
    LEGACY_UNSCORED_LABEL,
    UNSCORED_LABEL,
    FactualAccuracyFamily,
)
from rag_evaluator.families.grading.match import MatchFamily
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.ragas.family import RagasFamily
from rag_evaluator.families.rubric.rubrics import COLUMN_PREFIX as RUBRIC_PREFIX
from rag_evaluator.families.rubric.rubrics import REASONING_COLUMN as RUBRIC_REASONING
from rag_evaluator.inputs.fields import GROUND_TRUTH, QUESTION, QUESTION_NUMBER, RAG_ANSWER
from rag_evaluator.offline.metric_settings import declared_settings
from rag_evaluator.offline.quality import FAILURES as QUALITY_FAILURES
from rag_evaluator.offline.registry import METRIC_SCALES
from rag_evaluator.results.kinds import (
    METRIC_KINDS,
    RATE,
    SCORE,
    MetricKind,
    MetricScale,
    declared_scales,
)
from rag_evaluator.results.summary import metadata_columns
from rag_evaluator.text.snippets import quote_snippet

__all__ = ["MetricKind", "MetricScale"]

PRECISION = "Precision"
RECALL = "Recall"
ACCURACY = "Accuracy"
REASONING = "Reasoning"
CONSENSUS = "Consensus"
VOTES = "Votes"
ERROR = "Error"
NOTE = "Note"

JUDGE_METRICS = (PRECISION, RECALL, ACCURACY)
# Text, label and grade columns of the LLM-judged families (issue 10), and the factual-accuracy
# confidence (a 0-100 self-assessment, not a score of the answer).
LLM_FAMILY_TEXT_COLUMNS = (
    "ragas_answer_relevance_method",
    "ragas_details",
    "factual_grade",
    "factual_confidence",
    "factual_reasoning",
    "answer_class",
    "classify_reasoning",
    "match_reasoning",
    "rubric_reasoning",
)
# Text columns of the offline families: the names of the quality checks an answer failed.
OFFLINE_TEXT_COLUMNS = (QUALITY_FAILURES,)
# How the Error cell names the other model-judged families when several ran (files written
# before issue 22 name factual_accuracy by its old name, geval).
_OTHER_FAMILY_ERROR = re.compile(
    rf"(?:ragas|{FACTUAL_ACCURACY_FAMILY}|{LEGACY_NAME}|classify|match|rubric): "
)
NON_METRIC_COLUMNS = (
    QUESTION_NUMBER,
    QUESTION,
    GROUND_TRUTH,
    RAG_ANSWER,
    REASONING,
    CONSENSUS,
    VOTES,
    ERROR,
    NOTE,
    *LLM_FAMILY_TEXT_COLUMNS,
    *OFFLINE_TEXT_COLUMNS,
)

# A number with a decimal point or an exponent: 0.6291, .5, 1.0000, 1e-05.
_DECIMAL = re.compile(r"[+-]?(?:(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)")
_INTEGER = re.compile(r"[+-]?\d+")


_JUDGED_FAMILIES = (JudgeFamily, RagasFamily, FactualAccuracyFamily, ClassifyFamily, MatchFamily)
# The tool's own metrics by name, as they declare themselves: the kinds of an undeclared
# column of that name (results files older than the Metric Kinds row).
KNOWN_SCALES: dict[str, MetricScale] = {
    **METRIC_SCALES,
    **{
        column: RATE if column in family.rate_columns else SCORE
        for family in _JUDGED_FAMILIES
        for column in family.metric_columns
    },
}
# The column explaining each model-judged metric: its family's reasoning. The rubric's
# criteria (``rubric_<name>``) share ``rubric_reasoning``; offline metrics have none.
_REASONING_COLUMNS: dict[str, str] = {
    column: family.reasoning_column
    for family in _JUDGED_FAMILIES
    if family.reasoning_column is not None
    for column in family.metric_columns
}


def reasoning_column(metric: str) -> str | None:
    """The column holding the reasoning behind ``metric``'s scores, if it has one."""
    if metric in _REASONING_COLUMNS:
        return _REASONING_COLUMNS[metric]
    if metric.startswith(RUBRIC_PREFIX) and metric != RUBRIC_REASONING:
        return RUBRIC_REASONING
    return None


def is_offline_metric(metric: str) -> bool:
    """Whether ``metric`` is one of the offline families': an empty cell means the metric
    does not apply to that question (or lacks its inputs), not that scoring failed."""
    return metric in METRIC_SCALES


def classify_cells(cells: Sequence[str]) -> MetricKind | None:
    """The kind of metric a column holds (see the module's rule), or ``None`` if none.

    An all-empty column is ``None`` too; callers tell it apart with ``any(cells)``.
    """
    values = [cell.strip() for cell in cells if cell.strip()]
    if not values:
        return None
    if all(value in ("0", "1") for value in values):
        return MetricKind.BINARY
    has_decimal = False
    for value in values:
        if _DECIMAL.fullmatch(value):
            if not math.isfinite(float(value)):
                return None
            has_decimal = True
        elif value not in ("0", "1"):
            return None
    return MetricKind.CONTINUOUS if has_decimal else None


def is_number(text: str) -> bool:
    """Whether ``text`` is a finite number written plainly (``1``, ``0.25``, ``-3.5e-2``)."""
    value = text.strip()
    if not (_DECIMAL.fullmatch(value) or _INTEGER.fullmatch(value)):
        return False
    return math.isfinite(float(value))


@dataclass(frozen=True)
class MetricScores:
    """One metric of a run: its kind, its scored values, the questions left unscored."""

    name: str
    kind: MetricKind
    values: Mapping[int, float]  # question number -> value, scored questions only
    unscored: tuple[int, ...]
    # The declared kind and range; ``None`` when the kind was inferred from the cells.
    scale: MetricScale | None = None

    def mean(self) -> float | None:
        if not self.values:
            return None
        return sum(self.values.values()) / len(self.values)


@dataclass(frozen=True)
class RunScores:
    """What compare and calibrate need of one results file."""

    label: str  # how messages name the file
    question_numbers: tuple[int, ...]  # every row, in file order
    metrics: Mapping[str, MetricScores]  # in column order
    reasoning: Mapping[int, str] = field(default_factory=dict)  # the judge's Reasoning
    questions: Mapping[int, str] = field(default_factory=dict)
    ground_truths: Mapping[int, str] = field(default_factory=dict)
    summary: tuple[tuple[str, str], ...] = ()
    empty_columns: tuple[str, ...] = ()  # possible metrics with no value in any row
    metadata_columns: tuple[str, ...] = ()  # carried columns (Category...), never metrics
    # The families' reasoning columns: column -> question number -> text.
    explanations: Mapping[str, Mapping[int, str]] = field(default_factory=dict)
    columns: tuple[str, ...] = ()  # every column of the table, in order
    # The settings defining its offline metrics (``#SUMMARY: Metric Settings:``); ``None``
    # when the file has no such row.
    settings: Mapping[str, str] | None = None

    def explanation(self, metric: str, question_number: int) -> str:
        """Why ``metric`` has its value on that question: its family's reasoning, or ``""``
        (offline metrics and checks have none)."""
        column = reasoning_column(metric)
        if column is None:
            return ""
        return self.explanations.get(column, {}).get(question_number, "")


def _fits(scale: MetricScale, cells: Sequence[str]) -> bool:
    values = [cell.strip() for cell in cells if cell.strip()]
    if not all(is_number(value) for value in values):
        return False
    return not scale.binary or all(float(value) in (0.0, 1.0) for value in values)


def _check_declared(label: str, header: str, scale: MetricScale, rows: Sequence[TableRow]) -> None:
    for row in rows:
        cell = row.cells.get(header, "").strip()
        if not cell or _fits(scale, [cell]):
            continue
        wanted = "0 or 1" if scale.binary else "a number"
        raise InputError(
            f"{label} declares {header} a {'0/1' if scale.binary else 'score'} metric "
            f"(#SUMMARY: {METRIC_KINDS}), but question {row.question_number} holds "
            f"{quote_snippet(cell, 40)}, not {wanted}. Correct that cell, or remove {header} from "
            f"the {METRIC_KINDS} row"
        )


def _metric_scores(
    header: str, kind: MetricKind, scale: MetricScale | None, rows: Sequence[TableRow]
) -> MetricScores:
    values: dict[int, float] = {}
    unscored: list[int] = []
    for row in rows:
        cell = row.cells.get(header, "").strip()
        judge_failed = header in JUDGE_METRICS and judge_error(row.cells.get(ERROR, ""))
        if not cell or judge_failed:
            unscored.append(row.question_number)
        else:
            values[row.question_number] = float(cell)
    return MetricScores(header, kind, values, tuple(unscored), scale)


# Columns renamed when a definition changed (issue 22): results files written before are
# read under today's names. Such a file held the share of relevant contexts under
# ragas_context_precision and ragas's rank-weighted precision under
# ragas_context_precision_ranked.
_LEGACY_RANKED_PRECISION = "ragas_context_precision_ranked"
_LEGACY_RENAMES = {
    "ragas_context_precision": "relevant_context_share",
    _LEGACY_RANKED_PRECISION: "ragas_context_precision",
}


def legacy_column_renames(headers: Sequence[str]) -> dict[str, str]:
    """Old column name -> today's, for a table written before a renaming; ``{}`` when the
    table is current (it is old when it has the old rank-weighted precision column)."""
    if _LEGACY_RANKED_PRECISION not in headers:
        return {}
    return {old: new for old, new in _LEGACY_RENAMES.items() if old in headers}


# Summary rows renamed with their family (issue 22): read under today's label.
_LEGACY_SUMMARY_LABELS = {LEGACY_UNSCORED_LABEL: UNSCORED_LABEL}


def current_summary_label(label: str) -> str:
    """Today's label of a summary row written under an older one; other labels as they are."""
    return _LEGACY_SUMMARY_LABELS.get(label, label)


def judge_error(error_cell: str) -> bool:
    """Whether a row's Error cell holds the judge's own error.

    A judge-only table writes the reason alone; a table of several model-judged families
    prefixes each family's reason with its name, the judge first, so a cell that starts with
    another family's name holds no judge error.
    """
    text = error_cell.strip()
    if not text:
        return False
    return _OTHER_FAMILY_ERROR.match(text) is None


@dataclass(frozen=True)
class TableRow:
    """One data row of a results table: its number and its cells by header."""

    question_number: int
    cells: Mapping[str, str]


def build_run_scores(
    label: str,
    headers: Sequence[str],
    rows: Sequence[TableRow],
    *,
    summary: Sequence[tuple[str, str]] = (),
    non_metric: Sequence[str] = NON_METRIC_COLUMNS,
) -> RunScores:
    """Classify the columns of a results table and collect each metric's scores.

    Raises ``InputError`` when a cell contradicts the kind the file declares for its column.
    """
    metadata = metadata_columns(summary)
    declared = declared_scales(summary)
    excluded = set(non_metric) | set(metadata)
    metrics: dict[str, MetricScores] = {}
    empty: list[str] = []
    for header in headers:
        if header in excluded or not header or header in metrics or header in empty:
            continue
        cells = [row.cells.get(header, "") for row in rows]
        if not any(cell.strip() for cell in cells):
            empty.append(header)
            continue
        scale = declared.get(header)
        if scale is not None:
            _check_declared(label, header, scale, rows)
        elif header in KNOWN_SCALES and _fits(KNOWN_SCALES[header], cells):
            scale = KNOWN_SCALES[header]
        kind = scale.kind if scale is not None else classify_cells(cells)
        if kind is None:
            continue
        metrics[header] = _metric_scores(header, kind, scale, rows)
    return RunScores(
        label=label,
        question_numbers=tuple(row.question_number for row in rows),
        metrics=metrics,
        reasoning={
            row.question_number: row.cells[REASONING]
            for row in rows
            if row.cells.get(REASONING, "").strip()
        },
        questions={
            row.question_number: row.cells[QUESTION]
            for row in rows
            if row.cells.get(QUESTION, "").strip()
        },
        ground_truths={
            row.question_number: row.cells[GROUND_TRUTH]
            for row in rows
            if row.cells.get(GROUND_TRUTH, "").strip()
        },
        summary=tuple(summary),
        empty_columns=tuple(empty),
        metadata_columns=tuple(name for name in metadata if name in headers),
        explanations=_explanations(headers, rows, metrics),
        columns=tuple(headers),
        settings=declared_settings(summary),
    )


def _explanations(
    headers: Sequence[str], rows: Sequence[TableRow], metrics: Mapping[str, MetricScores]
) -> dict[str, dict[int, str]]:
    columns = {reasoning_column(name) for name in metrics} - {None}
    return {
        column: {
            row.question_number: row.cells[column]
            for row in rows
            if row.cells.get(column, "").strip()
        }
        for column in columns
        if column is not None and column in headers
    }
