"""API faults through a whole ``rag-eval evaluate`` run, injected by the fake Messages API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    run_cli,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict

from rag_evaluator.inputs.selection import shuffled_order

SEED = 3
ORDER = shuffled_order(SAMPLE, SEED)
RUN = ["evaluate", "--model", "haiku", "--yes", "--seed", str(SEED), "--delay", "0"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    return workspace


def log_text(workspace: Workspace) -> str:
    return (workspace.directory / "rag_eval.log").read_text(encoding="utf-8")


# "Judge Calls" counts billed calls: an error status is not billed, nor is an answer that
# never came; the two attempts sent again are "Retries".
# A timeout of a second or more keeps a loaded machine's ordinary replies from timing out too;
# only the slow fault is meant to meet it.
TRANSIENT = [
    pytest.param(Fault.status(429, "rate limited", retry_after=0.01), r"-> 429", 5, id="429"),
    pytest.param(Fault.status(529, "overloaded", retry_after=0.01), r"-> 529", 5, id="529"),
    pytest.param(Fault.status(500, "internal", retry_after=0.01), r"-> 500", 5, id="500"),
    pytest.param(Fault.status(503, "unavailable", retry_after=0.01), r"-> 503", 5, id="503"),
    pytest.param(
        Fault.drop_connection(), r"failed after [\d.]+ s: APIConnectionError", 5, id="drop"
    ),
    pytest.param(Fault.slow(60.0), r"failed after [\d.]+ s: APITimeoutError", 5, id="slow"),
]


@pytest.mark.parametrize(("fault", "logged_attempt", "judge_calls"), TRANSIENT)
def test_a_transient_fault_on_two_questions_is_retried_and_logged_each_time(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    fault: Fault,
    logged_attempt: str,
    judge_calls: int,
) -> None:
    # The second and the fourth question of the order each meet the fault once.
    fake_anthropic.script(SAMPLE[ORDER[1]][0], fault, verdict(0, 1, 1))
    fake_anthropic.script(SAMPLE[ORDER[3]][0], fault, verdict(1, 0, 1))

    result = run_cli([*RUN, "--timeout", "1.5"])

    assert result.exit_code == 0, result.output
    assert len(fake_anthropic.requests) == 7
    results = only_results(workspace.directory)
    assert [row["Question Number"] for row in results.rows] == ["1", "2", "3", "4", "5"]
    assert results.summary["Unscored"] == "0"
    assert results.summary["Judge Calls"] == str(judge_calls)
    assert results.summary["Retries"].startswith("2 ")
    scores = {
        number: results.row(number)["Precision"] + results.row(number)["Recall"]
        for number in SAMPLE
    }
    assert scores[ORDER[1]] == "01"
    assert scores[ORDER[3]] == "10"
    log = log_text(workspace)
    # Each failed attempt and each retry of it are in the log, naming the question.
    assert len(re.findall(r"HTTP POST \S+ " + logged_attempt, log)) == 2
    for number in (ORDER[1], ORDER[3]):
        assert re.search(rf"question {number}: .*; retrying in [\d.]+ s \(retry 1 of 6\)", log)
        assert f"question {number}: " in result.stderr
    assert len(re.findall(r"HTTP POST \S+ -> 200", log)) == 5


def test_a_slow_reply_is_abandoned_at_the_timeout_option(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # With the default timeout (120 s) this reply would simply be waited for.
    fake_anthropic.fail_next(Fault.slow(60.0))

    result = run_cli([*RUN, "--timeout", "1.5"])

    assert result.exit_code == 0, result.output
    first, second = fake_anthropic.requests[:2]
    assert first.question == second.question == SAMPLE[ORDER[0]][0]
    log = log_text(workspace)
    assert "timeout=1.5s" in log
    # The client hung up at 1.5 s, long before the reply at 60 s.
    [waited] = re.findall(r"failed after ([\d.]+) s: APITimeoutError", log)
    assert 1.5 <= float(waited) < 60


def test_the_timeout_option_rejects_nonsense(workspace: Workspace) -> None:
    result = run_cli([*RUN, "--timeout", "0"])
    assert result.exit_code == 2
    assert "--timeout" in result.stderr


def test_a_fault_that_outlasts_every_retry_is_an_unscored_row_and_the_run_goes_on(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[ORDER[0]][0], Fault.status(529, "overloaded", retry_after=0.01))

    result = run_cli([*RUN, "--max-retries", "1"])

    assert result.exit_code == 1, result.output
    # The first attempt and one retry: the SDK's own retries are off, ours decide.
    assert len(fake_anthropic.requests_about(SAMPLE[ORDER[0]][0])) == 2
    results = only_results(workspace.directory)
    row = results.row(ORDER[0])
    assert (row["Precision"], row["Recall"], row["Accuracy"]) == ("", "", "")
    assert row["Error"] == "API overloaded (529); gave up after 2 attempts"
    assert results.summary["Unscored"] == "1"
    assert results.summary["Precision"] == "4/4 (100%)"
    assert "retry 1 of 1" in log_text(workspace)
    assert "could not be scored" in result.stderr


FATAL = [
    pytest.param(401, "invalid x-api-key", "rejected the API key", id="401"),
    pytest.param(403, "no access", "may not use model claude-haiku-5-5", id="403"),
    pytest.param(404, "model: claude-haiku-5-5", "does not know model claude-haiku-5-5", id="404"),
    pytest.param(402, "credit balance too low", "refused to bill", id="402"),
]


@pytest.mark.parametrize(("status", "api_message", "expected"), FATAL)
def test_a_fatal_fault_stops_at_its_first_occurrence_and_keeps_the_checkpoint(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    status: int,
    api_message: str,
    expected: str,
) -> None:
    fake_anthropic.script(SAMPLE[ORDER[1]][0], Fault.status(status, api_message))

    result = run_cli(RUN)

    assert result.exit_code == 2, result.output
    assert len(fake_anthropic.requests) == 2
    message = " ".join(result.stderr.split())
    assert expected in message
    assert "The finished question is kept" in message
    assert message.count("run the same command again to resume") == 1
    assert "Traceback" not in result.output
    assert result.stderr.count("Error:") == 1
    assert workspace.results() == []
    [checkpoint] = workspace.checkpoint_files()
    lines = checkpoint.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["question_number"] for line in lines[1:]] == [ORDER[0]]


def test_an_api_message_echoing_the_key_is_redacted_everywhere(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    key = fake_anthropic.expected_api_key
    # A per-question failure quotes the API's message in the row's Error, the checkpoint and
    # the log; the fatal one on the next question keeps the checkpoint for inspection.
    fake_anthropic.script(SAMPLE[ORDER[0]][0], Fault.status(400, f"bad header x-api-key: {key}"))
    fake_anthropic.script(SAMPLE[ORDER[1]][0], Fault.status(401, f"invalid x-api-key {key}"))

    stopped = run_cli(RUN)

    assert stopped.exit_code == 2, stopped.output
    [checkpoint] = workspace.checkpoint_files()
    saved = checkpoint.read_text(encoding="utf-8")
    assert "request rejected: bad header x-api-key: [REDACTED]" in saved
    texts = [stopped.stdout, stopped.stderr, saved, log_text(workspace)]

    fake_anthropic.script(SAMPLE[ORDER[1]][0], verdict())
    resumed = run_cli(RUN)

    assert resumed.exit_code == 1, resumed.output
    results = only_results(workspace.directory)
    assert results.row(ORDER[0])["Error"].startswith("request rejected: bad header x-api-key: [R")
    texts += [resumed.stdout, resumed.stderr, log_text(workspace), results.path.read_text("utf-8")]
    for text in texts:
        assert key not in text


def test_an_outage_stops_the_run_and_a_resume_asks_its_questions_again(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    down = Fault.status(503, "unavailable", retry_after=0.01)
    # The first question of the order is unscored for a reason of its own (not the outage).
    fake_anthropic.script(SAMPLE[ORDER[0]][0], Fault.status(400, "prompt is too long"))
    for number in ORDER[1:4]:
        fake_anthropic.script(SAMPLE[number][0], down, verdict())

    stopped = run_cli([*RUN, "--max-retries", "0"])

    # Questions 2 and 3 of the order run out of retries and the third in a row stops the run.
    assert stopped.exit_code == 2, stopped.output
    assert asked_in_order(fake_anthropic) == [ORDER[0]] * 3 + ORDER[1:4]
    message = " ".join(stopped.stderr.split())
    assert "kept failing for 3 questions in a row (API error (503)" in message
    assert stopped.stderr.count("Error:") == 1
    assert "The finished question is kept" in message
    assert message.count("run the same command again to resume") == 1
    assert workspace.results() == []
    [checkpoint] = workspace.checkpoint_files()
    lines = checkpoint.read_text(encoding="utf-8").splitlines()
    # The unscored rows the outage caused were never kept; the one with its own reason was.
    assert [json.loads(line)["question_number"] for line in lines[1:]] == [ORDER[0]]

    before = len(fake_anthropic.requests)
    resumed = run_cli([*RUN, "--max-retries", "0"])

    assert resumed.exit_code == 1, resumed.output
    assert asked_in_order(fake_anthropic)[before:] == ORDER[1:]
    results = only_results(workspace.directory)
    assert results.summary["Unscored"] == "1"
    assert results.row(ORDER[0])["Error"].startswith("request rejected: prompt is too long")
    assert results.summary["Precision"] == "4/4 (100%)"


def test_failed_consensus_votes_are_not_an_outage(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    down = Fault.status(503, "unavailable", retry_after=0.01)
    fake_anthropic.script(SAMPLE[ORDER[0]][0], Fault.status(400, "prompt is too long"))
    # The second question hedges; every one of its three votes fails on transient errors.
    fake_anthropic.script(
        SAMPLE[ORDER[1]][0], verdict(reasoning="A close call on recall."), down, down, down
    )

    result = run_cli([*RUN, "--max-retries", "0"])

    # Three failed calls of one question are one question, not an outage: the run goes on,
    # and the earlier unscored row stays.
    assert result.exit_code == 1, result.output
    results = only_results(workspace.directory)
    assert results.summary["Total Questions"] == "5"
    assert results.row(ORDER[0])["Error"].startswith("request rejected")
    hedged = results.row(ORDER[1])
    assert hedged["Consensus"] == "yes"
    assert hedged["Votes"] == "first 1/1/1; votes error, error, error"
    assert "all 3 consensus calls failed; the first verdict was kept" in hedged["Note"]


def asked_in_order(server: FakeAnthropicServer) -> list[int]:
    by_text = {texts[0]: number for number, texts in SAMPLE.items()}
    return [by_text[request.question or ""] for request in server.requests]
