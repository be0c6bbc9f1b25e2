"""The results file: ``#SUMMARY:`` rows, then one row per question, written atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from rag_evaluator.core.fields import GROUND_TRUTH, QUESTION, QUESTION_NUMBER, RAG_ANSWER
from rag_evaluator.core.question_results import QuestionResult, ResultRow
from rag_evaluator.core.summary import SummaryLine
from rag_evaluator.errors import ConfigError
from rag_evaluator.storage.tables import write_csv_atomic

RESULTS_FILE_PREFIX = "precision_scores_"
PRECISION = "Precision"
RECALL = "Recall"
ACCURACY = "Accuracy"
REASONING = "Reasoning"
CONSENSUS = "Consensus"
VOTES = "Votes"
ERROR = "Error"
NOTE = "Note"

ITEM_COLUMNS = (QUESTION_NUMBER, QUESTION, GROUND_TRUTH, RAG_ANSWER)
JUDGE_COLUMNS = (PRECISION, RECALL, ACCURACY, REASONING, CONSENSUS, VOTES, ERROR, NOTE)


def results_file_path(output_dir: Path, started_at: datetime) -> Path:
    """``<output_dir>/precision_scores_YYYYMMDD_HHMMSS.csv``, never an existing file's name.

    A second run finishing in the same second gets ``..._HHMMSS_2.csv`` and so on.
    """
    stem = f"{RESULTS_FILE_PREFIX}{started_at:%Y%m%d_%H%M%S}"
    candidate = output_dir / f"{stem}.csv"
    counter = 2
    while candidate.exists():
        candidate = output_dir / f"{stem}_{counter}.csv"
        counter += 1
    return candidate


def prepare_output_directory(output_dir: Path) -> None:
    """Create the results folder if needed and make sure a file can be written in it.

    Called before the first API call, so an unusable ``--output-dir`` is reported before
    any money is spent rather than after the last question.
    """
    fix = "Choose a writable folder with --output-dir"
    if output_dir.exists() and not output_dir.is_dir():
        raise ConfigError(f"The output folder {output_dir} is a file, not a folder. {fix}")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".rag-eval-probe-", dir=output_dir)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"Cannot write in the output folder {output_dir}: {reason}. {fix}"
        ) from exc


def results_columns(judged: bool, metric_columns: Sequence[str]) -> list[str]:
    """The table's header: the item, the judge's columns when judged, then metric columns."""
    return [*ITEM_COLUMNS, *(JUDGE_COLUMNS if judged else ()), *metric_columns]


def _note(result: QuestionResult) -> str:
    parts = []
    if result.hedge_phrases:
        quoted = ", ".join(f"'{phrase}'" for phrase in result.hedge_phrases)
        parts.append(f"consensus of 3 votes: the first reasoning said {quoted}")
    if result.note:
        parts.append(result.note)
    return "; ".join(parts)


def _judge_cells(result: QuestionResult | None) -> list[object]:
    if result is None:
        return ["", "", "", "", "", "", "", ""]
    scores = result.scores
    return [
        "" if scores is None else scores.precision,
        "" if scores is None else scores.recall,
        "" if scores is None else scores.accuracy,
        result.summary,
        "yes" if result.consensus else "no",
        result.votes_label(),
        result.error or "",
        _note(result),
    ]


def _metric_cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def results_table(
    rows: Sequence[ResultRow], *, judged: bool, metric_columns: Sequence[str]
) -> list[list[object]]:
    """The header and one row per question, in question-number order."""
    table: list[list[object]] = [results_columns(judged, metric_columns)]
    for row in sorted(rows, key=lambda row: row.item.question_number):
        item = row.item
        cells: list[object] = [
            item.question_number,
            item.question,
            item.ground_truth,
            item.rag_answer,
        ]
        if judged:
            cells += _judge_cells(row.judge)
        cells += [_metric_cell(row.metric_scores.get(column)) for column in metric_columns]
        table.append(cells)
    return table


def write_results(
    output_dir: Path,
    started_at: datetime,
    summary: Sequence[SummaryLine],
    rows: Sequence[ResultRow],
    *,
    judged: bool,
    metric_columns: Sequence[str],
) -> Path:
    """Write the summary rows then the table to a new results file, atomically; its path.

    The name comes from ``results_file_path``; if another run creates that name first
    (same second), the next free one is taken, so no results file is ever replaced.
    """
    content: list[list[object]] = [[line.text()] for line in summary]
    content += results_table(rows, judged=judged, metric_columns=metric_columns)
    while True:
        path = results_file_path(output_dir, started_at)
        try:
            write_csv_atomic(path, content, overwrite=False)
        except OSError as exc:
            # Only an existing file at this very name means another run took it; a
            # FileExistsError about the folder (a file in its place) is a real failure.
            if isinstance(exc, FileExistsError) and path.is_file():
                continue
            raise ConfigError(
                f"Cannot write the results file {path}: {exc.strerror}. "
                "Choose a writable folder with --output-dir and run the same command again"
            ) from exc
        return path
