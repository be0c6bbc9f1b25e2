"""The cells and headers of the three CSVs as users' tools write them: numpy-style list cells
(pandas' ``to_csv`` of columns from HF Datasets/Arrow), context objects and ``null`` items
in list cells, a list in the Ground Truth cell or a Reference Answers column alone, and
headers spelling one column twice."""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
from pathlib import Path

import numpy as np
import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.errors import MissingColumnError
from rag_evaluator.inputs.fields import (
    QUESTION,
    QUESTION_NUMBER,
    RAG_ANSWER,
    parse_list_literal,
    parse_score_list,
    resolve_columns,
)
from rag_evaluator.inputs.list_cells import read_list_cell
from rag_evaluator.inputs.load import load_answers, load_dataset, load_ground_truth

# Spooled or held in memory: both read the cells alike.
SPOOLS = pytest.mark.parametrize("spool_mb", ["64", "0"], ids=["in memory", "spooled"])

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00")
    | st.sampled_from(["'", '"', "[", "]", ",", " ", "\n", "\\"]),
    min_size=1,
    max_size=30,
).filter(lambda text: text.strip() != "")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return prepare_workspace(tmp_path, monkeypatch)


def csv_text(header: list[str], rows: list[list[object]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    path.write_text(csv_text(header, rows), encoding="utf-8")


def numpy_cell(items: list[str], width: int = 75) -> str:
    """A list column as pandas ``to_csv`` writes it when it came from Arrow: ``str()`` of a
    numpy object array (items apart by blanks or line breaks, no commas)."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    with np.printoptions(linewidth=width, threshold=1_000_000):
        return str(array)


QUESTIONS = {
    1: "What is the capital of France?",
    2: "Who wrote Hamlet?",
    3: "How many legs does a spider have?",
}


def write_questions(folder: Path) -> None:
    write(folder / "questions.csv", ["Question Number", "Question"], list(QUESTIONS.items()))


def evaluate(*arguments: str, spool_mb: str = "64") -> tuple[str, dict[int, dict[str, str]]]:
    """Run an offline evaluate in the current folder: its stderr and its rows by number."""
    result = run_cli(
        ["evaluate", "--yes", "--seed", "1", *arguments], env={"RAG_EVAL_SPOOL_MB": spool_mb}
    )
    assert result.exit_code == 0, result.output
    results = only_results(Path.cwd())
    return result.stderr, {int(row["Question Number"]): row for row in results.rows}


# -- 1: numpy-style list cells ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(items=st.lists(st.text(), max_size=6), width=st.integers(10, 200))
def test_any_list_of_strings_rendered_the_numpy_way_parses_back_to_that_list(
    items: list[str], width: int
) -> None:
    assert parse_list_literal(numpy_cell(items, width)) == items


@given(text=st.text(max_size=40))
def test_one_string_of_any_text_stays_one_item(text: str) -> None:
    # Spaces, quotes of either kind, brackets: Python's and JSON's spelling of a list of one
    # string still read as that one string.
    assert parse_list_literal(repr([text])) == [text]
    assert parse_list_literal(json.dumps([text])) == [text]
    assert parse_list_literal(numpy_cell([text])) == [text]


@pytest.mark.parametrize(
    "cell",
    [
        "'Berlin is in Germany.' 'Paris is the capital.'",  # no brackets: no list
        "[1] 'the handbook' 'page 4'",
        "['a' ... 'z']",  # numpy's summary of a long array: the items are not all there
        "['a' 'b'] and more",
        "['unclosed' 'b]",
    ],
)
def test_text_that_only_looks_like_a_numpy_array_is_no_list(cell: str) -> None:
    assert parse_list_literal(cell) is None


@SPOOLS
def test_numpy_style_cells_of_the_three_csvs_are_lists(workspace: Workspace, spool_mb: str) -> None:
    folder = workspace.directory
    write_questions(folder)
    gold = ["Paris is the capital of France.", "Hamlet was written by Shakespeare."]
    write(
        folder / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [
            [1, "Paris", numpy_cell(gold[:1]), numpy_cell(["Paris", "capital"])],
            [2, "Shakespeare", numpy_cell(gold[1:]), ""],
        ],
    )
    write(
        folder / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [
            [1, "Paris is the capital.", numpy_cell(["Berlin is in Germany.", gold[0]])],
            # Wrapped over two lines, as numpy does past 75 characters.
            [2, "Shakespeare", numpy_cell([gold[1], "Macbeth is a play by the same author."])],
        ],
    )
    assert "\n" in numpy_cell([gold[1], "Macbeth is a play by the same author."])
    _, rows = evaluate("--metrics", "retrieval,lexical", spool_mb=spool_mb)
    assert rows[1]["recall_at_k"] == "1.0000"
    assert rows[1]["mrr"] == "0.5000"  # the golden chunk is the second of two
    assert rows[2]["mrr"] == "1.0000"
    assert rows[1]["fact_score"] == "1.0000"  # two facts, both in the answer


def test_a_numpy_style_csv_dataset_reads_its_lists(workspace: Workspace) -> None:
    # Old ragas: result.to_pandas().to_csv() of a dataset from HF Datasets.
    write(
        workspace.directory / "ds.csv",
        ["question", "response", "ground_truths", "retrieved_contexts", "reference_contexts"],
        [
            [
                QUESTIONS[1],
                "Paris",
                numpy_cell(["Paris", "Paris, France"]),
                numpy_cell(["Berlin is in Germany.", "Paris is the capital of France."]),
                numpy_cell(["Paris is the capital of France."]),
            ]
        ],
    )
    inputs = load_dataset(workspace.directory / "ds.csv")
    answers = inputs.answers.rows[1]
    assert answers.contexts == ["Berlin is in Germany.", "Paris is the capital of France."]
    truth = inputs.ground_truth.rows[1]
    assert truth.reference_answers == ("Paris", "Paris, France")
    _, rows = evaluate("--dataset", "ds.csv", "--metrics", "retrieval")
    assert rows[1]["mrr"] == "0.5000"


# -- 2: objects and nulls in list cells ---------------------------------------------------------


@SPOOLS
def test_context_objects_nulls_and_json_strings_in_rag_answers_csv(
    workspace: Workspace, spool_mb: str
) -> None:
    folder = workspace.directory
    write_questions(folder)
    write(
        folder / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts"],
        [
            [1, "Paris", json.dumps(["Paris is the capital of France."])],
            [2, "Shakespeare", json.dumps(["Hamlet was written by William Shakespeare."])],
            [3, "Eight", json.dumps(["Spiders have eight legs."])],
        ],
    )
    objects = [
        {"text": "Paris is the capital of France.", "score": 0.9},
        {"text": "Berlin.", "score": 0.2},
    ]
    write(
        folder / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [
            [1, "Paris", json.dumps(objects), ""],
            [2, "Shakespeare", json.dumps("Hamlet was written by William Shakespeare."), ""],
            [3, "Eight", json.dumps([None, "Spiders have eight legs."]), "[0.1, 0.95]"],
        ],
    )
    stderr, rows = evaluate("--metrics", "retrieval,quality", spool_mb=spool_mb)
    assert {rows[n]["mrr"] for n in rows} == {"1.0000"}
    assert {rows[n]["recall_at_k"] for n in rows} == {"1.0000"}
    # The objects' scores are the retrieval scores; the null's score went with it.
    assert rows[1]["quality_retrieval_score"] != ""
    assert rows[3]["quality_retrieval_score"] == "1"
    assert rows[2]["quality_retrieval_score"] == ""
    assert "1 item of the 'Contexts' cells had no text" in " ".join(stderr.split())


def test_page_content_objects_read_their_text(tmp_path: Path) -> None:
    path = tmp_path / "rag_answers.csv"
    cell = json.dumps([{"page_content": "Spiders have eight legs.", "metadata": {"x": 1}}])
    write(path, ["Question Number", "RAG Answer", "Contexts"], [[1, "Eight", cell]])
    row = load_answers(path).rows[1]
    assert row.contexts == ["Spiders have eight legs."]
    assert row.retrieval_scores is None


def test_the_retrieval_scores_column_wins_over_the_objects_scores(tmp_path: Path) -> None:
    path = tmp_path / "rag_answers.csv"
    cell = json.dumps([{"text": "a", "score": 0.9}, {"text": "b", "score": 0.2}])
    write(
        path,
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [[1, "A", cell, "[0.4, 0.3]"]],
    )
    assert load_answers(path).rows[1].retrieval_scores == (0.4, 0.3)


def test_objects_with_some_scores_missing_are_an_error_as_in_a_dataset(tmp_path: Path) -> None:
    path = tmp_path / "rag_answers.csv"
    cell = json.dumps([{"text": "a", "score": 0.9}, {"text": "b"}])
    write(path, ["Question Number", "RAG Answer", "Contexts"], [[1, "A", cell]])
    with pytest.raises(Exception, match=r"rag_answers.csv line 2: 'Contexts' .*retrieval score"):
        load_answers(path)


def test_an_item_without_text_in_golden_contexts_is_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ground_truth.csv"
    write(
        path,
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [[1, "R", '[null, {"content": "gold"}, ""]', '[{"text": "fact"}, null]']],
    )
    with caplog.at_level(logging.WARNING):
        row = load_ground_truth(path).rows[1]
    assert row.relevant_contexts == ["gold"]
    assert row.required_facts == ["fact"]
    warnings = [record.getMessage() for record in caplog.records]
    assert any("'Relevant Contexts'" in warning for warning in warnings)
    assert any("'Required Facts'" in warning for warning in warnings)


CONTEXT_ITEM = st.one_of(
    TEXT,
    st.builds(lambda text: {"text": text}, TEXT),
    st.builds(lambda text: {"page_content": text, "metadata": {"source": "a.pdf"}}, TEXT),
    st.builds(lambda text: {"node": {"content": text}}, TEXT),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(CONTEXT_ITEM, max_size=4), scores=st.booleans())
def test_a_contexts_cell_reads_as_the_same_field_of_a_dataset(
    items: list[object], scores: bool
) -> None:
    if scores:
        items = [
            {**item, "score": index / 10} if isinstance(item, dict) else {"text": item, "score": 0}
            for index, item in enumerate(items)
        ]
    record = {"question": "Q?", "reference": "R", "answer": "A", "contexts": items}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "d.json").write_text(json.dumps([record]), encoding="utf-8")
        expected = load_dataset(folder / "d.json").answers.rows[1]
        write(
            folder / "rag_answers.csv",
            ["Question Number", "RAG Answer", "Contexts"],
            [[1, "A", json.dumps(items)]],
        )
        found = load_answers(folder / "rag_answers.csv").rows[1]
    assert (found.contexts, found.retrieval_scores) == (
        expected.contexts,
        expected.retrieval_scores,
    )


@given(items=st.lists(st.one_of(st.none(), TEXT, st.just("  ")), max_size=5))
def test_null_and_blank_items_are_left_out_and_only_nulls_counted(
    items: list[str | None],
) -> None:
    read = read_list_cell(json.dumps(items))
    texts = [item for item in items if item is not None and item.strip()]
    nulls = sum(item is None for item in items)
    assert read.dropped == nulls
    # Only nulls: nothing with text, so nothing is known (as a blank cell).
    assert read.texts == (None if nulls and nulls == len(items) else texts)


# -- 3: a list in the Ground Truth cell; a Reference Answers column alone ------------------------


@SPOOLS
def test_a_ground_truth_cell_listing_answers_reads_as_the_dataset_reads_it(
    workspace: Workspace, spool_mb: str
) -> None:
    folder = workspace.directory
    write_listed_references(folder, "Ground Truth")
    _, rows = evaluate("--metrics", "lexical", spool_mb=spool_mb)
    assert {rows[n]["exact_match"] for n in rows} == {"1"}
    truth = load_ground_truth(folder / "ground_truth.csv").rows
    assert (truth[1].ground_truth, truth[1].reference_answers) == (
        "Paris\nParis, France",
        ("Paris", "Paris, France"),
    )
    assert (truth[2].ground_truth, truth[2].reference_answers) == ("William Shakespeare", None)


def write_listed_references(folder: Path, header: str) -> None:
    """Three questions whose reference cells (under ``header``) list their answers as pandas
    and JSON write lists, and answers matching one of them each."""
    write_questions(folder)
    write(
        folder / "ground_truth.csv",
        ["Question Number", header],
        [[1, "['Paris', 'Paris, France']"], [2, '["William Shakespeare"]'], [3, "['8']"]],
    )
    write(
        folder / "rag_answers.csv",
        ["Question Number", "RAG Answer"],
        [[1, "Paris, France"], [2, "William Shakespeare"], [3, "8"]],
    )


@given(answers=st.lists(TEXT, min_size=1, max_size=4), python=st.booleans())
def test_a_ground_truth_cell_and_a_csv_dataset_reference_read_alike(
    answers: list[str], python: bool
) -> None:
    cell = repr(answers) if python else json.dumps(answers)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write(folder / "ground_truth.csv", ["Question Number", "Ground Truth"], [[1, cell]])
        found = load_ground_truth(folder / "ground_truth.csv").rows[1]
        write(folder / "d.csv", ["question", "answer", "reference"], [["Q?", "A", cell]])
        expected = load_dataset(folder / "d.csv").ground_truth.rows[1]
    assert (found.ground_truth, found.reference_answers) == (
        expected.ground_truth,
        expected.reference_answers,
    )


@pytest.mark.parametrize("header", ["ground_truths", "gold_answers", "Reference Answers"])
@SPOOLS
def test_a_reference_answers_column_alone_gives_the_ground_truth(
    workspace: Workspace, header: str, spool_mb: str
) -> None:
    folder = workspace.directory
    write_listed_references(folder, header)
    _, rows = evaluate("--metrics", "lexical", spool_mb=spool_mb)
    assert {rows[n]["exact_match"] for n in rows} == {"1"}
    assert rows[1]["Ground Truth"] == "Paris\nParis, France"


def test_a_ground_truth_file_with_no_reference_column_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "ground_truth.csv"
    write(path, ["Question Number", "Notes"], [[1, "x"]])
    with pytest.raises(MissingColumnError, match="no 'Ground Truth' column"):
        load_ground_truth(path)


# -- 4: headers spelling one column twice -------------------------------------------------------


@SPOOLS
def test_the_exact_spelling_wins_over_case_and_spacing_variants(
    workspace: Workspace, spool_mb: str
) -> None:
    folder = workspace.directory
    write(
        folder / "questions.csv",
        ["Question Number", "QUESTION", "Question"],
        [[1, "", QUESTIONS[1]], [2, "", QUESTIONS[2]]],
    )
    write(
        folder / "ground_truth.csv",
        ["Question Number", "Ground Truth"],
        [[1, "Paris"], [2, "Shakespeare"]],
    )
    write(
        folder / "rag_answers.csv",
        ["Question Number", "RAG answer", "RAG Answer"],
        [[1, "Lyon", "Paris"], [2, "Marlowe", "Shakespeare"]],
    )
    stderr, rows = evaluate("--metrics", "lexical", spool_mb=spool_mb)
    assert {rows[n]["exact_match"] for n in rows} == {"1"}
    assert rows[1]["Question"] == QUESTIONS[1]
    said = " ".join(stderr.split())
    assert (
        "questions.csv: the columns 'Question' and 'QUESTION' both name 'Question': 'Question' "
        "is read, 'QUESTION' is carried as a metadata column" in said
    )
    assert (
        "rag_answers.csv: the columns 'RAG Answer' and 'RAG answer' both name 'RAG Answer': "
        "'RAG Answer' is read, 'RAG answer' is not read" in said
    )


def test_a_losing_alias_is_warned_about_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rag_answers.csv"
    write(path, ["Question Number", "response", "RAG Answer"], [[1, "old", "new"]])
    with caplog.at_level(logging.WARNING):
        assert load_answers(path).rows[1].rag_answer == "new"
    assert any("'response'" in record.getMessage() for record in caplog.records)


def _variants(name: str) -> st.SearchStrategy[str]:
    """Spellings of ``name`` differing in case and spacing, never ``name`` itself."""

    def spelled(upper: list[bool], gap: str) -> str:
        cased = "".join(
            char.upper() if up else char.lower() for char, up in zip(name, upper, strict=True)
        )
        return cased.replace(" ", gap)

    flags = st.lists(st.booleans(), min_size=len(name), max_size=len(name))
    gaps = st.sampled_from([" ", "", "_", "  "])
    return st.builds(spelled, flags, gaps).filter(lambda spelling: spelling != name)


@given(data=st.data(), canonical=st.sampled_from([QUESTION_NUMBER, QUESTION, RAG_ANSWER]))
def test_the_exact_spelling_is_read_wherever_it_stands(data: st.DataObject, canonical: str) -> None:
    variants = data.draw(st.lists(_variants(canonical), min_size=1, max_size=3))
    headers = data.draw(st.permutations([*variants, canonical]))
    resolved = resolve_columns(headers, [canonical])
    assert headers[resolved[canonical]] == canonical


def test_two_columns_of_one_name_are_named_once_in_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ground_truth.csv"
    write(path, ["Question Number", "Ground Truth", "Ground Truth"], [[1, "first", "second"]])
    with caplog.at_level(logging.WARNING):
        assert load_ground_truth(path).rows[1].ground_truth == "first"
    assert [record.getMessage() for record in caplog.records] == [
        "ground_truth.csv has two 'Ground Truth' columns: the first is read, the other is not "
        "read. Rename or remove the one you do not mean"
    ]


# -- numpy-style score lists ---------------------------------------------------------------------


@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=12),
    st.integers(min_value=20, max_value=120),
)
def test_a_numpy_array_of_scores_reads_as_its_numbers(scores: list[float], width: int) -> None:
    # pandas writes a score list that came from Arrow as str() of a float array.
    with np.printoptions(linewidth=width, threshold=1_000_000):
        cell = str(np.array(scores, dtype=float))
    parsed = parse_score_list(cell)
    assert parsed is not None and len(parsed) == len(scores)
    assert np.allclose(parsed, scores, rtol=1e-7, atol=1e-7)


def test_numpy_style_contexts_and_scores_of_rag_answers_csv_pair_up(tmp_path: Path) -> None:
    write(
        tmp_path / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts", "Retrieval Scores"],
        [[1, "Paris", numpy_cell(["Paris is the capital.", "Lyon is a city."]), "[0.91 0.42]"]],
    )
    row = load_answers(tmp_path / "rag_answers.csv").rows[1]
    assert row.contexts == ["Paris is the capital.", "Lyon is a city."]
    assert row.retrieval_scores == (0.91, 0.42)
