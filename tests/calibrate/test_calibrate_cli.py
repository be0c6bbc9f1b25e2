"""``rag-eval calibrate`` through the CLI, on the shipped example and on small files."""

from __future__ import annotations

import csv
import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from evaluate_support import run_cli
from sklearn.metrics import cohen_kappa_score

from rag_evaluator.cli import console

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "calibration"
Z = 1.959963984540054


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write(path: str, text: str) -> str:
    Path(path).write_text(text, encoding="utf-8")
    return path


def results_file(rows: dict[int, tuple[str, str]]) -> str:
    """A results file with Precision (0/1 or empty) and rouge1 cells as given."""
    lines = ["#SUMMARY: Total Questions: 1", "Question Number,Precision,Reasoning,Error,rouge1"]
    for number, (precision, rouge1) in rows.items():
        error = "" if precision else "the model refused to judge"
        lines.append(f"{number},{precision},r{number},{error},{rouge1}")
    return write("results.csv", "\n".join(lines) + "\n")


def test_the_shipped_example_matches_an_independent_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console.stdout_console, "width", 120)
    for name in ("results.csv", "human_labels.csv"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    result = run_cli(
        ["calibrate", "results.csv", "--labels", "human_labels.csv", "--json", "c.json"]
    )
    assert result.exit_code == 0, result.output

    # Recompute from the files with plain formulas.
    with open("results.csv", encoding="utf-8", newline="") as handle:
        table = [row for row in csv.reader(handle) if not row[0].startswith("#")]
    header, *rows = table
    judge = {int(row[0]): int(row[header.index("Precision")]) for row in rows}
    with open("human_labels.csv", encoding="utf-8", newline="") as handle:
        human = {
            int(row["Question Number"]): int(row["Precision"]) for row in csv.DictReader(handle)
        }
    labelled = sorted(human)
    differences = [judge[n] - human[n] for n in labelled]
    n, big_n = len(labelled), len(judge)
    judge_mean = sum(judge.values()) / big_n
    estimate = judge_mean - sum(differences) / n
    judge_variance = sum((v - judge_mean) ** 2 for v in judge.values()) / (big_n - 1)
    mean_difference = sum(differences) / n
    difference_variance = sum((d - mean_difference) ** 2 for d in differences) / (n - 1)
    half = Z * math.sqrt(judge_variance / big_n + difference_variance / n)
    kappa = cohen_kappa_score([judge[q] for q in labelled], [human[q] for q in labelled])

    report = json.loads(Path("c.json").read_text(encoding="utf-8"))
    [precision] = report["metrics"]
    assert precision["labelled"] == n == 100
    assert precision["judged"] == big_n == 500
    assert precision["cohen_kappa"] == pytest.approx(kappa)
    assert precision["agreement"] == pytest.approx(sum(judge[q] == human[q] for q in labelled) / n)
    corrected = precision["prediction_powered"]
    assert corrected["estimate"] == pytest.approx(estimate)
    assert corrected["interval"] == pytest.approx([estimate - half, estimate + half])
    assert precision["judge_bias"] == pytest.approx(mean_difference)

    # The README shows this very output.
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    table_lines = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert table_lines and all(line in readme for line in table_lines)
    assert f"{estimate:.1%} ({estimate - half:.1%}–{estimate + half:.1%})" in result.stdout


def test_binary_and_continuous_labels_unscored_and_unknown_questions() -> None:
    results = results_file(
        {
            1: ("1", "0.9000"),
            2: ("1", "0.8000"),
            3: ("0", "0.2000"),
            4: ("1", "0.7000"),
            5: ("", "0.5000"),  # the judge failed here
            6: ("0", "0.1000"),
        }
    )
    labels = write(
        "labels.csv",
        "question_id,precision,ROUGE1,annotator,Faithfulness\n"
        "1,1,0.8,ann,0.5\n2,0,0.8,ann,0.5\n3,0,,ann,0.5\n5,1,0.4,ann,0.5\n99,1,,ann,0.5\n",
    )
    result = run_cli(["calibrate", results, "--labels", labels, "--json", "-"])
    assert result.exit_code == 0, result.output
    assert "labels questions that are not in results.csv, left out: 99" in result.stderr
    # Issue 22: every column it does not recognise is named, whatever its values.
    assert "columns annotator, Faithfulness name no metric of results.csv" in result.stderr
    report = json.loads(result.stdout)
    precision, rouge1 = report["metrics"]
    assert precision["labelled"] == 3 and precision["labelled_but_unscored"] == [5]
    # Judge 1,1,0 against people 1,0,0: agreement 2/3; judge - people = 0, 1, 0.
    assert precision["agreement"] == pytest.approx(2 / 3)
    assert precision["confusion_matrix"] == {
        "judge_1_human_1": 1,
        "judge_1_human_0": 1,
        "judge_0_human_1": 0,
        "judge_0_human_0": 1,
    }
    # Estimate: judge mean over 5 scored (3/5) minus mean difference 1/3.
    assert precision["prediction_powered"]["estimate"] == pytest.approx(3 / 5 - 1 / 3)
    assert any("fewer than 30 labelled" in note for note in precision["notes"])
    # rouge1 is continuous: mean absolute difference, no kappa; 3 labels (1, 2, 5).
    assert rouge1["kind"] == "continuous" and rouge1["labelled"] == 3
    assert rouge1["mean_absolute_difference"] == pytest.approx((0.1 + 0.0 + 0.1) / 3)
    assert "cohen_kappa" not in rouge1
    assert report["not_labelled"] == []


def test_one_label_gives_an_estimate_without_an_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console.stderr_console, "width", 200)
    results = results_file({1: ("1", ""), 2: ("1", ""), 3: ("0", "")})
    labels = write("labels.csv", "Question Number,Precision\n2,0\n")
    result = run_cli(["calibrate", results, "--labels", labels, "--json", "-"])
    assert result.exit_code == 0, result.output
    [precision] = json.loads(result.stdout)["metrics"]
    # 2/3 - 1 = -1/3: a rate below 0 is cut to 0.
    assert precision["prediction_powered"]["estimate"] == 0.0
    assert precision["prediction_powered"]["interval"] is None
    assert any("one labelled question" in note for note in precision["notes"])
    assert "CI n/a" in result.stderr


def test_a_judge_that_always_agrees_is_flagged() -> None:
    results = results_file({n: ("1" if n % 3 else "0", "") for n in range(1, 11)})
    labels = write("labels.csv", "Question Number,Precision\n1,1\n3,0\n4,1\n6,0\n")
    result = run_cli(["calibrate", results, "--labels", labels, "--json", "-"])
    assert result.exit_code == 0, result.output
    [precision] = json.loads(result.stdout)["metrics"]
    assert precision["agreement"] == 1.0 and precision["cohen_kappa"] == pytest.approx(1.0)
    assert precision["prediction_powered"]["estimate"] == pytest.approx(0.7)
    assert precision["prediction_powered"]["rectifier_variance"] == 0
    assert any("cannot show judge errors" in note for note in precision["notes"])


def test_labels_keyed_by_id_like_text_pair_with_the_question_numbers() -> None:
    # Labels keyed as the golden set was (Q1, q_003) are questions 1 and 3 of the results.
    results = results_file({n: ("1" if n % 3 else "0", "") for n in range(1, 11)})
    numbered = write("numbered.csv", "Question Number,Precision\n1,1\n3,1\n4,1\n6,0\n")
    keyed = write("keyed.csv", "qid,Precision\nQ1,1\nq_003,1\nQuestion 4,1\nQID-6,0\n")
    by_number = run_cli(["calibrate", results, "--labels", numbered, "--json", "-"])
    by_id = run_cli(["calibrate", results, "--labels", keyed, "--json", "-"])
    assert by_id.exit_code == 0, by_id.output
    assert json.loads(by_id.stdout)["metrics"] == json.loads(by_number.stdout)["metrics"]
    assert json.loads(by_id.stdout)["metrics"][0]["agreement"] == 0.75


def test_all_labels_the_same_as_the_judge_leaves_kappa_undefined() -> None:
    results = results_file({1: ("1", ""), 2: ("1", ""), 3: ("1", "")})
    labels = write("labels.csv", "Question Number,Precision\n1,1\n2,1\n")
    result = run_cli(["calibrate", results, "--labels", labels, "--json", "-"])
    assert result.exit_code == 0, result.output
    [precision] = json.loads(result.stdout)["metrics"]
    assert precision["cohen_kappa"] is None
    assert any("kappa is undefined" in note for note in precision["notes"])


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("Question,Precision\nWhy?,1\n", "labels.csv is not a file of human labels: it has no"),
        ("Question Number,Verdict\n1,CORRECT\n", "labels.csv has no column named like a metric"),
        ("Question Number,Precision\n1,1\n2,yes\n", "labels.csv line 3: the Precision label 'yes'"),
        ("Question Number,Precision,rouge1\n1,1,high\n", "the rouge1 label 'high' is not a number"),
        ("Question Number,Precision\n1,\n", "labels.csv holds no label"),
        ("Question Number,Precision\n1,1\n1,0\n", "repeats question number 1"),
    ],
)
def test_bad_label_files_are_one_line_errors(labels: str, message: str) -> None:
    results = results_file({1: ("1", "0.5000"), 2: ("0", "0.2500")})
    write("labels.csv", labels)
    result = run_cli(["calibrate", results, "--labels", "labels.csv"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr


def test_the_results_argument_must_be_a_results_file() -> None:
    write("labels.csv", "Question Number,Precision\n1,1\n")
    result = run_cli(["calibrate", "labels.csv", "--labels", "labels.csv"])
    assert result.exit_code == 2
    assert "labels.csv is not a rag-eval results file" in result.stderr
    result = run_cli(["calibrate", "nope.csv", "--labels", "labels.csv"])
    assert result.exit_code == 2 and "nope.csv not found" in result.stderr


def test_the_example_builder_reproduces_the_shipped_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rebuild from a two-entry source in HaluEval's shape; the heuristic and the file
    # layout are those of the shipped files.
    source = tmp_path / "halueval.jsonl"
    entries = [
        {
            "ID": "1",
            "user_query": "When did it open?",
            "chatgpt_response": "It opened in 1987.",
            "hallucination": "yes",
            "hallucination_spans": [],
        },
        {
            "ID": "2",
            "user_query": "Say hi",
            "chatgpt_response": "Hi!",
            "hallucination": "no",
            "hallucination_spans": [],
        },
    ]
    source.write_text("\n".join(json.dumps(entry) for entry in entries) + "\n", encoding="utf-8")
    sys.path.insert(0, str(EXAMPLE))
    try:
        import build_example
    finally:
        sys.path.remove(str(EXAMPLE))
    monkeypatch.setattr(build_example, "LABELLED", 2)
    results, labels = build_example.build(source, tmp_path)
    text = results.read_text(encoding="utf-8")
    assert text.startswith("#SUMMARY: Total Questions: 2\n#SUMMARY: Precision: 1/2 (50%)")
    assert "Names a year (1987)" in text
    assert labels.read_text(encoding="utf-8") == (
        "Question Number,Precision,HaluEval hallucination\n1,0,yes\n2,1,no\n"
    )
    shipped_header = (EXAMPLE / "results.csv").read_text(encoding="utf-8").splitlines()[4]
    assert shipped_header in text
    result = run_cli(["calibrate", str(results), "--labels", str(labels)])
    assert result.exit_code == 0, result.output


# -- issue 22 item 5: label scales -----------------------------------------------------------


def judged_scores_file() -> str:
    """A results file declaring a 0-1 score (ragas_faithfulness) and an unbounded one."""
    lines = [
        "#SUMMARY: Total Questions: 4",
        "#SUMMARY: Metric Kinds: ragas_faithfulness=continuous 0 to 1; my_score=continuous",
        "Question Number,ragas_faithfulness,my_score",
        "1,0.9000,2.5000",
        "2,0.4000,3.0000",
        "3,1.0000,1.0000",
        "4,0.2000,4.0000",
    ]
    return write("results.csv", "\n".join(lines) + "\n")


def test_ratings_on_another_scale_than_the_metric_are_an_error() -> None:
    results = judged_scores_file()
    write(
        "labels.csv",
        "Question Number,faithfulness_rating,ragas_faithfulness\n1,4,4\n2,2,2\n3,1,1\n",
    )
    result = run_cli(["calibrate", results, "--labels", "labels.csv"])
    assert result.exit_code == 2, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert "ragas_faithfulness" in error and "0–1" in error
    assert "2 of 3" in error and "line 2" in error and "'4'" in error
    assert "Corrected" not in result.output


def test_the_range_of_a_metric_known_by_name_is_checked_in_older_files() -> None:
    # No Metric Kinds row: rouge1 is one of the tool's 0-1 scores all the same.
    results = results_file({1: ("1", "0.5000"), 2: ("0", "0.2500"), 3: ("1", "0.7500")})
    write("labels.csv", "Question Number,rouge1\n1,3\n2,1\n3,0.5\n")
    result = run_cli(["calibrate", results, "--labels", "labels.csv"])
    assert result.exit_code == 2, result.output
    assert "rouge1" in result.stderr and "0–1" in result.stderr


def test_a_score_without_a_declared_range_takes_any_number() -> None:
    results = judged_scores_file()
    write("labels.csv", "Question Number,my_score\n1,3\n2,3\n4,4\n")
    result = run_cli(["calibrate", results, "--labels", "labels.csv", "--json", "-"])
    assert result.exit_code == 0, result.output
    [score] = json.loads(result.stdout)["metrics"]
    assert score["labelled"] == 3 and score["mean_absolute_difference"] == pytest.approx(1 / 6)


def test_every_label_column_it_does_not_recognise_is_named() -> None:
    results = judged_scores_file()
    write(
        "labels.csv",
        "Question Number,Question,ragas_faithfulness,annotator,hallucination,notes\n"
        "1,Why?,1,ann,yes,fine\n2,How?,0.5,bob,no,\n",
    )
    result = run_cli(["calibrate", results, "--labels", "labels.csv", "--json", "-"])
    assert result.exit_code == 0, result.output
    assert "columns annotator, hallucination, notes name no metric of results.csv" in " ".join(
        result.stderr.split()
    )
    assert json.loads(result.stdout)["unmatched_label_columns"] == [
        "annotator",
        "hallucination",
        "notes",
    ]
