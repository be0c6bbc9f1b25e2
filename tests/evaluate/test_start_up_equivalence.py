"""The start of a large run was made cheaper (issue 26: question numbers read without a
pattern, CSV rows turned into records in one pass, the estimate summed without a fresh zero
per question, the garbage collector paused while the inputs and the plan are built) and large
inputs are streamed into an on-disk spool. What a run reads, the order it calls in, its
estimate and its results must not move, spooled or not: the figures below were produced by
the code before those changes, on the same inputs."""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli
from fakes.anthropic_server import FakeAnthropicServer, verdict
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.inputs.fields import QuestionNumberError, parse_question_number


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


# Cells as spreadsheets write them: padded, "7.0", full-width digits, "+8", leading zeros;
# a short row, a blank row, metadata columns, a missing answer, both sides saying they
# do not know, long and escaped texts.
QUESTIONS = [
    ["1", "What is the limit for item one?", "billing"],
    [" 2 ", "What <b>&</b> why?", "support"],
    ["3.0", "How long is the warranty on the blue kettle sold in spring?", "billing"],
    ["\uff14", "Who signs the form?", ""],
    ["+5", "When does the office open?", "support"],
    ["0006", "Which colour is the default theme?", "support"],
    ["", "", ""],
    ["7", "Is the regional office open on Sundays? " + "Details follow. " * 40, "billing"],
    ["8", "What is the refund window?", "billing"],
]
TRUTHS = [
    ["1", "The limit is 10 units."],
    ["2", "Because of the & sign."],
    ["3", "Two years."],
    ["4", "The account holder."],
    ["5", "At nine."],
    ["6", "I don't know."],
    ["7", "No, it is closed on Sundays."],
    ["8", "Ninety days from the purchase."],
]
ANSWERS = [
    ["1", "The limit is 10 units."],
    ["2", "Because of <the> & sign."],
    ["3", "Two years from the date of purchase, as the policy says."],
    ["4", "The account holder signs it."],
    ["5", ""],
    ["6", "I don't know."],
    ["7", "It is closed on Sundays. " * 30],
    ["8"],
]

# Produced by the code before the changes (commit c3620ca) on the inputs above.
GOLDEN_ORDER = [
    "What <b>&</b> why?",
    "What is the limit for it",
    *["How long is the warranty"] * 4,  # a hedge: three consensus votes
    "Who signs the form?",
    "When does the office ope",
    "Is the regional office o",
    "What is the refund windo",
]
GOLDEN_PLAN = [
    "Questions: questions.csv (8 questions)",
    "Questions to evaluate: 8",
    "Estimated cost: $0.0015 to $0.0117 (7 to 28 calls)",
]
# Question Number, Precision, Recall, Accuracy, Reasoning, Consensus, Votes, Note, Category.
GOLDEN_ROWS = [
    ("1", "1", "0", "1", "Half right.", "no", "", "", "billing"),
    ("2", "1", "1", "1", "Correct and complete.", "no", "", "", "support"),
    (
        "3",
        *("1", "1", "1", "Vote.", "yes", "first 1/1/1; votes 1/1/1, 1/1/1, 1/1/1"),
        "consensus of 3 votes: the first reasoning said 'close call'",
        "billing",
    ),
    ("4", "1", "1", "1", "Correct and complete.", "no", "", "", ""),
    ("5", "1", "1", "1", "Correct and complete.", "no", "", "", "support"),
    (
        "6",
        *("1", "1", "1"),
        "Both the answer and the ground truth state that no information is available.",
        *("no", ""),
        "answer and ground truth both say no information is available; scored 1/1/1 "
        "without calling the judge",
        "support",
    ),
    ("7", "1", "1", "1", "Correct and complete.", "no", "", "", "billing"),
    ("8", "1", "1", "1", "Correct and complete.", "no", "", "", "billing"),
]
GOLDEN_SUMMARY = {
    "Total Questions": "8",
    "Coverage": "6/8 questions answered",
    "Precision": "8/8 (100%)",
    "Recall": "7/8 (88%)",
    "Accuracy": "8/8 (100%)",
    "Unscored": "0",
    "Consensus": "1",
    "No Information (no call)": "1",
    "Model": "claude-haiku-5-5",
    "Seed": "11",
    "Prompt": "built-in default",
    "Judge Calls": "10",
    "Cached Questions": "0",
    "Tokens In": "10266",
    "Tokens Out": "345",
    "Estimated Cost": "$0.0015 to $0.0117",
    "Cost": "$0.001199",
    "Metric Kinds": "Precision=binary; Recall=binary; Accuracy=binary",
    "Metadata Columns": "Category",
}
GOLDEN_COLUMNS = (
    *("Question Number", "Precision", "Recall", "Accuracy", "Reasoning", "Consensus"),
    *("Votes", "Note", "Category"),
)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    _write(tmp_path / "questions.csv", ["Question Number", "Question", "Category"], QUESTIONS)
    _write(tmp_path / "ground_truth.csv", ["Question Number", "Ground Truth"], TRUTHS)
    _write(tmp_path / "rag_answers.csv", ["Question Number", "RAG Answer"], ANSWERS)
    return workspace


def _plan_lines(output: str) -> list[str]:
    """The plan's lines about the questions and the estimate (not paths or timings)."""
    wanted = ("Questions", "Estimated", "Selected", "Pending", "Missing", "No information")
    return [
        re.sub(r"\s+", " ", line).strip()
        for line in output.splitlines()
        if line.strip().startswith(wanted)
    ]


# Held: the inputs read whole (files under the spool's size). Spooled: read into the
# on-disk spool as large inputs are (RAG_EVAL_SPOOL_MB=0 spools every run).
@pytest.mark.parametrize("spool_megabytes", [None, "0"], ids=["held", "spooled"])
def test_order_estimate_and_results_are_those_before(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    spool_megabytes: str | None,
) -> None:
    if spool_megabytes is not None:
        monkeypatch.setenv("RAG_EVAL_SPOOL_MB", spool_megabytes)
    fake_anthropic.script("item one", verdict(1, 0, 1, summary="Half right."))
    fake_anthropic.script(
        "blue kettle",
        verdict(reasoning="A close call on recall.", summary="First."),
        verdict(1, 1, 1, summary="Vote."),
    )
    result = run_cli(
        [
            "evaluate",
            "--model",
            "haiku",
            "--yes",
            "--seed",
            "11",
            "--delay",
            "0",
            "--no-cache",
            "--score-missing",
        ]
    )
    assert result.exit_code == 0, result.output
    # The questions in the order their calls went out (concurrency 1: the seeded order).
    order = [
        request.question[:24] for request in fake_anthropic.requests if request.question is not None
    ]
    results = only_results(workspace.directory)
    shown = {key: value for key, value in results.summary.items() if key not in ("Date", "Time")}
    assert order == GOLDEN_ORDER
    assert _plan_lines(result.output) == GOLDEN_PLAN
    assert [tuple(row[name] for name in GOLDEN_COLUMNS) for row in results.rows] == GOLDEN_ROWS
    # The texts are carried as the files hold them, row by row.
    texts = [(row["Question"], row["Ground Truth"], row["RAG Answer"]) for row in results.rows]
    answers = [[*row, ""][1] for row in ANSWERS]
    questions = [row[1] for row in QUESTIONS if row[1]]
    assert texts == list(zip(questions, [row[1] for row in TRUTHS], answers, strict=True))
    assert all(row["Error"] == "" for row in results.rows)
    assert shown == GOLDEN_SUMMARY


def _question_number_before(raw: str) -> int:
    """The parser before its shortcut for plain digits (the reference)."""
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        raise QuestionNumberError("is blank")
    found = re.fullmatch(r"[+]?([0-9]+)(?:\.0*)?", text)
    if found is None:
        raise QuestionNumberError(f"{text[:40]!r} is not a whole number")
    digits = found.group(1).lstrip("0") or "0"
    if len(digits) > 18:
        raise QuestionNumberError(f"{text[:40]!r} is too large for a question number")
    return int(digits)


def _outcome(parse: Callable[[str], int], raw: str) -> int | str:
    try:
        return parse(raw)
    except QuestionNumberError as exc:
        return f"error: {exc}"


@given(
    st.one_of(
        st.text(),
        st.text(alphabet="0123456789", max_size=25),
        st.text(alphabet="0123456789+.\uff10\uff11\u0661 ", max_size=25),
    )
)
def test_question_numbers_are_read_as_before(raw: str) -> None:
    assert _outcome(parse_question_number, raw) == _outcome(_question_number_before, raw)
