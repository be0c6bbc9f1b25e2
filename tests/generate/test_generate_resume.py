"""``rag-eval generate`` as a person and a crash meet it: the terminal, Ctrl-C, ``kill -9``."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from evaluate_support import (
    finished_lines,
    prepare_workspace,
    run_cli,
    run_in_terminal,
    start_cli_process,
    wait_until,
)
from fakes.anthropic_server import FakeAnthropicServer
from generate_support import DOCS, generate_arguments, read_golden_set

pytestmark = pytest.mark.usefixtures("fake_anthropic")


def test_the_plan_is_shown_and_declining_generates_nothing(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    run = run_in_terminal(
        generate_arguments(DOCS), workspace.directory, answers=[("Proceed? [Y/n]", "n")]
    )
    assert run.exit_code == 0, run.output
    text = run.text
    assert f"Documents: {DOCS} (4 read)" in text
    assert (
        "Questions to generate: 12 (factual 5, comparison 3, multi_hop 3, unanswerable 1)" in text
    )
    assert "Multi-hop pairs: by keywords" in text
    assert "Seed: 1" in text
    assert "Estimated cost: $" in text and "up to 6 more to replace dropped questions" in text
    assert "Nothing was generated." in text
    assert fake_anthropic.generation_requests() == []
    assert not (workspace.directory / "questions.csv").exists()
    assert workspace.checkpoint_files() == []


def test_in_a_terminal_the_run_shows_a_progress_bar(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    run = run_in_terminal(
        generate_arguments(DOCS, count=4), workspace.directory, answers=[("Proceed? [Y/n]", "")]
    )
    assert run.exit_code == 0, run.output
    assert "Generating" in run.output and "4/4" in run.output
    assert "Wrote 4 question(s)" in run.text
    assert len(read_golden_set(workspace.directory).questions) == 4


def test_kill_9_keeps_every_finished_question_and_the_rerun_asks_only_the_rest(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    fake_anthropic.response_delay_seconds = 0.2
    process = start_cli_process([*generate_arguments(DOCS), "--yes"], workspace.directory)
    try:
        wait_until(
            lambda: (
                bool(workspace.checkpoint_files())
                and finished_lines(workspace.checkpoint_files()[0]) >= 3
            )
        )
        process.kill()
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    (checkpoint,) = workspace.checkpoint_files()
    finished = finished_lines(checkpoint)
    before = len(fake_anthropic.generation_requests())
    fake_anthropic.response_delay_seconds = 0.0
    resumed = run_cli([*generate_arguments(DOCS), "--yes"])
    assert resumed.exit_code == 0, resumed.output
    assert "Found an unfinished generate run from these documents" in resumed.stderr
    assert "Resume previous run? [Y/n] y (--yes)" in resumed.stderr
    assert f"Resuming: {finished} done, {12 - finished} still to generate" in resumed.stderr
    assert len(fake_anthropic.generation_requests()) - before == 12 - finished
    assert len(read_golden_set(workspace.directory).questions) == 12
    assert workspace.checkpoint_files() == []


def test_sigterm_stops_like_ctrl_c_and_says_how_to_resume(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    fake_anthropic.response_delay_seconds = 0.2
    process = start_cli_process([*generate_arguments(DOCS), "--yes"], workspace.directory)
    try:
        wait_until(
            lambda: (
                bool(workspace.checkpoint_files())
                and finished_lines(workspace.checkpoint_files()[0]) >= 2
            )
        )
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "Error: Interrupted after" in stderr
    assert "of 12 questions; they are saved in the checkpoint" in stderr
    assert "Run the same command again to resume" in stderr
    assert not (workspace.directory / "questions.csv").exists()
