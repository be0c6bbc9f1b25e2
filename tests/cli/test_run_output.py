"""What a run shows and writes (issue 22): the metrics left empty gathered into one short
table after the summary instead of a warning each before the progress bar, warnings kept for
what the user must act on, and the results file of a run without the judge named for what
it holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli, write_csv

from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.offline.runner import MetricOptions, compute_offline_metrics, not_applicable_rows

QUESTIONS = {
    1: ("How many vacation days?", "25 days.", "You get 25 days.", ["PTO: 25 days."]),
    2: ("Who approves overtime?", "Your manager.", "The manager.", ["Managers approve."]),
    3: ("Where is the office?", "In Lyon.", "Lyon.", None),
    4: ("When are reviews?", "In December.", "December.", None),
}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    numbers = sorted(QUESTIONS)
    write_csv(
        tmp_path / "questions.csv",
        ["Question Number", "Question"],
        [[n, QUESTIONS[n][0]] for n in numbers],
    )
    write_csv(
        tmp_path / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts"],
        [[n, QUESTIONS[n][1], json.dumps(["PTO: 25 days."])] for n in numbers],
    )
    write_csv(
        tmp_path / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [
            [n, QUESTIONS[n][2], "" if QUESTIONS[n][3] is None else json.dumps(QUESTIONS[n][3])]
            for n in numbers
        ],
    )
    return space


def test_empty_metrics_are_one_table_after_the_summary_not_a_warning_each(
    workspace: Workspace,
) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical,retrieval,quality", "--yes"])
    assert result.exit_code == 0, result.output
    assert "left empty" not in result.stderr
    # Still a warning: the user should act on it (or pass --no-require-citations).
    assert "Warning: quality_citations: none of the 4 answer(s) cites a source" in " ".join(
        result.stderr.split()
    )
    stdout = result.stdout
    assert stdout.index("Summary") < stdout.index("Not applicable")
    table = stdout[stdout.index("Not applicable") :]
    for metric in ("number_match", "list_coverage", "fact_score", "precision_at_k"):
        assert metric in table
    # Each note is in the log, with the questions it concerns.
    log = (workspace.directory / "rag_eval.log").read_text(encoding="utf-8")
    assert (
        "precision_at_k: left empty for 2 of 4 question(s): no Contexts in rag_answers.csv "
        "(question 3-4)"
    ) in log


def test_notes_with_the_same_reason_and_questions_share_one_row() -> None:
    items = [
        EvaluationItem(1, "Q?", "one", "one", contexts=["a"], relevant_contexts=["a"]),
        EvaluationItem(2, "Q?", "two", "two", contexts=None, relevant_contexts=["a"]),
        EvaluationItem(3, "Q?", "three", "three", contexts=None, relevant_contexts=["a"]),
    ]
    result = compute_offline_metrics(items, ["lexical", "retrieval"], MetricOptions())
    rows = not_applicable_rows(result.empty)
    by_reason = {row[2]: row for row in rows}
    assert by_reason["no Contexts in rag_answers.csv (question 2-3)"] == (
        (
            "precision_at_k",
            "recall_at_k",
            "f1_at_k",
            "context_precision",
            "mrr",
            "ndcg_at_k",
            "hybrid_log_rank",
            "context_overlap",
        ),
        "2 of 3",
        "no Contexts in rag_answers.csv (question 2-3)",
    )
    assert by_reason["the ground truth has no numbers (question 1-3)"][:2] == (
        ("number_match",),
        "3 of 3",
    )
    # The warnings of the library are unchanged: one message per metric.
    assert len(result.warnings) == len({warning.split(":")[0] for warning in result.warnings})


def test_a_run_without_the_judge_is_named_for_what_it_holds(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical", "--yes"])
    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.path.name.startswith("metric_scores_")
    assert not list((workspace.directory / "Evaluation_Runs").glob("precision_scores_*"))
    # The report reads it and dates it from its name.
    report = run_cli(["report", str(results.path)])
    assert report.exit_code == 0, report.output
    stamp = results.path.stem.removeprefix("metric_scores_")
    page = results.path.with_suffix(".html").read_text(encoding="utf-8")
    date = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"
    assert date in page


def test_a_family_with_no_value_at_all_is_still_a_warning(workspace: Workspace) -> None:
    # Something to act on: the inputs the family reads are missing for every question.
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer"],
        [[n, QUESTIONS[n][2]] for n in sorted(QUESTIONS)],
    )
    result = run_cli(["evaluate", "--metrics", "retrieval,lexical", "--yes"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        "Warning: retrieval: none of its metrics has a value for any of the 4 question(s): no "
        "Contexts in rag_answers.csv. Give the run what the family needs, or leave it out of "
        "--metrics"
    ]
