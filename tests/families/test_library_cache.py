"""``judge_client(cache=...)``: the library's judged metrics read and store evaluate's response
cache, so a notebook re-run, a pytest check and an evaluate run pay once for the same result."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from evaluate_support import SAMPLE, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer, Fault
from fakes.roles import factual_accuracy_answer

from rag_evaluator import metrics
from rag_evaluator.errors import JudgeQuestionError, UsageError

QUESTION = "Who approves travel requests?"
ANSWER = "The line manager approves them."
TRUTH = "The line manager."


def _accuracy(cache: bool | str | Path) -> metrics.FactualAccuracyResult:
    with metrics.judge_client("haiku", cache=cache) as client:
        return metrics.factual_accuracy(QUESTION, ANSWER, TRUTH, client=client)


def test_a_cached_result_is_returned_without_a_call_and_costs_nothing(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script_role("correctness", QUESTION, factual_accuracy_answer(80, 60, 40))
    first = _accuracy(tmp_path / "cache")
    again = _accuracy(tmp_path / "cache")

    assert len(fake_anthropic.requests) == 1
    assert (again.accuracy, again.grade, again.reasoning) == (
        first.accuracy,
        first.grade,
        first.reasoning,
    )
    assert (first.cached, first.calls) == (False, 1)
    assert (again.cached, again.calls, again.cost_usd) == (True, 0, 0.0)
    # Another model's result is not this one's.
    with metrics.judge_client("sonnet", cache=tmp_path / "cache") as client:
        metrics.factual_accuracy(QUESTION, ANSWER, TRUTH, client=client)
    assert len(fake_anthropic.requests) == 2


def test_without_a_cache_every_call_asks_the_model(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script_role("correctness", QUESTION, factual_accuracy_answer(80, 60, 40))
    _accuracy(False)
    _accuracy(False)
    assert len(fake_anthropic.requests) == 2


def test_a_failed_result_is_not_stored(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    # Three refusals (the client's calls for one question), then a verdict.
    verdict = {"reasoning": "Same.", "is_matching": True}
    fake_anthropic.script_role("is_matching", QUESTION, *[Fault.refusal()] * 3, verdict)
    with pytest.raises(JudgeQuestionError), metrics.judge_client("haiku", cache=tmp_path) as client:
        metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client)
    asked = len(fake_anthropic.requests)
    with metrics.judge_client("haiku", cache=tmp_path) as client:
        assert metrics.is_matching(QUESTION, ANSWER, TRUTH, client=client) is True
    assert len(fake_anthropic.requests) == asked + 1


def test_an_evaluate_run_s_results_answer_the_library(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cache=True is evaluate's own cache (RAG_EVAL_CACHE_DIR here, set for every test).
    workspace = prepare_workspace(tmp_path, monkeypatch)
    write_inputs(workspace.directory)
    result = run_cli(["evaluate", "--model", "haiku", "--metrics", "classify", "--yes"])
    assert result.exit_code == 0, result.output
    asked = len(fake_anthropic.requests)
    question, truth, answer = SAMPLE[2]

    with metrics.judge_client("haiku", cache=True) as client:
        label = metrics.classify_answer(question, answer, truth, client=client)

    assert label in ("CORRECT", "WRONG")
    assert len(fake_anthropic.requests) == asked


def test_one_cached_client_serves_several_threads(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script_role("is_matching", QUESTION, {"reasoning": "Same.", "is_matching": True})
    answers = [f"{ANSWER} ({n})" for n in range(8)]
    with metrics.judge_client("haiku", cache=tmp_path) as client, ThreadPoolExecutor(4) as pool:

        def match(answer: str) -> bool:
            return metrics.is_matching(QUESTION, answer, TRUTH, client=client)

        first = list(pool.map(match, answers))
        again = list(pool.map(match, answers))
    assert first == again == [True] * 8
    assert len(fake_anthropic.requests) == 8


@pytest.mark.parametrize("cache", ["", "  ", 3, None])
def test_a_cache_that_is_no_folder_is_refused(
    fake_anthropic: FakeAnthropicServer, cache: object
) -> None:
    with pytest.raises(UsageError, match="cache= takes True, False or a folder"):
        _accuracy(cache)  # type: ignore[arg-type]
    assert fake_anthropic.requests == []
