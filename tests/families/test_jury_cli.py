"""``rag-eval evaluate --jury``: a jury mixing providers (Claude on the Anthropic fake, two
models on the OpenAI-compatible fake), end to end through the CLI and the real SDKs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import (
    Workspace,
    checkpoint_files,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, verdict
from fakes.openai_server import FakeOpenAIServer, Fault
from llm_support import ALL_LLM, write_inputs_with_contexts

pytestmark = pytest.mark.needs_extra("openai")

JURY = "haiku,openai/llama3.1:8b,openai/gpt-4.1-mini"
JURORS = ("haiku", "openai/llama3.1:8b", "openai/gpt-4.1-mini")
RUN = ["evaluate", "--seed", "3", "--delay", "0", "--yes", "--jury", JURY, "--price", "0/0"]
PORT_QUESTION = "Which port does the service listen on?"
CAPITAL_QUESTION = "What is the capital of France?"
FILES = (
    ("questions", "questions.csv"),
    ("ground-truth", "ground_truth.csv"),
    ("answers", "rag_answers.csv"),
)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    monkeypatch.setenv("RAG_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    write_inputs(space.directory)
    return space


def _stderr(result: object) -> str:
    return " ".join(str(getattr(result, "stderr", "")).split())


def test_the_jury_takes_the_majority_and_keeps_every_verdict(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    # Question 3: Claude says recall 1, both OpenAI models say 0. Question 1: only Claude
    # fails precision. The majority decides each metric on its own.
    fake_anthropic.script(PORT_QUESTION, verdict(1, 1, 1))
    fake_openai.script(PORT_QUESTION, verdict(1, 0, 1))
    fake_anthropic.script(CAPITAL_QUESTION, verdict(0, 1, 1))

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    port = results.row(3)
    assert (port["Precision"], port["Recall"], port["Accuracy"]) == ("1", "0", "1")
    assert port["Recall@haiku"] == "1"
    assert port["Recall@openai/llama3.1:8b"] == port["Recall@openai/gpt-4.1-mini"] == "0"
    capital = results.row(1)
    assert capital["Precision"] == "1" and capital["Precision@haiku"] == "0"
    assert "Reasoning@haiku" in results.header
    summary = results.summary
    assert summary["Model"] == (
        "jury of claude-haiku-5-5 / openai/llama3.1:8b / openai/gpt-4.1-mini"
    )
    assert summary["Recall"] == "4/5 (80%)"
    assert summary["Juror haiku Recall"] == "5/5 (100%)"
    assert summary["Juror openai/llama3.1:8b Recall"] == "4/5 (80%)"
    assert summary["Agreement openai/llama3.1:8b / openai/gpt-4.1-mini Recall"] == (
        "100.0% (5/5) kappa 1.00"
    )
    assert summary["Jury Split Recall"] == "1 of 5 questions: 3"
    assert summary["Jury Split Precision"] == "1 of 5 questions: 1"
    assert summary["Fleiss Kappa Recall"].endswith("over 5 questions")
    # Each juror judged each question once: 5 calls each, 15 in all.
    assert summary["Judge Calls"] == "15"
    assert len(fake_anthropic.requests) == 5
    assert len(fake_openai.requests) == 10
    # The terminal shows the jury's table instead of its rows.
    assert "Jury (judge)" in result.stdout
    assert "Agreement 1–2" in result.stdout
    assert "Juror haiku" not in result.stdout


def test_a_hedging_juror_gets_no_consensus_votes(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    fake_anthropic.script(
        PORT_QUESTION, verdict(1, 0, 1, reasoning="A borderline case: arguably wrong port.")
    )

    result = run_cli(RUN)

    assert result.exit_code == 0, result.output
    assert len(fake_anthropic.requests_about(PORT_QUESTION)) == 1
    assert only_results(workspace.directory).summary["Consensus"] == "0"


def test_the_estimate_prices_each_juror_with_its_own_model(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli(["evaluate", "--seed", "3", "--yes", "--jury", JURY])

    assert result.exit_code == 0, result.output
    message = _stderr(result)
    assert "judge (haiku): $" in message
    assert "judge (openai/llama3.1:8b): price unknown" in message
    assert "judge (openai/gpt-4.1-mini): $" in message
    assert "plus judge (openai/llama3.1:8b) at a price unknown" in message
    assert "(15 to 15 calls)" in message
    assert "3 consensus votes for every question" not in message  # a jury asks none
    summary = only_results(workspace.directory).summary
    assert "plus the calls to openai/llama3.1:8b (price unknown)" in summary["Cost"]


def test_every_llm_family_sits_with_the_jury(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_anthropic: FakeAnthropicServer,
    fake_openai: FakeOpenAIServer,
) -> None:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)

    result = run_cli(
        [*RUN, "--metrics", ALL_LLM, "--rubric", "rubric.toml", "--answer-relevance", "rating"]
    )

    assert result.exit_code == 0, result.output
    results = only_results(space.directory)
    for column in ("ragas_score", "factual_accuracy", "answer_correct", "is_matching"):
        assert column in results.summary
        for juror in JURORS:
            assert f"{column}@{juror}" in results.header
    assert "rubric_coherence@haiku" in results.header
    for family in ("judge", "ragas", "factual_accuracy", "classify", "match", "rubric"):
        assert f"Jury ({family})" in result.stdout
    assert all(row["Error"] == "" for row in results.rows)


def test_a_jury_run_resumes_and_its_cache_covers_every_juror(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    first = run_cli([*RUN, "--limit", "2"])
    assert first.exit_code == 0, first.output
    assert checkpoint_files(workspace.checkpoints)

    rest = run_cli(RUN, input_text="y\n")
    assert rest.exit_code == 0, rest.output
    assert "Resume previous run?" in rest.stderr
    assert fake_anthropic.paid_twice() == [] and fake_openai.paid_twice() == []
    assert len(fake_anthropic.requests) == 5 and len(fake_openai.requests) == 10

    again = run_cli([*RUN, "--output-dir", "again"])
    assert again.exit_code == 0, again.output
    assert len(fake_anthropic.requests) == 5 and len(fake_openai.requests) == 10
    results = read_results(next((workspace.directory / "again").glob("*.csv")))
    assert results.summary["Cached Questions"] == "5"

    other = run_cli(
        [*RUN[:-4], "--jury", "haiku,openai/llama3.1:8b,sonnet", "--output-dir", "other"]
    )
    assert other.exit_code == 0, other.output
    # Each juror's results are cached as its own: only the new juror (sonnet) is asked, and
    # only its share is estimated.
    assert len(fake_anthropic.requests) == 10 and len(fake_openai.requests) == 10
    assert {request.body["model"] for request in fake_anthropic.requests[5:]} == {
        "claude-sonnet-5-5"
    }
    assert "(5 to 5 calls)" in other.stderr
    shown = " ".join(other.stderr.split())
    assert (
        "Juror results from the response cache (no call): judge (haiku) 5, "
        "judge (openai/llama3.1:8b) 5"
    ) in shown
    mixed = read_results(next((workspace.directory / "other").glob("*.csv")))
    assert mixed.summary["Cached Questions"] == "0"
    assert [row["Accuracy@haiku"] for row in mixed.rows] == [
        row["Accuracy@haiku"] for row in results.rows
    ]


def test_a_juror_and_a_run_of_its_model_alone_share_their_cached_results(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    alone = run_cli([*RUN[:-4], "--model", "haiku", "--metrics", "classify"])
    assert alone.exit_code == 0, alone.output
    assert len(fake_anthropic.requests) == 5

    jury = run_cli([*RUN, "--metrics", "classify", "--output-dir", "jury"])

    assert jury.exit_code == 0, jury.output
    # haiku's labels come from the cache; the two other jurors are asked.
    assert len(fake_anthropic.requests) == 5 and len(fake_openai.requests) == 10
    single = only_results(workspace.directory)
    panel = read_results(next((workspace.directory / "jury").glob("*.csv")))
    assert [row["classify_reasoning@haiku"] for row in panel.rows] == [
        row["classify_reasoning"] for row in single.rows
    ]


def test_the_budget_counts_every_juror(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--seed",
            "3",
            "--yes",
            "--jury",
            JURY,
            "--price",
            "1000/1000",
            "--max-cost",
            "0.02",
            "--delay",
            "0",
        ]
    )

    assert result.exit_code == 4, result.output
    results = only_results(workspace.directory)
    spent = float(results.summary["Cost"].removeprefix("$"))
    assert spent <= 0.02
    assert results.summary["Partial"].startswith("stopped at the --max-cost budget")


def test_an_all_claude_jury_goes_in_message_batches(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--seed",
            "3",
            "--yes",
            "--jury",
            "haiku,sonnet,opus",
            "--batch",
            "--batch-poll",
            "0.01",
        ]
    )

    assert result.exit_code == 0, result.output
    entries = [entry for batch in fake_anthropic.batches.values() for entry in batch["requests"]]
    models = {entry["params"]["model"] for entry in entries}
    assert models == {"claude-haiku-5-5", "claude-sonnet-5-5", "claude-opus-5-5"}
    summary = only_results(workspace.directory).summary
    assert summary["Judge Calls"] == "15"
    assert summary["Batch"].startswith("yes")


def test_a_batched_jury_sends_only_the_jurors_the_cache_lacks(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    alone = run_cli(["evaluate", "--seed", "3", "--yes", "--model", "sonnet", "--metrics", "match"])
    assert alone.exit_code == 0, alone.output
    batch = ["--batch", "--batch-poll", "0.01", "--output-dir", "jury"]
    jury = ["--jury", "haiku,sonnet,opus", "--metrics", "match"]

    result = run_cli(["evaluate", "--seed", "3", "--yes", *jury, *batch])

    assert result.exit_code == 0, result.output
    entries = [entry for batch in fake_anthropic.batches.values() for entry in batch["requests"]]
    assert {entry["params"]["model"] for entry in entries} == {
        "claude-haiku-5-5",
        "claude-opus-5-5",
    }
    panel = read_results(next((workspace.directory / "jury").glob("*.csv")))
    assert panel.summary["Judge Calls"] == "10"
    single = only_results(workspace.directory)
    assert [row["is_matching@sonnet"] for row in panel.rows] == [
        row["is_matching"] for row in single.rows
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--jury", "haiku,sonnet"], "--jury needs an odd number of models, at least 3 (got 2)"),
        (["--jury", "haiku,claude-haiku-5-5,opus"], "--jury names claude-haiku-5-5 more than"),
        (["--jury", JURY, "--model", "opus"], "--model opus and --jury both name the judge"),
        (
            ["--jury", JURY, "--batch"],
            "--batch sends Message Batches, which only the Anthropic API offers",
        ),
        (["--jury", JURY, "--max-cost", "1"], "--max-cost needs the price of openai/llama3.1:8b"),
        (["--jury", "haiku,,opus"], "--jury haiku,,opus has an empty entry"),
    ],
)
def test_a_jury_that_cannot_sit_is_refused_before_anything_is_read(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    arguments: list[str],
    message: str,
) -> None:
    result = run_cli(["evaluate", "--yes", *arguments])

    assert result.exit_code == 2, result.output
    assert message in _stderr(result)
    assert fake_anthropic.all_requests == []


def test_a_juror_without_credentials_is_named(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(["evaluate", "--yes", "--jury", JURY, "--price", "0/0"])

    assert result.exit_code == 2, result.output
    assert "OPENAI_API_KEY is not set for openai" in _stderr(result)
    assert fake_anthropic.all_requests == []


def test_calibrate_reports_each_juror_beside_the_jury(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.script(PORT_QUESTION, verdict(1, 0, 1))
    assert run_cli(RUN).exit_code == 0
    results = only_results(workspace.directory)
    labels = workspace.directory / "labels.csv"
    labels.write_text("Question Number,Recall\n1,1\n2,1\n3,0\n4,1\n5,1\n", encoding="utf-8")

    calibrated = run_cli(["calibrate", str(results.path), "--labels", str(labels), "--json", "-"])

    assert calibrated.exit_code == 0, calibrated.output
    report = json.loads(calibrated.stdout)
    rows = {entry.get("juror") or "jury": entry for entry in report["metrics"]}
    assert set(rows) == {"jury", *JURORS}
    assert rows["jury"]["agreement"] == 1.0
    assert rows["haiku"]["agreement"] == 0.8


# A jury run priced so that --max-cost can stop it inside a question.
PRICED = [*RUN[:-2], "--price", "1000/1000", "--concurrency", "1", "--metrics", "classify"]


def _stop_inside_a_question_then_fill_the_cache(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    fake_openai: FakeOpenAIServer,
    juror_alone: str,
) -> None:
    """The budget stops a jury run inside its first question (haiku answered it, the others
    did not); meanwhile a run of ``juror_alone``'s model alone, over a copy of the files (a
    checkpoint of its own), fills the shared cache with its answers."""
    stopped = run_cli([*PRICED, "--max-cost", "0.5"])
    assert stopped.exit_code == 4, stopped.output
    assert len(fake_anthropic.requests) == 1 and not fake_openai.requests, stopped.output
    copy = workspace.directory / "copy"
    copy.mkdir()
    for _, name in FILES:
        (copy / name).write_bytes((workspace.directory / name).read_bytes())
    paths = [f"--{kind}=copy/{name}" for kind, name in FILES]
    alone = run_cli([*RUN[:-4], "--model", juror_alone, "--metrics", "classify", *paths])
    assert alone.exit_code == 0, alone.output
    assert checkpoint_files(workspace.checkpoints)  # the stopped jury run's is still there


def test_a_resumed_jury_question_keeps_what_its_jurors_answered_when_the_cache_fills_between(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    _stop_inside_a_question_then_fill_the_cache(
        workspace, fake_anthropic, fake_openai, "openai/llama3.1:8b"
    )
    asked_alone = len(fake_openai.requests)

    resumed = run_cli([*PRICED, "--max-cost", "100"], input_text="y\n")

    assert resumed.exit_code == 0, resumed.output
    assert "Resume previous run?" in resumed.stderr, resumed.output
    # haiku's paid answer is replayed from the checkpoint, not bought again.
    assert fake_anthropic.paid_twice() == []
    assert len(fake_anthropic.requests) == 5
    assert len(fake_openai.requests) == asked_alone + 5


def test_what_a_juror_answered_before_the_cache_filled_stays_spent_through_a_second_stop(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    # The cache fills with haiku's answers: the resumed question no longer asks haiku.
    _stop_inside_a_question_then_fill_the_cache(workspace, fake_anthropic, fake_openai, "haiku")

    # The resume stops again inside the same question (one juror answered, one not): the
    # question's stage is written again without haiku's request.
    asked_before = len(fake_openai.requests)
    fake_openai.fail_next(Fault.slow(0), Fault.status(401, "invalid key"))
    again = run_cli([*PRICED, "--max-cost", "100"], input_text="y\n")
    assert again.exit_code != 0, again.output
    assert len(fake_openai.requests) == asked_before + 2, again.output
    finished = run_cli([*PRICED, "--max-cost", "100"], input_text="y\n")

    assert finished.exit_code == 0, finished.output
    # haiku's first answer, paid before the cache had it, is still in the run's calls and
    # spending: 1 haiku call and 2 for each of the 5 questions from the other jurors.
    assert len(fake_openai.requests) == asked_before + 11  # the call refused (401) asked again
    final = max((workspace.directory / "Evaluation_Runs").glob("*.csv"), key=_written_at)
    summary = read_results(final).summary
    assert summary["Judge Calls"] == "11", summary


def _written_at(path: Path) -> float:
    return path.stat().st_mtime_ns
