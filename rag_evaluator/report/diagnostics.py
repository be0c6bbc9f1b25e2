"""Diagnostics: the seeds' interpretation guides turned into rules that flag questions.

``DIAGNOSTIC_RULES`` is the one table of thresholds (SPEC.md, "rag-eval report",
lists it). A rule holds when every one of its conditions holds; a condition names one or
more metric columns and holds when *any* of them that the run has meets the threshold
(e.g. "a lexical score ≥ 0.7": keyword_coverage, rouge_l or rouge1). Columns are found by
``column_key`` (any case, ``_``/spaces ignored), or, for a condition with ``contains``, as
the first metric column whose key contains that text (``ragas_faithfulness``,
``Faithfulness``). A rule whose columns the run lacks is reported as not checked, with
what it needs.

The "says it does not know" rule reads text as well as columns: the answer counts as a
non-answer when its ``dont_know`` column is 1, when a label column holds ``DONT_KNOW``
(the classification families' label), when seed 001's uncertainty phrases occur in it, or
when one of its sentences opens with a no-information statement ("I couldn't find any
information about …"); the ground truth "has an answer" when it is not empty and is
neither a no-information statement nor such a non-answer itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_evaluator.inputs.fields import column_key
from rag_evaluator.offline.lexical import dont_know
from rag_evaluator.text.no_information import opens_with_no_information, says_no_information

AT_LEAST = ">="
ABOVE = ">"
BELOW = "<"

DONT_KNOW_LABEL = "dontknow"  # column_key of DONT_KNOW, DON'T KNOW, dont know


@dataclass(frozen=True)
class Condition:
    """``metrics`` (any of them present) compared with ``threshold``."""

    metrics: tuple[str, ...]
    comparison: str
    threshold: float
    contains: str | None = None  # match a column whose key contains this text instead

    def holds(self, value: float) -> bool:
        if self.comparison == AT_LEAST:
            return value >= self.threshold
        if self.comparison == ABOVE:
            return value > self.threshold
        return value < self.threshold

    def needs(self) -> str:
        """The columns this condition reads, in words."""
        if self.contains is not None:
            return f"a {self.contains} column"
        return " or ".join(self.metrics)

    def describe(self, columns: Sequence[str] = ()) -> str:
        """``keyword_coverage ≥ 0.7``, with the run's column names when given."""
        names = " or ".join(columns) if columns else self.needs()
        symbol = "≥" if self.comparison == AT_LEAST else self.comparison
        return f"{names} {symbol} {self.threshold:g}"


@dataclass(frozen=True)
class DiagnosticRule:
    """One pattern from the seeds' guides: when it holds, what it probably means."""

    key: str  # short id used by the report's filters
    title: str
    meaning: str
    source: str
    conditions: tuple[Condition, ...] = ()
    reads_dont_know: bool = False  # the "says it does not know" rule (text, not columns)


DIAGNOSTIC_RULES: tuple[DiagnosticRule, ...] = (
    DiagnosticRule(
        key="numbers",
        title="Numbers wrong",
        meaning="The answer has the right concepts but wrong numeric values "
        "(critical for calculations, rates, amounts).",
        source="seed 000: high keyword coverage, low number match",
        conditions=(
            Condition(("keyword_coverage",), AT_LEAST, 0.7),
            Condition(("number_match",), BELOW, 0.5),
        ),
    ),
    DiagnosticRule(
        key="grounding",
        title="Not grounded in the contexts",
        meaning="The answer matches the expected text but is not supported by the "
        "retrieved contexts (it may come from the model's memory or fit the expected format).",
        source="seed 000: high custom metrics, low RAGAS metrics",
        conditions=(
            Condition(("keyword_coverage", "rouge_l", "rouge1"), AT_LEAST, 0.7),
            Condition((), BELOW, 0.5, contains="faithfulness"),
        ),
    ),
    DiagnosticRule(
        key="offtopic",
        title="Retrieval off-topic",
        meaning="The retrieved contexts are far from the question.",
        source="seed 002: context relevance < 0.5",
        conditions=(Condition(("context_relevance",), BELOW, 0.5),),
    ),
    DiagnosticRule(
        key="evidence",
        title="Insufficient evidence retrieved",
        meaning="Fewer than half of the retrieved contexts are close to the question.",
        source="seed 002: context sufficiency < 0.5",
        conditions=(Condition(("context_sufficiency",), BELOW, 0.5),),
    ),
    DiagnosticRule(
        key="hallucination",
        title="Hallucination",
        meaning="A significant share of the answer's sentences is supported by no context.",
        source="seed 002: answer hallucination > 0.3",
        conditions=(Condition(("hallucination",), ABOVE, 0.3),),
    ),
    DiagnosticRule(
        key="relevance",
        title="Answer misses the question",
        meaning="The answer does not address the question that was asked.",
        source="seed 002: answer relevance < 0.6",
        conditions=(Condition(("answer_relevance",), BELOW, 0.6),),
    ),
    DiagnosticRule(
        key="correctness",
        title="Factual issues likely",
        meaning="The answer is far from the ground truth in meaning.",
        source="seed 002: answer correctness < 0.6",
        conditions=(Condition(("answer_correctness",), BELOW, 0.6),),
    ),
    DiagnosticRule(
        key="dontknow",
        title="Says it does not know, but there is an answer",
        meaning="The system gave up on a question its golden set answers: a retrieval "
        "miss or a knowledge gap.",
        source="seed 001: don't-know answers; the ground truth has an answer",
        reads_dont_know=True,
    ),
)


@dataclass(frozen=True)
class QuestionEvidence:
    """What the rules read of one question."""

    question_number: int
    answer: str
    ground_truth: str
    metrics: Mapping[str, float]  # metric column -> value, scored cells only
    labels: Sequence[str] = ()  # the row's label-column values


@dataclass(frozen=True)
class DiagnosticResult:
    """A rule applied to a run: the columns it read and the questions it flagged.

    ``checked`` counts the questions that had every value the rule needs; ``missing``
    names what the run lacks when the rule could not be applied at all.
    """

    rule: DiagnosticRule
    columns: tuple[tuple[str, ...], ...]  # per condition, the run's columns it reads
    flagged: tuple[int, ...]
    checked: int
    missing: tuple[str, ...] = ()

    @property
    def applied(self) -> bool:
        return not self.missing

    def criterion(self) -> str:
        """The rule in words, with the run's own column names."""
        if self.rule.reads_dont_know:
            return (
                "the answer says it does not know (dont_know = 1, a DONT_KNOW label, seed "
                "001's uncertainty phrases or a no-information statement) and the ground "
                "truth gives an answer"
            )
        columns = self.columns or tuple(() for _ in self.rule.conditions)
        return " and ".join(
            condition.describe(names)
            for condition, names in zip(self.rule.conditions, columns, strict=True)
        )


def _resolve(condition: Condition, metric_columns: Sequence[str]) -> tuple[str, ...]:
    if condition.contains is not None:
        wanted = column_key(condition.contains)
        found = next((name for name in metric_columns if wanted in column_key(name)), None)
        return () if found is None else (found,)
    by_key = {column_key(name): name for name in metric_columns}
    return tuple(
        by_key[column_key(metric)] for metric in condition.metrics if column_key(metric) in by_key
    )


def says_dont_know(evidence: QuestionEvidence, dont_know_column: str | None) -> bool:
    """Whether the answer admits it does not know: by its column, its label, seed 001's
    phrases or a no-information statement."""
    if any(column_key(label) == DONT_KNOW_LABEL for label in evidence.labels):
        return True
    if dont_know_column is not None and evidence.metrics.get(dont_know_column, 0.0) >= 0.5:
        return True
    return dont_know(evidence.answer) == 1.0 or opens_with_no_information(evidence.answer)


def has_answer(ground_truth: str) -> bool:
    """Whether a ground truth gives an answer (not empty, not "no information")."""
    text = ground_truth.strip()
    return bool(text) and not says_no_information(text) and dont_know(text) == 0.0


def apply_rule(
    rule: DiagnosticRule, metric_columns: Sequence[str], questions: Sequence[QuestionEvidence]
) -> DiagnosticResult:
    """Apply one rule to a run's questions."""
    if rule.reads_dont_know:
        dont_know_column = next(
            (name for name in metric_columns if column_key(name) == DONT_KNOW_LABEL), None
        )
        flagged = tuple(
            evidence.question_number
            for evidence in questions
            if says_dont_know(evidence, dont_know_column) and has_answer(evidence.ground_truth)
        )
        return DiagnosticResult(rule, (), flagged, len(questions))
    columns = tuple(_resolve(condition, metric_columns) for condition in rule.conditions)
    missing = tuple(
        condition.needs()
        for condition, found in zip(rule.conditions, columns, strict=True)
        if not found
    )
    if missing:
        return DiagnosticResult(rule, columns, (), 0, missing)
    flagged: list[int] = []
    checked = 0
    for evidence in questions:
        outcomes: list[bool] = []
        for condition, names in zip(rule.conditions, columns, strict=True):
            values = [evidence.metrics[name] for name in names if name in evidence.metrics]
            if not values:
                break
            outcomes.append(any(condition.holds(value) for value in values))
        else:
            checked += 1
            if all(outcomes):
                flagged.append(evidence.question_number)
    return DiagnosticResult(rule, columns, tuple(flagged), checked)


def run_diagnostics(
    metric_columns: Sequence[str],
    questions: Sequence[QuestionEvidence],
    rules: Sequence[DiagnosticRule] = DIAGNOSTIC_RULES,
) -> list[DiagnosticResult]:
    """Every rule applied to a run, in the table's order."""
    return [apply_rule(rule, metric_columns, questions) for rule in rules]
