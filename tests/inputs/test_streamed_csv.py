"""The streaming CSV reader: ``read_csv``'s records, attributes and errors, a chunk at a time."""

from __future__ import annotations

import codecs
import csv
import io
import json
import logging
import os
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError, MissingColumnError, MissingFileError, UsageError
from rag_evaluator.inputs import tables
from rag_evaluator.inputs.streamed_csv import (
    CHUNK_SIZE,
    StreamedCsv,
    _json_verdict,
    stream_csv,
)
from rag_evaluator.inputs.tables import CsvTable, is_json, read_csv
from rag_evaluator.llm.fingerprint import sha256_hex

QUESTIONS = {"required": ["Question Number", "Question"]}
ANSWERS = {
    "required": ["Question Number"],
    "optional": ["Question", "Ground Truth", "RAG Answer", "Contexts"],
    "extra_columns": True,
}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append((record.levelno, record.getMessage()))


@contextmanager
def logged() -> Iterator[list[tuple[int, str]]]:
    """What the package logs (info and up) inside the block."""
    handler = _Records()
    package_logger = logging.getLogger("rag_evaluator")
    level = package_logger.level
    package_logger.addHandler(handler)
    package_logger.setLevel(logging.INFO)
    try:
        yield handler.messages
    finally:
        package_logger.removeHandler(handler)
        package_logger.setLevel(level)


@contextmanager
def field_limit(limit: int | None) -> Iterator[None]:
    """Both readers refuse a cell longer than ``limit`` (the csv module's only error on
    text split into lines, met otherwise only past 256 MiB)."""
    if limit is None:
        yield
        return
    saved = tables.FIELD_SIZE_LIMIT
    tables.FIELD_SIZE_LIMIT = limit
    try:
        yield
    finally:
        tables.FIELD_SIZE_LIMIT = saved
        csv.field_size_limit(saved)


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def attributes(table: CsvTable | StreamedCsv) -> dict[str, Any]:
    names = ("path", "headers", "columns", "encoding", "delimiter", "warnings", "extra_columns")
    return {name: getattr(table, name) for name in names}


def read_whole(path: Path, options: dict[str, Any]) -> CsvTable | InputError:
    try:
        return read_csv(path, **options)
    except InputError as exc:
        return exc


def read_streamed(
    path: Path, options: dict[str, Any], chunk_size: int
) -> tuple[StreamedCsv | InputError, list[Any] | InputError | None]:
    """``stream_csv``'s result (or error) and the records of its pass (or the error met)."""
    try:
        streamed = stream_csv(path, chunk_size=chunk_size, **options)
    except InputError as exc:
        return exc, None
    try:
        return streamed, list(streamed.records())
    except InputError as exc:
        return streamed, exc


def assert_streams_as_read(
    path: Path, options: dict[str, Any], chunk_size: int, limit: int | None = None
) -> str:
    """``stream_csv`` gives what ``read_csv`` gives: records, attributes, logged messages,
    or the same error (one the csv module meets after the header may come from records(),
    and a missing required column is then named first, as read_csv names it otherwise).
    Returns what read_csv gave, in a few words."""
    with field_limit(limit), logged() as whole_log:
        whole = read_whole(path, options)
    with field_limit(limit), logged() as streamed_log:
        streamed, records = read_streamed(path, options, chunk_size)
    if isinstance(whole, CsvTable):
        assert isinstance(streamed, StreamedCsv), streamed
        assert records == whole.records
        assert attributes(streamed) == attributes(whole)
        assert (streamed.sha256, streamed.size) == (
            sha256_hex(path.read_bytes()),
            path.stat().st_size,
        )
        assert streamed_log == whole_log
        return f"a table in {whole.encoding}"
    error = streamed if isinstance(streamed, InputError) else records
    assert isinstance(error, InputError), (whole, streamed)
    if "is not a readable CSV file" in whole.message and isinstance(error, MissingColumnError):
        # stream_csv names the missing column before reading on to the unreadable row.
        assert error.message == read_whole(path, options).message
        return "unreadable after a missing column"
    assert (type(error), error.message) == (type(whole), whole.message)
    assert streamed_log[: len(whole_log)] == whole_log
    return " ".join(whole.message.split()[1:4])


# Generated files ----------------------------------------------------------------------

_HEADERS = st.sampled_from(
    [
        "Question Number",
        "question_num",
        "ID",
        "Question",
        "query",
        "Ground Truth",
        "RAG Answer",
        "answer",
        "Contexts",
        "Category",
        " Category ",
        "Source",
        "",
        "Notes, extra",
        'Say "hi"',
        "Catégorie",
        "sep=;",
    ]
)
_HEADER_SETS = [
    ["Question Number", "Question", "Ground Truth"],
    ["qid", "query", "expected", "answer"],
    ["ID", "Question", "RAG Answer", "Contexts", "ID"],
    [],
]
_CELL_PIECES = st.sampled_from(
    [*'ab1 ,;\t|"#\r\n\x00é€ü✓\x0c', "\r\n", "\u2028", "\x85", "𝄞", "Œuvre", "12"]
)
_CELLS = st.lists(_CELL_PIECES, max_size=8).map("".join)
_LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])
_ENCODINGS = st.sampled_from(
    ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "cp1252", "cp1252-bom", "latin-1"]
)


def _encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-be":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be", errors="surrogatepass")
    if encoding == "cp1252-bom":
        return codecs.BOM_UTF8 + text.encode("cp1252", errors="replace")
    return text.encode(encoding, errors="replace")


def _row_text(draw: st.DrawFn, row: list[str], delimiter: str) -> str:
    ending = draw(_LINE_ENDS)
    if draw(st.booleans()):  # quoted as a CSV writer quotes
        buffer = io.StringIO(newline="")
        csv.writer(buffer, delimiter=delimiter, lineterminator=ending).writerow(row)
        return buffer.getvalue()
    return delimiter.join(row) + ending  # as typed: quotes and line ends left raw


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    parts = [draw(st.sampled_from(["", " ", "\t"])) + draw(_LINE_ENDS) for _ in range(3)]
    parts = parts[: draw(st.integers(0, 3))]
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(["sep=", "SEP=", " sep="])) + delimiter)
        parts.append(draw(_LINE_ENDS))
    # Mostly the columns asked for, in some spelling and order, among others.
    known = draw(st.sampled_from(_HEADER_SETS))
    headers = draw(st.permutations([*known, *draw(st.lists(_HEADERS, max_size=3))]))
    if not headers:
        headers = [""]
    rows = draw(st.lists(st.lists(_CELLS, max_size=7), max_size=6))
    for row in [headers, *rows]:
        parts.append(_row_text(draw, row, delimiter))
        if draw(st.integers(0, 4)) == 0:
            parts.append(draw(st.sampled_from(["", "  ", delimiter * 2])) + draw(_LINE_ENDS))
    if draw(st.booleans()):  # the last line without its end
        parts[-1] = parts[-1].rstrip("\r\n")
    data = _encode("".join(parts), draw(_ENCODINGS))
    if draw(st.integers(0, 3)) == 0:  # a stray byte: not UTF-8 (or UTF-16) after all
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\x81", b"\x00", b"\xe9", b"\xd8"]))
        data += data[at:]
    return data


_OPTIONS = st.sampled_from(
    [QUESTIONS, ANSWERS, {"required": ["Question Number", "Ground Truth"], "json_fix": "Fix."}]
)
_CHUNK_SIZES = st.sampled_from([1, 2, 3, 5, 8, 13, 64, CHUNK_SIZE])


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=csv_files(),
    options=_OPTIONS,
    chunk_size=_CHUNK_SIZES,
    limit=st.sampled_from([None, None, 16]),
    name=st.sampled_from(["input.csv", "input.txt"]),
)
def test_any_generated_csv_streams_as_read_csv_reads_it(
    tmp_path: Path,
    data: bytes,
    options: dict[str, Any],
    chunk_size: int,
    limit: int | None,
    name: str,
) -> None:
    path = write(tmp_path / name, data)
    # Shown by --hypothesis-show-statistics: how often each outcome is met.
    event(assert_streams_as_read(path, options, chunk_size, limit))


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def json_like_files(draw: st.DrawFn) -> bytes:
    """JSON documents, JSON Lines, and CSV that starts as JSON does ("[Question]", ...)."""
    kind = draw(st.sampled_from(["document", "lines", "bracketed", "broken"]))
    if kind == "document":
        text = json.dumps(draw(_json_values), indent=draw(st.sampled_from([None, 2])))
    elif kind == "lines":
        text = "".join(json.dumps(value) + "\n" for value in draw(st.lists(_json_values)))
    elif kind == "bracketed":
        text = "[Question Number],[Question]\n1,What?\n"
    else:
        text = json.dumps(draw(_json_values))
        text = text[: draw(st.integers(0, len(text)))] + draw(st.sampled_from(["", ",", "\n1,2"]))
    lead = draw(st.sampled_from(["", " ", "\n\n", "\ufeff", "\x0b"]))
    return (lead + text).encode(draw(st.sampled_from(["utf-8", "utf-16"])))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.one_of(json_like_files(), st.binary(max_size=120)),
    chunk_size=_CHUNK_SIZES,
    name=st.sampled_from(["input.csv", "input.json", "input.jsonl"]),
)
def test_json_and_any_bytes_stream_as_read_csv_reads_them(
    tmp_path: Path, data: bytes, chunk_size: int, name: str
) -> None:
    path = write(tmp_path / name, data)
    event(assert_streams_as_read(path, QUESTIONS, chunk_size))


@settings(max_examples=500, deadline=None)
@given(
    text=st.one_of(
        _json_values.map(json.dumps),
        _json_values.map(lambda value: json.dumps(value, indent=1)),
        st.lists(_json_values, max_size=3).map(
            lambda vs: "".join(json.dumps(v) + "\n" for v in vs)
        ),
        st.text(st.sampled_from('[]{}",:1 \n\tabQ-e.tnul\\'), max_size=80),
    ),
    lead=st.sampled_from(["", " ", "\n", "\x0b"]),
    cut=st.integers(0, 200),
)
def test_the_start_of_a_text_never_contradicts_the_whole_json_verdict(
    text: str, lead: str, cut: int
) -> None:
    whole = lead + text
    head = whole[:cut]
    verdict = _json_verdict(Path("x.csv"), head, complete=cut >= len(whole))
    assert verdict is None or verdict == is_json(Path("x.csv"), whole)


def test_a_large_csv_with_bracketed_headers_is_told_from_json_by_its_start(
    tmp_path: Path,
) -> None:
    rows = "".join(f"{number},What is {number}?\n" for number in range(1, 20_000))
    path = write(tmp_path / "questions.csv", "[Question Number],[Question]\n" + rows)
    # Its start is enough: the verdict needs none of the rest.
    start = path.read_text(encoding="utf-8")[:65_536]
    assert _json_verdict(path, start, complete=False) is False
    assert_streams_as_read(path, QUESTIONS, CHUNK_SIZE)


def test_a_large_json_document_in_a_csv_file_is_refused_as_json(tmp_path: Path) -> None:
    records = [{"question": f"What is {n}?", "answer": "x" * 40} for n in range(3000)]
    path = write(tmp_path / "questions.csv", json.dumps(records, indent=2))
    with pytest.raises(InputError) as caught:
        stream_csv(path, **QUESTIONS)
    assert caught.value.message == (
        "questions.csv is JSON, not CSV. Save it as CSV with columns: Question Number, Question"
    )
    assert_streams_as_read(path, QUESTIONS, 4096)


# Chunks -------------------------------------------------------------------------------

STRADDLING_TEXT = (
    "Question Number,Question,Category\r\n"
    '1,"Qué € tal 𝄞?\r\nSecond line, quoted",Sûr\r\n'
    "2,Ünïcödé ✓ with a long row " + "ж" * 40 + ",x\r"
    "\r\n"
    '3,"quote ""inside""",\n'
    "4,last row without an end"
)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "cp1252-bom"])
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 4, 5, 7, 16])
def test_rows_characters_and_line_ends_straddling_chunks(
    tmp_path: Path, encoding: str, chunk_size: int
) -> None:
    text = (
        STRADDLING_TEXT
        if encoding != "cp1252-bom"
        else STRADDLING_TEXT.encode("cp1252", errors="replace").decode("cp1252")
    )
    path = write(tmp_path / "questions.csv", _encode(text, encoding))
    streamed = stream_csv(path, chunk_size=chunk_size, extra_columns=True, **QUESTIONS)
    records = list(streamed.records())
    assert [record.line_number for record in records] == [2, 4, 6, 7]
    assert records[0].values["Question"] == text.split('"')[1]
    assert records[0].extra == {"Category": "Sûr"}
    assert_streams_as_read(path, {**QUESTIONS, "extra_columns": True}, chunk_size)


@pytest.mark.parametrize("chunk_size", [1, 3, 10, 29, 30, 31, 32])
def test_the_first_bad_byte_is_named_whichever_chunk_holds_it(
    tmp_path: Path, chunk_size: int
) -> None:
    # \xe9 is no UTF-8 at byte 30 (after the byte order mark); \x81 no cp1252 at byte 32.
    path = write(
        tmp_path / "questions.csv",
        codecs.BOM_UTF8 + b"Question Number,Question\n1,Caf\xe9 \x81?\n",
    )
    streamed = stream_csv(path, chunk_size=chunk_size, **QUESTIONS)
    assert streamed.warnings == [
        "questions.csv is not valid UTF-8 (byte 30), nor Windows-1252 (byte 32); read it as "
        "latin-1. Save it as UTF-8 if characters look wrong"
    ]
    assert [record.values["Question"] for record in streamed.records()] == ["Café \x81?"]
    assert_streams_as_read(path, QUESTIONS, chunk_size)


def test_a_utf8_sequence_cut_by_a_chunk_is_still_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,€€€ 𝄞𝄞\n")
    for chunk_size in range(1, 12):
        streamed = stream_csv(path, chunk_size=chunk_size, **QUESTIONS)
        assert (streamed.encoding, streamed.warnings) == ("utf-8", [])
        assert [record.values["Question"] for record in streamed.records()] == ["€€€ 𝄞𝄞"]


def test_nul_bytes_are_removed_before_lines_are_split(tmp_path: Path) -> None:
    # "\r\x00\n" is one line end once the NUL is gone, as read_csv reads it.
    path = write(
        tmp_path / "questions.csv", b"Question Number,Question\r\x00\n1,Wh\x00at?\r\x00\n2,B"
    )
    streamed = stream_csv(path, chunk_size=2, **QUESTIONS)
    assert [(record.line_number, record.values["Question"]) for record in streamed.records()] == [
        (2, "What?"),
        (3, "B"),
    ]
    assert streamed.warnings == [
        "questions.csv contains NUL bytes; they were removed. If its text looks wrong, save it "
        "again as UTF-8 text"
    ]
    assert_streams_as_read(path, QUESTIONS, 2)


def test_a_chunk_size_below_one_byte_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,A\n")
    with pytest.raises(UsageError, match="chunk_size is 0"):
        stream_csv(path, chunk_size=0, **QUESTIONS)


# Attributes and passes ----------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [1, 7, CHUNK_SIZE])
def test_sha256_and_size_are_those_of_the_raw_bytes(tmp_path: Path, chunk_size: int) -> None:
    data = codecs.BOM_UTF8 + "sep=;\nQuestion Number;Question\n1;Qué?\n".encode() * 3
    path = write(tmp_path / "questions.csv", data)
    streamed = stream_csv(path, chunk_size=chunk_size, **QUESTIONS)
    assert streamed.sha256 == sha256_hex(path.read_bytes())
    assert streamed.size == len(data)


def test_records_can_be_iterated_twice_and_side_by_side(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,A\n\n2,B\n3,C\n")
    streamed = stream_csv(path, chunk_size=4, **QUESTIONS)
    first = list(streamed.records())
    assert [record.line_number for record in first] == [2, 4, 5]
    assert list(streamed.records()) == first
    one, two = streamed.records(), streamed.records()
    assert [next(one), next(two), next(one), next(two)] == [first[0], first[0], first[1], first[1]]


def test_a_file_written_to_between_its_two_reads_is_named_not_a_traceback(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,Qu\u00e9?\n")
    streamed = stream_csv(path, **QUESTIONS)
    assert streamed.encoding == "utf-8"
    path.write_bytes(b"Question Number,Question\n1,Qu\xe9?\n")  # now cp1252
    with pytest.raises(InputError) as raised:
        list(streamed.records())
    assert str(raised.value) == (
        "questions.csv changed while it was being read (it no longer reads as utf-8). "
        "Run again once nothing is writing to it"
    )


def test_the_excel_separator_line_and_the_sniffed_delimiter_are_reported_and_logged(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "questions.csv", "\n\nsep=|\r\nQuestion Number|Question\n1|A, B?\n")
    with logged() as messages:
        streamed = stream_csv(path, **QUESTIONS)
    assert streamed.delimiter == "|"
    assert messages == [(logging.INFO, "questions.csv: using delimiter '|'")]
    assert [(r.line_number, r.values["Question"]) for r in streamed.records()] == [(5, "A, B?")]


# Errors -------------------------------------------------------------------------------


def assert_same_error(path: Path, options: dict[str, Any] = QUESTIONS) -> InputError:
    """``stream_csv`` itself raises ``read_csv``'s error; returns it."""
    with pytest.raises(InputError) as whole:
        read_csv(path, **options)
    for chunk_size in (1, 5, CHUNK_SIZE):
        with pytest.raises(InputError) as streamed:
            stream_csv(path, chunk_size=chunk_size, **options)
        assert type(streamed.value) is type(whole.value)
        assert streamed.value.message == whole.value.message
    return whole.value


def test_a_missing_file(tmp_path: Path) -> None:
    error = assert_same_error(tmp_path / "questions.csv")
    assert isinstance(error, MissingFileError)
    assert error.message == (
        "questions.csv not found. Create this file with columns: Question Number, Question"
    )


def test_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "questions.csv"
    folder.mkdir()
    error = assert_same_error(folder)
    assert error.message == f"{folder} is a directory, not a CSV file. Pass a file path"


def test_a_named_pipe_is_never_opened(tmp_path: Path) -> None:
    pipe = tmp_path / "questions.csv"
    os.mkfifo(pipe)  # opening it would block for ever
    error = assert_same_error(pipe)
    assert error.message == f"{pipe} is a named pipe (FIFO), not a CSV file. Pass a file path"


def test_an_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,A\n")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):  # root reads it anyway: then both read it alike
            assert_streams_as_read(path, QUESTIONS, CHUNK_SIZE)
        else:
            error = assert_same_error(path)
            assert error.message.startswith(f"Cannot read {path}: Permission denied.")
    finally:
        path.chmod(0o600)


@pytest.mark.parametrize(
    "signature", [b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"], ids=["xlsx", "xls"]
)
def test_a_spreadsheet_workbook(tmp_path: Path, signature: bytes) -> None:
    path = write(tmp_path / "questions.csv", signature + bytes(range(256)))
    error = assert_same_error(path)
    assert error.message.startswith("questions.csv is a spreadsheet workbook")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("questions.json", '[{"question": "What?"}]'),
        ("questions.csv", '{"question": "What?"}\n{"question": "Why?"}\n'),
        ("questions.csv", '\n  [\n  {"question": "What?"}\n]'),
    ],
)
def test_json_instead_of_csv(tmp_path: Path, name: str, text: str) -> None:
    error = assert_same_error(write(tmp_path / name, text), {**QUESTIONS, "json_fix": "Convert."})
    assert error.message == f"{name} is JSON, not CSV. Convert."


@pytest.mark.parametrize("content", ["", "\n\n", " , \n", "sep=;\n"])
def test_an_empty_file(tmp_path: Path, content: str) -> None:
    error = assert_same_error(write(tmp_path / "questions.csv", content))
    assert error.message == (
        "questions.csv is empty. Add a header row with columns: Question Number, Question, "
        "then one row per question"
    )


def test_dev_null_reads_as_an_empty_file() -> None:
    error = assert_same_error(Path(os.devnull))
    assert error.message.startswith("null is empty. Add a header row")


def test_a_missing_required_column_lists_the_headers_found(tmp_path: Path) -> None:
    error = assert_same_error(write(tmp_path / "questions.csv", "Number,Text\n1,What?\n"))
    assert isinstance(error, MissingColumnError)
    assert error.message == (
        "questions.csv has no 'Question' column (columns found: 'Number', 'Text'). "
        "Rename the column that holds it to 'Question', or add such a column"
    )


def test_a_header_without_data_rows(tmp_path: Path) -> None:
    error = assert_same_error(write(tmp_path / "questions.csv", "Question Number,Question\n\n ,\n"))
    assert error.message == (
        "questions.csv has a header row but no data rows. Add one row per question with "
        "columns: Question Number, Question"
    )


def test_an_unreadable_row_before_the_first_data_row_stops_stream_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n\n1,far too long a cell\n")
    with field_limit(16):
        error = assert_same_error(path)
    assert error.message == (
        "questions.csv is not a readable CSV file (line 3: field larger than field limit (16)). "
        "Check its quoting and save it again as CSV"
    )


def test_an_unreadable_row_deep_in_the_file_stops_records(tmp_path: Path) -> None:
    path = write(
        tmp_path / "questions.csv",
        'Question Number,Question\n1,A\n2,"B\nB"\n3,far too long a cell\n',
    )
    with field_limit(16):
        with pytest.raises(InputError) as whole:
            read_csv(path, **QUESTIONS)
        streamed = stream_csv(path, chunk_size=3, **QUESTIONS)
        records = streamed.records()
        assert [next(records).line_number, next(records).line_number] == [2, 3]
        with pytest.raises(InputError) as caught:
            next(records)
    assert (
        caught.value.message
        == whole.value.message
        == (
            "questions.csv is not a readable CSV file (line 5: field larger than field limit "
            "(16)). Check its quoting and save it again as CSV"
        )
    )


# Memory ---------------------------------------------------------------------------------


def test_memory_is_bounded_by_a_chunk_and_a_row_not_by_the_file(tmp_path: Path) -> None:
    row_text = "Réponse longue, " * 500  # about 8 KB, as a RAG answer with its contexts
    path = tmp_path / "rag_answers.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("Question Number,RAG Answer\r\n")
        for number in range(1, 1001):
            handle.write(f'{number},"{row_text}\r\n{number}"\r\n')
    assert path.stat().st_size > 8_000_000
    tracemalloc.start()
    try:
        streamed = stream_csv(path, required=["Question Number", "RAG Answer"], chunk_size=65_536)
        count = sum(1 for record in streamed.records() if record.values["RAG Answer"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 1000
    # A chunk decoded (four bytes a character at most) and a few rows: far below the file.
    assert peak < 2_000_000
