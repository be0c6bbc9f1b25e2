"""The shared CSV reader and writer: encodings, headers, delimiters and bad input."""

from __future__ import annotations

import codecs
import csv
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from evaluate_support import run_cli, write_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import InputError, MissingColumnError, MissingFileError, RagEvalError
from rag_evaluator.inputs.fields import (
    QuestionNumberError,
    column_key,
    parse_question_label,
    parse_question_number,
)
from rag_evaluator.inputs.files import decode_text
from rag_evaluator.inputs.load import load_answers, load_ground_truth, load_questions
from rag_evaluator.inputs.tables import (
    _PIECE_CHARACTERS,
    physical_lines,
    read_csv,
    write_csv_atomic,
)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def warnings_logged() -> Iterator[list[str]]:
    """Warnings the package logs, whatever configure_logging did to propagation."""
    handler = _Records()
    package_logger = logging.getLogger("rag_evaluator")
    package_logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        package_logger.removeHandler(handler)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


# Encodings ---------------------------------------------------------------------------


def test_utf8_with_a_byte_order_mark(tmp_path: Path, warnings_logged: list[str]) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(codecs.BOM_UTF8 + "Question Number,Question\n1,Qué tal?\n".encode())
    rows = load_questions(path).rows
    assert rows[1].question == "Qué tal?"
    assert warnings_logged == []


def test_latin1_text_is_read_as_cp1252_with_a_warning(
    tmp_path: Path, warnings_logged: list[str]
) -> None:
    # Latin-1 and Windows-1252 agree on every letter of Western European languages.
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,Café?\n", "latin-1")
    assert load_questions(path).rows[1].question == "Café?"
    assert warnings_logged == [
        "questions.csv is not valid UTF-8 (byte 30); read it as Windows-1252 (cp1252, Excel's "
        "Windows default). Save it as UTF-8 if characters look wrong"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What does the 5 € fee cover?",
        "Is “remote first” the policy?",
        "Is it the employee’s or the manager’s call?",
        "Dates 1–5 May — or later…",
        "Trade mark™ • bullet ‰ per mille Œuvre š ž Ÿ",
    ],
)
def test_an_excel_windows_csv_keeps_its_euro_signs_quotes_and_dashes(
    tmp_path: Path, text: str, warnings_logged: list[str]
) -> None:
    # Read as latin-1 these became C1 control characters (€ was \x80, “ was \x93).
    path = write(tmp_path / "questions.csv", f"Question Number,Question\r\n1,{text}\r\n", "cp1252")
    assert load_questions(path).rows[1].question == text
    assert "read it as Windows-1252 (cp1252" in warnings_logged[0]
    assert read_csv(path, required=["Question Number"]).encoding == "cp1252"


def test_bytes_undefined_in_cp1252_fall_back_to_latin1(
    tmp_path: Path, warnings_logged: list[str]
) -> None:
    path = tmp_path / "questions.csv"
    # 0x81 has no character in cp1252; latin-1 reads every byte.
    path.write_bytes(b"Question Number,Question\n1,bad \xff\x81 byte\n")
    assert load_questions(path).rows[1].question == "bad ÿ\x81 byte"
    assert warnings_logged == [
        "questions.csv is not valid UTF-8 (byte 31), nor Windows-1252 (byte 32); read it as "
        "latin-1. Save it as UTF-8 if characters look wrong"
    ]
    assert read_csv(path, required=["Question Number"]).encoding == "latin-1"


def test_a_utf8_byte_order_mark_on_a_cp1252_file_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(codecs.BOM_UTF8 + "Question Number,Question\n1,5 €\n".encode("cp1252"))
    assert load_questions(path).rows[1].question == "5 €"


cp1252_text = st.text(st.characters(codec="cp1252"), min_size=1)


@settings(max_examples=300, deadline=None)
@given(cp1252_text)
def test_any_cp1252_text_that_is_not_utf8_reads_back_exactly(text: str) -> None:
    data = text.encode("cp1252")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return  # the same bytes are valid UTF-8, which always wins (ASCII text, say)
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return  # read by its byte order mark ("ÿþ" is the UTF-16 one)
    decoded, encoding, warnings = decode_text(data, Path("x.csv"))
    assert (decoded, encoding) == (text, "cp1252")
    assert len(warnings) == 1 and "Windows-1252" in warnings[0]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_and_the_named_encoding_gives_them_back(data: bytes) -> None:
    text, encoding, warnings = decode_text(data, Path("x.csv"))
    if encoding == "utf-16":
        assert (
            text.encode("utf-16-le" if data[:2] == codecs.BOM_UTF16_LE else "utf-16-be")
            == (data[2:])
        )
    elif encoding == "utf-8":
        assert text.encode("utf-8") == data.removeprefix(codecs.BOM_UTF8)
    else:
        assert encoding in ("cp1252", "latin-1")
        assert text.encode(encoding) == data.removeprefix(codecs.BOM_UTF8)
        assert len(warnings) == 1
        # latin-1 only when cp1252 cannot decode the bytes.
        assert (encoding == "latin-1") == any(byte in data for byte in b"\x81\x8d\x8f\x90\x9d")
    assert (warnings == []) == (encoding in ("utf-8", "utf-16"))


def test_utf16_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number\tQuestion\r\n1\tÜber?\r\n", "utf-16")
    assert load_questions(path).rows[1].question == "Über?"


def test_nul_bytes_are_removed_with_a_warning(tmp_path: Path, warnings_logged: list[str]) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(b"Question Number,Question\n1,Wh\x00at?\n")
    assert load_questions(path).rows[1].question == "What?"
    assert warnings_logged == [
        "questions.csv contains NUL bytes; they were removed. If its text looks wrong, save it "
        "again as UTF-8 text"
    ]


# Headers and delimiters --------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "Question Number",
        "question_num",
        "QuestionNumber",
        "question number",
        "Question No.",
        "QUESTION-NUMBER",
        "Question #",
        "Q#",
        "qid",
        "ID",
    ],
)
def test_fuzzy_question_number_headers(tmp_path: Path, header: str) -> None:
    path = write(tmp_path / "questions.csv", f"{header},Question\n1,What?\n")
    assert load_questions(path).rows[1].question == "What?"


@pytest.mark.parametrize(
    ("header", "column"),
    [
        ("ground_truth", "Ground Truth"),
        ("Expected Answer", "Ground Truth"),
        ("reference", "Ground Truth"),
    ],
)
def test_fuzzy_ground_truth_headers(tmp_path: Path, header: str, column: str) -> None:
    path = write(tmp_path / "ground_truth.csv", f"question_num,{header}\n1,Truth\n")
    assert load_ground_truth(path).rows[1].ground_truth == "Truth"


def test_column_key_ignores_case_spaces_and_punctuation() -> None:
    assert column_key("Question No.") == column_key("question_no") == "questionno"
    assert column_key("Question #") == "questionnumber"


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_other_delimiters_are_sniffed(tmp_path: Path, delimiter: str) -> None:
    path = write(
        tmp_path / "questions.csv",
        f"Question Number{delimiter}Question\n1{delimiter}Yes, or no?\n",
    )
    assert load_questions(path).rows[1].question == "Yes, or no?"


def test_a_delimiter_inside_a_quoted_header_does_not_decide(tmp_path: Path) -> None:
    path = write(
        tmp_path / "questions.csv",
        '"Question Number";"Question, as asked"\n1;"Yes, or no?"\n',
    )
    table = read_csv(path, required=["Question Number"])
    assert table.delimiter == ";"
    assert table.headers == ["Question Number", "Question, as asked"]
    assert table.records[0].values["Question Number"] == "1"


def test_excels_separator_line_is_honoured(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "sep=;\nQuestion Number;Question\n1;A, B?\n")
    table = read_csv(path, required=["Question Number", "Question"])
    assert table.delimiter == ";"
    assert [record.values["Question"] for record in table.records] == ["A, B?"]
    assert table.records[0].line_number == 3


def test_line_numbers_count_blank_lines_and_the_separator_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "questions.csv", "\r\n\nsep=;\r\nQuestion Number;Question\n1;x\nabc;y\n"
    )
    with pytest.raises(InputError, match=r"questions\.csv line 6: "):
        load_questions(path)


def test_mixed_line_endings(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\r\n1,A?\n2,B?\r3,C?\r\n")
    rows = load_questions(path).rows
    assert {number: row.question for number, row in rows.items()} == {1: "A?", 2: "B?", 3: "C?"}


def test_a_one_megabyte_answer(tmp_path: Path) -> None:
    answer = "word " * 220_000
    path = write(tmp_path / "rag_answers.csv", f'Question Number,RAG Answer\n1,"{answer}"\n')
    assert load_answers(path).rows[1].rag_answer == answer


def test_quoted_newlines_keep_line_numbers_right(tmp_path: Path) -> None:
    path = write(
        tmp_path / "questions.csv",
        'Question Number,Question\n1,"line one\nline two"\nx,bad\n',
    )
    with pytest.raises(InputError, match=r"questions\.csv line 4: "):
        load_questions(path)


def test_list_columns_of_ground_truth_and_answers(tmp_path: Path) -> None:
    ground_truth = write(
        tmp_path / "ground_truth.csv",
        "Question Number,Ground Truth,Relevant Contexts,Required Facts\n"
        '1,T,"[""a"", ""b""]",x; y\n'
        "2,U,,\n",
    )
    rows = load_ground_truth(ground_truth).rows
    assert (rows[1].relevant_contexts, rows[1].required_facts) == (["a", "b"], ["x", "y"])
    assert (rows[2].relevant_contexts, rows[2].required_facts) == (None, None)
    answers = write(tmp_path / "rag_answers.csv", "Question Number,RAG Answer,Contexts\n1,A,[]\n")
    assert load_answers(answers).rows[1].contexts == []


# Bad input ---------------------------------------------------------------------------


def test_a_missing_file_names_the_columns_to_create(tmp_path: Path) -> None:
    with pytest.raises(MissingFileError) as caught:
        load_questions(tmp_path / "questions.csv")
    assert caught.value.message == (
        "questions.csv not found. Create this file with columns: Question Number, Question"
    )
    with pytest.raises(MissingFileError) as caught:
        load_ground_truth(tmp_path / "ground_truth.csv")
    assert caught.value.message == (
        "ground_truth.csv not found. Create this file with columns: Question Number, Ground Truth"
    )


@pytest.mark.parametrize("content", ["", "\n\n", " , \n"])
def test_an_empty_file(tmp_path: Path, content: str) -> None:
    path = write(tmp_path / "questions.csv", content)
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.message == (
        "questions.csv is empty. Add a header row with columns: Question Number, Question, "
        "then one row per question"
    )


def test_a_header_only_file(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n\n")
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.message == (
        "questions.csv has a header row but no data rows. Add one row per question with "
        "columns: Question Number, Question"
    )


def test_a_missing_column_lists_the_columns_found(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "Number,Text\n1,What?\n")
    with pytest.raises(MissingColumnError) as caught:
        load_questions(path)
    assert caught.value.message == (
        "questions.csv has no 'Question' column (columns found: 'Number', 'Text'). "
        "Rename the column that holds it to 'Question', or add such a column"
    )


def test_garbage_headers_are_shortened_in_the_message(tmp_path: Path) -> None:
    headers = ",".join(f"col{index}-" + "x" * 80 for index in range(30))
    path = write(tmp_path / "questions.csv", f"{headers}\n1\n")
    with pytest.raises(MissingColumnError) as caught:
        load_questions(path)
    assert len(caught.value.message) < 1000
    assert "… 18 more" in caught.value.message


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("", "is blank"),
        ("abc", "'abc' is not a whole number"),
        ("1.5", "'1.5' is not a whole number"),
        ("-3", "'-3' is not a whole number"),
        ("9" * 30, f"'{'9' * 30}' is too large for a question number"),
    ],
)
def test_bad_question_numbers_name_the_line(tmp_path: Path, cell: str, reason: str) -> None:
    path = write(tmp_path / "questions.csv", f"Question Number,Question\n1,Fine?\n{cell},Bad?\n")
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.message.startswith(f"questions.csv line 3: 'Question Number' {reason}")
    assert caught.value.message.endswith(
        "Give every row a whole question number such as 1, 2, 3 (or Q1, Q2, Q3); ids of other "
        "forms (hashes, names) are kept by a --dataset file"
    )


@pytest.mark.parametrize(
    ("cell", "number"), [("7", 7), (" 7 ", 7), ("7.0", 7), ("+7", 7), ("０７", 7)]
)
def test_question_numbers_that_parse(cell: str, number: int) -> None:
    assert parse_question_number(cell) == number


@given(
    number=st.integers(min_value=0, max_value=999_999_999),
    prefix=st.sampled_from(["Q", "q_", "Question ", "QID-", "question_no. ", "id:", "#"]),
    zeros=st.integers(min_value=0, max_value=3),
)
def test_id_like_cells_name_their_number(number: int, prefix: str, zeros: int) -> None:
    assert parse_question_label(f"{prefix}{'0' * zeros}{number}") == number


@pytest.mark.parametrize("cell", ["", "abc", "Q", "Q1a", "-3", "+Q3", "1.5", "x7", "9" * 30])
def test_cells_that_name_no_question(cell: str) -> None:
    with pytest.raises(QuestionNumberError):
        parse_question_label(cell)


def test_duplicate_numbers_keep_the_first_row_with_a_warning(
    tmp_path: Path, warnings_logged: list[str]
) -> None:
    path = write(tmp_path / "questions.csv", "Question Number,Question\n1,First\n2,B\n1,Second\n")
    loaded = load_questions(path)
    assert loaded.rows[1].question == "First"
    assert loaded.duplicate_numbers == [1]
    assert warnings_logged == [
        "questions.csv repeats question number 1; the first row of each was kept. "
        "Give every row its own number"
    ]


@pytest.mark.parametrize(
    "signature", [b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"], ids=["xlsx", "xls"]
)
def test_a_spreadsheet_workbook_is_named_as_such(
    tmp_path: Path, signature: bytes, warnings_logged: list[str]
) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(signature + b"\x14\x00\x06\x00xl/workbook.xml" + bytes(range(256)))
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.message == (
        "questions.csv is a spreadsheet workbook (Excel or similar), not CSV text. Save it as "
        "CSV (in Excel: File > Save As > CSV UTF-8) and pass that file"
    )
    # Not read as latin-1 garbage first.
    assert warnings_logged == []


ANSWERS_JSON_MESSAGE = (
    " is JSON, not CSV. Turn RAG output JSON into rag_answers.csv with `rag-eval convert` (it "
    "reads the *.json and *.jsonl files in RAG_JSON_Files, or in the folder given with "
    "--json-dir, and matches their answers to questions.csv), then pass that CSV"
)
RAG_RECORDS = [
    {"question": "What is X?", "answer": "X, with a comma", "contexts": ["a, b"]},
    {"question": "What is Y?", "answer": "Y"},
]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.jsonl", "".join(json.dumps(record) + "\n" for record in RAG_RECORDS)),
        ("run.json", json.dumps(RAG_RECORDS, indent=2)),
        ("run.ndjson", json.dumps(RAG_RECORDS[0])),
        # Judged by content, not only by name.
        ("rag_answers.csv", "".join(json.dumps(record) + "\n" for record in RAG_RECORDS)),
        ("rag_answers.csv", json.dumps({"results": RAG_RECORDS}, indent=4)),
    ],
)
def test_a_json_answers_file_says_to_run_convert(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(InputError) as caught:
        load_answers(path)
    # Not "columns found: '{"question": "What is X?"', ..."
    assert caught.value.message == name + ANSWERS_JSON_MESSAGE
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("loader", "columns"),
    [
        (load_questions, "Question Number, Question"),
        (load_ground_truth, "Question Number, Ground Truth"),
    ],
)
def test_json_questions_or_ground_truth_are_named_as_json(
    tmp_path: Path, loader, columns: str
) -> None:
    path = write(
        tmp_path / "golden.json",
        json.dumps([{"question_number": 1, "question": "What?", "ground_truth": "That."}]),
    )
    with pytest.raises(InputError) as caught:
        loader(path)
    assert (
        caught.value.message
        == f"golden.json is JSON, not CSV. Save it as CSV with columns: {columns}"
    )


def test_json_given_to_evaluate_stops_with_the_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_inputs(tmp_path)
    write(tmp_path / "some.jsonl", "".join(json.dumps(record) + "\n" for record in RAG_RECORDS))
    result = run_cli(["evaluate", "--answers", "some.jsonl", "--metrics", "lexical", "--yes"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: some.jsonl" + ANSWERS_JSON_MESSAGE
    assert "columns found" not in result.output


def test_a_csv_with_bracketed_headers_is_still_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "questions.csv", "[Question Number],[Question]\n1,What?\n")
    assert load_questions(path).rows[1].question == "What?"


json_documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
).filter(lambda value: isinstance(value, list | dict))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(json_documents, st.sampled_from([None, 2]), st.sampled_from(["x.csv", "x.txt", "x.json"]))
def test_any_json_document_is_named_as_json_whatever_its_file_name(
    tmp_path: Path, value: object, indent: int | None, name: str
) -> None:
    path = write(tmp_path / name, json.dumps(value, indent=indent))
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.message.startswith(f"{name} is JSON, not CSV.")


def test_a_directory_instead_of_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "questions.csv"
    folder.mkdir()
    with pytest.raises(InputError, match="is a directory, not a CSV file"):
        load_questions(folder)


# Writing -----------------------------------------------------------------------------


def test_write_csv_atomic_round_trips_awkward_text(tmp_path: Path) -> None:
    path = tmp_path / "out" / "rag_answers.csv"
    rows = [
        ["Question Number", "RAG Answer", "Contexts"],
        [1, 'He said "hi",\nthen left;\r\nok', '["a, b"]'],
        [2, "ünïcödé ✓", "[]"],
        # A lone carriage return must be quoted, or a reader ends the row there.
        [3, "before\rafter", "[]"],
    ]
    write_csv_atomic(path, rows)
    read_back = list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))
    assert read_back == [[str(cell) for cell in row] for row in rows]
    assert [child.name for child in path.parent.iterdir()] == ["rag_answers.csv"]
    assert not path.read_bytes().startswith(codecs.BOM_UTF8)


# Properties --------------------------------------------------------------------------

_loaders = st.sampled_from([load_questions, load_ground_truth, load_answers])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300), loader=_loaders)
def test_any_bytes_either_load_or_raise_the_tools_error(
    tmp_path: Path, data: bytes, loader
) -> None:
    path = tmp_path / "input.csv"
    path.write_bytes(data)
    try:
        loaded = loader(path)
    except RagEvalError as exc:
        assert exc.message
    else:
        assert loaded.rows


_csv_tokens = st.sampled_from(
    [*'ab1 ,;\t"\n\r\x00é#.', "Question Number", "Question", "Ground Truth", "RAG Answer"]
)
_csv_ish = st.lists(_csv_tokens, max_size=60).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_csv_ish, loader=_loaders)
def test_any_csv_like_text_either_loads_or_raises_the_tools_error(
    tmp_path: Path, text: str, loader
) -> None:
    path = tmp_path / "input.csv"
    path.write_text(text, encoding="utf-8")
    try:
        loader(path)
    except RagEvalError as exc:
        assert exc.message


_cell_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(answers=st.lists(_cell_text, min_size=1, max_size=5))
def test_answers_written_by_write_csv_atomic_load_back_unchanged(
    tmp_path: Path, answers: list[str]
) -> None:
    path = tmp_path / "rag_answers.csv"
    write_csv_atomic(
        path, [["Question Number", "RAG Answer"], *([n, a] for n, a in enumerate(answers, 1))]
    )
    loaded = load_answers(path)
    assert [loaded.rows[n].rag_answer for n in sorted(loaded.rows)] == answers


line_text = st.text(
    st.sampled_from(["a", ",", '"', " ", "\r", "\n", "\x0c", "\u2028", "\x85", "é"])
)


@settings(max_examples=500, deadline=None)
@given(line_text)
def test_physical_lines_split_where_the_csv_module_expects(text: str) -> None:
    # Universal newlines with newline="" is what csv.reader is documented to be given.
    assert list(physical_lines(text)) == list(io.StringIO(text, newline=""))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-6, 3), line_text.filter(bool)), min_size=1, max_size=3))
def test_physical_lines_are_the_same_across_the_pieces_of_a_large_text(
    breaks: list[tuple[int, str]],
) -> None:
    # Each bit of line text sits where a piece of the text ends (a piece is cut after the
    # first "\n" past its length), so "\r\n" pairs, lone "\r", form feeds and U+2028 fall
    # on both sides of a cut.
    parts, length = [], 0
    for offset, bit in breaks:
        filler = max(
            0, length // _PIECE_CHARACTERS * _PIECE_CHARACTERS + _PIECE_CHARACTERS + offset - length
        )
        parts += ["x" * filler, bit]
        length += filler + len(bit)
    text = "".join(parts)
    assert list(physical_lines(text)) == list(io.StringIO(text, newline=""))


def test_a_file_with_only_carriage_returns_reads_row_by_row(tmp_path: Path) -> None:
    path = tmp_path / "questions.csv"
    path.write_bytes(b"Question Number,Question\r1,First?\r\r2,Second?\r")
    assert [record.line_number for record in read_csv(path, required=["Question"]).records] == [
        2,
        4,
    ]
