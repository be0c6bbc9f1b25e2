"""``rag-eval calibrate``: parse the arguments, measure the judge against people, show it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.inputs.selection import format_numbers

# The calibration pulls in numpy and scipy: imported when the command runs, so that
# `rag-eval --help` stays quick.
if TYPE_CHECKING:
    from rag_evaluator.calibrate.calibration import CalibrationReport, MetricCalibration
    from rag_evaluator.stats.statistics import Interval

_SHOWN_NUMBERS = 15


def calibrate_command(
    results: Annotated[
        Path,
        typer.Argument(
            help="Results file of rag-eval evaluate.", metavar="RESULTS.csv", show_default=False
        ),
    ],
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="CSV of human labels: Question Number plus a column per labelled metric "
            "(0/1 for binary metrics, numbers for scores), for a random sample of questions.",
            show_default=False,
        ),
    ],
    json_path: Annotated[
        str | None,
        typer.Option(
            "--json", help="Write the whole calibration as JSON to this file (- for stdout)."
        ),
    ] = None,
) -> None:
    """Measure the judge against human labels and correct its rates (prediction-powered)."""
    from rag_evaluator.calibrate.run import CalibrateRequest, run_calibrate

    configure_logging()
    outcome = run_calibrate(CalibrateRequest(results, labels, json_path))
    _show(outcome.report, to_stdout=outcome.json_for_stdout is None)
    for path in outcome.written:
        console.info(f"Written: {path}")
    if outcome.json_for_stdout is not None:
        console.raw_output(outcome.json_for_stdout)


def _show(report: CalibrationReport, *, to_stdout: bool) -> None:
    from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL

    console.info(f"Judge in {report.results} against the human labels in {report.labels}")
    if report.unknown_questions:
        console.warning(
            f"{report.labels} labels questions that are not in {report.results}, left out: "
            f"{format_numbers(report.unknown_questions, _SHOWN_NUMBERS)}"
        )
    if report.unmatched_columns:
        console.warning(
            f"{report.labels} columns {', '.join(report.unmatched_columns)} name no metric of "
            f"{report.results}; ignored. Name a label column like the metric it labels"
        )
    level = f"{CONFIDENCE_LEVEL:.0%}"
    console.table(
        "Judge against people",
        [
            "Metric",
            "Labelled",
            "Agreement",
            "Cohen's κ",
            "Judge − people (labelled)",
            "Judge (all)",
            f"Corrected ({level} CI)",
        ],
        [_metric_row(metric) for metric in report.metrics],
        to_stdout=to_stdout,
    )
    for metric in report.metrics:
        if metric.confusion is not None:
            matrix = metric.confusion
            console.table(
                f"{metric.metric}: judge (rows) against people (columns)",
                ["", "People 1", "People 0"],
                [
                    ["Judge 1", str(matrix.both_one), str(matrix.judge_one_human_zero)],
                    ["Judge 0", str(matrix.judge_zero_human_one), str(matrix.both_zero)],
                ],
                to_stdout=to_stdout,
            )
    for metric in report.metrics:
        for note in metric.notes:
            console.info(f"{metric.metric}: {note}")
    if report.not_labelled:
        console.info(f"Not labelled: {', '.join(report.not_labelled)}")
    console.info(
        "Corrected = prediction-powered estimate: the judge's mean over every scored question "
        "minus its mean error (judge - people) on the labelled ones. It is unbiased when the "
        "labelled questions are a random sample of the run."
    )


def _metric_row(metric: MetricCalibration) -> list[str]:
    from rag_evaluator.results.run_scores import MetricKind

    binary = metric.kind is MetricKind.BINARY
    corrected = "n/a"
    if metric.corrected is not None:
        corrected = _value(metric.corrected.estimate, binary)
        corrected += (
            " (CI n/a)"
            if metric.corrected.interval is None
            else f" ({_interval(metric.corrected.interval, binary)})"
        )
    judge_all = _value(metric.judge_mean, binary)
    if metric.judge_mean is not None:
        judge_all += f" (n={metric.judged_count})"
    agreement = _value(metric.agreement, True) if binary else None
    if not binary and metric.mean_absolute_difference is not None:
        agreement = f"MAD {metric.mean_absolute_difference:.3f}"
    return [
        metric.metric,
        str(metric.labelled),
        agreement or "n/a",
        "n/a" if metric.kappa is None else f"{metric.kappa:.3f}",
        _bias(metric, binary),
        judge_all,
        corrected,
    ]


def _bias(metric: MetricCalibration, binary: bool) -> str:
    if metric.bias is None:
        return "n/a"
    judge = _value(metric.judge_labelled_mean, binary)
    people = _value(metric.human_labelled_mean, binary)
    return f"{_signed(metric.bias, binary)} ({judge} vs {people})"


def _value(value: float | None, binary: bool) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1%}" if binary else f"{value:.3f}"


def _signed(value: float, binary: bool) -> str:
    return f"{value * 100:+.1f} pts" if binary else f"{value:+.3f}"


def _interval(interval: Interval, binary: bool) -> str:
    if binary:
        return f"{interval.low:.1%}–{interval.high:.1%}"
    return f"{interval.low:.3f}–{interval.high:.3f}"
