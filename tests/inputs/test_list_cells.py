"""List cells read alike on every path (issue 22, item 2): contexts given as the text of a
JSON array or of a Python list (what pandas writes), in a JSON or JSON Lines dataset, a CSV
dataset, rag_answers.csv and the RAG outputs convert reads; deepeval's ``|``-joined CSV
cells; and a warning naming the column when another CSV cell looks ``|``-joined."""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.run import convert
from rag_evaluator.inputs.fields import parse_list_literal
from rag_evaluator.inputs.list_cells import read_list_cell
from rag_evaluator.inputs.load import load_answers, load_dataset, load_ground_truth

# Context texts: no NUL, surrogates or control characters; never blank.
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00")
    | st.sampled_from(["'", '"', "[", "]", ",", "|", "\\"]),
    min_size=1,
    max_size=25,
).filter(lambda text: text.strip() != "")


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def python_list(items: list[str]) -> str:
    """A list as pandas writes a list column to CSV: Python's repr."""
    return repr(items)


def contexts_on_every_path(
    folder: Path, cell: str, *, csv_dataset: bool = True
) -> dict[str, list[str] | None]:
    """The contexts each reader finds when the contexts field holds the string ``cell``."""
    found: dict[str, list[str] | None] = {}
    record = {"question": "Q?", "reference": "R", "answer": "A", "contexts": cell}
    (folder / "d.json").write_text(json.dumps([record]), encoding="utf-8")
    found["json"] = load_dataset(folder / "d.json").answers.rows[1].contexts
    (folder / "d.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    found["jsonl"] = load_dataset(folder / "d.jsonl").answers.rows[1].contexts
    if csv_dataset:
        header = ["question", "reference", "answer", "contexts"]
        (folder / "d.csv").write_text(csv_text(header, [["Q?", "R", "A", cell]]), encoding="utf-8")
        found["csv dataset"] = load_dataset(folder / "d.csv").answers.rows[1].contexts
    (folder / "rag_answers.csv").write_text(
        csv_text(["Question Number", "RAG Answer", "Contexts"], [["1", "A", cell]]),
        encoding="utf-8",
    )
    found["rag_answers.csv"] = load_answers(folder / "rag_answers.csv").rows[1].contexts
    outputs = folder / "outputs"
    outputs.mkdir(exist_ok=True)
    (outputs / "run.json").write_text(json.dumps([record]), encoding="utf-8")
    (folder / "questions.csv").write_text("Question Number,Question\n1,Q?\n", encoding="utf-8")
    convert(outputs, folder / "questions.csv", folder / "converted.csv")
    found["convert"] = load_answers(folder / "converted.csv").rows[1].contexts
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(TEXT, min_size=1, max_size=4), python=st.booleans())
def test_an_array_written_as_text_is_a_list_of_contexts_on_every_path(
    items: list[str], python: bool
) -> None:
    cell = python_list(items) if python else json.dumps(items, ensure_ascii=False)
    with tempfile.TemporaryDirectory() as folder:
        found = contexts_on_every_path(Path(folder), cell)
    assert found == dict.fromkeys(found, items)


def test_pandas_to_json_of_a_csv_column_gives_two_contexts_not_one(tmp_path: Path) -> None:
    found = contexts_on_every_path(tmp_path, '["first chunk", "second chunk"]')
    assert set(map(tuple, found.values())) == {("first chunk", "second chunk")}


def test_text_that_is_no_list_stays_one_context(tmp_path: Path) -> None:
    # (A CSV dataset is strict: a cell starting with "[" must be a list there.)
    found = contexts_on_every_path(tmp_path, "[1] the handbook, page 4", csv_dataset=False)
    assert found == {
        "json": ["[1] the handbook, page 4"],
        "jsonl": ["[1] the handbook, page 4"],
        "rag_answers.csv": ["[1] the handbook, page 4"],
        "convert": ["[1] the handbook, page 4"],
    }


@given(st.text(max_size=40))
def test_parse_list_literal_gives_a_list_or_none_and_never_raises(text: str) -> None:
    value = parse_list_literal(text)
    assert value is None or isinstance(value, list)


@given(st.lists(TEXT, max_size=5))
def test_a_list_cell_reads_json_and_python_lists_alike(items: list[str]) -> None:
    assert read_list_cell(json.dumps(items)).texts == items
    assert read_list_cell(repr(items)).texts == items


DEEPEVAL_CSV = csv_text(
    ["input", "actual_output", "expected_output", "retrieval_context", "context", "source_file"],
    [
        ["What is the capital of France?", "Paris", "Paris", "World capitals list", "Geo|Caps", ""],
        ["Define photosynthesis", "Light to energy", "Light to energy", "Bio|API", "Bio|Ph", ""],
    ],
)


def test_deepeval_csv_cells_joined_by_a_bar_are_split_as_deepeval_reads_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "goldens.csv"
    path.write_text(DEEPEVAL_CSV, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        inputs = load_dataset(path)
    assert inputs.answers.rows[1].contexts == ["World capitals list"]
    assert inputs.answers.rows[2].contexts == ["Bio", "API"]
    # deepeval's "context" is the golden one when retrieval_context is there.
    assert inputs.ground_truth.rows[2].relevant_contexts == ["Bio", "Ph"]
    assert not [record for record in caplog.records if "|" in record.getMessage()]


def test_a_bar_joined_cell_of_another_csv_is_one_context_with_a_warning_naming_the_column(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dataset = tmp_path / "d.csv"
    dataset.write_text(
        csv_text(
            ["question", "reference", "answer", "retrieved_contexts"],
            [["Q1?", "R", "A", "alpha|beta"], ["Q2?", "R", "A", "gamma|delta"]],
        ),
        encoding="utf-8",
    )
    answers = tmp_path / "rag_answers.csv"
    answers.write_text(
        csv_text(["Question Number", "RAG Answer", "Contexts"], [["1", "A", "alpha|beta"]]),
        encoding="utf-8",
    )
    truth = tmp_path / "ground_truth.csv"
    truth.write_text(
        csv_text(
            ["Question Number", "Ground Truth", "Relevant Contexts"],
            [["1", "R", "gold|silver"], ["2", "R", "| a | b |\n|---|---|"]],
        ),
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING):
        assert load_dataset(dataset).answers.rows[2].contexts == ["gamma|delta"]
        assert load_answers(answers).rows[1].contexts == ["alpha|beta"]
        rows = load_ground_truth(truth).rows
    # A Markdown table is not a joined list: no warning of its own.
    assert rows[2].relevant_contexts == ["| a | b |\n|---|---|"]
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 3, warnings
    assert "'retrieved_contexts'" in warnings[0] and "2 rows" in warnings[0]
    assert "'Contexts'" in warnings[1] and "1 row " in warnings[1]
    assert "'Relevant Contexts'" in warnings[2] and "1 row " in warnings[2]
    for warning in warnings:
        assert 'JSON array such as ["first", "second"]' in warning
