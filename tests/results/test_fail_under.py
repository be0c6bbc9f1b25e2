"""``evaluate --fail-under``: the CI gate on rates and means."""

from __future__ import annotations

import json
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
from report_support import Question, write_run

from rag_evaluator.compare.comparison import LOWER_IS_BETTER
from rag_evaluator.errors import UsageError
from rag_evaluator.offline.registry import FAMILY_METRICS, RATE_COLUMNS, TEXT_COLUMNS
from rag_evaluator.results.gates import (
    Threshold,
    computed_metrics,
    failed_thresholds,
    lower_is_better_metrics,
    parse_thresholds,
    resolve_thresholds,
)

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
        [
            "evaluate",
            "--metrics",
            "lexical",
            *FAST,
            "--fail-under",
            "exact_match=0.5",
            "--fail-over",
            "dont_know=1",
        ]
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


# --- lower-is-better metrics: --fail-over (issue 21, item 6) ---------------------------------

# Question 3's answer gives up: dont_know is 1 there, 0 elsewhere (mean 0.2).
GIVES_UP = {**SAMPLE, 3: (SAMPLE[3][0], SAMPLE[3][1], "I don't know.")}


@pytest.fixture
def gives_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path, GIVES_UP)
    return space


def test_a_minimum_on_a_lower_is_better_metric_is_refused_naming_fail_over(
    gives_up: Workspace,
) -> None:
    # A minimum of 0.1 on dont_know would let a run where every answer gives up pass.
    result = run_cli(["evaluate", "--metrics", "lexical", *FAST, "--fail-under", "dont_know=0.1"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: --fail-under dont_know=0.1: lower is better for dont_know, so a minimum would "
        "let a worse run pass. Give it a maximum instead: --fail-over dont_know=0.1"
    ]
    assert gives_up.results() == []


def test_a_mean_above_its_maximum_exits_3_after_writing_the_results(gives_up: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical", *FAST, "--fail-over", "dont_know=0.1"])
    assert result.exit_code == 3, result.output
    results = only_results(gives_up.directory)
    assert [row["dont_know"] for row in results.rows].count("1") == 1  # a 0/1 rate (issue 22)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: Above --fail-over: dont_know 0.2000 > 0.1. The results are written to "
        f"{results.path.relative_to(gives_up.directory)}"
    ]


def test_a_maximum_that_is_met_passes_and_equal_passes(gives_up: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical", *FAST, "--fail-over", "dont_know=20%"])
    assert result.exit_code == 0, result.output


def test_minimums_and_maximums_fail_together_in_one_line(gives_up: Workspace) -> None:
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            "lexical",
            *FAST,
            "--fail-under",
            "exact_match=0.5",
            "--fail-over",
            "dont_know=0",
        ]
    )
    assert result.exit_code == 3, result.output
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith(
        "Error: Below --fail-under: exact_match 0.0000 < 0.5; above --fail-over: dont_know "
        "0.2000 > 0. The results are written to "
    )


def test_a_maximum_on_a_higher_is_better_metric_is_refused_naming_fail_under(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(["evaluate", *FAST, "--fail-over", "precision=0.9"])
    assert result.exit_code == 2, result.output
    assert (
        "Error: --fail-over precision=0.9: higher is better for Precision, so a maximum would "
        "fail a better run. Give it a minimum instead: --fail-under precision=0.9"
    ) in result.stderr
    assert fake_anthropic.requests == []


@pytest.mark.needs_extra("semantic")
def test_the_issues_example_hallucination_is_refused_before_any_model_loads(
    workspace: Workspace,
) -> None:
    result = run_cli(
        ["evaluate", "--metrics", "semantic", *FAST, "--fail-under", "hallucination=0.2"]
    )
    assert result.exit_code == 2, result.output
    assert "Give it a maximum instead: --fail-over hallucination=0.2" in result.stderr
    assert workspace.results() == []


def _every_offline_metric() -> list[tuple[str, bool]]:
    return [
        (name, definition.lower_is_better)
        for table in FAMILY_METRICS.values()
        for name, definition in table.items()
        if name not in TEXT_COLUMNS
    ]


def test_the_lower_is_better_metrics_are_declared() -> None:
    declared = {name for name, lower in _every_offline_metric() if lower}
    assert {"dont_know", "hallucination"} <= declared
    assert declared == set(LOWER_IS_BETTER)


@pytest.mark.parametrize(("metric", "lower_is_better"), _every_offline_metric())
def test_every_metric_takes_the_bound_that_matches_its_direction(
    metric: str, lower_is_better: bool
) -> None:
    computed = computed_metrics([], [metric])
    lower = lower_is_better_metrics([], [metric])
    right, wrong = parse_thresholds(f"{metric}=0.5"), parse_thresholds(f"{metric}=0.5", upper=True)
    if lower_is_better:
        right, wrong = wrong, right
    assert list(resolve_thresholds(right, computed, lower)) == [metric]
    with pytest.raises(UsageError, match="instead"):
        resolve_thresholds(wrong, computed, lower)
    # The gate compares in the metric's direction: 0.6 is worse than 0.5 for a lower-is-better
    # metric, better for the others.
    failures = failed_thresholds(right, {metric: 0.6})
    assert bool(failures) is lower_is_better
    assert failed_thresholds(right, {metric: 0.5}) == []
    assert failed_thresholds(right, {metric: None}) != []


@pytest.mark.parametrize("metric", sorted(LOWER_IS_BETTER))
@pytest.mark.parametrize("change", ["rose", "fell"])
def test_compare_fails_if_worse_only_when_a_lower_is_better_metric_rises(
    tmp_path: Path, metric: str, change: str
) -> None:
    def run(path: Path, values: dict[int, float]) -> Path:
        questions = [
            Question(n, f"Q{n}?", "A.", "A.", metrics={metric: values[n]}) for n in range(1, 31)
        ]
        return write_run(path, questions)

    if metric in RATE_COLUMNS:  # a 0/1 check: a share of ones that rises or falls
        low = {n: float(n % 10 == 0) for n in range(1, 31)}
        high = {n: float(n % 10 != 0) for n in range(1, 31)}
    else:
        low = {n: 0.05 + n / 1000 for n in range(1, 31)}
        high = {n: 0.6 + n / 900 for n in range(1, 31)}
    baseline, later = (low, high) if change == "rose" else (high, low)
    result = run_cli(
        [
            "compare",
            str(run(tmp_path / "base.csv", baseline)),
            str(run(tmp_path / "new.csv", later)),
            "--fail-if-worse",
            "--json",
            "-",
        ]
    )
    compared = next(
        m for m in json.loads(result.stdout)["comparisons"][0]["metrics"] if m["metric"] == metric
    )
    assert compared["lower_is_better"]
    assert compared["verdict"] == ("worse" if change == "rose" else "better")
    assert result.exit_code == (3 if change == "rose" else 0), result.output
