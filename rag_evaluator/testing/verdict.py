"""A check's verdict: the ``--fail-under`` / ``--fail-over`` gates on its scores, and the
message a failed check shows (each gate's figure with its interval, then the questions past a
missed threshold: question, expected, got, their values against the limit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.results.gates import Threshold, failed_thresholds
from rag_evaluator.results.summary import fraction_line, mean_line
from rag_evaluator.text.snippets import quote_snippet

# Past this many, the message counts the other failing questions instead of listing them.
SHOWN_QUESTIONS = 20
TEXT_LIMIT = 200


@dataclass(frozen=True)
class ScoredQuestion:
    """One question's value of every metric the check computed (``None``: no value), and the
    reasons a model-judged family could not score it."""

    item: EvaluationItem
    values: Mapping[str, float | None]
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoredCheck:
    """What scoring a check gives the verdict: its questions, each metric's rate or mean (as
    ``evaluate`` computes it for its gates), the binary metrics, the thresholds by metric."""

    source: str
    questions: list[ScoredQuestion]
    observed: Mapping[str, float | None]
    binary: frozenset[str]
    thresholds: Mapping[str, Threshold]


@dataclass(frozen=True)
class GateResult:
    """One threshold against its metric's figure (``mean 0.41 (n=3) [95% CI 0.20–0.62]``)."""

    metric: str
    threshold: Threshold
    value: float | None
    figure: str
    passed: bool

    def text(self) -> str:
        bound = "maximum" if self.threshold.upper else "minimum"
        status = "passed" if self.passed else "FAILED"
        return f"{status} {self.metric}: {self.figure}, {bound} {self.threshold.limit:g}"


@dataclass(frozen=True)
class CheckReport:
    """A check's outcome: ``passed``, each metric's figure (``values``), the gates, the
    questions past a missed threshold and those a judged family could not score."""

    source: str
    question_count: int
    values: Mapping[str, float | None]
    gates: tuple[GateResult, ...]
    failing_questions: tuple[ScoredQuestion, ...] = ()
    unscored: tuple[ScoredQuestion, ...] = ()
    message: str = field(default="", compare=False)

    @property
    def passed(self) -> bool:
        return all(gate.passed for gate in self.gates) and not self.unscored


def _figure(metric: str, check: ScoredCheck) -> str:
    values = [
        value for question in check.questions if (value := question.values.get(metric)) is not None
    ]
    if metric in check.binary:
        return fraction_line(metric, sum(1 for value in values if value == 1.0), len(values)).value
    return mean_line(metric, values).value


def _value_text(value: float | None, binary: bool) -> str:
    if value is None:
        return "no value"
    return f"{value:g}" if binary else f"{value:.4f}"


def _misses(question: ScoredQuestion, gates: Sequence[GateResult], binary: frozenset[str]) -> str:
    """``rougeL 0.2100 < 0.5; dont_know 1 > 0.1``: the question's values past missed gates."""
    parts = []
    for gate in gates:
        value = question.values.get(gate.metric)
        if not gate.passed and gate.threshold.missed_by(value):
            sign = ">" if gate.threshold.upper else "<"
            shown = _value_text(value, gate.metric in binary)
            parts.append(f"{gate.metric} {shown} {sign} {gate.threshold.limit:g}")
    return "; ".join(parts)


def _question_lines(question: ScoredQuestion, detail: str) -> list[str]:
    item = question.item
    return [
        f"  question {item.question_number}: {quote_snippet(item.question, TEXT_LIMIT)}",
        f"    expected: {quote_snippet(item.ground_truth, TEXT_LIMIT)}",
        f"    got:      {quote_snippet(item.rag_answer, TEXT_LIMIT)}",
        f"    {detail}",
    ]


def _listed(heading: str, questions: Sequence[ScoredQuestion], details: Sequence[str]) -> list[str]:
    if not questions:
        return []
    lines = ["", heading]
    for question, detail in list(zip(questions, details, strict=True))[:SHOWN_QUESTIONS]:
        lines += _question_lines(question, detail)
    hidden = len(questions) - SHOWN_QUESTIONS
    if hidden > 0:
        lines.append(f"  ... and {hidden} more")
    return lines


def _message(report: CheckReport, binary: frozenset[str]) -> str:
    missed = sum(1 for gate in report.gates if not gate.passed)
    plural = "" if report.question_count == 1 else "s"
    lines = [
        f"rag-eval check of {report.source} ({report.question_count} question{plural}): "
        f"{missed} of {len(report.gates)} thresholds missed"
        + (f", {len(report.unscored)} unscored" if report.unscored else ""),
        *(f"  {gate.text()}" for gate in report.gates),
    ]
    failing = report.failing_questions
    lines += _listed(
        f"{len(failing)} question{'' if len(failing) == 1 else 's'} past a missed threshold:",
        failing,
        [_misses(question, report.gates, binary) for question in failing],
    )
    lines += _listed(
        f"{len(report.unscored)} question{'' if len(report.unscored) == 1 else 's'} not "
        "scored (nothing shows their thresholds met):",
        report.unscored,
        ["; ".join(question.errors) for question in report.unscored],
    )
    return "\n".join(lines)


def check_verdict(check: ScoredCheck) -> CheckReport:
    """The gates of ``check`` (reaching a limit exactly passes, a metric with no value fails)
    and, when one is missed or a question is unscored, the message saying why."""
    failures = {
        failure.metric
        for failure in failed_thresholds(list(check.thresholds.values()), check.observed)
    }
    gates = tuple(
        GateResult(
            metric,
            threshold,
            check.observed.get(metric),
            _figure(metric, check),
            metric not in failures,
        )
        for metric, threshold in check.thresholds.items()
    )
    failing = tuple(
        question
        for question in check.questions
        if not question.errors
        and any(
            not gate.passed and gate.threshold.missed_by(question.values.get(gate.metric))
            for gate in gates
        )
    )
    unscored = tuple(question for question in check.questions if question.errors)
    report = CheckReport(
        check.source, len(check.questions), dict(check.observed), gates, failing, unscored
    )
    if report.passed:
        return report
    return replace(report, message=_message(report, check.binary))
