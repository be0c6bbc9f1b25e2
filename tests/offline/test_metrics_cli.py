"""The offline metric families through the CLI: convert, then evaluate without an API key."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from evaluate_support import Workspace, only_results, prepare_workspace, run_cli, write_csv

from rag_evaluator.offline.runner import metric_columns

FACTOR_CHUNK = "Factor table: territory 118 uses factor 2.061."
RAG_OUTPUT = [
    {
        "question": "What is the annual premium?",
        "answer": "According to the rate table, the premium is 604.00 dollars (293 * 2.061).",
        "contexts": ["Rate table: base rate 293.", FACTOR_CHUNK, "Discounts: none apply."],
    },
    {
        "question": "Which rules apply?",
        "answer": "Rule C-1 applies.",
        "contexts": [],
    },
    # No contexts field at all: convert leaves the Contexts cell blank ("unknown").
    {"question": "Where is the head office?", "answer": "I don't know."},
]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Three questions converted from RAG JSON, and a ground truth with the optional columns."""
    space = prepare_workspace(tmp_path, monkeypatch)
    (tmp_path / "RAG_JSON_Files").mkdir()
    (tmp_path / "RAG_JSON_Files" / "run.json").write_text(json.dumps(RAG_OUTPUT), "utf-8")
    write_csv(
        tmp_path / "questions.csv",
        ["Question Number", "Question"],
        [[number, entry["question"]] for number, entry in enumerate(RAG_OUTPUT, start=1)],
    )
    write_csv(
        tmp_path / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [
            [
                1,
                "The annual premium is $604 (base rate 293 × factor 2.061).",
                json.dumps([FACTOR_CHUNK]),
                "$604; 293",
            ],
            [2, "* Rule C-1: territory definitions\n* Rule C-2 - rate tiers", "[]", ""],
            [3, "Paris", "", '["Paris"]'],
        ],
    )
    converted = run_cli(["convert"])
    assert converted.exit_code == 0, converted.output
    return space


def cell(value: str) -> float | None:
    return None if value == "" else float(value)


@pytest.mark.needs_extra("overlap")
def test_lexical_overlap_and_retrieval_run_without_a_key_or_a_call(workspace: Workspace) -> None:
    # The autouse fixture removed every Anthropic credential and pointed the SDK at a port
    # where nothing listens: a run that tried to judge would fail.
    result = run_cli(["evaluate", "--metrics", "lexical,overlap,retrieval", "--k", "2", "--yes"])

    assert result.exit_code == 0, result.output
    assert "Proceed?" not in result.stderr
    assert workspace.checkpoint_files() == []
    results = only_results(workspace.directory)
    columns = metric_columns(["lexical", "overlap", "retrieval"])
    assert results.header == ["Question Number", "Question", "Ground Truth", "RAG Answer", *columns]

    first, second, third = (results.row(number) for number in (1, 2, 3))
    # 604.00 is $604, and 293 and 2.061 are there: every number and fact matches.
    assert cell(first["number_match"]) == 1.0
    assert cell(first["fact_score"]) == 1.0
    assert cell(first["citation_quality"]) == pytest.approx(1 / 3, abs=5e-5)  # "according to"
    # The golden chunk is retrieved at rank 2 of 3, k = 2.
    assert cell(first["precision_at_k"]) == 0.5
    assert cell(first["recall_at_k"]) == 1.0
    assert cell(first["mrr"]) == 0.5
    assert cell(first["ndcg_at_k"]) == pytest.approx(1 / math.log2(3), abs=5e-5)
    # 0.5 * recall 1 + 0.5 * (1 - ln 2 / ln 3) = 0.68454
    assert cell(first["hybrid_log_rank"]) == pytest.approx(0.68454, abs=5e-5)
    # One of the two list items is named; no golden chunk: nothing retrieved is relevant.
    assert cell(second["list_coverage"]) == 0.5
    assert cell(second["precision_at_k"]) == 0.0
    assert cell(second["recall_at_k"]) is None
    assert cell(second["fact_score"]) is None
    assert cell(third["dont_know"]) == 1.0
    assert cell(third["fact_score"]) == 0.0
    assert cell(third["bleu"]) == 0.0 and cell(third["rouge1"]) == 0.0
    assert cell(third["precision_at_k"]) is None  # Contexts and Relevant Contexts blank: unknown

    # Summary rows: the mean over the questions that had a value, and how many did.
    assert results.summary["recall_at_k"] == "mean 1.0000 (n=1)"
    assert results.summary["precision_at_k"] == "mean 0.2500 (n=2)"
    assert results.summary["fact_score"] == "mean 0.5000 (n=2)"
    # Issue 22: empty cells are a table after the summary and lines of the log, not warnings.
    assert "left empty" not in result.stderr
    assert "Not applicable" in result.stdout
    log = " ".join((workspace.directory / "rag_eval.log").read_text(encoding="utf-8").split())
    assert (
        "recall_at_k: left empty for 2 of 3 question(s): no relevant chunk is listed "
        "(question 2); no Contexts in rag_answers.csv (question 3)"
    ) in log
    assert (
        "fact_score: left empty for 1 of 3 question(s): no Required Facts in "
        "ground_truth.csv (question 2)"
    ) in log


@pytest.mark.needs_extra("overlap")
@pytest.mark.needs_extra("semantic")
def test_all_without_a_key_stops_before_anything_runs(workspace: Workspace) -> None:
    # `all` includes the judge, which needs the key: the run stops with the fix instead of
    # quietly producing a results file without the judge's columns.
    result = run_cli(["evaluate", "--metrics", "all", "--yes"])

    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY is not set" in result.stderr
    assert "or leave the judged families out with --metrics lexical,overlap,retrieval,semantic" in (
        result.stderr
    )
    assert not (workspace.directory / "Evaluation_Runs").exists() or not list(
        (workspace.directory / "Evaluation_Runs").iterdir()
    )


@pytest.mark.needs_extra("semantic")
def test_semantic_and_similarity_matching_run_on_the_bundled_model_by_name(
    workspace: Workspace,
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            "retrieval,semantic",
            "--match",
            "similarity",
            "--embedding-model",
            "all-MiniLM-L6-v2",
            "--k",
            "2",
            "--yes",
        ]
    )

    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert results.header[4:] == metric_columns(["retrieval", "semantic"])
    first = results.row(1)
    # The golden chunk is retrieved word for word: its cosine is 1, above the 0.8 threshold.
    assert cell(first["recall_at_k"]) == 1.0
    assert cell(first["mrr"]) == 0.5
    for column in metric_columns(["semantic"]):
        value = cell(first[column])
        assert value is not None and 0.0 <= value <= 1.0


def test_warnings_name_the_files_given_on_the_command_line(workspace: Workspace) -> None:
    data = workspace.directory / "data"
    data.mkdir()
    (workspace.directory / "ground_truth.csv").rename(data / "golden_v2.csv")
    (workspace.directory / "rag_answers.csv").rename(data / "system_b.csv")
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            "lexical,retrieval",
            "--ground-truth",
            str(Path("data") / "golden_v2.csv"),
            "--answers",
            str(Path("data") / "system_b.csv"),
            "--yes",
        ]
    )

    assert result.exit_code == 0, result.output
    log_text = (Path.cwd() / "rag_eval.log").read_text(encoding="utf-8")
    warnings = " ".join(log_text.split())
    golden = str(Path("data") / "golden_v2.csv")
    assert (
        f"fact_score: left empty for 1 of 3 question(s): no Required Facts in {golden} (question 2)"
    ) in warnings
    # Question 3's system output has no context field: its Contexts cell is blank.
    assert f"no Contexts in {Path('data') / 'system_b.csv'} (question 3)" in warnings
    assert "ground_truth.csv" not in result.output
    assert "rag_answers.csv" not in result.output


def test_a_missing_contexts_column_is_named_in_the_answers_file_given(
    workspace: Workspace,
) -> None:
    write_csv(
        workspace.directory / "answers_no_contexts.csv",
        ["Question Number", "RAG Answer"],
        [[number, entry["answer"]] for number, entry in enumerate(RAG_OUTPUT, start=1)],
    )
    result = run_cli(
        ["evaluate", "--metrics", "retrieval", "--answers", "answers_no_contexts.csv", "--yes"]
    )

    assert result.exit_code == 0, result.output
    log = (workspace.directory / "rag_eval.log").read_text(encoding="utf-8")
    assert "no Contexts in answers_no_contexts.csv" in " ".join(log.split())
    assert "rag_answers.csv" not in result.output


@pytest.mark.needs_extra("semantic")
def test_similarity_matching_in_a_run_counts_a_repeated_chunk_as_the_library_does(
    workspace: Workspace,
) -> None:
    from rag_evaluator.metrics import hybrid_log_rank_score, mrr, precision_at_k, recall_at_k
    from rag_evaluator.offline.embeddings import load_text_embedder

    # The golden chunk retrieved twice (once in capitals: the uncased model sees one text),
    # between two unrelated chunks.
    retrieved = [
        "Discounts: none apply.",
        FACTOR_CHUNK,
        FACTOR_CHUNK.upper(),
        FACTOR_CHUNK,
        "Rate table: base rate 293.",
    ]
    write_csv(
        workspace.directory / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [[1, "604", json.dumps(retrieved)]],
    )
    result = run_cli(
        ["evaluate", "--metrics", "retrieval", "--match", "similarity", "--k", "3", "--yes"]
    )
    assert result.exit_code == 0, result.output
    row = only_results(workspace.directory).row(1)

    embedder = load_text_embedder(None)
    retrieved_vectors = embedder.encode(retrieved)
    golden_vectors = embedder.encode([FACTOR_CHUNK])
    vectors = {"retrieved_chunks": retrieved_vectors, "match": "similarity"}
    library = {
        "precision_at_k": precision_at_k(golden_vectors, k=3, **vectors),
        "recall_at_k": recall_at_k(golden_vectors, k=3, **vectors),
        "mrr": mrr(golden_vectors, **vectors),
        "hybrid_log_rank": hybrid_log_rank_score(golden_vectors, **vectors),
    }
    # Three distinct chunks, the golden one at rank 2: P@3 = 1/3, not 3/5 or 2/3.
    assert library["precision_at_k"] == pytest.approx(1 / 3)
    for column, value in library.items():
        assert cell(row[column]) == pytest.approx(value, abs=5e-5), column
