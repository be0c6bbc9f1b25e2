"""The golden set's two files: written by generate, read and rewritten by review.

Both are written atomically (``inputs/tables.py: write_csv_atomic``), UTF-8 with ``,`` as
delimiter. Review reads them back whole (every column, in its order), decoded and with the
delimiter found as for every input, and writes them back the same way after each decision.
"""

from __future__ import annotations

import csv
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from rag_evaluator.errors import InputError, MissingFileError, UsageError
from rag_evaluator.generate.review.table import RawTable
from rag_evaluator.inputs.files import not_a_file, read_input_bytes
from rag_evaluator.inputs.tables import (
    FIELD_SIZE_LIMIT,
    decode_bytes,
    physical_lines,
    sniff_delimiter,
    write_csv_atomic,
)

logger = logging.getLogger(__name__)

QUESTIONS_FILE = "questions.csv"
GROUND_TRUTH_FILE = "ground_truth.csv"


def golden_set_paths(output_dir: Path) -> tuple[Path, Path]:
    return output_dir / QUESTIONS_FILE, output_dir / GROUND_TRUTH_FILE


def refuse_to_overwrite(paths: Sequence[Path]) -> None:
    """``UsageError`` when any of ``paths`` exists (without ``--force``)."""
    existing = [path for path in paths if path.exists()]
    if existing:
        names = " and ".join(str(path) for path in existing)
        raise UsageError(
            f"{names} already exist{'s' if len(existing) == 1 else ''}. Pass --force to "
            "overwrite, or write elsewhere with --output-dir"
        )


def check_output_folder(folder: Path) -> None:
    """Create the output folder if needed and make sure a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".rag-eval-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(
            f"Cannot write in the output folder {folder}: {exc.strerror}. Choose another one "
            "with --output-dir"
        ) from exc


def write_golden_set(
    questions_path: Path,
    ground_truth_path: Path,
    question_rows: Sequence[Sequence[object]],
    ground_truth_rows: Sequence[Sequence[object]],
    *,
    overwrite: bool,
) -> None:
    """Write both files atomically; without ``overwrite`` an existing file is never replaced
    (and neither file is written when one of them exists)."""
    appeared = UsageError(
        f"{questions_path} or {ground_truth_path} appeared while the questions were generated. "
        "Move it away and run the same command again: the generated questions are kept in the "
        "checkpoint"
    )
    if not overwrite and (questions_path.exists() or ground_truth_path.exists()):
        raise appeared
    for path, rows in ((ground_truth_path, ground_truth_rows), (questions_path, question_rows)):
        try:
            write_csv_atomic(path, rows, overwrite=overwrite)
        except FileExistsError as exc:
            raise appeared from exc
        except OSError as exc:
            raise UsageError(
                f"Cannot write {path}: {exc.strerror}. Free some disk space or choose another "
                "folder with --output-dir, then run the same command again: the generated "
                "questions are kept in the checkpoint"
            ) from exc


def read_table(path: Path) -> RawTable:
    """A CSV file as its header and rows of text (blank lines dropped)."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a CSV file. Pass a file path", path)
    if not path.exists():
        raise MissingFileError(path)
    text, _encoding, warnings = decode_bytes(read_input_bytes(path), path)
    for message in warnings:
        logger.warning(message)
    lines = list(physical_lines(text))
    first = next((line for line in lines if line.strip()), "")
    csv.field_size_limit(FIELD_SIZE_LIMIT)
    try:
        rows = [
            row
            for row in csv.reader(lines, delimiter=sniff_delimiter(first))
            if any(cell.strip() for cell in row)
        ]
    except csv.Error as exc:
        raise InputError(
            f"{path.name} is not a readable CSV file ({exc}). Check its quoting and save it "
            "again as CSV",
            path,
        ) from exc
    if not rows:
        raise InputError(f"{path.name} is empty: there is nothing to review", path)
    header, *body = rows
    return RawTable(str(path), [cell.strip() for cell in header], body)


def write_table(path: Path, table: RawTable) -> None:
    """Rewrite a table atomically."""
    try:
        write_csv_atomic(path, [table.header, *table.rows])
    except OSError as exc:
        raise UsageError(
            f"Cannot save {path}: {exc.strerror}. Free some disk space or fix the file's "
            "permissions, then run rag-eval review again (decisions saved before are kept)"
        ) from exc
