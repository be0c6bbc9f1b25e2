"""``rag-eval compare`` through the CLI, on results files written by the real writer."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import pytest
from evaluate_support import run_cli
from results_support import build_summary
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from rag_evaluator.cli import console
from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RunFacts
from rag_evaluator.results.writer import write_results

Judged = tuple[int, str] | None  # (precision, reasoning), or None for an unscored row


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write_run(
    path: Path,
    judged: Mapping[int, Judged],
    metrics: Mapping[int, Mapping[str, float | None]] | None = None,
) -> Path:
    """A results file as evaluate writes it: precision as given, recall and accuracy 1."""
    columns = sorted({name for row in (metrics or {}).values() for name in row})
    rows = []
    for number, outcome in judged.items():
        item = EvaluationItem(number, f"Question {number}?", f"Truth {number}", f"Answer {number}")
        if outcome is None:
            result = JudgeResult(error="the model refused to judge", failure="question", calls=3)
        else:
            result = JudgeResult(scores=Scores(outcome[0], 1, 1), summary=outcome[1], calls=1)
        record = QuestionRecord(number, {"judge": result})
        rows.append(ResultRow(item, record, dict((metrics or {}).get(number, {}))))
    facts = RunFacts(judged=True, model_id="claude-haiku-5-5", seed=1, metric_columns=columns)
    folder = path.parent / f".{path.name}.d"
    folder.mkdir()
    judge = JudgeFamily("prompt", ())
    written, _ = write_results(
        folder,
        datetime(2026, 1, 1),
        build_summary(rows, facts, [judge]),
        rows,
        families=[judge],
        metric_columns=columns,
    )
    written.rename(path)
    return Path(path.name)  # the tests run in tmp_path: name files as a user would


def good_and_bad(tmp_path: Path) -> tuple[Path, Path]:
    """20 questions; the new run loses precision on 8 of them and rouge1 drops by 0.2."""
    baseline = write_run(
        tmp_path / "base.csv",
        {n: (1, f"base {n}: faithful") for n in range(1, 21)},
        {n: {"rouge1": 0.5 + n / 100} for n in range(1, 21)},
    )
    run = write_run(
        tmp_path / "new.csv",
        {
            n: (0 if n <= 8 else 1, f"new {n}: {'invents a date' if n <= 8 else 'fine'}")
            for n in range(1, 21)
        },
        {n: {"rouge1": 0.3 + n / 100 + (0.01 if n % 2 else -0.01)} for n in range(1, 21)},
    )
    return baseline, run


def test_a_worse_run_is_shown_with_its_tests_and_flipped_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console.stdout_console, "width", 200)  # a wide terminal: no wrapping
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(["compare", str(baseline), str(run), "--json", "report.json"])
    assert result.exit_code == 0, result.output
    assert "Precision" in result.stdout and "20/20" in result.stdout and "12/20" in result.stdout
    # The flipped questions, with the reasoning of both runs.
    assert "base 3: faithful" in result.stdout and "new 3: invents a date" in result.stdout
    assert "1→0 (worse)" in result.stdout
    assert "-40.0 pts (-61.3 to -15.8)" in result.stdout  # Newcombe, see test_statistics
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    [comparison] = report["comparisons"]
    precision, recall, accuracy, rouge1 = comparison["metrics"]
    assert precision["metric"] == "Precision" and precision["kind"] == "binary"
    assert precision["counts"] == {
        "baseline_successes": 20,
        "run_successes": 12,
        "both": 12,
        "neither": 0,
        "baseline_only": 8,
        "run_only": 0,
    }
    # McNemar: 8 discordant pairs all one way: 2 / 2^8, as statsmodels computes it.
    assert precision["p_value"] == pytest.approx(2 / 256)
    assert precision["p_value"] == pytest.approx(mcnemar([[12, 8], [0, 0]], exact=True).pvalue)
    assert precision["difference"] == pytest.approx(-0.4)
    assert [flip["question_number"] for flip in precision["got_worse"]] == list(range(1, 9))
    assert precision["got_worse"][0]["run_reasoning"] == "new 1: invents a date"
    assert rouge1["kind"] == "continuous"
    assert rouge1["difference"] == pytest.approx(-0.2)
    low, high = rouge1["interval"]
    assert low < -0.2 < high < 0
    assert rouge1["p_value"] < 0.001
    # One Holm family over the four metrics: statsmodels gives the same adjusted p-values.
    p_values = [metric["p_value"] for metric in (precision, recall, accuracy, rouge1)]
    expected = multipletests(p_values, method="holm")[1]
    assert [metric["holm_p_value"] for metric in (precision, recall, accuracy, rouge1)] == (
        pytest.approx(list(expected))
    )
    assert report["holm_family"]["size"] == 4
    assert precision["verdict"] == "worse" and rouge1["verdict"] == "worse"
    assert recall["verdict"] == "n.s." and recall["p_value"] == 1.0


def test_fail_if_worse_exits_3_naming_the_metrics(tmp_path: Path) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(["compare", str(baseline), str(run), "--fail-if-worse"])
    assert result.exit_code == 3, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert "Significantly worse than the baseline base.csv" in error
    assert "Precision in new.csv (-40 points" in error and "rouge1 in new.csv" in error
    # Against itself nothing is worse: the gate passes.
    same = run_cli(["compare", str(baseline), str(baseline), "--fail-if-worse"])
    assert same.exit_code == 0, same.output


def test_a_better_run_does_not_fail_the_gate(tmp_path: Path) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(["compare", str(run), str(baseline), "--fail-if-worse", "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["comparisons"][0]["metrics"][0]["verdict"] == "better"


def test_json_on_stdout_is_clean_json_and_the_tables_go_to_stderr(tmp_path: Path) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(["compare", str(baseline), str(run), "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["baseline"] == str(baseline)
    assert "Run against baseline" in result.stderr


def test_per_question_diff_csv(tmp_path: Path) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(["compare", str(baseline), str(run), "--output", "diff.csv"])
    assert result.exit_code == 0, result.output
    with (tmp_path / "diff.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 20
    first = rows[0]
    assert first["Question Number"] == "1" and first["Status"] == "in both"
    assert (first["Precision (baseline)"], first["Precision (run)"], first["Precision change"]) == (
        "1",
        "0",
        "-1",
    )
    assert first["rouge1 (baseline)"] == "0.5100" and first["rouge1 change"] == "-0.1900"
    assert first["Baseline Reasoning"] == "base 1: faithful"
    assert first["Run Reasoning"] == "new 1: invents a date"


def test_mismatched_questions_and_unscored_rows_are_left_out_by_number(tmp_path: Path) -> None:
    baseline = write_run(tmp_path / "base.csv", {n: (1, "ok") for n in range(1, 13)})
    run = write_run(
        tmp_path / "new.csv",
        {**{n: (1, "ok") for n in range(1, 11)}, 4: None, 7: None, 30: (0, "x")},
    )
    result = run_cli(
        ["compare", str(baseline), str(run), "--json", "out.json", "--output", "d.csv"]
    )
    assert result.exit_code == 0, result.output
    assert "Questions only in base.csv, left out: 11-12" in result.stderr
    assert "Questions only in new.csv, left out: 30" in result.stderr
    assert "Precision: unscored in one run or both, left out: 4, 7" in result.stderr
    precision = json.loads((tmp_path / "out.json").read_text())["comparisons"][0]["metrics"][0]
    assert precision["paired_questions"] == 8
    assert precision["left_out_unscored"] == [4, 7]
    with (tmp_path / "d.csv").open(encoding="utf-8", newline="") as handle:
        statuses = {row["Question Number"]: row["Status"] for row in csv.DictReader(handle)}
    assert statuses["11"] == "only in baseline" and statuses["30"] == "only in run"


def test_metrics_in_one_run_only_are_reported_not_compared(tmp_path: Path) -> None:
    baseline = write_run(
        tmp_path / "base.csv", {1: (1, "a"), 2: (1, "b")}, {1: {"bleu": 0.5}, 2: {"bleu": 0.4}}
    )
    run = write_run(tmp_path / "new.csv", {1: (1, "a"), 2: (0, "b")})
    result = run_cli(["compare", str(baseline), str(run)])
    assert result.exit_code == 0, result.output
    assert "bleu: not compared (only in base.csv)" in result.stderr


def test_runs_sharing_no_metric_or_no_question_are_errors(tmp_path: Path) -> None:
    offline = Path("offline.csv")
    offline.write_text(
        "#SUMMARY: Total Questions: 2\nQuestion Number,bleu\n1,0.5000\n2,0.2500\n", "utf-8"
    )
    judged = write_run(tmp_path / "judged.csv", {1: (1, "a"), 2: (0, "b")})
    result = run_cli(["compare", str(offline), str(judged)])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: offline.csv and judged.csv have no metric column in")
    other = write_run(tmp_path / "other.csv", {7: (1, "a"), 8: (0, "b")})
    result = run_cli(["compare", str(judged), str(other)])
    assert result.exit_code == 2
    assert "have no question number in common (judged.csv: 1-2; other.csv: 7-8)" in result.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["questions.csv", "base.csv"], "questions.csv is not a rag-eval results file"),
        (["missing.csv", "base.csv"], "missing.csv not found"),
        (["base.csv"], "compare needs at least two results files"),
        (["base.csv", "new.csv", "--metrics", "precison"], "--metrics names 'precison'"),
        (["base.csv", "new.csv", "--output", "new.csv"], "is one of the input files"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    good_and_bad(tmp_path)
    (tmp_path / "questions.csv").write_text("Question Number,Question\n1,Why?\n", "utf-8")
    result = run_cli(["compare", *arguments])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.output


def test_three_runs_are_each_compared_with_the_baseline_in_one_holm_family(
    tmp_path: Path,
) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(
        [
            "compare",
            str(baseline),
            str(run),
            str(baseline),
            "--metrics",
            "precision,ROUGE1",
            "--json",
            "-",
        ]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [c["run"] for c in report["comparisons"]] == [str(run), str(baseline)]
    assert report["holm_family"]["size"] == 4  # 2 runs x 2 chosen metrics
    assert [m["metric"] for m in report["comparisons"][0]["metrics"]] == ["Precision", "rouge1"]
    raw = [m["p_value"] for c in report["comparisons"] for m in c["metrics"]]
    holm = [m["holm_p_value"] for c in report["comparisons"] for m in c["metrics"]]
    assert holm == pytest.approx(list(multipletests(raw, method="holm")[1]))


def test_lower_is_better_for_dont_know(tmp_path: Path) -> None:
    """More answers that say "I don't know" is a regression, not an improvement."""
    judged = {n: (1, "ok") for n in range(1, 31)}
    baseline = write_run(tmp_path / "base.csv", judged, {n: {"dont_know": 0.0} for n in judged})
    run = write_run(
        tmp_path / "new.csv", judged, {n: {"dont_know": float(n <= 20)} for n in judged}
    )
    result = run_cli(["compare", str(baseline), str(run), "--json", "-", "--fail-if-worse"])
    assert result.exit_code == 3
    dont_know = json.loads(result.stdout)["comparisons"][0]["metrics"][-1]
    assert dont_know["lower_is_better"] and dont_know["verdict"] == "worse"


def test_lower_is_better_for_hallucination(tmp_path: Path) -> None:
    judged = {n: (1, "ok") for n in range(1, 31)}
    baseline = write_run(
        tmp_path / "base.csv", judged, {n: {"hallucination": 0.1 + n / 1000} for n in judged}
    )
    run = write_run(
        tmp_path / "new.csv", judged, {n: {"hallucination": 0.4 + n / 900} for n in judged}
    )
    result = run_cli(["compare", str(baseline), str(run), "--json", "-", "--fail-if-worse"])
    assert result.exit_code == 3
    hallucination = json.loads(result.stdout)["comparisons"][0]["metrics"][-1]
    assert hallucination["difference"] > 0 and hallucination["verdict"] == "worse"


# -- issue 22: flips explained by the family that flipped; --output honours --metrics ------------

FAMILY_HEADER = (
    "Question Number,Question,Precision,Reasoning,answer_class,answer_correct,"
    "classify_reasoning,is_matching,match_reasoning,rubric_cites,rubric_reasoning,"
    "quality_pass,Quality Failures\n"
)
KINDS = (
    "#SUMMARY: Metric Kinds: Precision=binary; answer_correct=binary; is_matching=binary; "
    "rubric_cites=binary; quality_pass=binary\n"
)


def family_run(path: Path, flipped: bool) -> Path:
    """Two questions; with ``flipped`` every 0/1 metric of question 1 goes from 1 to 0."""
    value = "0" if flipped else "1"
    tag = "new" if flipped else "old"
    path.write_text(
        "#SUMMARY: Total Questions: 2\n"
        + KINDS
        + FAMILY_HEADER
        + f"1,Why?,{value},judge {tag},CORRECT,{value},classify {tag},{value},match {tag},"
        + f"{value},rubric {tag},{value},{'' if value == '1' else 'quality_not_empty'}\n"
        + "2,How?,1,judge ok,CORRECT,1,classify ok,1,match ok,1,rubric ok,1,\n",
        "utf-8",
    )
    return Path(path.name)


def test_a_flip_is_explained_by_the_reasoning_of_the_family_that_flipped(tmp_path: Path) -> None:
    baseline = family_run(tmp_path / "base.csv", flipped=False)
    run = family_run(tmp_path / "new.csv", flipped=True)
    result = run_cli(["compare", str(baseline), str(run), "--json", "-"])
    assert result.exit_code == 0, result.output
    metrics = {m["metric"]: m for m in json.loads(result.stdout)["comparisons"][0]["metrics"]}
    reasons = {
        name: (m["got_worse"][0]["baseline_reasoning"], m["got_worse"][0]["run_reasoning"])
        for name, m in metrics.items()
    }
    assert reasons == {
        "Precision": ("judge old", "judge new"),
        "answer_correct": ("classify old", "classify new"),
        "is_matching": ("match old", "match new"),
        "rubric_cites": ("rubric old", "rubric new"),
        "quality_pass": ("", ""),  # a check has no reasoning, not the judge's
    }


def test_output_holds_only_the_metrics_asked_for(tmp_path: Path) -> None:
    baseline, run = good_and_bad(tmp_path)
    result = run_cli(
        ["compare", str(baseline), str(run), "--metrics", "rouge1", "--output", "d.csv"]
    )
    assert result.exit_code == 0, result.output
    with (tmp_path / "d.csv").open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    metric_columns = [name for name in header if name.endswith(("(baseline)", "(run)", "change"))]
    assert metric_columns == ["rouge1 (baseline)", "rouge1 (run)", "rouge1 change"]


def test_a_check_that_does_not_apply_is_not_called_unscored(tmp_path: Path) -> None:
    judged = {n: (1, "ok") for n in range(1, 5)}
    checks = {n: {"quality_list_format": None if n % 2 else 1.0} for n in judged}
    baseline = write_run(tmp_path / "base.csv", judged, checks)
    run = write_run(tmp_path / "new.csv", judged, checks)
    result = run_cli(["compare", str(baseline), str(run)])
    assert result.exit_code == 0, result.output
    assert "quality_list_format: not applicable in one run or both, left out: 1, 3" in (
        result.stderr
    )
