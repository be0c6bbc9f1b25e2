"""The comparison part of a report: ``rag-eval compare``'s own statistics (``compare_runs``,
not computed again), the flipped questions with both runs' answers and reasoning, and the
questions whose scores dropped most."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_evaluator.compare.comparison import (
    ComparisonReport,
    MetricComparison,
    RunComparison,
    compare_runs,
)
from rag_evaluator.errors import InputError
from rag_evaluator.results.run_scores import MetricKind, RunScores
from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL

# Flipped questions shown in full per metric and direction; the rest are listed by number.
FLIPS_SHOWN = 50
# Largest per-question drops shown per continuous metric.
DROPS_SHOWN = 10


@dataclass(frozen=True)
class FlipView:
    question_number: int  # the baseline's; the run's own number is run_question_number
    question: str
    baseline_value: int
    run_value: int
    baseline_answer: str
    run_answer: str
    baseline_reasoning: str
    run_reasoning: str
    run_question_number: int


@dataclass(frozen=True)
class FlipGroup:
    metric: str
    direction: str  # "worse" or "better"
    shown: tuple[FlipView, ...]
    more: tuple[int, ...]  # the run's numbers of the questions flipped too, not shown in full


@dataclass(frozen=True)
class DropView:
    question_number: int  # the baseline's
    question: str
    baseline_value: float
    run_value: float
    run_question_number: int


@dataclass(frozen=True)
class DropGroup:
    metric: str
    lower_is_better: bool
    shown: tuple[DropView, ...]
    total: int  # questions that got worse on this metric


@dataclass(frozen=True)
class RunComparisonView:
    comparison: RunComparison
    run_index: int
    flips: tuple[FlipGroup, ...]
    drops: tuple[DropGroup, ...]


@dataclass(frozen=True)
class ComparisonView:
    report: ComparisonReport | None
    error: str | None
    runs: tuple[RunComparisonView, ...]
    confidence_level: float = CONFIDENCE_LEVEL


@dataclass(frozen=True)
class RunTexts:
    """What the comparison shows of a run's rows: questions and answers by number."""

    questions: Mapping[int, str]
    answers: Mapping[int, str]


def _flip_groups(
    metric: MetricComparison, baseline: RunTexts, run: RunTexts
) -> tuple[FlipGroup, ...]:
    questions = baseline.questions
    baseline_answers = baseline.answers
    run_answers = run.answers
    run_questions = run.questions
    groups = []
    for direction, flips in (("worse", metric.got_worse), ("better", metric.got_better)):
        if not flips:
            continue
        shown = tuple(
            FlipView(
                question_number=flip.question_number,
                question=questions.get(flip.question_number)
                or run_questions.get(flip.run_question_number, ""),
                baseline_value=flip.baseline_value,
                run_value=flip.run_value,
                baseline_answer=baseline_answers.get(flip.question_number, ""),
                run_answer=run_answers.get(flip.run_question_number, ""),
                baseline_reasoning=flip.baseline_reasoning,
                run_reasoning=flip.run_reasoning,
                run_question_number=flip.run_question_number,
            )
            for flip in flips[:FLIPS_SHOWN]
        )
        more = tuple(flip.run_question_number for flip in flips[FLIPS_SHOWN:])
        groups.append(FlipGroup(metric.metric, direction, shown, more))
    return tuple(groups)


def _drop_group(
    metric: MetricComparison,
    baseline: RunScores,
    run: RunScores,
    pairs: Sequence[tuple[int, int]],
    questions: Mapping[int, str],
) -> DropGroup:
    before = baseline.metrics[metric.metric].values
    after = run.metrics[metric.metric].values
    sign = -1.0 if metric.lower_is_better else 1.0
    worse = [
        (number, run_number, before[number], after[run_number])
        for number, run_number in pairs
        if number in before
        and run_number in after
        and sign * (after[run_number] - before[number]) < 0
    ]
    worse.sort(key=lambda item: (sign * (item[3] - item[2]), item[0]))
    return DropGroup(
        metric=metric.metric,
        lower_is_better=metric.lower_is_better,
        shown=tuple(
            DropView(number, questions.get(number, ""), old, new, run_number)
            for number, run_number, old, new in worse[:DROPS_SHOWN]
        ),
        total=len(worse),
    )


def comparison_view(texts: Sequence[RunTexts], scores: Sequence[RunScores]) -> ComparisonView:
    """``compare_runs`` over the runs (baseline first), with the flipped questions' texts and
    the largest drops; a comparison that cannot be made carries its reason instead."""
    try:
        report = compare_runs(scores)
    except InputError as exc:
        return ComparisonView(report=None, error=exc.message, runs=())
    views = []
    for position, comparison in enumerate(report.comparisons, start=1):
        flips = tuple(
            group
            for metric in comparison.metrics
            if metric.kind is MetricKind.BINARY
            for group in _flip_groups(metric, texts[0], texts[position])
        )
        questions = texts[0].questions
        pairs = () if comparison.pairing is None else comparison.pairing.pairs
        drops = tuple(
            group
            for metric in comparison.metrics
            if metric.kind is MetricKind.CONTINUOUS
            and (group := _drop_group(metric, scores[0], scores[position], pairs, questions)).total
        )
        views.append(RunComparisonView(comparison, position, flips, drops))
    return ComparisonView(report=report, error=None, runs=tuple(views))
