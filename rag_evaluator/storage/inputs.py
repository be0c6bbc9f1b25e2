"""Loading the three input CSV files into records keyed by question number."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from rag_evaluator.core.fields import (
    CONTEXTS,
    GROUND_TRUTH,
    QUESTION,
    QUESTION_NUMBER,
    RAG_ANSWER,
    RELEVANT_CONTEXTS,
    REQUIRED_FACTS,
    RETRIEVAL_SCORES,
    QuestionNumberError,
    ScoreListError,
    parse_question_number,
    parse_score_list,
    parse_text_list,
)
from rag_evaluator.core.records import AnswerRow, GroundTruthRow, KeyedRows, QuestionRow, RowT
from rag_evaluator.core.selection import format_numbers
from rag_evaluator.errors import InputError
from rag_evaluator.storage.tables import CsvRecord, read_csv

logger = logging.getLogger(__name__)


# RAG output is JSON: convert is what turns it into rag_answers.csv.
_ANSWERS_JSON_FIX = (
    "Turn RAG output JSON into rag_answers.csv with `rag-eval convert` (it reads the *.json "
    "and *.jsonl files in RAG_JSON_Files, or in the folder given with --json-dir, and "
    "matches their answers to questions.csv), then pass that CSV"
)


def _keyed(
    path: Path,
    required: list[str],
    optional: list[str],
    build: Callable[[int, CsvRecord], RowT],
    json_fix: str | None = None,
) -> KeyedRows[RowT]:
    table = read_csv(path, required=required, optional=optional, json_fix=json_fix)
    rows: dict[int, RowT] = {}
    duplicates: list[int] = []
    for record in table.records:
        raw_number = record.values[QUESTION_NUMBER]
        try:
            number = parse_question_number(raw_number)
        except QuestionNumberError as exc:
            raise InputError(
                f"{table.path.name} line {record.line_number}: "
                f"'{table.columns[QUESTION_NUMBER]}' {exc}. "
                "Give every row a whole question number such as 1, 2, 3",
                table.path,
            ) from exc
        if number in rows:
            duplicates.append(number)
            continue
        rows[number] = build(number, record)
    if duplicates:
        repeated = sorted(set(duplicates))
        logger.warning(
            "%s repeats question %s %s; the first row of each was kept. "
            "Give every row its own number",
            table.path.name,
            "number" if len(repeated) == 1 else "numbers",
            format_numbers(repeated),
        )
    return KeyedRows(table.path.name, rows, sorted(set(duplicates)))


def load_questions(path: Path) -> KeyedRows[QuestionRow]:
    """Read questions.csv: Question Number, Question."""
    return _keyed(
        path,
        [QUESTION_NUMBER, QUESTION],
        [],
        lambda number, record: QuestionRow(number, record.values[QUESTION]),
    )


def load_ground_truth(path: Path) -> KeyedRows[GroundTruthRow]:
    """Read ground_truth.csv: Question Number, Ground Truth (+ optional list columns)."""
    return _keyed(
        path,
        [QUESTION_NUMBER, GROUND_TRUTH],
        [RELEVANT_CONTEXTS, REQUIRED_FACTS],
        lambda number, record: GroundTruthRow(
            number,
            record.values[GROUND_TRUTH],
            parse_text_list(record.values.get(RELEVANT_CONTEXTS, "")),
            parse_text_list(record.values.get(REQUIRED_FACTS, ""), allow_semicolons=True),
        ),
    )


def _answer_row(path: Path, number: int, record: CsvRecord) -> AnswerRow:
    contexts = parse_text_list(record.values.get(CONTEXTS, ""))
    where = f"{path.name} line {record.line_number}: '{RETRIEVAL_SCORES}'"
    try:
        scores = parse_score_list(record.values.get(RETRIEVAL_SCORES, ""))
    except ScoreListError as exc:
        raise InputError(
            f"{where} {exc}. Write a JSON array of numbers, one per context, such as "
            "[0.82, 0.61], or leave the cell blank when the scores are not known",
            path,
        ) from exc
    # Scores that do not pair with the contexts cannot be trusted for any of them.
    if scores is not None and contexts is not None and len(scores) != len(contexts):
        raise InputError(
            f"{where} has {len(scores)} score(s) for {len(contexts)} context(s). Give one score "
            "per context, in the order of Contexts, or leave the cell blank",
            path,
        )
    return AnswerRow(number, record.values[RAG_ANSWER], contexts, scores)


def load_answers(path: Path) -> KeyedRows[AnswerRow]:
    """Read rag_answers.csv: Question Number, RAG Answer (+ optional Contexts, Retrieval
    Scores)."""
    return _keyed(
        path,
        [QUESTION_NUMBER, RAG_ANSWER],
        [CONTEXTS, RETRIEVAL_SCORES],
        lambda number, record: _answer_row(path, number, record),
        json_fix=_ANSWERS_JSON_FIX,
    )
