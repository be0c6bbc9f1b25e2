"""The #SUMMARY rows and the results table."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from results_support import build_summary, group_summaries

from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.inputs.tables import write_csv_atomic
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RunFacts, format_fraction
from rag_evaluator.results.writer import results_file_path, results_json, write_results

JUDGE = JudgeFamily("prompt", ("borderline",))
FAMILIES = [JUDGE]


def _item(number: int) -> EvaluationItem:
    return EvaluationItem(number, f"Question {number}?", f"Truth {number}", f"Answer {number}")


def _row(number: int, result: JudgeResult | None, metrics: dict | None = None) -> ResultRow:
    record = None if result is None else QuestionRecord(number, {"judge": result})
    return ResultRow(_item(number), record, metrics or {})


def _rows() -> list[ResultRow]:
    return [
        _row(3, JudgeResult(scores=Scores(1, 0, 1), summary="partly", calls=1)),
        _row(1, JudgeResult(scores=Scores(1, 1, 1), summary="fine", calls=1)),
        _row(2, JudgeResult(error="refused (gave up after 3 calls)", failure="question", calls=3)),
        _row(
            4,
            JudgeResult(
                scores=Scores(0, 0, 1),
                summary="mostly wrong",
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
        "calls": 9,
        "cost_usd": 0.000270,
        "coverage": (4, 5),
        "estimate": "$0.0002 to $0.0009",
    }
    values.update(overrides)
    return RunFacts(**values)  # type: ignore[arg-type]


def test_fractions_count_scored_questions_only() -> None:
    lines = [line.text() for line in build_summary(_rows(), _facts(), FAMILIES)]
    assert lines == [
        "#SUMMARY: Total Questions: 4",
        "#SUMMARY: Coverage: 4/5 questions answered",
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
        "#SUMMARY: Cached Questions: 0",
        "#SUMMARY: Tokens In: 1200",
        "#SUMMARY: Tokens Out: 300",
        "#SUMMARY: Estimated Cost: $0.0002 to $0.0009",
        "#SUMMARY: Cost: $0.00027",
        # Issue 22: the file states each metric column's kind for its readers.
        "#SUMMARY: Metric Kinds: Precision=binary; Recall=binary; Accuracy=binary",
    ]


def test_cache_tokens_and_the_batch_discount_are_reported() -> None:
    facts = _facts(usage=TokenUsage(1200, 300, 2048, 6144), batch=True, cached_questions=2)
    lines = [line.text() for line in build_summary(_rows(), facts, FAMILIES)]
    assert "#SUMMARY: Cache Tokens: written 2048, read 6144" in lines
    assert "#SUMMARY: Batch: yes (Message Batches API, 50% of the price)" in lines
    assert "#SUMMARY: Cached Questions: 2" in lines


def test_nothing_scored_is_not_a_division_by_zero() -> None:
    rows = [_row(1, JudgeResult(error="refused", failure="question"))]
    lines = [line.text() for line in build_summary(rows, _facts(), FAMILIES)]
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
        _row(1, None, {"keyword_coverage": 1.0, "context_recall": None, "exact_match": 1.0}),
        _row(2, None, {"keyword_coverage": 0.0, "context_recall": None, "exact_match": 0.0}),
        _row(3, None, {"keyword_coverage": 0.5, "context_recall": None, "exact_match": 0.0}),
    ]
    facts = RunFacts(
        judged=False, metric_columns=["keyword_coverage", "context_recall", "exact_match"]
    )
    assert [line.text() for line in build_summary(rows, facts)] == [
        "#SUMMARY: Total Questions: 3",
        "#SUMMARY: keyword_coverage: mean 0.5000 (n=3) [95% CI n/a]",
        "#SUMMARY: context_recall: mean n/a (n=0)",
        # Issue 22: exact_match is a 0/1 metric: a rate with Wilson's interval.
        "#SUMMARY: exact_match: 1/3 (33%) [95% CI 6–79%]",
        "#SUMMARY: Metric Kinds: keyword_coverage=continuous 0 to 1; exact_match=binary",
    ]


def test_results_file_has_summary_rows_then_the_table_in_question_order(tmp_path: Path) -> None:
    rows = _rows()
    started = datetime(2026, 3, 4, 5, 6, 7)
    summary_lines = build_summary(rows, _facts(), FAMILIES)
    path, json_path = write_results(
        tmp_path, started, summary_lines, rows, families=FAMILIES, metric_columns=[]
    )
    assert path == tmp_path / "precision_scores_20260304_050607.csv"
    assert json_path is None
    text = path.read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    summary = [row for row in table if row[0].startswith("#SUMMARY:")]
    count = len(summary_lines)
    assert len(summary) == count and table[:count] == summary
    header, *data = table[count:]
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
    summary = build_summary(rows, _facts(), FAMILIES)
    path, _ = write_results(tmp_path, started, summary, rows, families=FAMILIES, metric_columns=[])
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


def test_json_results_hold_the_summary_and_rows_with_numbers_as_numbers(tmp_path: Path) -> None:
    rows = _rows()
    rows[0] = _row(3, JudgeResult(scores=Scores(1, 0, 1), summary="partly"), {"rouge1": 0.5})
    summary = build_summary(rows, _facts(metric_columns=["rouge1"]), FAMILIES)
    path, json_path = write_results(
        tmp_path,
        datetime(2026, 3, 4, 5, 6, 7),
        summary,
        rows,
        families=FAMILIES,
        metric_columns=["rouge1"],
        with_json=True,
    )
    assert json_path == path.with_suffix(".json")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["summary"]["Precision"] == {
        "text": "2/3 (67%) [95% CI 21–94%]",
        "count": 2,
        "total": 3,
        "rate": pytest.approx(2 / 3),
        # Issue 22: the interval as computed, not read back from the rounded text.
        "ci_low": pytest.approx(0.2076596008),
        "ci_high": pytest.approx(0.9385080553),
    }
    assert data["summary"]["Total Questions"] == 4
    assert data["summary"]["Cost"] == pytest.approx(0.00027)
    assert data["summary"]["rouge1"]["mean"] == pytest.approx(0.5)
    by_number = {row["Question Number"]: row for row in data["rows"]}
    assert by_number[3]["Precision"] == 1 and by_number[3]["Recall"] == 0
    assert by_number[3]["rouge1"] == 0.5
    assert by_number[2]["Precision"] is None
    assert by_number[2]["Error"] == "refused (gave up after 3 calls)"
    assert by_number[1]["rouge1"] is None
    assert data["columns"][:4] == ["Question Number", "Question", "Ground Truth", "RAG Answer"]


def test_the_results_csv_reads_with_pandas_skiprows_recipe(tmp_path: Path) -> None:
    # The README's recipe: skip the #SUMMARY rows, then read the table.
    rows = _rows()
    summary = build_summary(rows, _facts(), FAMILIES)
    path, _ = write_results(
        tmp_path, datetime(2026, 3, 4, 5, 6, 7), summary, rows, families=FAMILIES, metric_columns=[]
    )
    with path.open(encoding="utf-8", newline="") as handle:
        skip = sum(1 for line in handle if line.startswith("#SUMMARY:"))
    assert skip == len(summary)
    with path.open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(line for index, line in enumerate(handle) if index >= skip))
    assert [row["Question Number"] for row in table] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("row_count", [0, 1, 4])
@pytest.mark.parametrize("grouped", [False, True])
def test_results_written_row_by_row_read_back_as_the_whole_run(
    tmp_path: Path, row_count: int, grouped: bool
) -> None:
    # The files are streamed (a million rows are never held as one text): what lands on disk
    # must still be exactly the whole run, including an empty run, text that needs quoting,
    # metadata columns and --group-by's summaries.
    rows = [
        replace(
            row, item=replace(row.item, metadata={"Category": f"c{row.item.question_number % 2}"})
        )
        for row in _rows()[:row_count]
    ]
    if rows:
        rows[0] = replace(
            rows[0],
            record=QuestionRecord(
                1, {"judge": JudgeResult(scores=Scores(1, 1, 1), summary='a "quoted",\r\nline')}
            ),
        )
    summary = build_summary(rows, _facts(), FAMILIES)
    metadata = ["Category"] if grouped else []
    groups = group_summaries(rows, "Category", FAMILIES, []) if grouped else []
    path, json_path = write_results(
        tmp_path,
        datetime(2026, 3, 4, 5, 6, 7),
        summary,
        rows,
        families=FAMILIES,
        metric_columns=[],
        with_json=True,
        metadata_columns=metadata,
        groups=groups,
    )
    assert json_path is not None
    expected = results_json(summary, rows, FAMILIES, [], metadata, groups)
    assert json.loads(json_path.read_text(encoding="utf-8")) == expected
    assert json_path.read_text(encoding="utf-8") == (
        json.dumps(expected, ensure_ascii=False, indent=1) + "\n"
    )
    table = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    head = [[line.text()] for line in summary] + [
        [text] for group in groups for text in group.texts()
    ]
    assert table[: len(head)] == head
    assert table[len(head)] == expected["columns"]
    assert len(table) == len(head) + 1 + row_count
    if grouped and row_count:
        assert "groups" in expected and table[len(head) + 1][-1].startswith("c")
    assert [tmp.name for tmp in tmp_path.iterdir() if tmp.name.endswith(".tmp")] == []
