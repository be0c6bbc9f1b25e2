"""Retrieval metrics (seed 004): how well the ranked retrieved chunks cover the golden chunks.

Everything is computed from one ``RankedMatches`` record: for each retrieved chunk, in rank
order, the golden chunks it matches. Matching is exact (same text once whitespace runs are
collapsed), by cosine similarity at or above a threshold (0.8 by default), or by overlap: the
retrieved chunk covers the golden chunk's tokens at ROUGE-L recall at or above a threshold
(0.7 by default, ``chunk_overlap``); all three build the same record, so every metric has one
definition. Either way a chunk that repeats an earlier one of its list is dropped first: the
same text for exact matching, the same embedding (cosine >= 1 - 1e-6) for similarity
matching, the same text or the same rouge-score token sequence for overlap matching.

Definitions (k is the cut-off, G the number of distinct golden chunks, n the number of
retrieved chunks):

- P@k  = relevant retrieved chunks among the first k / k (divides by k even when fewer than
  k chunks were retrieved, as the seed and trec_eval do)
- R@k  = golden chunks matched within the first k / G
- F1@k = 2·P·R / (P + R), 0 when both are 0
- context precision = Σ_k rel_k·P@k / relevant retrieved chunks over the whole list (ragas's
  rank-weighted context precision, offline), 0 when none is relevant
- RR   = 1 / rank of the first relevant chunk, 0 when none is (the mean over questions is MRR)
- nDCG@k with binary gains: DCG = Σ_{i≤k} gain_i / log2(i + 1), where gain_i is 1 when chunk
  i matches a golden chunk no earlier chunk matched; IDCG = Σ_{i≤min(G,k)} 1 / log2(i + 1)
- hybrid = α·recall + (1 − α)·mean over golden chunks of log_rank(rank), where recall is over
  the whole list, rank is the first rank matching that golden chunk (score 0 when unmatched)
  and log_rank(r) = 1 − ln(1 + γ(r − 1)) / ln(1 + γ(n − 1)); with n = 1 the only rank scores 1

- context_overlap = mean over golden chunks of the best ROUGE-L recall of the golden chunk
  against any retrieved chunk (whatever the matching mode): how much golden text was
  retrieved, whatever the chunk boundaries

With no golden chunk (G = 0) recall, F1, RR, nDCG, hybrid and context_overlap are undefined
(``None``), while P@k is 0: none of the retrieved chunks can be relevant.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.errors import UsageError
from rag_evaluator.families import scores as judged_scores
from rag_evaluator.offline.chunk_overlap import ChunkTokens, recall_matrix
from rag_evaluator.offline.options import DEFAULT_K as DEFAULT_K
from rag_evaluator.offline.options import DEFAULT_OVERLAP_THRESHOLD as DEFAULT_OVERLAP_THRESHOLD
from rag_evaluator.offline.options import (
    DEFAULT_SIMILARITY_THRESHOLD as DEFAULT_SIMILARITY_THRESHOLD,
)
from rag_evaluator.offline.options import MatchMode as MatchMode
from rag_evaluator.offline.semantic import Vector, similarity_matrix

DEFAULT_GAMMA = 1.0
DEFAULT_ALPHA = 0.5
# Two embeddings this close are the same chunk to the model (identical texts embedded in
# different batches differ by ~1e-7).
REPEAT_COSINE = 1.0 - 1e-6


@dataclass(frozen=True)
class RankedMatches:
    """For each retrieved chunk in rank order, the indices of the golden chunks it matches.

    Every ranking metric is a method, so that the three matching modes share one definition.
    """

    matches: tuple[frozenset[int], ...]
    golden_count: int

    @property
    def retrieved_count(self) -> int:
        return len(self.matches)

    def _relevant_in_top(self, k: int) -> int:
        return sum(1 for matched in self.matches[:k] if matched)

    def _golden_found_in_top(self, k: int) -> int:
        found: set[int] = set()
        for matched in self.matches[:k]:
            found |= matched
        return len(found)

    def precision_at_k(self, k: int = DEFAULT_K) -> float:
        """Relevant chunks among the first k, divided by k."""
        _check_k(k)
        return self._relevant_in_top(k) / k

    def recall_at_k(self, k: int = DEFAULT_K) -> float | None:
        """Golden chunks matched within the first k, divided by the number of golden chunks."""
        _check_k(k)
        if self.golden_count == 0:
            return None
        return self._golden_found_in_top(k) / self.golden_count

    def f1_at_k(self, k: int = DEFAULT_K) -> float | None:
        """Harmonic mean of P@k and R@k; 0 when both are 0."""
        recall = self.recall_at_k(k)
        if recall is None:
            return None
        precision = self.precision_at_k(k)
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    def average_precision(self) -> float:
        """ragas's context precision without a model: over the whole ranked list, the mean of
        P@k at each rank k holding a relevant chunk (``sum_k rel_k * P@k / relevant chunks``),
        relevance being the matching mode's; 0 when no chunk is relevant or none was
        retrieved. The same formula as the RAGAS family's ``ragas_context_precision``."""
        flags = [bool(matched) for matched in self.matches]
        value = judged_scores.ranked_context_precision(flags)
        return 0.0 if value is None else value

    def reciprocal_rank(self) -> float | None:
        """1 / rank of the first relevant chunk over the whole list; 0 when none is relevant."""
        if self.golden_count == 0:
            return None
        for rank, matched in enumerate(self.matches, start=1):
            if matched:
                return 1.0 / rank
        return 0.0

    def ndcg_at_k(self, k: int = DEFAULT_K) -> float | None:
        """Normalised discounted cumulative gain at k with binary gains (trec_eval's
        ndcg_cut)."""
        _check_k(k)
        if self.golden_count == 0:
            return None
        credited: set[int] = set()
        dcg = 0.0
        for position, matched in enumerate(self.matches[:k], start=1):
            new = matched - credited
            if new:
                credited |= new
                dcg += 1.0 / math.log2(position + 1)
        ideal = sum(
            1.0 / math.log2(position + 1) for position in range(1, min(self.golden_count, k) + 1)
        )
        return dcg / ideal

    def hybrid_log_rank(
        self, gamma: float = DEFAULT_GAMMA, alpha: float = DEFAULT_ALPHA
    ) -> float | None:
        """α·recall + (1 − α)·mean log-rank score of the golden chunks (0 for an unmatched
        one)."""
        if not 0.0 <= alpha <= 1.0:
            raise UsageError(f"alpha must be between 0 and 1 (got {alpha}). Use for example 0.5")
        _check_gamma(gamma)
        if self.golden_count == 0:
            return None
        first_rank: dict[int, int] = {}
        for rank, matched in enumerate(self.matches, start=1):
            for golden in matched:
                first_rank.setdefault(golden, rank)
        n = self.retrieved_count
        recall = len(first_rank) / self.golden_count
        rank_quality = (
            math.fsum(log_rank_score(rank, n, gamma) for rank in first_rank.values())
            / self.golden_count
        )
        return alpha * recall + (1.0 - alpha) * rank_quality


def normalise_chunk(text: str) -> str:
    """The form in which chunks are compared for an exact match: one Unicode form (NFC),
    whitespace runs collapsed."""
    text = text if text.isascii() else unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def distinct_chunks(chunks: Sequence[str]) -> list[str]:
    """Non-blank chunks, normalised, repeats dropped (first occurrence keeps its rank)."""
    normalised = (normalise_chunk(chunk) for chunk in chunks)
    return list(dict.fromkeys(chunk for chunk in normalised if chunk))


def first_occurrences(identity_cosines: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the chunks that do not repeat an earlier chunk, in order.

    ``identity_cosines[i][j]`` is how alike chunks i and j are embedded (their cosine; for
    chunks embedded in several passages, the lowest cosine of corresponding passages, or
    -1 when their passage counts differ). Chunk i repeats chunk j < i when it is at least
    ``REPEAT_COSINE``.
    """
    kept: list[int] = []
    for index, row in enumerate(identity_cosines):
        if all(row[earlier] < REPEAT_COSINE for earlier in kept):
            kept.append(index)
    return kept


def distinct_embeddings(embeddings: Sequence[Vector]) -> list[Vector]:
    """Embeddings with repeats dropped (a chunk embedded twice counts once), first kept."""
    kept = first_occurrences(similarity_matrix(embeddings, embeddings))
    return [embeddings[index] for index in kept]


def exact_matches(retrieved_chunks: Sequence[str], golden_chunks: Sequence[str]) -> RankedMatches:
    """Match chunks by text. Blank and repeated chunks are dropped first, so a chunk retrieved
    twice counts once."""
    golden = distinct_chunks(golden_chunks)
    golden_index = {chunk: index for index, chunk in enumerate(golden)}
    matches = tuple(
        frozenset((golden_index[chunk],)) if chunk in golden_index else frozenset()
        for chunk in distinct_chunks(retrieved_chunks)
    )
    return RankedMatches(matches, len(golden))


def similarity_matches(
    similarities: Sequence[Sequence[float]],
    golden_count: int,
    threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
) -> RankedMatches:
    """Match chunks by cosine: ``similarities[i][j]`` is retrieved chunk i against golden
    chunk j; a pair matches when it is at least ``threshold``."""
    _check_threshold(threshold)
    matches = tuple(
        frozenset(j for j, cosine in enumerate(row) if cosine >= threshold) for row in similarities
    )
    return RankedMatches(matches, golden_count)


def distinct_token_chunks(chunks: Sequence[str], tokens: ChunkTokens) -> list[str]:
    """``distinct_chunks``, then a chunk with the same rouge-score tokens as an earlier one
    dropped too (it differs only in case or punctuation: the same chunk to ROUGE-L). A
    chunk without tokens (text in other scripts) is kept: it repeats nothing."""
    kept: list[str] = []
    seen: set[str] = set()
    for chunk in distinct_chunks(chunks):
        encoded = tokens.encode(chunk)
        if encoded and encoded in seen:
            continue
        seen.add(encoded)
        kept.append(chunk)
    return kept


def overlap_recalls(
    retrieved_chunks: Sequence[str], golden_chunks: Sequence[str], tokens: ChunkTokens
) -> list[list[float]]:
    """ROUGE-L recall of each golden chunk against each retrieved chunk (repeats dropped
    first, as ``distinct_token_chunks``): ``recalls[i][j]`` is retrieved i against golden j."""
    retrieved = [tokens.encode(chunk) for chunk in distinct_token_chunks(retrieved_chunks, tokens)]
    golden = [tokens.encode(chunk) for chunk in distinct_token_chunks(golden_chunks, tokens)]
    return recall_matrix(retrieved, golden)


def overlap_matches(
    recalls: Sequence[Sequence[float]],
    golden_count: int,
    threshold: float = DEFAULT_OVERLAP_THRESHOLD,
) -> RankedMatches:
    """Match chunks by coverage: ``recalls[i][j]`` is the ROUGE-L recall of golden chunk j
    against retrieved chunk i; a pair matches when it is at least ``threshold``."""
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(
            f"The overlap threshold must be between 0 and 1 (got {threshold}). Use for example 0.7"
        )
    matches = tuple(
        frozenset(j for j, recall in enumerate(row) if recall >= threshold) for row in recalls
    )
    return RankedMatches(matches, golden_count)


def context_overlap_from_recalls(
    recalls: Sequence[Sequence[float]], golden_count: int
) -> float | None:
    """Mean over the golden chunks of their best recall against any retrieved chunk; 0 when
    nothing was retrieved, ``None`` without golden chunks."""
    if golden_count == 0:
        return None
    best = [max((row[j] for row in recalls), default=0.0) for j in range(golden_count)]
    return math.fsum(best) / golden_count


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"k must be a whole number of at least 1 (got {k!r}). Use for example 5")


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise UsageError(
            f"The similarity threshold must be between 0 and 1 (got {threshold}). Use for "
            "example 0.8"
        )


def _check_gamma(gamma: float) -> None:
    if not gamma > 0:
        raise UsageError(f"gamma must be greater than 0 (got {gamma}). Use for example 1.0")


def log_rank_score(rank: int, n: int, gamma: float = DEFAULT_GAMMA) -> float:
    """1 − ln(1 + γ(rank − 1)) / ln(1 + γ(n − 1)): 1 at rank 1, 0 at rank n.

    With a single retrieved chunk (n = 1) its only rank scores 1.
    """
    _check_gamma(gamma)
    if not 1 <= rank <= n:
        raise UsageError(f"rank {rank} is outside the retrieved list of {n} chunk(s)")
    if n == 1:
        return 1.0
    return 1.0 - math.log(1.0 + gamma * (rank - 1)) / math.log(1.0 + gamma * (n - 1))


# --- rankings from whole chunk lists (the library's functions start here) ---


def overlap_ranking(
    golden_chunks: Sequence[str], retrieved_chunks: Sequence[str], threshold: float
) -> RankedMatches:
    """Chunk texts matched by ROUGE-L recall of the golden chunk, repeats dropped first."""
    tokens = ChunkTokens()
    golden_count = len(distinct_token_chunks(golden_chunks, tokens))
    recalls = overlap_recalls(retrieved_chunks, golden_chunks, tokens)
    return overlap_matches(recalls, golden_count, threshold)


def embedding_ranking(
    golden_embeddings: Sequence[Vector], retrieved_embeddings: Sequence[Vector], threshold: float
) -> RankedMatches:
    """Embeddings matched by cosine. Repeats are dropped as in exact matching and in the
    evaluate run: the same chunk retrieved twice counts once."""
    retrieved = distinct_embeddings(retrieved_embeddings)
    golden = distinct_embeddings(golden_embeddings)
    return similarity_matches(similarity_matrix(retrieved, golden), len(golden), threshold)


def context_overlap(golden_chunks: Sequence[str], retrieved_chunks: Sequence[str]) -> float | None:
    """Mean over golden chunks of the best ROUGE-L recall against any retrieved chunk."""
    tokens = ChunkTokens()
    golden_count = len(distinct_token_chunks(golden_chunks, tokens))
    recalls = overlap_recalls(retrieved_chunks, golden_chunks, tokens)
    return context_overlap_from_recalls(recalls, golden_count)
