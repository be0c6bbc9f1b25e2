"""The Markdown summary a run appends to ``$GITHUB_STEP_SUMMARY``: the gates, the summary
table, the questions left unscored and the lowest-scoring ones (linked into the HTML report
when one was written)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.ci.cases import (
    CaseOutcome,
    EvaluateFacts,
    JunitSuite,
    gate_name,
    gate_text,
)
from rag_evaluator.compare.comparison import ComparisonReport, RunComparison, metric_row
from rag_evaluator.families.jury.results import JUROR_SEPARATOR
from rag_evaluator.offline.registry import LOWER_IS_BETTER
from rag_evaluator.results.kinds import METRIC_KINDS
from rag_evaluator.results.run_scores import MetricKind, RunScores
from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL

WORST_SHOWN = 5
UNSCORED_SHOWN = 10
FLIPS_SHOWN = 10
_QUESTION_WIDTH = 80
# Characters that Markdown or the HTML GitHub renders it to would act on inside a table cell.
_CELL_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
    }
)


@dataclass(frozen=True)
class WeakQuestion:
    """A question among the run's lowest-scoring: its score (the mean of its metrics, each
    turned to 0-1 with 1 best) and its metrics' values as written, from the worst."""

    number: int
    question: str
    score: float
    metrics: tuple[tuple[str, float], ...]


def cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, nothing Markdown would act on."""
    return " ".join(text.split()).translate(_CELL_ESCAPES)


def code(text: str) -> str:
    """``text`` as an inline code span (a file name): one line, its backticks made quotes."""
    one_line = " ".join(text.split()).replace("`", "'")
    return f"`{one_line}`"


def _short(text: str, width: int = _QUESTION_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = [f"| {' | '.join(header)} |", f"|{'---|' * len(header)}"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return [*lines, ""]


def weakest_questions(
    scores: RunScores, metrics: Sequence[str], count: int = WORST_SHOWN
) -> list[WeakQuestion]:
    """The ``count`` questions with the lowest score over ``metrics`` (all the run's metrics
    when empty), lowest first, ties by question number; a question scoring 1 (best on every
    metric) is never among them, nor one with no value. Metrics without a known range (a
    continuous column no family declares) and a jury's juror columns are left out."""
    names = [
        name
        for name in (metrics or list(scores.metrics))
        if name in scores.metrics and JUROR_SEPARATOR not in name
    ]
    found: list[WeakQuestion] = []
    for number in scores.question_numbers:
        values = []  # (oriented, name, value as written)
        for name in names:
            oriented = _oriented(scores, name, number)
            if oriented is not None:
                values.append((oriented, name, scores.metrics[name].values[number]))
        if not values:
            continue
        score = sum(oriented for oriented, _, _ in values) / len(values)
        if score < 1:
            ranked = tuple((name, value) for _, name, value in sorted(values))
            found.append(WeakQuestion(number, scores.questions.get(number, ""), score, ranked))
    found.sort(key=lambda question: (question.score, question.number))
    return found[:count]


def _oriented(scores: RunScores, name: str, number: int) -> float | None:
    """A question's value of one metric on 0-1 with 1 best; ``None`` when it has none."""
    metric = scores.metrics[name]
    value = metric.values.get(number)
    if value is None:
        return None
    if metric.scale is None:
        if metric.kind is not MetricKind.BINARY:
            return None
        low, high = 0.0, 1.0
    else:
        low, high = metric.scale.low, metric.scale.high
        if low is None or high is None or high <= low:
            return None
    share = min(max((value - low) / (high - low), 0.0), 1.0)
    return 1 - share if name.casefold() in LOWER_IS_BETTER else share


def _gate_lines(suite: JunitSuite, rows: Sequence[list[str]]) -> list[str]:
    failed = suite.count(CaseOutcome.FAILED)
    if not rows:
        return ["No gate was set (`--fail-under`, `--fail-over`).", ""]
    verdict = f"❌ {failed} of {len(rows)} gate(s) failed" if failed else "✅ every gate passed"
    return [f"**{verdict}**", "", *_table(["Gate", "Result", "Figure"], rows)]


def evaluate_markdown(
    facts: EvaluateFacts,
    suite: JunitSuite,
    weakest: Sequence[WeakQuestion],
    report_link: str | None,
) -> str:
    """The step summary of an ``evaluate`` run."""
    lines = [f"## rag-eval evaluate: {code(facts.results_name)}", ""]
    if report_link is not None:
        lines += [f"[The HTML report]({report_link})", ""]
    gate_rows = [
        [
            f"`{gate_name(check)}`",
            "✅ passed" if check.passed else "❌ failed",
            cell(gate_text(check, facts.summary)),
        ]
        for check in facts.gate_checks
    ]
    lines += _gate_lines(suite, gate_rows)
    lines += ["### Summary", ""]
    lines += _table(
        ["", "Value"],
        [
            [cell(line.label), cell(line.value)]
            for line in facts.summary
            if line.label != METRIC_KINDS
        ],
    )
    if facts.unscored:
        lines += [f"### Unscored questions: {len(facts.unscored)}", ""]
        lines += _table(
            ["Question", "Error"],
            [[str(q.number), cell(q.error)] for q in facts.unscored[:UNSCORED_SHOWN]],
        )
        hidden = len(facts.unscored) - UNSCORED_SHOWN
        if hidden > 0:
            lines += [f"… and {hidden} more: the results file's Error column says why.", ""]
    if weakest:
        lines += [f"### The {len(weakest)} lowest-scoring questions", ""]
        lines += _table(
            ["Question", "Score", "Its metrics, worst first"],
            [_weak_row(question, report_link) for question in weakest],
        )
    return "\n".join(lines)


def _weak_row(question: WeakQuestion, report_link: str | None) -> list[str]:
    number = str(question.number)
    if report_link is not None:
        # The report's rows are anchored r<run>q<number>; a single run's report is run 0.
        number = f"[{number}]({report_link}#r0q{question.number})"
    text = f"{number} {cell(_short(question.question))}".strip()
    metrics = ", ".join(f"{cell(name)} {value:.4g}" for name, value in question.metrics)
    return [text, f"{question.score:.2f}", metrics]


def compare_markdown(report: ComparisonReport, *, gated: bool) -> str:
    """The step summary of a ``compare`` run: per run, the comparison table and the
    questions that got worse."""
    worse = report.significantly_worse()
    lines = [f"## rag-eval compare: against the baseline {code(report.baseline)}", ""]
    if gated:
        verdict = (
            f"❌ `--fail-if-worse` failed: {len(worse)} metric(s) significantly worse"
            if worse
            else "✅ `--fail-if-worse` passed: no metric significantly worse"
        )
        lines += [f"**{verdict}**", ""]
    for comparison in report.comparisons:
        lines += _comparison_lines(comparison)
    lines += [
        f"Significant: Holm-adjusted p ≤ {report.significance_level:g} over all "
        f"{report.holm_family_size} comparison(s).",
        "",
    ]
    return "\n".join(lines)


def _comparison_lines(comparison: RunComparison) -> list[str]:
    level = f"{CONFIDENCE_LEVEL:.0%}"
    lines = [
        f"### {code(comparison.run)}: {comparison.shared_questions} question(s) in both runs",
        "",
    ]
    header = ["Metric", "n", "Baseline", "Run", f"Change ({level} CI)", "p", "Holm p", "Verdict"]
    lines += _table(header, [[cell(v) for v in metric_row(m)] for m in comparison.metrics])
    rows = []
    for metric in comparison.metrics:
        if metric.got_worse:
            numbers = [str(flip.question_number) for flip in metric.got_worse[:FLIPS_SHOWN]]
            hidden = len(metric.got_worse) - FLIPS_SHOWN
            listed = ", ".join(numbers) + (f" … and {hidden} more" if hidden > 0 else "")
            rows.append([cell(metric.metric), str(len(metric.got_worse)), listed])
    if rows:
        lines += ["Questions that got worse:", ""]
        lines += _table(["Metric", "Count", "Questions"], rows)
    return lines
