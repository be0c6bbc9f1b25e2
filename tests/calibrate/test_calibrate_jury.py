"""``rag-eval calibrate`` on a jury's results: each juror against the labels beside the jury."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_support import run_cli
from sklearn.metrics import cohen_kappa_score

from rag_evaluator.cli import console

# The jury's Precision (the majority of its three jurors), each juror's, and a score.
JURORS = ("haiku", "openai/llama3.1:8b", "sonnet")
PRECISION = {
    "haiku": [1, 1, 0, 1, 0, 1, 0, 1],
    "openai/llama3.1:8b": [1, 0, 0, 1, 1, 0, 0, None],
    "sonnet": [0, 1, 0, 1, 1, 1, 1, 1],
}
JURY = [1, 1, 0, 1, 1, 1, 0, 1]
HUMAN = [1, 0, 0, 1, 1, 1, 0, 1]
FACTUAL = {"haiku": [0.9, 0.4, 0.1], "openai/llama3.1:8b": [0.8, 0.6, 0.3], "sonnet": [1, 0, 1]}


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(console.stdout_console, "width", 200)
    monkeypatch.setattr(console.stderr_console, "width", 200)


def cell(value: float | None) -> str:
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def write_jury_results() -> str:
    headers = ["Question Number", "Precision", *(f"Precision@{j}" for j in JURORS)]
    headers += ["factual_accuracy", *(f"factual_accuracy@{j}" for j in JURORS), "Empty@haiku"]
    lines = [
        "#SUMMARY: Total Questions: 8",
        "#SUMMARY: Metric Kinds: Precision=binary 0 to 1; factual_accuracy=continuous 0 to 1",
        ",".join(headers),
    ]
    for index in range(8):
        row = [str(index + 1), cell(JURY[index])]
        row += [cell(PRECISION[juror][index]) for juror in JURORS]
        factual = [FACTUAL[juror][index] if index < 3 else None for juror in JURORS]
        row += [cell(0.8 if index < 3 else None), *(cell(value) for value in factual), ""]
        lines.append(",".join(row))
    Path("results.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "results.csv"


def write_labels() -> str:
    lines = ["Question Number,Precision,factual_accuracy,Precision@haiku"]
    for index, label in enumerate(HUMAN):
        factual = ["0.7", "0.5", "0.2"][index] if index < 3 else ""
        lines.append(f"{index + 1},{label},{factual},1")
    Path("labels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "labels.csv"


def test_each_juror_is_measured_against_the_labels_beside_the_jury() -> None:
    result = run_cli(
        ["calibrate", write_jury_results(), "--labels", write_labels(), "--json", "c.json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(Path("c.json").read_text(encoding="utf-8"))
    entries = [
        (entry["metric"], entry["juror"], entry["jury_metric"]) for entry in report["metrics"]
    ]
    assert entries == [
        ("Precision", None, None),
        *((f"Precision@{juror}", juror, "Precision") for juror in JURORS),
        ("factual_accuracy", None, None),
        *((f"factual_accuracy@{juror}", juror, "factual_accuracy") for juror in JURORS),
    ]
    by_metric = {entry["metric"]: entry for entry in report["metrics"]}
    for name, values in [("Precision", JURY), *((f"Precision@{j}", PRECISION[j]) for j in JURORS)]:
        pairs = [(v, h) for v, h in zip(values, HUMAN, strict=True) if v is not None]
        entry = by_metric[name]
        assert entry["kind"] == "binary"
        assert entry["labelled"] == len(pairs)
        assert entry["agreement"] == pytest.approx(sum(v == h for v, h in pairs) / len(pairs))
        expected = cohen_kappa_score([v for v, _ in pairs], [h for _, h in pairs])
        assert entry["cohen_kappa"] == pytest.approx(expected)
        assert entry["judged"] == len(pairs)
    assert by_metric["Precision@openai/llama3.1:8b"]["labelled_but_unscored"] == [8]
    # The sonnet column holds only 0 and 1, but it is the jury's continuous metric.
    sonnet = by_metric["factual_accuracy@sonnet"]
    assert sonnet["kind"] == "continuous"
    assert sonnet["mean_absolute_difference"] == pytest.approx((0.3 + 0.5 + 0.8) / 3)
    haiku = by_metric["factual_accuracy@haiku"]
    assert haiku["mean_absolute_difference"] == pytest.approx((0.2 + 0.1 + 0.1) / 3)
    # Juror columns are never metrics of their own: not "not labelled", not a label column.
    assert report["not_labelled"] == []
    assert report["unmatched_label_columns"] == ["Precision@haiku"]
    # The terminal's table has a row per juror after the jury's.
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    names = [row.split("│")[1].strip() for row in rows]
    assert (
        names.index("Precision")
        < names.index("Precision@haiku")
        < names.index("Precision@sonnet")
        < names.index("factual_accuracy")
    )


def test_a_juror_column_without_a_value_is_reported_as_unscored() -> None:
    lines = [
        "#SUMMARY: Total Questions: 2",
        "Question Number,Precision,Precision@haiku,Precision@sonnet",
        "1,1,,1",
        "2,0,,0",
    ]
    Path("results.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    Path("labels.csv").write_text("Question Number,Precision\n1,1\n2,0\n", encoding="utf-8")
    result = run_cli(["calibrate", "results.csv", "--labels", "labels.csv", "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    jury, haiku, sonnet = report["metrics"]
    assert (haiku["juror"], haiku["labelled"], haiku["labelled_but_unscored"]) == (
        "haiku",
        0,
        [1, 2],
    )
    assert any("nothing to calibrate" in note for note in haiku["notes"])
    assert sonnet["agreement"] == 1.0 and jury["agreement"] == 1.0


def test_a_run_without_a_jury_has_no_juror_entries() -> None:
    Path("results.csv").write_text(
        "#SUMMARY: Total Questions: 2\nQuestion Number,Precision\n1,1\n2,0\n", encoding="utf-8"
    )
    Path("labels.csv").write_text("Question Number,Precision\n1,1\n2,1\n", encoding="utf-8")
    result = run_cli(["calibrate", "results.csv", "--labels", "labels.csv", "--json", "-"])
    assert result.exit_code == 0, result.output
    [precision] = json.loads(result.stdout)["metrics"]
    assert (precision["juror"], precision["jury_metric"]) == (None, None)
