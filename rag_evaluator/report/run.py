"""The report run: read the results files (and the contexts), build the page, write it.

Prints nothing: the command shows where the report went; warnings go through logging.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from rag_evaluator import __version__
from rag_evaluator.errors import ConfigError, RagEvalError, UsageError
from rag_evaluator.inputs.load import load_answers, load_dataset, load_ground_truth
from rag_evaluator.inputs.records import AnswerRow, GroundTruthRow
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.report.contexts import match_contexts
from rag_evaluator.report.files import (
    check_report_path,
    default_report_path,
    modified_date,
    write_report,
)
from rag_evaluator.report.html import render_report
from rag_evaluator.report.model import RunTable, build_report_model, run_date_from_name
from rag_evaluator.report.page_files import read_page_files
from rag_evaluator.results.reader import CsvSheet, read_results_sheet
from rag_evaluator.results.writer import summary_value_json

logger = logging.getLogger(__name__)

_SHOWN_NUMBERS = 10


@dataclass(frozen=True)
class ReportRequest:
    """The command's arguments: the runs (baseline first), where the contexts come from,
    where the page goes."""

    results_paths: Sequence[Path]
    output_path: Path | None = None
    answers_paths: Sequence[Path] = ()  # the i-th gives the contexts of the i-th run
    ground_truth_path: Path | None = None  # golden contexts, for every run
    title: str | None = None
    # A dataset file giving the contexts and golden contexts of every run (evaluate --dataset).
    dataset_path: Path | None = None
    # Or one dataset per results file, in the same order (runs of reordered datasets).
    dataset_paths: Sequence[Path] = ()
    names: Sequence[str] = ()  # --name NAME=RESULTS.csv: how the page names a run


@dataclass(frozen=True)
class ReportOutcome:
    path: Path
    size_bytes: int
    questions: list[int] = field(default_factory=list)  # rows per run


def _given_names(values: Sequence[str], paths: Sequence[Path]) -> dict[Path, str]:
    """``--name NAME=RESULTS.csv`` values: the name of each results file they name."""
    names: dict[Path, str] = {}
    for value in values:
        name, separator, target = value.partition("=")
        if not separator:
            raise UsageError(
                f"--name {value!r} is not NAME=RESULTS.csv. Write the run's name, '=', then "
                "its results file, e.g. --name baseline=runs/a.csv"
            )
        if not name.strip():
            raise UsageError(
                f"--name {value!r} gives no name. Write the run's name before '=', e.g. "
                f"--name baseline={target}"
            )
        wanted = Path(target)
        matches = [path for path in paths if path == wanted or _same_file(path, wanted)]
        if not matches:
            shown = ", ".join(str(path) for path in paths)
            raise UsageError(
                f"--name {value!r}: {target} is not one of the results files ({shown}). Name "
                "a results file given to the command"
            )
        for path in matches:
            names[path] = name.strip()
    return names


def _same_file(path: Path, other: Path) -> bool:
    return path.exists() and other.exists() and path.resolve() == other.resolve()


def _labels(paths: Sequence[Path], given: dict[Path, str] | None = None) -> list[str]:
    """Each run's name in the page: the ``--name`` given, else its file name, or its path
    when two different files share a name; two runs named alike are told apart by a
    number."""
    given = given or {}
    files_by_name: dict[str, set[Path]] = {}
    for path in paths:
        files_by_name.setdefault(path.name, set()).add(path.resolve())
    labels = [
        given.get(path) or (str(path) if len(files_by_name[path.name]) > 1 else path.name)
        for path in paths
    ]
    seen: Counter[str] = Counter()
    unique = []
    for label in labels:
        seen[label] += 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


def _check(request: ReportRequest) -> Path:
    if not request.results_paths:
        raise UsageError("report needs at least one results file of rag-eval evaluate")
    if len(request.answers_paths) > len(request.results_paths):
        raise UsageError(
            f"--answers is given {len(request.answers_paths)} times for "
            f"{len(request.results_paths)} results file(s). Give at most one answers file per "
            "results file, in the same order"
        )
    datasets = _datasets(request)
    if datasets and (request.answers_paths or request.ground_truth_path):
        raise UsageError(
            "--dataset gives the contexts and golden contexts of every run: leave out "
            "--answers and --ground-truth, or --dataset"
        )
    if len(datasets) not in (0, 1, len(request.results_paths)):
        raise UsageError(
            f"--dataset is given {len(datasets)} times for {len(request.results_paths)} "
            "results file(s). Give one dataset for every run, or one per results file in the "
            "same order"
        )
    output = request.output_path or default_report_path(request.results_paths[0])
    inputs = [*request.results_paths, *request.answers_paths, *datasets]
    if request.ground_truth_path is not None:
        inputs.append(request.ground_truth_path)
    check_report_path(output, inputs)
    return output


def _warn_differences(kind: str, source: Path, results: Path, numbers: Sequence[int]) -> None:
    if numbers:
        logger.warning(
            "%s: the %s of question %s differ from %s's; their contexts are left out of the "
            "report. Pass the files the run was made from",
            source,
            kind,
            format_numbers(numbers, _SHOWN_NUMBERS),
            results,
        )


def _run_table(
    path: Path,
    label: str,
    sheet: CsvSheet,
    answers: dict[int, AnswerRow] | None,
    answers_path: Path | None,
    golden: dict[int, GroundTruthRow] | None,
    golden_path: Path | None,
) -> RunTable:
    contexts = None
    if answers is not None or golden is not None:
        matched = match_contexts(sheet.rows, answers or {}, golden or {})
        if answers_path is not None:
            _warn_differences("answers", answers_path, path, matched.answers_differ)
        if golden_path is not None:
            _warn_differences("ground truths", golden_path, path, matched.ground_truth_differs)
        contexts = matched.contexts
    return RunTable(
        label=label,
        source=str(path),
        headers=sheet.headers,
        rows=sheet.rows,
        summary=sheet.summary,
        summary_values={label: summary_value_json(value) for label, value in sheet.summary},
        run_date=run_date_from_name(path.stem) or modified_date(path),
        contexts=contexts,
    )


def _datasets(request: ReportRequest) -> list[Path]:
    if request.dataset_paths:
        return list(request.dataset_paths)
    return [] if request.dataset_path is None else [request.dataset_path]


@dataclass(frozen=True)
class _RunInputs:
    """Where one run's contexts come from: its answers and the golden set, with their files."""

    answers: dict[int, AnswerRow] | None = None
    answers_path: Path | None = None
    golden: dict[int, GroundTruthRow] | None = None
    golden_path: Path | None = None


def _run_inputs(request: ReportRequest) -> list[_RunInputs]:
    """Each run's inputs: from its dataset (one for all, or one each), else from its
    ``--answers`` and the ``--ground-truth``; every file read once."""
    count = len(request.results_paths)
    datasets = _datasets(request)
    if datasets:
        loaded = {path: load_dataset(path) for path in dict.fromkeys(datasets)}
        chosen = datasets * count if len(datasets) == 1 else datasets
        return [
            _RunInputs(loaded[path].answers.rows, path, loaded[path].ground_truth.rows, path)
            for path in chosen
        ]
    golden = None
    if request.ground_truth_path is not None:
        golden = load_ground_truth(request.ground_truth_path).rows
    inputs = []
    for position in range(count):
        answers_path = (
            request.answers_paths[position] if position < len(request.answers_paths) else None
        )
        answers = load_answers(answers_path).rows if answers_path is not None else None
        inputs.append(_RunInputs(answers, answers_path, golden, request.ground_truth_path))
    return inputs


def build_report(request: ReportRequest, *, now: datetime | None = None) -> ReportOutcome:
    """Read every results file, build the report (with the comparison when there are
    several) and write it; where it went and how big it is."""
    output = _check(request)
    generated = (now or datetime.now()).strftime("%Y-%m-%d %H:%M")
    sheets = [read_results_sheet(path) for path in request.results_paths]
    labels = _labels(request.results_paths, _given_names(request.names, request.results_paths))
    tables = [
        _run_table(
            path,
            label,
            sheet,
            inputs.answers,
            inputs.answers_path,
            inputs.golden,
            inputs.golden_path,
        )
        for path, label, sheet, inputs in zip(
            request.results_paths, labels, sheets, _run_inputs(request), strict=True
        )
    ]
    title = request.title or (
        f"rag-eval report: {labels[0]}"
        if len(labels) == 1
        else f"rag-eval comparison: {' vs '.join(labels)}"
    )
    logger.info("report: runs %s; output %s", ", ".join(labels), output)
    model = build_report_model(
        tables, title=title, generated_at=generated, tool_version=__version__
    )
    size = write_report(output, render_report(model, read_page_files()))
    logger.info("Report written to %s (%d bytes)", output, size)
    return ReportOutcome(output, size, [len(sheet.rows) for sheet in sheets])


def report_for_run(
    results_path: Path,
    answers_path: Path,
    ground_truth_path: Path | None,
    *,
    dataset_path: Path | None = None,
) -> ReportOutcome:
    """The report written at the end of ``evaluate --report``, beside its results file.

    A failure here says that the results are safe and how to make the report later.
    """
    try:
        return build_report(
            ReportRequest(
                [results_path],
                answers_paths=[] if dataset_path is not None else [answers_path],
                ground_truth_path=None if dataset_path is not None else ground_truth_path,
                dataset_path=dataset_path,
            )
        )
    except RagEvalError as exc:
        raise ConfigError(
            f"{exc.message}. The results are written to {results_path}; make the report "
            f"later with: rag-eval report {results_path}"
        ) from exc
