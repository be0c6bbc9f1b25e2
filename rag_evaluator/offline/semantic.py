"""Semantic metrics (seeds 001, 002) on precomputed embeddings or cosine similarities.

Pure: no model here. The shell (``rag_evaluator.offline.embeddings``) embeds the texts;
these functions turn vectors or cosines into scores on 0-1 (cosines are clipped to [0, 1]).
Each metric has two forms: one taking embedding vectors, for library users, and a
``*_from_cosines`` form that the evaluate run feeds with cosines it computed in one batched
pass.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rag_evaluator.errors import UsageError
from rag_evaluator.text import sentences as sentence_rules
from rag_evaluator.text.unicode_tokens import contains_tokens, word_tokens

Vector = Sequence[float]

SUFFICIENCY_THRESHOLD = 0.5
HALLUCINATION_THRESHOLD = 0.4

# Support given to a sentence found word for word in a context: it needs no embedding.
CONTAINED_SUPPORT = 1.0


def cosine_similarity(first: Vector, second: Vector) -> float:
    """Cosine of two vectors; 0.0 when either has no length."""
    if len(first) != len(second):
        raise UsageError(
            f"Two embeddings of different sizes ({len(first)} and {len(second)}) cannot be "
            "compared. Embed every text with the same model"
        )
    dot = math.fsum(a * b for a, b in zip(first, second, strict=True))
    norms = math.sqrt(math.fsum(a * a for a in first)) * math.sqrt(math.fsum(b * b for b in second))
    return float(dot / norms) if norms > 0 else 0.0


def similarity_matrix(rows: Sequence[Vector], columns: Sequence[Vector]) -> list[list[float]]:
    """Cosine of every row vector with every column vector."""
    return [[cosine_similarity(row, column) for column in columns] for row in rows]


def clip_unit(value: float) -> float:
    """Clamp to [0, 1]: negative cosines mean unrelated, and float rounding can pass 1."""
    return min(1.0, max(0.0, float(value)))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (``text/sentences``: pysbd's boundaries, which keep "Dr.",
    "e.g." and "2.5" inside a sentence, and line breaks); list markers are removed and pieces
    without a letter or digit dropped."""
    return sentence_rules.split_sentences(text)


@lru_cache(maxsize=4096)
def _context_words(context: str) -> tuple[str, ...]:
    # Contexts repeat across the questions of a run; each is tokenized once.
    return tuple(word_tokens(context))


def contained_in_contexts(sentence: str, contexts: Sequence[str]) -> bool:
    """Whether the sentence's words occur, contiguously and in order, in some context: the
    sentence is then copied from it (case, punctuation and spacing aside) and is supported
    whatever an embedding says. A sentence without words is contained nowhere."""
    words = word_tokens(sentence)
    return bool(words) and any(
        contains_tokens(_context_words(context), words) for context in contexts
    )


def sentence_support(
    sentences: Sequence[str],
    contexts: Sequence[str],
    best_cosines: Sequence[float | None],
) -> tuple[float | None, ...]:
    """Each sentence's support: ``CONTAINED_SUPPORT`` when a context contains it, else its
    best context cosine (``None`` without a context). Extractive answers ("Wanda", "2010"),
    which an embedding compares poorly with a long context, are supported by containment."""
    return tuple(
        CONTAINED_SUPPORT if contained_in_contexts(sentence, contexts) else cosine
        for sentence, cosine in zip(sentences, best_cosines, strict=True)
    )


# --- scores from cosines (what the evaluate run uses) ---


def pair_score(candidate: str, reference: str, raw_score: float | None) -> float | None:
    """A text-pair score (cosine or BERTScore) clipped to [0, 1]; ``None`` without a reference
    text, 0.0 for an empty candidate (an empty text has no meaning to share)."""
    if not reference.strip():
        return None
    if not candidate.strip() or raw_score is None:
        return 0.0
    return clip_unit(raw_score)


def mean_similarity_from_cosines(cosines: Iterable[float]) -> float | None:
    """Mean clipped cosine; ``None`` when there is nothing to average."""
    values = [clip_unit(cosine) for cosine in cosines]
    return math.fsum(values) / len(values) if values else None


def share_at_least_from_cosines(cosines: Iterable[float], threshold: float) -> float | None:
    """Share of cosines at or above ``threshold``; ``None`` when there are none."""
    values = list(cosines)
    if not values:
        return None
    return sum(1 for cosine in values if cosine >= threshold) / len(values)


def hallucination_from_cosines(
    best_context_cosines: Sequence[float | None], threshold: float = HALLUCINATION_THRESHOLD
) -> float | None:
    """Share of answer sentences whose best context cosine is below ``threshold``.

    One entry per sentence, ``None`` for a sentence with no context to compare (it counts as
    unsupported). ``None`` when the answer has no sentence.
    """
    if not best_context_cosines:
        return None
    unsupported = sum(1 for best in best_context_cosines if best is None or best < threshold)
    return unsupported / len(best_context_cosines)


# --- scores from vectors (the library surface) ---


def semantic_similarity(answer_embedding: Vector, ground_truth_embedding: Vector) -> float:
    """Cosine of the answer and ground truth embeddings, clipped to [0, 1] (seed 001)."""
    return clip_unit(cosine_similarity(answer_embedding, ground_truth_embedding))


def answer_relevance(question_embedding: Vector, answer_embedding: Vector) -> float:
    """How much the answer is about the question: their clipped cosine."""
    return clip_unit(cosine_similarity(question_embedding, answer_embedding))


def answer_correctness(answer_embedding: Vector, ground_truth_embedding: Vector) -> float:
    """Direct similarity of the answer to the ground truth (seed 002): their clipped cosine."""
    return clip_unit(cosine_similarity(answer_embedding, ground_truth_embedding))


def context_relevance(
    question_embedding: Vector, context_embeddings: Sequence[Vector]
) -> float | None:
    """Mean clipped cosine of the question with each context; ``None`` with no context."""
    return mean_similarity_from_cosines(
        cosine_similarity(question_embedding, context) for context in context_embeddings
    )


def context_sufficiency(
    question_embedding: Vector,
    context_embeddings: Sequence[Vector],
    threshold: float = SUFFICIENCY_THRESHOLD,
) -> float | None:
    """Share of contexts whose cosine with the question is at least ``threshold`` (0.5)."""
    return share_at_least_from_cosines(
        (cosine_similarity(question_embedding, context) for context in context_embeddings),
        threshold,
    )


def hallucination(
    sentence_embeddings: Sequence[Vector],
    context_embeddings: Sequence[Vector],
    threshold: float = HALLUCINATION_THRESHOLD,
) -> float | None:
    """Share of answer sentences whose most similar context has cosine below ``threshold``
    (0.4); lower is better. Every sentence is unsupported when there is no context."""
    best = [
        max((cosine_similarity(sentence, context) for context in context_embeddings), default=None)
        for sentence in sentence_embeddings
    ]
    return hallucination_from_cosines(best, threshold)
