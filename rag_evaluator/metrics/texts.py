"""Text-level library functions that tokenize or embed for you: ROUGE, BLEU, the two yes/no
answer checks, and seed 002's embedding metrics of one answer.

Where a seed returned a dict (``rouge_score``, ``evaluate_all``), the result is a frozen
dataclass that also reads as that dict: ``scores.rouge_l`` or ``scores["rougeL"]``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rag_evaluator.offline import lexical
from rag_evaluator.offline.embeddings import load_text_embedder
from rag_evaluator.offline.overlap import bleu, rouge_f1
from rag_evaluator.offline.semantic import (
    HALLUCINATION_THRESHOLD,
    SUFFICIENCY_THRESHOLD,
    hallucination_from_cosines,
    mean_similarity_from_cosines,
    pair_score,
    sentence_support,
    share_at_least_from_cosines,
    split_sentences,
)

__all__ = [
    "RougeScores",
    "SemanticScores",
    "answer_hallucination",
    "bleu_score",
    "evaluate_all",
    "exact_match",
    "is_dont_know_answer",
    "rouge_score",
    "rouge_scores",
]


class _ReadsAsDict(Mapping[str, "float | None"]):
    """A result that also reads as the dict a seed returned (``result[key]``, ``dict(result)``,
    ``==`` with such a dict); ``_KEYS`` maps each key to its field."""

    _KEYS: ClassVar[dict[str, str]]

    def __getitem__(self, key: str) -> float | None:
        try:
            field_name = self._KEYS[key]
        except KeyError:
            raise KeyError(key) from None
        value: float | None = getattr(self, field_name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._KEYS)

    def __len__(self) -> int:
        return len(self._KEYS)


@dataclass(frozen=True, eq=False)
class RougeScores(_ReadsAsDict):
    """ROUGE-1, ROUGE-2 and ROUGE-L F1 on 0-1 (keys ``rouge1``, ``rouge2``, ``rougeL``)."""

    rouge1: float
    rouge2: float
    rouge_l: float

    _KEYS: ClassVar[dict[str, str]] = {"rouge1": "rouge1", "rouge2": "rouge2", "rougeL": "rouge_l"}


@dataclass(frozen=True, eq=False)
class SemanticScores(_ReadsAsDict):
    """Seed 002's five embedding metrics of one answer; ``None`` where undefined."""

    context_relevance: float | None
    context_sufficiency: float | None
    answer_relevance: float | None
    answer_correctness: float | None
    answer_hallucination: float | None

    _KEYS: ClassVar[dict[str, str]] = {
        name: name
        for name in (
            "context_relevance",
            "context_sufficiency",
            "answer_relevance",
            "answer_correctness",
            "answer_hallucination",
        )
    }


def exact_match(answer: str, ground_truth: str) -> bool:
    """Whether the answer equals the ground truth, case and whitespace runs aside (seed 000)."""
    return lexical.exact_match(answer, ground_truth) == 1.0


def is_dont_know_answer(answer: str) -> bool:
    """Seed 001's signature: whether the answer admits it does not know (an uncertainty
    phrase, an abstention or refusal, or a very short "unknown" / "n/a")."""
    return lexical.dont_know(answer) == 1.0


def bleu_score(retrieved_chunk: str, ground_truth_chunks: Sequence[str]) -> float | None:
    """Seed 004's signature: sacreBLEU sentence BLEU / 100 of the generated text
    (``retrieved_chunk``) against the reference texts; ``None`` without a reference text."""
    return bleu(retrieved_chunk, ground_truth_chunks)


def rouge_scores(retrieved_chunk: str, ground_truth_chunk: str) -> RougeScores | None:
    """ROUGE-1/2/L F1 with stemming of the generated text against one reference; ``None``
    for an empty reference."""
    scores = rouge_f1(retrieved_chunk, ground_truth_chunk)
    if scores is None:
        return None
    return RougeScores(scores["rouge1"], scores["rouge2"], scores["rougeL"])


# Seed 004 calls it rouge_score; the same function, so that seed code runs unchanged.
rouge_score = rouge_scores


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
    thresholds = (SUFFICIENCY_THRESHOLD, threshold)
    return evaluate_all("", answer, "", contexts, model_name, thresholds).answer_hallucination


def evaluate_all(
    question: str,
    answer: str,
    reference: str,
    contexts: Sequence[str],
    model_name: str | None = None,
    thresholds: tuple[float, float] = (SUFFICIENCY_THRESHOLD, HALLUCINATION_THRESHOLD),
) -> SemanticScores:
    """Seed 002's signature: the five embedding metrics of one answer, from one batched
    embedding pass (long contexts in passages, each counting with its best passage).
    ``reference`` is the ground truth; ``thresholds`` is (sufficiency, hallucination).

    ``answer_relevance`` compares the question with the answer, ``answer_correctness`` the
    answer with the reference; ``None`` where a metric is undefined (no context, blank
    question or reference, no answer sentence), as in ``rag-eval evaluate``.
    """
    sufficiency_threshold, hallucination_threshold = thresholds
    context_texts = [context for context in contexts if context.strip()]
    sentences = split_sentences(answer)
    texts = [text for text in (question, answer, reference) if text.strip()]
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
    return SemanticScores(
        context_relevance=mean_similarity_from_cosines(question_context),
        context_sufficiency=share_at_least_from_cosines(question_context, sufficiency_threshold),
        answer_relevance=pair_score(answer, question, cosine(answer, question)),
        answer_correctness=pair_score(answer, reference, cosine(answer, reference)),
        answer_hallucination=hallucination_from_cosines(support, hallucination_threshold),
    )
