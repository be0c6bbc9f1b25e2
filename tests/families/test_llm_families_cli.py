"""The LLM-judged families through ``rag-eval evaluate``, against the fake API playing every role.

``ragas``, ``factual_accuracy``, ``classify``, ``match`` and ``rubric`` run on the judge's call
path: same client, limiter, retries, checkpoint, response cache, estimate and summary.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    read_results,
    run_cli,
    start_cli_process,
    wait_until,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault
from fakes.roles import factual_accuracy_answer, questions_answer, rating_answer
from llm_support import (
    ALL_LLM,
    CONTEXTS,
    QUESTION,
    contexts_reply,
    criteria_reply,
    paid_requests,
    request_key,
    verdicts_reply,
    write_inputs_with_contexts,
)

SEED = 5
RUN = ["evaluate", "--model", "haiku", "--seed", str(SEED), "--delay", "0", "--yes"]
RAGAS_COLUMNS = [
    "ragas_faithfulness",
    "ragas_context_precision",
    "relevant_context_share",
    "ragas_context_recall",
    "ragas_answer_relevance",
    "ragas_answer_relevance_method",
    "ragas_score",
    "ragas_details",
]
FACTUAL_ACCURACY_COLUMNS = [
    "factual_accuracy",
    "factual_grade",
    "factual_correctness",
    "factual_completeness",
    "factual_consistency",
    "factual_confidence",
    "factual_reasoning",
]
CLASSIFY_COLUMNS = ["answer_class", "answer_correct", "classify_reasoning"]
MATCH_COLUMNS = ["is_matching", "match_reasoning"]
RUBRIC_COLUMNS = ["rubric_coherence", "rubric_harmlessness", "rubric_reasoning"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)
    return space


def script_question_1(server: FakeAnthropicServer) -> None:
    """Question 1's replies: 1 of 2 claims supported, the 2nd context irrelevant, relevance
    rated 0.8, factual accuracy 80/60/40, coherence 4 of 5."""
    question = QUESTION[1]
    server.script_role(
        "claims",
        question,
        {"claims": ["Paris is the capital of France.", "Paris has 12 million inhabitants."]},
    )
    server.script_role("verdicts", question, verdicts_reply(1, 0))
    server.script_role("contexts", question, contexts_reply(True, False))
    server.script_role("score", question, rating_answer(0.8, reasoning="Mostly on topic."))
    server.script_role("correctness", question, factual_accuracy_answer(80, 60, 40, confidence=70))
    server.script_role("criteria", question, criteria_reply(4, 1))
    server.script_role("label", QUESTION[3], {"reasoning": "Wrong port.", "label": "WRONG"})
    server.script_role(
        "is_matching", QUESTION[3], {"reasoning": "8080 is not 8443.", "is_matching": False}
    )


def test_a_run_with_every_family(workspace: Workspace, fake_anthropic: FakeAnthropicServer) -> None:
    script_question_1(fake_anthropic)

    result = run_cli(
        [*RUN, "--metrics", ALL_LLM, "--rubric", "rubric.toml", "--answer-relevance", "rating"]
    )

    assert result.exit_code == 0, result.output
    assert "Metrics: judge, ragas, factual_accuracy, classify, match, rubric" in result.stderr
    assert "RAGAS answer relevance: a direct rating call" in result.stderr
    assert "Rubric: coherence (1-5), harmlessness (pass/fail)" in result.stderr
    # Question 4 has no Contexts: named before the user is asked to pay.
    assert (
        "Warning: ragas: faithfulness, context precision and context recall are left empty for "
        "1 of 5 question(s): no Contexts in the answers file (question 4)"
    ) in result.stderr
    roles = [request.role for request in fake_anthropic.requests]
    # RAGAS: questions 1, 2, 5 make 4 + 2 calls; 3 (no context retrieved) and 4 (no Contexts)
    # only the relevance rating.
    assert {role: roles.count(role) for role in set(roles)} == {
        "judge": 5,
        "claims": 3,
        "verdicts": 3,
        "contexts": 3,
        "statements": 3,
        "attributions": 3,
        "score": 5,
        "correctness": 5,
        "label": 5,
        "is_matching": 5,
        "criteria": 5,
    }

    results = only_results(workspace.directory)
    summary = results.summary
    assert summary["ragas_faithfulness"] == "mean 0.8333 (n=3)"
    # Issue 22: ragas_context_precision is ragas's rank-weighted precision (question 1's
    # relevant context is ranked first: 1); the plain share has its own column.
    assert summary["ragas_context_precision"] == "mean 1.0000 (n=3)"
    assert summary["relevant_context_share"] == "mean 0.8333 (n=3)"
    assert summary["ragas_context_recall"] == "mean 0.7500 (n=4)"
    assert summary["ragas_answer_relevance"] == "mean 0.9600 (n=5)"
    # Question 1: 0.3*0.5 + 0.2*1 + 0.2*1 + 0.3*0.8 = 0.79; question 3 (recall 0, relevance
    # 1): (0.2*0 + 0.3*1) / 0.5 = 0.6; the others 1.
    assert summary["ragas_score"] == "mean 0.8780 (n=5)"
    assert summary["RAGAS Relevance Method"] == "rating 5"
    assert summary["RAGAS Unscored"] == "0"
    assert summary["factual_accuracy"] == "mean 0.8440 (n=5)"
    assert summary["Factual Grades"] == "A 4 / B 1 / C 0 / D 0 / E 0"
    assert summary["Factual Accuracy Unscored"] == "0"
    assert summary["Answer Classes"] == "CORRECT 4 / WRONG 1 / DONT_KNOW 0 (0 without a call)"
    assert summary["answer_correct"] == "4/5 (80%)"
    assert summary["is_matching"] == "4/5 (80%)"
    assert summary["rubric_coherence"] == "mean 0.9500 (n=5)"
    assert summary["rubric_harmlessness"] == "5/5 (100%)"
    assert summary["Judge Calls"] == "45"
    assert summary["Unscored"] == "0"
    assert results.intervals["ragas_score"].startswith("95% CI ")
    assert results.intervals["is_matching"] == "95% CI 38–96%"
    # Every summary line stays a single unquoted cell starting with #SUMMARY:.
    text = results.path.read_text(encoding="utf-8")
    assert all(
        line.startswith("#SUMMARY: ") for line in text.splitlines()[: len(results.summary_lines)]
    )

    header = results.header
    assert header[:10] == [
        "Question Number",
        "Question",
        "Ground Truth",
        "RAG Answer",
        "Precision",
        "Recall",
        "Accuracy",
        "Reasoning",
        "Consensus",
        "Votes",
    ]
    assert header[10:] == [
        *RAGAS_COLUMNS,
        *FACTUAL_ACCURACY_COLUMNS,
        *CLASSIFY_COLUMNS,
        *MATCH_COLUMNS,
        *RUBRIC_COLUMNS,
        "Error",
        "Note",
    ]
    first = results.row(1)
    # Issue 22: context precision is rank-weighted (the relevant context is first: 1), the
    # share 1 of 2 has its own column, and the composite reads the rank-weighted value.
    assert [first[column] for column in RAGAS_COLUMNS[:7]] == [
        "0.5000",
        "1.0000",
        "0.5000",
        "1.0000",
        "0.8000",
        "rating",
        "0.7900",
    ]
    assert first["ragas_details"] == (
        'faithfulness: 1 of 2 claims supported (unsupported: "Paris has 12 million '
        'inhabitants.") | context precision: 1 of 2 contexts relevant (ranks 1) | context '
        "recall: 1 of 1 statements attributed"
    )
    assert [first[column] for column in FACTUAL_ACCURACY_COLUMNS] == [
        "0.6600",
        "B",
        "0.8000",
        "0.6000",
        "0.4000",
        "70",
        "Accurate and mostly complete.",
    ]
    assert [first[column] for column in RUBRIC_COLUMNS] == [
        "0.7500",
        "1",
        "coherence 4/5: Clear enough.; harmlessness pass: Nothing unsafe.",
    ]
    third = results.row(3)
    assert [third[column] for column in ("ragas_faithfulness", "ragas_context_precision")] == [
        "",
        "",
    ]
    assert third["ragas_context_recall"] == "0.0000"
    assert third["ragas_score"] == "0.6000"
    assert [third[column] for column in CLASSIFY_COLUMNS] == ["WRONG", "0", "Wrong port."]
    assert [third[column] for column in MATCH_COLUMNS] == ["0", "8080 is not 8443."]
    assert third["Note"] == (
        "ragas: no context was retrieved: context recall 0, faithfulness and context precision "
        "left empty"
    )
    fourth = results.row(4)
    assert [fourth[column] for column in RAGAS_COLUMNS[:7]] == [
        "",
        "",
        "",
        "",
        "1.0000",
        "rating",
        "1.0000",
    ]
    assert all(row["Error"] == "" for row in results.rows)


def test_the_estimate_lists_each_familys_calls(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        [*RUN, "--metrics", ALL_LLM, "--rubric", "rubric.toml", "--answer-relevance", "rating"]
    )
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.stderr.splitlines()]
    estimate = next(line for line in lines if line.startswith("Estimated cost: "))
    # The high end: every question hedging into 3 judge consensus votes (5 x 3 = 15 calls).
    assert estimate.endswith("(45 to 60 calls)")
    per_family = [line for line in lines if line.split(":")[0] in ALL_LLM.split(",")]
    assert [line.split(":")[0] for line in per_family] == ALL_LLM.split(",")
    ragas = next(line for line in per_family if line.startswith("ragas:"))
    assert ", 20 calls (4 per question), " in ragas
    assert "output tokens" in ragas
    factual = next(line for line in per_family if line.startswith("factual_accuracy:"))
    assert ", 5 calls (1 per question), 1,250 to 4,500 output tokens" in factual
    # What was estimated is what was sent.
    assert len(fake_anthropic.requests) == 45


@pytest.mark.needs_extra("semantic")
def test_answer_relevance_by_embeddings_and_its_rating_fallback(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # The questions call sees the answer only: its script is keyed by the answer's text.
    fake_anthropic.script_role("questions", SAMPLE[1][2], questions_answer([QUESTION[1]] * 3))
    fake_anthropic.script_role("questions", SAMPLE[2][2], questions_answer([]))
    fake_anthropic.script_role("score", QUESTION[2], rating_answer(0.4, reasoning="Partly."))

    result = run_cli([*RUN, "--metrics", "ragas", "--answer-relevance", "embeddings"])

    assert result.exit_code == 0, result.output
    assert "RAGAS answer relevance: embeddings with all-MiniLM-L6-v2 (bundled)" in result.stderr
    results = only_results(workspace.directory)
    first, second = results.row(1), results.row(2)
    # The same question, embedded: cosine 1.
    assert (first["ragas_answer_relevance"], first["ragas_answer_relevance_method"]) == (
        "1.0000",
        "embeddings",
    )
    assert (second["ragas_answer_relevance"], second["ragas_answer_relevance_method"]) == (
        "0.4000",
        "rating",
    )
    assert second["Note"] == (
        "no question could be generated from the answer: answer relevance was rated directly"
    )
    assert results.summary["RAGAS Relevance Method"] == (
        "embeddings 4 with all-MiniLM-L6-v2 (bundled) / rating 1"
    )
    # A run without the judge: no judge columns, the families' own prompts.
    assert "Precision" not in results.header
    assert results.summary["Prompt"] == "built-in prompts of the families"
    for number in (3, 4, 5):
        value = float(results.row(number)["ragas_answer_relevance"])
        assert 0.0 < value <= 1.0
    assert [request.role for request in fake_anthropic.requests].count("score") == 1


@pytest.mark.parametrize(
    "method", [pytest.param("embeddings", marks=pytest.mark.needs_extra("semantic")), "rating"]
)
def test_a_noncommittal_answer_scores_0_whatever_the_similarity(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, method: str
) -> None:
    # Question 1's generated questions are the question itself (cosine 1) and its rating is
    # 1.0, but the model also says the answer is noncommittal: ragas scores it 0.
    fake_anthropic.script_role(
        "questions", SAMPLE[1][2], questions_answer([QUESTION[1]] * 3, noncommittal=True)
    )
    fake_anthropic.script_role("score", QUESTION[1], rating_answer(1.0, noncommittal=True))
    # Question 2 generates no question: the rating it falls back on says noncommittal too.
    fake_anthropic.script_role("questions", SAMPLE[2][2], questions_answer([]))
    fake_anthropic.script_role("score", QUESTION[2], rating_answer(0.9, noncommittal=True))

    result = run_cli([*RUN, "--metrics", "ragas", "--answer-relevance", method, "--no-cache"])

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    for number in (1, 2):
        row = results.row(number)
        assert row["ragas_answer_relevance"] == "0.0000", (number, row)
        assert "answer relevance: noncommittal (scored 0)" in row["ragas_details"]
    assert results.row(1)["ragas_answer_relevance_method"] == method
    # Question 1 (faithfulness, both precisions and recall 1, relevance 0): 0.3 + 0.2 + 0.2.
    assert results.row(1)["ragas_score"] == "0.7000"
    for number in (3, 4, 5):
        row = results.row(number)
        assert float(row["ragas_answer_relevance"]) > 0, (number, row)
        assert "noncommittal" not in row["ragas_details"]


def test_without_a_contexts_column_only_answer_relevance_is_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory, with_contexts_column=False)

    result = run_cli([*RUN, "--metrics", "ragas", "--answer-relevance", "rating"])

    assert result.exit_code == 0, result.output
    assert "left empty for 5 of 5 question(s): no Contexts in the answers file (question 1-5)" in (
        " ".join(result.stderr.split())
    )
    assert {request.role for request in fake_anthropic.requests} == {"score"}
    results = only_results(space.directory)
    for row in results.rows:
        assert row["ragas_faithfulness"] == row["ragas_context_recall"] == ""
        assert row["ragas_score"] == row["ragas_answer_relevance"] == "1.0000"
    assert results.summary["ragas_faithfulness"] == "mean n/a (n=0)"


def test_no_claims_and_no_statements_need_no_second_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script_role("claims", QUESTION[1], {"claims": []})
    fake_anthropic.script_role("statements", QUESTION[1], {"statements": []})

    result = run_cli([*RUN, "--metrics", "ragas", "--answer-relevance", "rating"])

    assert result.exit_code == 0, result.output
    assert not fake_anthropic.requests_for("verdicts", QUESTION[1])
    assert not fake_anthropic.requests_for("attributions", QUESTION[1])
    first = only_results(workspace.directory).row(1)
    # No claim: nothing unsupported. No statement: nothing to recall.
    assert (first["ragas_faithfulness"], first["ragas_context_recall"]) == ("1.0000", "1.0000")
    assert first["ragas_details"].startswith("faithfulness: 0 of 0 claims supported")


def test_malformed_output_for_one_role_empties_that_metric_only(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script_role("claims", QUESTION[2], Fault.invalid_json())

    result = run_cli(
        [*RUN, "--metrics", ALL_LLM, "--rubric", "rubric.toml", "--answer-relevance", "rating"]
    )

    assert result.exit_code == 1, result.output
    assert "1 question(s) could not be scored" in result.stderr
    # Asked again, 3 calls in all, then given up; never verified.
    assert len(fake_anthropic.requests_for("claims", QUESTION[2])) == 3
    assert not fake_anthropic.requests_for("verdicts", QUESTION[2])
    results = only_results(workspace.directory)
    second = results.row(2)
    assert second["ragas_faithfulness"] == ""
    assert second["Error"] == (
        "ragas: faithfulness: judge output was not valid JSON; gave up after 3 calls"
    )
    # The other RAGAS metrics and every other family stand; the composite would not compare.
    assert second["ragas_context_precision"] == second["ragas_context_recall"] == "1.0000"
    assert second["ragas_answer_relevance"] == "1.0000"
    assert second["ragas_score"] == ""
    assert (second["Precision"], second["factual_grade"], second["answer_class"]) == (
        "1",
        "A",
        "CORRECT",
    )
    assert (second["is_matching"], second["rubric_coherence"]) == ("1", "1.0000")
    assert results.summary["ragas_faithfulness"] == "mean 1.0000 (n=2)"
    assert results.summary["ragas_score"] == "mean 0.9000 (n=4)"  # question 3: 0.6
    assert results.summary["RAGAS Unscored"] == "1"
    assert results.summary["Unscored"] == "0"  # the judge's own count


REFUSALS = [
    ("verdicts", ["ragas_faithfulness"], "ragas: faithfulness"),
    (
        "contexts",
        ["ragas_context_precision", "relevant_context_share"],
        "ragas: context_precision",
    ),
    ("attributions", ["ragas_context_recall"], "ragas: context_recall"),
    (
        "score",
        ["ragas_answer_relevance", "ragas_answer_relevance_method"],
        "ragas: answer_relevance",
    ),
    ("correctness", FACTUAL_ACCURACY_COLUMNS, "factual_accuracy"),
    ("label", CLASSIFY_COLUMNS, "classify"),
    ("is_matching", MATCH_COLUMNS, "match"),
    ("criteria", RUBRIC_COLUMNS, "rubric"),
]


@pytest.mark.parametrize(
    ("role", "emptied", "prefix"), REFUSALS, ids=[item[0] for item in REFUSALS]
)
def test_a_refusal_empties_that_metric_with_the_reason(
    workspace: Workspace,
    fake_anthropic: FakeAnthropicServer,
    role: str,
    emptied: list[str],
    prefix: str,
) -> None:
    fake_anthropic.script_role(role, QUESTION[1], Fault.refusal())

    result = run_cli(
        [*RUN, "--metrics", ALL_LLM, "--rubric", "rubric.toml", "--answer-relevance", "rating"]
    )

    assert result.exit_code == 1, result.output
    assert len(fake_anthropic.requests_for(role, QUESTION[1])) == 3
    results = only_results(workspace.directory)
    first = results.row(1)
    assert first["Error"] == (
        f"{prefix}: the model refused to judge this question; gave up after 3 calls"
    )
    assert all(first[column] == "" for column in emptied), {c: first[c] for c in emptied}
    others = [
        column
        for column in [
            *FACTUAL_ACCURACY_COLUMNS,
            *CLASSIFY_COLUMNS,
            *MATCH_COLUMNS,
            *RUBRIC_COLUMNS,
        ]
        if column not in emptied
    ]
    assert all(first[column] != "" for column in ["Precision", *others])
    for number in (2, 3, 4, 5):
        assert results.row(number)["Error"] == ""


MALFORMED = [
    (
        "verdicts",
        "ragas: faithfulness: faithfulness verdicts: the reply lacks the 'verdicts' field",
    ),
    (
        "contexts",
        "ragas: context_precision: context precision: the reply lacks the 'contexts' field",
    ),
    ("correctness", "factual_accuracy: factual accuracy: the reply lacks the 'consistency' field"),
    ("label", "classify: classification: the reply lacks the 'label' field"),
    ("is_matching", "match: match: the reply lacks the 'is_matching' field"),
    ("criteria", "rubric: rubric: the reply lacks the 'criteria' field"),
]


@pytest.mark.parametrize(("role", "reason"), MALFORMED, ids=[item[0] for item in MALFORMED])
def test_a_reply_missing_its_field_is_asked_again_then_reported(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, role: str, reason: str
) -> None:
    field = "consistency" if role == "correctness" else role
    fake_anthropic.script_role(role, QUESTION[2], Fault.missing_field(field))

    result = run_cli([*RUN, "--metrics", ALL_LLM.replace("judge,", ""), "--rubric", "rubric.toml"])

    assert result.exit_code == 1, result.output
    assert len(fake_anthropic.requests_for(role, QUESTION[2])) == 3
    results = only_results(workspace.directory)
    assert results.row(2)["Error"] == f"{reason}; gave up after 3 calls"
    assert all(results.row(number)["Error"] == "" for number in (1, 3, 4, 5))


def test_an_uncertain_answer_is_dont_know_without_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    space = prepare_workspace(tmp_path, monkeypatch)
    sample = dict(SAMPLE)
    sample[4] = (SAMPLE[4][0], SAMPLE[4][1], "I don't know who approves them.")
    write_inputs_with_contexts(space.directory, sample)

    result = run_cli([*RUN, "--metrics", "classify"])

    assert result.exit_code == 0, result.output
    assert len(fake_anthropic.requests_for("label")) == 4
    assert not fake_anthropic.requests_for("label", QUESTION[4])
    results = only_results(space.directory)
    assert [results.row(4)[column] for column in CLASSIFY_COLUMNS] == [
        "DONT_KNOW",
        "0",
        "The answer says it does not know (an uncertainty phrase); no call was made.",
    ]
    assert results.summary["Answer Classes"] == (
        "CORRECT 4 / WRONG 0 / DONT_KNOW 1 (1 without a call)"
    )
    assert results.summary["answer_correct"] == "4/5 (80%)"


def test_a_fatal_error_mid_run_then_a_resume_repeats_no_paid_call(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Question 5's claims are verified only on the second try: the first gets a 401.
    fake_anthropic.script_role(
        "verdicts", QUESTION[5], Fault.status(401, "invalid x-api-key"), verdicts_reply(1)
    )
    arguments = [
        *RUN,
        "--metrics",
        ALL_LLM,
        "--rubric",
        "rubric.toml",
        "--answer-relevance",
        "rating",
        "--no-cache",
    ]

    first = run_cli(arguments)

    assert first.exit_code == 2, first.output
    assert "Error: " in first.stderr and "API key" in first.stderr
    assert workspace.results() == []
    assert workspace.checkpoint_files()

    second = run_cli(arguments)

    assert second.exit_code == 0, second.output
    assert "Resume previous run? [Y/n] y (--yes)" in second.stderr
    paid = [request_key(request) for request in paid_requests(fake_anthropic)]
    repeated = {key[:2] for key in paid if paid.count(key) > 1}
    assert not repeated, repeated
    results = only_results(workspace.directory)
    assert all(row["Error"] == "" for row in results.rows)
    assert results.row(5)["ragas_faithfulness"] == "1.0000"
    # Every call that was paid for, in either run, is in the summary's count.
    assert results.summary["Judge Calls"] == str(len(paid))
    assert workspace.checkpoint_files() == []


def test_a_second_identical_run_is_answered_from_the_response_cache(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    arguments = [
        *RUN,
        "--metrics",
        ALL_LLM,
        "--rubric",
        "rubric.toml",
        "--answer-relevance",
        "rating",
    ]
    assert run_cli(arguments).exit_code == 0
    sent = len(fake_anthropic.all_requests)
    first = read_results(workspace.results()[0])

    again = run_cli(arguments)

    assert again.exit_code == 0, again.output
    assert len(fake_anthropic.all_requests) == sent  # no call, not even the pre-flight check
    assert "From the response cache (no call): 5" in again.stderr
    second = read_results(workspace.results()[1])
    assert second.rows == first.rows
    assert second.summary["Cached Questions"] == "5"
    assert second.summary["Judge Calls"] == "0"


def test_a_changed_rubric_is_not_answered_from_the_cache(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    arguments = [*RUN, "--metrics", "rubric", "--rubric", "rubric.toml"]
    assert run_cli(arguments).exit_code == 0
    rubric = workspace.directory / "rubric.toml"
    rubric.write_text(rubric.read_text().replace('"1-5"', '"1-10"'), encoding="utf-8")

    assert run_cli(arguments).exit_code == 0

    assert len(fake_anthropic.requests_for("criteria")) == 10
    latest = read_results(workspace.results()[-1])
    assert latest.row(1)["rubric_reasoning"].startswith("coherence 10/10")


@pytest.mark.parametrize("mode", [["--concurrency", "4"], ["--batch", "--batch-poll", "0.01"]])
def test_concurrent_and_batched_runs_give_the_sequential_table(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_anthropic: FakeAnthropicServer,
    mode: list[str],
) -> None:
    script_question_1(fake_anthropic)
    fake_anthropic.response_delay_seconds = 0.02
    arguments = [
        *RUN,
        "--metrics",
        ALL_LLM,
        "--rubric",
        "rubric.toml",
        "--answer-relevance",
        "rating",
        "--no-cache",
    ]
    tables = []
    for name, extra in (("sequential", []), ("other", mode)):
        (tmp_path / name).mkdir()
        space = prepare_workspace(tmp_path / name, monkeypatch)
        write_inputs_with_contexts(space.directory)
        result = run_cli([*arguments, *extra])
        assert result.exit_code == 0, result.output
        tables.append(only_results(space.directory))

    sequential, other = tables
    assert other.rows == sequential.rows
    assert other.summary["ragas_score"] == sequential.summary["ragas_score"]
    if "--batch" in mode:
        batched = [request for request in fake_anthropic.requests if request.batch_id]
        # Stage 1 of every family in one batch, RAGAS's verification in a second.
        assert len({request.batch_id for request in batched}) == 2
        assert other.summary["Batch"].startswith("yes")
    else:
        assert fake_anthropic.max_in_flight > 1


def test_score_missing_scores_the_answer_families_without_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)
    answers = (space.directory / "rag_answers.csv").read_text().splitlines()
    (space.directory / "rag_answers.csv").write_text(
        "\n".join(line for line in answers if not line.startswith("4,")) + "\n"
    )

    result = run_cli(
        [
            *RUN,
            "--metrics",
            ALL_LLM,
            "--rubric",
            "rubric.toml",
            "--score-missing",
            "--answer-relevance",
            "rating",
        ]
    )

    assert result.exit_code == 0, result.output
    assert not fake_anthropic.requests_about(QUESTION[4])
    fourth = only_results(space.directory).row(4)
    assert (fourth["factual_accuracy"], fourth["factual_grade"]) == ("0.0000", "E")
    assert (fourth["answer_class"], fourth["answer_correct"], fourth["is_matching"]) == (
        "WRONG",
        "0",
        "0",
    )
    assert (fourth["ragas_answer_relevance"], fourth["ragas_score"]) == ("0.0000", "0.0000")
    assert fourth["rubric_coherence"] == ""


def test_fail_under_gates_an_llm_metric(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    script_question_1(fake_anthropic)
    result = run_cli(
        [
            *RUN,
            "--metrics",
            "factual_accuracy,match",
            "--fail-under",
            "factual_accuracy=0.9,is_matching=0.5",
        ]
    )
    assert result.exit_code == 3, result.output
    assert "factual_accuracy" in result.stderr
    assert "is_matching" not in result.stderr.split("Error:")[-1]


def test_json_results_parse_the_llm_summary(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--metrics", "factual_accuracy,match", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(next((workspace.directory / "Evaluation_Runs").glob("*.json")).read_text())
    assert data["summary"]["factual_accuracy"]["mean"] == pytest.approx(0.89)
    assert data["summary"]["is_matching"]["rate"] == 1.0
    assert data["rows"][0]["factual_grade"] == "A"
    assert data["rows"][0]["is_matching"] == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--metrics", "rubric"],
            "--metrics rubric needs the criteria: give them with --rubric FILE",
        ),
        (
            ["--metrics", "judge", "--rubric", "rubric.toml"],
            "--rubric is read by the rubric family only",
        ),
        (
            ["--metrics", "ragas", "--answer-relevance", "cosine"],
            "--answer-relevance 'cosine' is not a method",
        ),
        (["--metrics", "rubric", "--rubric", "missing.toml"], "Rubric file missing.toml not found"),
    ],
)
def test_option_mistakes_stop_before_anything_is_sent(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer, arguments: list[str], message: str
) -> None:
    result = run_cli([*RUN, *arguments])
    assert result.exit_code == 2, result.output
    assert f"Error: {message}" in " ".join(result.stderr.split())
    assert fake_anthropic.all_requests == []


def test_a_bad_rubric_file_is_one_line_naming_the_line(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    rubric = workspace.directory / "rubric.toml"
    rubric.write_text(rubric.read_text().replace('"pass/fail"', '"yes/no"'), encoding="utf-8")
    result = run_cli([*RUN, "--metrics", "rubric", "--rubric", "rubric.toml"])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: rubric.toml, line 9: scale 'yes/no' is not a scale. Write scale = \"1-5\" "
        '(whole numbers, low-high) or scale = "pass/fail"'
    ]


def test_all_means_the_judge_and_the_offline_families_never_an_llm_family(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--metrics", "all"])
    assert result.exit_code == 0, result.output
    metrics_line = next(line for line in result.stderr.splitlines() if line.startswith("Metrics:"))
    assert metrics_line.startswith("Metrics: judge, lexical")
    assert {request.role for request in fake_anthropic.requests} == {"judge"}


def _checkpoint_lines(path: Path) -> list[dict[str, object]]:
    lines = []
    for raw in path.read_bytes().split(b"\n")[1:]:
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # a line being written
    return lines


def _journal_of_unfinished(path: Path) -> int:
    lines = _checkpoint_lines(path)
    finished = {line["question_number"] for line in lines if line.get("type") == "question"}
    return sum(
        1
        for line in lines
        if line.get("type") == "stage" and line["question_number"] not in finished
    )


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_kill_9_mid_question_then_resume_pays_for_no_answered_call_again(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    # Slow enough that the run cannot end between the condition and the kill.
    fake_anthropic.response_delay_seconds = 0.25
    arguments = [
        *RUN,
        "--metrics",
        "ragas,factual_accuracy,match",
        "--answer-relevance",
        "rating",
        "--no-cache",
    ]
    process = start_cli_process(arguments, workspace.directory)
    try:
        # Killed once a question is finished and the next one has answers journaled.
        wait_until(
            lambda: any(
                _journal_of_unfinished(path) >= 2
                and any(line.get("type") == "question" for line in _checkpoint_lines(path))
                for path in workspace.checkpoint_files()
            )
        )
        process.kill()
    finally:
        process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    [checkpoint] = workspace.checkpoint_files()
    done_before = {
        int(line["question_number"])  # type: ignore[call-overload]
        for line in _checkpoint_lines(checkpoint)
        if line.get("type") == "question"
    }
    first_run = len(fake_anthropic.requests)
    fake_anthropic.response_delay_seconds = 0

    rerun = run_cli(arguments)

    assert rerun.exit_code == 0, rerun.output
    resumed = fake_anthropic.requests[first_run:]
    assert not {QUESTION[number] for number in done_before} & {r.question for r in resumed}
    paid = [request_key(request) for request in paid_requests(fake_anthropic)]
    repeated = [key for key in set(paid) if paid.count(key) > 1]
    # Only a call in flight at the kill (one at --concurrency 1) can have been answered
    # without being journaled; the journaled ones are replayed.
    assert len(repeated) <= 1, [key[:2] for key in repeated]
    results = only_results(workspace.directory)
    assert all(row["Error"] == "" and row["factual_grade"] == "A" for row in results.rows)
    assert results.summary["Judge Calls"] == str(len(paid))


def test_the_exact_estimate_counts_each_familys_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    # Long contexts: RAGAS's first request (the claims, without contexts) is far smaller than
    # its others, so counting it must scale the whole estimate, not stand for every call.
    space = prepare_workspace(tmp_path, monkeypatch)
    long = {
        number: None if texts is None else [text + " More detail." * 300 for text in texts]
        for number, texts in CONTEXTS.items()
    }
    write_inputs_with_contexts(space.directory, contexts=long)
    arguments = [
        *RUN,
        "--metrics",
        "ragas,factual_accuracy",
        "--answer-relevance",
        "rating",
        "--no-cache",
    ]

    exact = run_cli([*arguments, "--exact-estimate"])

    assert exact.exit_code == 0, exact.output
    counted = [r for r in fake_anthropic.all_requests if r.path == "/v1/messages/count_tokens"]
    assert len(counted) == 10  # 5 questions, the first request of each family
    results = only_results(space.directory)
    low, _, high = results.summary["Estimated Cost"].partition(" to ")
    cost = float(results.summary["Cost"].lstrip("$"))
    # The range is shown to 4 decimals, the cost to 4 significant digits. The fake's replies
    # are a few dozen tokens, shorter than the low estimate's reply sizes (817 output tokens
    # against 2,040), so the low end may pass the fake's cost by a few percent.
    shown_low, shown_high = float(low.lstrip("$")), float(high.lstrip("$"))
    assert 0.75 * cost <= shown_low <= 1.1 * cost + 0.00005 and cost <= shown_high + 0.00005
