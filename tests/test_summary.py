"""The #SUMMARY rows and the results table."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.core.question_results import QuestionResult, ResultRow, Scores, Vote
from rag_evaluator.core.records import EvaluationItem, TokenUsage
from rag_evaluator.core.summary import RunFacts, build_summary, format_fraction
from rag_evaluator.storage.results import results_file_path, write_results
from rag_evaluator.storage.tables import write_csv_atomic


def _item(number: int) -> EvaluationItem:
    return EvaluationItem(number, f"Question {number}?", f"Truth {number}", f"Answer {number}")


def _rows() -> list[ResultRow]:
    return [
        ResultRow(_item(3), QuestionResult(3, Scores(1, 0, 1), "partly", calls=1)),
        ResultRow(_item(1), QuestionResult(1, Scores(1, 1, 1), "fine", calls=1)),
        ResultRow(
            _item(2),
            QuestionResult(2, None, error="refused (gave up after 3 calls)", calls=3),
        ),
        ResultRow(
            _item(4),
            QuestionResult(
                4,
                Scores(0, 0, 1),
                "mostly wrong",
                consensus=True,
                initial_scores=Scores(1, 1, 1),
                votes=(Vote(Scores(0, 0, 1)), Vote(Scores(0, 0, 1)), Vote(None, "overloaded")),
                hedge_phrases=("borderline",),
                calls=4,
            ),
        ),
    ]


def _facts(**overrides: object) -> RunFacts:
    values: dict[str, object] = {
        "judged": True,
        "model_id": "claude-haiku-5-5",
        "seed": 42,
        "prompt_origin": "built-in default",
        "usage": TokenUsage(1200, 300),
        "cost_usd": 0.000270,
    }
    values.update(overrides)
    return RunFacts(**values)  # type: ignore[arg-type]


def test_fractions_count_scored_questions_only() -> None:
    lines = [line.text() for line in build_summary(_rows(), _facts())]
    assert lines == [
        "#SUMMARY: Total Questions: 4",
        # Wilson intervals, worked by hand: z = 1.96, centre (p + z²/2n)/(1 + z²/n),
        # half-width z sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n).
        "#SUMMARY: Precision: 2/3 (67%) [95% CI 21–94%]",
        "#SUMMARY: Recall: 1/3 (33%) [95% CI 6–79%]",
        "#SUMMARY: Accuracy: 3/3 (100%) [95% CI 44–100%]",
        "#SUMMARY: Unscored: 1",
        "#SUMMARY: Consensus: 1",
        "#SUMMARY: No Information (no call): 0",
        "#SUMMARY: Model: claude-haiku-5-5",
        "#SUMMARY: Seed: 42",
        "#SUMMARY: Prompt: built-in default",
        "#SUMMARY: Judge Calls: 9",
        "#SUMMARY: Tokens In: 1200",
        "#SUMMARY: Tokens Out: 300",
        "#SUMMARY: Cost: $0.0003",
    ]


def test_nothing_scored_is_not_a_division_by_zero() -> None:
    rows = [ResultRow(_item(1), QuestionResult(1, None, error="refused"))]
    lines = [line.text() for line in build_summary(rows, _facts())]
    assert "#SUMMARY: Precision: 0/0 (n/a)" in lines
    assert "#SUMMARY: Unscored: 1" in lines


@given(st.integers(0, 500), st.integers(1, 500))
def test_percentages_round_half_up(count: int, total: int) -> None:
    count = min(count, total)
    text = format_fraction(count, total)
    percent = int(text.split("(")[1].split("%)")[0])
    assert abs(percent - 100 * count / total) <= 0.5
    assert text.startswith(f"{count}/{total} (")


def test_offline_metrics_get_a_mean_over_questions_that_have_their_inputs() -> None:
    rows = [
        ResultRow(_item(1), None, {"exact_match": 1.0, "context_recall": None}),
        ResultRow(_item(2), None, {"exact_match": 0.0, "context_recall": None}),
        ResultRow(_item(3), None, {"exact_match": 0.5, "context_recall": None}),
    ]
    facts = RunFacts(judged=False, metric_columns=["exact_match", "context_recall"])
    assert [line.text() for line in build_summary(rows, facts)] == [
        "#SUMMARY: Total Questions: 3",
        "#SUMMARY: exact_match: mean 0.5000 (n=3) [95% CI 0.00–1.00]",
        "#SUMMARY: context_recall: mean n/a (n=0)",
    ]


def test_results_file_has_summary_rows_then_the_table_in_question_order(tmp_path: Path) -> None:
    rows = _rows()
    started = datetime(2026, 3, 4, 5, 6, 7)
    path = write_results(
        tmp_path, started, build_summary(rows, _facts()), rows, judged=True, metric_columns=[]
    )
    assert path == tmp_path / "precision_scores_20260304_050607.csv"
    text = path.read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    summary = [row for row in table if row[0].startswith("#SUMMARY:")]
    assert len(summary) == 14 and table[:14] == summary
    header, *data = table[14:]
    assert header == [
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
        "Error",
        "Note",
    ]
    assert [row[0] for row in data] == ["1", "2", "3", "4"]
    unscored = data[1]
    assert unscored[4:7] == ["", "", ""]
    assert unscored[10] == "refused (gave up after 3 calls)"
    consensus = data[3]
    assert consensus[4:10] == [
        "0",
        "0",
        "1",
        "mostly wrong",
        "yes",
        "first 1/1/1; votes 0/0/1, 0/0/1, error",
    ]
    assert "'borderline'" in consensus[11]
    assert "nan" not in text.lower()


def test_results_file_names_never_clobber_an_earlier_run(tmp_path: Path) -> None:
    started = datetime(2026, 3, 4, 5, 6, 7)
    first = results_file_path(tmp_path, started)
    assert first.name == "precision_scores_20260304_050607.csv"
    first.write_text("earlier run")
    second = results_file_path(tmp_path, started)
    assert second.name == "precision_scores_20260304_050607_2.csv"


def test_a_results_file_created_by_another_run_at_the_last_moment_is_kept(tmp_path: Path) -> None:
    # Another run may take the name between the existence check and the write: publishing
    # with a hard link fails on an existing name instead of replacing it.
    started = datetime(2026, 3, 4, 5, 6, 7)
    rows = _rows()
    taken = tmp_path / "precision_scores_20260304_050607.csv"
    taken.write_text("the other run's results")
    summary = build_summary(rows, _facts())
    path = write_results(tmp_path, started, summary, rows, judged=True, metric_columns=[])
    assert path.name == "precision_scores_20260304_050607_2.csv"
    assert taken.read_text() == "the other run's results"
    assert sorted(p.name for p in tmp_path.iterdir()) == [taken.name, path.name]


def test_exclusive_writes_never_replace_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    target.write_text("first")
    with pytest.raises(FileExistsError):
        write_csv_atomic(target, [["second"]], overwrite=False)
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]
