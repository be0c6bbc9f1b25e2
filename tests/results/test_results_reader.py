"""Reading results files back: what results/writer.py writes, columns added later, bad files."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from results_support import build_summary

from rag_evaluator.errors import InputError, RagEvalError
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.tables import write_csv_atomic
from rag_evaluator.results import run_scores
from rag_evaluator.results import writer as results
from rag_evaluator.results.reader import read_run_scores
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.run_scores import MetricKind, classify_cells
from rag_evaluator.results.summary import RunFacts
from rag_evaluator.results.writer import write_results

JUDGE = JudgeFamily("prompt", ())
texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
scores = st.one_of(st.none(), st.builds(Scores, *(st.integers(0, 1) for _ in range(3))))
metric_values = st.one_of(st.none(), st.floats(0, 1, allow_nan=False))


@st.composite
def result_rows(draw: st.DrawFn) -> list[ResultRow]:
    numbers = draw(st.lists(st.integers(1, 10**6), min_size=1, max_size=25, unique=True))
    rows = []
    for number in numbers:
        item = EvaluationItem(number, draw(texts), draw(texts), draw(texts))
        judged = draw(scores)
        judge = JudgeResult(
            scores=judged,
            summary=draw(texts) if judged else "",
            error=None if judged else "the model refused to judge this question",
            calls=1,
        )
        rows.append(
            ResultRow(
                item,
                QuestionRecord(number, {"judge": judge}),
                {"rouge1": draw(metric_values), "mrr": draw(metric_values)},
            )
        )
    return rows


def test_the_reader_knows_the_writers_columns() -> None:
    # The two modules name the columns separately (core cannot import storage): keep them equal.
    assert (
        *run_scores.JUDGE_METRICS,
        run_scores.REASONING,
        run_scores.CONSENSUS,
        run_scores.VOTES,
        run_scores.ERROR,
        run_scores.NOTE,
    ) == (*JUDGE.columns, *results.SHARED_JUDGED_COLUMNS)
    assert set(results.ITEM_COLUMNS) <= set(run_scores.NON_METRIC_COLUMNS)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=result_rows())
def test_what_evaluate_writes_reads_back_exactly(tmp_path: Path, rows: list[ResultRow]) -> None:
    columns = ["rouge1", "mrr"]
    facts = RunFacts(judged=True, model_id="claude-haiku-5-5", seed=3, metric_columns=columns)
    folder = tmp_path / str(len(list(tmp_path.iterdir())))
    folder.mkdir()
    path, _ = write_results(
        folder,
        datetime(2026, 1, 2, 3, 4, 5),
        build_summary(rows, facts, [JUDGE]),
        rows,
        families=[JUDGE],
        metric_columns=columns,
    )
    read = read_run_scores(path)
    assert list(read.question_numbers) == sorted(row.item.question_number for row in rows)
    assert dict(read.summary)["Model"] == "claude-haiku-5-5"
    for row in rows:
        number = row.item.question_number
        result = row.family_result("judge")
        assert isinstance(result, JudgeResult)
        judged = result.scores
        for name, value in (
            ("Precision", judged and judged.precision),
            ("Recall", judged and judged.recall),
        ):
            metric = read.metrics.get(name)
            if judged is None:
                assert metric is None or number not in metric.values
            else:
                assert metric is not None and metric.kind is MetricKind.BINARY
                assert metric.values[number] == value
        for column in columns:
            value = row.metric_scores[column]
            metric = read.metrics.get(column)
            if value is None:
                assert metric is None or number in metric.unscored
            else:
                assert metric is not None and metric.kind is MetricKind.CONTINUOUS
                assert metric.values[number] == pytest.approx(round(value, 4), abs=1e-12)
        if judged is not None and result.summary.strip():
            assert read.reasoning[number] == result.summary


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=st.binary(max_size=400) | texts.map(lambda text: text.encode()))
def test_any_bytes_are_read_or_refused_with_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "run.csv"
    path.write_bytes(b"#SUMMARY: Total Questions: 1\n" + content)
    try:
        read_run_scores(path)
    except InputError as error:
        assert "run.csv" in error.message


@pytest.mark.parametrize(
    ("cells", "kind"),
    [
        (["1", "0", "", "1"], MetricKind.BINARY),
        (["0.6291", "1.0000", "", "0.0000"], MetricKind.CONTINUOUS),
        (["0.5", "1", "0"], MetricKind.CONTINUOUS),  # 0/1 among decimals
        (["-0.25", "1e-3", ".5"], MetricKind.CONTINUOUS),
        (["CORRECT", "WRONG"], None),  # labels
        (["A", "B", "E"], None),  # letter grades
        (["1", "3", "4"], None),  # counts (calls, tokens)
        (["0.5", "n/a"], None),
        (["yes", "no"], None),
        (["nan", "0.5"], None),
        (["", " "], None),  # empty: nothing to classify
    ],
)
def test_which_columns_are_metrics(cells: list[str], kind: MetricKind | None) -> None:
    assert classify_cells(cells) is kind


def _write_run(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    write_csv_atomic(path, [["#SUMMARY: Total Questions: 3"], header, *rows])
    return path


def test_columns_added_later_are_classified_by_their_content(tmp_path: Path) -> None:
    path = _write_run(
        tmp_path / "run.csv",
        [
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
            "Faithfulness",
            "Verdict",
            "Grade",
            "Has Citation",
            "Judge Calls",
            "list_coverage",
        ],
        [
            [1, "q", "t", "a", 1, 1, 1, "ok", "no", "", "", "", "0.75", "CORRECT", "A", 1, 3, ""],
            [
                2,
                "q",
                "t",
                "a",
                "",
                "",
                "",
                "",
                "no",
                "",
                "refused",
                "",
                "0.5",
                "WRONG",
                "C",
                0,
                3,
                "",
            ],
            [3, "q", "t", "a", 0, 1, 1, "bad", "no", "", "", "", "", "WRONG", "E", 1, 1, ""],
        ],
    )
    read = read_run_scores(path)
    kinds = {name: metric.kind for name, metric in read.metrics.items()}
    assert kinds == {
        "Precision": MetricKind.BINARY,
        "Recall": MetricKind.BINARY,
        "Accuracy": MetricKind.BINARY,
        "Faithfulness": MetricKind.CONTINUOUS,
        "Has Citation": MetricKind.BINARY,
    }
    assert read.empty_columns == ("list_coverage",)
    assert read.metrics["Precision"].unscored == (2,)
    assert read.metrics["Faithfulness"].unscored == (3,)
    assert read.metrics["Faithfulness"].values == {1: 0.75, 2: 0.5}


def test_a_filled_error_cell_unscores_the_judge_columns_only(tmp_path: Path) -> None:
    # A hand-edited file: the judge failed on question 2, yet a 1 was typed in; the
    # offline rouge1 of that row is the offline metric's own and still counts.
    path = _write_run(
        tmp_path / "run.csv",
        ["Question Number", "Precision", "Error", "rouge1"],
        [[1, 1, "", "0.5000"], [2, 1, "the model refused", "0.2500"]],
    )
    read = read_run_scores(path)
    assert read.metrics["Precision"].values == {1: 1.0}
    assert read.metrics["Precision"].unscored == (2,)
    assert read.metrics["rouge1"].values == {1: 0.5, 2: 0.25}


def test_summary_rows_with_commas_and_semicolon_files_are_read(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text(
        '"#SUMMARY: Cache Tokens: written 5, read 7"\n#SUMMARY: Model: m\n'
        "Question Number;Precision\n1;1\n2;0\n",
        encoding="utf-8",
    )
    read = read_run_scores(path)
    assert dict(read.summary) == {"Cache Tokens": "written 5, read 7", "Model": "m"}
    assert read.metrics["Precision"].values == {1: 1.0, 2: 0.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Question Number,RAG Answer\n1,x\n", "is not a rag-eval results file: it does not start"),
        ("#SUMMARY: Total Questions: 1\nQuestion,Answer\nq,a\n", "has no 'Question Number' column"),
        ("#SUMMARY: Total Questions: 1\n", "is empty or holds no table"),
        ("#SUMMARY: Total Questions: 1\nQuestion Number,Precision\n", "has a header row but no"),
        ("#SUMMARY: T: 1\nQuestion Number,Precision\nabc,1\n", "line 3: 'Question Number' 'abc'"),
        ("#SUMMARY: T: 1\nQuestion Number,Precision\n4,1\n4,0\n", "repeats question number 4"),
        ("", "is empty or holds no table"),
    ],
)
def test_files_that_are_not_results_files_are_refused_in_one_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "run.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RagEvalError) as raised:
        read_run_scores(path)
    assert message in raised.value.message
    assert "\n" not in raised.value.message


def test_missing_files_folders_and_workbooks_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RagEvalError, match="not found"):
        read_run_scores(tmp_path / "nope.csv")
    with pytest.raises(RagEvalError, match="is a directory"):
        read_run_scores(tmp_path)
    workbook = tmp_path / "run.csv"
    workbook.write_bytes(b"PK\x03\x04rest of a zip")
    with pytest.raises(RagEvalError, match="spreadsheet workbook"):
        read_run_scores(workbook)


def test_files_written_before_issue_22_read_under_todays_names(tmp_path: Path) -> None:
    """Such a file held the share of relevant contexts under ragas_context_precision and
    ragas's rank-weighted precision under ragas_context_precision_ranked."""
    old = _write_run(
        tmp_path / "old.csv",
        ["Question Number", "ragas_context_precision", "ragas_context_precision_ranked", "Error"],
        [[1, "0.5000", "1.0000", ""], [2, "0.5000", "0.5000", "geval: refused"]],
    )
    read = read_run_scores(old)
    assert read.metrics["ragas_context_precision"].values == {1: 1.0, 2: 0.5}
    assert read.metrics["relevant_context_share"].values == {1: 0.5, 2: 0.5}
    assert "ragas_context_precision_ranked" not in read.metrics
    # A current file is read as written.
    new = _write_run(
        tmp_path / "new.csv",
        ["Question Number", "ragas_context_precision", "relevant_context_share"],
        [[1, "1.0000", "0.5000"]],
    )
    assert read_run_scores(new).metrics["ragas_context_precision"].values == {1: 1.0}
    assert not run_scores.judge_error("geval: refused")  # the family's old name
    assert not run_scores.judge_error("factual_accuracy: refused")
