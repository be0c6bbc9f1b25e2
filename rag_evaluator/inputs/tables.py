"""CSV in (encoding fallback, delimiter sniffing, fuzzy headers) and out (atomic).

Every problem with a file becomes an ``InputError`` naming the file and the fix.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import logging
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_evaluator.atomic import write_text_atomic
from rag_evaluator.errors import InputError, MissingColumnError, MissingFileError
from rag_evaluator.inputs.fields import (
    column_key,
    metadata_headers,
    resolve_columns,
    shadowed_columns,
)
from rag_evaluator.inputs.files import decode_text, not_a_file, read_input_bytes

logger = logging.getLogger(__name__)

# Answers of a megabyte or more are real (whole documents pasted back); the csv
# module's default 128 KiB field limit would reject them.
FIELD_SIZE_LIMIT = 256 * 1024 * 1024
_SNIFF_DELIMITERS = ",;\t|"
_EXCEL_SEPARATOR_LINE = re.compile(r"sep=([,;\t|])", re.IGNORECASE)
# .xlsx / .ods are zip archives; .xls is an OLE2 compound file. Renamed to .csv, or
# picked by mistake, they would otherwise read as latin-1 garbage with no such column.
SPREADSHEET_SIGNATURES = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
# Where str.splitlines ends a line and the csv module does not (each looked for on its own:
# a search for one character is several times faster than a search for a class of them).
_OTHER_LINE_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
# How much of a text physical_lines splits at once (a copy of it is held meanwhile).
_PIECE_CHARACTERS = 1 << 20


# Read-only by convention, not frozen: one per row of every file read (see inputs/records).
@dataclass(slots=True)
class CsvRecord:
    """One data row: its line number in the file and its cells by canonical column."""

    line_number: int
    values: dict[str, str]
    # The metadata columns' cells by header (read only when asked for).
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CsvTable:
    """A CSV file read with its columns resolved to canonical names."""

    path: Path
    headers: list[str]
    columns: dict[str, str]  # canonical name -> header as spelled in the file
    records: list[CsvRecord]
    encoding: str
    delimiter: str
    warnings: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RawCsv:
    """A CSV file's header cells and non-blank data rows (each with its first line)."""

    path: Path
    headers: list[str]
    rows: list[tuple[int, list[str]]]
    encoding: str
    delimiter: str
    warnings: list[str]


def decode_bytes(data: bytes, path: Path) -> tuple[str, str, list[str]]:
    """Decode file bytes as ``decode_text`` does, then remove NUL characters with a warning."""
    text, encoding, warnings = decode_text(data, path)
    return _without_nul(text, encoding, path, warnings)


def _without_nul(
    text: str, encoding: str, path: Path, warnings: list[str]
) -> tuple[str, str, list[str]]:
    if "\x00" in text:
        text = text.replace("\x00", "")
        warnings.append(nul_warning(path))
    return text, encoding, warnings


def nul_warning(path: Path) -> str:
    """The warning for a file whose NUL characters were removed."""
    return (
        f"{path.name} contains NUL bytes; they were removed. If its text looks wrong, "
        "save it again as UTF-8 text"
    )


def shown_headers(headers: Sequence[str], limit: int = 12, width: int = 40) -> list[str]:
    """Headers as listed in an error: non-empty, each cut short, at most ``limit``."""
    shown = [header if len(header) <= width else header[: width - 1] + "…" for header in headers]
    shown = [header for header in shown if header]
    if len(shown) > limit:
        shown = [*shown[:limit], f"… {len(shown) - limit} more"]
    return shown


def physical_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their endings, split at ``\r\n``, ``\r`` or ``\n`` only.

    What ``io.StringIO(text, newline="")`` yields, which is where the csv module expects
    lines to end (``str.splitlines`` also splits at form feeds, U+2028 and others), but
    without StringIO's copy of the whole text at four bytes per character.
    """
    return itertools.chain.from_iterable(_pieces_lines(text))


def _pieces_lines(text: str) -> Iterator[Iterable[str]]:
    """The lines of ``text`` a piece at a time, each piece ending just after a ``\\n``
    (always a line end, never the middle of a ``\\r\\n``): a piece without the other breaks
    is split by ``str.splitlines``, in C."""
    length = len(text)
    start = 0
    while start < length:
        end = text.find("\n", start + _PIECE_CHARACTERS) + 1 or length
        piece = text[start:end] if start or end < length else text
        if any(character in piece for character in _OTHER_LINE_BREAKS):
            yield _scanned_lines(piece)
        else:
            yield piece.splitlines(keepends=True)
        start = end


def _scanned_lines(text: str) -> Iterator[str]:
    """``physical_lines`` of a text holding breaks other than ``\\r`` and ``\\n``."""
    length = len(text)
    start = 0
    # Where the next "\n" / "\r" at or after start is; -1 once there is none left. A
    # position is searched for again only once passed, so each character is scanned once
    # (a file with only "\r" line ends does not rescan its whole rest for "\n" per line).
    next_lf = text.find("\n")
    next_cr = text.find("\r")
    while start < length:
        if 0 <= next_lf < start:
            next_lf = text.find("\n", start)
        if 0 <= next_cr < start:
            next_cr = text.find("\r", start)
        if next_cr >= 0 and (next_lf < 0 or next_cr < next_lf):
            end = next_cr + 2 if next_lf == next_cr + 1 else next_cr + 1
        elif next_lf >= 0:
            end = next_lf + 1
        else:
            end = length
        yield text[start:end]
        start = end


def sniff_delimiter(header_line: str) -> str:
    # Delimiters inside quoted header names ("Question, text") do not separate columns.
    unquoted = re.sub(r'"[^"]*"', "", header_line)
    counts = {delimiter: unquoted.count(delimiter) for delimiter in _SNIFF_DELIMITERS}
    best = max(counts, key=lambda delimiter: counts[delimiter])
    return best if counts[best] > 0 else ","


def is_json(path: Path, text: str) -> bool:
    """Whether the text is JSON (or JSON Lines) rather than CSV.

    Read as CSV, JSON gives "columns" such as ``{"question": "What``; no CSV header starts
    with ``{`` or ``[`` and parses as JSON.
    """
    start = text.lstrip()
    if not start.startswith(("{", "[")):
        return False
    if path.suffix.lower() in JSON_SUFFIXES:
        return True
    first_line = start.partition("\n")[0]
    for candidate in (first_line, text):
        try:
            json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        return True
    return False


def read_csv(
    path: Path,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    json_fix: str | None = None,
    extra_columns: bool = False,
    stand_ins: Mapping[str, str] | None = None,
) -> CsvTable:
    """Read ``path`` and resolve the ``required`` and ``optional`` canonical columns.

    ``json_fix`` is the advice given when the file turns out to be JSON (by default: save
    it as CSV with the required columns). With ``extra_columns`` the metadata columns
    (those that spell no canonical column, ``fields.metadata_headers``) are read too.
    ``stand_ins`` maps a required column to an optional one that may stand in for it (the
    records then lack the required one).
    """
    expected, fix = expected_columns(required, json_fix)
    raw = read_csv_rows(path, expected=expected, json_fix=fix)
    headers = raw.headers
    canonical, extra = resolved_columns(
        raw.path,
        headers,
        required=required,
        optional=optional,
        extra_columns=extra_columns,
        stand_ins=stand_ins,
    )
    records = list(iter_records(raw.rows, canonical, extra))
    if not records:
        raise no_data_rows_error(raw.path, expected)
    return CsvTable(
        path=raw.path,
        headers=headers,
        columns={name: headers[index] for name, index in canonical},
        records=records,
        encoding=raw.encoding,
        delimiter=raw.delimiter,
        warnings=raw.warnings,
        extra_columns=[name for _, name in extra],
    )


def expected_columns(required: Sequence[str], json_fix: str | None) -> tuple[str, str]:
    """The required columns as a message names them, and the advice when the file is JSON
    (by default: save it as CSV with those columns)."""
    expected = ", ".join(required)
    return expected, json_fix or f"Save it as CSV with columns: {expected}"


def resolved_columns(
    path: Path,
    headers: Sequence[str],
    *,
    required: Sequence[str],
    optional: Sequence[str],
    extra_columns: bool,
    stand_ins: Mapping[str, str] | None = None,
) -> tuple[list[tuple[str, int]], list[tuple[int, str]]]:
    """The canonical columns found in ``headers`` (name, index) and, with ``extra_columns``,
    the metadata ones (index, header); a ``required`` column not found (nor the column
    ``stand_ins`` lets stand in for it) is a ``MissingColumnError``. A column spelling one
    already found is left to what other columns become, with a warning naming both."""
    resolved = resolve_columns(headers, [*required, *optional])
    for name in required:
        stand_in = (stand_ins or {}).get(name)
        if name not in resolved and (stand_in is None or stand_in not in resolved):
            raise MissingColumnError(path, name, shown_headers(headers))
    extra = metadata_headers(headers) if extra_columns else []
    _warn_shadowed(path, headers, resolved, {index for index, _ in extra})
    return list(resolved.items()), extra


def _warn_shadowed(
    path: Path, headers: Sequence[str], resolved: dict[str, int], metadata: set[int]
) -> None:
    for canonical, read, other in shadowed_columns(headers, resolved):
        if other in metadata and column_key(headers[other]) != column_key(canonical):
            # An alias kept as metadata beside the column it could name (a dataset's own
            # ids as `question_id` beside `Question Number`): nothing is lost.
            continue
        fate = "is carried as a metadata column" if other in metadata else "is not read"
        if headers[read] == headers[other]:
            logger.warning(
                "%s has two '%s' columns: the first is read, the other %s. Rename or remove "
                "the one you do not mean",
                path.name,
                headers[read],
                fate,
            )
            continue
        logger.warning(
            "%s: the columns '%s' and '%s' both name '%s': '%s' is read, '%s' %s. "
            "Rename or remove the one you do not mean",
            path.name,
            headers[read],
            headers[other],
            canonical,
            headers[read],
            headers[other],
            fate,
        )


def no_data_rows_error(path: Path, expected: str) -> InputError:
    return InputError(
        f"{path.name} has a header row but no data rows. Add one row per question "
        f"with columns: {expected}",
        path,
    )


def empty_file_error(path: Path, expected: str) -> InputError:
    return InputError(
        f"{path.name} is empty. Add a header row with columns: {expected}, "
        "then one row per question",
        path,
    )


def iter_records(
    rows: Iterable[tuple[int, list[str]]],
    canonical: Sequence[tuple[str, int]],
    extra: Sequence[tuple[int, str]],
) -> Iterator[CsvRecord]:
    """Each row's cells of the ``canonical`` columns and of the ``extra`` (metadata) ones; a
    cell a short row lacks is empty."""
    widest = max((index for _, index in canonical), default=-1)
    widest = max([widest, *(index for index, _ in extra)])
    for line, row in rows:
        if len(row) > widest:  # every cell there: no length check per cell
            values = {name: row[index] for name, index in canonical}
            metadata = {name: row[index] for index, name in extra} if extra else {}
        else:
            values = {name: (row[index] if index < len(row) else "") for name, index in canonical}
            metadata = {name: (row[index] if index < len(row) else "") for index, name in extra}
        yield CsvRecord(line, values, metadata)


def read_csv_rows(path: Path, *, expected: str, json_fix: str) -> RawCsv:
    """Read ``path`` as CSV text: encoding fallback, Excel's ``sep=`` line, delimiter
    sniffing; its headers (stripped) and non-blank rows. ``expected`` names the columns in
    the message about an empty file, ``json_fix`` is the advice when the file is JSON."""
    path = Path(path)
    text, encoding, warnings = _csv_text(path, expected=expected, json_fix=json_fix)
    lines, lines_before, delimiter = csv_lines(lambda: physical_lines(text))
    if delimiter != ",":
        log_delimiter(path, delimiter)
    non_blank = list(non_blank_rows(path, lines, lines_before, delimiter))
    if not non_blank:
        raise empty_file_error(path, expected)
    headers = [cell.strip() for cell in non_blank[0][1]]
    return RawCsv(path, headers, non_blank[1:], encoding, delimiter, warnings)


def log_delimiter(path: Path, delimiter: str) -> None:
    logger.info("%s: using delimiter %r", path.name, delimiter)


def _csv_text(path: Path, *, expected: str, json_fix: str) -> tuple[str, str, list[str]]:
    """The decoded text of a file that must be CSV: text, encoding and decoding warnings
    (logged). A folder, a missing file, a spreadsheet workbook or JSON is refused."""
    refuse_no_file(path, expected)
    data = read_input_bytes(path)
    refuse_workbook(path, data)
    # Only the text is kept: returning drops the bytes, so a large file is held once.
    text, encoding, warnings = decode_bytes(data, path)
    if is_json(path, text):
        raise json_error(path, json_fix)
    log_warnings(warnings)
    return text, encoding, warnings


def log_warnings(warnings: Iterable[str]) -> None:
    for warning in warnings:
        logger.warning(warning)


def refuse_no_file(path: Path, expected: str) -> None:
    """Refuse a folder, a pipe or a device, and a path where nothing is."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a CSV file. Pass a file path", path)
    if not path.exists():
        raise MissingFileError(path, [part for part in expected.split(", ") if part])


def refuse_workbook(path: Path, head: bytes) -> None:
    """Refuse a file whose first bytes (``head``, eight at least) are a workbook's."""
    if head.startswith(SPREADSHEET_SIGNATURES):
        raise InputError(
            f"{path.name} is a spreadsheet workbook (Excel or similar), not CSV text. Save it "
            "as CSV (in Excel: File > Save As > CSV UTF-8) and pass that file",
            path,
        )


def json_error(path: Path, json_fix: str) -> InputError:
    return InputError(f"{path.name} is JSON, not CSV. {json_fix}", path)


def csv_lines(make_lines: Callable[[], Iterator[str]]) -> tuple[Iterator[str], int, str]:
    """The lines the csv reader reads, how many lines of the file come before them, and the
    delimiter: the one Excel's ``sep=`` line names (the reader starts after that line), else
    the one sniffed from the first non-blank line. ``make_lines`` gives the file's lines
    from its start each time it is called."""
    # The header line is read from the stream of lines the csv reader then reads: no
    # copy of the whole text split into lines just to find it.
    lines = make_lines()
    lines_before = 0
    first_line = ""
    for lines_before, line in enumerate(lines, start=1):  # noqa: B007 (read after the loop)
        if line.strip():
            first_line = line
            break
    excel_hint = _EXCEL_SEPARATOR_LINE.fullmatch(first_line.strip(" \r\n"))
    if excel_hint:
        # Line numbers count the lines skipped so they stay those of the file.
        return lines, lines_before, excel_hint.group(1)
    return make_lines(), 0, sniff_delimiter(first_line)


def non_blank_rows(
    path: Path, lines: Iterator[str], lines_before: int, delimiter: str
) -> Generator[tuple[int, list[str]], None, None]:
    """Every row of ``lines`` with a cell that is not blank, with the line of the file it
    starts on."""
    csv.field_size_limit(FIELD_SIZE_LIMIT)
    reader = csv.reader(lines, delimiter=delimiter)
    next_start_line = lines_before + 1
    try:
        for row in reader:
            # A quoted newline makes a row span several physical lines, so the
            # row starts where the previous one ended.
            start_line = next_start_line
            next_start_line = lines_before + reader.line_num + 1
            # "".join(row).strip() is empty exactly when every cell is blank, without a
            # generator per row.
            if "".join(row).strip():
                yield start_line, row
    except csv.Error as exc:
        raise InputError(
            f"{path.name} is not a readable CSV file (line {lines_before + reader.line_num}: "
            f"{exc}). Check its quoting and save it again as CSV",
            path,
        ) from exc


def render_csv(rows: Iterable[Sequence[object]]) -> str:
    """Render rows as CSV text with the csv module's standard quoting, one row per line."""
    return "".join(csv_line(row) for row in rows)


def csv_line(row: Sequence[object]) -> str:
    """One row as a CSV line ending in a newline (``None`` cells empty)."""
    # The writer quotes a cell only if it holds a character of the line terminator.
    # With "\n" alone a cell holding a lone "\r" would go out unquoted and a reader
    # would end the row there; so each row is rendered with "\r\n" (quoting cells
    # with either character) and its ending then written as "\n".
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerow(
        ["" if cell is None else cell for cell in row]
    )
    return buffer.getvalue()[:-2] + "\n"


def write_csv_atomic(
    path: Path, rows: Sequence[Sequence[object]], *, overwrite: bool = True
) -> None:
    """Write rows to ``path`` atomically, UTF-8 without BOM (``FileExistsError`` if it
    exists and ``overwrite`` is false)."""
    write_text_atomic(Path(path), render_csv(rows), overwrite=overwrite)
