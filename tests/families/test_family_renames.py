"""Issue 22 item 9: ``geval`` is seed 001's factual accuracy, not G-Eval, and is now called
``factual_accuracy``. The old name still selects it (with a warning); checkpoints, cached
results and results files written under the old name are handled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from evaluate_support import (
    SAMPLE,
    Workspace,
    only_results,
    prepare_workspace,
    run_cli,
    run_in_terminal,
)
from fakes.anthropic_server import FakeAnthropicServer, Fault
from fakes.roles import FACTUAL_ACCURACY, factual_accuracy_answer
from llm_support import QUESTION, write_inputs_with_contexts
from report_support import parse_page, sample_questions, write_run

from rag_evaluator.families.grading.calls import parse_factual_accuracy
from rag_evaluator.families.grading.factual_accuracy import FactualAccuracyFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.selection import shuffled_order
from rag_evaluator.llm.checkpoint.store import family_result_to_json
from rag_evaluator.llm.response_cache import CACHE_FILE_NAME, ResponseCache, cache_key
from rag_evaluator.results.reader import read_run_scores

SEED = 5
ORDER = shuffled_order(SAMPLE, SEED)
RUN = ["evaluate", "--model", "haiku", "--seed", str(SEED), "--delay", "0"]
# Without the response cache: the checkpoint alone decides what is sent again.
FACTUAL = ["--metrics", "judge,factual_accuracy", "--no-cache"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    space = prepare_workspace(tmp_path, monkeypatch)
    write_inputs_with_contexts(space.directory)
    return space


def test_the_old_name_still_selects_the_family_with_a_warning_naming_the_new_one(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    result = run_cli([*RUN, "--yes", "--metrics", "judge,GEval"])

    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "geval" in line]
    assert warnings == [
        "Warning: --metrics geval is the old name of factual_accuracy (seed 001's "
        "three-criterion factual-accuracy rubric, not G-Eval): write factual_accuracy instead"
    ]
    assert "Metrics: judge, factual_accuracy" in result.stderr
    results = only_results(workspace.directory)
    assert results.summary["Factual Accuracy Unscored"] == "0"
    assert "G-Eval Unscored" not in results.summary
    assert {row["factual_grade"] for row in results.rows} == {"A"}
    # Named twice (old and new name), the family runs once.
    twice = run_cli([*RUN, "--yes", "--no-cache", "--metrics", "geval,factual_accuracy"])
    assert twice.exit_code == 0, twice.output
    assert len(fake_anthropic.requests_for(FACTUAL_ACCURACY, QUESTION[1])) == 2


def _as_written_before_the_rename(checkpoint: Path) -> None:
    """The checkpoint as a run of ``--metrics judge,geval`` wrote it."""
    text = checkpoint.read_text(encoding="utf-8")
    assert '"factual_accuracy"' in text
    checkpoint.write_text(text.replace('"factual_accuracy"', '"geval"'), encoding="utf-8")


def test_a_checkpoint_of_the_old_name_is_refused_with_the_reason_then_started_over(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    third = QUESTION[ORDER[2]]
    fake_anthropic.script_role(FACTUAL_ACCURACY, third, Fault.status(401, "invalid x-api-key"))
    stopped = run_cli([*RUN, "--yes", "--concurrency", "1", *FACTUAL])
    assert stopped.exit_code == 2, stopped.output
    [checkpoint] = workspace.checkpoint_files()
    _as_written_before_the_rename(checkpoint)
    fake_anthropic.script_role(FACTUAL_ACCURACY, third, factual_accuracy_answer())
    content = checkpoint.read_bytes()
    before = len(fake_anthropic.requests)

    refused = run_in_terminal(
        [*RUN, *FACTUAL], workspace.directory, [("Discard it and start a new run? [y/N]", "")]
    )

    assert refused.exit_code == 2, refused.output
    message = " ".join(refused.text.split())
    assert (
        "cannot be resumed: the name and version of the factual_accuracy family (geval then) "
        "changed since"
    ) in message
    assert "damaged" not in message and "cut short" not in message
    assert "Resume previous run?" not in message
    assert len(fake_anthropic.requests) == before
    assert checkpoint.read_bytes() == content

    fresh = run_cli([*RUN, "--yes", *FACTUAL])
    assert fresh.exit_code == 0, fresh.output
    asked = fake_anthropic.requests[before:]
    assert sorted(r.question for r in asked if r.role == FACTUAL_ACCURACY) == sorted(
        QUESTION.values()
    )
    assert len(only_results(workspace.directory).rows) == 5


def test_a_result_cached_under_the_old_name_is_not_reused(
    workspace: Workspace, fake_anthropic: FakeAnthropicServer
) -> None:
    family = FactualAccuracyFamily()
    number = 1
    question, truth, answer = SAMPLE[number]
    item = EvaluationItem(number, question, truth, answer)
    # What the family cached before the rename: its old name and version, the same identity.
    old_key = cache_key(
        {
            "family": "geval",
            "version": 1,
            "model": "claude-haiku-5-5",
            "identity": family.identity(),
            "inputs": family.cache_inputs(item),
        }
    )
    stale = family.from_answer(parse_factual_accuracy(factual_accuracy_answer(10, 10, 10)))
    cache = ResponseCache(Path(os.environ["RAG_EVAL_CACHE_DIR"]) / CACHE_FILE_NAME)
    cache.put(old_key, "geval", family_result_to_json(family, stale))
    cache.close()

    result = run_cli([*RUN, "--yes", "--metrics", "factual_accuracy"])

    assert result.exit_code == 0, result.output
    assert fake_anthropic.requests_for(FACTUAL_ACCURACY, question)
    row = only_results(workspace.directory).row(number)
    assert (row["factual_accuracy"], row["factual_grade"]) == ("0.8900", "A")
    assert only_results(workspace.directory).summary["Cached Questions"] == "0"


def _old_results_file(path: Path) -> Path:
    """A results file as a run with the family under its old name wrote it (its ``G-Eval
    Unscored`` summary row)."""
    written = write_run(path, sample_questions())
    lines = written.read_text(encoding="utf-8").splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("Question Number"))
    lines.insert(header, "#SUMMARY: G-Eval Unscored: 1")
    written.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written


def test_results_files_of_the_old_name_are_read_under_todays_labels(tmp_path: Path) -> None:
    old = _old_results_file(tmp_path / "runs" / "precision_scores_20261101_101010.csv")

    summary = dict(read_run_scores(old).summary)
    assert summary["Factual Accuracy Unscored"] == "1"
    assert "G-Eval Unscored" not in summary

    result = run_cli(["report", str(old)])
    assert result.exit_code == 0, result.output
    page = parse_page(old.with_suffix(".html").read_text(encoding="utf-8"))
    assert "Factual Accuracy Unscored" in page.text
    assert "G-Eval" not in page.text
