"""Which field of a record is read as what, in datasets and RAG JSON: the retrieved chunks
over generic source lists, two answer fields that disagree, empty answers, and column-oriented
JSON (issue 46 and its neighbours)."""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

import pytest
from evaluate_support import only_results, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.run import convert
from rag_evaluator.errors import InputError, NothingConvertedError
from rag_evaluator.inputs.load import load_answers, load_dataset
from rag_evaluator.inputs.shapes import extract_entries

# The context aliases in the order the rule prefers them: the chunk fields first, then the
# generic names that may hold references (file names, URLs) rather than texts.
CHUNK_FIELDS = [
    "retrieved_contexts",
    "contexts",
    "retrieval_context",
    "retrieved_context",
    "context",
    "llm_context",
    "llm_context_list",
]
GENERIC_FIELDS = ["source_nodes", "source_documents", "documents", "document", "sources"]

CAPITAL = "What is the capital of France?"
HAMLET = "Who wrote Hamlet?"
PARIS_CHUNK = "Paris is the capital of France."
HAMLET_CHUNK = "Hamlet was written by Shakespeare."


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def lines(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def error_of(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_dataset(path)
    return caught.value.message


def evaluate(folder: Path, monkeypatch: pytest.MonkeyPatch, *arguments: str, spool: str = ""):
    monkeypatch.chdir(folder)
    monkeypatch.setenv("RAG_EVAL_CHECKPOINT_DIR", str(folder / "checkpoints"))
    env = {"RAG_EVAL_SPOOL_MB": spool} if spool else {}
    return run_cli(["evaluate", "--yes", "--seed", "5", *arguments], env=env)


# -- 1. the retrieved chunks over generic source lists --------------------------------------------


@pytest.mark.parametrize("chunks", ["retrieved_contexts", "contexts", "context"])
def test_the_retrieved_chunks_win_over_sources_naming_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: str
) -> None:
    records = [
        {
            "question": CAPITAL,
            "answer": "Paris [1]",
            "reference": "Paris",
            "reference_contexts": [PARIS_CHUNK],
            "sources": ["geo_handbook.pdf"],
            chunks: [PARIS_CHUNK],
        },
        {
            "question": HAMLET,
            "answer": "Shakespeare",
            "reference": "Shakespeare",
            "reference_contexts": [HAMLET_CHUNK],
            "sources": ["https://example.org/lit.pdf"],
            chunks: [HAMLET_CHUNK],
        },
    ]
    write(tmp_path, "ds.json", json.dumps(records))
    result = evaluate(tmp_path, monkeypatch, "--dataset", "ds.json", "--metrics", "retrieval")
    assert result.exit_code == 0, result.output
    rows = only_results(tmp_path).rows
    assert [row["recall_at_k"] for row in rows] == ["1.0000", "1.0000"]
    assert [row["mrr"] for row in rows] == ["1.0000", "1.0000"]


def test_convert_takes_the_chunks_beside_sources_that_hold_no_text(tmp_path: Path) -> None:
    outputs = tmp_path / "RAG_JSON_Files"
    outputs.mkdir()
    entries = [
        {"question": CAPITAL, "answer": "Paris", "sources": ["geo.pdf"], "contexts": [PARIS_CHUNK]},
        {
            "question": HAMLET,
            "answer": "Shakespeare",
            "sources": [{"title": "lit.pdf", "url": "https://x/lit.pdf"}],
            "retrieved_contexts": [HAMLET_CHUNK],
        },
    ]
    write(outputs, "api.json", json.dumps(entries))
    write(tmp_path, "questions.csv", f"Question Number,Question\n1,{CAPITAL}\n2,{HAMLET}\n")
    report = convert(outputs, tmp_path / "questions.csv", tmp_path / "rag_answers.csv")
    assert report.exit_code == 0
    answers = load_answers(tmp_path / "rag_answers.csv").rows
    assert answers[1].contexts == [PARIS_CHUNK]
    assert answers[2].contexts == [HAMLET_CHUNK]


def test_a_dataset_field_without_text_falls_through_to_the_next_one(tmp_path: Path) -> None:
    records = [
        # Source objects with no text (before: an error naming 'sources').
        {
            "question": "Q1?",
            "answer": "A",
            "sources": [{"title": "lit.pdf", "url": "https://x/lit.pdf"}],
            "documents": ["Chunk one."],
        },
        # A null chunk field says nothing: the generic field's texts are taken.
        {"question": "Q2?", "answer": "A", "contexts": None, "sources": ["Chunk two."]},
        # Nothing anywhere has text: the first field's "retrieved nothing" stands.
        {"question": "Q3?", "answer": "A", "contexts": [], "sources": [{"url": "https://x"}]},
    ]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    contexts = {number: row.contexts for number, row in inputs.answers.rows.items()}
    assert contexts == {1: ["Chunk one."], 2: ["Chunk two."], 3: []}


def test_a_source_list_alone_is_still_read_as_the_contexts(tmp_path: Path) -> None:
    records = [{"question": "Q?", "answer": "A", "sources": ["The only chunk."]}]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert inputs.answers.rows[1].contexts == ["The only chunk."]


def test_a_source_list_alone_without_text_is_still_an_error(tmp_path: Path) -> None:
    records = [{"question": "Q?", "answer": "A", "sources": [{"url": "https://x"}]}]
    message = error_of(write(tmp_path, "d.json", json.dumps(records)))
    assert message.startswith("d.json item 1: item 1 of 'sources' is an object with no text")


_CONTEXT_VALUES = st.one_of(
    st.none(),
    st.just([]),
    st.lists(st.sampled_from(["x.pdf", "chunk a", "chunk b"]), min_size=1, max_size=2),
    st.just([{"title": "t", "url": "https://x"}]),
    st.just([{"text": "chunk c", "score": 0.5}]),
)


def _expected_contexts(record: dict[str, object]) -> list[str] | None:
    """What the rule reads: the first field in preference order holding a text, else the
    first present field (``[]``: nothing retrieved; ``None``: not reported)."""
    # Beside deepeval's retrieval_context, its context holds the golden chunks.
    golden = "context" if "retrieval_context" in record else ""
    present = [name for name in [*CHUNK_FIELDS, *GENERIC_FIELDS] if name in record]
    present = [name for name in present if name != golden]
    for name in present:
        value = record[name]
        texts = [
            item if isinstance(item, str) else item.get("text")
            for item in (value if isinstance(value, list) else [])
        ]
        if any(isinstance(text, str) for text in texts):
            return [text for text in texts if isinstance(text, str)]
    if not present:
        return None
    first = record[present[0]]
    return [] if first == [] else None


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*CHUNK_FIELDS, *GENERIC_FIELDS]), _CONTEXT_VALUES, min_size=1, max_size=4
    )
)
def test_any_mix_of_context_fields_is_read_by_the_preference_rule(
    fields: dict[str, object],
) -> None:
    record = {"question": "Q?", "answer": "A", **fields}
    entries = extract_entries([record], "run.json").entries
    assert entries[0].contexts == _expected_contexts(record)


# -- 2. two answer fields that disagree ----------------------------------------------------------


def test_a_gold_answer_beside_the_prediction_is_an_error_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {"question": CAPITAL, "answer": "Paris", "prediction": "I don't know"},
        {"question": HAMLET, "answer": "Shakespeare", "prediction": "I cannot answer that."},
    ]
    write(tmp_path, "qa.jsonl", lines(records))
    result = evaluate(tmp_path, monkeypatch, "--dataset", "qa.jsonl", "--metrics", "lexical")
    assert result.exit_code == 2, result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error == [
        "Error: qa.jsonl line 1: the answer fields 'answer' and 'prediction' hold different "
        "texts, and only one can be the RAG system's answer. Name the reference answer "
        "reference, ground_truth or expected_answer, or drop one of the two fields"
    ]
    converted = run_cli(["convert", "--dataset", "qa.jsonl"])
    assert converted.exit_code == 2
    assert "the answer fields 'answer' and 'prediction' hold different texts" in converted.stderr
    assert not (tmp_path / "questions.csv").exists()


def test_a_listed_gold_answer_beside_the_prediction_is_an_error(tmp_path: Path) -> None:
    record = {"question": "who won", "answer": ["Denver Broncos", "the Broncos"], "prediction": "x"}
    message = error_of(write(tmp_path, "nq.jsonl", lines([record])))
    assert "the answer fields 'answer' and 'prediction' hold different texts" in message


def test_the_conflict_in_a_later_csv_record_is_found(tmp_path: Path) -> None:
    text = "question,reference,answer,response\nQ1?,R,Same,Same\nQ2?,R,A,\nQ3?,R,Gold,Model\n"
    message = error_of(write(tmp_path, "d.csv", text))
    assert message.startswith(
        "d.csv line 4: the answer fields 'answer' and 'response' hold different texts"
    )


def test_equal_or_blank_second_answers_are_no_conflict(tmp_path: Path) -> None:
    records = [
        {"question": "Q1?", "answer": "Paris", "response": " Paris "},
        {"question": "Q2?", "answer": "", "response": "Rome"},
        {"question": "Q3?", "answer": "Oslo", "output": None, "result": {"score": 1}},
    ]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    answers = {number: row.rag_answer for number, row in inputs.answers.rows.items()}
    assert answers == {1: "Paris", 2: "Rome", 3: "Oslo"}


def test_convert_skips_an_entry_whose_two_answers_disagree(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outputs = tmp_path / "RAG_JSON_Files"
    outputs.mkdir()
    entries = [
        {"question": CAPITAL, "answer": "Paris", "response": "Paris"},
        {"question": HAMLET, "answer": "Shakespeare", "prediction": "Marlowe"},
    ]
    write(outputs, "run.json", json.dumps(entries))
    write(tmp_path, "questions.csv", f"Question Number,Question\n1,{CAPITAL}\n2,{HAMLET}\n")
    with caplog.at_level(logging.WARNING):
        report = convert(outputs, tmp_path / "questions.csv", tmp_path / "rag_answers.csv")
    assert report.exit_code == 1
    assert report.skipped_entries == 1
    assert any(
        "run.json item 2: the answer fields 'answer' and 'prediction' hold different texts"
        in message
        and message.endswith("(entry skipped)")
        for message in caplog.messages
    ), caplog.messages
    assert list(load_answers(tmp_path / "rag_answers.csv").rows) == [1]


_ANSWER_ALIASES = ["answer", "response", "output", "prediction", "actual_output"]
_ANSWER_VALUES = st.one_of(st.none(), st.sampled_from(["", "  ", "Paris", " Paris", "Rome", 7]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_ANSWER_ALIASES), _ANSWER_VALUES, min_size=1, max_size=4))
def test_any_set_of_answer_fields_is_one_answer_or_an_error(fields: dict[str, object]) -> None:
    record = {"question": "Q?", "reference": "R", **fields}
    texts = {
        name: value if isinstance(value, str) else ("" if value is None else json.dumps(value))
        for name, value in fields.items()
    }
    ordered = [name for name in _ANSWER_ALIASES if name in fields]
    non_blank = [name for name in ordered if texts[name].strip()]
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "d.json", json.dumps([record]))
        if len({texts[name].strip() for name in non_blank}) > 1:
            assert "hold different texts" in error_of(path)
            return
        if not non_blank:
            # The only record's answer is empty: the file holds no answer at all.
            assert "empty or null in every record" in error_of(path)
            return
        inputs = load_dataset(path)
    assert inputs.answers.rows[1].rag_answer == texts[non_blank[0]]


# -- 3. empty answers ----------------------------------------------------------------------------


def _outputs_of(folder: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    results = only_results(folder)
    summary = {k: v for k, v in results.summary.items() if k not in ("Date", "Time", "Run Id")}
    return results.rows, summary


def test_an_empty_answer_scores_alike_from_a_dataset_its_csvs_and_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {"question": "Question 1?", "reference": "Answer 1", "response": "Answer 1"},
        {"question": "Question 2?", "reference": "Answer 2", "response": "Answer 2"},
        {"question": "Question 3?", "reference": "Answer 3", "response": ""},
        {"question": "Question 4?", "reference": "Answer 4", "response": None},
        {"question": "Question 5?", "reference": "Answer 5", "response": "   "},
        {"question": "Question 6?", "reference": "Answer 6"},  # no answer field: not answered
    ]
    outcomes = []
    for way in ("dataset", "spool", "csvs"):
        folder = tmp_path / way
        folder.mkdir()
        write(folder, "ds.jsonl", lines(records))
        monkeypatch.chdir(folder)
        if way == "csvs":
            converted = run_cli(["convert", "--dataset", "ds.jsonl"])
            assert converted.exit_code == 1, converted.output  # question 6 left out
            assert "question 6 has no answer" in converted.stderr
            arguments = ["--metrics", "lexical"]
        else:
            arguments = ["--dataset", "ds.jsonl", "--metrics", "lexical"]
        spool = "0" if way == "spool" else "1000000"
        result = evaluate(folder, monkeypatch, *arguments, spool=spool)
        assert result.exit_code == 0, result.output
        assert "Coverage: 2/6 questions answered" in result.stderr
        assert "Left out question 6" in result.stderr
        outcomes.append(_outputs_of(folder))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    rows, summary = outcomes[0]
    assert [row["Question Number"] for row in rows] == ["1", "2", "3", "4", "5"]
    assert [row["exact_match"] for row in rows] == ["1", "1", "0", "0", "0"]
    assert summary["Total Questions"] == "5"


def test_a_csv_dataset_with_a_blank_answer_cell_reads_as_the_three_csvs_do(
    tmp_path: Path,
) -> None:
    text = "question,reference,answer\nQ1?,R1,A1\nQ2?,R2,\n"
    inputs = load_dataset(write(tmp_path, "d.csv", text))
    assert {number: row.rag_answer for number, row in inputs.answers.rows.items()} == {
        1: "A1",
        2: "",
    }


# -- 4. column-oriented JSON ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "document"),
    [
        (
            "single.json",
            {
                "question": [CAPITAL, HAMLET],
                "answer": ["Paris", "Marlowe"],
                "reference": ["P", "S"],
            },
        ),
        (
            "pd_default.json",
            {"question": {"0": CAPITAL, "1": HAMLET}, "answer": {"0": "Paris", "1": "Marlowe"}},
        ),
    ],
)
def test_a_column_oriented_file_is_refused_with_how_to_write_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, document: dict
) -> None:
    write(tmp_path, name, json.dumps(document))
    result = evaluate(tmp_path, monkeypatch, "--dataset", name, "--metrics", "lexical")
    assert result.exit_code == 2, result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1
    assert error[0].startswith(f"Error: {name} (single record): the 'question' field is ")
    assert "column-oriented" in error[0]
    assert "a JSON array of objects or JSON Lines" in error[0]
    assert not list((tmp_path / "Evaluation_Runs").glob("*.csv"))


def test_a_listed_question_inside_a_record_is_a_field_of_the_wrong_type(tmp_path: Path) -> None:
    records = [{"question": ["Q one?", "Q two?"], "answer": "A"}]
    message = error_of(write(tmp_path, "d.json", json.dumps(records)))
    assert message.startswith("d.json item 1: the 'question' field is a list, not question text")


def test_convert_names_the_column_oriented_shape_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outputs = tmp_path / "RAG_JSON_Files"
    outputs.mkdir()
    document = {"question": [CAPITAL, HAMLET], "answer": ["Paris", "Marlowe"]}
    write(outputs, "single.json", json.dumps(document))
    write(tmp_path, "questions.csv", f"Question Number,Question\n1,{CAPITAL}\n2,{HAMLET}\n")
    with caplog.at_level(logging.ERROR), pytest.raises(NothingConvertedError):
        convert(outputs, tmp_path / "questions.csv", tmp_path / "rag_answers.csv")
    (message,) = caplog.messages
    assert message.startswith("single.json has no usable entries: (single entry): the 'question'")
    assert "column-oriented" in message


_SCALARS = st.one_of(st.text(max_size=6), st.integers(), st.none())


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.lists(_SCALARS, min_size=2, max_size=4),
        st.dictionaries(st.text(max_size=3), _SCALARS, min_size=2, max_size=4),
    )
)
def test_a_question_holding_several_values_is_never_read_as_one(value: object) -> None:
    record = {"question": value, "answer": ["a", "b"]}
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "d.json", json.dumps(record))
        assert "column-oriented" in error_of(path)


# -- SQuAD-style answers: one per annotator, under a text field -----------------------------------

SQUAD = [
    {
        "id": "56be4db0",
        "question": "Which NFL team won Super Bowl 50?",
        "answers": {
            "text": ["Denver Broncos", "Denver Broncos", "Broncos"],
            "answer_start": [1, 1, 8],
        },
        "prediction": "Broncos",
    },
    {
        "id": "56be4db1",
        "question": "Where was Super Bowl 50 held?",
        "answers": {"text": ["Levi's Stadium", "Levi's Stadium"], "answer_start": [4, 4]},
        "prediction": "Levi's Stadium",
    },
]


@pytest.mark.parametrize("spool", ["", "0"])
def test_squad_answers_are_the_acceptable_answers_without_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spool: str
) -> None:
    dataset = write(tmp_path, "squad.jsonl", lines(SQUAD))
    loaded = load_dataset(dataset)
    rows = sorted(loaded.ground_truth.rows.values(), key=lambda row: row.question_number)
    assert [row.ground_truth for row in rows] == ["Denver Broncos\nBroncos", "Levi's Stadium"]
    assert [row.reference_answers for row in rows] == [("Denver Broncos", "Broncos"), None]

    result = evaluate(
        tmp_path, monkeypatch, "--dataset", str(dataset), "--metrics", "lexical", spool=spool
    )

    assert result.exit_code == 0, result.output
    # "Broncos" is one of the acceptable answers: an exact match.
    assert only_results(tmp_path).summary["exact_match"].startswith("2/2")


@pytest.mark.parametrize("spool", ["", "0"])
def test_a_golden_set_whose_answers_are_all_placeholders_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spool: str
) -> None:
    # "answer": null in every record is a template to fill, not answers that all came back
    # empty: scoring them 0 would be a run of nothing.
    records = [
        {"question": CAPITAL, "answer": None, "reference": "Paris"},
        {"question": HAMLET, "answer": "  ", "reference": "Shakespeare"},
    ]
    dataset = write(tmp_path, "golden.jsonl", lines(records))
    result = evaluate(
        tmp_path, monkeypatch, "--dataset", str(dataset), "--metrics", "lexical", spool=spool
    )
    assert result.exit_code == 2, result.output
    assert "its 'answer' field is empty or null in every record" in " ".join(result.stderr.split())
