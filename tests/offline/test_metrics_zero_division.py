"""The edge cases where a metric could divide by zero, each with its deliberate answer.

Rule: a score whose denominator would be zero is ``None`` (undefined, left empty and
warned about); a score with a real denominator is a number, 0 when nothing matched.
"""

from __future__ import annotations

import math

import pytest

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.metrics import (
    MetricOptions,
    answer_completeness,
    bleu_score,
    citation_quality,
    compute_offline_metrics,
    context_relevance,
    context_sufficiency,
    cosine_similarity,
    exact_match,
    f1_at_k,
    fact_score,
    hallucination,
    hybrid_log_rank_score,
    is_dont_know_answer,
    keyword_coverage,
    list_coverage,
    log_rank_score,
    mrr,
    ndcg_at_k,
    number_match,
    precision_at_k,
    recall_at_k,
    rouge_scores,
    semantic_similarity,
)
from rag_evaluator.offline.retrieval import exact_matches
from rag_evaluator.offline.semantic import (
    hallucination_from_cosines,
    mean_similarity_from_cosines,
    pair_score,
    share_at_least_from_cosines,
)

GROUND_TRUTH = "Paris has 2 million people:\n* Paris\n* Lyon"


@pytest.mark.needs_extra("overlap")
def test_empty_answer_scores_zero_where_the_ground_truth_has_content() -> None:
    assert exact_match("", GROUND_TRUTH) == 0.0
    assert keyword_coverage("", GROUND_TRUTH) == 0.0
    assert number_match("", GROUND_TRUTH) == 0.0
    assert answer_completeness("", GROUND_TRUTH) == 0.0
    assert citation_quality("") == 0.0
    assert is_dont_know_answer("") == 0.0
    assert list_coverage("", GROUND_TRUTH) == 0.0
    assert fact_score("", ["Paris"]) == 0.0
    assert bleu_score("", [GROUND_TRUTH]) == 0.0
    assert rouge_scores("", GROUND_TRUTH) == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    assert pair_score("", GROUND_TRUTH, 0.9) == 0.0


def test_empty_ground_truth_leaves_ratio_metrics_undefined() -> None:
    assert exact_match("", "  ") == 1.0  # two empty texts are equal
    assert exact_match("Paris", "") == 0.0
    assert keyword_coverage("Paris", "") is None
    assert number_match("Paris", "") is None
    assert answer_completeness("Paris", "") is None
    assert list_coverage("Paris", "") is None
    assert bleu_score("Paris", [""]) is None
    assert bleu_score("Paris", []) is None
    assert rouge_scores("Paris", "") is None
    assert pair_score("Paris", "", 0.9) is None


def test_ground_truth_without_keywords_numbers_or_list() -> None:
    # Only stop words: no keyword, so coverage and completeness are undefined.
    assert keyword_coverage("anything", "it is what it is") is None
    assert answer_completeness("anything", "it is what it is") is None
    assert number_match("12", "no numbers here") is None
    assert list_coverage("Paris", "Paris, not a list") is None


def test_no_required_facts_is_undefined() -> None:
    assert fact_score("Paris", []) is None
    assert fact_score("Paris", ["", "  ", "--"]) is None  # facts without a word or number


def test_no_retrieved_chunks_scores_zero() -> None:
    golden = ["chunk a"]
    assert precision_at_k(golden, retrieved_chunks=[], k=5) == 0.0
    assert recall_at_k(golden, retrieved_chunks=[], k=5) == 0.0
    assert f1_at_k(golden, retrieved_chunks=[], k=5) == 0.0
    assert mrr(golden, retrieved_chunks=[]) == 0.0
    assert ndcg_at_k(golden, retrieved_chunks=[], k=5) == 0.0
    assert hybrid_log_rank_score(golden, retrieved_chunks=[]) == 0.0
    # Blank chunks are dropped.
    assert precision_at_k(golden, retrieved_chunks=["", "   "], k=5) == 0.0


def test_no_relevant_chunks_leaves_recall_based_metrics_undefined() -> None:
    retrieved = ["chunk a", "chunk b"]
    # Nothing retrieved is relevant.
    assert precision_at_k([], retrieved_chunks=retrieved, k=5) == 0.0
    assert recall_at_k([], retrieved_chunks=retrieved, k=5) is None
    assert f1_at_k([], retrieved_chunks=retrieved, k=5) is None
    assert mrr([], retrieved_chunks=retrieved) is None
    assert ndcg_at_k([], retrieved_chunks=retrieved, k=5) is None
    assert hybrid_log_rank_score([], retrieved_chunks=retrieved) is None


def test_k_larger_than_the_list_still_divides_precision_by_k() -> None:
    retrieved = ["chunk a", "chunk b"]
    golden = ["chunk a", "chunk b"]
    assert precision_at_k(golden, retrieved_chunks=retrieved, k=5) == pytest.approx(0.4)
    assert recall_at_k(golden, retrieved_chunks=retrieved, k=5) == 1.0
    assert ndcg_at_k(golden, retrieved_chunks=retrieved, k=5) == pytest.approx(1.0)
    # More golden chunks than k: the ideal DCG stops at k, so a perfect top k scores 1.
    assert ndcg_at_k(["a", "b", "c"], retrieved_chunks=["a", "b"], k=2) == pytest.approx(1.0)


def test_a_single_retrieved_chunk_has_log_rank_one_not_a_division_by_zero() -> None:
    assert log_rank_score(1, 1) == 1.0
    assert hybrid_log_rank_score(["chunk a"], retrieved_chunks=["chunk a"]) == 1.0
    assert hybrid_log_rank_score(["chunk a"], retrieved_chunks=["chunk b"]) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: precision_at_k(["a"], retrieved_chunks=["a"], k=0),
        lambda: recall_at_k(["a"], retrieved_chunks=["a"], k=-1),
        lambda: ndcg_at_k(["a"], retrieved_chunks=["a"], k=0),
        lambda: hybrid_log_rank_score(["a"], retrieved_chunks=["a"], gamma=0.0),
        lambda: hybrid_log_rank_score(["a"], retrieved_chunks=["a"], alpha=1.5),
        lambda: log_rank_score(3, 2),
    ],
)
def test_impossible_parameters_raise_a_usage_error(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError):
        call()


def test_zero_vectors_have_cosine_zero() -> None:
    assert cosine_similarity([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert semantic_similarity([0.0, 0.0], [0.0, 0.0]) == 0.0


def test_no_contexts_leave_context_metrics_undefined_but_every_sentence_unsupported() -> None:
    question = [1.0, 0.0]
    assert context_relevance(question, []) is None
    assert context_sufficiency(question, []) is None
    assert mean_similarity_from_cosines([]) is None
    assert share_at_least_from_cosines([], 0.5) is None
    assert hallucination([[1.0, 0.0], [0.0, 1.0]], []) == 1.0


def test_an_answer_without_sentences_has_no_hallucination_score() -> None:
    assert hallucination([], [[1.0, 0.0]]) is None
    assert hallucination_from_cosines([]) is None


def test_negative_and_overshooting_cosines_are_clipped_to_the_unit_range() -> None:
    assert semantic_similarity([1.0, 0.0], [-1.0, 0.0]) == 0.0
    assert pair_score("a", "b", 1.0000001) == 1.0
    assert context_relevance([1.0, 0.0], [[-1.0, 0.0], [1.0, 0.0]]) == 0.5


@pytest.mark.needs_extra("overlap")
def test_a_run_never_produces_nan_and_names_each_empty_metric_once() -> None:
    items = [
        EvaluationItem(1, "Q?", "", "", contexts=[], relevant_contexts=[], required_facts=[]),
        EvaluationItem(2, "Q?", "Paris", "Paris", contexts=None, relevant_contexts=None),
        EvaluationItem(3, "Q?", "12 * Paris", "", contexts=["x"], relevant_contexts=["x"]),
    ]
    result = compute_offline_metrics(items, ["lexical", "overlap", "retrieval"], MetricOptions(k=5))
    for row in result.scores.values():
        for value in row.values():
            assert value is None or (not math.isnan(value) and 0.0 <= value <= 1.0)
    named = [warning.split(":", 1)[0] for warning in result.warnings]
    assert len(named) == len(set(named))
    assert "recall_at_k" in named and "fact_score" in named
    assert result.scores[1]["precision_at_k"] == 0.0
    assert result.scores[1]["recall_at_k"] is None
    assert result.scores[3]["recall_at_k"] == 1.0


def test_exact_matches_of_nothing_is_an_empty_ranking() -> None:
    ranked = exact_matches([], [])
    assert ranked.retrieved_count == 0
    assert ranked.golden_count == 0
