"""Spend safety at the edges (issue 21): nothing paid twice, budgets across resumes, faults.

Every test runs the command line against the fake API, which bills each answer it gives by
request body (``billed``): a request answered twice where one answer was kept is money lost.
"""

from __future__ import annotations

import _thread
import json
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from evaluate_support import (
    Workspace,
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
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.llm.cost import call_cost, reserved_call_usd
from rag_evaluator.llm.models import resolve_model
from rag_evaluator.text.money import format_usd

POSIX_SIGNALS = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
QUESTIONS = {
    number: (
        f"What is the limit for item {number}?",
        f"The limit for item {number} is {number * 10} units.",
        f"Item {number} is limited to {number * 10} units.",
    )
    for number in range(1, 9)
}
RUN = ["evaluate", "--model", "haiku", "--yes", "--seed", "5", "--no-cache"]
BATCH = [*RUN, "--batch", "--batch-poll", "0.01"]
HEDGED = "Recall is a close call here."


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory, QUESTIONS)
    return workspace


def checkpoint_lines(workspace: Workspace) -> list[dict]:
    [checkpoint] = workspace.checkpoint_files()
    return [json.loads(line) for line in checkpoint.read_text(encoding="utf-8").splitlines()]


def all_results(workspace: Workspace) -> list:
    return [read_results(path) for path in workspace.results()]


def press_ctrl_c() -> None:
    """A real Ctrl-C for the command running in this process (SIGINT to the main thread)."""
    _thread.interrupt_main(signal.SIGINT)


def one_call_usd() -> float:
    judge = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    item = EvaluationItem(1, *QUESTIONS[1])
    return reserved_call_usd(judge.request(item), resolve_model("haiku"))


def uninterrupted_billing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str], script
) -> Counter[str]:  # type: ignore[no-untyped-def]
    """What an uninterrupted run of ``arguments`` is billed, by request body."""
    with FakeAnthropicServer() as reference:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", reference.base_url)
        script(reference)
        folder = tmp_path / "reference"
        folder.mkdir()
        workspace = prepare_workspace(folder, monkeypatch)
        write_inputs(workspace.directory, QUESTIONS)
        result = run_cli(arguments)
        assert result.exit_code == 0, result.output
        return Counter(reference.billed)


# -- Message Batches: results durable before a batch counts as done -----------------------------


def test_a_stop_while_a_follow_up_batch_is_pending_never_pays_for_collected_results(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # One request expires in the first batch: it goes out again in a follow-up batch, which
    # the user stops waiting for.
    fake_anthropic.script(QUESTIONS[3][0], Fault.batch_result("expired"), verdict())
    created: list[str] = []

    def on_created(batch_id: str) -> None:
        created.append(batch_id)
        if len(created) == 2:
            fake_anthropic.hold_batch(batch_id)

    fake_anthropic.on_batch_created = on_created
    follow_up_polls: list[str] = []

    def on_poll(batch_id: str) -> None:
        if len(created) == 2 and batch_id == created[1]:
            follow_up_polls.append(batch_id)
            if len(follow_up_polls) == 2:
                press_ctrl_c()

    fake_anthropic.on_batch_poll = on_poll
    stopped = run_cli(BATCH)
    assert stopped.exit_code == 130, stopped.output
    assert "the next run collects them" in " ".join(stopped.stderr.split())
    lines = checkpoint_lines(workspace)
    done = next(index for index, line in enumerate(lines) if line["type"] == "batch_done")
    # The first batch's seven answers are in the checkpoint before it is marked done.
    kept = {
        line["question_number"]
        for line in lines[:done]
        if line["type"] == "stage" and any(o and o["payload"] for o in line["outcomes"])
    }
    assert len(kept) == 7

    fake_anthropic.on_batch_poll = None
    fake_anthropic.hold_batch(created[1], False)
    resumed = run_cli(BATCH)
    assert resumed.exit_code == 0, resumed.output
    assert fake_anthropic.paid_twice() == []
    assert len(created) == 2  # the rerun collected the follow-up batch, created nothing
    [results] = all_results(workspace)
    assert len(results.rows) == 8 and results.summary["Unscored"] == "0"


def test_a_resume_without_batch_never_sends_again_what_open_batches_hold(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # The user stops waiting for a batch; the API ends it later, as it does.
    created: list[str] = []

    def on_created(batch_id: str) -> None:
        created.append(batch_id)
        fake_anthropic.hold_batch(batch_id)

    fake_anthropic.on_batch_created = on_created
    fake_anthropic.on_batch_poll = lambda batch_id: press_ctrl_c()
    stopped = run_cli(BATCH)
    assert stopped.exit_code == 130, stopped.output
    fake_anthropic.hold_batch(created[0], hold=False)
    fake_anthropic.on_batch_poll = None
    billed = Counter(fake_anthropic.billed)

    direct = run_cli(RUN, input_text="y\n")

    assert direct.exit_code == 2, direct.output
    message = " ".join(direct.stderr.split())
    assert "left 1 Message Batch(es) open" in message and "with --batch" in message
    assert fake_anthropic.billed == billed  # nothing sent again
    collected = run_cli(BATCH, input_text="y\n")
    assert collected.exit_code == 0, collected.output
    assert fake_anthropic.paid_twice() == []


def test_a_stage_split_into_batches_creates_them_all_before_polling(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_evaluator.llm import batches

    monkeypatch.setattr(batches, "MAX_REQUESTS_PER_BATCH", 3)
    result = run_cli(BATCH)
    assert result.exit_code == 0, result.output
    served = [request.served for request in fake_anthropic.all_requests]
    creates = [index for index, kind in enumerate(served) if kind == "batch_create"]
    polls = [index for index, kind in enumerate(served) if kind == "batch_retrieve"]
    assert len(creates) == 3
    assert max(creates) < min(polls)


# -- the budget covers the whole run ------------------------------------------------------------


def test_max_cost_covers_every_resume_of_a_run(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    budget = one_call_usd() * 1.5  # a couple of the fake's cheap calls
    arguments = [*RUN, "--delay", "0", "--max-cost", f"{budget:.6f}"]
    first = run_cli(arguments)
    assert first.exit_code == 4, first.output
    billed_after_first = fake_anthropic.billed_total()
    assert 0 < billed_after_first < 8
    for _ in range(3):
        again = run_cli(arguments)
        assert again.exit_code == 4, again.output
    # Each rerun starts from what the run has spent: it cannot spend the budget again.
    spent = sum(
        result["cost_usd"]
        for line in checkpoint_lines(workspace)
        if line["type"] == "question"
        for result in line["families"].values()
    )
    assert spent <= budget
    assert fake_anthropic.billed_total() == billed_after_first
    message = " ".join(again.stderr.split())
    assert "spent by this run so far, resumed sessions included" in message
    # The last session's estimate covers what was left; its Cost every session.
    finished = run_cli([*RUN, "--delay", "0"])
    assert finished.exit_code == 0, finished.output
    summary = all_results(workspace)[-1].summary
    assert summary["Estimated Cost"].endswith(" (the calls left at the resume)")


def test_a_budget_stop_keeps_the_calls_in_flight_of_the_same_question(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every verdict hedges: each question sends 3 votes at once; the budget runs out among
    # them, with votes of the same question in flight.
    def hedging(server: FakeAnthropicServer) -> None:
        for number in QUESTIONS:
            server.script(QUESTIONS[number][0], verdict(reasoning=HEDGED), verdict())

    expected = uninterrupted_billing(
        tmp_path, monkeypatch, [*RUN, "--delay", "0", "--concurrency", "4"], hedging
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    monkeypatch.chdir(workspace.directory)
    hedging(fake_anthropic)
    fake_anthropic.response_delay_seconds = 0.1
    budget = one_call_usd() * 4.5  # four calls in flight, and a little spent
    arguments = [*RUN, "--delay", "0", "--concurrency", "4"]
    stopped = run_cli([*arguments, "--max-cost", f"{budget:.6f}"])
    assert stopped.exit_code == 4, stopped.output
    fake_anthropic.response_delay_seconds = 0
    resumed = run_cli(arguments)
    assert resumed.exit_code == 0, resumed.output
    # Every answer billed in the stopped run was kept: the resume paid for none again.
    assert fake_anthropic.paid_twice(expected) == []
    assert fake_anthropic.billed == expected


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_long_replies_never_take_the_spending_past_the_budget(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, concurrency: str
) -> None:
    # Every verdict reasons at length: about 1,750 output tokens, far more than a usual reply
    # but within the judge's max_tokens. The budget holds about two such calls.
    for question, _, _ in QUESTIONS.values():
        fake_anthropic.script(question, verdict(reasoning="weighing it " * 580))
    budget = 0.002
    fake_anthropic.response_delay_seconds = 0.05  # calls overlap at --concurrency 8
    stopped = run_cli([*RUN, "--delay", "0", "--concurrency", concurrency, "--max-cost", "0.002"])

    assert stopped.exit_code == 4, stopped.output
    haiku = resolve_model("haiku")
    billed = [TokenUsage(**request.usage) for request in fake_anthropic.requests if request.usage]
    assert billed and max(usage.output_tokens for usage in billed) > 1500
    assert sum(call_cost(usage, haiku) for usage in billed) <= budget


def test_a_budget_stop_counts_the_calls_of_unfinished_questions_and_says_what_was_spent(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Every verdict hedges: the budget stops the run with questions between their first call
    # and their votes, and calls in flight at the stop still settle their cost.
    for question, _, _ in QUESTIONS.values():
        fake_anthropic.script(question, verdict(reasoning=HEDGED), verdict())
    fake_anthropic.response_delay_seconds = 0.05
    budget = one_call_usd() * 4.5
    arguments = [*RUN, "--delay", "0", "--concurrency", "4", "--max-cost", f"{budget:.6f}"]

    stopped = run_cli(arguments)

    assert stopped.exit_code == 4, stopped.output
    haiku = resolve_model("haiku")
    billed = [TokenUsage(**request.usage) for request in fake_anthropic.requests if request.usage]
    spent = format_usd(sum(call_cost(usage, haiku) for usage in billed))
    [partial] = all_results(workspace)
    assert len(partial.rows) < len(QUESTIONS)
    assert partial.summary["Judge Calls"] == str(len(billed))
    assert partial.summary["Tokens Out"] == str(sum(usage.output_tokens for usage in billed))
    assert partial.summary["Cost"] == spent
    assert f"({spent} spent by this run so far" in " ".join(stopped.stderr.split())


# -- replies and checkpoints that resume must survive --------------------------------------------


def test_a_saved_reply_that_no_longer_parses_is_asked_again_on_resume(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(QUESTIONS[2][0], verdict(reasoning=HEDGED), verdict())
    fake_anthropic.on_request = lambda request: (
        press_ctrl_c()
        if request.question == QUESTIONS[2][0]
        and len(fake_anthropic.requests_about(QUESTIONS[2][0])) == 2
        else None
    )
    stopped = run_cli([*RUN, "--delay", "0"])
    assert stopped.exit_code == 130, stopped.output
    fake_anthropic.on_request = None
    [checkpoint] = workspace.checkpoint_files()
    lines = checkpoint.read_text(encoding="utf-8").splitlines()
    stage_lines = [index for index, line in enumerate(lines) if '"type":"stage"' in line]
    assert stage_lines
    for index in stage_lines:
        stage = json.loads(lines[index])
        for outcome in stage["outcomes"]:
            if outcome and outcome["payload"]:
                del outcome["payload"]["recall"]  # an answer today's parser refuses
        lines[index] = json.dumps(stage, separators=(",", ":"))
    checkpoint.write_text("\n".join(lines) + "\n", encoding="utf-8")
    asked = len(fake_anthropic.requests_about(QUESTIONS[2][0]))
    resumed = run_cli([*RUN, "--delay", "0"])
    assert resumed.exit_code == 0, resumed.output
    assert len(fake_anthropic.requests_about(QUESTIONS[2][0])) > asked


def test_a_checkpoint_whose_last_line_lacks_its_newline_resumes_and_loses_nothing(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.on_request = lambda request: (
        press_ctrl_c() if len(fake_anthropic.requests) == 4 else None
    )
    stopped = run_cli([*RUN, "--delay", "0"])
    assert stopped.exit_code == 130, stopped.output
    fake_anthropic.on_request = None
    [checkpoint] = workspace.checkpoint_files()
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data.rstrip(b"\n"))
    saved = data.count(b'"type":"question"')
    for _ in range(2):  # the second resume reads what the first appended
        resumed = run_cli([*RUN, "--delay", "0", "--limit", str(saved + 1)])
        assert resumed.exit_code == 0, resumed.output
        assert "damaged" not in resumed.stderr
        saved += 1
    assert fake_anthropic.paid_twice() == []


# -- pacing ------------------------------------------------------------------------------------


def test_a_concurrent_run_is_not_paced_by_the_sequential_delay(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.3
    result = run_cli([*RUN, "--concurrency", "4"])
    assert result.exit_code == 0, result.output
    # With the 0.5 s spacing of a sequential run, a 0.3 s call would be alone in flight.
    assert fake_anthropic.max_in_flight == 4


def test_the_estimate_holds_a_run_where_every_verdict_hedges(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--delay", "0", "--hedge-phrases", "the answer"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stderr.split())
    low, high = (
        int(value)
        for value in text.split("Estimated cost: ")[1]
        .split("(")[1]
        .split(" calls")[0]
        .split(" to ")
    )
    calls = int(read_results(only(workspace.results())).summary["Judge Calls"])
    assert calls == 32  # every default verdict says "the answer": 8 x (1 + 3 votes)
    assert low <= calls <= high


def only(paths: list[Path]) -> Path:
    assert len(paths) == 1, paths
    return paths[0]


# -- API text, malformed replies, deadlines ------------------------------------------------------


def test_an_errored_batch_entry_echoing_the_key_never_reaches_a_file_or_the_terminal(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    key = fake_anthropic.expected_api_key
    fake_anthropic.script(
        QUESTIONS[2][0], Fault.status(400, f"invalid header: Bearer {key} is malformed")
    )
    result = run_cli([*BATCH, "--json", "--report"])
    assert result.exit_code == 1, result.output
    assert key not in result.output and key not in result.stderr
    for path in workspace.directory.rglob("*"):
        if path.is_file():
            assert key not in path.read_text(encoding="utf-8", errors="replace"), path


def test_a_batch_refused_with_a_key_echoing_message_prints_it_redacted(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    key = fake_anthropic.expected_api_key
    fake_anthropic.script(QUESTIONS[2][0], Fault.status(401, f"invalid x-api-key {key}"))
    result = run_cli(BATCH)
    assert result.exit_code == 2, result.output
    text = " ".join(result.stderr.split())
    assert "rejected the API key" in text and "[REDACTED]" in text
    assert key not in result.output and key not in result.stderr
    for path in workspace.directory.rglob("*"):
        if path.is_file():
            assert key not in path.read_text(encoding="utf-8", errors="replace"), path


@pytest.mark.parametrize("shape", ["json", "html", "empty", "schema", "no_usage", "usage"])
def test_a_200_reply_that_is_not_a_message_is_retried_like_a_5xx(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, shape: str
) -> None:
    fake_anthropic.script(QUESTIONS[3][0], Fault.malformed(shape), verdict())
    result = run_cli([*RUN, "--delay", "0", "--concurrency", "4", "--json"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    [results] = all_results(workspace)
    assert results.summary["Unscored"] == "0"
    assert results.summary["Judge Calls"] == "8"
    assert results.summary["Retries"].startswith("1 ")
    assert "not valid" in (workspace.directory / "rag_eval.log").read_text(encoding="utf-8")


def test_timeout_is_a_deadline_for_the_whole_reply(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # A reply trickling in a byte every 0.2 s would take over a minute.
    fake_anthropic.script(QUESTIONS[1][0], Fault.trickle(0.2))
    result = run_cli([*RUN, "--delay", "0", "--timeout", "1", "--max-retries", "0", "--limit", "8"])
    assert result.exit_code == 1, result.output
    [results] = all_results(workspace)
    assert "did not answer in time" in results.row(1)["Error"]


def test_a_transient_error_at_the_pre_flight_check_is_retried(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.fail_next_free(Fault.status(529, "overloaded", retry_after=0.01))
    result = run_cli([*RUN, "--delay", "0"])
    assert result.exit_code == 0, result.output
    checks = [r for r in fake_anthropic.all_requests if r.path.startswith("/v1/models/")]
    assert [r.response_status for r in checks] == [529, 200]


# -- Message Batches: a create cut short, a batch the API forgot -------------------------------


@POSIX_SIGNALS
def test_a_kill_during_batch_creation_finds_the_batch_instead_of_paying_twice(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    process = start_cli_process(BATCH, workspace.directory)

    def kill_before_answering(batch_id: str) -> None:
        fake_anthropic.hold_batch(batch_id)
        process.kill()
        process.wait(timeout=10)

    fake_anthropic.on_batch_created = kill_before_answering
    try:
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    assert len(fake_anthropic.batches) == 1
    lines = checkpoint_lines(workspace)
    assert [line["type"] for line in lines[1:]] == ["batch_intent"]

    fake_anthropic.on_batch_created = None
    (batch_id,) = fake_anthropic.batches
    fake_anthropic.hold_batch(batch_id, False)
    resumed = run_cli(BATCH)
    assert resumed.exit_code == 0, resumed.output
    assert len(fake_anthropic.batches) == 1  # found and collected, not created again
    assert fake_anthropic.paid_twice() == []
    assert len(only_results_of(workspace).rows) == 8


def only_results_of(workspace: Workspace):  # type: ignore[no-untyped-def]
    return read_results(only(workspace.results()))


@POSIX_SIGNALS
def test_a_batch_the_api_no_longer_knows_is_asked_again_with_a_warning(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.batch_polls_until_ended = 10**9
    process = start_cli_process(BATCH, workspace.directory)
    try:
        wait_until(
            lambda: any('"type":"batch"' in p.read_text() for p in workspace.checkpoint_files())
        )
        process.kill()
    finally:
        process.communicate(timeout=30)
    (batch_id,) = fake_anthropic.batches
    fake_anthropic.forget_batch(batch_id)
    fake_anthropic.batch_polls_until_ended = 0
    resumed = run_cli(BATCH)
    assert resumed.exit_code == 0, resumed.output
    text = " ".join(resumed.stderr.split())
    assert f"The API no longer knows Message Batch {batch_id}" in text
    assert "does not know model" not in text
    assert len(only_results_of(workspace).rows) == 8


# -- Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_keeps_the_calls_in_flight_and_counts_what_the_checkpoint_holds(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.response_delay_seconds = 0.2
    fake_anthropic.on_request = lambda request: (
        press_ctrl_c() if len(fake_anthropic.requests) == 6 else None
    )
    stopped = run_cli([*RUN, "--delay", "0", "--concurrency", "4"])
    assert stopped.exit_code == 130, stopped.output
    fake_anthropic.on_request = None
    saved = sum(line["type"] == "question" for line in checkpoint_lines(workspace))
    text = " ".join(stopped.stderr.split())
    assert f"Interrupted after {saved} of 8 questions" in text
    # Every call answered was kept: none is billed again by the resume.
    assert saved == fake_anthropic.billed_total()
    assert "retrying" not in text
    fake_anthropic.response_delay_seconds = 0
    resumed = run_cli([*RUN, "--delay", "0", "--concurrency", "4"])
    assert resumed.exit_code == 0, resumed.output
    assert fake_anthropic.paid_twice() == []


@POSIX_SIGNALS
def test_ctrl_c_while_the_results_are_written_says_they_are_saved(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    process = start_cli_process(RUN, workspace.directory)
    runs = workspace.directory / "Evaluation_Runs"
    try:
        # The rows go to a scratch file first: every call has been answered by then.
        wait_until(lambda: any(runs.glob(".rows.csv.*")), interval=0.002)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    shown = " ".join(stderr.split())
    assert "Interrupted while writing the results; the 8 judged questions are saved" in shown
    asked = len(fake_anthropic.requests)

    rerun = run_cli(RUN, input_text="y\n")

    assert rerun.exit_code == 0, rerun.output
    assert len(fake_anthropic.requests) == asked
    assert [len(results.rows) for results in all_results(workspace)] == [8]


def test_ctrl_c_while_the_command_starts_exits_quietly() -> None:
    program = textwrap.dedent(
        """
        import builtins, os, signal, sys
        # Ctrl-C raising KeyboardInterrupt, as in a command typed at a terminal: a test run
        # started in the background of a script inherits SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        real_import = builtins.__import__
        def interrupting_import(name, *args, **kwargs):
            if name == "rag_evaluator.cli.app":
                os.kill(os.getpid(), signal.SIGINT)
            return real_import(name, *args, **kwargs)
        builtins.__import__ = interrupting_import
        sys.argv = ["rag-eval", "--help"]
        # The installed console script, as the shell would run it.
        from importlib.metadata import entry_points
        (script,) = entry_points(group="console_scripts", name="rag-eval")
        script.load()()
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 130
    assert "Traceback" not in finished.stderr
    assert finished.stderr.strip() == "Interrupted."


# -- the client's own resources -----------------------------------------------------------------


class _BrokenTransport:
    """A transport whose HTTP layer fails in a way the SDK does not wrap."""

    base_url = "http://127.0.0.1:9"

    def send(self, request: object, model_id: str, *, cache_system: bool) -> object:
        raise OSError("the network stack failed")

    def count_tokens(self, request: object, model_id: str, *, cache_system: bool) -> int:
        return 42

    def close(self) -> None:
        pass


def test_a_call_that_fails_unexpectedly_gives_its_limiter_slot_back() -> None:
    import threading

    from rag_evaluator.llm.client import ClientSettings, ModelClient
    from rag_evaluator.llm.limits import CallLimiter

    limiter = CallLimiter(max_in_flight=1)
    client = ModelClient(
        _BrokenTransport(),  # type: ignore[arg-type]
        ClientSettings(model=resolve_model("haiku")),
        limiter=limiter,
    )
    judge = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    with pytest.raises(OSError):
        client.call(judge.request(EvaluationItem(1, *QUESTIONS[1])))
    # The one slot is free again: the next call's turn comes at once.
    acquired = threading.Event()
    waiter = threading.Thread(target=lambda: (limiter.acquire(), acquired.set()), daemon=True)
    waiter.start()
    assert acquired.wait(5)


def test_token_counting_does_not_wait_for_the_calls_spacing() -> None:
    import threading

    from rag_evaluator.llm.client import ClientSettings, ModelClient
    from rag_evaluator.llm.limits import CallLimiter

    # Calls may start only every 1,000 s; free counts must not queue behind that.
    client = ModelClient(
        _BrokenTransport(),  # type: ignore[arg-type]
        ClientSettings(model=resolve_model("haiku")),
        limiter=CallLimiter(max_in_flight=1, spacing_seconds=1000),
    )
    judge = JudgeFamily(DEFAULT_SYSTEM_PROMPT, DEFAULT_HEDGE_PHRASES)
    counts: list[int] = []

    def count_three() -> None:
        for number in (1, 2, 3):
            counts.append(
                client.count_input_tokens(judge.request(EvaluationItem(number, *QUESTIONS[number])))
            )

    counting = threading.Thread(target=count_three, daemon=True)
    counting.start()
    counting.join(10)
    assert counts == [42, 42, 42]


def test_a_batch_budget_stop_says_what_was_spent(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    budget = one_call_usd() * 3  # a batch books each request at half its direct price
    result = run_cli([*BATCH, "--max-cost", f"{budget:.6f}"])
    assert result.exit_code == 4, result.output
    text = " ".join(result.stderr.split())
    spent = text.split("--max-cost budget of ")[1].split("(")[1].split(" spent")[0]
    assert spent.startswith("$") and float(spent[1:]) > 0, text


def test_generate_lets_go_of_its_checkpoint_records(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc
    import warnings

    from generate_support import DOCS, generate_arguments

    prepare_workspace(tmp_path, monkeypatch)
    gc.collect()  # what earlier tests left behind is not this run's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        result = run_cli([*generate_arguments(DOCS, count=4), "--yes"])
        gc.collect()
    assert result.exit_code == 0, result.output
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not [message for message in unclosed if str(tmp_path) in message], unclosed


def test_a_batch_collected_again_is_never_counted_twice(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Question 3's first answer is unusable (billed): it goes out again in a follow-up batch.
    fake_anthropic.script(QUESTIONS[3][0], Fault.invalid_json(), verdict())
    created: list[str] = []

    def on_created(batch_id: str) -> None:
        created.append(batch_id)
        if len(created) == 2:
            fake_anthropic.hold_batch(batch_id)

    fake_anthropic.on_batch_created = on_created
    fake_anthropic.on_batch_poll = lambda batch_id: (
        press_ctrl_c() if len(created) == 2 and batch_id == created[1] else None
    )
    stopped = run_cli(BATCH)
    assert stopped.exit_code == 130, stopped.output
    fake_anthropic.on_batch_poll = None
    # As if the run had died after keeping the first batch's results, before marking it done.
    [checkpoint] = workspace.checkpoint_files()
    lines = checkpoint.read_text(encoding="utf-8").splitlines(keepends=True)
    first_done = json.dumps({"type": "batch_done", "id": created[0]}, separators=(",", ":"))
    checkpoint.write_text("".join(line for line in lines if line.strip() != first_done))
    fake_anthropic.hold_batch(created[1], False)
    resumed = run_cli(BATCH)
    assert resumed.exit_code == 0, resumed.output
    [results] = all_results(workspace)
    # Every billed answer counted once: 8 good ones and question 3's unusable first one.
    assert fake_anthropic.billed_total() == 9
    assert results.summary["Judge Calls"] == "9"
