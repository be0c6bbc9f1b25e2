"""Reading a dataset file (``--dataset``): a JSON list, a list under a container key, JSON
Lines or CSV, into the records ``inputs/dataset_rows.py`` turns into canonical rows.

Unlike convert's folder of RAG outputs, a dataset is read strictly: a malformed line, a
record that is not an object or a field of the wrong type stops with one error naming the
file, the record and the fix.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from rag_evaluator.errors import InputError, MissingFileError
from rag_evaluator.inputs.dataset_rows import (
    DatasetRecord,
    DatasetTable,
    dataset_table,
    unknown_dataset_shape,
)
from rag_evaluator.inputs.files import not_a_file, read_input_bytes
from rag_evaluator.inputs.rag_json import (
    JSON_LINES_SUFFIXES,
    JSON_SUFFIXES,
    json_error_message,
    loads_json,
    value_error_reason,
)
from rag_evaluator.inputs.shapes import QUESTION_KEYS, container_list, find_field, json_type
from rag_evaluator.inputs.tables import decode_bytes, read_csv_rows

logger = logging.getLogger(__name__)

CSV_SUFFIXES = (".csv", ".tsv")
CSV_EXPECTED = "question, reference, answer (ragas, deepeval or rag-eval names)"
CSV_JSON_FIX = "Give it a .json or .jsonl name so it is read as JSON"


def item_record(name: str, item: object, location: str) -> DatasetRecord:
    """The record an item of a JSON document's list is; an error when it is no object."""
    if not isinstance(item, dict):
        raise InputError(
            f"{name} {location} is {json_type(item)}, not a record. Make every item an "
            "object with question, reference and answer fields"
        )
    return DatasetRecord(location, item)


def items_where(path: str) -> str:
    """How the items of the list at the key path ``path`` (``""``: the top level) are named
    in messages, before their number: ``'results' item`` 3."""
    return f"'{path}' item" if path else "item"


def _object_records(name: str, items: list, where: str) -> list[DatasetRecord]:
    return [
        item_record(name, item, f"{where} {index}") for index, item in enumerate(items, start=1)
    ]


def _document_records(name: str, value: object) -> list[DatasetRecord]:
    if isinstance(value, list):
        return _object_records(name, value, items_where(""))
    if not isinstance(value, dict):
        raise unknown_dataset_shape(name, f"the top level is {json_type(value)}")
    found = container_list(value)
    if found is not None:
        path, items = found
        return _object_records(name, items, items_where(path))
    if find_field(value, QUESTION_KEYS)[0]:
        return [DatasetRecord("(single record)", value)]
    keys = ", ".join(repr(key) for key in list(value)[:8]) or "none"
    raise unknown_dataset_shape(name, f"an object with the keys {keys}")


def _nested_too_deeply(name: str) -> InputError:
    return InputError(
        f"{name} is nested too deeply to be a dataset. Check that it was exported correctly"
    )


def line_record(
    name: str, line_number: int, line: str, constants: list[str]
) -> DatasetRecord | None:
    """The record of one line of JSON Lines; ``None`` for a blank line."""
    if not line.strip():
        return None
    try:
        value = loads_json(line, constants)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name} line {line_number} is not valid JSON (column {exc.colno}: {exc.msg}). "
            "Fix that line: JSON Lines hold one complete JSON object per line"
        ) from exc
    except ValueError as exc:
        raise InputError(
            f"{name} line {line_number} could not be read: {value_error_reason(exc)}. "
            "Fix that value"
        ) from exc
    except RecursionError as exc:
        raise _nested_too_deeply(name) from exc
    if not isinstance(value, dict):
        raise InputError(
            f"{name} line {line_number} is {json_type(value)}, not a record. Write one "
            "object with question, reference and answer fields per line"
        )
    return DatasetRecord(f"line {line_number}", value)


def _line_records(name: str, text: str, constants: list[str]) -> list[DatasetRecord]:
    # Not str.splitlines(): U+2028 and friends may sit unescaped inside JSON strings.
    return [
        record
        for line_number, line in enumerate(text.split("\n"), start=1)
        if (record := line_record(name, line_number, line, constants)) is not None
    ]


def _json_records(path: Path, text: str) -> list[DatasetRecord]:
    constants: list[str] = []
    name = path.name
    try:
        if path.suffix.lower() in JSON_LINES_SUFFIXES:
            records = _line_records(name, text, constants)
        else:
            try:
                value = loads_json(text, constants)
            except json.JSONDecodeError as exc:
                if exc.msg != "Extra data":
                    raise InputError(json_error_message(name, text, exc)) from exc
                # Several values one after another: JSON Lines saved as .json.
                records = _line_records(name, text, constants)
            except ValueError as exc:
                raise InputError(
                    f"{name} could not be read as JSON: {value_error_reason(exc)}. Fix that value"
                ) from exc
            else:
                records = _document_records(name, value)
    except RecursionError as exc:
        raise _nested_too_deeply(name) from exc
    warn_constants(name, constants)
    return records


def warn_constants(name: str, constants: list[str]) -> None:
    if constants:
        logger.warning(
            "%s contains %s, which JSON does not allow; read as null. Have the exporter write "
            "null or a number instead",
            name,
            ", ".join(sorted(set(constants))),
        )


def _csv_records(path: Path) -> list[DatasetRecord]:
    raw = read_csv_rows(path, expected=CSV_EXPECTED, json_fix=CSV_JSON_FIX)
    return [csv_record(raw.headers, line, cells) for line, cells in raw.rows]


def csv_record(headers: Sequence[str], line: int, cells: Sequence[str]) -> DatasetRecord:
    """The record of one CSV row: each named column's cell (the first of a repeated name;
    a short row's missing cells empty)."""
    fields: dict[str, object] = {}
    for index, header in enumerate(headers):
        if header and header not in fields:
            fields[header] = cells[index] if index < len(cells) else ""
    return DatasetRecord(f"line {line}", fields, from_csv=True)


def records_dataset(name: str, items: Sequence[object]) -> DatasetTable:
    """Records given in memory (mappings with a dataset's field names, as a JSON list holds
    them) read into canonical rows, as a dataset file's are; ``name`` names them in errors."""
    return dataset_table(name, _object_records(name, list(items), ""))


def _looks_like_json(text: str) -> bool:
    return text.lstrip().startswith(("{", "["))


def read_dataset(path: Path, *, require_answers: bool = True) -> DatasetTable:
    """Read a dataset file into canonical rows; every problem is an ``InputError``."""
    path = Path(path)
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a dataset file. Pass a file", path)
    if not path.exists():
        raise MissingFileError(path)
    suffix = path.suffix.lower()
    try:
        if suffix in CSV_SUFFIXES:
            records = _csv_records(path)
        else:
            text, _, warnings = decode_bytes(read_input_bytes(path), path)
            if not text.strip():
                raise InputError(f"{path.name} is empty. Export the dataset again")
            if suffix in JSON_SUFFIXES + JSON_LINES_SUFFIXES or _looks_like_json(text):
                for warning in warnings:
                    logger.warning(warning)
                records = _json_records(path, text)
            else:
                records = _csv_records(path)  # which says what decoding it took
        table = dataset_table(path.name, records, require_answers=require_answers)
    except InputError as exc:
        if exc.path is not None:
            raise
        raise InputError(exc.message, path) from exc
    log_dataset(
        path.name,
        len(table.rows),
        table.numbering,
        table.metadata_columns,
        table.notes,
        table.warnings,
    )
    return table


def log_dataset(
    name: str,
    records: int,
    numbering: str,
    metadata_columns: Sequence[str],
    notes: Sequence[str],
    warnings: Sequence[str],
) -> None:
    """What reading a dataset logs: its records, numbering and metadata columns, its notes
    (info) and what the user should act on (warnings)."""
    logger.info(
        "%s: %d records, question numbers from %s%s",
        name,
        records,
        numbering,
        f"; metadata columns: {', '.join(metadata_columns)}" if metadata_columns else "",
    )
    for note in notes:
        logger.info(note)
    for warning in warnings:
        logger.warning(warning)
