"""The offline metrics as a library.

Every score is on 0-1; ``None`` means the metric is undefined for its inputs (for example
recall with no golden chunk), never NaN. Retrieval and overlap functions keep the seeds'
signatures::

    from rag_evaluator.metrics import precision_at_k_exact, rouge_scores

    precision_at_k_exact(["chunk a", "chunk b"], ["chunk b"], k=2)   # 0.5
    rouge_scores("the cat sat", "the cat sat down")["rougeL"]

Semantic functions take embedding vectors (any sequences of floats, numpy arrays included);
``load_text_embedder()`` gives the bundled offline all-MiniLM-L6-v2 to make them, and
``load_bert_scorer()`` BERTScore on the same model. ``compute_offline_metrics`` scores whole
``EvaluationItem`` lists the way ``rag-eval evaluate --metrics ...`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_evaluator.core.metrics.lexical import (
    answer_completeness,
    citation_quality,
    dont_know,
    exact_match,
    extract_keywords,
    extract_numbers,
    fact_score,
    keyword_coverage,
    list_coverage,
    list_items,
    number_match,
)
from rag_evaluator.core.metrics.overlap import bleu, rouge_f1
from rag_evaluator.core.metrics.registry import FAMILY_METRICS, OFFLINE_FAMILIES
from rag_evaluator.core.metrics.retrieval import (
    RankedMatches,
    exact_matches,
    f1_at_k,
    f1_at_k_exact,
    f1_at_k_similarity,
    hybrid_log_rank,
    hybrid_log_rank_score_exact,
    hybrid_log_rank_score_similarity,
    log_rank_score,
    mrr_exact,
    mrr_similarity,
    ndcg_at_k,
    ndcg_at_k_exact,
    ndcg_at_k_similarity,
    precision_at_k,
    precision_at_k_exact,
    precision_at_k_similarity,
    recall_at_k,
    recall_at_k_exact,
    recall_at_k_similarity,
    reciprocal_rank,
    similarity_matches,
)
from rag_evaluator.core.metrics.semantic import (
    answer_correctness,
    answer_relevance,
    context_relevance,
    context_sufficiency,
    cosine_similarity,
    hallucination,
    semantic_similarity,
    split_sentences,
)
from rag_evaluator.embeddings import load_bert_scorer, load_text_embedder
from rag_evaluator.pipeline.metrics import (
    MetricOptions,
    OfflineMetricsResult,
    compute_offline_metrics,
    families_with_inputs,
)


def bleu_score(retrieved_chunk: str, ground_truth_chunks: Sequence[str]) -> float | None:
    """Seed 004's signature: sacreBLEU sentence BLEU / 100 of the generated text
    (``retrieved_chunk``) against the reference texts."""
    return bleu(retrieved_chunk, ground_truth_chunks)


def rouge_scores(retrieved_chunk: str, ground_truth_chunk: str) -> dict[str, float] | None:
    """ROUGE-1/2/L F1 with stemming of the generated text against one reference:
    ``{"rouge1": ..., "rouge2": ..., "rougeL": ...}``; ``None`` for an empty reference."""
    return rouge_f1(retrieved_chunk, ground_truth_chunk)


# Seed 004 calls it rouge_score; kept as an alias so seed code runs unchanged.
rouge_score = rouge_scores

__all__ = [
    "FAMILY_METRICS",
    "OFFLINE_FAMILIES",
    "MetricOptions",
    "OfflineMetricsResult",
    "RankedMatches",
    "answer_completeness",
    "answer_correctness",
    "answer_relevance",
    "bleu_score",
    "citation_quality",
    "compute_offline_metrics",
    "context_relevance",
    "context_sufficiency",
    "cosine_similarity",
    "dont_know",
    "exact_match",
    "exact_matches",
    "extract_keywords",
    "extract_numbers",
    "f1_at_k",
    "f1_at_k_exact",
    "f1_at_k_similarity",
    "fact_score",
    "families_with_inputs",
    "hallucination",
    "hybrid_log_rank",
    "hybrid_log_rank_score_exact",
    "hybrid_log_rank_score_similarity",
    "keyword_coverage",
    "list_coverage",
    "list_items",
    "load_bert_scorer",
    "load_text_embedder",
    "log_rank_score",
    "mrr_exact",
    "mrr_similarity",
    "ndcg_at_k",
    "ndcg_at_k_exact",
    "ndcg_at_k_similarity",
    "number_match",
    "precision_at_k",
    "precision_at_k_exact",
    "precision_at_k_similarity",
    "recall_at_k",
    "recall_at_k_exact",
    "recall_at_k_similarity",
    "reciprocal_rank",
    "rouge_score",
    "rouge_scores",
    "semantic_similarity",
    "similarity_matches",
    "split_sentences",
]
