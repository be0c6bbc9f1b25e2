"""compare leaves out the metrics whose defining settings (``--k``, ``--match``...) differ
between the baseline and a run: files written by ``rag-eval evaluate`` itself."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from evaluate_support import prepare_workspace, results_files, run_cli, write_csv

from rag_evaluator.offline.metric_settings import CUT_OFF_METRICS, METRIC_SETTINGS
from rag_evaluator.offline.registry import metric_names

RETRIEVAL = metric_names("retrieval")
QUESTIONS = range(1, 13)


@pytest.fixture(autouse=True)
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_csv(
        Path("questions.csv"), ["Question Number", "Question"], [[n, f"Q{n}?"] for n in QUESTIONS]
    )
    write_csv(
        Path("ground_truth.csv"),
        ["Question Number", "Ground Truth", "Relevant Contexts"],
        [[n, f"Answer {n}", json.dumps([f"gold chunk {n}"])] for n in QUESTIONS],
    )
    # The golden chunk first of three: precision at 5 is 1/5, at 1 it is 1.
    write_csv(
        Path("rag_answers.csv"),
        ["Question Number", "RAG Answer", "Contexts"],
        [
            [n, f"Answer {n}", json.dumps([f"gold chunk {n}", "other text", "more words"])]
            for n in QUESTIONS
        ],
    )


def evaluate(folder: str, *options: str) -> Path:
    """An offline retrieval run into ``folder``: its results file."""
    result = run_cli(["evaluate", "--metrics", "retrieval", "--output-dir", folder, *options])
    assert result.exit_code == 0, result.output
    (written,) = results_files(Path(folder))
    return written


def compare(*arguments: str | Path) -> tuple[int, str, dict[str, object]]:
    result = run_cli(["compare", *map(str, arguments), "--json", "comparison.json"])
    data = json.loads(Path("comparison.json").read_text(encoding="utf-8"))
    return result.exit_code, " ".join(result.output.split()), data


def comparison_of(data: dict[str, object]) -> dict[str, object]:
    (comparison,) = data["comparisons"]  # type: ignore[misc]
    return comparison  # type: ignore[no-any-return]


def test_runs_with_another_k_leave_the_cut_off_metrics_out() -> None:
    baseline = evaluate("a", "--k", "5")
    run = evaluate("b", "--k", "1")
    code, output, data = compare(baseline, run)
    assert code == 0, output
    reason = f"--k differs: 5 in {baseline}, 1 in {run}"
    for metric in sorted(CUT_OFF_METRICS):
        assert f"{metric}: not compared ({reason})" in output
    assert "better" not in output and "worse" not in output
    comparison = comparison_of(data)
    skipped = {entry["metric"]: entry["reason"] for entry in comparison["skipped_metrics"]}
    assert skipped == dict.fromkeys(CUT_OFF_METRICS, reason)
    compared = [entry["metric"] for entry in comparison["metrics"]]
    assert compared == [name for name in RETRIEVAL if name not in CUT_OFF_METRICS]
    # The Holm family holds the compared metrics only.
    assert data["holm_family"]["size"] == len(compared)


def test_another_match_mode_leaves_out_every_matched_metric_and_names_both_modes() -> None:
    baseline = evaluate("a")
    run = evaluate("b", "--match", "overlap", "--overlap-threshold", "0.6", "--k", "3")
    code, output, data = compare(baseline, run)
    assert code == 0, output
    skipped = {e["metric"]: e["reason"] for e in comparison_of(data)["skipped_metrics"]}
    assert skipped["mrr"] == f"--match differs: exact in {baseline}, overlap in {run}"
    assert skipped["precision_at_k"] == (
        f"--k differs: 5 in {baseline}, 3 in {run}; "
        f"--match differs: exact in {baseline}, overlap in {run}"
    )
    # ROUGE-L overlap of the golden chunks: no setting defines it, it is compared.
    assert [e["metric"] for e in comparison_of(data)["metrics"]] == ["context_overlap"]
    assert data["holm_family"]["size"] == 1


def test_equal_settings_compare_every_metric_as_before() -> None:
    baseline = evaluate("a", "--k", "1")
    run = evaluate("b", "--k", "1")
    code, output, data = compare(baseline, run)
    assert code == 0, output
    comparison = comparison_of(data)
    assert comparison["skipped_metrics"] == []
    assert [entry["metric"] for entry in comparison["metrics"]] == RETRIEVAL
    assert data["holm_family"]["size"] == len(RETRIEVAL)


def _without_settings_row(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(f"#SUMMARY: {METRIC_SETTINGS}:")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept), encoding="utf-8")


@pytest.mark.parametrize("older", ["baseline", "run", "both"])
def test_a_file_without_the_row_compares_as_before(older: str) -> None:
    baseline = evaluate("a", "--k", "5")
    run = evaluate("b", "--k", "1")
    if older in ("baseline", "both"):
        _without_settings_row(baseline)
    if older in ("run", "both"):
        _without_settings_row(run)
    code, output, data = compare(baseline, run)
    assert code == 0, output
    comparison = comparison_of(data)
    assert comparison["skipped_metrics"] == []
    verdicts = {entry["metric"]: entry["verdict"] for entry in comparison["metrics"]}
    # What the files cannot tell apart is compared: precision at 1 against precision at 5.
    assert verdicts["precision_at_k"] == "better"


def test_the_first_run_that_differs_is_named_among_several(tmp_path: Path) -> None:
    baseline = evaluate("a", "--k", "5")
    same = evaluate("b", "--k", "5")
    other = evaluate("c", "--k", "2")
    code, _output, data = compare(baseline, same, other)
    assert code == 0
    first, second = data["comparisons"]  # type: ignore[misc]
    assert first["skipped_metrics"] == []
    assert {e["metric"] for e in second["skipped_metrics"]} == CUT_OFF_METRICS
    assert data["holm_family"]["size"] == len(RETRIEVAL) + len(RETRIEVAL) - len(CUT_OFF_METRICS)


def test_the_per_question_file_shows_no_change_between_two_different_metrics() -> None:
    baseline = evaluate("a", "--k", "5")
    run = evaluate("b", "--k", "1")
    result = run_cli(["compare", str(baseline), str(run), "--output", "diff.csv"])
    assert result.exit_code == 0, result.output
    with Path("diff.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(QUESTIONS)
    # precision at 5 (0.2) and at 1 (1.0) are both shown, their difference is no change.
    assert {row["precision_at_k (baseline)"] for row in rows} == {"0.2000"}
    assert {row["precision_at_k (run)"] for row in rows} == {"1.0000"}
    assert {row["precision_at_k change"] for row in rows} == {""}
    assert {row["mrr change"] for row in rows} == {"0.0000"}  # the same metric in both
