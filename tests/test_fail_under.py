"""``evaluate --fail-under``: the CI gate on rates and means."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    run_cli,
    write_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer, verdict

from rag_evaluator.core.gates import Threshold, parse_thresholds
from rag_evaluator.errors import UsageError

FAST = ["--delay", "0", "--yes"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    return space


def test_thresholds_are_parsed_from_a_comma_list() -> None:
    assert parse_thresholds("precision=0.8, rouge1 = 0.5,exact_match=75%") == (
        Threshold("precision", 0.8),
        Threshold("rouge1", 0.5),
        Threshold("exact_match", 0.75),
    )
    assert parse_thresholds(None) == ()
    assert parse_thresholds("") == ()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("precision", "is not metric=value"),
        ("precision=", "is not metric=value"),
        ("=0.8", "is not metric=value"),
        ("precision=high", "'high' is not a number"),
        ("precision=1.5", "is outside 0 to 1"),
        ("precision=150%", "is outside 0 to 1"),
        ("precision=-0.1", "is not a number"),
        ("precision=0.8,Precision=0.9", "names Precision twice"),
    ],
)
def test_bad_thresholds_are_usage_errors(raw: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_thresholds(raw)


def test_a_mean_below_its_minimum_exits_3_after_writing_the_results(
    workspace: Workspace,
) -> None:
    result = run_cli(
        ["evaluate", "--metrics", "lexical", *FAST, "--fail-under", "exact_match=0.5,dont_know=0"]
    )
    assert result.exit_code == 3, result.output
    results = only_results(workspace.directory)  # written before the gate
    exact = [float(row["exact_match"]) for row in results.rows]
    mean = sum(exact) / len(exact)
    assert mean < 0.5
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: Below --fail-under: exact_match {mean:.4f} < 0.5. The results are written "
        f"to {results.path.relative_to(workspace.directory)}"
    ]
    assert "Summary" in result.stdout  # the run's table is shown first


def test_a_met_threshold_passes(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical", *FAST, "--fail-under", "exact_match=0"])
    assert result.exit_code == 0, result.output


def test_a_threshold_on_a_metric_not_computed_stops_before_anything_runs(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        ["evaluate", "--metrics", "judge", *FAST, "--fail-under", "precision=0.8,rouge1=0.5"]
    )
    assert result.exit_code == 2, result.output
    assert (
        "Error: --fail-under names rouge1, which this run does not compute (it computes: "
        "Precision, Recall, Accuracy)" in result.stderr
    )
    assert fake_anthropic.requests == []
    assert workspace.results() == []
    assert "Proceed?" not in result.stderr


def test_the_judges_rates_are_gated_on_scored_questions(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.script(SAMPLE[3][0], verdict(0, 1, 1))  # precision 4/5 = 0.8
    met = run_cli(["evaluate", *FAST, "--seed", "1", "--fail-under", "PRECISION=0.8"])
    assert met.exit_code == 0, met.output  # equal to the minimum passes
    failed = run_cli(["evaluate", *FAST, "--seed", "1", "--fail-under", "precision=81%,accuracy=1"])
    assert failed.exit_code == 3, failed.output
    assert "Below --fail-under: Precision 0.8000 < 0.81. The results are written to" in (
        failed.stderr
    )
    assert len(workspace.results()) == 2
