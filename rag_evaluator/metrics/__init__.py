"""The offline metrics as a library.

Every score is on 0-1; ``None`` means the metric is undefined for its inputs (for example
recall with no golden chunk), never NaN. Retrieval and overlap functions keep the seeds'
signatures::

    from rag_evaluator.metrics import precision_at_k_exact, rouge_scores

    precision_at_k_exact(["chunk a", "chunk b"], ["chunk b"], k=2)   # 0.5
    rouge_scores("the cat sat", "the cat sat down")["rougeL"]

Semantic functions take embedding vectors (any sequences of floats, numpy arrays included);
``load_text_embedder()`` gives the bundled offline all-MiniLM-L6-v2 to make them, and
``load_bert_scorer()`` BERTScore on the same model. Seed 002's text-level functions
``answer_hallucination(answer, contexts, model_name)`` and ``evaluate_all(...)`` embed for
you, in one batched call. ``compute_offline_metrics`` scores whole ``EvaluationItem`` lists
the way ``rag-eval evaluate --metrics ...`` does.

The LLM-judged metrics (``faithfulness``, ``context_precision``, ``context_recall``,
``ragas_answer_relevance``, ``ragas``, ``factual_accuracy``, ``classify_answer``,
``is_matching``, ``rubric_scores``) take one item and a model client from
``judge_client()``; see ``rag_evaluator.metrics.judged`` (the block at the end).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_evaluator.offline.embeddings import load_bert_scorer, load_text_embedder
from rag_evaluator.offline.lexical import (
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
from rag_evaluator.offline.overlap import bleu, rouge_f1
from rag_evaluator.offline.quality import (
    DEFAULT_FALLBACK_PHRASES,
    QualityAssessment,
    assess_answer,
    cited_numbers,
)
from rag_evaluator.offline.registry import FAMILY_METRICS, OFFLINE_FAMILIES
from rag_evaluator.offline.retrieval import (
    RankedMatches,
    average_precision,
    context_overlap,
    exact_matches,
    f1_at_k,
    f1_at_k_exact,
    f1_at_k_overlap,
    f1_at_k_similarity,
    hybrid_log_rank,
    hybrid_log_rank_score_exact,
    hybrid_log_rank_score_overlap,
    hybrid_log_rank_score_similarity,
    log_rank_score,
    mrr_exact,
    mrr_overlap,
    mrr_similarity,
    ndcg_at_k,
    ndcg_at_k_exact,
    ndcg_at_k_overlap,
    ndcg_at_k_similarity,
    overlap_matches,
    precision_at_k,
    precision_at_k_exact,
    precision_at_k_overlap,
    precision_at_k_similarity,
    recall_at_k,
    recall_at_k_exact,
    recall_at_k_overlap,
    recall_at_k_similarity,
    reciprocal_rank,
    similarity_matches,
)
from rag_evaluator.offline.runner import (
    MetricOptions,
    OfflineMetricsResult,
    compute_offline_metrics,
    families_with_inputs,
)
from rag_evaluator.offline.semantic import (
    HALLUCINATION_THRESHOLD,
    SUFFICIENCY_THRESHOLD,
    answer_correctness,
    answer_relevance,
    context_relevance,
    context_sufficiency,
    cosine_similarity,
    hallucination,
    hallucination_from_cosines,
    mean_similarity_from_cosines,
    pair_score,
    semantic_similarity,
    sentence_support,
    share_at_least_from_cosines,
    split_sentences,
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


def is_dont_know_answer(answer: str) -> bool:
    """Seed 001's signature: whether the answer admits it does not know (see ``dont_know``)."""
    return dont_know(answer) == 1.0


def answer_hallucination(
    answer: str,
    contexts: Sequence[str],
    model_name: str | None = None,
    threshold: float = HALLUCINATION_THRESHOLD,
) -> float | None:
    """Seed 002's signature: share of the answer's sentences whose most similar context has
    cosine below ``threshold`` (lower is better). ``model_name``: a local folder, a cached
    model name, or ``None`` / ``"all-MiniLM-L6-v2"`` for the bundled model. ``None`` when
    the answer has no sentence; 1.0 when there is no context."""
    return evaluate_all("", answer, "", contexts, model_name, (SUFFICIENCY_THRESHOLD, threshold))[
        "answer_hallucination"
    ]


def evaluate_all(
    question: str,
    answer: str,
    reference: str,
    contexts: Sequence[str],
    model_name: str | None = None,
    thresholds: tuple[float, float] = (SUFFICIENCY_THRESHOLD, HALLUCINATION_THRESHOLD),
) -> dict[str, float | None]:
    """Seed 002's signature: the five embedding metrics of one answer, from one batched
    embedding pass (long contexts in passages, each counting with its best passage).
    ``thresholds`` is (sufficiency, hallucination).

    Returns ``context_relevance``, ``context_sufficiency``, ``answer_relevance`` (question
    vs answer, as rag-eval defines it), ``answer_correctness`` (answer vs reference) and
    ``answer_hallucination``; ``None`` where a metric is undefined (no context, blank
    question or reference, no answer sentence), as in ``rag-eval evaluate``.
    """
    sufficiency_threshold, hallucination_threshold = thresholds
    context_texts = [context for context in contexts if context.strip()]
    sentences = split_sentences(answer)
    texts = [text for text in (question, answer, reference) if text.strip()]
    # Contexts longer than the model reads are embedded in passages; a context counts with
    # its best passage, as in ``rag-eval evaluate``.
    table = load_text_embedder(model_name).embed_all([*texts, *sentences], context_texts)

    def cosine(first: str, second: str) -> float | None:
        return table.cosine(first, second) if first in table and second in table else None

    question_context: list[float] = []
    if question.strip() and context_texts:
        question_context = table.best_passage_cosines([question], context_texts)[0].tolist()
    best: list[float | None] = [None] * len(sentences)
    if sentences and context_texts:
        best = table.best_passage_cosines(sentences, context_texts).max(axis=1).tolist()
    # A sentence found word for word in a context is supported whatever its cosine.
    support = sentence_support(sentences, context_texts, best)
    return {
        "context_relevance": mean_similarity_from_cosines(question_context),
        "context_sufficiency": share_at_least_from_cosines(question_context, sufficiency_threshold),
        "answer_relevance": pair_score(answer, question, cosine(answer, question)),
        "answer_correctness": pair_score(answer, reference, cosine(answer, reference)),
        "answer_hallucination": hallucination_from_cosines(support, hallucination_threshold),
    }


__all__ = [
    "DEFAULT_FALLBACK_PHRASES",
    "FAMILY_METRICS",
    "OFFLINE_FAMILIES",
    "MetricOptions",
    "OfflineMetricsResult",
    "QualityAssessment",
    "RankedMatches",
    "answer_completeness",
    "answer_correctness",
    "answer_hallucination",
    "answer_relevance",
    "assess_answer",
    "average_precision",
    "bleu_score",
    "citation_quality",
    "cited_numbers",
    "compute_offline_metrics",
    "context_overlap",
    "context_relevance",
    "context_sufficiency",
    "cosine_similarity",
    "dont_know",
    "evaluate_all",
    "exact_match",
    "exact_matches",
    "extract_keywords",
    "extract_numbers",
    "f1_at_k",
    "f1_at_k_exact",
    "f1_at_k_overlap",
    "f1_at_k_similarity",
    "fact_score",
    "families_with_inputs",
    "hallucination",
    "hybrid_log_rank",
    "hybrid_log_rank_score_exact",
    "hybrid_log_rank_score_overlap",
    "hybrid_log_rank_score_similarity",
    "is_dont_know_answer",
    "keyword_coverage",
    "list_coverage",
    "list_items",
    "load_bert_scorer",
    "load_text_embedder",
    "log_rank_score",
    "mrr_exact",
    "mrr_overlap",
    "mrr_similarity",
    "ndcg_at_k",
    "ndcg_at_k_exact",
    "ndcg_at_k_overlap",
    "ndcg_at_k_similarity",
    "number_match",
    "overlap_matches",
    "precision_at_k",
    "precision_at_k_exact",
    "precision_at_k_overlap",
    "precision_at_k_similarity",
    "recall_at_k",
    "recall_at_k_exact",
    "recall_at_k_overlap",
    "recall_at_k_similarity",
    "reciprocal_rank",
    "rouge_score",
    "rouge_scores",
    "semantic_similarity",
    "similarity_matches",
    "split_sentences",
]


# --- LLM-judged metrics (issue 10): one item through a model client --------------------------
from rag_evaluator.metrics.judged import (  # noqa: E402 - kept apart from the offline block
    classify_answer,
    context_precision,
    context_recall,
    factual_accuracy,
    faithfulness,
    is_matching,
    judge_client,
    load_rubric,
    ragas,
    ragas_answer_relevance,
    rubric_scores,
)

__all__ += [
    "classify_answer",
    "context_precision",
    "context_recall",
    "factual_accuracy",
    "faithfulness",
    "is_matching",
    "judge_client",
    "load_rubric",
    "ragas",
    "ragas_answer_relevance",
    "rubric_scores",
]
