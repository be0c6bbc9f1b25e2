"""A dataset file too large to hold, read as a stream: JSON Lines record by record.

``stream_dataset`` reads the file once a chunk at a time for its SHA-256 and its encoding
(the rules of ``files.decode_text``), then looks at its first lines to tell JSON Lines
from a JSON document. Each ``StreamedDataset.records()`` reads it again, one line at a
time, as ``datasets.read_dataset`` reads JSON Lines (the same records, errors and warnings).
A JSON document (a list of records, an object holding one) and a CSV dataset are read whole
by ``read_dataset``: ``stream_dataset`` returns ``None`` for them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.dataset_rows import DatasetRecord
from rag_evaluator.inputs.datasets import CSV_SUFFIXES, line_record
from rag_evaluator.inputs.files import not_a_file
from rag_evaluator.inputs.rag_json import JSON_LINES_SUFFIXES, loads_json
from rag_evaluator.inputs.streamed_csv import CHUNK_SIZE, FileFacts, file_facts

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamedDataset:
    """A JSON Lines dataset checked for its encoding, its records read on demand."""

    path: Path
    sha256: str  # of the file's raw bytes
    facts: FileFacts

    def records(self, constants: list[str]) -> Iterator[tuple[int, DatasetRecord]]:
        """Each record with the line it is on, from a fresh pass over the file; the
        non-standard constants met (NaN, Infinity) are added to ``constants``."""
        name = self.path.name
        try:
            for number, line in enumerate(_split_lines(self.facts.source.texts()), start=1):
                record = line_record(name, number, line, constants)
                if record is not None:
                    yield number, record
        except RecursionError as exc:
            raise InputError(
                f"{name} is nested too deeply to be a dataset. Check that it was exported correctly"
            ) from exc


def stream_dataset(path: Path, chunk_size: int = CHUNK_SIZE) -> StreamedDataset | None:
    """The dataset at ``path`` as a stream when it is JSON Lines; ``None`` when it must be
    read whole (a JSON document, CSV) or is no readable file (reading it says why)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not_a_file(path) is not None or not path.exists() or suffix in CSV_SUFFIXES:
        return None
    facts = file_facts(path, chunk_size)
    if not _holds_lines(facts, named_lines=suffix in JSON_LINES_SUFFIXES):
        return None
    for warning in facts.warnings:
        logger.warning(warning)
    return StreamedDataset(path, facts.sha256, facts)


def _holds_lines(facts: FileFacts, *, named_lines: bool) -> bool:
    """Whether ``read_dataset`` reads the file as JSON Lines: a file named so that is not
    blank, or another whose first line is one whole JSON object with more after it (a JSON
    document with extra data, which is then read line by line)."""
    lines = (line for line in _split_lines(facts.source.texts()) if line.strip())
    first = next(lines, None)
    if first is None:
        return False  # blank: read_dataset says it is empty
    if named_lines:
        return True
    if not first.lstrip().startswith("{"):
        return False
    try:
        value = loads_json(first, [])
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and next(lines, None) is not None


def _split_lines(texts: Iterable[str]) -> Iterator[str]:
    """The text the chunks make, split at "\\n" only as ``str.split("\\n")`` splits it
    whole: U+2028 and the like may sit unescaped inside JSON strings."""
    pending: list[str] = []
    for text in texts:
        parts = text.split("\n")
        if len(parts) == 1:
            pending.append(text)
            continue
        pending.append(parts[0])
        yield "".join(pending)
        yield from parts[1:-1]
        pending = [parts[-1]]
    yield "".join(pending)
