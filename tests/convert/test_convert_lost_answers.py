"""convert never drops an answer with exit code 0 (issue 22, item 4): outputs of two systems in
one folder are refused, a question text repeated in questions.csv takes its answers in order,
and any other answer left out makes the exit code 1."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from evaluate_support import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.matching import assign_entries
from rag_evaluator.inputs.shapes import RagEntry

QUESTIONS = {
    1: "How many vacation days do new employees get?",
    2: "Who approves overtime for hourly staff?",
    3: "What is the per diem for meals on domestic trips?",
}


def write_questions(folder: Path, questions: dict[int, str]) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Question Number", "Question"])
    writer.writerows(sorted(questions.items()))
    (folder / "questions.csv").write_text(buffer.getvalue(), encoding="utf-8")


def write_outputs(folder: Path, files: dict[str, list[dict]]) -> None:
    outputs = folder / "RAG_JSON_Files"
    outputs.mkdir()
    for name, entries in files.items():
        (outputs / name).write_text(json.dumps(entries), encoding="utf-8")


def answers_written(folder: Path) -> dict[str, str]:
    with (folder / "rag_answers.csv").open(encoding="utf-8", newline="") as handle:
        return {row["Question Number"]: row["RAG Answer"] for row in csv.DictReader(handle)}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_two_systems_in_one_folder_are_refused_and_nothing_is_written(project: Path) -> None:
    write_questions(project, QUESTIONS)
    write_outputs(
        project,
        {
            "system_a.json": [
                {"question": text, "answer": f"A says {n}"} for n, text in QUESTIONS.items()
            ],
            "system_b.json": [
                {"question": text, "answer": f"B says {n}"} for n, text in QUESTIONS.items()
            ],
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 2, result.output
    assert not (project / "rag_answers.csv").exists()
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(
        "Error: system_a.json and system_b.json both answer 3 questions (such as question 1) "
        "equally well with different answers"
    ), message
    assert "Put each system's files in a folder of its own" in message
    assert "--json-dir" in message
    # No pile of "lost to a better match" warnings before the refusal.
    assert result.stderr.count("Warning:") == 0


def test_a_repeated_question_text_takes_its_answers_in_order(project: Path) -> None:
    questions = {**QUESTIONS, 4: QUESTIONS[2]}
    write_questions(project, questions)
    write_outputs(
        project,
        {
            "run.json": [
                {"question": QUESTIONS[1], "answer": "25 days."},
                {"question": QUESTIONS[2], "answer": "Managers."},
                {"question": QUESTIONS[3], "answer": "$60."},
                {"question": QUESTIONS[2], "answer": "The team lead."},
            ]
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 0, result.output
    assert answers_written(project) == {
        "1": "25 days.",
        "2": "Managers.",
        "3": "$60.",
        "4": "The team lead.",
    }
    assert "the answers to it are given to them in the order the outputs list them" in (
        result.stderr
    )


def test_an_answer_left_out_for_another_exits_1_and_is_counted(project: Path) -> None:
    write_questions(project, QUESTIONS)
    write_outputs(
        project,
        {
            "run.json": [
                {"question": QUESTIONS[1], "answer": "25 days."},
                {"question": QUESTIONS[1], "answer": "Twenty days."},
                {"question": QUESTIONS[2], "answer": "Managers."},
            ]
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 1, result.output
    assert answers_written(project) == {"1": "25 days.", "2": "Managers."}
    assert "Not converted: 1 lost answer (see the messages above); exit code 1" in result.stderr


def test_a_better_match_in_another_file_wins_with_exit_1(project: Path) -> None:
    write_questions(project, QUESTIONS)
    write_outputs(
        project,
        {
            "a_run.json": [
                {"question": "how many vacation days do new employes get", "answer": "25."},
                {"question": QUESTIONS[2], "answer": "Managers."},
            ],
            "b_rerun.json": [{"question": QUESTIONS[1], "answer": "Exactly 25 days."}],
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 1, result.output
    assert answers_written(project)["1"] == "Exactly 25 days."


def test_repeats_that_lose_nothing_keep_exit_0(project: Path) -> None:
    write_questions(project, QUESTIONS)
    write_outputs(
        project,
        {
            # The same answer twice, and an empty answer beside one with text.
            "a.json": [
                {"question": QUESTIONS[1], "answer": "25 days."},
                {"question": QUESTIONS[2], "answer": ""},
            ],
            "b.json": [
                {"question": QUESTIONS[1], "answer": "25  days."},
                {"question": QUESTIONS[2], "answer": "Managers."},
            ],
        },
    )
    result = run_cli(["convert"])
    assert result.exit_code == 0, result.output
    assert answers_written(project) == {"1": "25 days.", "2": "Managers."}


@settings(max_examples=60, deadline=None)
@given(
    copies=st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=4),
    entries=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=8),
)
def test_every_entry_of_a_repeated_text_is_kept_while_a_number_of_it_is_free(
    copies: list[int], entries: list[int]
) -> None:
    questions: dict[int, str] = {}
    for text_index, count in enumerate(copies):
        for _ in range(count):
            questions[len(questions) + 1] = f"Question number {text_index} of the set?"
    texts = [f"Question number {index % len(copies)} of the set?" for index in entries]
    found = [
        RagEntry("run.json", f"item {position}", text, f"answer {position}")
        for position, text in enumerate(texts, start=1)
    ]
    result = assign_entries(found, questions)
    for text_index, count in enumerate(copies):
        asked = sum(1 for index in entries if index % len(copies) == text_index)
        numbers = [
            n
            for n, text in questions.items()
            if text == f"Question number {text_index} of the set?"
        ]
        given_numbers = [m.question_number for m in result.matched if m.question_number in numbers]
        # Each entry takes the next number of its text, in the order the entries come.
        assert given_numbers == numbers[: min(asked, count)]
        assert sum(
            1 for lost in result.lost_claims if lost.loser.question_number in numbers
        ) == max(0, asked - count)
    kept = {m.entry.location: m.question_number for m in result.matched}
    order = [m.question_number for m in sorted(result.matched, key=lambda m: m.order)]
    for text_index in range(len(copies)):
        numbers_in_entry_order = [
            kept[entry.location]
            for entry in found
            if entry.location in kept
            and entry.question == f"Question number {text_index} of the set?"
        ]
        assert numbers_in_entry_order == sorted(numbers_in_entry_order)
    assert len(order) == len(set(order))
