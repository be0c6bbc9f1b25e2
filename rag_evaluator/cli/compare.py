"""``rag-eval compare``: parse the arguments, run the comparison, show it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.errors import QualityGateError
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.text.snippets import quote_snippet

# The comparison pulls in numpy and scipy: imported when the command runs, so that
# `rag-eval --help` stays quick.
if TYPE_CHECKING:
    from rag_evaluator.compare.comparison import (
        ComparisonReport,
        Flip,
        RunComparison,
    )

# Flipped questions listed per metric and direction on the terminal; --json and --output
# hold them all.
_SHOWN_FLIPS = 20
_SHOWN_NUMBERS = 15
_REASONING_WIDTH = 160


def compare_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="Results files of rag-eval evaluate: the baseline first, then the runs to "
            "compare with it.",
            metavar="RUN.csv",
            show_default=False,
        ),
    ],
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics",
            help="Comma list of the metrics to compare (default: every metric the files "
            "share). Fewer metrics make a smaller Holm family.",
        ),
    ] = "",
    json_path: Annotated[
        str | None,
        typer.Option(
            "--json", help="Write the whole comparison as JSON to this file (- for stdout)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Write the per-question differences to this CSV file."),
    ] = None,
    fail_if_worse: Annotated[
        bool,
        typer.Option(
            "--fail-if-worse",
            help="Exit with code 3 when a metric is significantly worse than the baseline.",
        ),
    ] = False,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help="CI: also write the comparison as JUnit XML to this file (a test case per "
            "metric and run, failed by --fail-if-worse).",
        ),
    ] = None,
) -> None:
    """Compare runs question by question: paired differences, 95% CIs, Holm-corrected tests."""
    from rag_evaluator.ci.outputs import CiRequest, check_junit_path, compare_ci_outputs
    from rag_evaluator.compare.comparison import describe_worse
    from rag_evaluator.compare.run import CompareRequest, run_compare
    from rag_evaluator.settings import load_ci_settings

    configure_logging()
    check_junit_path(junit, results)
    outcome = run_compare(
        CompareRequest(
            paths=results,
            metrics=[name.strip() for name in metrics.split(",") if name.strip()],
            json_path=json_path,
            output_path=output,
        )
    )
    # With the JSON on stdout, the tables go to stderr so a script reads clean JSON.
    to_stdout = outcome.json_for_stdout is None
    _show(outcome.report, to_stdout=to_stdout)
    for path in outcome.written:
        console.info(f"Written: {path}")
    if outcome.json_for_stdout is not None:
        console.raw_output(outcome.json_for_stdout)
    ci = CiRequest(junit, load_ci_settings())
    for command in compare_ci_outputs(outcome.report, ci, gated=fail_if_worse):
        console.workflow_command(command, to_stdout=to_stdout)
    if fail_if_worse and outcome.report.significantly_worse():
        raise QualityGateError(describe_worse(outcome.report))


def _show(report: ComparisonReport, *, to_stdout: bool) -> None:
    for comparison in report.comparisons:
        _show_comparison(comparison, to_stdout=to_stdout)
    console.info(
        "Tests: McNemar's exact test for 0/1 metrics (change in percentage points, Newcombe "
        "interval), the paired bootstrap for scores (interval and test from the same "
        "9,999 resamples). "
        f"Significant: Holm-adjusted p ≤ {report.significance_level:g} over all "
        f"{report.holm_family_size} comparison(s) of this report; n.s. = not significant."
    )


def _show_comparison(comparison: RunComparison, *, to_stdout: bool) -> None:
    from rag_evaluator.compare.comparison import metric_row
    from rag_evaluator.results.run_scores import is_offline_metric
    from rag_evaluator.stats.statistics import CONFIDENCE_LEVEL

    console.info(
        f"Run {comparison.run} against the baseline {comparison.baseline}: "
        f"{comparison.shared_questions} question(s) in both"
    )
    if comparison.pairing is not None and comparison.pairing.by_text:
        console.warning(_pairing_text(comparison))
    if comparison.only_in_baseline:
        console.warning(
            f"Questions only in {comparison.baseline}, left out: "
            f"{format_numbers(comparison.only_in_baseline, _SHOWN_NUMBERS)}"
        )
    if comparison.only_in_run:
        console.warning(
            f"Questions only in {comparison.run}, left out: "
            f"{format_numbers(comparison.only_in_run, _SHOWN_NUMBERS)}"
        )
    for metric in comparison.metrics:
        if metric.left_out:
            # An offline metric's empty cell: the metric does not apply to that question.
            empty = "not applicable" if is_offline_metric(metric.metric) else "unscored"
            console.info(
                f"{metric.metric}: {empty} in one run or both, left out: "
                f"{format_numbers(metric.left_out, _SHOWN_NUMBERS)}"
            )
    for skipped in comparison.skipped:
        console.info(f"{skipped.metric}: not compared ({skipped.reason})")
    level = f"{CONFIDENCE_LEVEL:.0%}"
    console.table(
        "Run against baseline",
        ["Metric", "n", "Baseline", "Run", f"Change ({level} CI)", "p", "Holm p", "Verdict"],
        [metric_row(metric) for metric in comparison.metrics],
        to_stdout=to_stdout,
    )
    _show_flips(comparison, to_stdout=to_stdout)


def _pairing_text(comparison: RunComparison) -> str:
    """Why the rows were paired by question text, with the first number that disagrees."""
    pairing = comparison.pairing
    mismatch = None if pairing is None else pairing.mismatch
    if mismatch is None:
        reason = f"{comparison.run} shares no question number with {comparison.baseline}"
    else:
        reason = (
            f"{comparison.run} numbers its questions differently from {comparison.baseline} "
            f"(question {mismatch.question_number} is "
            f"{quote_snippet(mismatch.baseline_question, 50)} in {comparison.baseline} and "
            f"{quote_snippet(mismatch.run_question, 50)} in {comparison.run})"
        )
    return (
        f"{reason}: paired by question text ({comparison.shared_questions} question(s)); "
        "Question Number is the baseline's, Run Question Number the run's"
    )


def _show_flips(comparison: RunComparison, *, to_stdout: bool) -> None:
    rows: list[list[str]] = []
    hidden = 0
    for metric in comparison.metrics:
        for direction, flips in (("worse", metric.got_worse), ("better", metric.got_better)):
            hidden += max(len(flips) - _SHOWN_FLIPS, 0)
            rows += [_flip_row(metric.metric, direction, flip) for flip in flips[:_SHOWN_FLIPS]]
    if not rows:
        return
    header = ["Metric", "Question", "Change", "Baseline reasoning", "Run reasoning"]
    if not any(row[3] or row[4] for row in rows):
        # Offline metrics and checks have no reasoning: no empty columns for it.
        header, rows = header[:3], [row[:3] for row in rows]
    console.table(
        "Questions whose score flipped",
        header,
        rows,
        to_stdout=to_stdout,
        text_columns=tuple(index for index in (3, 4) if index < len(header)),
    )
    if hidden:
        console.info(f"… and {hidden} more flipped question(s): --json or --output lists every one")


def _flip_row(metric: str, direction: str, flip: Flip) -> list[str]:
    return [
        metric,
        str(flip.question_number)
        if flip.run_question_number == flip.question_number
        else f"{flip.question_number} (run: {flip.run_question_number})",
        f"{flip.baseline_value}→{flip.run_value} ({direction})",
        _short(flip.baseline_reasoning),
        _short(flip.run_reasoning),
    ]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASONING_WIDTH else text[: _REASONING_WIDTH - 1] + "…"
