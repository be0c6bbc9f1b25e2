"""Reference-free runs (issue 22, item 7): inputs with question, contexts and answer but no
reference answer (ARES files, a dataset without a reference field, the three CSVs without
ground_truth.csv) run the families that need no reference; those that do are left out with
one line saying which and why."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli, write_csv
from fakes.anthropic_server import FakeAnthropicServer

RUN = ["evaluate", "--model", "haiku", "--seed", "3", "--delay", "0", "--yes"]

# An ARES file: the labels are ARES's own (metadata here), there is no reference answer.
ARES_ROWS = [
    [
        "who wrote hamlet",
        "Hamlet is a tragedy by William Shakespeare [1].",
        "Shakespeare wrote it [1].",
        "1",
        "1",
        "1",
    ],
    [
        "when did the first ninja turtles come out",
        "The Turtles first appeared in a 1984 comic.",
        "In 1984.",
        "1",
        "1",
        "1",
    ],
    [
        "who played in the first fifty shades of grey",
        "The film stars Dakota Johnson.",
        "Bernard Hill.",
        "1",
        "0",
        "0",
    ],
]
ARES_HEADER = [
    "Query",
    "Document",
    "Answer",
    "Context_Relevance_Label",
    "Answer_Faithfulness_Label",
    "Answer_Relevance_Label",
]


def write_ares(folder: Path, name: str = "nq_ratings.tsv") -> Path:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(ARES_HEADER)
    writer.writerows(ARES_ROWS)
    path = folder / name
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return prepare_workspace(tmp_path, monkeypatch)


def one_line(text: str) -> str:
    return " ".join(text.split())


LEXICAL_LEFT_OUT = (
    "exact_match, keyword_coverage, number_match, answer_completeness, list_coverage, fact_score"
)


def test_an_ares_file_runs_the_families_that_need_no_reference(workspace: Workspace) -> None:
    write_ares(workspace.directory)
    result = run_cli(
        ["evaluate", "--dataset", "nq_ratings.tsv", "--metrics", "lexical,quality", "--yes"]
    )
    assert result.exit_code == 0, result.output
    assert "question number" not in result.output.lower()
    assert (
        "No reference answers in nq_ratings.tsv: left out the lexical metrics "
        f"{LEXICAL_LEFT_OUT} (they compare the answer with a reference)"
    ) in one_line(result.stderr)
    results = only_results(workspace.directory)
    assert results.path.name.startswith("metric_scores_")
    metrics = [name for name in results.header if name in ("exact_match", "citation_quality")]
    assert metrics == ["citation_quality"]
    assert results.summary["quality_not_empty"].startswith("3/3")
    assert [row["Question"] for row in results.rows] == [row[0] for row in ARES_ROWS]
    assert results.rows[0]["Answer_Faithfulness_Label"] == "1"


@pytest.mark.needs_extra("semantic")
def test_semantic_keeps_its_reference_free_metrics(workspace: Workspace) -> None:
    write_ares(workspace.directory)
    result = run_cli(["evaluate", "--dataset", "nq_ratings.tsv", "--metrics", "semantic", "--yes"])
    assert result.exit_code == 0, result.output
    assert (
        "left out the semantic metrics semantic_similarity, answer_correctness, "
        "bert_score_precision, bert_score_recall, bert_score_f1"
    ) in one_line(result.stderr)
    results = only_results(workspace.directory)
    kept = [name for name in results.header if name in SEMANTIC_COLUMNS]
    assert kept == ["answer_relevance", "context_relevance", "context_sufficiency", "hallucination"]
    for row in results.rows:
        assert 0.0 <= float(row["answer_relevance"]) <= 1.0
        assert row["hallucination"] != ""
    assert "BERTScore" not in result.stderr


SEMANTIC_COLUMNS = (
    "semantic_similarity",
    "answer_relevance",
    "answer_correctness",
    "context_relevance",
    "context_sufficiency",
    "hallucination",
    "bert_score_precision",
    "bert_score_recall",
    "bert_score_f1",
)


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (
            "judge",
            "nq_ratings.tsv has no reference answers, and every family asked for "
            "compares the answer with one (judge)",
        ),
        (
            "overlap,retrieval",
            "nq_ratings.tsv has no reference answers, and every family "
            "asked for compares the answer with one (overlap, retrieval)",
        ),
    ],
)
@pytest.mark.needs_extra("semantic")
def test_only_reference_families_asked_for_is_an_error_naming_them(
    workspace: Workspace, metrics: str, expected: str
) -> None:
    write_ares(workspace.directory)
    result = run_cli(["evaluate", "--dataset", "nq_ratings.tsv", "--metrics", metrics, "--yes"])
    assert result.exit_code == 2, result.output
    message = one_line(result.stderr)
    assert expected in message
    assert "such as --metrics quality,semantic" in message
    # A golden set whose references sit in an answer field is told how to name them.
    assert "(a golden set), name that field reference, ground_truth or expected_answer" in message


def test_ragas_without_references_computes_faithfulness_and_relevance_only(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_ares(workspace.directory)
    result = run_cli(
        [
            *RUN,
            "--dataset",
            "nq_ratings.tsv",
            "--metrics",
            "ragas,quality,judge",
            "--answer-relevance",
            "rating",
        ]
    )
    assert result.exit_code == 0, result.output
    assert (
        "No reference answers in nq_ratings.tsv: left out the judge, and the ragas metrics "
        "context precision, context recall (they compare the answer with a reference)"
    ) in one_line(result.stderr)
    roles = {request.role for request in fake_anthropic.requests}
    assert roles == {"claims", "verdicts", "score"}
    results = only_results(workspace.directory)
    assert "precision" not in [name.lower() for name in results.header]
    assert results.path.name.startswith("metric_scores_")
    for row in results.rows:
        assert row["ragas_faithfulness"] != ""
        assert row["ragas_context_precision"] == row["ragas_context_recall"] == ""
        assert row["ragas_answer_relevance"] != ""


def test_a_reference_free_judged_run_resumes_from_its_checkpoint(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_ares(workspace.directory)
    arguments = [
        *RUN,
        "--dataset",
        "nq_ratings.tsv",
        "--metrics",
        "ragas",
        "--answer-relevance",
        "rating",
    ]
    first = run_cli([*arguments, "--limit", "1"])
    assert first.exit_code == 0, first.output
    paid = len(fake_anthropic.requests)
    second = run_cli(arguments)
    assert second.exit_code == 0, second.output
    assert "Resuming: 1 done, 2 still to evaluate" in second.stderr
    # Question 1 is not paid for twice.
    assert len(fake_anthropic.requests) - paid == 2 * paid


def write_two_csvs(folder: Path) -> None:
    write_csv(
        folder / "questions.csv",
        ["Question Number", "Question"],
        [[n, row[0]] for n, row in enumerate(ARES_ROWS, start=1)],
    )
    write_csv(
        folder / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [[n, row[2], json.dumps([row[1]])] for n, row in enumerate(ARES_ROWS, start=1)],
    )


def test_the_three_csvs_without_ground_truth_run_reference_free(workspace: Workspace) -> None:
    write_two_csvs(workspace.directory)
    result = run_cli(["evaluate", "--metrics", "lexical,quality", "--yes"])
    assert result.exit_code == 0, result.output
    assert (
        "No reference answers (no ground_truth.csv): left out the lexical metrics "
        f"{LEXICAL_LEFT_OUT}"
    ) in one_line(result.stderr)
    assert "Coverage: 3/3 questions answered" in result.stderr
    assert len(only_results(workspace.directory).rows) == 3


def test_a_ground_truth_file_named_but_missing_is_still_an_error(workspace: Workspace) -> None:
    write_two_csvs(workspace.directory)
    result = run_cli(["evaluate", "--metrics", "quality", "--ground-truth", "gt.csv", "--yes"])
    assert result.exit_code == 2
    assert "gt.csv not found" in result.stderr


@pytest.mark.needs_extra("semantic")
def test_the_judge_without_ground_truth_says_how_to_fix_it(workspace: Workspace) -> None:
    write_two_csvs(workspace.directory)
    result = run_cli(["evaluate", "--yes"])
    assert result.exit_code == 2
    message = one_line(result.stderr)
    assert message.startswith(
        "Error: ground_truth.csv not found. Create this file with columns: Question Number, "
        "Ground Truth, or run families that need no reference answer, such as --metrics "
        "quality,semantic"
    ), message


def test_convert_dataset_of_a_reference_free_file_gives_the_same_run(
    workspace: Workspace,
) -> None:
    write_ares(workspace.directory)
    converted = run_cli(["convert", "--dataset", "nq_ratings.tsv"])
    assert converted.exit_code == 0, converted.output
    assert not (workspace.directory / "ground_truth.csv").exists()
    assert (
        "ground_truth.csv was not written: nq_ratings.tsv has no reference answers"
    ) in one_line(converted.output)
    assert "name that field reference, ground_truth or expected_answer" in one_line(
        converted.output
    )
    options = ["--metrics", "quality,lexical", "--yes", "--output-dir"]
    assert run_cli(["evaluate", "--dataset", "nq_ratings.tsv", *options, "a"]).exit_code == 0
    assert run_cli(["evaluate", *options, "b"]).exit_code == 0
    bodies = [
        re.sub(
            r"^#SUMMARY.*\n",
            "",
            next((workspace.directory / name).glob("*.csv")).read_text(),
            flags=re.MULTILINE,
        )
        for name in ("a", "b")
    ]
    assert bodies[0] == bodies[1]


def test_ragas_without_references_or_contexts_names_faithfulness_only(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    write_csv(
        workspace.directory / "questions.csv",
        ["Question Number", "Question"],
        [[n, row[0]] for n, row in enumerate(ARES_ROWS, start=1)],
    )
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer"],
        [[n, row[2]] for n, row in enumerate(ARES_ROWS, start=1)],
    )
    result = run_cli([*RUN, "--metrics", "ragas", "--answer-relevance", "rating"])
    assert result.exit_code == 0, result.output
    assert (
        "Warning: ragas: faithfulness is left empty for 3 of 3 question(s): no Contexts in "
        "the answers file (question 1-3)"
    ) in one_line(result.stderr)
    assert {request.role for request in fake_anthropic.requests} == {"score"}


def test_convert_dataset_without_references_names_an_older_ground_truth_file(
    workspace: Workspace,
) -> None:
    write_ares(workspace.directory)
    old = workspace.directory / "ground_truth.csv"
    old.write_text("Question Number,Ground Truth\n1,old\n", encoding="utf-8")
    converted = run_cli(["convert", "--dataset", "nq_ratings.tsv"])
    assert converted.exit_code == 0, converted.output
    assert old.read_text(encoding="utf-8") == "Question Number,Ground Truth\n1,old\n"
    assert (
        "Warning: nq_ratings.tsv has no reference answers, but ground_truth.csv exists from "
        "before: evaluate would read it. Move it away to evaluate without references"
    ) in one_line(converted.stderr)
