"""``--dataset``: one file in every shape and with every alias set, read into the rows the
three CSVs give (the loader, its errors, and ``convert --dataset``)."""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from evaluate_support import read_results, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.dataset import DatasetOutputs, convert_dataset
from rag_evaluator.errors import InputError
from rag_evaluator.inputs.fields import RETRIEVAL_SCORES
from rag_evaluator.inputs.load import InputSet, load_dataset, load_input_files
from rag_evaluator.inputs.selection import exclusion_warnings, select_items


@dataclass(frozen=True)
class Case:
    """One question of a generated dataset, as the loader should read it."""

    question: str
    reference: str
    answer: str
    contexts: list[str] | None
    scores: list[float] | None
    golden: list[str] | None
    category: str


# The field names of each tool: id, question, answer, reference, contexts, golden contexts.
ALIAS_SETS: dict[str, dict[str, str | None]] = {
    "ragas": {
        "id": None,
        "question": "user_input",
        "answer": "response",
        "reference": "reference",
        "contexts": "retrieved_contexts",
        "golden": "reference_contexts",
        "scores": "retrieval_scores",
    },
    "deepeval": {
        "id": None,
        "question": "input",
        "answer": "actual_output",
        "reference": "expected_output",
        "contexts": "retrieval_context",
        # deepeval's "context" is the golden one when retrieval_context is there.
        "golden": "context",
        "scores": "scores",
    },
    "seed002": {
        "id": "id",
        "question": "question",
        "answer": "answer",
        "reference": "reference_answer",
        "contexts": "contexts",
        "golden": "relevant_contexts",
        "scores": "similarity_scores",
    },
    "ragchecker": {
        "id": "query_id",
        "question": "query",
        "answer": "response",
        "reference": "gt_answer",
        "contexts": "retrieved_context",
        "golden": "reference_contexts",
        "scores": None,  # on each context object: {"doc_id", "text", "score"}
    },
    "rag-eval": {
        "id": "Question Number",
        "question": "Question",
        "answer": "RAG Answer",
        "reference": "Ground Truth",
        "contexts": "Contexts",
        "golden": "Relevant Contexts",
        "scores": "Retrieval Scores",
    },
}

# Text without NUL, lone surrogates or carriage returns, never blank (blank means missing).
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00")
    | st.sampled_from(["\n", " ", ",", '"', "[", ";"]),
    min_size=1,
    max_size=30,
).filter(lambda text: text.strip() != "")
SCORE = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False, allow_infinity=False)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    contexts = draw(st.none() | st.lists(TEXT, max_size=4))
    scores = None
    if contexts is not None and draw(st.booleans()):
        scores = draw(st.lists(SCORE, min_size=len(contexts), max_size=len(contexts)))
    return Case(
        question=draw(TEXT),
        reference=draw(TEXT),
        answer=draw(TEXT),
        contexts=contexts,
        scores=scores,
        golden=draw(st.none() | st.lists(TEXT, min_size=1, max_size=3)),
        category=draw(st.sampled_from(["billing", "returns", ""])),
    )


def record(alias: dict[str, str | None], case: Case, number: int, zero_based: bool) -> dict:
    fields: dict[str, Any] = {}
    if alias["id"] is not None:
        fields[alias["id"]] = str(number - 1) if zero_based else number
    fields[str(alias["question"])] = case.question
    fields[str(alias["reference"])] = case.reference
    fields[str(alias["answer"])] = case.answer
    if case.contexts is not None:
        if alias["scores"] is None:
            fields[str(alias["contexts"])] = [
                {"doc_id": f"d{index}", "text": text}
                | ({"score": case.scores[index]} if case.scores is not None else {})
                for index, text in enumerate(case.contexts)
            ]
        else:
            fields[str(alias["contexts"])] = case.contexts
            if case.scores is not None:
                fields[alias["scores"]] = case.scores
    if case.golden is not None:
        fields[str(alias["golden"])] = case.golden
    fields["Category"] = case.category
    return fields


def write_dataset(folder: Path, shape: str, records: list[dict]) -> Path:
    if shape == "json":
        path = folder / "data.json"
        path.write_text(json.dumps(records), encoding="utf-8")
    elif shape.startswith("container:"):
        path = folder / "data.json"
        path.write_text(json.dumps({shape.split(":")[1]: records}), encoding="utf-8")
    elif shape == "jsonl":
        path = folder / "data.jsonl"
        path.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")
    else:
        path = folder / "data.csv"
        headers = list(dict.fromkeys(name for item in records for name in item))
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(headers)
        for item in records:
            writer.writerow(
                [
                    json.dumps(item[name]) if isinstance(item.get(name), list) else item.get(name)
                    for name in headers
                ]
            )
        path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


SHAPES = ["json", "container:results", "container:samples", "jsonl", "csv"]


def check_rows(inputs: InputSet, numbered: dict[int, Case], kept_ids: str = "") -> None:
    """The rows hold the cases; ``kept_ids``: ids counted from 0 are kept in that column."""
    assert set(inputs.questions.rows) == set(numbered)
    for number, case in numbered.items():
        assert inputs.questions.rows[number].question == case.question
        kept = {kept_ids: str(number - 1)} if kept_ids else {}
        assert inputs.questions.rows[number].metadata == {"Category": case.category, **kept}
        truth = inputs.ground_truth.rows[number]
        assert truth.ground_truth == case.reference
        assert truth.relevant_contexts == case.golden
        answer = inputs.answers.rows[number]
        assert answer.rag_answer == case.answer
        assert answer.contexts == case.contexts
    assert sorted(inputs.metadata_columns) == sorted(
        ["Category", *([kept_ids] if kept_ids else [])]
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alias_name=st.sampled_from(sorted(ALIAS_SETS)),
    shape=st.sampled_from(SHAPES),
    drawn=st.lists(cases(), min_size=1, max_size=5),
    ids=st.sampled_from(["order", "shuffled", "zero-based"]),
)
def test_every_alias_set_in_every_shape_gives_the_rows_of_the_three_csvs(
    alias_name: str, shape: str, drawn: list[Case], ids: str
) -> None:
    alias = dict(ALIAS_SETS[alias_name])
    if alias["id"] is None and ids != "order":
        alias["id"] = "question_id"
    if ids == "order":
        alias["id"] = None
    numbers = list(range(1, len(drawn) + 1))
    if ids == "shuffled":
        numbers = [number * 7 for number in reversed(numbers)]
    records = [
        record(alias, case, number, ids == "zero-based")
        for case, number in zip(drawn, numbers, strict=True)
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = write_dataset(Path(folder), shape, records)
        inputs = load_dataset(path)
        numbered = dict(zip(numbers, drawn, strict=True))
        # Ids counted from 0 are kept in their field's column (unless it is Question Number).
        kept_ids = str(alias["id"]) if ids == "zero-based" else ""
        kept_ids = "" if kept_ids == "Question Number" else kept_ids
        check_rows(inputs, numbered, kept_ids)
        assert inputs.dataset is not None
        for row in inputs.dataset.rows:
            case = numbered[int(row.cells["Question Number"])]
            # Scores on context objects: no object, no score to tell.
            unreported = case.scores is None or (alias["scores"] is None and not case.contexts)
            expected = "" if unreported else json.dumps([float(s) for s in case.scores or []])
            assert row.cells[RETRIEVAL_SCORES] == expected
        # The three CSVs convert --dataset writes load into the very same rows.
        outputs = DatasetOutputs(
            Path(folder) / "q.csv", Path(folder) / "gt.csv", Path(folder) / "a.csv"
        )
        convert_dataset(path, outputs)
        check_rows(
            load_input_files(outputs.questions, outputs.ground_truth, outputs.answers),
            numbered,
            kept_ids,
        )
        with outputs.answers.open(encoding="utf-8", newline="") as handle:
            written = {row["Question Number"]: row for row in csv.DictReader(handle)}
        for number, case in numbered.items():
            scores = written[str(number)][RETRIEVAL_SCORES]
            assert (json.loads(scores) if scores else []) == [float(s) for s in case.scores or []]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, **options: Any) -> str:
    with pytest.raises(InputError) as caught:
        load_dataset(path, **options)
    message = caught.value.message
    assert "\n" not in message
    return message


def test_seed_002_example_reads_as_is(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "sample_eval.json",
        json.dumps(
            [
                {
                    "question": "User query",
                    "reference_answer": "Ground truth answer",
                    "answer": "Model-generated answer",
                    "contexts": ["Retrieved context 1", "Retrieved context 2"],
                }
            ]
        ),
    )
    inputs = load_dataset(path)
    assert inputs.questions.rows[1].question == "User query"
    assert inputs.ground_truth.rows[1].ground_truth == "Ground truth answer"
    assert inputs.answers.rows[1].contexts == ["Retrieved context 1", "Retrieved context 2"]


def test_ragas_reference_given_as_a_list_of_strings_is_joined_by_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "fiqa.jsonl",
        json.dumps({"user_input": "Q?", "reference": ["First.", "Second."], "response": "A"}),
    )
    inputs = load_dataset(path)
    truth = inputs.ground_truth.rows[1]
    assert truth.ground_truth == "First.\nSecond."
    # Each is also a reference answer of its own, for the offline metrics; said once a field.
    assert truth.reference_answers == ("First.", "Second.")
    assert inputs.dataset is not None and inputs.dataset.warnings == []
    assert any(
        note.startswith("fiqa.jsonl: the 'reference' field of 1 record lists several reference")
        for note in inputs.dataset.notes
    )


def test_a_csv_reference_cell_spelling_a_list_is_that_list(tmp_path: Path) -> None:
    # pandas writes an old ragas dataset's ground_truths column as Python lists.
    path = write(
        tmp_path,
        "ragas.csv",
        "question,answer,ground_truths,note\n"
        "Capital?,Paris,['Paris'],[x]\n"
        'Planet?,Jupiter,"[""Jupiter"", ""Jove""]",y\n'
        "Code?,A,[1 of 2],z\n",
    )
    truth = load_dataset(path).ground_truth.rows
    assert [truth[n].ground_truth for n in (1, 2, 3)] == ["Paris", "Jupiter\nJove", "[1 of 2]"]
    assert [truth[n].reference_answers for n in (1, 2, 3)] == [None, ("Jupiter", "Jove"), None]


def test_a_reference_list_of_one_answer_is_that_answer_alone(tmp_path: Path) -> None:
    records = [{"user_input": "Q?", "reference": ["Only.", " "], "response": "A"}]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert inputs.ground_truth.rows[1].ground_truth == "Only.\n "
    assert inputs.ground_truth.rows[1].reference_answers is None
    assert inputs.dataset is not None
    assert not any("several reference" in note for note in inputs.dataset.notes)


def test_a_csv_list_cell_written_by_pandas_as_a_python_list_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "ragas.csv",
        'user_input,reference,response,retrieved_contexts\nQ?,R,A,"[""it\'s one"", \'two\']"\n',
    )
    assert load_dataset(path).answers.rows[1].contexts == ["it's one", "two"]


def test_llamaindex_nodes_give_contexts_and_their_scores(tmp_path: Path) -> None:
    nodes = [{"node": {"text": "chunk A"}, "score": 0.9}, {"node": {"text": "B"}, "score": 0.4}]
    path = write(
        tmp_path,
        "d.json",
        json.dumps([{"query": "Q?", "reference": "R", "response": "A", "source_nodes": nodes}]),
    )
    inputs = load_dataset(path)
    assert inputs.answers.rows[1].contexts == ["chunk A", "B"]
    assert inputs.dataset is not None
    assert inputs.dataset.rows[0].cells[RETRIEVAL_SCORES] == "[0.9, 0.4]"


def test_records_missing_a_part_are_left_out_like_the_three_csvs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path,
        "d.jsonl",
        "\n".join(
            json.dumps(item)
            for item in [
                {"question": "Q1", "reference": "R1", "answer": "A1"},
                {"question": "Q2", "reference": "R2"},
                {"question": "Q3", "reference": None, "answer": "A3"},
                {"question": "  ", "reference": "R4", "answer": "A4"},
                {"question": "Q5", "reference": "R5", "answer": ""},
            ]
        ),
    )
    inputs = load_dataset(path)
    selection = select_items(inputs.questions, inputs.ground_truth, inputs.answers)
    # A blank answer is an empty answer, as a blank RAG Answer cell is; only a record
    # without an answer field is not answered.
    assert [item.question_number for item in selection.items] == [1, 5]
    assert selection.items[1].rag_answer == ""
    assert selection.coverage == (1, 3)
    assert exclusion_warnings(selection.exclusions) == [
        "Left out question 2: not in d.jsonl answers",
        "Left out question 3: not in d.jsonl references",
        "Left out question 4: not in d.jsonl questions",
    ]
    scored = select_items(inputs.questions, inputs.ground_truth, inputs.answers, score_missing=True)
    assert [item.question_number for item in scored.items] == [1, 2, 5]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "d.json",
            '[{"question": "Q", "answer": "A", "reference": "R"},',
            "d.json is not valid JSON (line 1, column 53: Expecting value): the file ends before "
            "the JSON is complete",
        ),
        (
            "d.jsonl",
            '{"question": "Q", "answer": "A", "reference": "R"}\n{"question": "Q2",\n',
            "d.jsonl line 2 is not valid JSON (column 19",
        ),
        (
            "d.jsonl",
            '{"question": "Q", "answer": "A", "reference": "R"}\n[1, 2]\n',
            "d.jsonl line 2 is a list, not a record",
        ),
        (
            "d.json",
            '"just text"',
            "d.json has a shape rag-eval does not know as a dataset (the top level is a string)",
        ),
        ("d.json", '{"name": "x", "version": 2}', "(an object with the keys 'name', 'version')"),
        (
            "d.json",
            '[{"question": "Q", "answer": "A", "reference": "R"}, "oops"]',
            "d.json item 2 is a string, not a record",
        ),
        ("d.json", "[]", "d.json holds no records"),
        (
            "d.json",
            '[{"prompt_text": "Q", "answer": "A", "reference": "R"}]',
            "d.json has no question field in any record (fields of item 1: 'prompt_text', "
            "'answer', 'reference'). Name the question field one of: question, query",
        ),
        (
            "d.json",
            '[{"question": "Q", "reference": "R"}]',
            "d.json has no answer field in any record",
        ),
    ],
)
def test_malformed_files_and_unknown_shapes_are_one_line_errors(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    assert expected in error_of(write(tmp_path, name, text))


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"question": "Q", "reference": "R", "answer": {"score": 3}},
            "d.json item 2: the 'answer' field is an object, not answer text. Write the "
            "answer as a string",
        ),
        (
            {"question": ["a", 1], "reference": "R", "answer": "A"},
            "d.json item 2: the 'question' field is a list, not question text",
        ),
        (
            {"question": "Q", "reference": "R", "answer": "A", "contexts": [1, 2]},
            "d.json item 2: item 1 of 'contexts' is a number, not context text",
        ),
        (
            {"question": "Q", "reference": "R", "answer": "A", "contexts": [{"id": 1}]},
            "d.json item 2: item 1 of 'contexts' is an object with no text/content/page_content",
        ),
        (
            {"question": "Q", "reference": "R", "answer": "A", "contexts": ["a"], "scores": "hi"},
            "d.json item 2: the 'scores' field is a string, not a list of numbers",
        ),
        (
            {"question": "Q", "reference": "R", "answer": "A", "contexts": ["a"], "scores": [1, 2]},
            "d.json item 2: the retrieval scores do not fit 'contexts': the retrieval scores are "
            "2 scores for 1 context",
        ),
        (
            {"question": "Q", "reference": "R", "answer": "A", "reference_contexts": 5},
            "d.json item 2: the 'reference_contexts' field is a number, not a list",
        ),
    ],
)
def test_a_field_of_the_wrong_type_names_the_file_the_record_and_the_fix(
    tmp_path: Path, record: dict, expected: str
) -> None:
    good = {"question": "Fine", "reference": "R", "answer": "A"}
    path = write(tmp_path, "d.json", json.dumps([good, record]))
    assert error_of(path).startswith(expected)


def test_a_csv_list_cell_that_is_no_list_is_an_error_with_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "d.csv", 'question,reference,answer,contexts\nQ,R,A,"[oops"\n')
    assert error_of(path).startswith(
        "d.csv line 2: the 'contexts' cell starts with '[' but is not a JSON array. "
        'Write it as a JSON array such as ["first", "second"]'
    )


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ([1, 1], "d.json item 2: question number 1 repeats that of item 1 (id field 'id')"),
        (["5b2e", 2, "5b2e"], "d.json item 3: the id '5b2e' in 'id' repeats that of item 1"),
        ([True, 2], "d.json item 1: the id field 'id' is a boolean"),
        ([None, 2], "d.json item 1: the id field 'id' is null"),
        (["  ", 2], "d.json item 1: the id field 'id' is blank"),
    ],
)
def test_ids_that_repeat_or_are_no_id_at_all_are_errors(
    tmp_path: Path, ids: list[object], expected: str
) -> None:
    records = [
        {"id": value, "question": f"Q{index}", "reference": "R", "answer": "A"}
        for index, value in enumerate(ids)
    ]
    assert error_of(write(tmp_path, "d.json", json.dumps(records))).startswith(expected)


@pytest.mark.parametrize("ids", [["5b2e-91", 2], [-3, 2], [1.5, 2]])
def test_ids_that_name_no_question_number_are_keys_in_record_order(
    tmp_path: Path, ids: list[object]
) -> None:
    # Issue 22: an id is a key, not a number to parse (it was an error before).
    records = [
        {"id": value, "question": f"Q{index}", "reference": "R", "answer": "A"}
        for index, value in enumerate(ids)
    ]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert {n: dict(row.metadata) for n, row in inputs.questions.rows.items()} == {
        1: {"id": str(ids[0])},
        2: {"id": "2"},
    }


def test_an_id_on_some_records_only_is_an_error(tmp_path: Path) -> None:
    records = [
        {"query_id": "q1", "question": "Q1", "reference": "R", "answer": "A"},
        {"question": "Q2", "reference": "R", "answer": "A"},
    ]
    assert error_of(write(tmp_path, "d.json", json.dumps(records))).startswith(
        "d.json item 2: no 'query_id' field, while item 1 has one"
    )


def test_ids_counted_from_zero_become_question_numbers_from_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = [
        {"query_id": str(number), "query": f"Q{number}", "gt_answer": "R", "response": "A"}
        for number in (2, 0, 1)
    ]
    with caplog.at_level(logging.INFO):
        inputs = load_dataset(write(tmp_path, "d.json", json.dumps({"results": records})))
    assert {n: row.question for n, row in inputs.questions.rows.items()} == {
        3: "Q2",
        1: "Q0",
        2: "Q1",
    }
    assert "the ids in 'query_id' start at 0; question numbers are the ids plus one" in caplog.text


def test_metadata_comes_from_scalar_fields_and_metadata_objects(tmp_path: Path) -> None:
    records = [
        {
            "question": "Q",
            "reference": "R",
            "answer": "A",
            "source": "wiki",
            "hops": 2,
            "multi_hop": True,
            "claims": ["not carried"],
            "additional_metadata": {"difficulty": "hard", "source": "ignored: top level wins"},
        }
    ]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert inputs.metadata_columns == ["source", "hops", "multi_hop", "difficulty"]
    assert inputs.questions.rows[1].metadata == {
        "source": "wiki",
        "hops": "2",
        "multi_hop": "true",
        "difficulty": "hard",
    }


def test_convert_dataset_writes_three_files_and_never_replaces_one(tmp_path: Path) -> None:
    dataset = write(
        tmp_path,
        "d.jsonl",
        json.dumps(
            {
                "user_input": "Q?",
                "reference": "R",
                "response": "A",
                "retrieved_contexts": ["c1", "c2"],
                "retrieval_scores": [0.8, 0.25],
                "reference_contexts": ["c1"],
                "Category": "billing",
            }
        ),
    )
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli(["convert", "--dataset", str(dataset), "--output", str(out / "a.csv")])
    assert result.exit_code == 0, result.output
    assert (
        out / "questions.csv"
    ).read_text() == "Question Number,Question,Category\n1,Q?,billing\n"
    assert (out / "ground_truth.csv").read_text() == (
        'Question Number,Ground Truth,Relevant Contexts\n1,R,"[""c1""]"\n'
    )
    assert (out / "a.csv").read_text() == (
        "Question Number,RAG Answer,Contexts,Retrieval Scores\n"
        '1,A,"[""c1"", ""c2""]","[0.8, 0.25]"\n'
    )
    (out / "questions.csv").write_text("mine\n")
    again = run_cli(["convert", "--dataset", str(dataset), "--output", str(out / "a.csv")])
    assert again.exit_code == 2
    assert f"Error: --questions-out {out / 'questions.csv'} already exists; it was not " in (
        again.stderr
    )
    assert (out / "questions.csv").read_text() == "mine\n"
    forced = run_cli(
        ["convert", "--dataset", str(dataset), "--output", str(out / "a.csv"), "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert (out / "questions.csv").read_text().startswith("Question Number,Question")


def test_convert_dataset_refuses_the_json_dir_and_questions_options(tmp_path: Path) -> None:
    dataset = write(tmp_path, "d.json", '[{"question": "Q", "reference": "R", "answer": "A"}]')
    result = run_cli(["convert", "--dataset", str(dataset), "--questions", "q.csv"])
    assert result.exit_code == 2
    assert "Error: --dataset replaces --questions: pass either one dataset file" in result.stderr


def test_convert_dataset_of_a_golden_set_without_answers_writes_two_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "golden.csv", "question,expected_answer,\nQ1?,R1,\nQ2?,,\n")
    result = run_cli(["convert", "--dataset", "golden.csv"])
    assert result.exit_code == 1, result.output
    assert (tmp_path / "ground_truth.csv").read_text() == (
        "Question Number,Ground Truth,Relevant Contexts\n1,R1,\n"
    )
    assert not (tmp_path / "rag_answers.csv").exists()
    assert "question 2 has no reference and is left out of the reference file" in result.stderr


def test_an_answer_matching_one_of_several_references_matches_in_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    records = [
        {"question": "Capital?", "answer": "Paris", "ground_truths": ["Paris", "Paris, France"]},
        {"question": "Planet?", "answer": "Mars", "ground_truths": ["Jupiter", "Saturn"]},
    ]
    write(tmp_path, "d.jsonl", "\n".join(json.dumps(record) for record in records))
    options = ["--metrics", "lexical", "--yes", "--output-dir"]

    direct = run_cli(["evaluate", "--dataset", "d.jsonl", *options, "direct"])
    converted = run_cli(["convert", "--dataset", "d.jsonl"])
    from_csvs = run_cli(["evaluate", *options, "csvs"])

    assert direct.exit_code == converted.exit_code == from_csvs.exit_code == 0, direct.output
    assert "Reference Answers" in (tmp_path / "ground_truth.csv").read_text(encoding="utf-8")
    for folder in ("direct", "csvs"):
        [path] = (tmp_path / folder).glob("*.csv")
        rows = read_results(path).rows
        assert [row["exact_match"] for row in rows] == ["1", "0"]
        assert rows[0]["Ground Truth"] == "Paris\nParis, France"
    assert "lists several reference answers" not in direct.stderr  # a note in the log


def test_ids_counted_from_zero_are_kept_beside_their_question_numbers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = [
        {"id": index, "question": f"Q{index}?", "answer": "a", "reference": "a"}
        for index in range(3)
    ]
    path = write(tmp_path, "zero.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    inputs = load_dataset(path)
    assert {n: row.metadata for n, row in inputs.questions.rows.items()} == {
        1: {"id": "0"},
        2: {"id": "1"},
        3: {"id": "2"},
    }
    # convert --dataset writes the kept ids beside Question Number; reading them back names
    # nothing as a clash (an alias of Question Number kept as metadata loses nothing).
    outputs = DatasetOutputs(tmp_path / "q.csv", tmp_path / "gt.csv", tmp_path / "a.csv")
    convert_dataset(path, outputs)
    with caplog.at_level(logging.WARNING):
        again = load_input_files(outputs.questions, outputs.ground_truth, outputs.answers)
    assert {n: row.metadata for n, row in again.questions.rows.items()} == {
        n: row.metadata for n, row in inputs.questions.rows.items()
    }
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
