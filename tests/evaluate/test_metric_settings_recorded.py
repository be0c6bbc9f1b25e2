"""evaluate records the settings defining its offline metrics: one ``Metric Settings`` summary
row, and ``metric_settings`` in ``--json``."""

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
    write_retrieval_inputs,
)
from fakes.anthropic_server import FakeAnthropicServer

from rag_evaluator.offline.metric_settings import METRIC_SETTINGS, fallback_phrases_text


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_retrieval_inputs(tmp_path, lambda golden: [golden, "x"], "[0.9, 0.4]")
    return workspace


def _json_of(results_path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        results_path.with_suffix(".json").read_text(encoding="utf-8")
    )
    return data


def test_the_row_and_the_json_hold_the_settings_of_the_families_run(
    workspace: Workspace,
) -> None:
    result = run_cli(
        [
            "evaluate",
            "--metrics",
            "lexical,retrieval,quality",
            "--match",
            "overlap",
            "--overlap-threshold",
            "0.6",
            "--similarity-threshold",  # not the mode used: not recorded
            "0.9",
            "--k",
            "3",
            "--fallback-phrases",
            "no idea,cannot say",
            "--no-require-citations",
            "--json",
        ]
    )
    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    custom = fallback_phrases_text(("no idea", "cannot say"))
    assert results.summary[METRIC_SETTINGS] == (
        f"k=3; match=overlap; overlap-threshold=0.6; fallback-phrases={custom}; "
        "min-retrieval-score=0.5; require-citations=no"
    )
    # After the kinds declaration.
    labels = list(results.summary)
    assert labels.index(METRIC_SETTINGS) == labels.index("Metric Kinds") + 1
    data = _json_of(results.path)
    assert data["metric_settings"] == {
        "k": 3,
        "match": "overlap",
        "overlap-threshold": 0.6,
        "fallback-phrases": custom,
        "min-retrieval-score": 0.5,
        "require-citations": False,
    }
    assert METRIC_SETTINGS not in data["summary"]  # type: ignore[operator]
    # The terminal's summary shows them too.
    assert "k=3; match=overlap" in " ".join(result.output.split())


def test_a_run_no_setting_defines_writes_no_row(workspace: Workspace) -> None:
    result = run_cli(["evaluate", "--metrics", "lexical,overlap", "--k", "2", "--json"])
    assert result.exit_code == 0, result.output
    results = only_results(workspace.directory)
    assert METRIC_SETTINGS not in results.summary
    assert _json_of(results.path)["metric_settings"] == {}


def test_a_judged_run_records_its_offline_settings(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(
        ["evaluate", "--model", "haiku", "--metrics", "judge,retrieval", "--k", "2", "--yes"]
    )
    assert result.exit_code == 0, result.output
    assert len(fake_anthropic.requests) == len(SAMPLE)
    results = only_results(workspace.directory)
    assert results.summary[METRIC_SETTINGS] == "k=2; match=exact"


def test_a_judge_only_run_writes_no_row(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli(["evaluate", "--model", "haiku", "--metrics", "judge", "--yes"])
    assert result.exit_code == 0, result.output
    assert METRIC_SETTINGS not in only_results(workspace.directory).summary
