"""The test cases of ``--junit``: a run's gates as JUnit test cases, built from plain data.

The file fails exactly when the command's exit code says the run's quality failed: a gate's
case fails when that gate fails the command (exit 3), and each question left unscored (exit
1) is an error case. A run without gates still reports its figures: ``evaluate`` a passing
case per metric of its summary, ``compare`` a passing case per metric compared.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.compare.comparison import ComparisonReport, MetricComparison, format_p
from rag_evaluator.results.gates import ThresholdCheck
from rag_evaluator.results.summary import SummaryLine
from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL

EVALUATE_CLASS = "rag-eval.evaluate"
COMPARE_CLASS = "rag-eval.compare"
# Characters XML 1.0 cannot hold at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF):
# a metric name or an error text from the user's files may hold one.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class CaseOutcome(enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # a gate missed: <failure>
    ERROR = "error"  # a question left unscored: <error>
    SKIPPED = "skipped"  # a metric compare could not compare: <skipped>


@dataclass(frozen=True)
class JunitCase:
    """One ``<testcase>``: ``message`` is the one-line reason of a failure, error or skip;
    ``details`` the text inside that element, or the ``<system-out>`` of a passing case."""

    classname: str
    name: str
    outcome: CaseOutcome
    message: str = ""
    details: str = ""
    kind: str = ""  # the ``type`` attribute of a failure or error


@dataclass(frozen=True)
class JunitSuite:
    """One ``<testsuite>``: a results file's gates, or one run compared with the baseline."""

    name: str
    cases: tuple[JunitCase, ...]

    def count(self, outcome: CaseOutcome) -> int:
        return sum(1 for case in self.cases if case.outcome is outcome)


@dataclass(frozen=True)
class UnscoredQuestion:
    """A question the run could not score, and why (its ``Error`` cell)."""

    number: int
    question: str
    error: str


@dataclass(frozen=True)
class EvaluateFacts:
    """What evaluate's CI outputs are built from: the results file as named to the user, its
    summary, every gate as checked, and the questions left unscored."""

    results_name: str
    summary: Sequence[SummaryLine]
    gate_checks: Sequence[ThresholdCheck]
    unscored: Sequence[UnscoredQuestion]


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def metric_lines(summary: Sequence[SummaryLine]) -> list[SummaryLine]:
    """The summary's rate and mean lines: the ones with numbers behind them."""
    return [line for line in summary if line.numbers is not None]


def gate_name(check: ThresholdCheck) -> str:
    """``--fail-under Precision=0.8``: the gate as an option."""
    return f"{check.threshold.option} {check.metric}={check.threshold.limit:g}"


def gate_text(check: ThresholdCheck, summary: Sequence[SummaryLine]) -> str:
    """The figure, its interval and the threshold: ``Precision 0.4000 < minimum 0.8;
    2/5 (40%) [95% CI 12–77%]``."""
    bound = "maximum" if check.threshold.upper else "minimum"
    limit = f"{bound} {check.threshold.limit:g}"
    if check.value is None:
        return f"{check.metric} has no scored question ({limit})"
    if check.passed:
        sign = "≤" if check.threshold.upper else "≥"
    else:
        sign = ">" if check.threshold.upper else "<"
    figure = next((line.value for line in summary if line.label == check.metric), None)
    text = f"{check.metric} {check.value:.4f} {sign} {limit}"
    return text if figure is None else f"{text}; {figure}"


def evaluate_suite(facts: EvaluateFacts) -> JunitSuite:
    """The gates' cases (or, without gates, one per metric), then one error per unscored
    question."""
    if facts.gate_checks:
        cases = [
            JunitCase(
                EVALUATE_CLASS,
                gate_name(check),
                CaseOutcome.PASSED if check.passed else CaseOutcome.FAILED,
                message="" if check.passed else gate_text(check, facts.summary),
                details=gate_text(check, facts.summary),
                kind="" if check.passed else check.threshold.option,
            )
            for check in facts.gate_checks
        ]
    else:
        cases = [
            JunitCase(EVALUATE_CLASS, line.label, CaseOutcome.PASSED, details=line.value)
            for line in metric_lines(facts.summary)
        ]
    cases += [
        JunitCase(
            f"{EVALUATE_CLASS}.unscored",
            f"question {question.number}",
            CaseOutcome.ERROR,
            message=" ".join(question.error.split()) or "not scored",
            details=f"Question {question.number}: {question.question}\n{question.error}",
            kind="unscored",
        )
        for question in facts.unscored
    ]
    return JunitSuite(f"rag-eval evaluate {facts.results_name}", tuple(xml_cases(cases)))


def comparison_text(metric: MetricComparison, run: str, baseline: str, level: float) -> str:
    """``exact_match in b.csv: -40.0 pts (95% CI -61.3 to -15.8), Holm p 0.0030 ≤ 0.05:
    significantly worse than the baseline a.csv``."""
    change = change_text(metric)
    significant = "≤" if metric.significant else ">"
    verdict = {
        "worse": "significantly worse than",
        "better": "significantly better than",
    }.get(metric.verdict, "not significantly different from")
    return (
        f"{metric.metric} in {run}: {change}, Holm p {format_p(metric.holm_p_value)} "
        f"{significant} {level:g}: {verdict} the baseline {baseline}"
    )


def change_text(metric: MetricComparison) -> str:
    """The change with its interval: ``-40.0 pts (95% CI -61.3 to -15.8)``."""
    level = f"{CONFIDENCE_LEVEL:.0%} CI"
    points = metric.counts is not None
    scale, unit, digits = (100, " pts", 1) if points else (1, "", 4)
    change = f"{metric.difference * scale:+.{digits}f}{unit}"
    if metric.interval is None:
        return f"{change} ({level} n/a)"
    low, high = metric.interval.low * scale, metric.interval.high * scale
    return f"{change} ({level} {low:+.{digits}f} to {high:+.{digits}f})"


def compare_suites(report: ComparisonReport, *, gated: bool) -> list[JunitSuite]:
    """One suite per run compared: a case per metric, failed when ``gated`` (``--fail-if-
    worse``) and significantly worse; a skipped case per metric that could not be compared.
    Questions left out are named in a case's output, not errors: compare exits 0 with them."""
    worse = {(run, metric.metric) for run, metric in report.significantly_worse()}
    suites = []
    for comparison in report.comparisons:
        cases = []
        for metric in comparison.metrics:
            text = comparison_text(
                metric, comparison.run, comparison.baseline, report.significance_level
            )
            failed = gated and (comparison.run, metric.metric) in worse
            details = text
            if metric.left_out:
                details += f"\nLeft out (unscored in one run or both): {len(metric.left_out)}"
            cases.append(
                JunitCase(
                    COMPARE_CLASS,
                    _compare_name(metric.metric, comparison.run),
                    CaseOutcome.FAILED if failed else CaseOutcome.PASSED,
                    message=text if failed else "",
                    details=details,
                    kind="--fail-if-worse" if failed else "",
                )
            )
        cases += [
            JunitCase(
                COMPARE_CLASS,
                _compare_name(skipped.metric, comparison.run),
                CaseOutcome.SKIPPED,
                message=f"not compared: {skipped.reason}",
            )
            for skipped in comparison.skipped
        ]
        name = f"rag-eval compare {comparison.run} with {comparison.baseline}"
        suites.append(JunitSuite(name, tuple(xml_cases(cases))))
    return suites


def _compare_name(metric: str, run: str) -> str:
    return f"{metric} in {run} not worse than the baseline"


def xml_cases(cases: Sequence[JunitCase]) -> list[JunitCase]:
    """The cases with every text made writable as XML 1.0."""
    return [
        JunitCase(
            xml_safe(case.classname),
            xml_safe(case.name),
            case.outcome,
            xml_safe(" ".join(case.message.split())),
            xml_safe(case.details),
            xml_safe(case.kind),
        )
        for case in cases
    ]
