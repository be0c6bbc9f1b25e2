"""The shapes public RAG tools write, read by the one alias table (issue 22, item 8): Tonic
Validate runs, deepeval saved test runs, ARES files, chat-style questions (a list of
messages), and ids of any form, which are keys, not numbers to parse."""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
from pathlib import Path

import pytest
from evaluate_support import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.dataset import DatasetOutputs, convert_dataset
from rag_evaluator.convert.run import convert
from rag_evaluator.inputs.load import load_answers, load_dataset, load_input_files


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def csv_text(header: list[str], rows: list[list[str]], delimiter: str = ",") -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def converted(folder: Path, name: str, text: str, questions: list[str]) -> dict[int, tuple]:
    """convert's rows for one RAG output file: number -> (answer, contexts)."""
    outputs = folder / "outputs"
    outputs.mkdir(exist_ok=True)
    write(outputs, name, text)
    rows = [[str(number), question] for number, question in enumerate(questions, start=1)]
    write(folder, "questions.csv", csv_text(["Question Number", "Question"], rows))
    report = convert(outputs, folder / "questions.csv", folder / "rag_answers.csv")
    assert report.exit_code == 0, (report.unmatched, report.skipped_files)
    answers = load_answers(folder / "rag_answers.csv").rows
    return {number: (row.rag_answer, row.contexts) for number, row in answers.items()}


TONIC_RUN = {
    "overall_scores": {"answer_similarity": 3.5},
    "run_data": [
        {
            "scores": {"answer_similarity": 4.0, "retrieval_precision": 1.0},
            "reference_question": "What do technology hubs need?",
            "reference_answer": "Rich people and nerds.",
            "llm_answer": "Money and nerds.",
            "llm_context": ["Essay on hubs.", "Essay on nerds."],
        },
        {
            "scores": {"answer_similarity": 3.0},
            "reference_question": "Why are VCs conservative?",
            "reference_answer": "Big cheques.",
            "llm_answer": "Other people's money.",
            "llm_context": None,
        },
    ],
    "id": None,
}


def test_a_tonic_validate_run_reads_as_a_dataset_and_converts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path, "run.json", json.dumps(TONIC_RUN))
    with caplog.at_level(logging.WARNING):
        inputs = load_dataset(path)
        rows = converted(
            tmp_path,
            "run.json",
            json.dumps(TONIC_RUN),
            ["What do technology hubs need?", "Why are VCs conservative?"],
        )
    assert inputs.questions.rows[1].question == "What do technology hubs need?"
    assert inputs.ground_truth.rows[2].ground_truth == "Big cheques."
    assert inputs.answers.rows[1].rag_answer == "Money and nerds."
    assert inputs.answers.rows[1].contexts == ["Essay on hubs.", "Essay on nerds."]
    assert inputs.answers.rows[2].contexts is None
    assert rows == {
        1: ("Money and nerds.", ["Essay on hubs.", "Essay on nerds."]),
        2: ("Other people's money.", None),
    }
    # Tonic's "scores" holds its metrics, not retrieval scores: nothing to complain about.
    assert caplog.records == []


def test_a_tonic_validate_csv_with_python_lists_and_a_score_column_reads(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "openai_run.csv",
        csv_text(
            [
                "reference_question",
                "reference_answer",
                "llm_answer",
                "llm_context",
                "answer_similarity",
            ],
            [
                [
                    "What is X?",
                    "X is a letter.",
                    "A letter.",
                    "['Alphabet page', 'Letters']",
                    "4.0",
                ],
                ["What is Y?", "Y is a letter.", "No idea.", "[]", "0.0"],
            ],
        ),
    )
    inputs = load_dataset(path)
    assert inputs.answers.rows[1].contexts == ["Alphabet page", "Letters"]
    assert inputs.answers.rows[2].contexts == []
    assert inputs.questions.rows[2].metadata == {"answer_similarity": "0.0"}


DEEPEVAL_TEST_RUN = {
    "testFile": "test_rag.py",
    "testCases": [
        {
            "name": "test_case_0",
            "input": "What is the refund window?",
            "actualOutput": "30 days.",
            "expectedOutput": "Thirty days from delivery.",
            "context": ["Refunds: 30 days from delivery."],
            "retrievalContext": ["Refund policy page", "Shipping page"],
            "success": True,
            "metricsData": [{"name": "Faithfulness", "score": 1.0}],
            "runDuration": 1.5,
            "order": 0,
            "additionalMetadata": {"team": "support"},
        }
    ],
    "conversationalTestCases": [],
    "metricsScores": [{"metric": "Faithfulness", "scores": [1.0]}],
}


def test_a_deepeval_saved_test_run_reads_its_test_cases(tmp_path: Path) -> None:
    path = write(tmp_path, "test_run.json", json.dumps(DEEPEVAL_TEST_RUN))
    inputs = load_dataset(path)
    assert inputs.questions.rows[1].question == "What is the refund window?"
    assert inputs.ground_truth.rows[1].ground_truth == "Thirty days from delivery."
    assert inputs.ground_truth.rows[1].relevant_contexts == ["Refunds: 30 days from delivery."]
    assert inputs.answers.rows[1].contexts == ["Refund policy page", "Shipping page"]
    assert inputs.questions.rows[1].metadata["team"] == "support"
    rows = converted(
        tmp_path, "test_run.json", json.dumps(DEEPEVAL_TEST_RUN), ["What is the refund window?"]
    )
    assert rows == {1: ("30 days.", ["Refund policy page", "Shipping page"])}


@pytest.mark.parametrize(
    ("question", "document", "answer"),
    [("Query", "Document", "Answer"), ("synthetic_query", "document", "generated_answer")],
)
def test_ares_fields_give_question_context_and_answer(
    tmp_path: Path, question: str, document: str, answer: str
) -> None:
    lines = [
        {
            question: "who wrote hamlet",
            document: "Hamlet is a play by Shakespeare.",
            answer: "Shakespeare",
        },
        {
            question: "when did the first ninja turtles come out",
            document: "In 1984.",
            answer: "1984",
        },
    ]
    rows = converted(
        tmp_path,
        "ares.jsonl",
        "".join(json.dumps(line) + "\n" for line in lines),
        ["who wrote hamlet", "when did the first ninja turtles come out"],
    )
    assert rows == {
        1: ("Shakespeare", ["Hamlet is a play by Shakespeare."]),
        2: ("1984", ["In 1984."]),
    }


MTRAG_TASK = {
    "conversation_id": "dd6b6ffd177f2b311abe676261279d2f",
    "task_id": "dd6b6ffd177f2b311abe676261279d2f<::>2",
    "turn": 2,
    "contexts": [
        {"document_id": "822086267_6698", "text": "The Cardinals played in London.", "score": 26.5},
        {"document_id": "822086267_453", "text": "They also played in Mexico.", "score": 25.4},
    ],
    "input": [
        {"speaker": "user", "text": "where do the arizona cardinals play this week"},
        {"speaker": "agent", "text": "I'm sorry, I don't know."},
        {"speaker": "user", "text": "Do the Arizona Cardinals play outside the US?"},
    ],
    "targets": [{"speaker": "agent", "text": "Yes: London in 2017 and Mexico in 2005."}],
    "predictions": [{"text": "Yes, they played in London.", "class": "ANSWERABLE"}],
    "Question Type": ["Explanation"],
}


def test_a_chat_style_question_is_the_last_user_turn_and_the_conversation_is_kept(
    tmp_path: Path,
) -> None:
    openai_style = {
        "id": "chat-7",
        "messages": [
            {"role": "system", "content": "Answer from the handbook."},
            {"role": "user", "content": "How many vacation days?"},
            {"role": "assistant", "content": "25."},
            {"role": "user", "content": [{"type": "text", "text": "And sick days?"}]},
        ],
        "answer": "Ten sick days.",
        "reference": "10 days.",
    }
    path = write(tmp_path, "chats.jsonl", f"{json.dumps(MTRAG_TASK)}\n{json.dumps(openai_style)}\n")
    inputs = load_dataset(path)
    first, second = inputs.questions.rows[1], inputs.questions.rows[2]
    assert first.question == "Do the Arizona Cardinals play outside the US?"
    assert first.metadata["Conversation"] == (
        "user: where do the arizona cardinals play this week\nagent: I'm sorry, I don't know."
    )
    assert first.metadata["task_id"] == "dd6b6ffd177f2b311abe676261279d2f<::>2"
    assert inputs.ground_truth.rows[1].ground_truth == "Yes: London in 2017 and Mexico in 2005."
    assert inputs.answers.rows[1].rag_answer == "Yes, they played in London."
    assert inputs.answers.rows[1].contexts == [
        "The Cardinals played in London.",
        "They also played in Mexico.",
    ]
    assert inputs.answers.rows[1].retrieval_scores == (26.5, 25.4)
    assert second.question == "And sick days?"
    assert second.metadata["Conversation"] == (
        "system: Answer from the handbook.\nuser: How many vacation days?\nassistant: 25."
    )
    assert second.metadata["task_id"] == "chat-7"
    rows = converted(
        tmp_path,
        "mtrag.jsonl",
        json.dumps(MTRAG_TASK) + "\n",
        ["Do the Arizona Cardinals play outside the US?"],
    )
    assert rows[1][0] == "Yes, they played in London."


# Ids no question number can be read from: hashes, "s0", MTRAG's "<hash><::>1", and whole
# numbers of more digits than a question number has.
KEYS = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=24, max_size=24).filter(
        lambda text: not text.isdigit()
    ),
    st.integers(min_value=0, max_value=99).map(lambda n: f"s{n}"),
    st.text(alphabet="0123456789abcdef", min_size=8, max_size=8).map(lambda h: f"{h}<::>1"),
    st.integers(min_value=10**19, max_value=10**21),
)
# Any other id may sit beside them: a number, ID-like text, anything.
OTHER_IDS = st.one_of(
    st.integers(min_value=-5, max_value=10**6),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12
    ).filter(lambda text: text.strip() != ""),
)


@settings(max_examples=40, deadline=None)
@given(
    anchor=KEYS,
    others=st.lists(st.one_of(KEYS, OTHER_IDS), max_size=4),
    position=st.integers(min_value=0, max_value=4),
)
def test_ids_of_any_form_are_keys_kept_beside_numbers_in_record_order(
    anchor: object, others: list[object], position: int
) -> None:
    keys = list(dict.fromkeys(str(key) for key in [*others[:position], anchor, *others[position:]]))
    records = [
        {"id": key, "question": f"Q{index}", "reference": "R", "answer": f"A{index}"}
        for index, key in enumerate(keys)
    ]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = write(folder, "d.json", json.dumps(records))
        inputs = load_dataset(path)
        assert {n: row.question for n, row in inputs.questions.rows.items()} == {
            n: f"Q{n - 1}" for n in range(1, len(keys) + 1)
        }
        assert [row.metadata["id"] for row in inputs.questions.rows.values()] == keys
        # Whatever convert --dataset writes, evaluate reads: the same rows, the keys kept.
        outputs = DatasetOutputs(folder / "q.csv", folder / "gt.csv", folder / "a.csv")
        convert_dataset(path, outputs)
        again = load_input_files(outputs.questions, outputs.ground_truth, outputs.answers)
        assert again.questions.rows == inputs.questions.rows
        assert again.answers.rows == inputs.answers.rows


def test_whole_number_ids_stay_question_numbers(tmp_path: Path) -> None:
    records = [
        {"qid": key, "question": f"Q{key}", "reference": "R", "answer": "A"}
        for key in ("Q7", "12", 3)
    ]
    inputs = load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert sorted(inputs.questions.rows) == [3, 7, 12]
    assert inputs.metadata_columns == []


def test_twenty_digit_ids_written_by_convert_dataset_are_read_by_evaluate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    records = [
        {
            "id": 12345678901234567890 + index,
            "question": f"Q{index}?",
            "reference": "R",
            "answer": "R",
        }
        for index in range(3)
    ]
    write(tmp_path, "d.json", json.dumps(records))
    result = run_cli(["convert", "--dataset", "d.json"])
    assert result.exit_code == 0, result.output
    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])
    assert result.exit_code == 0, result.output
    assert "12345678901234567891" in next((tmp_path / "Evaluation_Runs").glob("*.csv")).read_text()


def test_a_repeated_key_is_an_error_naming_both_records(tmp_path: Path) -> None:
    records = [
        {"task_id": "abc<::>1", "question": "Q1", "reference": "R", "answer": "A"},
        {"task_id": "abc<::>2", "question": "Q2", "reference": "R", "answer": "A"},
        {"task_id": "abc<::>1", "question": "Q3", "reference": "R", "answer": "A"},
    ]
    with pytest.raises(Exception) as caught:
        load_dataset(write(tmp_path, "d.json", json.dumps(records)))
    assert str(caught.value).startswith(
        "d.json item 3: the id 'abc<::>1' in 'task_id' repeats that of item 1. "
        "Give every record its own id"
    )
