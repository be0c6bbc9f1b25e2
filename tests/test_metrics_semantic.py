"""Semantic metrics on the real bundled all-MiniLM-L6-v2, loaded once, offline."""

from __future__ import annotations

import pytest

from rag_evaluator.core.records import EvaluationItem
from rag_evaluator.embeddings import TextEmbedder, load_bert_scorer, load_text_embedder
from rag_evaluator.errors import UsageError
from rag_evaluator.metrics import (
    MetricOptions,
    answer_relevance,
    compute_offline_metrics,
    context_relevance,
    hallucination,
    semantic_similarity,
    split_sentences,
)

CAT = "The cat sat on the mat."
CAT_PARAPHRASE = "A cat was sitting on the rug."
MARKETS = "Stock markets fell sharply after the interest rate decision."
EIFFEL_CONTEXT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair. "
    "It stands on the Champ de Mars in Paris."
)


@pytest.fixture(scope="session")
def embedder() -> TextEmbedder:
    return load_text_embedder(None)


def vector(embedder: TextEmbedder, text: str) -> list[float]:
    return [float(value) for value in embedder.encode([text])[0]]


def test_identical_texts_have_similarity_one(embedder: TextEmbedder) -> None:
    assert semantic_similarity(vector(embedder, CAT), vector(embedder, CAT)) == pytest.approx(
        1.0, abs=1e-5
    )


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(embedder: TextEmbedder) -> None:
    cat = vector(embedder, CAT)
    paraphrase = semantic_similarity(cat, vector(embedder, CAT_PARAPHRASE))
    unrelated = semantic_similarity(cat, vector(embedder, MARKETS))
    assert paraphrase > 0.6
    assert unrelated < 0.3
    assert paraphrase > unrelated


def test_answer_relevance_prefers_an_answer_about_the_question(embedder: TextEmbedder) -> None:
    question = vector(embedder, "When was the Eiffel Tower completed?")
    on_topic = answer_relevance(
        question, vector(embedder, "The Eiffel Tower was finished in 1889.")
    )
    off_topic = answer_relevance(question, vector(embedder, MARKETS))
    assert on_topic > off_topic


def test_an_answer_copied_from_a_context_does_not_hallucinate(embedder: TextEmbedder) -> None:
    contexts = [vector(embedder, EIFFEL_CONTEXT), vector(embedder, MARKETS)]
    copied = [vector(embedder, sentence) for sentence in split_sentences(EIFFEL_CONTEXT)]
    assert hallucination(copied, contexts) == 0.0
    invented = [vector(embedder, "Penguins migrate across the Sahara every winter.")]
    assert hallucination(invented, contexts) == 1.0


def test_context_relevance_is_higher_for_contexts_about_the_question(
    embedder: TextEmbedder,
) -> None:
    question = vector(embedder, "Where is the Eiffel Tower?")
    relevant = context_relevance(question, [vector(embedder, EIFFEL_CONTEXT)])
    irrelevant = context_relevance(question, [vector(embedder, MARKETS)])
    assert relevant is not None and irrelevant is not None
    assert relevant > irrelevant


def test_embedding_a_run_keeps_each_distinct_text_once(embedder: TextEmbedder) -> None:
    table = embedder.embed_all([CAT, MARKETS, CAT, CAT_PARAPHRASE, MARKETS])
    assert list(table.index) == [CAT, MARKETS, CAT_PARAPHRASE]
    assert table.vectors.shape[0] == 3
    assert table.cosine(CAT, CAT) == pytest.approx(1.0, abs=1e-5)


def test_bert_score_of_identical_text_is_one_and_paraphrase_beats_unrelated() -> None:
    scorer = load_bert_scorer(None)
    identical, paraphrase, unrelated = scorer.score([CAT, CAT_PARAPHRASE, MARKETS], [CAT, CAT, CAT])
    assert identical[2] == pytest.approx(1.0, abs=1e-4)
    assert paraphrase[2] > unrelated[2]


def _items() -> list[EvaluationItem]:
    return [
        EvaluationItem(
            1,
            "When was the Eiffel Tower completed?",
            "It was completed in 1889.",
            "The Eiffel Tower was completed in 1889 for the World's Fair.",
            contexts=[EIFFEL_CONTEXT, MARKETS],
            relevant_contexts=["The Eiffel Tower was finished in 1889, for the World's Fair."],
        ),
        EvaluationItem(2, "What did the cat do?", CAT, CAT_PARAPHRASE),
        EvaluationItem(3, "Any news?", "", "", contexts=[]),
    ]


def test_the_semantic_family_scores_every_row_from_one_pass() -> None:
    result = compute_offline_metrics(_items(), ["semantic"], MetricOptions())
    assert result.columns == [
        "semantic_similarity",
        "answer_relevance",
        "answer_correctness",
        "context_relevance",
        "context_sufficiency",
        "hallucination",
        "bert_score_precision",
        "bert_score_recall",
        "bert_score_f1",
    ]
    first = result.scores[1]
    for value in first.values():
        assert value is not None and 0.0 <= value <= 1.0
    # Both answer sentences come from the first context: nothing is unsupported.
    assert first["hallucination"] == 0.0
    assert first["context_sufficiency"] == 0.5  # the Eiffel context yes, the markets one no
    # No Contexts column for question 2: its context metrics are empty, the rest are not.
    second = result.scores[2]
    assert second["context_relevance"] is None and second["hallucination"] is None
    assert second["semantic_similarity"] is not None and second["semantic_similarity"] > 0.6
    # Question 3: empty ground truth and answer, no contexts retrieved.
    third = result.scores[3]
    assert third["semantic_similarity"] is None and third["bert_score_f1"] is None
    assert third["answer_relevance"] == 0.0
    warned = {warning.split(":", 1)[0] for warning in result.warnings}
    assert {"context_relevance", "hallucination", "semantic_similarity"} <= warned


def test_similarity_matching_finds_a_reworded_golden_chunk() -> None:
    items = [
        EvaluationItem(
            1,
            "When was the Eiffel Tower completed?",
            "1889",
            "1889",
            contexts=["The Eiffel Tower was completed in 1889.", MARKETS],
            relevant_contexts=["The Eiffel Tower was finished in 1889."],
        )
    ]
    exact = compute_offline_metrics(items, ["retrieval"], MetricOptions(k=2))
    similar = compute_offline_metrics(
        items, ["retrieval"], MetricOptions(k=2, match="similarity", similarity_threshold=0.8)
    )
    assert exact.scores[1]["recall_at_k"] == 0.0
    assert similar.scores[1]["recall_at_k"] == 1.0
    assert similar.scores[1]["precision_at_k"] == 0.5
    assert similar.scores[1]["mrr"] == 1.0


def test_a_model_that_is_not_on_disk_fails_with_the_fix() -> None:
    with pytest.raises(UsageError, match="Pass a local model folder"):
        load_text_embedder("no-such-owner/no-such-model-rag-eval")
