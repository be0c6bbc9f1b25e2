"""Checkpoints, resume, crashes, interruptions, fatal API errors and the API key's secrecy."""

from __future__ import annotations

import json
import signal
import stat
import sys
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    finished_lines,
    only_results,
    prepare_workspace,
    run_cli,
    run_in_terminal,
    start_cli_process,
    wait_until,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, RecordedRequest, verdict

from rag_evaluator.inputs.selection import shuffled_order

POSIX_SIGNALS = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
SEED = 5
ORDER = shuffled_order(SAMPLE, SEED)
CLEAN_VERDICT = verdict(1, 1, 1)
# Without the response cache: these tests are about what the checkpoint alone keeps.
RUN = ["evaluate", "--model", "haiku", "--seed", str(SEED), "--delay", "0", "--no-cache"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    return workspace


def asked_numbers(server: FakeAnthropicServer, start: int = 0) -> list[int]:
    by_text = {texts[0]: number for number, texts in SAMPLE.items()}
    return [by_text[request.question or ""] for request in server.requests[start:]]


def checkpointed_numbers(checkpoint: Path) -> list[int]:
    """The finished questions of a checkpoint, in the order they were saved."""
    lines = [json.loads(line) for line in checkpoint.read_text(encoding="utf-8").splitlines()[1:]]
    return [line["question_number"] for line in lines if line["type"] == "question"]


def stop_at_third_question(workspace: Workspace, server: FakeAnthropicServer) -> Path:
    """Run until a 401 on the third question of the order; return the kept checkpoint."""
    server.script(SAMPLE[ORDER[2]][0], Fault.status(401, "invalid x-api-key"))
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 2, result.output
    [checkpoint] = workspace.checkpoint_files()
    server.script(SAMPLE[ORDER[2]][0], CLEAN_VERDICT)
    return checkpoint


def test_a_fatal_error_stops_at_once_and_keeps_the_checkpoint(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[ORDER[2]][0], Fault.status(401, "invalid x-api-key"))
    result = run_cli([*RUN, "--yes"])

    assert result.exit_code == 2, result.output
    assert asked_numbers(fake_anthropic) == ORDER[:3]
    message = " ".join(result.stderr.split())
    assert "rejected the API key" in message
    assert "ANTHROPIC_API_KEY" in message
    assert "run the same command again to resume" in message
    assert "Traceback" not in result.output
    assert workspace.results() == []
    [checkpoint] = workspace.checkpoint_files()
    assert checkpointed_numbers(checkpoint) == ORDER[:2]
    assert stat.S_IMODE(checkpoint.stat().st_mode) == 0o600
    assert stat.S_IMODE(checkpoint.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("model", "key", "expected"),
    [
        ("claude-haiku-9-9", None, "does not know model claude-haiku-9-9"),
        ("haiku", "sk-ant-wrong-key-000000", "rejected the API key"),
    ],
)
def test_a_bad_key_or_unknown_model_stops_before_the_cost_prompt_and_any_call(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    key: str | None,
    expected: str,
) -> None:
    if key is not None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    result = run_cli(["evaluate", "--model", model, "--yes", "--delay", "0"])
    assert result.exit_code == 2, result.output
    # Only the free models endpoint was asked, before the plan and its "Proceed?".
    assert fake_anthropic.requests == []
    assert [request.path for request in fake_anthropic.all_requests] == [
        f"/v1/models/{'claude-haiku-5-5' if model == 'haiku' else model}"
    ]
    assert expected in " ".join(result.stderr.split())
    assert "Estimated cost" not in result.stderr
    assert "Proceed?" not in result.stderr
    assert workspace.checkpoint_files() == []


def test_an_unreachable_api_stops_before_the_cost_prompt(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert "Could not reach the Anthropic API at http://127.0.0.1:9" in message
    assert "Check your network" in message
    assert "Proceed?" not in message


def test_resume_continues_with_the_saved_order_and_results(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    before = len(fake_anthropic.requests)

    # A different --seed does not change a resumed run's order.
    result = run_in_terminal(
        ["evaluate", "--model", "haiku", "--seed", "77", "--delay", "0", "--no-cache"],
        workspace.directory,
        [("Resume previous run? [Y/n]", "y"), ("Proceed? [Y/n]", "y")],
    )

    assert result.exit_code == 0, result.output
    assert "Found an unfinished run of these files" in result.text
    assert "2 of 5 questions done" in result.text
    assert "--seed 77 is ignored" in result.text
    assert asked_numbers(fake_anthropic, before) == ORDER[2:]
    results = only_results(workspace.directory)
    assert [row["Question Number"] for row in results.rows] == ["1", "2", "3", "4", "5"]
    assert results.summary["Seed"] == str(SEED)
    assert results.summary["Judge Calls"] == "5"
    assert not checkpoint.exists()


def test_declining_to_resume_starts_over(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    old_content = checkpoint.read_bytes()
    before = len(fake_anthropic.requests)
    result = run_in_terminal(
        RUN,
        workspace.directory,
        [("Resume previous run? [Y/n]", "n"), ("Proceed? [Y/n]", "y")],
    )
    assert result.exit_code == 0, result.output
    assert asked_numbers(fake_anthropic, before) == ORDER
    # The declined run's paid-for verdicts are kept aside, never deleted silently.
    [kept] = workspace.checkpoints.glob("run-*.*.jsonl")
    assert kept.read_bytes() == old_content
    assert f"kept as {kept}" in result.text
    assert workspace.checkpoint_files() == [kept]  # the new run finished and removed its own


def test_declining_to_proceed_keeps_the_checkpoint_untouched(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    content = checkpoint.read_bytes()
    before = len(fake_anthropic.requests)
    result = run_in_terminal(
        RUN,
        workspace.directory,
        [("Resume previous run? [Y/n]", "n"), ("Proceed? [Y/n]", "n")],
    )
    assert result.exit_code == 0, result.output
    assert "Nothing was evaluated." in result.text
    assert len(fake_anthropic.requests) == before
    assert checkpoint.read_bytes() == content
    assert workspace.results() == []


def test_a_torn_last_line_is_ignored(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    with checkpoint.open("ab") as handle:
        handle.write(b'{"type":"question","question_number":' + str(ORDER[2]).encode())
    before = len(fake_anthropic.requests)

    result = run_cli([*RUN, "--yes"])

    assert result.exit_code == 0, result.output
    assert "cut short" in result.stderr
    assert asked_numbers(fake_anthropic, before) == ORDER[2:]
    assert len(only_results(workspace.directory).rows) == 5


def test_a_damaged_checkpoint_says_which_file_to_delete(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    header, _first, second = checkpoint.read_bytes().splitlines(keepends=True)
    checkpoint.write_bytes(header + b"#garbage#\n" + second)
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 2, result.output
    assert f"Delete {checkpoint}" in " ".join(result.stderr.replace("\n", "").split())


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("answers", "the content of rag_answers.csv"),
        ("model", "the model (was claude-haiku-5-5, now claude-sonnet-5-5)"),
        ("prompt", "the system prompt"),
    ],
)
def test_a_checkpoint_with_another_fingerprint_is_refused_with_the_reason(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, change: str, reason: str
) -> None:
    checkpoint = stop_at_third_question(workspace, fake_anthropic)
    arguments = list(RUN)
    if change == "answers":
        with (workspace.directory / "rag_answers.csv").open("a", encoding="utf-8") as handle:
            handle.write("6,An extra answer\n")
    elif change == "model":
        arguments[arguments.index("haiku")] = "sonnet"
    else:
        (workspace.directory / "evaluation_prompt.txt").write_text("Be strict.\n")
    before = len(fake_anthropic.requests)
    content = checkpoint.read_bytes()

    refused = run_in_terminal(
        arguments, workspace.directory, [("Discard it and start a new run? [y/N]", "")]
    )

    assert refused.exit_code == 2, refused.output
    message = refused.text
    assert reason in message
    assert "Resume previous run?" not in message
    assert len(fake_anthropic.requests) == before
    assert checkpoint.read_bytes() == content

    fresh = run_cli([*arguments, "--yes"])
    assert fresh.exit_code == 0, fresh.output
    assert sorted(asked_numbers(fake_anthropic, before)) == [1, 2, 3, 4, 5]


@POSIX_SIGNALS
def test_kill_9_then_resume_loses_nothing_and_duplicates_nothing(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.3
    process = start_cli_process([*RUN, "--yes"], workspace.directory)
    try:
        wait_until(lambda: any(finished_lines(p) >= 2 for p in workspace.checkpoint_files()))
        process.kill()
    finally:
        process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    [checkpoint] = workspace.checkpoint_files()
    done_before = checkpointed_numbers(checkpoint)
    assert 2 <= len(done_before) < 5
    assert done_before == ORDER[: len(done_before)]

    fake_anthropic.response_delay_seconds = 0
    before = len(fake_anthropic.requests)
    rerun = start_cli_process([*RUN, "--yes"], workspace.directory)
    stdout, stderr = rerun.communicate(timeout=60)

    assert rerun.returncode == 0, stderr
    assert "Resume previous run? [Y/n] y (--yes)" in stderr
    asked_again = asked_numbers(fake_anthropic, before)
    assert asked_again == [number for number in ORDER if number not in done_before]
    results = only_results(workspace.directory)
    numbers = [row["Question Number"] for row in results.rows]
    assert numbers == ["1", "2", "3", "4", "5"]
    assert all(row["Precision"] == "1" for row in results.rows)
    assert "Precision" in stdout
    assert workspace.checkpoint_files() == []


@POSIX_SIGNALS
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "term"])
def test_ctrl_c_stops_promptly_keeps_the_checkpoint_and_says_how_to_resume(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, stop_signal: signal.Signals
) -> None:
    # Slow enough that the run is still going when the signal arrives, even on a busy machine.
    fake_anthropic.response_delay_seconds = 1.5
    process = start_cli_process([*RUN, "--yes"], workspace.directory)
    try:
        wait_until(lambda: any(finished_lines(p) >= 1 for p in workspace.checkpoint_files()))
        # The next question's call is in flight (recorded on arrival, answered 1.5 s later).
        wait_until(lambda: len(fake_anthropic.requests) >= 2)
        process.send_signal(stop_signal)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    message = " ".join(stderr.split())
    assert message.count("Interrupted after") == 1
    # The call in flight (made on the run's own thread) is waited for, and the user told so.
    assert "Stopping: waiting for 1 call(s) in flight" in message
    assert "run the same command again to resume" in message.lower()
    assert "Traceback" not in stderr
    [checkpoint] = workspace.checkpoint_files()
    assert len(checkpointed_numbers(checkpoint)) >= 1
    assert workspace.results() == []


def test_the_api_key_is_never_written_anywhere(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    key = fake_anthropic.expected_api_key
    # Even an API error that echoes the key back must not leak it.
    fake_anthropic.script(SAMPLE[ORDER[2]][0], Fault.status(401, f"invalid x-api-key {key}"))
    stopped = run_cli([*RUN, "--yes"])
    assert stopped.exit_code == 2, stopped.output
    [checkpoint] = workspace.checkpoint_files()
    outputs = [
        stopped.stdout,
        stopped.stderr,
        checkpoint.read_text(encoding="utf-8"),
        (workspace.directory / "rag_eval.log").read_text(encoding="utf-8"),
    ]
    fake_anthropic.script(SAMPLE[ORDER[2]][0], CLEAN_VERDICT)
    resumed = run_cli([*RUN, "--yes"])
    assert resumed.exit_code == 0, resumed.output
    outputs += [
        resumed.stdout,
        resumed.stderr,
        (workspace.directory / "rag_eval.log").read_text(encoding="utf-8"),
        only_results(workspace.directory).path.read_text(encoding="utf-8"),
    ]
    assert "HTTP POST" in outputs[-2]  # the log does hold the requests' metadata
    for output in outputs:
        assert key not in output
        assert key[-12:] not in output


def test_each_question_is_in_the_checkpoint_before_the_next_call_is_sent(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    hedging = verdict(reasoning="Arguably complete.")
    fake_anthropic.script(SAMPLE[ORDER[1]][0], hedging, CLEAN_VERDICT)
    seen: list[tuple[int, list[int]]] = []

    def look_at_the_checkpoint(request: RecordedRequest) -> None:
        files = workspace.checkpoint_files()
        saved = checkpointed_numbers(files[0]) if files else []
        seen.append((asked_numbers(fake_anthropic)[-1], saved))

    fake_anthropic.on_request = look_at_the_checkpoint
    result = run_cli([*RUN, "--yes"])

    assert result.exit_code == 0, result.output
    # Question ORDER[1] hedges: its 3 consensus calls come before it is saved.
    assert seen == [
        (ORDER[0], []),
        (ORDER[1], ORDER[:1]),
        (ORDER[1], ORDER[:1]),
        (ORDER[1], ORDER[:1]),
        (ORDER[1], ORDER[:1]),
        (ORDER[2], ORDER[:2]),
        (ORDER[3], ORDER[:3]),
        (ORDER[4], ORDER[:4]),
    ]


def test_a_crash_after_the_last_question_resumes_without_any_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    output_dir = workspace.directory / "Evaluation_Runs"

    def break_the_output_folder_at_the_last_call(request: RecordedRequest) -> None:
        if len(fake_anthropic.requests) == len(ORDER) and output_dir.is_dir():
            output_dir.rmdir()
            output_dir.write_text("in the way")

    fake_anthropic.on_request = break_the_output_folder_at_the_last_call
    failed = run_cli([*RUN, "--yes"])

    assert failed.exit_code == 2, failed.output
    assert "Cannot write the results file" in " ".join(failed.stderr.split())
    [checkpoint] = workspace.checkpoint_files()
    assert sorted(checkpointed_numbers(checkpoint)) == sorted(ORDER)

    output_dir.unlink()
    fake_anthropic.on_request = None
    before = len(fake_anthropic.requests)
    rerun = run_cli([*RUN, "--yes"])

    assert rerun.exit_code == 0, rerun.output
    assert "5 of 5 questions done" in rerun.stderr
    assert "Proceed?" not in rerun.stderr
    assert len(fake_anthropic.requests) == before
    assert len(only_results(workspace.directory).rows) == 5
    assert workspace.checkpoint_files() == []


@POSIX_SIGNALS
def test_kill_9_during_the_first_call_leaves_nothing_to_resume(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 30
    process = start_cli_process([*RUN, "--yes"], workspace.directory)
    try:
        wait_until(lambda: len(fake_anthropic.requests) >= 1)
        process.kill()
    finally:
        process.communicate(timeout=30)
    [checkpoint] = workspace.checkpoint_files()
    assert checkpointed_numbers(checkpoint) == []

    fake_anthropic.response_delay_seconds = 0
    before = len(fake_anthropic.requests)
    rerun = start_cli_process([*RUN, "--yes"], workspace.directory)
    _, stderr = rerun.communicate(timeout=60)

    assert rerun.returncode == 0, stderr
    assert "Resume previous run?" not in stderr
    assert asked_numbers(fake_anthropic, before) == ORDER
    assert len(only_results(workspace.directory).rows) == 5


@POSIX_SIGNALS
def test_a_second_run_over_the_same_files_waits_its_turn(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Two runs appending to one checkpoint would interleave their answers and damage it.
    fake_anthropic.response_delay_seconds = 0.3
    first = start_cli_process([*RUN, "--yes"], workspace.directory)
    try:
        wait_until(lambda: len(fake_anthropic.requests) >= 1)
        second = run_cli([*RUN, "--yes"])
        assert second.exit_code == 2, second.output
        message = " ".join(second.stderr.split())
        assert "Another rag-eval run over these input files is in progress" in message
        assert f"(process {first.pid})" in message
        assert "Traceback" not in second.output
    finally:
        fake_anthropic.response_delay_seconds = 0
        _stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 0, stderr
    assert len(only_results(workspace.directory).rows) == 5
    assert asked_numbers(fake_anthropic) == ORDER

    # Once the first run is over, the files are free again (the lock file stays, unheld).
    again = run_cli([*RUN, "--yes"])
    assert again.exit_code == 0, again.output
    assert len(list(workspace.checkpoints.glob("*.lock"))) == 1
