"""Reading results files back (for compare and calibrate), and human label files.

A results file is what ``results/writer.py`` writes: ``#SUMMARY: Label: value`` rows, one
cell each, then a CSV table headed by ``Question Number``. The reader takes every column
it finds, so columns added by later versions are read without changes here; which of them
are metrics is decided by ``results/run_scores.py``. Every problem is an ``InputError``
naming the file and the fix.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.errors import InputError, MissingFileError
from rag_evaluator.inputs.fields import (
    QUESTION_NUMBER,
    QuestionNumberError,
    parse_question_label,
    resolve_columns,
)
from rag_evaluator.inputs.files import not_a_file, read_input_bytes
from rag_evaluator.inputs.tables import (
    FIELD_SIZE_LIMIT,
    SPREADSHEET_SIGNATURES,
    decode_bytes,
    shown_headers,
    sniff_delimiter,
)
from rag_evaluator.results.run_scores import (
    RunScores,
    TableRow,
    build_run_scores,
    current_summary_label,
    legacy_column_renames,
)
from rag_evaluator.results.summary import SUMMARY_PREFIX

logger = logging.getLogger(__name__)

_RESULTS_FIX = "Pass a results file written by rag-eval evaluate (Evaluation_Runs/*.csv)"


@dataclass(frozen=True)
class CsvSheet:
    """A results or labels file as read: its summary rows, headers and data rows.

    ``headers`` are as written; ``rows`` carry their cells under those headers, except the
    question-number column, which is found under any of its accepted spellings and is
    stored under ``Question Number``. ``line_numbers`` says where each row starts.
    """

    path: Path
    summary: list[tuple[str, str]]
    headers: list[str]
    rows: list[TableRow]
    line_numbers: dict[int, int]


def _is_comment_line(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("#", '"#'))


def read_sheet(path: Path, *, what: str, fix: str) -> CsvSheet:
    """Read a CSV with optional ``#`` rows on top and a ``Question Number`` column.

    ``what`` names the kind of file in messages ("a rag-eval results file"), ``fix`` says
    what to pass instead.
    """
    path = Path(path)
    text = _sheet_text(path, what=what, fix=fix)
    summary, table_start, lines_before = _leading_summary(text)
    rows = _non_blank_rows(path, text, table_start, lines_before, fix)
    headers: list[str] | None = None
    for _line, cells in rows:
        first = cells[0].strip()
        if not first.startswith("#"):
            headers = [cell.strip() for cell in cells]
            break
        # An older version CSV-quoted summary lines holding a comma.
        entry = _summary_entry(first)
        if entry is not None:
            summary.append(entry)
    if headers is None:
        raise InputError(f"{path} is empty or holds no table. {fix}", path)
    question_index = _question_column(path, headers, what=what, fix=fix)
    table_rows, line_numbers = _question_rows(path, rows, headers, question_index, fix)
    if not table_rows:
        raise InputError(f"{path} has a header row but no question rows. {fix}", path)
    canonical_headers = [
        QUESTION_NUMBER if index == question_index else header
        for index, header in enumerate(headers)
    ]
    return CsvSheet(path, summary, canonical_headers, table_rows, line_numbers)


def _sheet_text(path: Path, *, what: str, fix: str) -> str:
    """The decoded text of ``path``; a folder, a missing file or a workbook is refused."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not {what}. {fix}", path)
    if not path.exists():
        raise MissingFileError(path)
    data = read_input_bytes(path)
    if data.startswith(SPREADSHEET_SIGNATURES):
        raise InputError(
            f"{path} is a spreadsheet workbook (Excel or similar), not CSV text. Save it as CSV "
            "(in Excel: File > Save As > CSV UTF-8) and pass that file",
            path,
        )
    text, _encoding, warnings = decode_bytes(data, path)
    for warning in warnings:
        logger.warning(warning)
    return text


def _non_blank_rows(
    path: Path, text: str, table_start: int, lines_before: int, fix: str
) -> Iterator[tuple[int, list[str]]]:
    """The non-blank CSV rows of ``text`` from ``table_start`` on, each with the line of the
    file it starts on; the delimiter is sniffed from the first line that is no comment."""
    header_line = next(
        (line for line in text.splitlines() if line.strip() and not _is_comment_line(line)), ""
    )
    csv.field_size_limit(FIELD_SIZE_LIMIT)
    reader = csv.reader(
        io.StringIO(text[table_start:], newline=""), delimiter=sniff_delimiter(header_line)
    )
    start_line = lines_before + 1
    try:
        for cells in reader:
            line = start_line
            start_line = lines_before + reader.line_num + 1
            if any(cell.strip() for cell in cells):
                yield line, cells
    except csv.Error as exc:
        raise InputError(
            f"{path} is not a readable CSV file (line {reader.line_num}: {exc}). {fix}", path
        ) from exc


def _question_column(path: Path, headers: list[str], *, what: str, fix: str) -> int:
    """Where the question-number column is, under any of its accepted spellings."""
    resolved = resolve_columns(headers, [QUESTION_NUMBER])
    if QUESTION_NUMBER not in resolved:
        shown = ", ".join(repr(name) for name in shown_headers(headers)) or "none"
        raise InputError(
            f"{path} is not {what}: it has no '{QUESTION_NUMBER}' column "
            f"(columns found: {shown}). {fix}",
            path,
        )
    return resolved[QUESTION_NUMBER]


def _question_rows(
    path: Path,
    rows: Iterator[tuple[int, list[str]]],
    headers: list[str],
    question_index: int,
    fix: str,
) -> tuple[list[TableRow], dict[int, int]]:
    """The data rows by question number (one row per number), and the line of each."""
    table_rows: list[TableRow] = []
    line_numbers: dict[int, int] = {}
    for line, cells in rows:
        number = _question_number(path, line, cells, question_index, fix)
        if number in line_numbers:
            raise InputError(
                f"{path} repeats question number {number} (lines {line_numbers[number]} "
                f"and {line}). Keep one row per question",
                path,
            )
        line_numbers[number] = line
        cell_map: dict[str, str] = {}
        for index, header in enumerate(headers):
            if index == question_index or header in cell_map:
                continue
            cell_map[header] = cells[index] if index < len(cells) else ""
        cell_map[QUESTION_NUMBER] = str(number)
        table_rows.append(TableRow(number, cell_map))
    return table_rows, line_numbers


# One physical line, as the csv module splits them (\r\n, \r or \n).
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")


def _summary_entry(line: str) -> tuple[str, str] | None:
    """``(label, value)`` of a ``#SUMMARY: label: value`` line; ``None`` for other ``#`` lines
    (``#SUMMARY[Category=billing]: ...`` group lines among them).

    The label ends at the first ``": "`` (the writer's separator), so a label may hold a colon
    of its own (a jury's ``Juror openai/llama3.1:8b Precision``); without one, a line ending
    in a colon has an empty value, and any other (a hand-written ``label:value``) ends its
    label at the first colon."""
    prefix = SUMMARY_PREFIX.strip()
    if not line.startswith(prefix):
        return None
    entry = line.removeprefix(prefix).strip()
    label, separator, value = entry.partition(": ")
    if not separator:
        label, _, value = (entry[:-1], "", "") if entry.endswith(":") else entry.partition(":")
    return label.strip(), value.strip()


def _leading_summary(text: str) -> tuple[list[tuple[str, str]], int, int]:
    """The summary entries of the ``#`` lines on top of ``text``, where the rest starts, and
    how many lines came before it.

    Those lines are plain text, not CSV: a summary value may hold commas and quotes."""
    summary: list[tuple[str, str]] = []
    position = 0
    lines = 0
    for found in _PHYSICAL_LINE.finditer(text):
        line = found.group().strip()
        if line and not line.startswith("#"):
            break
        entry = _summary_entry(line)
        if entry is not None:
            summary.append(entry)
        position = found.end()
        lines += 1
    return summary, position, lines


def _question_number(path: Path, line: int, cells: list[str], index: int, fix: str) -> int:
    raw = cells[index] if index < len(cells) else ""
    try:
        return parse_question_label(raw)
    except QuestionNumberError as exc:
        raise InputError(
            f"{path} line {line}: '{QUESTION_NUMBER}' {exc}. Every row needs a whole question "
            f"number. {fix}",
            path,
        ) from exc


def with_current_column_names(sheet: CsvSheet) -> CsvSheet:
    """A results table written before a column or summary row was renamed, under today's
    names (``results/run_scores.legacy_column_renames``, ``current_summary_label``); a current
    table as it is."""
    summary = [(current_summary_label(label), value) for label, value in sheet.summary]
    renames = legacy_column_renames(sheet.headers)
    if not renames:
        return CsvSheet(sheet.path, summary, sheet.headers, sheet.rows, sheet.line_numbers)
    rows = [
        TableRow(row.question_number, {renames.get(k, k): v for k, v in row.cells.items()})
        for row in sheet.rows
    ]
    headers = [renames.get(header, header) for header in sheet.headers]
    return CsvSheet(sheet.path, summary, headers, rows, sheet.line_numbers)


def read_run_scores(path: Path) -> RunScores:
    """Read a results file written by ``rag-eval evaluate`` and classify its metrics.

    A file without ``#SUMMARY:`` rows on top is refused: rag_answers.csv and other tables
    with a question-number column are not runs.
    """
    sheet = read_results_sheet(path)
    return build_run_scores(str(path), sheet.headers, sheet.rows, summary=sheet.summary)


def read_results_sheet(path: Path) -> CsvSheet:
    """A results file of ``rag-eval evaluate``, whole: its ``#SUMMARY:`` rows and its table
    (columns under their current names). A file without ``#SUMMARY:`` rows is refused."""
    what = "a rag-eval results file"
    sheet = read_sheet(path, what=what, fix=_RESULTS_FIX)
    if not sheet.summary:
        raise InputError(
            f"{sheet.path} is not {what}: it does not start with the #SUMMARY: rows that "
            f"rag-eval evaluate writes. {_RESULTS_FIX}",
            sheet.path,
        )
    return with_current_column_names(sheet)


def read_label_sheet(path: Path) -> CsvSheet:
    """Read a file of human labels: ``Question Number`` and one column per labelled metric."""
    return read_sheet(
        path,
        what="a file of human labels",
        fix="Give it a 'Question Number' column and one column per labelled metric, named "
        "like the results file's (e.g. Precision)",
    )
