"""Runs that scale: concurrency, Message Batches, the response cache, prompt caching, budgets."""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from evaluate_support import (
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    start_cli_process,
    wait_until,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict

from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompts import DEFAULT_SYSTEM_PROMPT
from rag_evaluator.families.judge.voting import DEFAULT_HEDGE_PHRASES
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.selection import shuffled_order
from rag_evaluator.llm.cost import reserved_call_usd
from rag_evaluator.llm.models import resolve_model

POSIX_SIGNALS = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
SEED = 3
# Twenty questions: enough for concurrency and batches to matter.
MANY = {
    number: (
        f"What is the limit for item {number}?",
        f"The limit for item {number} is {number * 10} units.",
        f"Item {number} is limited to {number * 10} units.",
    )
    for number in range(1, 21)
}
RUN = ["evaluate", "--model", "haiku", "--yes", "--seed", str(SEED), "--delay", "0"]
HAIKU_IN, HAIKU_OUT = 0.10, 0.50


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory, MANY)
    return workspace


def script_mixed_verdicts(server: FakeAnthropicServer) -> None:
    server.script(MANY[4][0], verdict(0, 0, 1, summary="Wrong limit."))
    server.script(MANY[9][0], verdict(1, 0, 1, summary="Misses a unit."))
    # Question 12 hedges; its votes overturn recall. (A deterministic judge gives identical
    # requests identical answers, so the votes agree whatever order they arrive in.)
    server.script(
        MANY[12][0],
        verdict(reasoning="Recall is a close call here.", summary="First."),
        verdict(1, 0, 1, summary="Vote."),
    )


def table_of(path: Path) -> list[dict[str, str]]:
    return read_results(path).rows


def summary_cost(results_path: Path) -> float:
    return float(read_results(results_path).summary["Cost"].lstrip("$"))


def expected_cost(summary: dict[str, str], batch: bool = False) -> float:
    """What the summary's own token counts cost at Haiku's prices (cache rates included)."""
    written = read = 0
    if "Cache Tokens" in summary:
        parts = summary["Cache Tokens"].replace(",", "").split()
        written, read = int(parts[1]), int(parts[3])
    dollars = (
        int(summary["Tokens In"]) * HAIKU_IN
        + int(summary["Tokens Out"]) * HAIKU_OUT
        + written * HAIKU_IN * 1.25
        + read * HAIKU_IN * 0.1
    ) / 1_000_000
    return dollars / 2 if batch else dollars


# -- concurrency ----------------------------------------------------------------------------------


def test_a_concurrent_run_writes_the_same_table_as_a_sequential_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.05
    tables = []
    for name, concurrency in (("sequential", "1"), ("concurrent", "8")):
        (tmp_path / name).mkdir()
        workspace = prepare_workspace(tmp_path / name, monkeypatch)
        write_inputs(workspace.directory, MANY)
        script_mixed_verdicts(fake_anthropic)
        fake_anthropic.max_in_flight = 0
        result = run_cli([*RUN, "--no-cache", "--concurrency", concurrency])
        assert result.exit_code == 0, result.output
        if concurrency == "1":
            assert fake_anthropic.max_in_flight == 1
        else:
            assert 1 < fake_anthropic.max_in_flight <= 8
        results = only_results(workspace.directory)
        tables.append((results.summary_lines, results.rows))
    assert tables[0][0] == tables[1][0]
    for sequential_row, concurrent_row in zip(tables[0][1], tables[1][1], strict=True):
        assert sequential_row == concurrent_row
    rows = tables[1][1]
    hedged = next(row for row in rows if row["Question Number"] == "12")
    assert (hedged["Recall"], hedged["Consensus"], hedged["Reasoning"]) == ("0", "yes", "Vote.")


def test_a_rate_limited_concurrent_run_slows_down_and_finishes(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    limited = Fault.status(429, "rate limited", retry_after=0.05)
    for number in range(1, 21, 2):
        fake_anthropic.script(MANY[number][0], limited, limited, verdict())
    result = run_cli([*RUN, "--no-cache", "--concurrency", "8", "--max-retries", "3"])
    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.summary["Unscored"] == "0"
    assert results.summary["Precision"] == "20/20 (100%)"


def test_ctrl_c_with_calls_in_flight_keeps_finished_questions_and_records_none_twice(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.3
    process = start_cli_process([*RUN, "--no-cache", "--concurrency", "4"], workspace.directory)
    try:
        wait_until(
            lambda: any(
                path.read_text(encoding="utf-8").count('"type":"question"') >= 4
                for path in workspace.checkpoint_files()
            )
        )
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    [checkpoint] = workspace.checkpoint_files()
    saved = [
        json.loads(line)["question_number"]
        for line in checkpoint.read_text(encoding="utf-8").splitlines()[1:]
        if json.loads(line)["type"] == "question"
    ]
    assert len(saved) == len(set(saved)) >= 4
    fake_anthropic.response_delay_seconds = 0
    before = len(fake_anthropic.requests)
    resumed = run_cli([*RUN, "--no-cache", "--concurrency", "4"])
    assert resumed.exit_code == 0, resumed.output
    asked_again = {request.question for request in fake_anthropic.requests[before:]}
    assert asked_again == {MANY[n][0] for n in MANY if n not in saved}
    assert len(only_results(workspace.directory).rows) == 20


# -- Message Batches -------------------------------------------------------------------------------


def test_a_batch_run_sends_stages_as_batches_at_half_price(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    script_mixed_verdicts(fake_anthropic)
    # One request expires in the first batch and goes out again in a follow-up batch.
    fake_anthropic.script(MANY[7][0], Fault.batch_result("expired"), verdict())

    result = run_cli([*RUN, "--no-cache", "--batch", "--batch-poll", "0.01"])

    assert result.exit_code == 0, result.output
    assert all(request.batch_id is not None for request in fake_anthropic.requests)
    batches = [r for r in fake_anthropic.all_requests if r.path == "/v1/messages/batches"]
    # The first calls, the expired one again, then question 12's three consensus votes.
    assert [len(r.body["requests"]) for r in batches] == [20, 1, 3]
    results = only_results(workspace.directory)
    summary = results.summary
    assert summary["Batch"].startswith("yes")
    # 24 requests; the expired one never reached the model, so 23 calls.
    assert summary["Judge Calls"] == "23"
    assert summary["Precision"] == "19/20 (95%)"
    assert abs(summary_cost(results.path) - expected_cost(summary, batch=True)) < 0.00005
    assert "Message Batches, 50% off" in result.stderr
    assert results.row(12)["Votes"] == "first 1/1/1; votes 1/0/1, 1/0/1, 1/0/1"


def test_a_batch_run_in_windows_writes_what_one_window_does(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_mixed_verdicts(fake_anthropic)
    arguments = [*RUN, "--no-cache", "--batch", "--batch-poll", "0.01"]
    whole = run_cli(arguments)
    assert whole.exit_code == 0, whole.output
    rows = only_results(workspace.directory).rows
    for results in workspace.directory.glob("Evaluation_Runs/*"):
        results.unlink()
    before = len(fake_anthropic.all_requests)
    script_mixed_verdicts(fake_anthropic)  # the same replies again
    # About 2 KB of first requests a window: windows of a few questions each.
    monkeypatch.setenv("RAG_EVAL_BATCH_WINDOW_MB", "0.002")
    windowed = run_cli(arguments)
    assert windowed.exit_code == 0, windowed.output
    assert only_results(workspace.directory).rows == rows
    sizes = [
        len(r.body["requests"])
        for r in fake_anthropic.all_requests[before:]
        if r.path == "/v1/messages/batches"
    ]
    assert len(sizes) > 3 and sum(sizes) == 20 + 3  # every question once, 12's three votes


def test_a_batch_window_that_is_not_a_size_is_refused(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_EVAL_BATCH_WINDOW_MB", "0")
    result = run_cli([*RUN, "--no-cache", "--batch"])
    assert result.exit_code == 2
    assert "RAG_EVAL_BATCH_WINDOW_MB is '0', not a size in megabytes above 0" in result.output


def test_an_errored_batch_request_is_retried_then_unscored(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(MANY[5][0], Fault.refusal())
    result = run_cli([*RUN, "--no-cache", "--batch", "--batch-poll", "0.01"])
    assert result.exit_code == 1, result.output
    row = only_results(workspace.directory).row(5)
    assert row["Precision"] == ""
    assert row["Error"].startswith("the model refused to judge this question; gave up after 3")
    assert len(fake_anthropic.requests_about(MANY[5][0])) == 3


@POSIX_SIGNALS
def test_a_batch_run_killed_while_polling_resumes_the_same_batch(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.batch_polls_until_ended = 10**9  # never ends while the first run waits
    arguments = [*RUN, "--no-cache", "--batch", "--batch-poll", "0.02"]
    process = start_cli_process(arguments, workspace.directory)
    try:
        wait_until(
            lambda: any(
                '"type":"batch"' in path.read_text(encoding="utf-8")
                for path in workspace.checkpoint_files()
            )
        )
        process.kill()
    finally:
        process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert len(fake_anthropic.batches) == 1

    fake_anthropic.batch_polls_until_ended = 0
    resumed = run_cli(arguments)

    assert resumed.exit_code == 0, resumed.output
    assert "Collecting Message Batch msgbatch_fake_000001" in resumed.stderr
    # No second batch was paid for: the rerun polled the one the killed run created.
    assert len(fake_anthropic.batches) == 1
    assert len(fake_anthropic.requests) == 20
    assert len(only_results(workspace.directory).rows) == 20


# -- the response cache ----------------------------------------------------------------------------


def test_a_second_identical_run_makes_no_judge_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    script_mixed_verdicts(fake_anthropic)
    first = run_cli(RUN)
    assert first.exit_code == 0, first.output
    first_results = only_results(workspace.directory)
    calls_before = len(fake_anthropic.all_requests)

    second = run_cli(RUN)

    assert second.exit_code == 0, second.output
    assert len(fake_anthropic.all_requests) == calls_before  # not even the pre-flight check
    assert "Proceed?" not in second.stderr
    assert "From the response cache (no call): 20" in second.stderr
    runs = sorted(workspace.results())
    second_results = read_results(runs[-1])
    assert second_results.summary["Cached Questions"] == "20"
    assert second_results.summary["Judge Calls"] == "0"
    assert second_results.summary["Cost"] == "$0.00"
    scores = ("Precision", "Recall", "Accuracy", "Reasoning", "Consensus", "Votes")
    for old, new in zip(first_results.rows, second_results.rows, strict=True):
        assert [old[column] for column in scores] == [new[column] for column in scores]


def test_changing_some_answers_pays_only_for_them(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    assert run_cli(RUN).exit_code == 0
    before = len(fake_anthropic.requests)
    changed = dict(MANY)
    for number in (2, 17):
        question, truth, _ = MANY[number]
        changed[number] = (question, truth, "A different answer.")
    write_inputs(workspace.directory, changed)

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    asked = [request.question for request in fake_anthropic.requests[before:]]
    assert sorted(asked) == sorted([MANY[2][0], MANY[17][0]])
    assert read_results(sorted(workspace.results())[-1]).summary["Cached Questions"] == "18"


def test_no_cache_forces_fresh_calls(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    assert run_cli(RUN).exit_code == 0
    before = len(fake_anthropic.requests)
    assert run_cli([*RUN, "--no-cache"]).exit_code == 0
    assert len(fake_anthropic.requests) - before == 20


def test_a_damaged_cache_file_is_reported_and_never_fatal(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "broken-cache"
    cache_dir.mkdir()
    (cache_dir / "responses.sqlite3").write_bytes(b"this is not a database" * 100)
    result = run_cli(RUN, env={"RAG_EVAL_CACHE_DIR": str(cache_dir)})
    assert result.exit_code == 0, result.output
    message = " ".join(result.stderr.split())
    assert "The response cache" in message and "cannot be used" in message
    assert len(fake_anthropic.requests) == 20


def test_two_runs_at_once_share_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.02
    workspaces = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        workspace = prepare_workspace(tmp_path / name, monkeypatch)
        write_inputs(workspace.directory, MANY)
        workspaces.append(workspace)
    processes = [start_cli_process(RUN, workspace.directory) for workspace in workspaces]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    before = len(fake_anthropic.requests)
    again = run_cli(RUN)  # in the last workspace
    assert again.exit_code == 0, again.output
    assert len(fake_anthropic.requests) == before
    database = sqlite3.connect(next(Path(p) for p in [_cache_file()]))
    assert database.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 20
    database.close()


def _cache_file() -> Path:
    import os

    return Path(os.environ["RAG_EVAL_CACHE_DIR"]) / "responses.sqlite3"


# -- prompt caching, estimates, budgets ------------------------------------------------------------


def test_a_long_prompt_is_cached_and_the_summary_prices_cache_tokens(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Past Haiku's 4096-token minimum at 4 characters per token.
    (workspace.directory / "evaluation_prompt.txt").write_text(
        "Grade the answer against the ground truth with great care. " * 300, encoding="utf-8"
    )
    result = run_cli([*RUN, "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "prompt caching" in result.stderr
    results = only_results(workspace.directory)
    written, read = results.summary["Cache Tokens"].replace(",", "").split()[1::2]
    assert int(written) > 0 and int(read) == 19 * int(written)
    assert abs(summary_cost(results.path) - expected_cost(results.summary)) < 0.00005


def test_the_exact_estimate_counts_tokens_with_the_free_endpoint(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--no-cache", "--exact-estimate"])
    assert result.exit_code == 0, result.output
    counted = [r for r in fake_anthropic.all_requests if r.path == "/v1/messages/count_tokens"]
    assert len(counted) == 20
    assert "Estimated cost" in result.stderr
    estimate = only_results(workspace.directory).summary["Estimated Cost"]
    low = float(estimate.split()[0].lstrip("$"))
    tokens_in = int(only_results(workspace.directory).summary["Tokens In"])
    # The low end prices exactly the counted input (and short replies).
    assert low >= tokens_in * HAIKU_IN / 1_000_000


def test_max_cost_stops_cleanly_within_one_calls_cost_and_resumes(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # What the budget books for each call in flight: the most it can cost.
    judge = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    item = EvaluationItem(1, *MANY[1])
    one_call = reserved_call_usd(judge.request(item), resolve_model("haiku"))
    # The fake's calls cost far less than their reservation: a few fit in the fifth left over.
    budget = one_call * 1.2

    stopped = run_cli([*RUN, "--no-cache", "--max-cost", f"{budget:.6f}"])

    # A budget stop has its own exit code and writes what was scored, marked partial.
    assert stopped.exit_code == 4, stopped.output
    message = " ".join(stopped.stderr.split())
    assert "--max-cost budget of $" in message
    assert "run the same command again with a higher --max-cost" in message
    [partial] = workspace.results()
    partial_results = read_results(partial)
    assert partial_results.summary["Partial"].startswith("stopped at the --max-cost budget")
    assert 0 < len(partial_results.rows) < 20
    assert f"Evaluation_Runs/{partial.name}" in message
    [checkpoint] = workspace.checkpoint_files()
    lines = [json.loads(line) for line in checkpoint.read_text(encoding="utf-8").splitlines()[1:]]
    spent = sum(
        result["cost_usd"]
        for line in lines
        if line["type"] == "question"
        for result in line["families"].values()
    )
    # Stopped before passing the budget, with less than one more call's cost left in it.
    assert spent <= budget
    assert budget - spent < one_call * 1.1

    resumed = run_cli([*RUN, "--no-cache"])
    assert resumed.exit_code == 0, resumed.output
    complete = [read_results(path) for path in workspace.results() if path != partial]
    assert [len(results.rows) for results in complete] == [20]
    assert "Partial" not in complete[0].summary


def test_a_stop_between_a_hedged_verdict_and_its_votes_never_pays_for_the_verdict_again(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    order = shuffled_order(MANY, SEED)
    hedging = order[0]
    fake_anthropic.script(
        MANY[hedging][0],
        verdict(reasoning="Arguably complete.", summary="First."),
        Fault.status(401, "invalid x-api-key"),
    )
    stopped = run_cli([*RUN, "--no-cache"])
    assert stopped.exit_code == 2, stopped.output
    [checkpoint] = workspace.checkpoint_files()
    assert '"type":"stage"' in checkpoint.read_text(encoding="utf-8")
    fake_anthropic.script(MANY[hedging][0], verdict(1, 0, 1, summary="Vote."))
    before = len(fake_anthropic.requests_about(MANY[hedging][0]))

    resumed = run_cli([*RUN, "--no-cache"])

    assert resumed.exit_code == 0, resumed.output
    # Only the three votes: the hedging first verdict came from the checkpoint.
    assert len(fake_anthropic.requests_about(MANY[hedging][0])) - before == 3
    row = only_results(workspace.directory).row(hedging)
    assert row["Votes"] == "first 1/1/1; votes 1/0/1, 1/0/1, 1/0/1"
    assert row["Recall"] == "0"
