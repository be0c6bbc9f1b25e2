"""A CSV file read as a stream: ``read_csv``'s rows, one at a time, never the whole file.

``stream_csv`` reads the file whole once, a chunk at a time, for its SHA-256, its encoding
(the rules of ``files.decode_text``) and whether it holds NULs; then only its start: up to
its first data row (its header, its columns) and enough to tell it from JSON. Each
``StreamedCsv.records()`` reads it again. Memory is bounded by a chunk and the longest row,
except for a file that starts as JSON does and whose start cannot tell: that one is read
whole, as ``read_csv`` reads it, to judge whether it is JSON.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.errors import InputError, UsageError
from rag_evaluator.inputs.files import (
    fallback_encoding,
    has_utf16_bom,
    read_input_bytes,
    unreadable_file_error,
)
from rag_evaluator.inputs.tables import (
    JSON_SUFFIXES,
    CsvRecord,
    csv_lines,
    decode_bytes,
    empty_file_error,
    expected_columns,
    is_json,
    iter_records,
    json_error,
    log_delimiter,
    log_warnings,
    no_data_rows_error,
    non_blank_rows,
    nul_warning,
    physical_lines,
    refuse_no_file,
    refuse_workbook,
    resolved_columns,
)

CHUNK_SIZE = 1024 * 1024
# Enough of a file's start to tell a CSV whose header starts with "[" from JSON.
_JSON_PROBE_CHARS = 64 * 1024
# A JSON error this far before the end of a file's start is one the rest cannot undo:
# the parser looks at most a few characters ahead ("-Infinity" is the longest token).
_JSON_LOOKAHEAD = 32
# The bytes cp1252 leaves undefined, as the codec itself says.
_CP1252_UNDEFINED = re.compile(
    b"["
    + b"".join(
        re.escape(bytes([value]))
        for value in range(256)
        if bytes([value]).decode("cp1252", errors="replace") == "\ufffd"
    )
    + b"]"
)
_HEAD_BYTES = 8  # the longest signature looked for (a .xls workbook's)


@dataclass(frozen=True)
class _TextSource:
    """How the file's text is read again: its decoder, the bytes before its text, NULs."""

    path: Path
    codec: str
    skip_bytes: int  # a UTF-8 byte order mark before text that is not UTF-8
    drop_nul: bool
    chunk_size: int

    def texts(self) -> Iterator[str]:
        """The decoded text, a chunk at a time, NUL characters removed when there are any."""
        decoder = codecs.getincrementaldecoder(self.codec)()
        try:
            for chunk in _byte_chunks(self.path, self.chunk_size, skip=self.skip_bytes):
                text = decoder.decode(chunk)
                yield text.replace("\x00", "") if self.drop_nul else text
            text = decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            # The first pass found it decodable: it was written to since.
            raise InputError(
                f"{self.path.name} changed while it was being read (it no longer reads as "
                f"{self.codec.removesuffix('-sig')}). Run again once nothing is writing to it",
                self.path,
            ) from exc
        yield text.replace("\x00", "") if self.drop_nul else text

    def lines(self) -> Iterator[str]:
        """The lines of the text as ``tables.physical_lines`` splits the whole text."""
        return _joined_lines(self.texts())


@dataclass(frozen=True)
class StreamedCsv:
    """A CSV file checked as ``read_csv`` checks it, its data rows read on demand."""

    path: Path
    headers: list[str]
    columns: dict[str, str]  # canonical name -> header as spelled in the file
    encoding: str
    delimiter: str
    warnings: list[str]
    extra_columns: list[str]
    sha256: str  # of the file's raw bytes
    size: int  # bytes
    _source: _TextSource = field(repr=False)
    _canonical: tuple[tuple[str, int], ...] = field(repr=False)
    _extra: tuple[tuple[int, str], ...] = field(repr=False)

    def records(self) -> Iterator[CsvRecord]:
        """The records ``read_csv`` would list, in order, from a fresh pass over the file.

        A row the csv module cannot read raises ``InputError`` when the pass reaches it."""
        rows, _ = _rows(self._source)
        next(rows, None)  # the header row
        yield from iter_records(rows, self._canonical, self._extra)


@dataclass(frozen=True)
class FileFacts:
    """What the first pass over the bytes learns."""

    sha256: str
    size: int
    encoding: str
    warnings: list[str]
    source: _TextSource


def stream_csv(
    path: Path,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    json_fix: str | None = None,
    extra_columns: bool = False,
    stand_ins: Mapping[str, str] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> StreamedCsv:
    """``read_csv``'s checks and columns without holding the file: its records come from
    ``records()``. Every error ``read_csv`` raises is raised here, with the same message,
    except a row the csv module cannot read after the first data row (then ``records()``
    raises it); a missing required column is named before such a row is looked at.
    ``chunk_size`` is how many bytes are read at a time."""
    if chunk_size < 1:
        raise UsageError(f"chunk_size is {chunk_size}. Read at least 1 byte at a time")
    path = Path(path)
    expected, fix = expected_columns(required, json_fix)
    streamed = stream_csv_rows(path, expected=expected, json_fix=fix, chunk_size=chunk_size)
    headers = streamed.headers
    canonical, extra = resolved_columns(
        path,
        headers,
        required=required,
        optional=optional,
        extra_columns=extra_columns,
        stand_ins=stand_ins,
    )
    data_rows = streamed.rows()
    first_row = next(data_rows, None)
    data_rows.close()
    if first_row is None:
        raise no_data_rows_error(path, expected)
    facts = streamed.facts
    return StreamedCsv(
        path=path,
        headers=headers,
        columns={name: headers[index] for name, index in canonical},
        encoding=facts.encoding,
        delimiter=streamed.delimiter,
        warnings=facts.warnings,
        extra_columns=[name for _, name in extra],
        sha256=facts.sha256,
        size=facts.size,
        _source=facts.source,
        _canonical=tuple(canonical),
        _extra=tuple(extra),
    )


def _rows(source: _TextSource) -> tuple[Generator[tuple[int, list[str]], None, None], str]:
    """The file's non-blank rows, its header first, each with the line it starts on; and
    the delimiter."""
    lines, lines_before, delimiter = csv_lines(source.lines)
    return non_blank_rows(source.path, lines, lines_before, delimiter), delimiter


def _byte_chunks(path: Path, chunk_size: int, *, skip: int = 0) -> Iterator[bytes]:
    try:
        with path.open("rb") as handle:
            handle.seek(skip)
            while chunk := handle.read(chunk_size):
                yield chunk
    except OSError as exc:
        raise unreadable_file_error(path, exc) from exc


def _head(path: Path) -> bytes:
    """The file's first bytes, enough for every signature looked for."""
    head = b""
    for chunk in _byte_chunks(path, _HEAD_BYTES):
        head += chunk
        if len(head) >= _HEAD_BYTES:
            break
    return head


def _joined_lines(texts: Iterable[str]) -> Iterator[str]:
    """The lines of the concatenated ``texts`` as ``physical_lines`` would split it: a line
    may run over several chunks, and a "\\r" ending one chunk may pair with a "\\n" opening
    the next."""
    pending: list[str] = []  # the start of a line not yet ended, chunk by chunk
    for text in texts:
        if not text:
            continue
        if pending and pending[-1].endswith("\r"):
            if text.startswith("\n"):
                pending.append("\n")
                text = text[1:]
            yield "".join(pending)
            pending = []
            if not text:
                continue
        last = ""
        for index, piece in enumerate(physical_lines(text)):
            if index:
                yield "".join(pending) + last if pending else last
                pending = []
            last = piece
        # Every piece but the last ended in a line end; the last may go on in the next text.
        if last.endswith("\n"):
            yield "".join(pending) + last if pending else last
            pending = []
        else:
            pending.append(last)
    if pending:
        yield "".join(pending)


class _EncodingProbe:
    """Decides, a chunk at a time, the encoding ``files.decode_text`` would choose for the
    whole file, and whether its text holds NUL characters."""

    def __init__(self, head: bytes) -> None:
        self.bom = len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0
        self.utf16 = codecs.getincrementaldecoder("utf-16")() if has_utf16_bom(head) else None
        self.utf16_nul = False
        self.utf8_pending = b""
        self.utf8_offset = 0  # where utf8_pending starts, counted after the byte order mark
        self.not_utf8_at: int | None = None
        self.not_cp1252_at: int | None = None
        self.nul_byte = False
        self.size = 0
        self.digest = hashlib.sha256()

    def feed(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        start = self.size
        self.size += len(chunk)
        self.nul_byte = self.nul_byte or b"\x00" in chunk
        self._feed_utf16(chunk, final=False)
        # UTF-8 and cp1252 are judged after a UTF-8 byte order mark, as decode_text does.
        text_bytes = chunk[max(0, self.bom - start) :]
        self._feed_utf8(text_bytes, final=False)
        if self.not_cp1252_at is None:
            undefined = _CP1252_UNDEFINED.search(text_bytes)
            if undefined is not None:
                self.not_cp1252_at = max(0, start - self.bom) + undefined.start()

    def _feed_utf16(self, data: bytes, *, final: bool) -> None:
        if self.utf16 is None:
            return
        try:
            text = self.utf16.decode(data, final)
        except UnicodeDecodeError:
            self.utf16 = None  # not UTF-16 after all: decode_text then tries UTF-8
            return
        self.utf16_nul = self.utf16_nul or "\x00" in text

    def _feed_utf8(self, data: bytes, *, final: bool) -> None:
        if self.not_utf8_at is not None:
            return
        pending = self.utf8_pending + data
        try:
            _, consumed = codecs.utf_8_decode(pending, "strict", final)
        except UnicodeDecodeError as exc:
            self.not_utf8_at = self.utf8_offset + exc.start
            return
        self.utf8_pending = pending[consumed:]
        self.utf8_offset += consumed

    def finish(self, path: Path) -> tuple[str, str, bool, list[str]]:
        """The encoding's name, its decoder, whether NULs are to be removed, the warnings."""
        self._feed_utf16(b"", final=True)
        self._feed_utf8(b"", final=True)
        if self.utf16 is not None:
            return "utf-16", "utf-16", self.utf16_nul, []
        if self.not_utf8_at is None:
            return "utf-8", "utf-8-sig", self.nul_byte, []
        encoding, warning = fallback_encoding(path, self.not_utf8_at, self.not_cp1252_at)
        return encoding, encoding, self.nul_byte, [warning]


def file_facts(path: Path, chunk_size: int) -> FileFacts:
    probe = _EncodingProbe(_head(path))
    for chunk in _byte_chunks(path, chunk_size):
        probe.feed(chunk)
    encoding, codec, has_nul, warnings = probe.finish(path)
    if has_nul:
        warnings.append(nul_warning(path))
    # A byte order mark before text that is not UTF-8 is no text of its own.
    skip = probe.bom if encoding in ("cp1252", "latin-1") else 0
    source = _TextSource(path, codec, skip, has_nul, chunk_size)
    return FileFacts(probe.digest.hexdigest(), probe.size, encoding, warnings, source)


def _is_json_file(path: Path, source: _TextSource) -> bool:
    """``tables.is_json`` of the file's text, read whole only when its start cannot tell."""
    start: list[str] = []
    length = 0
    first_character = ""
    complete = True
    for text in source.texts():
        first_character = first_character or text.lstrip()[:1]
        if first_character not in ("", "{", "["):
            return False  # the common case, told by its first character: CSV
        start.append(text)
        length += len(text)
        if length >= _JSON_PROBE_CHARS:
            complete = False
            break
    verdict = _json_verdict(path, "".join(start), complete=complete)
    if verdict is None:
        text, _, _ = decode_bytes(read_input_bytes(path), path)
        return is_json(path, text)
    return verdict


def _json_verdict(path: Path, head: str, *, complete: bool) -> bool | None:
    """Whether a text starting with ``head`` (all of it when ``complete``) is JSON as
    ``tables.is_json`` judges, or ``None`` when the rest of the text could decide."""
    if complete:
        return is_json(path, head)
    start = head.lstrip()
    if not start:
        return None
    if not start.startswith(("{", "[")):
        return False
    if path.suffix.lower() in JSON_SUFFIXES:
        return True
    first_line, newline, _ = start.partition("\n")
    if newline:
        if is_json(path, first_line):
            return True
        first_line_fails = True
    else:
        first_line_fails = _fails_early(start)
    return False if first_line_fails and _fails_early(head) else None


def _fails_early(text_start: str) -> bool:
    """Whether a text starting with ``text_start`` cannot be JSON, whatever follows: the
    parser stops far enough before its end that the rest plays no part."""
    try:
        json.loads(text_start)
    except json.JSONDecodeError as exc:
        # An unterminated string is reported where it starts, not where the parser stopped.
        return not exc.msg.startswith("Unterminated string") and exc.pos + _JSON_LOOKAHEAD <= len(
            text_start
        )
    except RecursionError:
        return False
    return False


@dataclass(frozen=True)
class StreamedRows:
    """A CSV file checked as ``tables.read_csv_rows`` checks it: its headers (stripped),
    its non-blank data rows read on demand."""

    path: Path
    headers: list[str]
    delimiter: str
    facts: FileFacts = field(repr=False)

    @property
    def sha256(self) -> str:
        return self.facts.sha256

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """Each non-blank data row with the line it starts on, from a fresh pass."""
        rows, _ = _rows(self.facts.source)
        next(rows, None)  # the header row
        yield from rows


def stream_csv_rows(
    path: Path,
    *,
    expected: str,
    json_fix: str,
    facts: FileFacts | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> StreamedRows:
    """``read_csv_rows`` without holding the file: the same checks, errors and log lines
    (a row the csv module cannot read raises when a pass reaches it). ``facts``: the first
    pass over the bytes when it was made already."""
    path = Path(path)
    refuse_no_file(path, expected)
    refuse_workbook(path, _head(path))
    facts = facts or file_facts(path, chunk_size)
    if _is_json_file(path, facts.source):
        raise json_error(path, json_fix)
    log_warnings(facts.warnings)
    rows, delimiter = _rows(facts.source)
    if delimiter != ",":
        log_delimiter(path, delimiter)
    header = next(rows, None)
    rows.close()
    if header is None:
        raise empty_file_error(path, expected)
    return StreamedRows(path, [cell.strip() for cell in header[1]], delimiter, facts)
