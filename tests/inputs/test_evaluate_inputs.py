"""Bad input as it reaches ``rag-eval evaluate``: one clear line with the fix, never a traceback."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    run_cli,
    run_in_terminal,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer

RUN = ["evaluate", "--model", "haiku", "--yes", "--delay", "0"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    return workspace


def _rewrite(path: Path, transform: Callable[[bytes], bytes]) -> None:
    path.write_bytes(transform(path.read_bytes()))


def _remove(path: Path) -> None:
    path.unlink()


def _directory_instead(path: Path) -> None:
    path.unlink()
    path.mkdir()


REFUSED: list[tuple[str, str, Callable[[Path], None], str]] = [
    (
        "missing",
        "questions.csv",
        _remove,
        "questions.csv not found. Create this file with columns: Question Number, Question",
    ),
    (
        "empty",
        "ground_truth.csv",
        lambda path: path.write_bytes(b""),
        "ground_truth.csv is empty. Add a header row with columns: Question Number, Ground Truth",
    ),
    (
        "header-only",
        "rag_answers.csv",
        lambda path: path.write_text("Question Number,RAG Answer\n"),
        "rag_answers.csv has a header row but no data rows",
    ),
    (
        "missing-column",
        "rag_answers.csv",
        lambda path: path.write_text("Question Number,Reply\n1,Paris\n"),
        "rag_answers.csv has no 'RAG Answer' column (columns found: 'Question Number', 'Reply')",
    ),
    (
        "non-numeric-number",
        "questions.csv",
        lambda path: _rewrite(path, lambda data: data.replace(b"\n3,", b"\nthree,")),
        "questions.csv line 4: 'Question Number' 'three' is not a whole number",
    ),
    (
        "hash-id",
        "ground_truth.csv",
        lambda path: _rewrite(path, lambda data: data.replace(b"\n3,", b"\nf0d2a9c1,")),
        "ground_truth.csv line 4: 'Question Number' 'f0d2a9c1' is not a whole number. Give "
        "every row a whole question number such as 1, 2, 3 (or Q1, Q2, Q3); ids of other "
        "forms (hashes, names) are kept by a --dataset file",
    ),
    (
        # A sign is no ID prefix: -3 is not question 3.
        "negative-number",
        "rag_answers.csv",
        lambda path: _rewrite(path, lambda data: data.replace(b"\n3,", b"\n-3,")),
        "rag_answers.csv line 4: 'Question Number' '-3' is not a whole number",
    ),
    (
        "blank-number",
        "ground_truth.csv",
        lambda path: _rewrite(path, lambda data: data.replace(b"\n2,", b"\n,")),
        "ground_truth.csv line 3: 'Question Number' is blank",
    ),
    (
        "directory",
        "rag_answers.csv",
        _directory_instead,
        "rag_answers.csv is a directory, not a CSV file",
    ),
    (
        "no-common-number",
        "rag_answers.csv",
        lambda path: path.write_text("Question Number,RAG Answer\n90,x\n91,y\n"),
        "No question number is in all three files",
    ),
]


@pytest.mark.parametrize(
    ("file_name", "damage", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED],
)
def test_unusable_input_files_are_refused_before_any_call(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    file_name: str,
    damage: Callable[[Path], None],
    expected: str,
) -> None:
    damage(workspace.directory / file_name)

    result = run_cli(RUN)

    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert expected in message
    assert result.stderr.count("Error: ") == 1
    assert "Traceback" not in result.output
    assert fake_anthropic.requests == []
    assert workspace.results() == []
    assert workspace.checkpoint_files() == []


def test_awkward_but_readable_files_are_evaluated_as_meant(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    directory = workspace.directory
    huge_answer = "The capital of France is Paris. " * 32_768  # 1 MiB
    # questions.csv: semicolons, a BOM and mixed line endings.
    lines = ["Question Number;Question"] + [f"{n};{SAMPLE[n][0]}" for n in sorted(SAMPLE)]
    (directory / "questions.csv").write_bytes(
        b"\xef\xbb\xbf" + "\r\n".join(lines[:3]).encode() + b"\n" + "\n".join(lines[3:]).encode()
    )
    # ground_truth.csv: latin-1 bytes that are not UTF-8.
    _rewrite(directory / "ground_truth.csv", lambda data: data.replace(b"Paris", b"Par\xeds"))
    # rag_answers.csv: a 1 MiB answer and NUL bytes.
    with (directory / "rag_answers.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "RAG Answer"])
        writer.writerow([1, huge_answer])
        for number in sorted(SAMPLE)[1:]:
            writer.writerow([number, SAMPLE[number][2].replace(" ", " \x00", 1)])

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    warnings = " ".join(result.stderr.split())
    assert "ground_truth.csv is not valid UTF-8" in warnings
    assert "rag_answers.csv contains NUL bytes" in warnings
    assert len(fake_anthropic.requests) == 5
    [first] = fake_anthropic.requests_about(SAMPLE[1][0])
    assert f"<rag_answer>\n{huge_answer}\n</rag_answer>" in (first.user_message or "")
    assert "París is the capital of France." in (first.user_message or "")
    results = only_results(workspace.directory)
    assert results.row(1)["RAG Answer"] == huge_answer
    assert results.row(2)["RAG Answer"] == SAMPLE[2][2]
    assert [row["Question"] for row in results.rows] == [SAMPLE[n][0] for n in sorted(SAMPLE)]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--seed", "abc"], "Invalid value for '--seed'"),
        (["--seed", "-1"], "Invalid value for '--seed'"),
        (["--delay", "soon"], "Invalid value for '--delay'"),
        (["--max-retries", "-1"], "Invalid value for '--max-retries'"),
    ],
)
def test_malformed_option_values_are_usage_errors(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, arguments: list[str], expected: str
) -> None:
    result = run_cli([*RUN, *arguments])
    assert result.exit_code == 2
    assert expected in result.stderr
    assert "Traceback" not in result.output
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    ("setup", "arguments", "expected"),
    [
        ("", ["--prompt", "nowhere/rubric.txt"], "Prompt file nowhere/rubric.txt not found"),
        ("folder", ["--prompt", "rubric"], "rubric is a directory, not a prompt file"),
        ("binary", ["--prompt", "rubric.txt"], "contains NUL bytes, so it is not a text file"),
        ("blank", ["--prompt", "rubric.txt"], "rubric.txt is empty"),
    ],
)
def test_a_bad_prompt_file_is_refused_with_the_fix(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    setup: str,
    arguments: list[str],
    expected: str,
) -> None:
    if setup == "folder":
        (workspace.directory / "rubric").mkdir()
    elif setup == "binary":
        (workspace.directory / "rubric.txt").write_bytes(b"Grade\x00 strictly")
    elif setup == "blank":
        (workspace.directory / "rubric.txt").write_text("  \n\n")

    result = run_cli([*RUN, *arguments])

    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.stderr.split())
    assert "--prompt" in result.stderr
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"ANTHROPIC_API_KEY=\xff\xfe\n", ".env is not valid UTF-8"),
        (b"ANTHROPIC_API_KEY=sk-ant\x00x\n", "holds a NUL byte"),
    ],
    ids=["invalid-utf8", "nul-byte"],
)
def test_an_unusable_dot_env_says_what_to_fix(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    content: bytes,
    expected: str,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    (workspace.directory / ".env").write_bytes(content)

    result = run_cli(RUN)

    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.stderr.split())
    assert "Traceback" not in result.output
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    ("output_dir", "expected"),
    [
        ("questions.csv", "The output folder questions.csv is a file, not a folder"),
        ("questions.csv/runs", "Cannot write in the output folder questions.csv/runs"),
    ],
    ids=["a-file", "under-a-file"],
)
def test_an_unusable_output_folder_is_found_before_the_first_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, output_dir: str, expected: str
) -> None:
    result = run_cli([*RUN, "--output-dir", output_dir])

    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert expected in message
    assert "--output-dir" in message
    assert fake_anthropic.requests == []
    assert workspace.checkpoint_files() == []


def test_an_unusable_checkpoint_folder_says_so(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--checkpoint-dir", "questions.csv/state"])

    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "part of that path is a file, not a folder" in message
    assert "--checkpoint-dir" in message
    assert fake_anthropic.requests == []


def test_declining_creates_no_output_folder(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_in_terminal(
        ["evaluate", "--model", "haiku", "--output-dir", "runs/new"],
        workspace.directory,
        [("Proceed? [Y/n]", "n")],
    )
    assert result.exit_code == 0, result.output
    assert not (workspace.directory / "runs").exists()


@pytest.mark.parametrize("spool_megabytes", ["64", "0"])
def test_id_like_question_numbers_pair_rows_across_the_three_files(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, spool_megabytes: str
) -> None:
    # The same questions named three ways: Q1 in questions.csv, q_001 beside them, 1 elsewhere.
    monkeypatch.setenv("RAG_EVAL_SPOOL_MB", spool_megabytes)
    directory = workspace.directory
    names = {1: "Q1", 2: "q_002", 3: "Question 3", 4: "QID-4", 5: "5"}
    with (directory / "questions.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["qid", "Question"])
        for number in (3, 1, 5, 2, 4):
            writer.writerow([names[number], SAMPLE[number][0]])
    _rewrite(directory / "rag_answers.csv", lambda data: data.replace(b"\n2,", b"\nq2,"))

    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])

    assert result.exit_code == 0, result.output
    results = only_results(directory)
    assert [row["Question Number"] for row in results.rows] == ["1", "2", "3", "4", "5"]
    for number in SAMPLE:
        row = results.row(number)
        assert (row["Question"], row["Ground Truth"], row["RAG Answer"]) == SAMPLE[number]
