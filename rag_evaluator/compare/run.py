"""The compare run: read the results files, compare them, write the requested reports.

Prints nothing: the command renders the report it returns.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.compare.comparison import (
    ComparisonReport,
    compare_runs,
    comparison_json,
    per_question_rows,
    select_metrics,
)
from rag_evaluator.errors import UsageError
from rag_evaluator.results.outputs import (
    STDOUT,
    check_output_path,
    json_text,
    write_csv_report,
    write_json_report,
)
from rag_evaluator.results.reader import read_run_scores
from rag_evaluator.results.run_scores import RunScores

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompareRequest:
    """The command's arguments: the runs (baseline first) and the reports wanted."""

    paths: Sequence[Path]
    metrics: Sequence[str] = ()
    json_path: str | None = None  # a file name, or "-" for standard output
    output_path: Path | None = None


@dataclass(frozen=True)
class CompareOutcome:
    """The comparison, and the JSON text when it goes to standard output."""

    report: ComparisonReport
    runs: list[RunScores]
    json_for_stdout: str | None
    written: list[Path]


def run_compare(request: CompareRequest) -> CompareOutcome:
    """Read every file, compare each run with the first, write ``--json``/``--output``."""
    if len(request.paths) < 2:
        raise UsageError(
            "compare needs at least two results files: the baseline first, then the runs "
            "to compare with it"
        )
    if request.json_path is not None and request.json_path != STDOUT:
        check_output_path(Path(request.json_path), "--json", request.paths)
    if request.output_path is not None:
        check_output_path(request.output_path, "--output", request.paths)
    runs = [read_run_scores(path) for path in request.paths]
    logger.info(
        "compare: baseline %s; runs %s; metrics %s",
        runs[0].label,
        ", ".join(run.label for run in runs[1:]),
        ", ".join(request.metrics) or "all",
    )
    selected = select_metrics(runs, request.metrics)
    report = compare_runs(runs, selected)
    written: list[Path] = []
    json_for_stdout = None
    if request.json_path is not None:
        data = comparison_json(report, runs)
        if request.json_path == STDOUT:
            json_for_stdout = json_text(data)
        else:
            write_json_report(Path(request.json_path), data, "--json")
            written.append(Path(request.json_path))
    if request.output_path is not None:
        write_csv_report(request.output_path, per_question_rows(report, runs, selected), "--output")
        written.append(request.output_path)
    return CompareOutcome(report, runs, json_for_stdout, written)
