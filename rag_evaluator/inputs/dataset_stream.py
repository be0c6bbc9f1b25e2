"""A dataset file too large to hold, read as a stream: JSON Lines, CSV or a JSON document
holding a list of records, record by record.

``stream_dataset`` reads the file once a chunk at a time for its SHA-256 and its encoding
(the rules of ``files.decode_text``), and looks at its start to tell its kind as
``datasets.read_dataset`` does; a JSON document is read once more by the streaming parser
(ijson) for its outline (``json_outline``), which finds the list of records as
``read_dataset`` would. Each ``StreamedDataset.records()`` reads the file again, a line, a
row or an item at a time: the same records, errors and warnings as ``read_dataset``. What
the streaming parser cannot read as ``json`` does (a single record, another shape, NaN, a
lone surrogate, broken JSON) is read whole by ``read_dataset``: ``stream_dataset`` returns
``None`` for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ijson

from rag_evaluator.errors import InputError
from rag_evaluator.inputs.dataset_rows import DatasetRecord
from rag_evaluator.inputs.datasets import (
    CSV_EXPECTED,
    CSV_JSON_FIX,
    CSV_SUFFIXES,
    csv_record,
    item_record,
    items_where,
    line_record,
)
from rag_evaluator.inputs.files import not_a_file
from rag_evaluator.inputs.json_outline import LoneSurrogates, outline, records_path
from rag_evaluator.inputs.rag_json import JSON_LINES_SUFFIXES, JSON_SUFFIXES, loads_json
from rag_evaluator.inputs.streamed_csv import (
    CHUNK_SIZE,
    FileFacts,
    StreamedRows,
    file_facts,
    stream_csv_rows,
)
from rag_evaluator.settings import SPOOL_VARIABLE

logger = logging.getLogger(__name__)

# A fresh pass over the file's records, each with its line; NaN and the like met are added
# to the list given.
_Records = Callable[[list[str]], Iterator[tuple[int, DatasetRecord]]]


@dataclass(frozen=True)
class StreamedDataset:
    """A JSON Lines, CSV or JSON-list dataset checked as ``read_dataset`` checks it, its
    records read on demand."""

    path: Path
    sha256: str  # of the file's raw bytes
    _records: _Records = field(repr=False)
    # What a record's number follows in messages: "line" 12, or "item" 3 of a JSON list.
    where: str = "line"

    def records(self, constants: list[str]) -> Iterator[tuple[int, DatasetRecord]]:
        """Each record with the line it starts on (its item number in a JSON document), from
        a fresh pass over the file; the non-standard JSON constants met (NaN, Infinity) are
        added to ``constants``."""
        return self._records(constants)


def stream_dataset(path: Path, chunk_size: int = CHUNK_SIZE) -> StreamedDataset | None:
    """The dataset at ``path`` as a stream; ``None`` when it must be read whole (a JSON
    document without a list of records the streaming parser reads as ``json`` does) or is no
    readable file or is blank (``read_dataset`` then says why)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not_a_file(path) is not None or not path.exists():
        return None
    if suffix in CSV_SUFFIXES:
        return _csv_dataset(stream_csv_rows(path, expected=CSV_EXPECTED, json_fix=CSV_JSON_FIX))
    facts = file_facts(path, chunk_size)
    first = next((line for line in _split_lines(facts.source.texts()) if line.strip()), None)
    if first is None:
        return None
    named_json = suffix in JSON_SUFFIXES + JSON_LINES_SUFFIXES
    if not named_json and not first.lstrip().startswith(("{", "[")):
        csv = stream_csv_rows(path, expected=CSV_EXPECTED, json_fix=CSV_JSON_FIX, facts=facts)
        return _csv_dataset(csv)
    if suffix not in JSON_LINES_SUFFIXES and not _holds_lines(facts, first):
        return _document_dataset(facts)
    for warning in facts.warnings:
        logger.warning(warning)
    return StreamedDataset(path, facts.sha256, lambda constants: _lines(facts, constants))


def _csv_dataset(csv: StreamedRows) -> StreamedDataset:
    def records(_constants: list[str]) -> Iterator[tuple[int, DatasetRecord]]:
        for line, cells in csv.rows():
            yield line, csv_record(csv.headers, line, cells)

    return StreamedDataset(csv.path, csv.sha256, records)


def _lines(facts: FileFacts, constants: list[str]) -> Iterator[tuple[int, DatasetRecord]]:
    name = facts.source.path.name
    for number, line in enumerate(_split_lines(facts.source.texts()), start=1):
        record = line_record(name, number, line, constants)
        if record is not None:
            yield number, record


def _holds_lines(facts: FileFacts, first: str) -> bool:
    """Whether ``read_dataset`` reads a JSON file not named as JSON Lines line by line: its
    first line one whole JSON object with more after it (a JSON document with extra data)."""
    if not first.lstrip().startswith("{"):
        return False
    try:
        value = loads_json(first, [])
    except (ValueError, RecursionError):
        return False
    lines = (line for line in _split_lines(facts.source.texts()) if line.strip())
    next(lines, None)
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


class _EncodedText:
    """The decoded text's chunks as UTF-8 bytes, for the streaming parser to ``read`` (a
    read may return fewer bytes than asked for; ``b""`` at the end)."""

    def __init__(self, texts: Iterator[str], watch: Callable[[str], None] | None = None) -> None:
        self._texts = texts
        self._watch = watch
        self._pending = memoryview(b"")

    def read(self, size: int = -1) -> bytes:
        while not self._pending:
            text = next(self._texts, None)
            if text is None:
                return b""
            if self._watch is not None:
                self._watch(text)
            # An unpaired surrogate cannot be UTF-8: the parser then refuses the bytes.
            self._pending = memoryview(text.encode("utf-8", "surrogatepass"))
        taken = len(self._pending) if size < 0 else size
        data = bytes(self._pending[:taken])
        self._pending = self._pending[taken:]
        return data


def _document_dataset(facts: FileFacts) -> StreamedDataset | None:
    """A JSON document's records as a stream, when it holds a list of them that the streaming
    parser reads as ``json`` does; ``None`` (read it whole) otherwise."""
    name = facts.source.path.name
    lone = LoneSurrogates()
    try:
        events = ijson.basic_parse(_EncodedText(facts.source.texts(), lone.feed), use_float=True)
        document = outline(events)
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        # NaN, a huge number, a lone low surrogate (yajl makes bytes no UTF-8 decoder takes),
        # broken JSON...: read_dataset reads it whole, or says why it cannot.
        reason = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
        _read_whole(name, f"the streaming JSON parser stopped at it ({reason})")
        return None
    lone.finish()
    names = records_path(document)
    if lone.found:
        _read_whole(name, "it holds a lone surrogate escape, which the streaming parser misreads")
        return None
    if names is None:
        return None  # a single record or a shape read_dataset refuses (then saying why)
    for warning in facts.warnings:
        logger.warning(warning)
    where = items_where(".".join(names))
    prefix = ".".join((*names, "item"))
    return StreamedDataset(
        facts.source.path,
        facts.sha256,
        lambda _constants: _items(facts, prefix, where),
        where,
    )


def _read_whole(name: str, reason: str) -> None:
    logger.warning(
        "%s is read whole, not streamed (it exceeds %s): %s. Save its records as JSON Lines, "
        "one per line, to stream them",
        name,
        SPOOL_VARIABLE,
        reason,
    )


def _items(facts: FileFacts, prefix: str, where: str) -> Iterator[tuple[int, DatasetRecord]]:
    path = facts.source.path
    items = ijson.items(_EncodedText(facts.source.texts()), prefix, use_float=True)
    try:
        for number, item in enumerate(items, start=1):
            yield number, item_record(path.name, item, f"{where} {number}")
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        # Its first reading found it whole and valid: it was written to since.
        raise InputError(
            f"{path.name} changed while it was being read ({exc}). Run again once nothing "
            "is writing to it",
            path,
        ) from exc
