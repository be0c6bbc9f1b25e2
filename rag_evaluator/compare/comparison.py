"""Comparing runs question by question: paired differences, tests, Holm's correction.

The first run is the baseline; every other run is compared with it over the questions both
scored, its rows paired with the baseline's by ``compare/pairing.py`` (by number, or by question
text when the numbers hold other questions). Binary metrics: the rates, their difference
with Newcombe's paired interval and McNemar's exact test. Continuous metrics: the means,
the mean difference with a paired bootstrap interval and the paired bootstrap test from
the same resamples. All the tests of one report form one Holm family, so "significant"
holds for the whole report at ``SIGNIFICANCE_LEVEL``. A metric whose defining settings
(``--k``, ``--match``..., ``offline/metric_settings.py``) differ between the two files holds
two different metrics under one name: it is skipped, and out of the family.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, replace

from rag_evaluator.compare.pairing import QuestionPairing, pair_questions
from rag_evaluator.errors import InputError, UsageError
from rag_evaluator.inputs.fields import column_key
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.offline.metric_settings import defining_settings
from rag_evaluator.offline.registry import LOWER_IS_BETTER as OFFLINE_LOWER_IS_BETTER
from rag_evaluator.results.run_scores import MetricKind, RunScores
from rag_evaluator.stats.statistics import (
    CONFIDENCE_LEVEL,
    SIGNIFICANCE_LEVEL,
    Interval,
    PairedCounts,
    holm_adjust,
    mcnemar_exact_p_value,
    paired_bootstrap,
    paired_difference_interval,
)

# Metrics where a lower value is the better one, as their definitions declare them (the
# model-judged families declare none). Every other metric, columns added later included,
# counts higher as better.
LOWER_IS_BETTER = OFFLINE_LOWER_IS_BETTER

NOT_SIGNIFICANT = "n.s."
MCNEMAR = "McNemar exact"
PAIRED_BOOTSTRAP = "paired bootstrap"
_SHOWN_NUMBERS = 15


@dataclass(frozen=True)
class Flip:
    """A question whose binary score changed between the baseline and the run.

    ``question_number`` is the baseline's; ``run_question_number`` the same question's
    number in the run (another one when the rows were paired by question text).
    """

    question_number: int
    baseline_value: int
    run_value: int
    baseline_reasoning: str
    run_reasoning: str
    run_question_number: int


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one run against the baseline, over the questions scored in both."""

    metric: str
    kind: MetricKind
    paired_count: int
    left_out: tuple[int, ...]  # in both runs, but unscored in one or both
    baseline_value: float  # rate or mean over the paired questions
    run_value: float
    difference: float  # run - baseline
    interval: Interval | None
    test: str
    p_value: float
    holm_p_value: float
    significant: bool
    lower_is_better: bool
    counts: PairedCounts | None = None  # binary metrics
    got_worse: tuple[Flip, ...] = ()
    got_better: tuple[Flip, ...] = ()

    @property
    def verdict(self) -> str:
        """``worse``, ``better`` or ``n.s.`` (no significant change)."""
        if not self.significant or self.difference == 0:
            return NOT_SIGNIFICANT
        improved = (self.difference < 0) if self.lower_is_better else (self.difference > 0)
        return "better" if improved else "worse"


@dataclass(frozen=True)
class SkippedMetric:
    """A metric of one of the two runs that could not be compared, and why."""

    metric: str
    reason: str


@dataclass(frozen=True)
class RunComparison:
    """One run against the baseline."""

    baseline: str
    run: str
    shared_questions: int
    only_in_baseline: tuple[int, ...]
    only_in_run: tuple[int, ...]
    metrics: tuple[MetricComparison, ...]
    skipped: tuple[SkippedMetric, ...]
    pairing: QuestionPairing | None = None

    @property
    def paired_by(self) -> str:
        """``question number`` or ``question text``."""
        return "question number" if self.pairing is None else self.pairing.paired_by


@dataclass(frozen=True)
class ComparisonReport:
    """Every run against the baseline, with one Holm correction over all their tests."""

    baseline: str
    comparisons: tuple[RunComparison, ...]
    holm_family_size: int
    significance_level: float = SIGNIFICANCE_LEVEL

    def significantly_worse(self) -> list[tuple[str, MetricComparison]]:
        """(run, metric) pairs that are significantly worse than the baseline."""
        return [
            (comparison.run, metric)
            for comparison in self.comparisons
            for metric in comparison.metrics
            if metric.verdict == "worse"
        ]


def select_metrics(runs: Sequence[RunScores], requested: Sequence[str]) -> list[str] | None:
    """Resolve ``--metrics`` names (any case, ``_``/spaces ignored) to column names.

    ``None`` when nothing was requested (compare every metric). An unknown name is a
    ``UsageError`` listing the metrics the files hold.
    """
    if not requested:
        return None
    known: dict[str, str] = {}
    for run in runs:
        for name in run.metrics:
            known.setdefault(column_key(name), name)
    chosen: list[str] = []
    unknown: list[str] = []
    for name in requested:
        found = known.get(column_key(name))
        if found is None:
            unknown.append(name)
        elif found not in chosen:
            chosen.append(found)
    if unknown:
        available = ", ".join(known.values()) or "none"
        raise UsageError(
            f"--metrics names {', '.join(repr(name) for name in unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not a metric of these files. "
            f"Use some of: {available}"
        )
    return chosen


def _numbers(numbers: Sequence[int]) -> str:
    return format_numbers(numbers, _SHOWN_NUMBERS)


def compare_runs(
    runs: Sequence[RunScores], metrics: Sequence[str] | None = None
) -> ComparisonReport:
    """Compare every run after the first with the first (the baseline).

    ``metrics`` limits the comparison (and the Holm family) to those columns.
    Raises ``InputError`` when a run shares no question or no metric with the baseline.
    """
    baseline, *others = runs
    comparisons = [_compare_pair(baseline, run, metrics) for run in others]
    tested = [metric for comparison in comparisons for metric in comparison.metrics]
    adjusted = iter(holm_adjust([metric.p_value for metric in tested]))
    corrected = tuple(
        replace(
            comparison,
            metrics=tuple(_with_holm(metric, next(adjusted)) for metric in comparison.metrics),
        )
        for comparison in comparisons
    )
    return ComparisonReport(baseline.label, corrected, holm_family_size=len(tested))


def _with_holm(metric: MetricComparison, holm_p_value: float) -> MetricComparison:
    return replace(
        metric,
        holm_p_value=holm_p_value,
        significant=holm_p_value <= SIGNIFICANCE_LEVEL,
    )


def _compare_pair(
    baseline: RunScores, run: RunScores, wanted: Sequence[str] | None
) -> RunComparison:
    pairing = pair_questions(baseline, run)
    names = list(wanted) if wanted is not None else _metric_union(baseline, run)
    compared: list[MetricComparison] = []
    skipped: list[SkippedMetric] = []
    for name in names:
        in_baseline = name in baseline.metrics
        in_run = name in run.metrics
        if not (in_baseline and in_run):
            holder = baseline.label if in_baseline else run.label
            other = run.label if in_baseline else baseline.label
            reason = f"only in {holder}" if (in_baseline or in_run) else "in neither file"
            if name in (run.empty_columns if in_baseline else baseline.empty_columns):
                reason = f"no value in {other}"
            skipped.append(SkippedMetric(name, reason))
            continue
        differences = settings_differences(name, baseline, run)
        if differences is not None:
            skipped.append(SkippedMetric(name, differences))
            continue
        result = _compare_metric(name, baseline, run, pairing.pairs)
        if isinstance(result, SkippedMetric):
            skipped.append(result)
        else:
            compared.append(result)
    if not compared and not any(name in run.metrics for name in baseline.metrics):
        raise InputError(
            f"{baseline.label} and {run.label} have no metric column in common "
            f"({baseline.label}: {', '.join(baseline.metrics) or 'none'}; {run.label}: "
            f"{', '.join(run.metrics) or 'none'}). Compare runs that computed the same metrics"
        )
    return RunComparison(
        baseline=baseline.label,
        run=run.label,
        shared_questions=len(pairing.pairs),
        only_in_baseline=pairing.only_in_baseline,
        only_in_run=pairing.only_in_run,
        metrics=tuple(compared),
        skipped=tuple(skipped),
        pairing=pairing,
    )


def settings_differences(name: str, baseline: RunScores, run: RunScores) -> str | None:
    """Why metric ``name`` is not the same metric in the two files: every setting defining
    it that both record with another value (``--k differs: 5 in a.csv, 1 in b.csv``);
    ``None`` when none differs or a file records no settings (files older than the row)."""
    if baseline.settings is None or run.settings is None:
        return None
    before = defining_settings(name, baseline.settings)
    after = defining_settings(name, run.settings)
    parts = [
        f"--{setting} differs: {value} in {baseline.label}, {after[setting]} in {run.label}"
        for setting, value in before.items()
        if setting in after and after[setting] != value
    ]
    return "; ".join(parts) or None


def _metric_union(baseline: RunScores, run: RunScores) -> list[str]:
    names = list(baseline.metrics)
    names += [name for name in run.metrics if name not in baseline.metrics]
    return names


def _compare_metric(
    name: str, baseline: RunScores, run: RunScores, pairs: Sequence[tuple[int, int]]
) -> MetricComparison | SkippedMetric:
    """Which pairs a metric is compared on (those scored in both runs) and which test
    compares them: McNemar's for a 0/1 metric in both runs, else the paired bootstrap."""
    before_scores: Mapping[int, float] = baseline.metrics[name].values
    after_scores: Mapping[int, float] = run.metrics[name].values
    paired = [(b, r) for b, r in pairs if b in before_scores and r in after_scores]
    scored = {b for b, _ in paired}
    left_out = tuple(b for b, _ in pairs if b not in scored)
    if not paired:
        return SkippedMetric(name, "no question scored in both runs")
    binary = (
        baseline.metrics[name].kind is MetricKind.BINARY
        and run.metrics[name].kind is MetricKind.BINARY
    )
    if binary:
        return _binary_comparison(name, baseline, run, paired, left_out)
    return _continuous_comparison(name, baseline, run, paired, left_out)


def _continuous_comparison(
    name: str,
    baseline: RunScores,
    run: RunScores,
    paired: Sequence[tuple[int, int]],
    left_out: tuple[int, ...],
) -> MetricComparison:
    """Means, the paired bootstrap's interval and p-value of a score over the pairs scored
    in both runs."""
    before = [baseline.metrics[name].values[b] for b, _ in paired]
    after = [run.metrics[name].values[r] for _, r in paired]
    baseline_mean = sum(before) / len(before)
    run_mean = sum(after) / len(after)
    bootstrap = paired_bootstrap(before, after)
    return MetricComparison(
        metric=name,
        kind=MetricKind.CONTINUOUS,
        paired_count=len(paired),
        left_out=left_out,
        baseline_value=baseline_mean,
        run_value=run_mean,
        difference=run_mean - baseline_mean,
        interval=bootstrap.interval,
        test=PAIRED_BOOTSTRAP,
        p_value=bootstrap.p_value,
        holm_p_value=1.0,
        significant=False,
        lower_is_better=name.casefold() in LOWER_IS_BETTER,
    )


def _binary_comparison(
    name: str,
    baseline: RunScores,
    run: RunScores,
    paired: Sequence[tuple[int, int]],
    left_out: tuple[int, ...],
) -> MetricComparison:
    """Rates, Newcombe's interval, McNemar's test and the flipped questions of a 0/1 metric
    over the pairs scored in both runs."""
    before_scores = baseline.metrics[name].values
    after_scores = run.metrics[name].values
    outcomes = [(before_scores[b], after_scores[r]) for b, r in paired]
    counts = PairedCounts(
        both=sum(1 for b, a in outcomes if b == 1 and a == 1),
        run_only=sum(1 for b, a in outcomes if b == 0 and a == 1),
        baseline_only=sum(1 for b, a in outcomes if b == 1 and a == 0),
        neither=sum(1 for b, a in outcomes if b == 0 and a == 0),
    )
    flips = [
        Flip(
            b,
            int(before_scores[b]),
            int(after_scores[r]),
            baseline.explanation(name, b),
            run.explanation(name, r),
            run_question_number=r,
        )
        for b, r in paired
        if before_scores[b] != after_scores[r]
    ]
    went_down = tuple(flip for flip in flips if flip.run_value < flip.baseline_value)
    went_up = tuple(flip for flip in flips if flip.run_value > flip.baseline_value)
    baseline_rate = counts.baseline_successes / counts.total
    run_rate = counts.run_successes / counts.total
    lower_is_better = name.casefold() in LOWER_IS_BETTER
    return MetricComparison(
        metric=name,
        kind=MetricKind.BINARY,
        paired_count=len(paired),
        left_out=left_out,
        baseline_value=baseline_rate,
        run_value=run_rate,
        difference=run_rate - baseline_rate,
        interval=paired_difference_interval(counts),
        test=MCNEMAR,
        p_value=mcnemar_exact_p_value(counts.baseline_only, counts.run_only),
        holm_p_value=1.0,
        significant=False,
        lower_is_better=lower_is_better,
        counts=counts,
        got_worse=went_up if lower_is_better else went_down,
        got_better=went_down if lower_is_better else went_up,
    )


def describe_worse(report: ComparisonReport) -> str:
    """One line naming each metric significantly worse than the baseline, for the gate."""
    parts = [
        f"{metric.metric} in {run} ({_signed(metric)}, Holm p = {format_p(metric.holm_p_value)})"
        for run, metric in report.significantly_worse()
    ]
    return (
        f"Significantly worse than the baseline {report.baseline}: {'; '.join(parts)}. "
        "--output FILE.csv lists every question's change"
    )


def _signed(metric: MetricComparison) -> str:
    if metric.kind is MetricKind.BINARY:
        return f"{metric.difference * 100:+.0f} points"
    return f"{metric.difference:+.4f}"


def format_p(p_value: float) -> str:
    """A p-value for people: ``0.0123``, ``<0.0001``, ``1.0000``."""
    if p_value < 0.0001:
        return "<0.0001"
    return f"{p_value:.4f}"


def metric_row(metric: MetricComparison) -> list[str]:
    """A metric's row of the comparison table: ``Metric, n, Baseline, Run, Change (95% CI),
    p, Holm p, Verdict``."""
    if metric.kind is MetricKind.BINARY and metric.counts is not None:
        counts = metric.counts
        before = _fraction(counts.baseline_successes, counts.total)
        after = _fraction(counts.run_successes, counts.total)
        change = f"{metric.difference * 100:+.1f} pts"
        if metric.interval is not None:
            change += f" ({metric.interval.low * 100:+.1f} to {metric.interval.high * 100:+.1f})"
    else:
        before = f"{metric.baseline_value:.4f}"
        after = f"{metric.run_value:.4f}"
        change = f"{metric.difference:+.4f}"
        change += (
            " (CI n/a)"
            if metric.interval is None
            else f" ({metric.interval.low:+.4f} to {metric.interval.high:+.4f})"
        )
    return [
        metric.metric,
        str(metric.paired_count),
        before,
        after,
        change,
        format_p(metric.p_value),
        format_p(metric.holm_p_value),
        metric.verdict,
    ]


def _fraction(count: int, total: int) -> str:
    return f"{count}/{total} ({count / total:.0%})"


def comparison_json(report: ComparisonReport, runs: Sequence[RunScores]) -> dict[str, object]:
    """The whole comparison as plain JSON data (numbers unrounded)."""
    return {
        "baseline": report.baseline,
        "runs": [run.label for run in runs],
        "confidence_level": CONFIDENCE_LEVEL,
        "significance_level": report.significance_level,
        "holm_family": {
            "size": report.holm_family_size,
            "members": "every metric of every run compared with the baseline in this report",
        },
        "summaries": {run.label: dict(run.summary) for run in runs},
        "comparisons": [_run_comparison_json(comparison) for comparison in report.comparisons],
    }


def _run_comparison_json(comparison: RunComparison) -> dict[str, object]:
    pairing: dict[str, object] = {"paired_by": comparison.paired_by}
    if comparison.pairing is not None and comparison.pairing.by_text:
        pairing["question_pairs"] = [list(pair) for pair in comparison.pairing.pairs]
    return {
        "baseline": comparison.baseline,
        "run": comparison.run,
        **pairing,
        "shared_questions": comparison.shared_questions,
        "only_in_baseline": list(comparison.only_in_baseline),
        "only_in_run": list(comparison.only_in_run),
        "metrics": [_metric_json(metric) for metric in comparison.metrics],
        "skipped_metrics": [
            {"metric": skipped.metric, "reason": skipped.reason} for skipped in comparison.skipped
        ],
    }


def _metric_json(metric: MetricComparison) -> dict[str, object]:
    data: dict[str, object] = {
        "metric": metric.metric,
        "kind": metric.kind.value,
        "paired_questions": metric.paired_count,
        "left_out_unscored": list(metric.left_out),
        "baseline": metric.baseline_value,
        "run": metric.run_value,
        "difference": metric.difference,
        "interval": None
        if metric.interval is None
        else [metric.interval.low, metric.interval.high],
        "interval_method": "Newcombe hybrid score (paired)"
        if metric.kind is MetricKind.BINARY
        else "paired percentile bootstrap",
        "test": metric.test,
        "p_value": metric.p_value,
        "holm_p_value": metric.holm_p_value,
        "significant": metric.significant,
        "lower_is_better": metric.lower_is_better,
        "verdict": metric.verdict,
    }
    if metric.counts is not None:
        counts = metric.counts
        data["counts"] = {
            "baseline_successes": counts.baseline_successes,
            "run_successes": counts.run_successes,
            "both": counts.both,
            "neither": counts.neither,
            "baseline_only": counts.baseline_only,
            "run_only": counts.run_only,
        }
        data["got_worse"] = [_flip_json(flip) for flip in metric.got_worse]
        data["got_better"] = [_flip_json(flip) for flip in metric.got_better]
    return data


def _flip_json(flip: Flip) -> dict[str, object]:
    return {
        "question_number": flip.question_number,
        "run_question_number": flip.run_question_number,
        "baseline": flip.baseline_value,
        "run": flip.run_value,
        "baseline_reasoning": flip.baseline_reasoning,
        "run_reasoning": flip.run_reasoning,
    }


def per_question_rows(
    report: ComparisonReport, runs: Sequence[RunScores], metrics: Sequence[str] | None = None
) -> list[list[object]]:
    """The per-question diff: a header, then one row per question of each compared run.

    ``Question Number`` is the baseline's (the run's for a question only in the run) and
    ``Run Question Number`` the run's. Each metric (``metrics``, else every metric of the
    baseline or a run) gets three columns: ``<m> (baseline)``, ``<m> (run)`` and
    ``<m> change`` (run - baseline; empty unless both are scored).
    """
    baseline, *others = runs
    metric_names: list[str] = list(metrics) if metrics is not None else list(baseline.metrics)
    if metrics is None:
        for run in others:
            metric_names += [name for name in run.metrics if name not in metric_names]
    header: list[object] = ["Question Number", "Run Question Number", "Question", "Run", "Status"]
    for name in metric_names:
        header += [f"{name} (baseline)", f"{name} (run)", f"{name} change"]
    header += ["Baseline Reasoning", "Run Reasoning"]
    table: list[list[object]] = [header]
    for run, comparison in zip(others, report.comparisons, strict=True):
        rows = [(b, r, "in both") for b, r in _pairs(comparison)]
        rows += [(b, None, "only in baseline") for b in comparison.only_in_baseline]
        rows += [(None, r, "only in run") for r in comparison.only_in_run]
        rows.sort(key=lambda row: (row[0] if row[0] is not None else row[1] or 0, row[2]))
        # Two different metrics under one name: their values are shown, never a change.
        apart = {name for name in metric_names if settings_differences(name, baseline, run)}
        for number, run_number, status in rows:
            row = _diff_row(baseline, run, metric_names, number, run_number, status, apart)
            table.append(row)
    return table


def _pairs(comparison: RunComparison) -> tuple[tuple[int, int], ...]:
    return () if comparison.pairing is None else comparison.pairing.pairs


def _diff_row(
    baseline: RunScores,
    run: RunScores,
    metric_names: Sequence[str],
    number: int | None,
    run_number: int | None,
    status: str,
    apart: Container[str] = (),
) -> list[object]:
    question = baseline.questions.get(number, "") if number is not None else ""
    if not question and run_number is not None:
        question = run.questions.get(run_number, "")
    shown_number = number if number is not None else run_number
    row: list[object] = [shown_number, "" if run_number is None else run_number]
    row += [question, run.label, status]
    for name in metric_names:
        kind = _kind(baseline, run, name)
        before = None if number is None else _cell(baseline, name, number)
        after = None if run_number is None else _cell(run, name, run_number)
        change = ""
        if before is not None and after is not None and name not in apart:
            change = _format_value(after - before, kind)
        row += [
            "" if before is None else _format_value(before, kind),
            "" if after is None else _format_value(after, kind),
            change,
        ]
    row += [
        "" if number is None else baseline.reasoning.get(number, ""),
        "" if run_number is None else run.reasoning.get(run_number, ""),
    ]
    return row


def _cell(run: RunScores, name: str, number: int) -> float | None:
    metric = run.metrics.get(name)
    return None if metric is None else metric.values.get(number)


def _kind(baseline: RunScores, run: RunScores, name: str) -> MetricKind:
    kinds = {scores.metrics[name].kind for scores in (baseline, run) if name in scores.metrics}
    return MetricKind.BINARY if kinds == {MetricKind.BINARY} else MetricKind.CONTINUOUS


def _format_value(value: float, kind: MetricKind) -> str:
    if kind is MetricKind.BINARY:
        return str(int(value))
    return f"{value:.4f}"
