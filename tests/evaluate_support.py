"""Helpers for the ``rag-eval evaluate`` tests: input files, the CLI, the results file."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner, Result

from rag_evaluator.cli.app import app

# question number -> (question, ground truth, RAG answer)
SAMPLE: dict[int, tuple[str, str, str]] = {
    1: (
        "What is the capital of France?",
        "Paris is the capital of France.",
        "The capital of France is Paris.",
    ),
    2: (
        "How long is the warranty on the X200 pump?",
        "Two years, parts and labour.",
        "The X200 has a 2-year warranty covering parts & labour.",
    ),
    3: (
        "Which port does the service listen on?",
        "Port 8443, over TLS.",
        "It listens on port 8080.",
    ),
    4: (
        "Who approves travel requests?",
        "The line manager, then finance for amounts over 1,000 EUR.",
        "Travel requests are approved by the line manager.",
    ),
    5: (
        "When was the office in Lyon opened?",
        "In March 2019.",
        "The Lyon office opened in 2019, in March.",
    ),
}


@dataclass(frozen=True)
class Workspace:
    """A test's working directory and the checkpoint folder its runs use."""

    directory: Path
    checkpoints: Path

    def results(self) -> list[Path]:
        return results_files(self.directory / "Evaluation_Runs")

    def checkpoint_files(self) -> list[Path]:
        return checkpoint_files(self.checkpoints)


def prepare_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Run in ``tmp_path`` with checkpoints under it (never in the user's state folder)."""
    checkpoints = tmp_path / "state" / "checkpoints"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_EVAL_CHECKPOINT_DIR", str(checkpoints))
    return Workspace(tmp_path, checkpoints)


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def write_retrieval_inputs(
    directory: Path, contexts_of: Callable[[str], list[str]], scores: str | None = None
) -> None:
    """The three CSVs of ``SAMPLE`` for the retrieval metrics: each ground truth its own
    golden chunk, ``contexts_of(ground truth)`` the retrieved ones (with ``scores``, the same
    Retrieval Scores cell on every row)."""
    numbers = sorted(SAMPLE)
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question"],
        [[n, SAMPLE[n][0]] for n in numbers],
    )
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts"],
        [[n, SAMPLE[n][1], json.dumps([SAMPLE[n][1]])] for n in numbers],
    )
    header = ["Question Number", "RAG Answer", "Contexts"]
    rows = [[n, SAMPLE[n][2], json.dumps(contexts_of(SAMPLE[n][1]))] for n in numbers]
    if scores is not None:
        header.append("Retrieval Scores")
        rows = [[*row, scores] for row in rows]
    write_csv(directory / "rag_answers.csv", header, rows)


def write_inputs(
    directory: Path,
    sample: Mapping[int, tuple[str, str, str]] = SAMPLE,
    *,
    question_numbers: Sequence[int] | None = None,
    truth_numbers: Sequence[int] | None = None,
    answer_numbers: Sequence[int] | None = None,
) -> None:
    """Write questions.csv, ground_truth.csv and rag_answers.csv (optionally with gaps)."""
    numbers = sorted(sample)
    write_csv(
        directory / "questions.csv",
        ["Question Number", "Question"],
        [[n, sample[n][0]] for n in (question_numbers or numbers)],
    )
    write_csv(
        directory / "ground_truth.csv",
        ["Question Number", "Ground Truth"],
        [[n, sample[n][1]] for n in (truth_numbers or numbers)],
    )
    write_csv(
        directory / "rag_answers.csv",
        ["Question Number", "RAG Answer"],
        [[n, sample[n][2]] for n in (answer_numbers or numbers)],
    )


def run_cli(
    arguments: Sequence[str],
    input_text: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Result:
    """``rag-eval <arguments>`` in-process, exactly as typed (the cwd is the test's folder)."""
    return CliRunner().invoke(app, list(arguments), input=input_text, env=dict(env or {}))


@dataclass(frozen=True)
class ResultsFile:
    path: Path
    summary: dict[str, str]  # values without their confidence interval: "3/4 (75%)"
    intervals: dict[str, str]  # the interval of each value that has one: "95% CI 30–95%"
    summary_lines: list[str]
    header: list[str]
    rows: list[dict[str, str]]

    def row(self, question_number: int) -> dict[str, str]:
        return next(row for row in self.rows if row["Question Number"] == str(question_number))


def results_files(directory: Path) -> list[Path]:
    """The results files of a folder: precision_scores_* (runs with the judge) and
    metric_scores_* (runs without it)."""
    return sorted(
        [*directory.glob("precision_scores_*.csv"), *directory.glob("metric_scores_*.csv")]
    )


def read_results(path: Path) -> ResultsFile:
    text = path.read_text(encoding="utf-8")
    # The summary lines are plain text lines on top (never CSV-quoted), then the CSV table.
    top = list(itertools.takewhile(lambda line: line.startswith("#"), text.split("\n")))
    summary_lines = [line for line in top if line.startswith("#SUMMARY: ")]
    table_text = text[sum(len(line) + 1 for line in top) :]
    body = [row for row in csv.reader(io.StringIO(table_text, newline="")) if row]
    summary = {}
    intervals = {}
    for line in summary_lines:
        label, _, value = line.removeprefix("#SUMMARY: ").partition(": ")
        found = re.fullmatch(r"(.*) \[(95% CI [^\]]*)\]", value)
        if found:
            value = found[1]
            intervals[label] = found[2]
        summary[label] = value
    header, *rows = body
    return ResultsFile(
        path,
        summary,
        intervals,
        summary_lines,
        header,
        [dict(zip(header, row, strict=True)) for row in rows],
    )


def only_results(directory: Path) -> ResultsFile:
    files = results_files(directory / "Evaluation_Runs")
    assert len(files) == 1, files
    return read_results(files[0])


def checkpoint_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("run-*.jsonl")) if directory.is_dir() else []


def finished_lines(checkpoint: Path) -> int:
    """Complete question lines in a checkpoint (the header excluded)."""
    try:
        data = checkpoint.read_bytes()
    except FileNotFoundError:
        return 0
    return max(data.count(b"\n") - 1, 0)


def start_cli_process(arguments: Sequence[str], cwd: Path) -> subprocess.Popen[str]:
    """``python -m rag_evaluator <arguments>`` as a real process, environment inherited."""
    return subprocess.Popen(
        [sys.executable, "-m", "rag_evaluator", *arguments],
        cwd=cwd,
        env=dict(os.environ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(
    condition: Callable[[], bool], timeout: float = 30.0, interval: float = 0.02
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError("timed out waiting for the condition")


@dataclass(frozen=True)
class TerminalRun:
    """A finished ``rag-eval`` process run in a pseudo-terminal: its exit code and screen."""

    exit_code: int
    output: str  # everything shown on the terminal (stdout and stderr), escape codes removed

    @property
    def text(self) -> str:
        """The output with line wraps and runs of spaces collapsed, for phrase checks."""
        return " ".join(self.output.split())


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def run_in_terminal(
    arguments: Sequence[str],
    cwd: Path,
    answers: Sequence[tuple[str, str]] = (),
    timeout: float = 60.0,
) -> TerminalRun:
    """``rag-eval <arguments>`` in a pseudo-terminal, answering each prompt as a person would.

    ``answers`` are (prompt text to wait for, line to type) in order; the environment (fake
    API, checkpoint folder) is inherited.
    """
    screen = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "rag_evaluator", *arguments],
        cwd=str(cwd),
        env=dict(os.environ),
        encoding="utf-8",
        timeout=timeout,
        dimensions=(50, 200),
    )
    child.logfile_read = screen
    try:
        for prompt, answer in answers:
            child.expect_exact(prompt)
            child.sendline(answer)
        child.expect(pexpect.EOF)
    finally:
        child.close()
    exit_code = (
        child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)
    )
    return TerminalRun(exit_code, _ESCAPE.sub("", screen.getvalue()))
