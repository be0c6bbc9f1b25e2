"""A ground-truth or answers file that keeps a copy of each question's text: rows numbered
differently from questions.csv are named, since each is paired with another question."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_support import Workspace, prepare_workspace, read_results, run_cli, write_csv
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.convert.matching import same_question

QUESTIONS = [
    "What is the capital of France?",
    "Who wrote Hamlet?",
    "How many legs does a spider have?",
    "What was the revenue of Acme Corp in 2023?",
]
REFERENCES = ["Paris", "Shakespeare", "Eight", "$7.1 million"]
RUN = ["evaluate", "--metrics", "lexical"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    numbered = list(enumerate(QUESTIONS, start=1))
    write_csv(space.directory / "questions.csv", ["Question Number", "Question"], numbered)
    return space


def _write(workspace: Workspace, truth_questions: list[str], answer_questions: list[str]) -> None:
    folder = workspace.directory
    write_csv(
        folder / "ground_truth.csv",
        ["Question Number", "question", "Ground Truth"],
        [
            (n, q, r)
            for n, (q, r) in enumerate(zip(truth_questions, REFERENCES, strict=True), start=1)
        ],
    )
    write_csv(
        folder / "rag_answers.csv",
        ["Question Number", "Query", "RAG Answer"],
        [
            (n, q, r)
            for n, (q, r) in enumerate(zip(answer_questions, REFERENCES, strict=True), start=1)
        ],
    )


def _warnings(result: object) -> str:
    return " ".join(str(getattr(result, "stderr", "")).split())


def test_rows_numbered_differently_from_questions_csv_are_named(workspace: Workspace) -> None:
    # The ground truth's rows moved down by one: each reference sits under another question.
    rotated = [QUESTIONS[-1], *QUESTIONS[:-1]]
    _write(workspace, rotated, QUESTIONS)

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    shown = _warnings(result)
    assert (
        "ground_truth.csv: the 'question' of 4 of 4 rows is another question than the one "
        "questions.csv has under the same number (questions 1-4), yet their ground truths are "
        "paired with those questions"
    ) in shown
    assert "rag_answers.csv: the" not in shown
    # Scored as paired, as the warning says.
    [results] = workspace.results()
    assert len(read_results(results).rows) == 4


def test_copies_differing_in_case_spacing_or_a_typo_are_the_same_question(
    workspace: Workspace,
) -> None:
    edited = [
        "what is the capital of france",
        "Who wrote  Hamlett?",
        "How many legs does a spider have ?",
        "What was the revenue of ACME Corp in 2023?",
    ]
    _write(workspace, edited, QUESTIONS)

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    assert "another question" not in _warnings(result)


def test_a_copy_with_another_number_is_another_question(workspace: Workspace) -> None:
    _write(workspace, QUESTIONS, [*QUESTIONS[:3], "What was the revenue of Acme Corp in 2022?"])

    result = run_cli(RUN)

    assert "rag_answers.csv: the 'Query' of 1 of 4 rows" in _warnings(result)
    assert "(question 4)" in _warnings(result)


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=80).filter(lambda text: text.strip()))
def test_a_question_is_always_the_same_question_as_itself(text: str) -> None:
    assert same_question(text, text)
    assert same_question(f"  {text.upper()}  ", text) == same_question(text.upper(), text)
