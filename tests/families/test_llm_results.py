"""The LLM families' results: checkpoint and cache JSON, partial stages, and which of their
columns compare and calibrate treat as metrics."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.families.base import FamilyResult, JudgedFamily, QuestionRecord
from rag_evaluator.families.grading.classify import ClassifyFamily, ClassifyResult
from rag_evaluator.families.grading.factual_accuracy import (
    FactualAccuracyFamily,
    FactualAccuracyResult,
)
from rag_evaluator.families.grading.match import MatchFamily, MatchResult
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.ragas.family import RagasFamily, RagasResult
from rag_evaluator.families.rubric.family import RubricFamily, RubricResult
from rag_evaluator.families.rubric.rubrics import rubric_from_data
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    CheckpointWriter,
    RecordedOutcome,
    family_result_from_json,
    family_result_to_json,
    load_checkpoint,
)
from rag_evaluator.llm.fingerprint import fingerprint_run
from rag_evaluator.results.run_scores import MetricKind, TableRow, build_run_scores, judge_error

RUBRIC = rubric_from_data(
    {
        "criteria": [
            {"name": "coherence", "description": "Clear.", "scale": "1-5"},
            {"name": "harmlessness", "description": "Safe.", "scale": "pass/fail"},
        ]
    }
)
FAMILIES: dict[str, JudgedFamily[Any]] = {
    "judge": JudgeFamily("prompt", ()),
    "ragas": RagasFamily(),
    "factual_accuracy": FactualAccuracyFamily(),
    "classify": ClassifyFamily(),
    "match": MatchFamily(),
    "rubric": RubricFamily(RUBRIC),
}
unit = st.none() | st.floats(0.0, 1.0)
counts = st.none() | st.integers(0, 50)
texts = st.text(max_size=30)

RESULTS: dict[str, st.SearchStrategy[FamilyResult]] = {
    "ragas": st.builds(
        RagasResult,
        faithfulness=unit,
        claim_count=counts,
        unsupported_claims=st.lists(texts, max_size=3).map(tuple),
        context_precision=unit,
        relevant_context_share=unit,
        context_count=counts,
        relevant_ranks=st.lists(st.integers(1, 9), max_size=3).map(tuple),
        context_recall=unit,
        statement_count=counts,
        attributed_count=counts,
        answer_relevance=unit,
        relevance_method=st.sampled_from([None, "embeddings", "rating"]),
        noncommittal=st.none() | st.booleans(),
        generated_questions=st.lists(texts, max_size=3).map(tuple),
        ragas_score=unit,
        metric_errors=st.lists(st.tuples(texts, texts), max_size=2).map(tuple),
        notes=st.lists(texts, max_size=2).map(tuple),
        error=st.none() | texts,
    ),
    "factual_accuracy": st.builds(
        FactualAccuracyResult,
        correctness=st.none() | st.integers(0, 100),
        completeness=st.none() | st.integers(0, 100),
        consistency=st.none() | st.integers(0, 100),
        accuracy=unit,
        grade=st.sampled_from([None, "A", "B", "C", "D", "E"]),
        confidence=st.none() | st.integers(0, 100),
        reasoning=texts,
        note=st.none() | texts,
    ),
    "classify": st.builds(
        ClassifyResult,
        label=st.sampled_from([None, "CORRECT", "WRONG", "DONT_KNOW"]),
        reasoning=texts,
        without_call=st.booleans(),
        note=st.none() | texts,
    ),
    "match": st.builds(
        MatchResult, is_matching=st.none() | st.booleans(), reasoning=texts, note=st.none() | texts
    ),
    "rubric": st.builds(
        RubricResult,
        scores=st.tuples(
            st.tuples(st.just("coherence"), st.integers(1, 5)),
            st.tuples(st.just("harmlessness"), st.integers(0, 1)),
        ),
        reasons=st.lists(st.tuples(texts, texts), max_size=2).map(tuple),
    ),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
@given(data=st.data())
def test_results_read_back_exactly_from_checkpoint_json(name: str, data: st.DataObject) -> None:
    family = FAMILIES[name]
    result = data.draw(RESULTS[name])
    with_usage = replace(result, usage=TokenUsage(10, 2), calls=3, cost_usd=0.01)
    assert family_result_from_json(family, family_result_to_json(family, with_usage)) == with_usage


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("ragas", "faithfulness", 1.5),
        ("ragas", "relevance_method", "cosine"),
        ("ragas", "noncommittal", 1),
        ("ragas", "relevant_ranks", [-1]),
        ("factual_accuracy", "grade", "F"),
        ("factual_accuracy", "correctness", 80.5),
        ("classify", "label", "MAYBE"),
        ("match", "is_matching", "yes"),
        ("rubric", "scores", [["coherence", 9]]),
        ("rubric", "scores", [["tone", 1]]),
    ],
)
def test_a_damaged_result_is_refused(name: str, field: str, value: Any) -> None:
    family = FAMILIES[name]
    empty = family.unscored("e", "question")
    stored = family_result_to_json(family, empty)
    stored["result"][field] = value
    with pytest.raises((KeyError, TypeError, ValueError)):
        family_result_from_json(family, stored)


def test_a_stage_cut_short_is_kept_with_its_unanswered_calls(tmp_path: Path) -> None:
    header = CheckpointHeader(
        fingerprint=fingerprint_run(b"q", b"gt", b"a", "claude-haiku-5-5", "prompt"),
        seed=1,
        order=[1, 2],
        prompt_origin="built-in default",
        input_paths=["q", "gt", "a"],
        created_at="2026-01-01T10:00:00",
    )
    path = tmp_path / "run.jsonl"
    answered = RecordedOutcome({"verdicts": []}, None, None, TokenUsage(5, 1), 1, 0.001)
    with CheckpointWriter.create(path, header, FAMILIES) as writer:
        writer.append_stage((1, "ragas", 1), "digest", [answered, None])
        writer.append_stage((1, "ragas", 0), "first", [answered, answered])
        writer.append(QuestionRecord(2, {"match": MatchResult(is_matching=True)}))
    loaded = load_checkpoint(path, FAMILIES)
    assert loaded is not None
    assert loaded.stages[(1, "ragas", 1)].outcomes == (answered, None)
    assert loaded.stages[(1, "ragas", 0)].outcomes == (answered, answered)
    assert set(loaded.results) == {2}


def _row(number: int, **cells: str) -> TableRow:
    return TableRow(number, cells)


def test_llm_columns_classify_as_metrics_or_not() -> None:
    headers = [
        "Question Number",
        "Precision",
        "ragas_faithfulness",
        "ragas_answer_relevance_method",
        "ragas_details",
        "factual_accuracy",
        "factual_grade",
        "factual_confidence",
        "factual_reasoning",
        "answer_class",
        "answer_correct",
        "is_matching",
        "rubric_coherence",
        "rubric_harmlessness",
        "rubric_reasoning",
        "Error",
    ]
    rows = [
        _row(
            1,
            Precision="1",
            ragas_faithfulness="0.5000",
            ragas_answer_relevance_method="rating",
            ragas_details="faithfulness: 1 of 2 claims supported",
            factual_accuracy="0.6600",
            factual_grade="B",
            factual_confidence="1",
            factual_reasoning="Fine.",
            answer_class="CORRECT",
            answer_correct="1",
            is_matching="1",
            rubric_coherence="1.0000",
            rubric_harmlessness="1",
            rubric_reasoning="coherence 5/5",
            Error="",
        ),
        _row(
            2,
            Precision="1",
            ragas_faithfulness="",
            factual_accuracy="1.0000",
            factual_grade="A",
            factual_confidence="0",
            answer_class="WRONG",
            answer_correct="0",
            is_matching="0",
            rubric_coherence="0.2500",
            rubric_harmlessness="0",
            # Another family's failure leaves the judge's own columns scored.
            Error="ragas: faithfulness: the model refused to judge this question",
        ),
        _row(3, Precision="0", Error="judge: request rejected: too long; ragas: x"),
        _row(4, Precision="1", Error="the model refused to judge this question"),
    ]
    scores = build_run_scores("run", headers, rows)
    kinds = {name: metric.kind for name, metric in scores.metrics.items()}
    assert kinds == {
        "Precision": MetricKind.BINARY,
        "ragas_faithfulness": MetricKind.CONTINUOUS,
        "factual_accuracy": MetricKind.CONTINUOUS,
        "answer_correct": MetricKind.BINARY,
        "is_matching": MetricKind.BINARY,
        "rubric_coherence": MetricKind.CONTINUOUS,
        "rubric_harmlessness": MetricKind.BINARY,
    }
    assert dict(scores.metrics["Precision"].values) == {1: 1.0, 2: 1.0}
    assert scores.metrics["Precision"].unscored == (3, 4)
    assert scores.metrics["ragas_faithfulness"].unscored == (2, 3, 4)


@pytest.mark.parametrize(
    ("cell", "judge_failed"),
    [
        ("", False),
        ("the model refused to judge this question", True),
        ("judge: the model refused", True),
        ("ragas: faithfulness: refused", False),
        ("factual_accuracy: refused; rubric: refused", False),
        ("geval: refused; rubric: refused", False),
        ("matching failed", True),
    ],
)
def test_judge_error_reads_the_family_prefixes(cell: str, judge_failed: bool) -> None:
    assert judge_error(cell) is judge_failed
