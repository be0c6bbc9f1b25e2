"""The field test's findings on ``rag-eval evaluate`` (issue 8), each pinned by a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    run_in_terminal,
    write_csv,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault, verdict

from rag_evaluator.errors import install_command
from rag_evaluator.inputs.selection import shuffled_order

SEED = 5
ORDER = shuffled_order(SAMPLE, SEED)
RUN = ["evaluate", "--model", "haiku", "--seed", str(SEED), "--delay", "0"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    return workspace


# -- 5: coverage and --score-missing -------------------------------------------------------------


def test_questions_without_an_answer_show_in_the_coverage(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_inputs(workspace.directory, answer_numbers=[1, 2])
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 0, result.output
    assert "Coverage: 2/5 questions answered" in result.stderr
    results = only_results(workspace.directory)
    assert results.summary["Total Questions"] == "2"
    assert results.summary["Coverage"] == "2/5 questions answered"
    assert "2/5 questions answered" in result.stdout  # the terminal table too


def test_score_missing_scores_unanswered_questions_zero_without_a_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_inputs(workspace.directory, answer_numbers=[1, 2])
    result = run_cli([*RUN, "--yes", "--score-missing"])
    assert result.exit_code == 0, result.output
    assert sorted(request.question for request in fake_anthropic.requests) == sorted(
        [SAMPLE[1][0], SAMPLE[2][0]]
    )
    results = only_results(workspace.directory)
    assert results.summary["Total Questions"] == "5"
    assert results.summary["Precision"] == "2/5 (40%)"
    assert results.summary["Recall"] == "2/5 (40%)"
    missing = results.row(4)
    assert (missing["Precision"], missing["Recall"], missing["Accuracy"]) == ("0", "0", "0")
    assert missing["RAG Answer"] == ""
    assert (
        "no answer in rag_answers.csv: scored 0 without a call (--score-missing)"
        in (missing["Note"])
    )
    assert "Scored 0 without a call (no answer, --score-missing): 3" in result.stderr


# -- 6: the prompt's own hedging phrase triggers consensus ----------------------------------------


def test_a_reply_that_says_close_call_as_the_prompt_asks_gets_consensus(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(
        SAMPLE[4][0],
        verdict(reasoning="Recall is a close call: finance approval is not mentioned."),
        verdict(1, 0, 1, summary="Misses the finance step."),
    )
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 0, result.output
    row = only_results(workspace.directory).row(4)
    assert row["Consensus"] == "yes"
    assert "'close call'" in row["Note"]
    assert len(fake_anthropic.requests_about(SAMPLE[4][0])) == 4


# -- 13: every setting that changes verdicts is in the fingerprint --------------------------------


def test_changing_the_hedge_phrases_is_not_resumed_silently(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[ORDER[2]][0], Fault.status(401, "invalid x-api-key"))
    assert run_cli([*RUN, "--yes", "--no-cache"]).exit_code == 2
    fake_anthropic.script(SAMPLE[ORDER[2]][0], verdict())
    result = run_in_terminal(
        [*RUN, "--no-cache", "--hedge-phrases", "debatable"],
        workspace.directory,
        [("Discard it and start a new run? [y/N]", "n")],
    )
    assert result.exit_code == 2, result.output
    assert "the judging settings (--hedge-phrases" in result.text


# -- 14: no file handle outlives a failed run ----------------------------------------------------


def _open_files() -> set[str]:
    directory = Path("/proc/self/fd")
    found = set()
    for entry in directory.iterdir():
        try:
            found.add(os.readlink(entry))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_run_that_fails_at_the_check_leaves_no_file_open(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_cli([*RUN, "--yes"])  # warm up imports, logging and the SDK
    before = _open_files()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-000000")
    result = run_cli([*RUN, "--yes", "--no-cache"])
    assert result.exit_code == 2, result.output
    leaked = {
        path
        for path in _open_files() - before
        if str(workspace.directory) in path or "response-cache" in path
    }
    assert leaked == set()


def test_a_lock_file_that_cannot_hold_a_process_id_is_a_one_line_error(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # The lock file of these inputs, made into a link to a device that refuses writes.
    result = run_cli([*RUN, "--yes", "--limit", "1"])
    assert result.exit_code == 0
    [lock] = workspace.checkpoints.glob("*.lock")
    lock.unlink()
    lock.symlink_to("/dev/full")
    failed = run_cli([*RUN, "--yes"])
    assert failed.exit_code == 2, failed.output
    assert "Cannot take the lock file" in " ".join(failed.stderr.split())
    assert "Traceback" not in failed.output


# -- 15, 16: no terminal, and nothing to send ----------------------------------------------------


def test_without_a_terminal_or_yes_nothing_is_spent_and_the_run_says_how(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(RUN)  # stdin is not a terminal here, as in CI
    assert result.exit_code == 2, result.output
    assert "Run with --yes (-y)" in " ".join(result.stderr.split())
    assert fake_anthropic.all_requests == []
    assert workspace.results() == []


def test_proceed_is_not_asked_when_nothing_is_left_to_send(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    nothing = "I don't know."
    sample = {number: (question, nothing, nothing) for number, (question, _, _) in SAMPLE.items()}
    write_inputs(workspace.directory, sample)
    result = run_cli(RUN)  # no terminal, no --yes: fine, since nothing will be paid for
    assert result.exit_code == 0, result.output
    assert "Proceed?" not in result.stderr
    assert fake_anthropic.all_requests == []
    assert only_results(workspace.directory).summary["No Information (no call)"] == "5"


# -- 17: a request past the model's context window -------------------------------------------------


def test_a_request_too_long_for_the_model_is_unscored_without_a_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.context_window_tokens = 5_000  # the pre-flight check learns the window
    sample = dict(SAMPLE)
    question, truth, _ = SAMPLE[3]
    sample[3] = (question, truth, "port " * 10_000)
    write_inputs(workspace.directory, sample)

    result = run_cli([*RUN, "--yes"])

    assert result.exit_code == 1, result.output
    message = " ".join(result.stderr.split())
    assert "Too long for the model's context window, left unscored without a call: question 3" in (
        message
    )
    assert fake_anthropic.requests_about(question) == []
    row = only_results(workspace.directory).row(3)
    assert row["Precision"] == ""
    assert "too long for the model" in row["Error"]


# -- 18: advice that leads to a working command ----------------------------------------------------

_WITHOUT_SEMANTIC = """
import sys
for name in ("sentence_transformers", "bert_score"):
    sys.modules[name] = None
from rag_evaluator.cli.app import main
sys.argv = ["rag-eval", "evaluate", "--metrics", "all", "--yes"]
main()
"""


@pytest.mark.needs_extra("overlap")
def test_the_missing_key_advice_names_only_families_that_can_run(workspace: Workspace) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "ANTHROPIC_API_KEY"}
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SEMANTIC],
        cwd=workspace.directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2, completed.stderr
    message = " ".join(completed.stderr.split())
    assert "leave the judged families out with --metrics lexical,overlap,retrieval" in message
    assert "semantic" not in message.rsplit("--metrics", 1)[1]


def test_one_install_hint_everywhere_puts_cpu_torch_first() -> None:
    hint = install_command("semantic")
    assert hint.startswith("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in readme


# -- 23: what a person sees in a terminal ---------------------------------------------------------


def test_a_terminal_shows_a_progress_bar_with_calls_spend_and_rates(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[3][0], verdict(0, 0, 1))
    result = run_in_terminal([*RUN], workspace.directory, [("Proceed? [Y/n]", "y")])
    assert result.exit_code == 0, result.output
    assert "Evaluating" in result.output
    assert "5/5" in result.output
    assert "calls 5" in result.output
    assert "P 80%" in result.output and "A 100%" in result.output
    assert "Evaluating question 1/5" not in result.output  # plain lines are for logs only


def test_warnings_about_a_question_name_its_number(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[2][0], Fault.status(503, retry_after=0.01), verdict())
    result = run_cli([*RUN, "--yes"])
    assert result.exit_code == 0, result.output
    assert "question 2: API error (503); retrying" in " ".join(result.stderr.split())


# -- 24: help and usage errors ---------------------------------------------------------------------


def test_help_is_plain_and_says_what_a_user_needs(workspace: Workspace) -> None:
    for flag in ("-h", "--help"):
        result = run_cli(["evaluate", flag])
        assert result.exit_code == 0
        text = " ".join(result.output.split())
        for needed in (
            "Exit codes: 0 all scored, 1 some questions unscored",
            ".env",
            "Resume previous run?",
            "Relevant Contexts",
            "Contexts (JSON list)",
            "offline metric families",
        ):
            assert needed in text
        assert "<bool>" not in result.output
        assert "╭" not in result.output
    assert "*.ndjson" in run_cli(["convert", "-h"]).output


def test_a_usage_error_looks_like_the_tools_own_errors(workspace: Workspace) -> None:
    result = run_cli([*RUN, "--seed", "x"])
    assert result.exit_code == 2
    assert "Error: Invalid value for '--seed'" in result.stderr
    assert "╭" not in result.stderr and "│" not in result.stderr


# -- 25, 26: a first look with --limit, and JSON results -------------------------------------------


def test_limit_evaluates_the_first_questions_and_a_later_run_does_the_rest(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    first = run_cli([*RUN, "--yes", "--limit", "2"])
    assert first.exit_code == 0, first.output
    asked = [request.question for request in fake_anthropic.requests]
    assert asked == [SAMPLE[number][0] for number in ORDER[:2]]
    results = only_results(workspace.directory)
    assert [int(row["Question Number"]) for row in results.rows] == sorted(ORDER[:2])
    assert "3 more question(s) are not evaluated yet (--limit)" in " ".join(first.stderr.split())
    assert len(workspace.checkpoint_files()) == 1

    rest = run_cli([*RUN, "--yes"])

    assert rest.exit_code == 0, rest.output
    assert "2 of 5 questions done" in rest.stderr
    asked = [request.question for request in fake_anthropic.requests]
    assert asked[2:] == [SAMPLE[number][0] for number in ORDER[2:]]
    final = read_results(sorted(workspace.results())[-1])
    assert len(final.rows) == 5
    assert workspace.checkpoint_files() == []


def test_json_results_are_written_beside_the_csv(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--yes", "--json", "--metrics", "judge,lexical"])
    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    json_path = results.path.with_suffix(".json")
    assert f"JSON results written to Evaluation_Runs/{json_path.name}" in result.stderr
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["summary"]["Precision"]["rate"] == 1.0
    assert len(data["rows"]) == 5
    first = data["rows"][0]
    assert first["Precision"] == 1 and isinstance(first["keyword_coverage"], float)


def test_an_answers_file_with_extra_columns_still_reads(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Latency"],
        [[number, answer, 1.5] for number, (_, _, answer) in SAMPLE.items()],
    )
    assert run_cli([*RUN, "--yes"]).exit_code == 0
