"""A run's CI outputs: ``--junit FILE``, the Markdown appended to ``$GITHUB_STEP_SUMMARY``
and the ``::error::`` lines for GitHub Actions (returned for the command to print)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.ci.annotations import gate_annotations
from rag_evaluator.ci.cases import (
    EvaluateFacts,
    JunitSuite,
    UnscoredQuestion,
    compare_suites,
    evaluate_suite,
)
from rag_evaluator.ci.junit import JUNIT_OPTION, write_junit
from rag_evaluator.ci.markdown import compare_markdown, evaluate_markdown, weakest_questions
from rag_evaluator.compare.comparison import ComparisonReport
from rag_evaluator.errors import ConfigError
from rag_evaluator.inputs.fields import QUESTION
from rag_evaluator.results.gates import ThresholdCheck
from rag_evaluator.results.groups import TOTAL_QUESTIONS
from rag_evaluator.results.outputs import check_output_path
from rag_evaluator.results.reader import read_sheet, with_current_column_names
from rag_evaluator.results.run_scores import ERROR, RunScores, build_run_scores
from rag_evaluator.results.summary import SummaryLine
from rag_evaluator.settings import STEP_SUMMARY_VARIABLE, CiSettings


@dataclass(frozen=True)
class CiRequest:
    """The CI outputs asked for: ``--junit``'s file and what the environment asks."""

    junit_path: Path | None
    settings: CiSettings

    @property
    def wanted(self) -> bool:
        return (
            self.junit_path is not None
            or self.settings.step_summary is not None
            or self.settings.annotations
        )


@dataclass(frozen=True)
class EvaluateRun:
    """What an evaluate run wrote: its results (and report, if any), summary and gates."""

    results_path: Path
    summary: Sequence[SummaryLine]
    gate_checks: Sequence[ThresholdCheck]
    report_path: Path | None = None


def check_junit_path(path: Path | None, inputs: Sequence[Path]) -> None:
    """Refuse, before the run, a ``--junit`` path that is a folder or one of the inputs."""
    if path is not None:
        check_output_path(path, JUNIT_OPTION, inputs)


def evaluate_ci_outputs(run: EvaluateRun, request: CiRequest) -> list[str]:
    """Write an evaluate run's CI outputs; the ``::error::`` lines to print."""
    if not request.wanted:
        return []
    files = request.junit_path is not None or request.settings.step_summary is not None
    if not files or _question_count(run.summary) == 0:
        # Annotations need the gates alone; a run stopped before its first question wrote a
        # table without rows: nothing to read back.
        scores, unscored = RunScores(run.results_path.name, (), {}), []
    else:
        scores, unscored = _read_results(run.results_path)
    facts = EvaluateFacts(run.results_path.name, run.summary, run.gate_checks, unscored)
    suite = evaluate_suite(facts)
    if request.junit_path is not None:
        write_junit(request.junit_path, [suite])
    if request.settings.step_summary is not None:
        gated = [check.metric for check in run.gate_checks]
        link = None if run.report_path is None else _link(run.report_path)
        text = evaluate_markdown(facts, suite, weakest_questions(scores, gated), link)
        append_step_summary(request.settings.step_summary, text)
    return gate_annotations([suite]) if request.settings.annotations else []


def compare_ci_outputs(report: ComparisonReport, request: CiRequest, *, gated: bool) -> list[str]:
    """Write a comparison's CI outputs; the ``::error::`` lines to print."""
    suites: list[JunitSuite] = compare_suites(report, gated=gated)
    if request.junit_path is not None:
        write_junit(request.junit_path, suites)
    if request.settings.step_summary is not None:
        append_step_summary(request.settings.step_summary, compare_markdown(report, gated=gated))
    return gate_annotations(suites) if request.settings.annotations else []


def _question_count(summary: Sequence[SummaryLine]) -> int | None:
    """The summary's ``Total Questions``, if it has the line."""
    for line in summary:
        if line.label == TOTAL_QUESTIONS and line.value.isdigit():
            return int(line.value)
    return None


def _read_results(path: Path) -> tuple[RunScores, list[UnscoredQuestion]]:
    """The run's scores by question, and the questions whose Error cell says why they are
    unscored, read back from the results file just written."""
    sheet = with_current_column_names(
        read_sheet(path, what="a rag-eval results file", fix="Run rag-eval evaluate again")
    )
    scores = build_run_scores(path.name, sheet.headers, sheet.rows, summary=sheet.summary)
    unscored = [
        UnscoredQuestion(row.question_number, row.cells.get(QUESTION, ""), row.cells[ERROR])
        for row in sheet.rows
        if row.cells.get(ERROR, "").strip()
    ]
    return scores, unscored


def _link(path: Path) -> str:
    """The report as a link from the working directory (where the summary's reader finds
    the run's files, checked out or downloaded as an artifact), with ``/`` separators."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        relative = str(path)
    return Path(relative).as_posix()


def append_step_summary(path: Path, text: str) -> None:
    """Append ``text`` to the step summary file, as GitHub Actions asks (never replace it:
    earlier steps wrote there too)."""
    try:
        with path.open("a", encoding="utf-8") as handle:
            # A blank line parts it from what earlier steps wrote.
            separator = "\n" if handle.tell() > 0 else ""
            handle.write(separator + (text if text.endswith("\n") else text + "\n"))
    except OSError as exc:
        raise ConfigError(
            f"Cannot append the summary to {path} ({STEP_SUMMARY_VARIABLE}): "
            f"{exc.strerror or type(exc).__name__}. Point {STEP_SUMMARY_VARIABLE} at a "
            "writable file or unset it"
        ) from exc
