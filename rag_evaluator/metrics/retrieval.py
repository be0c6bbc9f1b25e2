"""The retrieval metrics as a library: one function per metric, the matching mode an argument.

    precision_at_k(golden, retrieved_chunks=retrieved, k=5)                      # exact
    precision_at_k(golden, retrieved_chunks=retrieved, k=5, match="overlap")     # ROUGE-L
    precision_at_k(golden, retrieved_chunks=retrieved, k=5, match="similarity")  # cosine

The golden chunks come first (the library's order: ground truth before contexts); everything
after them is keyword-only, so a call in seed 004's order (retrieved chunks first) fails
instead of scoring the lists the wrong way round. ``match="similarity"`` takes chunk texts,
embedded by the bundled all-MiniLM-L6-v2 (or ``embedding_model``) exactly as
``rag-eval evaluate --match similarity`` embeds them, or embedding vectors. ``threshold`` is
the mode's (0.8 for a cosine, 0.7 for a ROUGE-L recall); exact matching takes none.

Seed 004's names (``precision_at_k_exact``, ``precision_at_k_similarity``, ...) stay as
deprecated aliases with the seed's signatures.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from rag_evaluator.errors import UsageError
from rag_evaluator.offline import retrieval
from rag_evaluator.offline.retrieval import (
    DEFAULT_ALPHA,
    DEFAULT_GAMMA,
    DEFAULT_K,
    DEFAULT_OVERLAP_THRESHOLD,
    DEFAULT_SIMILARITY_THRESHOLD,
    MatchMode,
    RankedMatches,
    log_rank_score,
)
from rag_evaluator.offline.runner import similarity_ranking
from rag_evaluator.offline.semantic import Vector

__all__ = [
    "MatchMode",
    "average_precision",
    "context_overlap",
    "f1_at_k",
    "f1_at_k_exact",
    "f1_at_k_similarity",
    "hybrid_log_rank_score",
    "hybrid_log_rank_score_exact",
    "hybrid_log_rank_score_similarity",
    "log_rank_score",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "precision_at_k_exact",
    "precision_at_k_similarity",
    "recall_at_k",
    "recall_at_k_exact",
    "recall_at_k_similarity",
]

# Chunk texts, or (similarity matching only) their embedding vectors.
Chunks = Sequence[str] | Sequence[Vector]


def _chunk_list(chunks: Any, name: str) -> list[Any]:
    if isinstance(chunks, str | bytes):
        raise UsageError(f"{name} must be a list of chunks, not one text. Put it in a list: [text]")
    try:
        return list(chunks)
    except TypeError:
        raise UsageError(
            f"{name} must be a list of chunk texts (or embeddings for match='similarity'), "
            f"not {type(chunks).__name__}"
        ) from None


def _match_mode(match: MatchMode | str) -> MatchMode:
    try:
        return MatchMode(match)
    except ValueError:
        modes = ", ".join(repr(mode.value) for mode in MatchMode)
        raise UsageError(
            f"match must be one of {modes} (got {match!r}). Use match='exact'"
        ) from None


def _all_texts(chunks: list[Any]) -> bool:
    return all(isinstance(chunk, str) for chunk in chunks)


def _check_options(mode: MatchMode, threshold: float | None, embedding_model: str | None) -> None:
    if mode is MatchMode.EXACT and threshold is not None:
        raise UsageError(
            "threshold applies to match='similarity' or match='overlap'; leave it out with "
            "match='exact'"
        )
    if mode is not MatchMode.SIMILARITY and embedding_model is not None:
        raise UsageError("embedding_model applies to match='similarity' only; leave it out")


def _threshold(mode: MatchMode, threshold: float | None) -> float:
    default = (
        DEFAULT_SIMILARITY_THRESHOLD if mode is MatchMode.SIMILARITY else DEFAULT_OVERLAP_THRESHOLD
    )
    value = default if threshold is None else threshold
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise UsageError(
            f"threshold must be between 0 and 1 (got {value!r}). Use for example {default}"
        )
    return float(value)


def _similarity_ranking(
    golden: list[Any], retrieved: list[Any], threshold: float, embedding_model: str | None
) -> RankedMatches:
    texts = sum(1 for chunk in [*golden, *retrieved] if isinstance(chunk, str))
    if texts and texts < len(golden) + len(retrieved):
        raise UsageError(
            "Give both chunk lists as texts or both as embedding vectors, not a mix of the two"
        )
    if texts:
        return similarity_ranking(golden, retrieved, threshold, embedding_model)
    if embedding_model is not None:
        raise UsageError("embedding_model applies to chunk texts; the chunks given are vectors")
    return retrieval.embedding_ranking(golden, retrieved, threshold)


def _ranking(
    ground_truth_chunks: Chunks,
    retrieved_chunks: Chunks,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> RankedMatches:
    """For each retrieved chunk in rank order, the golden chunks it matches in ``match`` mode
    (blank and repeated chunks dropped first, as in ``rag-eval evaluate``)."""
    golden = _chunk_list(ground_truth_chunks, "ground_truth_chunks")
    retrieved = _chunk_list(retrieved_chunks, "retrieved_chunks")
    mode = _match_mode(match)
    _check_options(mode, threshold, embedding_model)
    if mode is MatchMode.SIMILARITY:
        return _similarity_ranking(golden, retrieved, _threshold(mode, threshold), embedding_model)
    if not (_all_texts(golden) and _all_texts(retrieved)):
        raise UsageError(
            f"match='{mode.value}' compares chunk texts; give texts, or use "
            "match='similarity' for embedding vectors"
        )
    if mode is MatchMode.OVERLAP:
        return retrieval.overlap_ranking(golden, retrieved, _threshold(mode, threshold))
    return retrieval.exact_matches(retrieved, golden)


def precision_at_k(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    k: int = DEFAULT_K,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float:
    """Retrieved chunks among the first k that match a golden chunk, divided by k."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.precision_at_k(k)


def recall_at_k(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    k: int = DEFAULT_K,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float | None:
    """Golden chunks matched within the first k / golden chunks; ``None`` without any."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.recall_at_k(k)


def f1_at_k(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    k: int = DEFAULT_K,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float | None:
    """Harmonic mean of P@k and R@k (0 when both are 0); ``None`` without golden chunks."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.f1_at_k(k)


def average_precision(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float:
    """The ``context_precision`` column: ragas's rank-weighted context precision without a
    model (mean P@k at each rank holding a relevant chunk); 0 when none is relevant."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.average_precision()


def mrr(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float | None:
    """Reciprocal rank of the first matching chunk (0 when none matches; the mean over
    questions is the MRR); ``None`` without golden chunks."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.reciprocal_rank()


def ndcg_at_k(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    k: int = DEFAULT_K,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
) -> float | None:
    """nDCG@k with binary gains, a golden chunk credited once (trec_eval's ndcg_cut);
    ``None`` without golden chunks."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.ndcg_at_k(k)


def hybrid_log_rank_score(
    ground_truth_chunks: Chunks,
    *,
    retrieved_chunks: Chunks,
    match: MatchMode | str = MatchMode.EXACT,
    threshold: float | None = None,
    embedding_model: str | None = None,
    gamma: float = DEFAULT_GAMMA,
    alpha: float = DEFAULT_ALPHA,
) -> float | None:
    """α·recall + (1 − α)·mean ``log_rank_score`` of the golden chunks' first ranks (the
    ``hybrid_log_rank`` column); ``None`` without golden chunks."""
    ranked = _ranking(ground_truth_chunks, retrieved_chunks, match, threshold, embedding_model)
    return ranked.hybrid_log_rank(gamma, alpha)


def context_overlap(
    ground_truth_chunks: Sequence[str], *, retrieved_chunks: Sequence[str]
) -> float | None:
    """Mean over the golden chunks of their best ROUGE-L recall against any retrieved chunk:
    how much golden text was retrieved, whatever the chunk boundaries (0 when nothing was
    retrieved, ``None`` without golden chunks)."""
    golden = _chunk_list(ground_truth_chunks, "ground_truth_chunks")
    retrieved = _chunk_list(retrieved_chunks, "retrieved_chunks")
    if not (_all_texts(golden) and _all_texts(retrieved)):
        raise UsageError("context_overlap compares chunk texts; give texts")
    return retrieval.context_overlap(golden, retrieved)


# --- seed 004's names: deprecated aliases with the seed's signatures ---


def _deprecated(name: str, replacement: str) -> None:
    warnings.warn(
        f"{name} is deprecated; use {replacement}, which takes the golden chunks first",
        DeprecationWarning,
        stacklevel=3,
    )


def precision_at_k_exact(
    retrieved_chunks: Sequence[str], ground_truth_chunks: Sequence[str], k: int
) -> float:
    """Deprecated: ``precision_at_k(ground_truth_chunks, retrieved_chunks=..., k=k)``."""
    _deprecated("precision_at_k_exact", "precision_at_k(..., match='exact')")
    return precision_at_k(ground_truth_chunks, retrieved_chunks=retrieved_chunks, k=k)


def precision_at_k_similarity(
    retrieved_embeddings: Sequence[Vector],
    ground_truth_embeddings: Sequence[Vector],
    k: int,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> float:
    """Deprecated: ``precision_at_k(..., match="similarity", threshold=...)``."""
    _deprecated("precision_at_k_similarity", "precision_at_k(..., match='similarity')")
    return precision_at_k(
        ground_truth_embeddings,
        retrieved_chunks=retrieved_embeddings,
        k=k,
        match=MatchMode.SIMILARITY,
        threshold=similarity_threshold,
    )


def recall_at_k_exact(
    retrieved_chunks: Sequence[str], ground_truth_chunks: Sequence[str], k: int
) -> float | None:
    """Deprecated: ``recall_at_k(ground_truth_chunks, retrieved_chunks=..., k=k)``."""
    _deprecated("recall_at_k_exact", "recall_at_k(..., match='exact')")
    return recall_at_k(ground_truth_chunks, retrieved_chunks=retrieved_chunks, k=k)


def recall_at_k_similarity(
    retrieved_embeddings: Sequence[Vector],
    ground_truth_embeddings: Sequence[Vector],
    k: int,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> float | None:
    """Deprecated: ``recall_at_k(..., match="similarity", threshold=...)``."""
    _deprecated("recall_at_k_similarity", "recall_at_k(..., match='similarity')")
    return recall_at_k(
        ground_truth_embeddings,
        retrieved_chunks=retrieved_embeddings,
        k=k,
        match=MatchMode.SIMILARITY,
        threshold=similarity_threshold,
    )


def f1_at_k_exact(
    retrieved_chunks: Sequence[str], ground_truth_chunks: Sequence[str], k: int
) -> float | None:
    """Deprecated: ``f1_at_k(ground_truth_chunks, retrieved_chunks=..., k=k)``."""
    _deprecated("f1_at_k_exact", "f1_at_k(..., match='exact')")
    return f1_at_k(ground_truth_chunks, retrieved_chunks=retrieved_chunks, k=k)


def f1_at_k_similarity(
    retrieved_embeddings: Sequence[Vector],
    ground_truth_embeddings: Sequence[Vector],
    k: int,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> float | None:
    """Deprecated: ``f1_at_k(..., match="similarity", threshold=...)``."""
    _deprecated("f1_at_k_similarity", "f1_at_k(..., match='similarity')")
    return f1_at_k(
        ground_truth_embeddings,
        retrieved_chunks=retrieved_embeddings,
        k=k,
        match=MatchMode.SIMILARITY,
        threshold=similarity_threshold,
    )


def hybrid_log_rank_score_exact(
    retrieved_chunks: Sequence[str],
    ground_truth_chunks: Sequence[str],
    gamma: float = DEFAULT_GAMMA,
    alpha: float = DEFAULT_ALPHA,
) -> float | None:
    """Deprecated: ``hybrid_log_rank_score(ground_truth_chunks, retrieved_chunks=...)``."""
    _deprecated("hybrid_log_rank_score_exact", "hybrid_log_rank_score(..., match='exact')")
    return hybrid_log_rank_score(
        ground_truth_chunks, retrieved_chunks=retrieved_chunks, gamma=gamma, alpha=alpha
    )


def hybrid_log_rank_score_similarity(
    retrieved_embeddings: Sequence[Vector],
    ground_truth_embeddings: Sequence[Vector],
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    gamma: float = DEFAULT_GAMMA,
    alpha: float = DEFAULT_ALPHA,
) -> float | None:
    """Deprecated: ``hybrid_log_rank_score(..., match="similarity", threshold=...)``."""
    _deprecated(
        "hybrid_log_rank_score_similarity", "hybrid_log_rank_score(..., match='similarity')"
    )
    return hybrid_log_rank_score(
        ground_truth_embeddings,
        retrieved_chunks=retrieved_embeddings,
        match=MatchMode.SIMILARITY,
        threshold=similarity_threshold,
        gamma=gamma,
        alpha=alpha,
    )
