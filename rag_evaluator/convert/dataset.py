"""``convert --dataset``: one dataset file -> questions.csv, ground_truth.csv, rag_answers.csv.

The dataset is read by the reader ``evaluate --dataset`` uses, and its canonical cells are
written as they are, so the three files give the same run as the dataset itself. Prints nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.convert.run import check_new_file, write_table
from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.dataset_rows import CanonicalRow
from rag_evaluator.inputs.datasets import read_dataset
from rag_evaluator.inputs.fields import (
    CONTEXTS,
    GROUND_TRUTH,
    QUESTION,
    QUESTION_NUMBER,
    RAG_ANSWER,
    REFERENCE_ANSWERS,
    RELEVANT_CONTEXTS,
    REQUIRED_FACTS,
    RETRIEVAL_SCORES,
)
from rag_evaluator.inputs.selection import format_numbers

logger = logging.getLogger(__name__)

_SHOWN_NUMBERS = 15


@dataclass(frozen=True)
class DatasetOutputs:
    """Where ``convert --dataset`` writes its three files."""

    questions: Path
    ground_truth: Path
    answers: Path


@dataclass(frozen=True)
class DatasetConvertReport:
    """What one ``convert --dataset`` read and wrote."""

    dataset_path: Path
    records: int
    numbering: str
    outputs: DatasetOutputs
    question_rows: int
    ground_truth_rows: int | None  # None: no record has a reference, no ground-truth file
    answer_rows: int | None  # None: the dataset has no answer field, no answers file
    metadata_columns: list[str]
    without_question: list[int] = field(default_factory=list)
    without_reference: list[int] = field(default_factory=list)
    without_answer: list[int] = field(default_factory=list)
    rows_with_scores: int = 0

    @property
    def exit_code(self) -> int:
        """1 when some record was left out of a file for a missing part, else 0."""
        return 1 if self.without_question or self.without_reference or self.without_answer else 0


def _table(
    rows: list[CanonicalRow], required: str, columns: list[str], optional: list[str]
) -> tuple[list[list[str]], list[int]]:
    """The rows (header first) of the records that have ``required``; the numbers of those
    that do not. An optional column is written only when some row has a value in it."""
    kept = [row for row in rows if required in row.cells]
    used = [column for column in optional if any(row.cells.get(column) for row in kept)]
    header = [*columns, *used]
    table = [header] + [[row.cells.get(column, "") for column in header] for row in kept]
    missing = [int(row.cells[QUESTION_NUMBER]) for row in rows if required not in row.cells]
    return table, missing


def _check_outputs(
    dataset_path: Path, outputs: DatasetOutputs, *, force: bool, ground_truth: bool = True
) -> None:
    options = (
        (outputs.questions, "--questions-out"),
        *([(outputs.ground_truth, "--ground-truth-out")] if ground_truth else []),
        (outputs.answers, "--output"),
    )
    seen: dict[Path, str] = {}
    for path, option in options:
        resolved = path.resolve()
        if resolved == dataset_path.resolve():
            raise UsageError(
                f"{option} {path} is the dataset; writing there would destroy it. Pass another "
                f"{option}"
            )
        if resolved in seen:
            raise UsageError(
                f"{option} and {seen[resolved]} are both {path}. Give each file its own path"
            )
        seen[resolved] = option
        check_new_file(path, option, force=force)


def _warn_left_out(dataset_path: Path, parts: tuple[tuple[list[int], str], ...]) -> None:
    """A warning per file that leaves records out for a missing part."""
    for numbers, part in parts:
        if numbers:
            logger.warning(
                "%s: question %s %s no %s and %s left out of the %s file",
                dataset_path.name,
                format_numbers(numbers, _SHOWN_NUMBERS),
                "has" if len(numbers) == 1 else "have",
                part,
                "is" if len(numbers) == 1 else "are",
                part,
            )


def _write_ground_truth(
    dataset_path: Path, path: Path, rows: list[list[str]] | None, force: bool
) -> int | None:
    """Write the ground-truth file (its row count); none without references (``None``),
    with a warning when an older one is there, since evaluate would read it."""
    if rows is not None:
        write_table(path, rows, "--ground-truth-out", force=force)
        return len(rows) - 1
    if path.exists():
        logger.warning(
            "%s has no reference answers, but %s exists from before: evaluate would read it. "
            "Move it away to evaluate without references",
            dataset_path.name,
            path,
        )
    return None


def convert_dataset(
    dataset_path: Path, outputs: DatasetOutputs, *, force: bool = False
) -> DatasetConvertReport:
    """Write the three CSVs a dataset holds; refuse to replace a file unless ``force``.

    Every check runs before the first file is written, so a refusal writes nothing.
    """
    dataset_path = Path(dataset_path)
    table = read_dataset(dataset_path, require_answers=False)
    _check_outputs(dataset_path, outputs, force=force, ground_truth=table.has_references)
    rows = table.rows
    questions, without_question = _table(
        rows, QUESTION, [QUESTION_NUMBER, QUESTION, *table.metadata_columns], []
    )
    ground_truth, without_reference = _table(
        rows,
        GROUND_TRUTH,
        [QUESTION_NUMBER, GROUND_TRUTH, RELEVANT_CONTEXTS],
        [REQUIRED_FACTS, REFERENCE_ANSWERS],
    )
    answers, without_answer = _table(
        rows, RAG_ANSWER, [QUESTION_NUMBER, RAG_ANSWER, CONTEXTS, RETRIEVAL_SCORES], []
    )
    if not table.has_references:
        without_reference = []
    _warn_left_out(
        dataset_path,
        (
            (without_question, "question"),
            (without_reference, "reference"),
            (without_answer if table.has_answers else [], "answer"),
        ),
    )
    write_table(outputs.questions, questions, "--questions-out", force=force)
    ground_truth_rows = _write_ground_truth(
        dataset_path, outputs.ground_truth, ground_truth if table.has_references else None, force
    )
    answer_rows: int | None = None
    if table.has_answers:
        write_table(outputs.answers, answers, "--output", force=force)
        answer_rows = len(answers) - 1
    else:
        logger.info(
            "%s has no answer field: %s was not written (a golden set only)",
            dataset_path.name,
            outputs.answers,
        )
    return DatasetConvertReport(
        dataset_path=dataset_path,
        records=len(rows),
        numbering=table.numbering,
        outputs=outputs,
        question_rows=len(questions) - 1,
        ground_truth_rows=ground_truth_rows,
        answer_rows=answer_rows,
        metadata_columns=list(table.metadata_columns),
        without_question=without_question,
        without_reference=without_reference,
        without_answer=without_answer if table.has_answers else [],
        rows_with_scores=sum(1 for row in answers[1:] if row[3]),
    )
